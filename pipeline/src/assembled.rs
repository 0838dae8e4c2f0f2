//! The assembled prompt: the two texts, the cache boundary, and an account
//! of every section (where it sits, how big it is, what it came from, whether
//! it was cut) and of every section left out and why. This is what
//! `render --json` prints.

use std::ops::Range;

use serde::Serialize;

use crate::bounds::SectionTruncation;
use crate::section::{Placement, SectionClass};
use bcode_templates::TemplateUse;

/// The result of one assembly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AssembledPrompt {
    /// The cacheable system text.
    pub system: String,
    /// The request-only model context.
    pub request_context: String,
    /// Byte offset into `system` where the longest prefix made only of
    /// static and session sections ends. Nothing a turn input changes lies
    /// before it.
    pub cache_boundary: usize,
    /// The sections present in `system` and `request_context`, in output
    /// order (all of `system`, then all of `request_context`).
    pub sections: Vec<SectionReport>,
    /// Sections that were not emitted, with the reason.
    pub omitted: Vec<OmittedSection>,
}

impl AssembledPrompt {
    /// The section that owns byte `offset` of `placement`'s text, if any
    /// (separators belong to no section).
    pub fn section_at(&self, placement: Placement, offset: usize) -> Option<&SectionReport> {
        self.sections
            .iter()
            .find(|s| s.placement == placement && s.range.contains(&offset))
    }

    /// Sections omitted because their stage failed (non-fatally).
    pub fn failures(&self) -> impl Iterator<Item = &OmittedSection> {
        self.omitted
            .iter()
            .filter(|o| matches!(o.reason, OmitReason::Failed { .. }))
    }
}

/// The account of one emitted section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SectionReport {
    /// The section id: its stage's id, or `<stage id>:<suffix>` when the
    /// stage yields several (e.g. `active_skill:rust-debugging`).
    pub id: String,
    /// The stability class its stage declared, which decides whether it may
    /// sit before the cache boundary.
    pub class: SectionClass,
    /// Which of the two texts, `system` or `request_context`, holds it.
    pub placement: Placement,
    /// UTF-8 bytes of the section's text (separators excluded).
    pub bytes: usize,
    /// Unicode scalar values of the section's text.
    pub chars: usize,
    /// Byte range within its part (`system` or `request_context`).
    pub range: Range<usize>,
    /// Whether any part of the section was cut to a limit (`truncations` is
    /// not empty).
    pub truncated: bool,
    /// Every cut made while building the section, with where the full text
    /// can be found.
    pub truncations: Vec<SectionTruncation>,
    /// Files and commands the text came from.
    pub sources: Vec<String>,
    /// The template that rendered the section and whether an operator
    /// override replaced it; `None` for text not rendered from a template.
    pub template: Option<TemplateUse>,
    /// The stage's free-form remarks for `--explain`, e.g. a probe that hit
    /// its deadline.
    pub notes: Vec<String>,
}

/// A section that produced no text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct OmittedSection {
    /// The stage id (or section id when the stage named it).
    pub id: String,
    /// The stability class the stage declared.
    pub class: SectionClass,
    /// The part of the prompt the section would have gone to.
    pub placement: Placement,
    /// Why no text was emitted; serialized inline as `reason` plus its
    /// fields.
    #[serde(flatten)]
    pub reason: OmitReason,
}

/// Why a section is absent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum OmitReason {
    /// Its `[system_prompt.sections]` toggle is off.
    Disabled {
        /// The `[system_prompt.sections]` key that is set to `false`.
        toggle: String,
    },
    /// The stage ran and had nothing to say (or only whitespace).
    Empty,
    /// The stage failed without aborting assembly; `message` says why.
    Failed {
        /// The stage error's one-line message.
        message: String,
    },
}
