//! The Bcode prompt pipeline: the stage trait, the ordered pipeline, bounds
//! and the assembled-prompt result with per-section accounting. The
//! configuration it reads is `bcode-prompt-config`'s.

#![warn(missing_docs)]

pub mod assembled;
pub mod bounds;
pub mod fallback;
pub mod pipeline;
pub mod section;
pub mod section_text;
pub mod stage;
