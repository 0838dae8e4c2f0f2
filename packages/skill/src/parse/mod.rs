//! Parsing: the bytes of one instruction file in, a skill summary (or a
//! plain document) and its diagnostics out.
//!
//! This room owns splitting front matter from the body (`front_matter`), the
//! YAML parsers (`yaml_fast` for the plain front matter most skills use,
//! `yaml` for the rest and for recovering common mistakes), TOML front
//! matter (`toml_front_matter`), the validation of a mapping into a manifest
//! (`manifest`), the skill file as a whole (`skill`) and documents that share
//! the skill file format (`document`). YAML and TOML answer under one node
//! and depth budget.
//!
//! It does no I/O and knows nothing of roots, precedence or caches: finding
//! and reading files is [`crate::discover`]'s job, and a parse depends only
//! on the bytes and the [`SkillOrigin`] it is given.

pub(crate) mod document;
pub(crate) mod front_matter;
pub(crate) mod manifest;
pub(crate) mod skill;
pub(crate) mod toml_front_matter;
pub(crate) mod yaml;
pub(crate) mod yaml_fast;

pub use document::{Document, DocumentError, parse_document};
pub use skill::{InstructionKind, ParseOutcome, SkillOrigin, parse_skill};
