//! The Bcode skill registry: discovery over layered sources, front-matter
//! parsing and validation, precedence, the summary index and cache, the
//! model-visible catalog and the invoked-skill context block.
//!
//! The crate is in rooms, each a public module:
//!
//! - [`parse`]: one instruction file's bytes in, a summary and diagnostics
//!   out (front matter, YAML, TOML, the manifest); no I/O.
//! - [`discover`]: source roots, the walk, candidates, the load pool,
//!   snapshots, the registry and live reload; the filesystem
//!   edge.
//! - [`cache`] (inside [`discover`]): the in-process summary cache and the
//!   disk cache.
//! - [`catalog`]: the model-visible list of skills.
//! - [`context`]: an invoked skill's context block and its arguments.
//! - [`session`]: activation, suggestion, slash commands, turn options and
//!   the event sinks.
//! - [`provider`]: the `bcode.skill/v1` interface and the folder provider.
//! - [`search`]: the relevance index that routes a task to the skills that
//!   fit it.
//!
//! The root re-exports what a host needs to build a registry, keep it
//! current, run a session and format what the model sees; everything else
//! is reached through its room (`bcode_skill::parse::parse_document`,
//! `bcode_skill::catalog::write_catalog`, ...).

#![warn(missing_docs)]

pub mod catalog;
pub mod context;
pub mod discover;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod parse;
pub mod portability;
pub mod provider;
pub mod search;
pub mod session;

pub use bcode_skill_models::SourceEnv;
pub use bcode_templates::{TemplateError, Templates};
pub use catalog::{Catalog, CatalogOptions, format_catalog};
pub use context::format_context;
pub use discover::cache::{self, DiskCache};
pub use discover::{
    Discovery, DiscoveryOptions, LiveRegistry, OwnerCheck, ReloadMode, RootsInput, SkillRegistry,
    SourceRoot, source_roots,
};
pub use provider::SkillProvider;
pub use search::{SearchHit, SkillIndex};
pub use session::{
    ActivationReason, EventSink, JsonlSink, SessionError, SessionReply, SkillSession,
    SkillSessionOptions,
};
