//! Durable skill session events. They carry provenance and bounded previews,
//! never a full skill body.

use serde::{Deserialize, Serialize};

use crate::relevance::RelevanceMatch;

/// One auditable thing that happened to a skill in a session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "PascalCase")]
#[non_exhaustive]
pub enum SkillEvent {
    /// A skill's activation keywords or `paths` matched the turn, or the
    /// relevance index ranked it confidently for the prompt, and it was
    /// offered, not activated (auto-activation is set to suggest only, the
    /// match was too weak, the per-prompt cap was reached, or activating
    /// failed).
    SkillSuggested {
        /// The suggested skill.
        id: String,
        /// The label of the skill's source (for example `repo:.bcode/skills`).
        source: String,
        /// The activation keywords that matched the prompt.
        matched_keywords: Vec<String>,
        /// The touched paths the skill's `paths` globs matched.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        matched_paths: Vec<String>,
        /// The relevance index's score, coverage and matched words, when
        /// the index is why the skill is offered; absent when its keywords
        /// or paths are (as in every event written before the index).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        relevance: Option<RelevanceMatch>,
    },
    /// A skill became active, by `/skill`, an accepted suggestion or
    /// auto-activation.
    SkillActivated {
        /// The activated skill.
        id: String,
        /// The label of the skill's source.
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
        /// For an automatic or accepted activation the relevance index is
        /// why of: its score, coverage and matched words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        relevance: Option<RelevanceMatch>,
    },
    /// An active skill was deactivated and its context is no longer sent.
    SkillDeactivated {
        /// The deactivated skill.
        id: String,
        /// Why: `explicit` when the user asked for it.
        reason: String,
    },
    /// A skill's context block was loaded for the model.
    SkillContextLoaded {
        /// The skill whose block was loaded.
        id: String,
        /// The label of the skill's source.
        source: String,
        /// Size of the injected block in UTF-8 bytes.
        bytes: usize,
        /// Whether `skills.max_context_bytes` cut the body.
        truncated: bool,
        /// A bounded preview of the body (`skills.preview_max_chars`), never
        /// the whole body.
        preview: String,
    },
    /// Activating a skill failed (unknown id, disabled, unreadable, ...).
    SkillInvocationFailed {
        /// The id as typed, bounded like a preview.
        id: String,
        /// The error message, bounded like a preview.
        error: String,
    },
    /// The registry changed between turns (live reload): `+added ~changed -removed`.
    SkillsReloaded {
        /// Ids that are new in the registry.
        added: Vec<String>,
        /// Ids present before and after whose summary changed, or whose file
        /// changed on disk (a body edit).
        changed: Vec<String>,
        /// Ids that are no longer in the registry.
        removed: Vec<String>,
    },
}

// A function, as serde's `skip_serializing_if` needs one.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(value: &bool) -> bool {
    !*value
}
