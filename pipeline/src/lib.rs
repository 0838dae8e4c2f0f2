//! The Bcode prompt pipeline: the layered configuration with provenance, the
//! stage trait, the ordered pipeline, bounds, the template environment and the
//! assembled-prompt result with per-section accounting.

pub mod config;
