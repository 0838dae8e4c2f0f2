//! The layered configuration: typed model, figment layers, provenance and errors.

mod model;

pub use model::*;
