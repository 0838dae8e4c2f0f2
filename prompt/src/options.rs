//! How a session is opened: the repository, the host's environment snapshot
//! and config layers, and the seams a host may fill (invariant selector,
//! event sink, machine probes, its own sections and templates).

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bcode_prompt_config::ConfigInputs;
use bcode_prompt_pipeline::Stage;
use bcode_prompt_sections::{
    DeterministicSelector, Gathered, InvariantSelector, Machine, ProbeLimits, RealMachine,
    RuntimeMode,
};
use bcode_skill::{EventSink, SkillProvider};

use crate::facts::Facts;
use crate::shared::SharedSkills;

/// Everything [`crate::PromptSession::open`] needs. Build it with
/// [`SessionOptions::new`] and the chained setters; nothing is read until
/// the session opens.
pub struct SessionOptions {
    pub(crate) repo: PathBuf,
    pub(crate) cwd: PathBuf,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) set: Vec<String>,
    pub(crate) config_files: Vec<PathBuf>,
    pub(crate) selector: Arc<dyn InvariantSelector>,
    pub(crate) events: Option<Box<dyn EventSink>>,
    pub(crate) machine: Arc<dyn Machine>,
    pub(crate) host_stages: Vec<Arc<dyn Stage<Gathered>>>,
    pub(crate) host_templates: Vec<(String, String)>,
    pub(crate) providers: Vec<Arc<dyn SkillProvider>>,
    pub(crate) strict: bool,
    pub(crate) runtime_mode: RuntimeMode,
    pub(crate) focus_dir: Option<PathBuf>,
    pub(crate) probe_limits: ProbeLimits,
    pub(crate) skill_lifetime: SkillLifetime,
    pub(crate) facts: Facts,
    pub(crate) hermetic: bool,
    pub(crate) trust_repo: bool,
    pub(crate) racy_window: Duration,
}

impl fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionOptions")
            .field("repo", &self.repo)
            .field("env_vars", &self.env.len())
            .field("set", &self.set)
            .field("config_files", &self.config_files)
            .field("selector", &self.selector)
            .field("host_stages", &self.host_stages.len())
            .field("strict", &self.strict)
            .field("runtime_mode", &self.runtime_mode)
            .field("skill_lifetime", &self.skill_lifetime)
            .field("facts", &self.facts)
            .field("hermetic", &self.hermetic)
            .field("trust_repo", &self.trust_repo)
            .field("racy_window", &self.racy_window)
            .finish_non_exhaustive()
    }
}

impl SessionOptions {
    /// Options for the repository at `repo`, which may be any folder inside
    /// a repository: the working folder. The root is found as git finds it
    /// (the nearest folder at or above it with a `.git` folder or file; a
    /// folder in no repository is its own root) and decides trust, config,
    /// git and invariants; the instructions and skills of the folders from
    /// the root down to the working folder are added. A relative path is
    /// taken relative to [`SessionOptions::cwd`], else as the OS resolves it.
    /// Defaults: an empty environment, no extra config layers, the
    /// deterministic invariant selector, no event sink (events are still
    /// returned with each turn), the real machine, interactive runtime mode.
    pub fn new(repo: impl Into<PathBuf>) -> SessionOptions {
        SessionOptions {
            repo: repo.into(),
            cwd: PathBuf::new(),
            env: BTreeMap::new(),
            set: Vec::new(),
            config_files: Vec::new(),
            selector: Arc::new(DeterministicSelector),
            events: None,
            machine: Arc::new(RealMachine),
            host_stages: Vec::new(),
            host_templates: Vec::new(),
            providers: Vec::new(),
            strict: false,
            runtime_mode: RuntimeMode::Interactive,
            focus_dir: None,
            probe_limits: ProbeLimits::default(),
            skill_lifetime: SkillLifetime::Watched,
            facts: Facts::default(),
            hermetic: false,
            trust_repo: false,
            racy_window: bcode_fs::RACY_WINDOW,
        }
    }

