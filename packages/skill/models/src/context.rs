//! Requests and responses of the `bcode.skill/v1` operations, and their error.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::id::SkillId;
use crate::source::SkillSource;

/// Ask for the context block of one skill.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillContextRequest {
    pub id: SkillId,
    /// Arguments given at invocation (`/skill id args...`).
    pub arguments: Vec<String>,
    /// `skills.max_context_bytes`; `None` means unlimited.
    pub max_bytes: Option<usize>,
    /// `skills.preview_max_chars`.
    pub preview_max_chars: usize,
}

/// The context block of one skill, with the accounting events and traces need.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillContextResponse {
    pub id: SkillId,
    pub source: SkillSource,
    pub location: Option<PathBuf>,
    /// The `<skill ...>` block exactly as injected.
    pub text: String,
    /// Size of `text` in bytes.
    pub bytes: usize,
    /// Whether `max_bytes` cut the body.
    pub truncated: bool,
    /// What the cut removed and where (offsets into the block as it would
    /// have been), so reports can say exactly how much was left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<bcode_text::Truncation>,
    /// A bounded preview of the body for transcripts and events.
    pub preview: String,
}

/// Ask a provider to run plugin-backed behaviour for a skill.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvokeSkillRequest {
    pub id: SkillId,
    pub arguments: Vec<String>,
}

/// What an invocation produced: text for the transcript or the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvokeSkillResponse {
    pub id: SkillId,
    pub output: String,
}

/// Why a skill operation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SkillError {
    /// No skill has this id; `suggestion` is the closest id there is.
    #[error("no skill with id `{id}`{}", suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default())]
    NotFound {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        suggestion: Option<String>,
    },
    #[error("skill `{id}` is disabled by skills.disabled.ids")]
    Disabled { id: String },
    #[error("skills are disabled (skills.enabled = false)")]
    SkillsDisabled,
    #[error("skill `{id}` could not be loaded: {cause}")]
    Load { id: String, cause: LoadCause },
    #[error("skill `{id}` does not support invoke")]
    InvokeUnsupported { id: String },
    #[error("skill provider `{provider}` failed: {reason}")]
    Provider { provider: String, reason: String },
}

/// Why a skill's body could not be loaded: a closed set, so callers (the
/// deep check, a host) decide by the cause, never by the words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum LoadCause {
    #[error("the file is {len} bytes; skills.max_skill_file_bytes is {max}")]
    TooLarge { len: u64, max: usize },
    #[error("the file is not a regular file")]
    NotRegular,
    /// The operating system's error, as it worded it.
    #[error("{message}")]
    Io { message: String },
    #[error("the front matter is no longer closed")]
    UnterminatedFrontMatter,
    /// The file changed since discovery and is no longer a valid skill.
    #[error(
        "its front matter changed on disk and is no longer valid; the skill's diagnostics say why"
    )]
    NoLongerValid,
    /// The file changed since discovery and now declares another id.
    #[error(
        "its file now declares the id `{now}`; it is available under that id once skills are reloaded"
    )]
    IdChanged { now: String },
    #[error("the body is not valid UTF-8 (body line {line}); save the file as UTF-8")]
    InvalidUtf8 { line: usize },
    #[error("no provider serves `{source_label}`")]
    NoProvider { source_label: String },
    #[error("the provider returned {len} bytes; skills.max_skill_file_bytes is {max}")]
    ProviderBodyTooLarge { len: usize, max: usize },
    /// The context block's template failed to render.
    #[error("{message}")]
    Template { message: String },
}
