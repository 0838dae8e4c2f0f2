//! The edge of the machine-facing sections: [`gather_machine_with`] reads the
//! clock reading, environment snapshot, OS, git and toolchain into
//! [`Gathered`] for the stages of [`crate::stages`], skipping every probe
//! whose sections are off.
//!
//! Only the [`Machine`] implementation and the git and toolchain probes touch
//! the machine; the clock and the process environment arrive in
//! [`ProbeRequest`], so a fake machine makes the whole path hermetic in
//! tests.
//!
//! A machine may also answer with [`Pins`]: facts fixed in advance (a
//! golden file's). A pinned fact replaces its probe at the gathered level;
//! with [`Pins::hermetic`], a fact that is not pinned is not probed at all
//! and its section is left out.

use std::collections::BTreeMap;
use std::path::Path;

use bcode_prompt_config::BcodeConfig;
use bcode_prompt_pipeline::SectionKind;

use crate::datetime::{DateTimeInput, resolve_timezone};
use crate::environment::{
    ConfigProfile, ExecutionFacts, OsFacts, hosting_signals, locale, shell_name,
};
use crate::environment::{HostingSignals, LocaleFacts};
use crate::gathered::Gathered;
use crate::git::GitFacts;
use crate::git::read::{GitProbeOptions, GitRead};
use crate::git::session::GitSession;
use crate::toolchain::{self, ToolCommand, ToolchainFacts, ToolchainLimits};

pub use crate::environment::RuntimeMode;

/// What the caller (the CLI or a host) knows about this request.
#[derive(Debug)]
pub struct ProbeRequest<'a> {
    /// The repository (or any directory inside it).
    pub repo: &'a Path,
    /// A snapshot of the process environment.
    pub env: &'a BTreeMap<String, String>,
    /// The injected clock reading.
    pub now: chrono::DateTime<chrono::Utc>,
    /// `--timezone`; else `TZ` from `env`, else the system zone, else UTC.
    pub timezone: Option<chrono_tz::Tz>,
    /// The resolved config; its section toggles decide which probes run.
    pub config: &'a BcodeConfig,
    /// The active config profile name, if any.
    pub profile: Option<String>,
    /// How Bcode runs this request, shown by `runtime_mode`.
    pub runtime_mode: RuntimeMode,
}

/// The machine facts the environment does not carry. [`RealMachine`] asks
/// the OS; tests pass a fake.
pub trait Machine: Send + Sync {
    /// The OS family, version and architecture.
    fn os(&self) -> OsFacts;
    /// Whether `/.dockerenv` or `/run/.containerenv` exists.
    fn container_marker(&self) -> bool;
    /// The OS's configured IANA zone name.
    fn system_timezone(&self) -> Option<String>;
    /// The OS's locale (used when no locale variable is set).
    fn system_locale(&self) -> Option<String>;
    /// The version commands `toolchain_context` runs.
    fn toolchain_commands(&self) -> Vec<ToolCommand>;
    /// Facts fixed in advance, which replace their probes (none by default).
    fn pins(&self) -> Option<&Pins> {
        None
    }
}

/// Facts fixed in advance at the gathered level: each `Some` is used as it
/// is instead of probing (the environment snapshot, the machine, git or the
/// version commands). With `hermetic`, a fact that is `None` is not probed
/// either: its section has nothing to show and is left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pins {
    /// Probe nothing that is not pinned.
    pub hermetic: bool,
    /// OS and architecture for `execution_environment`.
    pub os: Option<OsFacts>,
    /// The shell's name (`Some(None)`: no shell); unpinned in a hermetic
    /// render, the shell is left out of the sentence.
    pub shell: Option<Option<String>>,
    /// CI, container and SSH presence for `hosting_environment`.
    pub hosting: Option<HostingSignals>,
    /// The locale for `locale`.
    pub locale: Option<LocaleFacts>,
    /// The system time zone's IANA name (the turn's and `TZ` still win, as
    /// for a probed zone; a hermetic render never reads `TZ`).
    pub timezone: Option<String>,
    /// Revision, worktree and status for the git sections.
    pub git: Option<GitFacts>,
    /// The version lines for `toolchain_context`.
    pub toolchain: Option<ToolchainFacts>,
}