    /// The host's environment snapshot (`HOME`, `XDG_*`, `BCODE_*`, `LANG`,
    /// `SHELL`, CI markers ...). The library never reads the process
    /// environment itself; variables whose name or value is not UTF-8 are
    /// the host's to drop (use [`SessionOptions::env_os`] to hand them over
    /// as they are).
    pub fn env<I, K, V>(mut self, vars: I) -> SessionOptions
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.env = vars
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self
    }

    /// [`SessionOptions::env`] from `std::env::vars_os()`: a variable whose
    /// name or value is not UTF-8 is skipped rather than a panic.
    pub fn env_os<I>(mut self, vars: I) -> SessionOptions
    where
        I: IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
    {
        self.env = vars
            .into_iter()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        self
    }

    /// The folder relative paths (the repository, config files) resolve
    /// against.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> SessionOptions {
        self.cwd = cwd.into();
        self
    }

    /// One `key.path=value` assignment (TOML value), the highest config
    /// layer, as the CLI's `--set`. Errors surface when the session opens.
    pub fn set(mut self, assignment: impl Into<String>) -> SessionOptions {
        self.set.push(assignment.into());
        self
    }

    /// A config file layered above the environment (the CLI's `--config`);
    /// a missing file is an error when the session opens.
    pub fn config_file(mut self, path: impl Into<PathBuf>) -> SessionOptions {
        self.config_files.push(path.into());
        self
    }

    /// The relevant-mode invariant selector (a model call with a deadline,
    /// typically). One that errors, panics or overruns its deadline falls
    /// back by `[invariants.selector] on_timeout`, and the turn still
    /// assembles. Default: the deterministic selector.
    pub fn selector(mut self, selector: Arc<dyn InvariantSelector>) -> SessionOptions {
        self.selector = selector;
        self
    }

    /// Where skill events go, durably (for example a `JsonlSink`). Events
    /// are also returned with every turn.
    pub fn events(mut self, sink: Box<dyn EventSink>) -> SessionOptions {
        self.events = Some(sink);
        self
    }

    /// The machine facts (OS, container marker, system zone and locale,
    /// toolchain commands): tests and golden files pass a fake.
    pub fn machine(mut self, machine: Arc<dyn Machine>) -> SessionOptions {
        self.machine = machine;
        self
    }

    /// A host-defined section: a stage whose spec is
    /// [`crate::sections::StageSpec::host`] (id, class, placement before or after a
    /// canonical section). It is toggled by `system_prompt.sections.<id>`,
    /// reported like the canonical ones, and never moves a byte before the
    /// cache boundary when its class is `Turn`. A failing or panicking host
    /// stage is omitted with its reason, unless the session is strict.
    pub fn section(mut self, stage: Arc<dyn Stage<Gathered>>) -> SessionOptions {
        self.host_stages.push(stage);
        self
    }

    /// A template for a host section, by name (operators can override it
    /// from `system_prompt.templates_dir` like the built-in ones).
    pub fn template(
        mut self,
        name: impl Into<String>,
        source: impl Into<String>,
    ) -> SessionOptions {
        self.host_templates.push((name.into(), source.into()));
        self
    }

    /// A `bcode.skill/v1` provider whose skills rank as bundled.
    pub fn provider(mut self, provider: Arc<dyn SkillProvider>) -> SessionOptions {
        self.providers.push(provider);
        self
    }

    /// Strict: a host section that fails is an error of the turn instead of
    /// an omitted section.
    pub fn strict(mut self, strict: bool) -> SessionOptions {
        self.strict = strict;
        self
    }

    /// How Bcode is running, for the `runtime_mode` section.
    pub fn runtime_mode(mut self, mode: RuntimeMode) -> SessionOptions {
        self.runtime_mode = mode;
        self
    }

    /// A folder where the relevant-mode focus is kept between processes (the
    /// session sidecar): restored when the session opens, saved after each
    /// re-evaluation.
    pub fn focus_dir(mut self, dir: impl Into<PathBuf>) -> SessionOptions {
        self.focus_dir = Some(dir.into());
        self
    }

    /// How the session's skills live between turns: followed with a
    /// folder watch (the default), followed by checking stamps, shared
    /// with other sessions, or discovered once for a single turn (see
    /// [`SkillLifetime`]).
    pub fn skill_lifetime(mut self, lifetime: SkillLifetime) -> SessionOptions {
        self.skill_lifetime = lifetime;
        self
    }

    /// Machine facts pinned instead of probed (golden files): laid over the
    /// config layers' `[facts]` key by key. See [`crate::facts`].
    pub fn facts(mut self, facts: Facts) -> SessionOptions {
        self.facts = facts;
        self
    }

    /// Hermetic: the environment snapshot is not read at all (no user
    /// config or user skills, no `BCODE_*` layer, no disk cache, no `TZ`,
    /// `LANG`, `SHELL`, CI or SSH markers) and no machine fact that is not
    /// pinned is probed; their sections are left out (see
    /// [`crate::facts`] for which). With every fact pinned, the same
    /// repository renders the same bytes on any machine, at any path.
    pub fn hermetic(mut self, hermetic: bool) -> SessionOptions {
        self.hermetic = hermetic;
        self
    }

    /// Trust the repository for this session: its own `.bcode/bcode.toml`
    /// is applied in full, including the keys that reach outside the
    /// repository, run programs or change who decides (the README's
    /// "Trusting a repository" lists them). Untrusted by default unless the
    /// user's config lists it in `trust.repositories` or the environment
    /// snapshot has `BCODE_TRUST_REPO=1`; pass the user's own decision here,
    /// never one taken from the repository.
    pub fn trust_repository(mut self, trusted: bool) -> SessionOptions {
        self.trust_repo = trusted;
        self
    }

    /// Time and size bounds of the git and toolchain probes.
    pub fn probe_limits(mut self, limits: ProbeLimits) -> SessionOptions {
        self.probe_limits = limits;
        self
    }

    /// How recently changed a file may be and still be trusted by its stamp
    /// (skill files, config, instructions, invariants): a change within
    /// this window of a check is always read again. Default
    /// [`bcode_fs::RACY_WINDOW`] (two seconds, for the coarsest file
    /// system clocks); tests on a file system with fine timestamps shorten
    /// it instead of waiting. Pass the user's or a test's decision, never
    /// one taken from the repository.
    pub fn racy_window(mut self, window: Duration) -> SessionOptions {
        self.racy_window = window;
        self
    }

    /// The config loader's inputs: every layer the host handed over and the
    /// names of its sections, for the repository root found at open. The
    /// one place the options become config inputs.
    pub(crate) fn config_inputs(&self, repo: &std::path::Path) -> ConfigInputs {
        ConfigInputs {
            repo: repo.to_path_buf(),
            cwd: self.cwd.clone(),
            env: self.env.clone(),
            config_files: self.config_files.clone(),
            set: self.set.clone(),
            host_sections: self
                .host_stages
                .iter()
                .map(|stage| stage.spec().id.into_owned())
                .collect(),
            trust_repo: self.trust_repo,
        }
    }
}

