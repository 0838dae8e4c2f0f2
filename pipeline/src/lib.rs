//! The Bcode prompt pipeline: the stage trait, the ordered pipeline, bounds
//! and the assembled-prompt result with per-section accounting. The
//! configuration it reads is `bcode-prompt-config`'s.

#![warn(missing_docs)]

mod assembled;
mod bounds;
mod pipeline;
mod section;
mod section_text;
mod stage;

// The modules are private: what a host or another crate uses is named here.
pub use assembled::{AssembledPrompt, OmitReason, OmittedSection, SectionReport};
pub use bounds::{BoundedText, SectionTruncation, bound_text, line_ends};
pub use pipeline::{AssembleError, Pipeline, PipelineError, StageInfo};
pub use section::{Placement, Position, SectionClass, SectionKind, StageSpec};
pub use section_text::{SectionText, SharedText};
pub use stage::{Section, Stage, StageContext, StageError};
