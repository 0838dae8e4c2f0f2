//! The repository trust model. The user's layers (user file, environment,
//! `--config`, `--set`, and whatever the host passes) are trusted; the
//! repository's own `.bcode/bcode.toml` is not, until the user trusts the
//! repository. An untrusted repository's config may tune sections, limits,
//! wording and its own skills; the keys in [`GATES`], which reach outside the
//! repository, run programs or change who decides, and the values of
//! [`LIMITS`] above the user's (or the default), are dropped from its layer
//! with one warning each. No I/O happens here: resolving links is the
//! caller's `real_path`.

use std::fmt;
use std::path::{Path, PathBuf};

use toml::Value;

use super::origin::{At, ConfigWarning, ConfigWarningKind, Origin};
use super::validate::Layer;

/// Whether the repository's own config is applied in full, and who said so.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RepoTrust {
    /// Not trusted: the gated keys of its config were ignored.
    Untrusted,
    /// Trusted by the host (`SessionOptions::trust_repository`) or the CLI's
    /// `--trust-repo` flag.
    ByOption,
    /// Trusted by the `BCODE_TRUST_REPO` environment variable (`1` or `true`).
    ByEnv,
    /// Listed in `trust.repositories` by this user layer.
    ByList {
        /// The layer whose `trust.repositories` lists the repository.
        origin: Origin,
    },
}

impl RepoTrust {
    /// Whether the repository's config is applied in full.
    pub fn is_trusted(&self) -> bool {
        !matches!(self, RepoTrust::Untrusted)
    }
}

impl fmt::Display for RepoTrust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RepoTrust::Untrusted => f.write_str("not trusted"),
            RepoTrust::ByOption => f.write_str("trusted (--trust-repo or the host)"),
            RepoTrust::ByEnv => f.write_str("trusted (BCODE_TRUST_REPO)"),
            RepoTrust::ByList { origin } => write!(f, "trusted (trust.repositories in {origin})"),
        }
    }
}

/// A value of a repository's config that was not applied, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IgnoredValue {
    /// The dotted key.
    pub key: String,
    /// The ignored value as TOML (for a list of paths, only the entries
    /// that were dropped).
    pub value: String,
    /// The layer that wrote it.
    pub origin: Origin,
    /// The 1-based line in the origin's file, when known.
    pub line: Option<usize>,
    /// Why it was not applied, in words.
    pub reason: String,
}

impl fmt::Display for IgnoredValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = At {
            origin: &self.origin,
            line: self.line,
        };
        write!(f, "{at}: {}", self.reason)
    }
}

/// Which values of a key an untrusted repository may not set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Only the user's layers may set it, whether or not the repository is
    /// trusted.
    UserOnly,
    /// No value: the key is the user's.
    Any,
    /// This value, written as TOML (`true`, `"on"`).
    Equals(&'static str),
    /// Paths (a string or a list of strings) that resolve outside the
    /// repository; entries inside it are kept.
    PathOutside,
    /// A bound: a number larger than the one the layers below set (the
    /// user's file, else the built-in default). A bound no layer below sets
    /// is unbounded, so any value lowers it.
    Raises,
}

/// One gated key: the values refused and why.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gate {
    pub(crate) key: &'static str,
    pub(crate) rule: Rule,
    pub(crate) why: &'static str,
}

