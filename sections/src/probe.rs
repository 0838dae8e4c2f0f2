//! The edge of the machine-facing sections: [`gather`] reads the clock
//! reading, environment snapshot, OS, git and toolchain into [`Inputs`] for
//! the stages of [`stages`], skipping every probe whose sections are off.
//!
//! Only the [`Machine`] implementation and the git and toolchain probes touch
//! the machine; the clock and the process environment arrive in
//! [`ProbeRequest`], so [`gather_with`] and a fake machine make the whole
//! path hermetic in tests.

use std::collections::BTreeMap;
use std::path::Path;

use bcode_prompt::config::BcodeConfig;
use bcode_prompt::stage::{Inputs, Stage};
use bcode_prompt::templates::EmbeddedTemplate;

use crate::datetime::{DateTimeInput, DateTimeStage, resolve_timezone};
use crate::environment::{
    ConfigProfile, ConfigProfileStage, ExecutionEnvironmentStage, ExecutionFacts,
    HostingEnvironmentStage, LocaleStage, OsFacts, RuntimeModeStage, hosting_signals, locale,
    shell_name,
};
use crate::git::read::GitProbeOptions;
use crate::git::{GitRevisionStage, GitStatusStage, WorktreeStage};
use crate::toolchain::{self, ToolCommand, ToolchainLimits, ToolchainStage};

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
    pub config: &'a BcodeConfig,
    /// The active config profile name, if any.
    pub profile: Option<String>,
    pub runtime_mode: RuntimeMode,
}

/// The machine facts the environment does not carry. [`RealMachine`] asks
/// the OS; tests pass a fake.
pub trait Machine: Send + Sync {
    fn os(&self) -> OsFacts;
    /// Whether `/.dockerenv` or `/run/.containerenv` exists.
    fn container_marker(&self) -> bool;
    /// The OS's configured IANA zone name.
    fn system_timezone(&self) -> Option<String>;
    /// The OS's locale (used when no locale variable is set).
    fn system_locale(&self) -> Option<String>;
    /// The version commands `toolchain_context` runs.
    fn toolchain_commands(&self) -> Vec<ToolCommand>;
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProbeLimits {
    pub git: GitProbeOptions,
    pub toolchain: ToolchainLimits,
}

/// Gathers every input the stages of [`stages`] need, from the real machine.
pub fn gather(request: &ProbeRequest<'_>, inputs: &mut Inputs) {
    gather_with(request, &RealMachine, &ProbeLimits::default(), inputs);
}

/// [`gather`] with an explicit machine and limits.
pub fn gather_with(
    request: &ProbeRequest<'_>,
    machine: &dyn Machine,
    limits: &ProbeLimits,
    inputs: &mut Inputs,
) {
    let on = |id: &str| request.config.system_prompt.sections.get(id) == Some(true);
    let env = request.env;

    // Start the toolchain commands first: they run on their own threads
    // while git works, so the two waits overlap.
    let toolchain = on("toolchain_context").then(|| {
        // Never inside the repository: rustup honours a repository's
        // rust-toolchain.toml (which can name a toolchain by path) and go
        // honours go.mod's toolchain line, so running there would let the
        // repository choose what runs. The versions are the machine's defaults.
        toolchain::start(
            &machine.toolchain_commands(),
            toolchain::NEUTRAL_DIR.as_ref(),
            &limits.toolchain,
        )
    });

    if on("current_datetime") {
        let (zone, zone_source) =
            resolve_timezone(request.timezone, env.get("TZ").map(String::as_str), || {
                machine.system_timezone()
            });
        inputs.insert(DateTimeInput {
            now: request.now,
            zone,
            zone_source,
        });
    }
    if on("execution_environment") {
        inputs.insert(ExecutionFacts {
            os: machine.os(),
            shell: shell_name(env),
        });
    }
    if on("hosting_environment") {
        inputs.insert(hosting_signals(env, machine.container_marker()));
    }
    if on("locale") {
        inputs.insert(locale(env, || machine.system_locale()));
    }
    if on("runtime_mode") {
        inputs.insert(request.runtime_mode);
    }
    if on("config_profile") {
        inputs.insert(ConfigProfile(request.profile.clone()));
    }

    let wants_status = on("git_revision") || on("dynamic_repository_context");
    if wants_status || on("worktree_context") {
        let options = GitProbeOptions {
            status: wants_status,
            ..limits.git
        };
        inputs.insert(crate::git::read::read(request.repo, &options));
    }

    if let Some(run) = toolchain {
        inputs.insert(run.finish());
    }
}

/// The machine-facing stages, in canonical order.
pub fn stages() -> Vec<Box<dyn Stage>> {
    vec![
        Box::new(DateTimeStage),
        Box::new(ExecutionEnvironmentStage),
        Box::new(HostingEnvironmentStage),
        Box::new(LocaleStage),
        Box::new(RuntimeModeStage),
        Box::new(WorktreeStage),
        Box::new(ConfigProfileStage),
        Box::new(GitRevisionStage),
        Box::new(ToolchainStage),
        Box::new(GitStatusStage),
    ]
}

/// The templates of these stages, embedded.
pub const TEMPLATES: &[EmbeddedTemplate] = &[
    (
        "sections/datetime.j2",
        include_str!("../../templates/sections/datetime.j2"),
    ),
    (
        "sections/execution_environment.j2",
        include_str!("../../templates/sections/execution_environment.j2"),
    ),
    (
        "sections/hosting_environment.j2",
        include_str!("../../templates/sections/hosting_environment.j2"),
    ),
    (
        "sections/locale.j2",
        include_str!("../../templates/sections/locale.j2"),
    ),
    (
        "sections/runtime_mode.j2",
        include_str!("../../templates/sections/runtime_mode.j2"),
    ),
    (
        "sections/config_profile.j2",
        include_str!("../../templates/sections/config_profile.j2"),
    ),
    (
        "sections/no_git.j2",
        include_str!("../../templates/sections/no_git.j2"),
    ),
    (
        "sections/worktree_context.j2",
        include_str!("../../templates/sections/worktree_context.j2"),
    ),
    (
        "sections/git_revision.j2",
        include_str!("../../templates/sections/git_revision.j2"),
    ),
    (
        "sections/git_status.j2",
        include_str!("../../templates/sections/git_status.j2"),
    ),
    (
        "sections/toolchain.j2",
        include_str!("../../templates/sections/toolchain.j2"),
    ),
];
