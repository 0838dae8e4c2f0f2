//! Merging checked layers with figment into the effective [`BcodeConfig`],
//! keeping for every leaf key the layer that set it. Precedence lives here
//! and only here: layers are merged in the order given, later wins, tables
//! merge key by key and arrays are replaced whole. No I/O happens here.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

use crate::skills::McpServerConfig;
use figment::value::{Dict, Map};
use figment::{Figment, Metadata, Profile, Provider};
use toml::Value;

use super::error::{ConfigError, ConfigErrorKind};
use super::key_tree::LEAF_KEYS;
use super::model::{BcodeConfig, PromptMode};
use super::origin::{ConfigWarning, Origin};
use super::trust::{IgnoredValue, RepoTrust, TrustInputs};
use super::validate::{self, Found, Layer};

/// The effective configuration, the warnings found while loading it and the
/// origin of every value.
#[derive(Clone, Debug)]
pub struct LoadedConfig {
    /// The effective, typed configuration.
    pub config: BcodeConfig,
    /// Problems that did not stop loading (unknown keys, values an
    /// untrusted repository may not set), in layer order.
    pub warnings: Vec<ConfigWarning>,
    /// The layer and line that set each leaf key.
    origins: BTreeMap<String, (Origin, Option<usize>)>,
    ignored: Vec<IgnoredValue>,
    trust: RepoTrust,
    cwd: PathBuf,
    home: Option<PathBuf>,
}

/// One line of `config explain`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplainedValue {
    /// The dotted key.
    pub key: String,
    /// The value rendered as TOML (`"summary"`, `true`, `["a"]`), or
    /// [`UNSET`] for an optional limit that no layer set.
    pub value: String,
    /// The layer that set it.
    pub origin: Origin,
    /// The 1-based line in the origin's file, when the origin is a file.
    pub line: Option<usize>,
}

/// The `value` of an [`ExplainedValue`] whose optional key is not set (TOML
/// has no null, so there is no TOML rendering to give).
pub const UNSET: &str = "(unset)";

/// One entry of `skills.sources.paths` and where it points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfiguredSkillRoot {
    /// The entry as written; the skill source label is `config:<written>`.
    pub written: String,
    /// Absolute when the base was: relative entries are joined to the
    /// directory of the file that set them (the working directory for
    /// defaults, environment variables and `--set`); `~/` means the home.
    pub resolved: PathBuf,
}

impl LoadedConfig {
    /// The origin of a dotted leaf key (e.g. `skills.prompt.catalog`);
    /// `None` for a key that is not a leaf of the config.
    pub fn origin(&self, key: &str) -> Option<&Origin> {
        self.origins.get(key).map(|(origin, _)| origin)
    }

    /// Whether the repository's own config was applied in full.
    pub fn trust(&self) -> &RepoTrust {
        &self.trust
    }

    /// The values of the repository's config that were not applied (the
    /// repository is not trusted, or only the user may set the key), in
    /// layer and key order. Each also has a warning in `warnings`.
    pub fn ignored(&self) -> &[IgnoredValue] {
        &self.ignored
    }

    /// Every leaf key of the effective config with its value and origin,
    /// sorted by key.
    pub fn explain(&self) -> Vec<ExplainedValue> {
        let rendered = Value::try_from(&self.config).ok();
        self.origins
            .iter()
            .map(|(key, (origin, line))| {
                let value = rendered
                    .as_ref()
                    .and_then(|root| find(root, key))
                    .map_or_else(|| UNSET.to_owned(), ToString::to_string);
                ExplainedValue {
                    key: key.clone(),
                    value,
                    origin: origin.clone(),
                    line: *line,
                }
            })
            .collect()
    }

    /// `skills.sources.paths`, each entry resolved against the layer that set
    /// the list (arrays are replaced whole, so one layer set all entries).
    pub fn configured_skill_roots(&self) -> Vec<ConfiguredSkillRoot> {
        self.config
            .skills
            .sources
            .paths
            .iter()
            .map(|written| ConfiguredSkillRoot {
                written: written.clone(),
                resolved: self.resolve("skills.sources.paths", written),
            })
            .collect()
    }

    /// `system_prompt.templates_dir`, resolved like the skill roots.
    pub fn templates_dir(&self) -> Option<PathBuf> {
        let written = self.config.system_prompt.templates_dir.as_deref()?;
        Some(self.resolve("system_prompt.templates_dir", written))
    }

    /// The folder the MCP server of `entry` (one of
    /// `skills.mcp_servers`) is started in, resolved like the skill roots
    /// (`~` alone is the home too); `None` when the entry names none, and
    /// the server starts in a neutral folder.
    pub fn mcp_server_dir(&self, entry: &McpServerConfig) -> Option<PathBuf> {
        let written = entry.cwd.as_deref()?;
        match (written, &self.home) {
            ("~", Some(home)) => Some(home.clone()),
            _ => Some(self.resolve("skills.mcp_servers", written)),
        }
    }