/// How a session's skills live between turns: one choice instead of three
/// switches that only made sense in some combinations.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub enum SkillLifetime {
    /// Followed between turns by a folder watch: the folders the last
    /// discovery depended on are watched (Linux inotify, read at each turn
    /// start, so an edit finished before a turn is always in it) and a turn
    /// on a quiet tree costs one system call. Where a watch is not possible
    /// (off Linux, a network or FUSE file system, more than 50,000 folders,
    /// the user's inotify limit), every turn start checks stamps instead,
    /// as [`SkillLifetime::StampChecked`] does. The default.
    #[default]
    Watched,
    /// Followed between turns by checking, at every turn start, the stamp
    /// of each file and folder the last discovery depended on (about
    /// 1.5 µs each); no watch is set up.
    StampChecked,
    /// Followed as [`SkillLifetime::Watched`], in registries shared with the
    /// other sessions opened with a clone of the same [`SharedSkills`]:
    /// sessions on the same skill roots then share one registry, its
    /// keyword and relevance indexes and its catalog.
    Shared(SharedSkills),
    /// A session that answers one turn (a one-shot render): skills are
    /// discovered once and not followed between turns, so it pays for no
    /// per-skill stamps or watcher, and a prompt is matched against skills
    /// only when `auto_activate = "on"` (suggestions would wait for
    /// a turn that never comes). Config and repository files are still
    /// re-checked if it is asked for more turns.
    SingleTurn,
}

impl SkillLifetime {
    /// Whether skills are followed between turns at all.
    pub(crate) fn follows(&self) -> bool {
        !matches!(self, SkillLifetime::SingleTurn)
    }

    /// Whether a folder watch is asked for (where one is possible).
    pub(crate) fn watches(&self) -> bool {
        matches!(self, SkillLifetime::Watched | SkillLifetime::Shared(_))
    }

    /// The pools this session's registry comes from: the shared ones, or a
    /// private set kept for the session's whole life.
    pub(crate) fn pools(&self) -> SharedSkills {
        match self {
            SkillLifetime::Shared(shared) => shared.clone(),
            _ => SharedSkills::new(),
        }
    }
}