/// Every key an untrusted repository's config may not set (with the values
/// refused). The README ("Trusting a repository") carries the same table;
/// a test keeps them in step.
pub(crate) const GATES: &[Gate] = &[
    Gate {
        key: "trust.repositories",
        rule: Rule::UserOnly,
        why: "only the user's own config can trust a repository",
    },
    Gate {
        key: "trust.safe_directories",
        rule: Rule::UserOnly,
        why: "only the user's own config can trust folders that other users own",
    },
    Gate {
        key: "skills.sources.paths",
        rule: Rule::PathOutside,
        why: "it would read skills from outside the repository",
    },
    Gate {
        key: "system_prompt.templates_dir",
        rule: Rule::PathOutside,
        why: "it would read templates from outside the repository",
    },
    Gate {
        key: "system_prompt.sections.toolchain_context",
        rule: Rule::Equals("true"),
        why: "it runs programs (the toolchain version commands)",
    },
    Gate {
        key: "skills.mcp_servers",
        rule: Rule::Any,
        why: "it starts programs or sends the user's headers to servers (the MCP servers whose skills it would add)",
    },
    Gate {
        key: "skills.auto_activate",
        rule: Rule::Equals("\"on\""),
        why: "it lets keyword matches activate skills without the user asking",
    },
    Gate {
        key: "system_prompt.sections.user_authority",
        rule: Rule::Equals("false"),
        why: "it drops the rule that the user's explicit instructions win",
    },
    Gate {
        key: "system_prompt.mode",
        rule: Rule::Equals("\"replace\""),
        why: "it replaces the base prompt the user runs with",
    },
    Gate {
        key: "system_prompt.text",
        rule: Rule::Any,
        why: "it writes the base prompt that replace mode sends, and whether and what to replace is the user's choice",
    },
    Gate {
        key: "invariants.mode",
        rule: Rule::Equals("\"relevant\""),
        why: "it starts selector calls (a model call in most hosts) on the user's behalf",
    },
    Gate {
        key: "invariants.selector.model_profile",
        rule: Rule::Any,
        why: "it chooses the model that selector calls go to",
    },
    Gate {
        key: "invariants.selector.wait_for_background_on_next_prompt",
        rule: Rule::Equals("true"),
        why: "it makes every prompt wait for background selector work",
    },
    Gate {
        key: "invariants.selector.cancel_on_timeout",
        rule: Rule::Equals("false"),
        why: "it lets selector calls run on past their deadline",
    },
    Gate {
        key: "invariants.selector.cancel_stale",
        rule: Rule::Equals("false"),
        why: "it keeps selector calls running after a newer request made them stale",
    },
    Gate {
        key: "facts",
        rule: Rule::Any,
        why: "it states the machine's facts (git status, OS, home) in place of what is probed",
    },
];

/// Every bound of the config (each non-negative integer key): an untrusted
/// repository may lower one, never raise it above the value of the layers
/// below (the user's file, else the default), so a cloned repository cannot
/// make Bcode read, hold or wait for more than the user allows. A test
/// checks that this lists every integer key of the key tree.
pub(crate) const LIMITS: &[&str] = &[
    "invariants.max_files",
    "invariants.max_globs_per_file",
    "invariants.max_selected",
    "invariants.selector.background_timeout_ms",
    "invariants.selector.initial_timeout_ms",
    "model.tool_output.fallback_argument_chars",
    "skills.max_context_bytes",
    "skills.max_skill_file_bytes",
    "skills.preview_max_chars",
    "skills.prompt.context_window_tokens",
    "skills.prompt.max_bytes",
    "skills.prompt.max_description_chars",
    "skills.prompt.warn_percent",
    "skills.routing.max_results",
    "system_prompt.git_status_max_chars",
    "system_prompt.repository_instructions_max_chars",
    "system_prompt.repository_instructions_total_max_chars",
    "system_prompt.repository_invariants_max_chars",
];

/// Every gate: [`GATES`], then one [`Rule::Raises`] gate per [`LIMITS`] key.
pub(crate) fn gates() -> impl Iterator<Item = Gate> {
    GATES.iter().copied().chain(LIMITS.iter().map(|key| Gate {
        key,
        rule: Rule::Raises,
        why: "a repository may lower a limit, never raise it above the one your config or the default sets",
    }))
}

/// The environment variable that trusts the repository of a run.
pub const TRUST_ENV_VAR: &str = "BCODE_TRUST_REPO";

/// What trust decisions need from the loading edge.
pub(crate) struct TrustInputs<'a> {
    /// The repository root, as given (joined to the working directory).
    pub(crate) repo: PathBuf,
    /// Trusted by the host or the CLI flag.
    pub(crate) by_option: bool,
    /// Trusted by [`TRUST_ENV_VAR`].
    pub(crate) by_env: bool,
    /// The working directory: the base of paths set without a file.
    pub(crate) cwd: PathBuf,
    /// The home, for `~/` paths.
    pub(crate) home: Option<PathBuf>,
    /// Resolves links: the path a file operation on `path` would reach.
    pub(crate) real_path: &'a dyn Fn(&Path) -> PathBuf,
}

