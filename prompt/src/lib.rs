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
//! The library never reads the process environment: the host hands over a
//! snapshot with [`SessionOptions::env`] or [`SessionOptions::env_os`].

#![warn(missing_docs)]

mod core;
mod error;
pub mod facts;
mod options;
mod session;
mod setup;
mod shared;
mod stamps;
pub mod testing;
mod turn;

pub use error::PromptError;
pub use facts::{Facts, FactsError};
pub use options::{SessionOptions, SkillLifetime};
pub use session::PromptSession;
pub use setup::{mcp_providers, skill_roots, templates};
pub use shared::{SharedSkills, SkillReload};
pub use turn::{Activation, CommandReply, SectionFailure, Turn, TurnChanges, TurnInput};

pub use bcode_prompt_pipeline::assembled::{
    AssembledPrompt, OmitReason, OmittedSection, SectionReport,
};
pub use bcode_prompt_pipeline::config::{BcodeConfig, ConfigError, ConfigWarning, LoadedConfig};
pub use bcode_prompt_pipeline::pipeline::StageInfo;
pub use bcode_prompt_pipeline::section::{
    Placement, Position, SectionClass, SectionKind, StageSpec,
};
pub use bcode_prompt_pipeline::stage::{Section, Stage, StageContext, StageError};
pub use bcode_prompt_sections::gathered::Gathered;
pub use bcode_prompt_sections::probe::{Machine, Pins, RealMachine, RuntimeMode};
pub use bcode_prompt_sections::relevant::selector::SelectorFuture;
pub use bcode_prompt_sections::relevant::{
    DeterministicSelector, InvariantSelector, SelectorAnswer, SelectorError, SelectorRequest,
};
pub use bcode_skill::{
    ActivationReason, CatalogSizeWarning, CatalogWarning, EventSink, JsonlSink, MemorySink,
    RegistryDiff, SessionError, SessionReply, Suggestion,
};
pub use bcode_skill_models::{Diagnostic, SkillError, SkillEvent};
pub use bcode_templates::{TemplateError, Templates};

/// The template engine, for host sections that render their own templates
/// (`context!` builds their values).
pub use minijinja;
pub use minijinja::context;

/// Re-exported so a host needs no direct dependency to pin a turn's clock.
pub use chrono;
/// Re-exported so a host needs no direct dependency to pin a turn's zone.
pub use chrono_tz;
