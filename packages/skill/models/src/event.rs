//! Durable skill session events. They carry provenance and bounded previews,
//! never a full skill body.

use serde::{Deserialize, Serialize};

/// One auditable thing that happened to a skill in a session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "PascalCase")]
#[non_exhaustive]
pub enum SkillEvent {
    SkillSuggested {
        id: String,
        source: String,
        /// The activation keywords that matched the prompt.
        matched_keywords: Vec<String>,
    },
    SkillActivated {
        id: String,
        source: String,
        arguments: Vec<String>,
        /// `explicit` or `auto`, with the matched keywords for `auto`.
        reason: String,
    },
    SkillDeactivated {
        id: String,
        reason: String,
    },
    SkillContextLoaded {
        id: String,
        source: String,
        bytes: usize,
        truncated: bool,
        preview: String,
    },
    SkillInvocationFailed {
        id: String,
        error: String,
    },
    /// The registry changed between turns (live reload): `+added ~changed -removed`.
    SkillsReloaded {
        added: Vec<String>,
        changed: Vec<String>,
        removed: Vec<String>,
    },
}
