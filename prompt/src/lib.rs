//! The front door for model-turn builders: open a [`PromptSession`] for a
//! repository once, then ask it for every turn's system prompt, cache
//! boundary and request-only context.
//!
//! ```
//! use bcode_prompt::{CommandReply, PromptSession, SessionOptions, TurnInput};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let skill = dir.path().join("skills").join("rust-debugging");
//! # std::fs::create_dir_all(&skill)?;
//! # std::fs::write(
//! #     skill.join("SKILL.md"),
//! #     "---\ndescription: Diagnose Rust build and test failures\n---\n# Rust Debugging\n",
//! # )?;
//! # let repo_root = dir.path();
//! // Once per session: the repository, the host's environment snapshot and
//! // any config assignments (same syntax as the CLI's `--set`).
//! let options = SessionOptions::new(repo_root)
//!     .env_os(std::env::vars_os())
//! #   // The test itself stays hermetic: a private HOME, nothing else.
//! #   .env([("HOME".to_owned(), dir.path().join("home").display().to_string())])
//!     .set("invariants.mode=\"relevant\"");
//! let mut session = PromptSession::open(options).await?;
//!
//! for text in [
//!     "fix the failing test",
//!     "/skill rust-debugging the panic in parser.rs",
//!     "now add a regression test",
//! ] {
//!     let turn = session.next_turn(TurnInput::new(text)).await?;
//!     // The cacheable system text (a provider's prompt cache may end at
//!     // `cache_boundary`) and the request-only context go to the model.
//!     let (system, boundary) = (turn.system(), turn.cache_boundary());
//!     let request_context = turn.request_context();
//!     assert!(boundary <= system.len() && !request_context.is_empty());
//!     if let Some(CommandReply::Failed(error)) = &turn.command {
//!         eprintln!("{error}"); // e.g. an unknown skill, with a near miss
//!     }
//!     let answer = "(the model's final answer)";
//!     // Relevant-mode invariants re-evaluate in the background from here.
//!     session.commit_turn(answer);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! The same loop runs as `cargo run --example turn_builder`. A synchronous
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
pub use options::SessionOptions;
pub use session::PromptSession;
pub use setup::{skill_roots, templates};
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
