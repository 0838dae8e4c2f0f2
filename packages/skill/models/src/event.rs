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
        /// The invocation arguments, bounded like every preview (a total of
        /// `skills.preview_max_chars` characters): a `/skill` with megabytes
        /// of arguments is still logged. When they were cut, the last kept
        /// argument ends with the preview marker and later ones are left out.
        arguments: Vec<String>,
        /// Whether `arguments` was cut. Absent (false) when it was not.
        #[serde(default, skip_serializing_if = "is_false")]
        arguments_truncated: bool,
        /// The total UTF-8 bytes of the arguments as given, present only
        /// when they were cut, so the log says how much was left out.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments_bytes: Option<usize>,
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

// A function, as serde's `skip_serializing_if` needs one.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(value: &bool) -> bool {
    !*value
}
