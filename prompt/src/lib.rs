//! The front door for model-turn builders: open a [`PromptSession`] for a
//! repository once, then ask it for every turn's system prompt, cache
//! boundary and request-only context.
//!
//! A whole program (it is `examples/turn_builder.rs`, and the README's;
//! its `Cargo.toml` needs `bcode-prompt` and
//! `tokio = { version = "1", features = ["macros", "rt"] }`):
//!
//! ```no_run
#![doc = include_str!("../examples/turn_builder.rs")]
//! ```
//!
//! `cargo run --example turn_builder [REPO]` runs it. A synchronous
//! host calls [`PromptSession::open_blocking`] and
//! [`PromptSession::next_turn_blocking`] instead.
//!
//! What a session does for the host:
//! - between turns (never during one) it picks up changed skills, config
//!   files, `BCODE.md` / `AGENTS.md` and invariants, and says what changed
//!   ([`Turn::changes`]); a turn in which nothing changed re-reads,
//!   recompiles and re-sorts nothing;
//! - every problem of a turn (skill diagnostics, config, template and
//!   catalog warnings, failed sections, events the sink refused) is a
//!   [`Notice`] in [`Turn::notices`];
//! - a text starting with `/` is a skill command (`/skill id args`,
//!   `/skill off id`, `/skill active`, `/skills`); its events are in
//!   [`Turn::events`] and go to the sink the host chose
//!   ([`SessionOptions::events`]);
//! - relevant-mode invariants use the host's selector
//!   ([`SessionOptions::selector`], a model call with a deadline); one that
//!   fails, panics or overruns falls back by `on_timeout`;
//! - host-defined sections ([`SessionOptions::section`]) are placed, toggled
//!   and reported like the canonical ones.
//!
//! The crate root holds what a turn builder names; the seams a host may
//! fill are in modules: [`sections`] (host sections and templates),
//! [`skills`] (shared registries, events, skill diagnostics),
//! [`invariants`] (the selector), [`machine`] (probes), [`facts`] (pinned
//! facts), [`config`], [`report`] (the per-section report) and [`time`]
//! (a turn's clock and zone).
//!
//! The library never reads the process environment: the host hands over a
//! snapshot with [`SessionOptions::env`] or [`SessionOptions::env_os`].

#![warn(missing_docs)]

mod core;
mod error;
pub mod facts;
mod fallback;
mod notice;
mod options;
mod printed;
mod session;
mod setup;
mod shared;
mod stamps;
mod state;
pub mod testing;
mod turn;
mod workspace;

// What a turn builder names: the session, its options, a turn's input and
// output, the error, and the one notice type.
pub use error::PromptError;
pub use notice::{Notice, NoticeSource};
pub use options::{SessionOptions, SkillLifetime};
pub use session::PromptSession;
pub use turn::{CommandReply, Turn, TurnInput};
pub use workspace::Workspace;

/// A turn's clock and zone ([`TurnInput::now`], [`TurnInput::timezone`]),
/// so a host needs no direct dependency on `chrono` or `chrono-tz`.
pub mod time {
    pub use chrono::{DateTime, Utc};
    pub use chrono_tz::Tz;
}

/// The config a session loaded ([`PromptSession::config`]), its warnings
/// and errors.
pub mod config {
    pub use bcode_prompt_config::{
        BcodeConfig, ConfigError, ConfigWarning, ConfigWarningKind, LoadedConfig,
    };
    // What an operator's tool (`bcode-prompt config`) reads: the layers'
    // inputs, each value's origin and explanation, the schema, the check
    // (`crate::Workspace::check_config`).
    pub use bcode_prompt_config::{
        ConfigCheck, ConfigInputs, ExplainedValue, Origin, SectionToggles, UNSET, json_schema, load,
    };
}

/// The assembled prompt and its per-section report ([`crate::Turn::prompt`]).
pub mod report {
    pub use crate::printed::{DIVIDER, prompt_text, write_prompt_text};
    pub use crate::turn::SectionFailure;
    pub use bcode_prompt_pipeline::StageInfo;
    pub use bcode_prompt_pipeline::{AssembledPrompt, OmitReason, OmittedSection, SectionReport};
    pub use bcode_prompt_pipeline::{Placement, Position, SectionClass, SectionKind};
}

/// What a session's git reads cost ([`crate::PromptSession::git_stats`]).
pub mod git {
    pub use bcode_prompt_sections::GitSessionStats;
}

