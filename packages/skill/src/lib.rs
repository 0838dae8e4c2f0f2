//! The Bcode skill registry: discovery over layered sources, front-matter
//! parsing and validation, precedence, the summary index and cache, the
//! model-visible catalog and the invoked-skill context block.
//!
//! The core (`parse`, `manifest`, `catalog`, `context` formatting) takes data;
//! `discover` is the edge that walks directories and reads files.

#![warn(missing_docs)]

mod arguments;
mod cache;
mod candidate;
mod catalog;
mod context;
mod discovery;
mod document;
mod events;
mod folder_provider;
mod freshness;
mod front_matter;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod keywords;
mod load_pool;
mod manifest;
mod parse;
mod path_triggers;
mod persist;
pub mod portability;
mod precedence;
mod provider;
mod read;
mod registry;
mod reload;
mod session;
mod snapshot;
mod sources;

mod toml_front_matter;
mod turn_options;
mod walk;
mod yaml;
mod yaml_fast;

pub use arguments::{
    MAX_ARGUMENT_NAME_CHARS, MAX_INSERTED_BYTES, Placeholders, SplitArguments, is_argument_name,
    split_arguments, substitute,
};
pub use bcode_skill_models::SourceEnv;
pub use bcode_templates::{TemplateError, Templates};
pub use bcode_text::{closest, edit_distance};
pub use catalog::{
    BYTES_PER_TOKEN, Catalog, CatalogOptions, CatalogSizeWarning, CatalogWarning,
    MIN_DESCRIPTION_CHARS, WRITE_PIECE_BYTES, WriteCatalogError, format_catalog, write_catalog,
};
pub use context::{
    ARGUMENTS_PREVIEW_MAX_CHARS, ArgumentsPreview, format_context, preview, preview_arguments,
    shown_summary,
};
pub use discovery::{Discovery, DiscoveryStats};
pub use document::{Document, DocumentError, parse_document};
pub use events::{
    Clock, EventRecord, EventSink, EventSinkError, JsonlSink, LogProblem, LogProblemKind,
    MAX_RECORD_BYTES, MemorySink, ReadOutcome, SystemClock, context_loaded, format_rfc3339,
    read_events, read_events_from,
};
pub use folder_provider::FolderProvider;
pub use keywords::{KeywordIndex, LazyKeywordIndex, PATH_MATCH_SCORE, Suggestion, words};
pub use parse::{InstructionKind, Origin, ParseOutcome, parse_skill};
pub use persist::DiskCache;
pub use provider::{
    HostError, PROVIDER_LOCATION_SCHEME, PermissionDecision, PermissionPolicy, PermissionRequest,
    ProvidedSkill, SCRIPT_EXECUTE_PERMISSION, SKILL_INTERFACE_V1, SkillHost, SkillProvider,
    require_permission,
};
pub use registry::{DiscoveryOptions, RootReport, SkillRegistry};
pub use reload::{LiveRegistry, ReloadMode, TurnRefresh};
pub use session::{
    AUTO_ACTIVATE_MAX_PER_PROMPT, AUTO_ACTIVATE_MIN_SCORE, ActivationReason, ActiveSkill,
    CommandError, CommandOutcome, PromptOutcome, RESERVED_SUBCOMMANDS, RegistryDiff, ReloadOutcome,
    SessionError, SessionOptions, SessionReply, SkillListing, SkillSession, SlashCommand,
    describe_matches, parse_command,
};
pub use sources::{BundledRoot, ConfiguredRoot, RootsInput, SourceRoot, source_roots};
pub use turn_options::{
    InvocationOptions, SettingOrigin, SkillTurnHints, SkillTurnPolicy, TurnOptions, TurnReason,
    skill_turn_options,
};
pub use walk::WalkOptions;
