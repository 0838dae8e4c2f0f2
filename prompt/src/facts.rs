//! Pinned machine facts, the façade's half: [`Facts`] (the `[facts]` table)
//! checked and turned into the gathered-level [`Pins`] a [`FactsMachine`]
//! answers with, the roots shown to the model, the facts of this machine
//! ([`machine_facts`], what `bcode-prompt facts` prints), and the facts file
//! format ([`parse_facts`], [`facts_to_toml`]).
//!
//! A hermetic session ([`crate::SessionOptions::hermetic`]) reads no
//! environment (so no user config, user skills, `BCODE_*` variables, disk
//! cache, `TZ`, `LANG`, `SHELL`, CI or SSH markers) and probes nothing that
//! is not pinned: `execution_environment`, `hosting_environment`, `locale`,
//! the git sections and `toolchain_context` are left out without their
//! facts, `current_datetime` without a clock reading, the shell is left out
//! of its sentence, the zone is UTC, and the repository root is shown as
//! `.` unless `repo_root` is pinned.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use bcode_prompt_config::{
    BcodeConfig, GitFact, HostingFact, OsFact, PinnedHead, PinnedRuntimeMode, PinnedWorktree,
    SectionToggles,
};
use bcode_prompt_sections::{
    CommitId, EntryState, Gathered, GitFacts, HeadFacts, HostingSignals, LocaleFacts, LocaleSource,
    Machine, OsFacts, Pins, ProbeLimits, ProbeRequest, RepoFacts, RuntimeMode, StatusEntry,
    StatusFacts, StatusOutcome, ToolCommand, ToolVersion, ToolchainFacts, WorktreeFacts,
    gather_machine_with,
};
use bcode_text::PathDisplay;

pub use bcode_prompt_config::Facts;

/// A `[facts]` value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("facts.{key}: {message}")]
pub struct FactsError {
    /// The key, e.g. `now` or `git.status`.
    pub key: String,
    /// What is wrong with it.
    pub message: String,
}

fn bad(key: &str, message: impl Into<String>) -> FactsError {
    FactsError {
        key: key.to_owned(),
        message: message.into(),
    }
}

/// The facts of a session, checked: what the probes are given, and what the
/// façade applies itself (clock, zone, runtime mode, shown roots).
#[derive(Clone, Debug, Default)]
pub(crate) struct Resolved {
    pub(crate) pins: Pins,
    pub(crate) now: Option<chrono::DateTime<chrono::Utc>>,
    pub(crate) timezone: Option<chrono_tz::Tz>,
    pub(crate) runtime_mode: Option<RuntimeMode>,
    pub(crate) display: PathDisplay,
}

impl Resolved {
    /// Checks `facts` for the repository at `repo` (as given and
    /// canonical), with the session's environment snapshot.
    pub(crate) fn new(
        facts: &Facts,
        hermetic: bool,
        repo: &Path,
        env: &BTreeMap<String, String>,
    ) -> Result<Resolved, FactsError> {
        let display = display(facts, hermetic, repo, env);
        let now = match &facts.now {
            Some(text) => Some(
                chrono::DateTime::parse_from_rfc3339(text)
                    .map_err(|err| {
                        bad(
                            "now",
                            format!("{text:?} is not an RFC 3339 timestamp ({err})"),
                        )
                    })?
                    .with_timezone(&chrono::Utc),
            ),
            None => None,
        };
        let timezone = match &facts.timezone {
            Some(name) => Some(chrono_tz::Tz::from_str(name).map_err(|_| {
                bad(
                    "timezone",
                    format!("{name:?} is not an IANA time zone name"),
                )
            })?),
            None => None,
        };
        let shown_repo = display.show(repo).into_owned();
        let pins = Pins {
            hermetic,
            os: facts.os.as_ref().map(|os| OsFacts {
                family: os.family.clone(),
                version: os.version.clone(),
                arch: os.arch.clone(),
            }),
            shell: facts
                .shell
                .as_ref()
                .map(|shell| (!shell.is_empty()).then(|| shell.clone())),
            hosting: facts.hosting.map(|h| HostingSignals {
                ci: h.ci,
                container: h.container,
                ssh: h.ssh,
            }),
            locale: facts.locale.as_ref().map(|locale| LocaleFacts {
                locale: (!locale.is_empty()).then(|| (locale.clone(), LocaleSource::Pinned)),
            }),
            timezone: facts.timezone.clone(),
            git: facts
                .git
                .as_ref()
                .map(|git| git_facts(git, &shown_repo))
                .transpose()?,
            toolchain: facts
                .toolchain
                .as_deref()
                .map(toolchain_facts)
                .transpose()?,
        };
        Ok(Resolved {
            pins,
            now,
            timezone,
            runtime_mode: facts.runtime_mode.map(|mode| match mode {
                PinnedRuntimeMode::Interactive => RuntimeMode::Interactive,
                PinnedRuntimeMode::Scripted => RuntimeMode::Scripted,
                PinnedRuntimeMode::Render => RuntimeMode::Render,
            }),
            display,
        })
    }