/// What to do for one fact: use the pinned value, probe, or (hermetic,
/// unpinned) leave it out.
enum Pinned<T> {
    Value(T),
    Probe,
    Skip,
}

fn pinned<T: Clone>(machine: &dyn Machine, field: impl FnOnce(&Pins) -> &Option<T>) -> Pinned<T> {
    match machine.pins() {
        None => Pinned::Probe,
        Some(pins) => match field(pins) {
            Some(value) => Pinned::Value(value.clone()),
            None if pins.hermetic => Pinned::Skip,
            None => Pinned::Probe,
        },
    }
}

impl<T> Pinned<T> {
    /// The pinned value, else the probe's, else (skipped) nothing.
    fn or_probe(self, probe: impl FnOnce() -> T) -> Option<T> {
        match self {
            Pinned::Value(value) => Some(value),
            Pinned::Probe => Some(probe()),
            Pinned::Skip => None,
        }
    }
}

/// The real machine: sysinfo, iana-time-zone, sys-locale and the fixed
/// toolchain allowlist.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealMachine;

impl Machine for RealMachine {
    fn os(&self) -> OsFacts {
        OsFacts {
            family: std::env::consts::OS.to_owned(),
            version: sysinfo::System::long_os_version()
                .or_else(|_| sysinfo::System::os_version())
                .ok(),
            arch: std::env::consts::ARCH.to_owned(),
        }
    }

    fn container_marker(&self) -> bool {
        ["/.dockerenv", "/run/.containerenv"]
            .iter()
            .any(|path| Path::new(path).exists())
    }

    fn system_timezone(&self) -> Option<String> {
        iana_time_zone::get_timezone().ok()
    }

    fn system_locale(&self) -> Option<String> {
        sys_locale::get_locale()
    }

    fn toolchain_commands(&self) -> Vec<ToolCommand> {
        toolchain::default_commands()
    }
}

/// Time and size bounds of the slow probes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProbeLimits {
    /// Deadlines and caps for reading the repository (whether to read the
    /// status is decided per request from the toggles).
    pub git: GitProbeOptions,
    /// Per-command time and output limits of the version commands.
    pub toolchain: ToolchainLimits,
}

/// Gathers every input the stages need from `machine`
/// (the real one is [`RealMachine`]), within `limits`: the session facts,
/// then the turn facts, with the toolchain commands running while git works.
pub fn gather_machine_with(
    request: &ProbeRequest<'_>,
    machine: &dyn Machine,
    limits: &ProbeLimits,
    inputs: &mut Gathered,
) {
    let toolchain = start_toolchain(request, machine, limits);
    gather_session_facts(request, machine, inputs);
    gather_turn_facts(request, machine, limits, inputs);
    if let Some(run) = toolchain {
        inputs.toolchain = Some(run.finish());
    }
}

/// Whether the section `kind` is on, as the pipeline decides it.
fn on(request: &ProbeRequest<'_>, kind: SectionKind) -> bool {
    kind.spec().enabled_by(request.config)
}

/// Starts the toolchain commands, when that section is on: they run on their
/// own threads until [`toolchain::ToolchainRun::finish`].
pub fn start_toolchain(
    request: &ProbeRequest<'_>,
    machine: &dyn Machine,
    limits: &ProbeLimits,
) -> Option<toolchain::ToolchainRun> {
    if !matches!(pinned(machine, |p| &p.toolchain), Pinned::Probe) {
        return None;
    }
    on(request, SectionKind::ToolchainContext).then(|| {
        // Never inside the repository: rustup honours a repository's
        // rust-toolchain.toml (which can name a toolchain by path) and go
        // honours go.mod's toolchain line, so running there would let the
        // repository choose what runs. The versions are the machine's defaults.
        toolchain::start(
            &machine.toolchain_commands(),
            toolchain::NEUTRAL_DIR.as_ref(),
            &limits.toolchain,
        )
    })
}