/// Host-defined sections ([`crate::SessionOptions::section`]): the stage
/// trait, what a stage reads, and the template environment with the
/// `context!` macro that builds a template's values.
pub mod sections {
    pub use crate::setup::templates;
    pub use bcode_prompt_pipeline::{Placement, Position, SectionClass, SectionKind, StageSpec};
    pub use bcode_prompt_pipeline::{Section, Stage, StageContext, StageError};
    pub use bcode_prompt_sections::Gathered;
    pub use bcode_templates::{TemplateError, TemplateWarning, Templates};
    pub use minijinja::{Value, context};
}

/// Skills as a session sees them: sharing registries between sessions,
/// how edits are followed, commands and their replies, events and where
/// they go, and the skill diagnostics behind [`crate::Notice`].
pub mod skills {
    pub use crate::shared::{SharedSkills, SkillReload};
    pub use crate::turn::{Activation, TurnChanges};
    pub use bcode_skill::{
        ActivationReason, CatalogSizeWarning, CatalogWarning, EventSink, JsonlSink, MatchedTerm,
        MemorySink, RegistryDiff, SearchField as Field, SearchHit, SessionError, SessionReply,
        Suggestion,
    };
    pub use bcode_skill_models::{Diagnostic, Severity, SkillError, SkillEvent};
    // What an operator's tool (`bcode-prompt skills`, `session`, `mcp`)
    // uses beside a session: registries built from a [`crate::Workspace`],
    // the catalog written as it is formatted, skill commands parsed, and
    // the skill records it prints.
    pub use bcode_skill::{
        CatalogOptions, Discovery, DiscoveryOptions, LiveRegistry, SkillRegistry,
        SkillSessionOptions, SlashCommand, SourceRoot, SystemClock, WriteCatalogError,
        describe_matches, index_registry, parse_command, split_arguments, write_catalog,
    };
    pub use bcode_skill_models::{
        DiagnosticCode, FieldMap, SkillId, SkillLayout, SkillManifest, SkillPermissionHints,
        SkillSource, SkillSummary, SourceKind,
    };

    /// The `skills doctor --profile` lint: what a given client would refuse.
    pub mod portability {
        pub use bcode_skill::{
            LintInput, MCP_CLIENTS_REFUSE, PortabilityProfile as Profile, lint_portability as lint,
        };
    }
}

/// Text as the CLI shows it: paths as the model sees them, lexical paths,
/// limits, terminal columns.
pub mod text {
    pub use bcode_text::{Limit, Wrap, fit_columns, lexical, model_path, wrap_columns};
}

/// Reading a repository's files bounded and confined, writing beside them
/// without following links, and the state folder's rules.
pub mod files {
    pub use bcode_fs::{
        Confinement, OutputDir, RACY_WINDOW, ReadError, StateDir, StateError, read_bounded,
        read_named_bounded,
    };
}

/// Serving a registry over MCP (`bcode-prompt mcp`), with the
/// `mcp-server` feature.
#[cfg(feature = "mcp-server")]
pub mod mcp {
    pub use bcode_skill_mcp::{
        DigestCache, HttpNotice, HttpOptions, MAX_HTTP_CONNECTIONS, MCP_PATH, SkillServer,
        StdioNotice, run_http, run_stdio,
    };
}

/// Where a working folder's repository begins, as git finds it, and whose
/// folders above the working folder count as the user's (a root another
/// user owns is refused unless `trust.safe_directories` lists it; see
/// [`crate::Notice`] with [`crate::NoticeSource::Repository`]). The root
/// itself is found once, by [`crate::Workspace::open`]
/// ([`crate::Workspace::repo`], [`crate::Workspace::refused_root`]).
pub mod repository {
    pub use crate::state::{Cache, StateFolder};
    pub use bcode_fs::{NotOwned, Ownership, RefusedRoot, RepositoryRoot};
}

/// Relevant-mode invariants: the selector a host may plug in
/// ([`crate::SessionOptions::selector`]) and what it is asked and answers.
pub mod invariants {
    pub use bcode_prompt_sections::SelectorFuture;
    pub use bcode_prompt_sections::{
        DeterministicSelector, InvariantSelector, SelectorAnswer, SelectorError, SelectorRequest,
    };
}

/// The machine a session probes ([`crate::SessionOptions::machine`]) and how
/// Bcode runs ([`crate::SessionOptions::runtime_mode`]).
pub mod machine {
    pub use bcode_prompt_sections::{CI_VARIABLES, CONTAINER_VARIABLES, SSH_VARIABLES};
    pub use bcode_prompt_sections::{Machine, Pins, ProbeLimits, RealMachine, RuntimeMode};
}