impl TrustInputs<'_> {
    /// Decides whether the repository is trusted, from the options and the
    /// user's layers only (a repository layer's list never counts).
    pub(crate) fn decide(&self, layers: &[Layer]) -> RepoTrust {
        if self.by_option {
            return RepoTrust::ByOption;
        }
        if self.by_env {
            return RepoTrust::ByEnv;
        }
        // Arrays are replaced whole: the highest user layer that sets the
        // list is the list.
        let Some((layer, entries)) = layers.iter().rev().find_map(|layer| {
            if layer.origin.is_repository() {
                return None;
            }
            Some((layer, find(&layer.table, "trust.repositories")?.as_array()?))
        }) else {
            return RepoTrust::Untrusted;
        };
        let repo = (self.real_path)(&self.repo);
        let listed = entries
            .iter()
            .filter_map(Value::as_str)
            .any(|entry| (self.real_path)(&self.resolve(&layer.origin, entry)) == repo);
        if listed {
            RepoTrust::ByList {
                origin: layer.origin.clone(),
            }
        } else {
            RepoTrust::Untrusted
        }
    }

    /// Drops from a repository `layer` what `trust` does not allow, given
    /// the layers below it; returns what was dropped and one warning per key.
    pub(crate) fn gate(
        &self,
        layer: &mut Layer,
        below: &[Layer],
        trust: &RepoTrust,
    ) -> (Vec<IgnoredValue>, Vec<ConfigWarning>) {
        let mut ignored = Vec::new();
        let mut warnings = Vec::new();
        if !layer.origin.is_repository() {
            return (ignored, warnings);
        }
        let repo = (self.real_path)(&self.repo);
        for gate in gates() {
            if trust.is_trusted() && gate.rule != Rule::UserOnly {
                continue;
            }
            let Some(value) = find(&layer.table, gate.key).cloned() else {
                continue;
            };
            let Some(dropped) =
                self.refused(gate.rule, gate.key, &value, &layer.origin, &repo, below)
            else {
                continue;
            };
            match &dropped {
                Refused::All => remove(&mut layer.table, gate.key),
                Refused::Some { kept, .. } => set(&mut layer.table, gate.key, kept.clone()),
            }
            let value = match dropped {
                Refused::All => value.to_string(),
                Refused::Some { dropped, .. } => Value::Array(dropped).to_string(),
            };
            let line = layer.line_of(gate.key);
            let how = if gate.rule == Rule::UserOnly {
                "set it in your user config instead".to_owned()
            } else {
                format!(
                    "the repository is not trusted; to trust it, add {} to `trust.repositories` \
                     in your user config, set {TRUST_ENV_VAR}=1 or pass --trust-repo",
                    Value::String(self.repo.display().to_string())
                )
            };
            warnings.push(ConfigWarning {
                kind: ConfigWarningKind::Untrusted,
                key: gate.key.to_owned(),
                origin: layer.origin.clone(),
                line,
                message: format!("`{} = {value}` ignored: {}; {how}", gate.key, gate.why),
                suggestion: None,
            });
            ignored.push(IgnoredValue {
                key: gate.key.to_owned(),
                value,
                origin: layer.origin.clone(),
                line,
                reason: format!("{} ({})", gate.why, trust_words(gate.rule)),
            });
        }
        (ignored, warnings)
    }

    /// Whether (and which part of) `value` the rule refuses.
    fn refused(
        &self,
        rule: Rule,
        key: &str,
        value: &Value,
        origin: &Origin,
        repo: &Path,
        below: &[Layer],
    ) -> Option<Refused> {
        match rule {
            Rule::UserOnly | Rule::Any => Some(Refused::All),
            Rule::Equals(refused) => (value.to_string() == refused).then_some(Refused::All),
            Rule::Raises => {
                let raised = value.as_integer()?;
                let user = below
                    .iter()
                    .rev()
                    .find_map(|layer| find(&layer.table, key)?.as_integer())?;
                (raised > user).then_some(Refused::All)
            }
            Rule::PathOutside => {
                let inside =
                    |path: &str| (self.real_path)(&self.resolve(origin, path)).starts_with(repo);
                match value {
                    Value::String(path) => (!inside(path)).then_some(Refused::All),
                    Value::Array(entries) => {
                        let (kept, dropped): (Vec<Value>, Vec<Value>) = entries
                            .iter()
                            .cloned()
                            .partition(|entry| entry.as_str().is_some_and(inside));
                        if dropped.is_empty() {
                            None
                        } else if kept.is_empty() {
                            Some(Refused::All)
                        } else {
                            Some(Refused::Some {
                                kept: Value::Array(kept),
                                dropped,
                            })
                        }
                    }
                    _ => None,
                }
            }
        }
    }

    /// A path as `LoadedConfig` resolves it: `~/` is the home; relative
    /// paths join the directory of the file that set them (else the working
    /// directory).
    fn resolve(&self, origin: &Origin, written: &str) -> PathBuf {
        resolve(origin, written, self.home.as_deref(), &self.cwd)
    }
}

/// A path written in the layer `origin`, as `LoadedConfig` resolves it:
/// `~/` is the home; relative paths join the directory of the file that
/// set them (else `cwd`).
fn resolve(origin: &Origin, written: &str, home: Option<&Path>, cwd: &Path) -> PathBuf {
    if let (Some(rest), Some(home)) = (written.strip_prefix("~/"), home) {
        return home.join(rest);
    }
    let base = origin.file().and_then(|file| file.parent()).unwrap_or(cwd);
    base.join(written)
}

