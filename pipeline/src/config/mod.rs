//! The layered configuration: typed model, figment layers, provenance and errors.
//!
//! `layers` is the only part that reads files; `validate` checks one layer's
//! data against the key tree `schema` derives from the types; `loaded` merges
//! the layers with figment and keeps the origin of every value.

mod error;
mod layers;
mod loaded;
mod model;
mod origin;
mod schema;
mod validate;

pub use error::{ConfigError, ConfigErrorKind};
pub use layers::{ConfigInputs, config_files, load};
pub use loaded::{ConfiguredSkillRoot, ExplainedValue, LoadedConfig, UNSET};
pub use model::*;
pub use origin::{ConfigWarning, Origin};
pub use schema::json_schema;