    /// Shows the probed worktree roots under the pinned roots (pinned git
    /// facts already name the shown root).
    pub(crate) fn show_git(&self, gathered: &mut Gathered) {
        if self.display.is_identity() || self.pins.git.is_some() {
            return;
        }
        if let Some(GitFacts::Repository(repo)) = &mut gathered.git {
            let show = |root: &mut String| *root = self.display.show(Path::new(root)).into_owned();
            match &mut repo.worktree {
                WorktreeFacts::Main { root } => show(root),
                WorktreeFacts::Linked {
                    root, main_root, ..
                } => {
                    show(root);
                    if let Some(main) = main_root {
                        show(main);
                    }
                }
                _ => {}
            }
        }
    }
}

/// The roots shown to the model: the repository (as given and canonical)
/// and the home, each under its pinned name; a hermetic session shows an
/// unpinned repository root as `.`.
fn display(
    facts: &Facts,
    hermetic: bool,
    repo: &Path,
    env: &BTreeMap<String, String>,
) -> PathDisplay {
    let mut display = PathDisplay::new();
    let mut add = |real: &Path, shown: &str| {
        if let Ok(canonical) = real.canonicalize() {
            display = std::mem::take(&mut display).with_root(canonical, shown);
        }
        display = std::mem::take(&mut display).with_root(real, shown);
    };
    let repo_root = facts
        .repo_root
        .clone()
        .or_else(|| hermetic.then(|| ".".to_owned()));
    if let Some(shown) = &repo_root {
        add(repo, shown);
    }
    if let (Some(shown), Some(home)) = (&facts.home, env.get("HOME").filter(|h| !h.is_empty())) {
        add(Path::new(home), shown);
    }
    display
}

fn git_facts(git: &GitFact, shown_repo: &str) -> Result<GitFacts, FactsError> {
    let commit = || -> Result<CommitId, FactsError> {
        let full = git
            .commit
            .clone()
            .filter(|c| !c.is_empty() && c.chars().all(|c| c.is_ascii_hexdigit()))
            .ok_or_else(|| bad("git.commit", "a commit id in hex is required for this head"))?;
        let short = git
            .short
            .clone()
            .unwrap_or_else(|| full.chars().take(7).collect());
        Ok(CommitId { short, full })
    };
    let branch = || -> Result<String, FactsError> {
        git.branch
            .clone()
            .ok_or_else(|| bad("git.branch", "a branch name is required for this head"))
    };
    let head = match git.head {
        PinnedHead::None => return Ok(GitFacts::NoRepository),
        PinnedHead::Branch => HeadFacts::Branch {
            name: branch()?,
            commit: commit()?,
        },
        PinnedHead::Detached => HeadFacts::Detached { commit: commit()? },
        PinnedHead::Unborn => HeadFacts::Unborn { name: branch()? },
    };
    let worktree = match git.worktree {
        PinnedWorktree::Main => WorktreeFacts::Main {
            root: shown_repo.to_owned(),
        },
        PinnedWorktree::Linked => WorktreeFacts::Linked {
            root: shown_repo.to_owned(),
            name: None,
            main_root: None,
        },
        PinnedWorktree::Bare => WorktreeFacts::Bare,
    };
    let mut status = StatusFacts::default();
    for line in &git.status {
        let entry = status_entry(line).ok_or_else(|| {
            bad(
                "git.status",
                format!("{line:?} is not a `git status --short` line (`XY path`)"),
            )
        })?;
        status.total.add(entry.state);
        status.entries.push(entry);
    }
    status.entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(GitFacts::Repository(RepoFacts {
        head,
        worktree,
        status: StatusOutcome::Done(status),
    }))
}