    /// The PEM file of extra roots an MCP server entry's `ca_file` names,
    /// resolved like its `cwd`; `None` when the entry names none.
    pub fn mcp_server_ca_file(&self, entry: &McpServerConfig) -> Option<PathBuf> {
        let written = entry.ca_file.as_deref()?;
        Some(self.resolve("skills.mcp_servers", written))
    }

    fn resolve(&self, key: &str, written: &str) -> PathBuf {
        if let (Some(rest), Some(home)) = (written.strip_prefix("~/"), &self.home) {
            return clean(&home.join(rest));
        }
        let base = self
            .origin(key)
            .and_then(Origin::file)
            .and_then(|file| file.parent())
            .unwrap_or(&self.cwd);
        clean(&base.join(written))
    }
}

/// Drops `.` segments so `<dir>/./skills` reads `<dir>/skills`; `..` is kept,
/// because resolving it lexically would be wrong across symlinks.
fn clean(path: &Path) -> PathBuf {
    path.components()
        .filter(|component| !matches!(component, Component::CurDir))
        .collect()
}

fn find<'a>(root: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.')
        .try_fold(root, |value, segment| value.get(segment))
}

/// The built-in defaults as a TOML table, computed once.
static DEFAULTS: LazyLock<toml::Table> = LazyLock::new(|| {
    Value::try_from(BcodeConfig::default())
        .ok()
        .and_then(|value| value.as_table().cloned())
        .unwrap_or_default()
});

/// The layer that set each leaf key, with its line there: the last
/// (highest) layer whose table holds the key, which is the value figment's
/// merge keeps, since tables merge key by key and a leaf is replaced whole.
/// A key no layer above the defaults holds is a default (an optional key
/// that nobody set has no value at all, and is a default too). Each layer's
/// table is walked once, so the cost is the keys written, not the keys known.
fn origins_of(layers: &[Layer]) -> BTreeMap<String, (Origin, Option<usize>)> {
    let mut setters: BTreeMap<String, &Layer> = BTreeMap::new();
    for layer in layers {
        if !matches!(layer.origin, Origin::Default) {
            note_keys(&layer.table, "", layer, &mut setters);
        }
    }
    LEAF_KEYS
        .iter()
        .map(|key| {
            let origin = setters.get(*key).map_or((Origin::Default, None), |layer| {
                (layer.origin.clone(), layer.line_of(key))
            });
            ((*key).to_owned(), origin)
        })
        .collect()
}

/// Records `layer` as the setter of every dotted key of `table`, tables
/// included (only leaf keys are looked up).
fn note_keys<'a>(
    table: &toml::Table,
    prefix: &str,
    layer: &'a Layer,
    setters: &mut BTreeMap<String, &'a Layer>,
) {
    for (key, value) in table {
        let dotted = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        if let Some(inner) = value.as_table() {
            note_keys(inner, &dotted, layer, setters);
        }
        setters.insert(dotted, layer);
    }
}

/// A checked layer as a figment provider. Its metadata name identifies the
/// layer, so provenance can be read back from figment's per-value tags.
struct LayerProvider<'a> {
    name: String,
    layer: &'a Layer,
}

impl Provider for LayerProvider<'_> {
    fn metadata(&self) -> Metadata {
        Metadata::named(self.name.clone())
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        let dict = match figment::value::Value::serialize(&self.layer.table)? {
            figment::value::Value::Dict(_, dict) => dict,
            _ => Dict::new(),
        };
        Ok(Map::from([(Profile::Default, dict)]))
    }
}

/// What is wrong with how `entry` reaches its server, if anything: it
/// names exactly one of `command` and `url`, a `url` of `http` or `https`,
/// and only the keys of its kind (`args`, `env`, `cwd` start a program;
/// `headers` go with a URL, `ca_file` with an `https` one).
fn mcp_entry_problem(entry: &McpServerConfig) -> Option<String> {
    match (&entry.command, &entry.url) {
        (Some(_), Some(_)) => Some("names both `command` and `url`".to_owned()),
        (None, None) => Some("names neither `command` nor `url`".to_owned()),
        (Some(_), None) => {
            if !entry.headers.is_empty() {
                Some("names `headers`, which only a `url` entry sends".to_owned())
            } else if entry.ca_file.is_some() {
                Some("names `ca_file`, which only an `https://` `url` entry uses".to_owned())
            } else {
                None
            }
        }
        (None, Some(url)) => {
            let scheme_ok = ["http://", "https://"].iter().any(|scheme| {
                url.get(..scheme.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(scheme))
            });
            if !scheme_ok {
                // The URL itself is not repeated: it may carry a token.
                Some("has a `url` that is not an `http://` or `https://` URL".to_owned())
            } else if entry.ca_file.is_some()
                && !url
                    .get(..8)
                    .is_some_and(|head| head.eq_ignore_ascii_case("https://"))
            {
                Some("names `ca_file` with an `http://` `url`, which has no TLS".to_owned())
            } else if !entry.args.is_empty() || !entry.env.is_empty() || entry.cwd.is_some() {
                Some(
                    "names `url` with `args`, `env` or `cwd`, which only a `command` entry uses"
                        .to_owned(),
                )
            } else {
                None
            }
        }
    }
}