/// `trust.safe_directories`, resolved: the folders the user takes for
/// theirs whoever owns them (with everything below them), as
/// `bcode_fs::Ownership` checks them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SafeDirectories {
    /// `*` is listed: every folder.
    pub any: bool,
    /// The folders listed, resolved.
    pub folders: Vec<PathBuf>,
}

impl SafeDirectories {
    /// The list of the highest of the user's `layers` that sets it (a
    /// repository's layer never counts).
    pub(crate) fn of_layers(layers: &[Layer], home: Option<&Path>, cwd: &Path) -> Self {
        let Some((layer, entries)) = layers.iter().rev().find_map(|layer| {
            if layer.origin.is_repository() {
                return None;
            }
            Some((
                layer,
                find(&layer.table, "trust.safe_directories")?.as_array()?,
            ))
        }) else {
            return SafeDirectories::default();
        };
        let written: Vec<&str> = entries.iter().filter_map(Value::as_str).collect();
        SafeDirectories {
            any: written.contains(&"*"),
            folders: written
                .iter()
                .filter(|entry| **entry != "*")
                .map(|entry| bcode_text::lexical(&resolve(&layer.origin, entry, home, cwd)))
                .collect(),
        }
    }
}

/// What a rule refused of a value.
enum Refused {
    /// The whole value.
    All,
    /// Some entries of a list; the rest is kept.
    Some { kept: Value, dropped: Vec<Value> },
}

fn trust_words(rule: Rule) -> &'static str {
    if rule == Rule::UserOnly {
        "a repository's config never sets it"
    } else {
        "the repository is not trusted"
    }
}

/// The value at a dotted key of a table.
pub(crate) fn find<'a>(table: &'a toml::Table, key: &str) -> Option<&'a Value> {
    let (parents, last) = match key.rsplit_once('.') {
        Some((parents, last)) => (Some(parents), last),
        None => (None, key),
    };
    let mut here = table;
    for segment in parents.into_iter().flat_map(|p| p.split('.')) {
        here = here.get(segment)?.as_table()?;
    }
    here.get(last)
}

fn parent_mut<'a>(
    table: &'a mut toml::Table,
    key: &'a str,
) -> Option<(&'a mut toml::Table, &'a str)> {
    let mut segments: Vec<&str> = key.split('.').collect();
    let last = segments.pop()?;
    let mut here = table;
    for segment in segments {
        here = here.get_mut(segment)?.as_table_mut()?;
    }
    Some((here, last))
}

fn remove(table: &mut toml::Table, key: &str) {
    if let Some((parent, last)) = parent_mut(table, key) {
        parent.remove(last);
    }
}

fn set(table: &mut toml::Table, key: &str, value: Value) {
    if let Some((parent, last)) = parent_mut(table, key) {
        parent.insert(last.to_owned(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::super::key_tree::KEY_TREE;
    use super::super::shape::{LeafKind, Shape};
    use super::*;

    /// Every integer key of the config is a limit, so a new one cannot be
    /// left to the repository by oversight (the `facts` table is gated whole).
    #[test]
    fn every_integer_key_is_a_gated_limit() {
        fn integers(shape: &Shape, prefix: &str, out: &mut Vec<String>) {
            let Shape::Table(keys) = shape else { return };
            for (name, child) in keys.iter() {
                let key = if prefix.is_empty() {
                    (*name).to_owned()
                } else {
                    format!("{prefix}.{name}")
                };
                match child {
                    Shape::Leaf {
                        kind: LeafKind::UnsignedInt | LeafKind::Int,
                        ..
                    } => out.push(key),
                    Shape::Leaf { .. } => {}
                    Shape::Table(_) => integers(child, &key, out),
                }
            }
        }
        let mut keys = Vec::new();
        integers(&KEY_TREE, "", &mut keys);
        let gated_whole: Vec<&str> = GATES
            .iter()
            .filter(|gate| gate.rule == Rule::Any)
            .map(|gate| gate.key)
            .collect();
        keys.retain(|key| {
            !gated_whole
                .iter()
                .any(|whole| key.starts_with(&format!("{whole}.")))
        });
        keys.sort();
        assert_eq!(keys, LIMITS);
    }

    /// The README's trust table names every gated key (ARCHITECTURE.md
    /// points to it rather than keeping a second copy).
    #[test]
    fn the_readme_lists_every_gated_key() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for doc in ["README.md"] {
            let text = std::fs::read_to_string(root.join(doc)).unwrap();
            for gate in gates() {
                assert!(
                    text.contains(&format!("`{}`", gate.key)),
                    "{doc} does not name the gated key `{}`",
                    gate.key
                );
            }
        }
    }
}