/// One `XY path` line as a status entry, counted as the probe counts it.
fn status_entry(line: &str) -> Option<StatusEntry> {
    let code = line.get(..2)?;
    let path = line.get(2..)?.strip_prefix(' ')?;
    if path.is_empty() || !code.chars().all(|c| "MADRCU?! T".contains(c)) {
        return None;
    }
    let has = |c: char| code.contains(c);
    let state = if has('U') || code == "AA" || code == "DD" {
        EntryState::Conflicted
    } else if code == "??" {
        EntryState::Untracked
    } else if has('R') {
        EntryState::Renamed
    } else if has('D') {
        EntryState::Deleted
    } else if code.starts_with('A') {
        EntryState::Added
    } else {
        EntryState::Modified
    };
    Some(StatusEntry {
        code: code.to_owned(),
        path: path.to_owned(),
        state,
    })
}

/// The pinned `name: version line` entries, in their order.
fn toolchain_facts(tools: &[String]) -> Result<ToolchainFacts, FactsError> {
    let versions = tools
        .iter()
        .map(|entry| {
            let (name, version) = entry
                .split_once(": ")
                .filter(|(name, version)| !name.is_empty() && !version.is_empty())
                .ok_or_else(|| {
                    bad(
                        "toolchain",
                        format!("{entry:?} is not a `name: version line` entry"),
                    )
                })?;
            Ok(ToolVersion {
                name: name.to_owned(),
                version: version.to_owned(),
            })
        })
        .collect::<Result<_, FactsError>>()?;
    Ok(ToolchainFacts {
        versions,
        omitted: Vec::new(),
    })
}

/// A machine that answers with pinned facts first; unpinned facts come
/// from `inner` (never, when hermetic).
pub struct FactsMachine {
    inner: Arc<dyn Machine>,
    pins: Pins,
}

impl FactsMachine {
    /// `inner` with `pins` in front of it.
    pub fn new(inner: Arc<dyn Machine>, pins: Pins) -> FactsMachine {
        FactsMachine { inner, pins }
    }
}

impl std::fmt::Debug for FactsMachine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FactsMachine")
            .field("pins", &self.pins)
            .finish_non_exhaustive()
    }
}

impl Machine for FactsMachine {
    fn os(&self) -> OsFacts {
        self.pins.os.clone().unwrap_or_else(|| self.inner.os())
    }
    fn container_marker(&self) -> bool {
        self.inner.container_marker()
    }
    fn system_timezone(&self) -> Option<String> {
        self.inner.system_timezone()
    }
    fn system_locale(&self) -> Option<String> {
        self.inner.system_locale()
    }
    fn toolchain_commands(&self) -> Vec<ToolCommand> {
        self.inner.toolchain_commands()
    }
    fn pins(&self) -> Option<&Pins> {
        Some(&self.pins)
    }
}

/// The repository root shown to the model by a portable facts file (what
/// `check --bless` and `facts --portable` pin): no checkout path of one
/// machine reaches a golden.
pub const PORTABLE_REPO_ROOT: &str = "/repo";
/// The home shown to the model by a portable facts file.
pub const PORTABLE_HOME: &str = "/home/user";