/// The facts that do not change during a session (the environment snapshot
/// is fixed when it opens): OS and shell, hosting signals, locale, runtime
/// mode and config profile. A session gathers them once.
pub fn gather_session_facts(
    request: &ProbeRequest<'_>,
    machine: &dyn Machine,
    inputs: &mut Gathered,
) {
    let env = request.env;
    if on(request, SectionKind::ExecutionEnvironment) {
        inputs.execution = pinned(machine, |p| &p.os)
            .or_probe(|| machine.os())
            .map(|os| ExecutionFacts {
                os,
                shell: pinned(machine, |p| &p.shell)
                    .or_probe(|| shell_name(env))
                    .flatten(),
            });
    }
    if on(request, SectionKind::HostingEnvironment) {
        inputs.hosting = pinned(machine, |p| &p.hosting)
            .or_probe(|| hosting_signals(env, machine.container_marker()));
    }
    if on(request, SectionKind::Locale) {
        inputs.locale =
            pinned(machine, |p| &p.locale).or_probe(|| locale(env, || machine.system_locale()));
    }
    if on(request, SectionKind::ToolchainContext)
        && let Pinned::Value(facts) = pinned(machine, |p| &p.toolchain)
    {
        inputs.toolchain = Some(facts);
    }
    if on(request, SectionKind::RuntimeMode) {
        inputs.runtime_mode = Some(request.runtime_mode);
    }
    if on(request, SectionKind::ConfigProfile) {
        inputs.config_profile = Some(ConfigProfile(request.profile.clone()));
    }
}

/// The facts of one turn: the clock reading in its zone, and git (revision,
/// worktree and status are read from one open of the repository).
pub fn gather_turn_facts(
    request: &ProbeRequest<'_>,
    machine: &dyn Machine,
    limits: &ProbeLimits,
    inputs: &mut Gathered,
) {
    start_turn_facts(request, machine, limits).finish(inputs);
}

/// [`gather_turn_facts`] in two steps: the git read starts here, on its
/// worker thread, and [`TurnFacts::finish`] waits for it (its deadline
/// counts from here), so a turn can gather its other inputs meanwhile.
pub fn start_turn_facts(
    request: &ProbeRequest<'_>,
    machine: &dyn Machine,
    limits: &ProbeLimits,
) -> TurnFacts {
    start_session_turn_facts(request, machine, limits, None)
}

/// `start_turn_facts` for a session whose reads are kept in `git`: an
/// unchanged repository is not read again, and a read still running from
/// an earlier turn is waited for instead of started again (see
/// [`GitSession`]).
pub fn start_session_turn_facts(
    request: &ProbeRequest<'_>,
    machine: &dyn Machine,
    limits: &ProbeLimits,
    git: Option<&GitSession>,
) -> TurnFacts {
    let datetime = on(request, SectionKind::CurrentDatetime).then(|| {
        let (zone, zone_source) = resolve_timezone(
            request.timezone,
            request.env.get("TZ").map(String::as_str),
            || match pinned(machine, |p| &p.timezone) {
                Pinned::Value(zone) => Some(zone),
                Pinned::Probe => machine.system_timezone(),
                Pinned::Skip => None,
            },
        );
        DateTimeInput {
            now: request.now,
            zone,
            zone_source,
        }
    });
    let wants_status =
        on(request, SectionKind::GitRevision) || on(request, SectionKind::DynamicRepositoryContext);
    // Pinned git facts plug in here, at the gathered level; a hermetic
    // request without them reads no repository.
    let wants_git = wants_status || on(request, SectionKind::WorktreeContext);
    let git = match pinned(machine, |p| &p.git) {
        Pinned::Probe if wants_git => {
            let options = GitProbeOptions {
                status: wants_status,
                ..limits.git.clone()
            };
            Some(match git {
                Some(session) => session.start(request.repo, &options),
                None => crate::git::read::start_git_read(request.repo, &options),
            })
        }
        Pinned::Value(git) if wants_git => Some(GitRead::Ended(git)),
        Pinned::Probe | Pinned::Value(_) | Pinned::Skip => None,
    };
    TurnFacts { datetime, git }
}

/// The facts of one turn, the git read possibly still running.
#[derive(Debug)]
pub struct TurnFacts {
    datetime: Option<DateTimeInput>,
    git: Option<GitRead>,
}

impl TurnFacts {
    /// Waits for the git read and puts the turn's facts into `inputs`.
    pub fn finish(self, inputs: &mut Gathered) {
        if self.datetime.is_some() {
            inputs.datetime = self.datetime;
        }
        if let Some(git) = self.git {
            inputs.git = Some(git.finish());
        }
    }
}
