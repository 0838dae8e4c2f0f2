//! The Bcode prompt pipeline: the layered configuration with provenance, the
//! stage trait, the ordered pipeline, bounds, the template environment and the
//! assembled-prompt result with per-section accounting.

#![warn(missing_docs)]

pub mod assembled;
pub mod base;
pub mod bounds;
pub mod config;
pub mod facts;
pub mod fallback;
pub mod pipeline;
pub mod section;
pub mod section_text;
pub mod stage;
