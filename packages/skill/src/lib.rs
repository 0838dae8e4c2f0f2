//! The Bcode skill registry: discovery over layered sources, front-matter
//! parsing and validation, precedence, the summary index and cache, the
//! model-visible catalog and the invoked-skill context block.
//!
//! The crate is in rooms, each a private module whose names the root
//! re-exports (minijinja's way), so a path never says where a name lives:
//!
//! - `parse/`: one instruction file's bytes in, a summary and diagnostics
//!   out (front matter, YAML, TOML, the manifest); no I/O.
//! - `discover/`: source roots, the walk, candidates, the load pool,
//!   snapshots, the registry and live reload; the filesystem
//!   edge. `discover/cache/` keeps summaries in memory and on disk.
//! - `catalog/`: the model-visible list of skills.
//! - `context/`: an invoked skill's context block and its arguments.
//! - `session/`: activation, suggestion, slash commands, turn options and
//!   the event sinks.
//! - `provider/`: the `bcode.skill/v1` interface and the folder provider.
//! - `search/`: the relevance index that routes a task to the skills that
//!   fit it.
//! - `portability.rs`: what other clients would refuse in a skill.
//!
//! What is public is what a host, another crate of the workspace, a bench
//! or a test uses; everything else stays in its room.

#![warn(missing_docs)]

mod catalog;
mod context;
mod discover;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod parse;
mod portability;
mod provider;
mod search;
mod session;

pub use bcode_skill_models::SourceEnv;
pub use bcode_templates::{TemplateError, Templates};
pub use catalog::{
    Catalog, CatalogOptions, CatalogSizeWarning, CatalogWarning, MIN_DESCRIPTION_CHARS,
    WriteCatalogError, format_catalog, format_entries, write_catalog,
};
pub use context::{
    ARGUMENTS_PREVIEW_MAX_CHARS, ArgumentsPreview, MAX_INSERTED_BYTES, Placeholders,
    SplitArguments, format_context, preview_arguments, shown_summary, split_arguments,
    substitute_arguments,
};
pub use discover::cache::DiskCache;
pub use discover::{
    BundledRoot, ConfiguredRoot, ConfirmedStamps, Discovery, DiscoveryOptions, DiscoveryStats,
    InstructionRecord, InstructionRecords, LiveRegistry, OwnerCheck, ReloadMode, RootReport,
    RootsInput, SkillRegistry, SourceRoot, TurnRefresh, WalkOptions, source_roots,
};
pub use parse::{
    Document, DocumentError, InstructionKind, ParseOutcome, SkillOrigin, parse_document,
    parse_skill,
};
pub use portability::{
    LintInput, MCP_CLIENTS_REFUSE, PortabilityProfile, lint_portability, mcp_clients_refuse,
};
pub use provider::{
    FolderProvider, HostError, PermissionDecision, PermissionPolicy, PermissionRequest,
    ProvidedSkill, SCRIPT_EXECUTE_PERMISSION, SKILL_INTERFACE_V1, SkillHost, SkillProvider,
    require_permission,
};
pub use search::{
    LazySkillIndex, MAX_QUERY_TERMS, MatchedTerm, Normalizer, RoutingCache, RoutingStats,
    SearchField, SearchHit, SkillIndex, SkillText, for_each_term, for_each_word, index_registry,
    other_files, refresh_index,
};
pub use session::{
    ActivationReason, ActiveSkill, Clock, CommandError, CommandOutcome, EventRecord, EventSink,
    EventSinkError, InvocationOptions, JsonlSink, KeywordIndex, LazyKeywordIndex, LogProblem,
    LogProblemKind, MAX_GLOB_BYTES, MAX_RECORD_BYTES, MemorySink, PromptOutcome, ReadOutcome,
    RegistryDiff, ReloadOutcome, SessionError, SessionReply, SettingOrigin, SkillListing,
    SkillSession, SkillSessionOptions, SkillTurnHints, SkillTurnPolicy, SlashCommand,
    SnapshotIndexes, Suggestion, SystemClock, TurnOptions, TurnReason, context_loaded,
    describe_matches, parse_command, read_events, skill_turn_options, strong_terms,
};