/// Merges parsed layers in the order `layers.rs` decided (which alone says
/// which layer outranks which: lowest precedence first, after the defaults, which
/// this adds) into a [`LoadedConfig`]. Every layer is checked first, so a bad
/// value is reported with its own layer's location even when a higher layer
/// overrides it: a broken file should not wait to bite until the override is
/// removed. Then trust is decided from the user's layers, and the
/// repository's layer loses what an untrusted repository may not set.
///
/// Every problem goes to `found`; the result is `None` when any is an error
/// (invalid values are dropped first, so the rest is still checked).
pub(crate) fn merge(
    layers: Vec<Layer>,
    host_sections: &[String],
    trust_inputs: &TrustInputs<'_>,
    found: &mut Found,
) -> Option<LoadedConfig> {
    let defaults = Layer {
        origin: Origin::Default,
        table: DEFAULTS.clone(),
        lines: Default::default(),
    };
    let mut all = Vec::with_capacity(layers.len() + 1);
    all.push(defaults);
    let mut per_layer = vec![Vec::new()];
    for mut layer in layers {
        let mut checked = Found::default();
        validate::check(&mut layer, host_sections, &mut checked);
        found.errors.append(&mut checked.errors);
        per_layer.push(checked.warnings);
        all.push(layer);
    }
    let trust = trust_inputs.decide(&all);
    let mut ignored = Vec::new();
    for index in 0..all.len() {
        let (below, rest) = all.split_at_mut(index);
        let (Some(layer), Some(warnings)) = (rest.first_mut(), per_layer.get_mut(index)) else {
            continue;
        };
        let (dropped, mut refused) = trust_inputs.gate(layer, below, &trust);
        ignored.extend(dropped);
        warnings.append(&mut refused);
    }
    found.warnings.extend(per_layer.into_iter().flatten());
    let warnings = found.warnings.clone();
    let cwd = trust_inputs.cwd.clone();
    let home = trust_inputs.home.clone();

    let mut figment = Figment::new();
    let mut by_name = BTreeMap::new();
    for (index, layer) in all.iter().enumerate() {
        let name = format!("{index}: {}", layer.origin);
        by_name.insert(name.clone(), index);
        figment = figment.merge(LayerProvider { name, layer });
    }

    let config: BcodeConfig = match figment.extract() {
        Ok(config) => config,
        Err(error) => {
            let key = error.path.join(".");
            let origin = error
                .metadata
                .as_ref()
                .and_then(|metadata| by_name.get(metadata.name.as_ref()))
                .and_then(|index| all.get(*index))
                .map(|layer| layer.origin.clone());
            found
                .errors
                .push(ConfigError::new(ConfigErrorKind::Extract {
                    key,
                    origin,
                    message: error.kind.to_string(),
                }));
            return None;
        }
    };

    let origins = origins_of(&all);
    if config.system_prompt.mode == PromptMode::Replace
        && config.system_prompt.text.trim().is_empty()
    {
        let locate = |key: &str| origins.get(key).cloned().unwrap_or((Origin::Default, None));
        let (mode_origin, mode_line) = locate("system_prompt.mode");
        let (text_origin, text_line) = locate("system_prompt.text");
        found
            .errors
            .push(ConfigError::new(ConfigErrorKind::ReplaceWithoutText {
                mode_origin,
                mode_line,
                text_origin,
                text_line,
            }));
    }
    for entry in &config.skills.mcp_servers {
        if let Some(problem) = mcp_entry_problem(entry) {
            let (origin, line) = origins
                .get("skills.mcp_servers")
                .cloned()
                .unwrap_or((Origin::Default, None));
            found
                .errors
                .push(ConfigError::new(ConfigErrorKind::McpServerEntry {
                    name: entry.name.clone(),
                    problem,
                    origin,
                    line,
                }));
        }
    }
    if !found.errors.is_empty() {
        return None;
    }

    Some(LoadedConfig {
        config,
        warnings,
        origins,
        ignored,
        trust,
        cwd,
        home,
    })
}
