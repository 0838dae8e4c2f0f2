//! The layered configuration: typed model, figment layers, provenance and errors.
//!
//! `layers` is the only part that reads files; `validate` checks one layer's
//! data against the key tree (`lines` says where each key is written);
//! `trust` drops what an untrusted repository may not set; `loaded` merges
//! the layers with figment and keeps the origin of every value. The key tree
//! (`key_tree`, of the types in `shape`) is generated from the JSON Schema
//! that `schema` derives from the config types, and checked in.

mod error;
mod key_tree;
mod layers;
mod lines;
mod loaded;
mod model;
mod origin;
mod schema;
mod shape;
mod trust;
mod validate;

pub use error::{ConfigError, ConfigErrorKind};
pub use layers::{ConfigCheck, ConfigInputs, check, config_files, load, safe_directories};
pub use loaded::{ConfiguredSkillRoot, ExplainedValue, LoadedConfig, UNSET};
pub use model::*;
pub use origin::{ConfigWarning, ConfigWarningKind, Origin};
pub use schema::json_schema;
pub use trust::{IgnoredValue, RepoTrust, SafeDirectories, TRUST_ENV_VAR};
