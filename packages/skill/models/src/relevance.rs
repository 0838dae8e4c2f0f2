//! What the relevance index said of a skill a session suggested or
//! activated: plain data for suggestions and events. The ranking itself is
//! `bcode_skill::SkillIndex`; this is only its record.

use serde::{Deserialize, Serialize};

/// A figure of a ranking (a score, a coverage) as suggestions and events
/// record it: rounded to four decimals, so one ranking writes the same
/// bytes on every machine (an `f32`'s last digits are noise), and compared
/// by value, so events stay `Eq`.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Figure(f64);

impl Figure {
    /// `value` rounded to four decimals; a value that is not finite (no
    /// ranking gives one) is recorded as 0.
    pub fn new(value: f32) -> Figure {
        let value = f64::from(value);
        if !value.is_finite() {
            return Figure(0.0);
        }
        Figure((value * 10_000.0).round() / 10_000.0)
    }

    /// The figure as recorded.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl PartialEq for Figure {
    fn eq(&self, other: &Figure) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}

impl Eq for Figure {}

/// Why the relevance index offered a skill for a prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelevanceMatch {
    /// The skill's relevance score for the prompt: comparable with other
    /// skills' scores for the same prompt, not across prompts.
    pub score: Figure,
    /// The share of the prompt's weight (the inverse document frequencies
    /// of its words) the skill matched in its name, description or
    /// keywords, from 0 to 1: what a session's confidence floor reads. A
    /// word found only in the body counts for nothing here.
    pub coverage: Figure,
    /// The prompt's words the skill has, in the prompt's order, each with
    /// the fields it was found in (`name`, `description`, `keywords`,
    /// `files`, `body`). At most the index's query terms (256), each a
    /// word of at most 40 bytes.
    pub matched: Vec<RelevanceTerm>,
}

/// One prompt word a skill matched, and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelevanceTerm {
    /// The prompt's word (the first of its words with this term).
    pub term: String,
    /// The skill's fields that have it, in field order.
    pub fields: Vec<String>,
}
