//! The Bcode configuration: the typed model of every table (`[skills]`,
//! `[invariants]`, `[system_prompt]`, `[model]`, `[facts]`, `[trust]`), its
//! layers with the origin of every value, and the trust gate for a
//! repository's layer.
//!
//! `layers` is the only module that reads files; `validate` checks one
//! layer's data against the key tree (`lines` says where each key is
//! written); `trust` drops what an untrusted repository may not set;
//! `loaded` merges the layers with figment and keeps the origin of every
//! value. The key tree (`key_tree`, of the types in `shape`) is generated
//! from the JSON Schema that `schema` derives from the config types, and
//! checked in. The modules are private: what a host or another crate uses
//! is re-exported here by name.

#![warn(missing_docs)]

mod error;
mod facts;
mod key_tree;
mod layers;
mod lines;
mod loaded;
mod model;
mod origin;
mod schema;
mod shape;
mod skills;
mod trust;
mod validate;

pub use error::{ConfigError, ConfigErrorKind};
pub use facts::{
    Facts, GitFact, HostingFact, OsFact, PinnedHead, PinnedRuntimeMode, PinnedWorktree,
};
pub use layers::{ConfigCheck, ConfigInputs, check, config_files, load, safe_directories};
pub use loaded::{ConfiguredSkillRoot, ExplainedValue, LoadedConfig, UNSET};
pub use model::{
    BcodeConfig, InvariantSelectorConfig, InvariantsConfig, InvariantsMode, ModelConfig, OnTimeout,
    PromptMode, REPOSITORY_INSTRUCTIONS_TOTAL_MAX_CHARS, SectionToggles, SystemPromptConfig,
    ToolOutputConfig, TrustConfig,
};
pub use origin::{ConfigWarning, ConfigWarningKind, Origin};
pub use schema::json_schema;
pub use skills::{
    AutoActivate, CatalogMode, DEFAULT_MCP_TIMEOUT_MS, McpServerConfig, ScoreFloor, SkillsConfig,
    SkillsDisabledConfig, SkillsPromptConfig, SkillsRoutingConfig, SkillsSourcesConfig,
};
pub use trust::{IgnoredValue, RepoTrust, SafeDirectories, TRUST_ENV_VAR};