/// The facts of this machine for the repository at `repo`: what a team
/// starts its facts file from. Only the facts of the sections `sections`
/// turns on are probed and pinned (so the toolchain commands run only when
/// `toolchain_context` is on, and a golden pins nothing it does not show).
/// `env` is the environment snapshot; `now` the clock reading.
pub fn machine_facts(
    repo: &Path,
    env: &BTreeMap<String, String>,
    machine: &dyn Machine,
    now: chrono::DateTime<chrono::Utc>,
    sections: &SectionToggles,
) -> Facts {
    let mut config = BcodeConfig::default();
    config.system_prompt.sections = sections.clone();
    let request = ProbeRequest {
        repo,
        env,
        now,
        timezone: None,
        config: &config,
        profile: None,
        runtime_mode: RuntimeMode::Render,
    };
    let mut gathered = Gathered::new();
    gather_machine_with(&request, machine, &ProbeLimits::default(), &mut gathered);
    let real_repo = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
    Facts {
        now: sections
            .current_datetime
            .then(|| now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        timezone: gathered.datetime.as_ref().map(|d| d.zone.name().to_owned()),
        shell: gathered
            .execution
            .as_ref()
            .map(|e| e.shell.clone().unwrap_or_default()),
        locale: gathered.locale.as_ref().map(|l| {
            l.locale
                .as_ref()
                .map(|(v, _)| v.clone())
                .unwrap_or_default()
        }),
        runtime_mode: Some(PinnedRuntimeMode::Render),
        home: env
            .get("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| bcode_text::model_path(Path::new(h)).into_owned()),
        repo_root: Some(bcode_text::model_path(&real_repo).into_owned()),
        os: gathered.execution.as_ref().map(|e| OsFact {
            family: e.os.family.clone(),
            version: e.os.version.clone(),
            arch: e.os.arch.clone(),
        }),
        hosting: gathered.hosting.map(|h| HostingFact {
            ci: h.ci,
            container: h.container,
            ssh: h.ssh,
        }),
        git: gathered.git.as_ref().and_then(git_fact),
        toolchain: gathered.toolchain.as_ref().map(|t| {
            t.versions
                .iter()
                .map(|v| format!("{}: {}", v.name, v.version))
                .collect()
        }),
    }
}

/// Probed git facts as a `[facts.git]` table; `None` when the repository
/// could not be read (there is nothing to pin).
fn git_fact(git: &GitFacts) -> Option<GitFact> {
    let repo = match git {
        GitFacts::NoRepository => {
            return Some(GitFact {
                head: PinnedHead::None,
                ..GitFact::default()
            });
        }
        GitFacts::Repository(repo) => repo,
        _ => return None,
    };
    let mut fact = GitFact::default();
    match &repo.head {
        HeadFacts::Branch { name, commit } => {
            fact.branch = Some(name.clone());
            fact.commit = Some(commit.full.clone());
            fact.short = Some(commit.short.clone());
        }
        HeadFacts::Detached { commit } => {
            fact.head = PinnedHead::Detached;
            fact.commit = Some(commit.full.clone());
            fact.short = Some(commit.short.clone());
        }
        HeadFacts::Unborn { name } => {
            fact.head = PinnedHead::Unborn;
            fact.branch = Some(name.clone());
        }
        _ => return None,
    }
    fact.worktree = match repo.worktree {
        WorktreeFacts::Linked { .. } => PinnedWorktree::Linked,
        WorktreeFacts::Bare => PinnedWorktree::Bare,
        _ => PinnedWorktree::Main,
    };
    if let StatusOutcome::Done(status) = &repo.status {
        fact.status = status
            .entries
            .iter()
            .map(|e| format!("{} {}", e.code, e.path))
            .collect();
    }
    Some(fact)
}

/// `facts` with neutral roots ([`PORTABLE_REPO_ROOT`], [`PORTABLE_HOME`])
/// in place of this machine's checkout path and home.
pub fn portable(facts: Facts) -> Facts {
    Facts {
        repo_root: Some(PORTABLE_REPO_ROOT.to_owned()),
        home: Some(PORTABLE_HOME.to_owned()),
        ..facts
    }
}

/// `facts` without the git status entries of `own` (paths relative to the
/// repository root, `/`-separated): the files a command writes while it
/// captures the facts (its own output, a golden and its sidecar) are not
/// part of the tree it describes. An untracked folder holding only such
/// files (`?? golden/`) goes too; `holds_only_own` answers that for a
/// folder entry.
pub fn without_own_files(
    mut facts: Facts,
    own: &[String],
    holds_only_own: &dyn Fn(&str) -> bool,
) -> Facts {
    if let Some(git) = facts.git.as_mut() {
        git.status.retain(|entry| {
            let path = entry.get(3..).unwrap_or_default();
            let path = path.rsplit(" -> ").next().unwrap_or(path);
            let own_file = own.iter().any(|own| own == path);
            let own_folder = path.ends_with('/') && holds_only_own(path);
            !(own_file || own_folder)
        });
    }
    facts
}

/// Reads a facts file: the `[facts]` keys at the top level. Unknown keys
/// are errors (a misspelt key would silently leave a fact unpinned).
pub fn parse_facts(text: &str) -> Result<Facts, FactsError> {
    let value: toml::Value = toml::from_str(text).map_err(|err| bad("", err.to_string()))?;
    let facts: Facts = value
        .clone()
        .try_into()
        .map_err(|err: toml::de::Error| bad("", err.to_string()))?;
    let known = toml::Value::try_from(&facts).map_err(|err| bad("", err.to_string()))?;
    if let Some(key) = unknown_key(&value, &known, "") {
        return Err(bad(&key, "unknown key"));
    }
    Ok(facts)
}

/// The first key of `given` that `known` (the same facts written back) does
/// not have, as a dotted path.
fn unknown_key(given: &toml::Value, known: &toml::Value, prefix: &str) -> Option<String> {
    let (toml::Value::Table(given), toml::Value::Table(known)) = (given, known) else {
        return None;
    };
    for (key, value) in given {
        let path = format!("{prefix}{key}");
        match known.get(key) {
            None => return Some(path),
            Some(inner) => {
                if let Some(found) = unknown_key(value, inner, &format!("{path}.")) {
                    return Some(found);
                }
            }
        }
    }
    None
}

/// `facts` as a facts file (what [`parse_facts`] reads back).
pub fn facts_to_toml(facts: &Facts) -> String {
    toml::to_string(facts).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_files_round_trip_and_reject_unknown_keys() {
        let facts = crate::testing::fake_facts();
        let text = facts_to_toml(&facts);
        assert_eq!(parse_facts(&text), Ok(facts));
        let err = parse_facts("[git]\nbranch = \"main\"\ncomit = \"abc\"\n").unwrap_err();
        assert_eq!(err.key, "git.comit");
        assert!(parse_facts("locale = 3\n").is_err());
    }

    #[test]
    fn status_lines_are_counted_as_the_probe_counts_them() {
        let state = |line: &str| status_entry(line).map(|e| e.state);
        assert_eq!(state(" M src/lib.rs"), Some(EntryState::Modified));
        assert_eq!(state("A  new.rs"), Some(EntryState::Added));
        assert_eq!(state(" D gone.rs"), Some(EntryState::Deleted));
        assert_eq!(state("R  a -> b"), Some(EntryState::Renamed));
        assert_eq!(state("?? notes.txt"), Some(EntryState::Untracked));
        assert_eq!(state("UU both.rs"), Some(EntryState::Conflicted));
        assert_eq!(state("M"), None);
        assert_eq!(state("ZZ x"), None);
    }

    #[test]
    fn bad_values_name_their_key() {
        let check = |facts: Facts| {
            Resolved::new(&facts, true, Path::new("/r"), &BTreeMap::new())
                .map(|_| ())
                .map_err(|err| err.key)
        };
        let now = Facts {
            now: Some("yesterday".into()),
            ..Facts::default()
        };
        assert_eq!(check(now), Err("now".to_owned()));
        let git = Facts {
            git: Some(GitFact::default()),
            ..Facts::default()
        };
        assert_eq!(check(git), Err("git.branch".to_owned()));
        let tools = Facts {
            toolchain: Some(vec!["rustc".into()]),
            ..Facts::default()
        };
        assert_eq!(check(tools), Err("toolchain".to_owned()));
        assert_eq!(check(crate::testing::fake_facts()), Ok(()));
    }

    #[test]
    fn hermetic_shows_an_unpinned_repository_as_dot() {
        let resolved = Resolved::new(
            &Facts::default(),
            true,
            Path::new("/nowhere/repo"),
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(
            resolved.display.show(Path::new("/nowhere/repo/BCODE.md")),
            "./BCODE.md"
        );
        assert!(resolved.pins.hermetic && resolved.pins.os.is_none());
    }
}
