//! Requests and responses of the `bcode.skill/v1` operations, and their error.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::id::SkillId;
use crate::source::SkillSource;

/// Ask for the context block of one skill.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillContextRequest {
    /// The skill whose context block is wanted.
    pub id: SkillId,
    /// Arguments given at invocation (`/skill id args...`), one word each:
    /// `$0`, `$ARGUMENTS[0]` and the front matter's `arguments:` names
    /// stand for these.
    pub arguments: Vec<String>,
    /// The arguments as the user typed them, which `$ARGUMENTS` stands for
    /// (`/skill id a "b c"` gives `a "b c"`); `None` when only the words are
    /// known (a shell already split them), and then `$ARGUMENTS` is the
    /// words joined by single spaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
    /// `skills.substitute_arguments`: whether the body's placeholders
    /// (`$ARGUMENTS`, `$0`, `${SKILL_DIR}` ...) are replaced; when false the
    /// body is injected exactly as written.
    #[serde(default = "substitute_by_default")]
    pub substitute_arguments: bool,
    /// `skills.max_context_bytes`; `None` means unlimited.
    pub max_bytes: Option<usize>,
    /// `skills.preview_max_chars`.
    pub preview_max_chars: usize,
}

/// A request written before `substitute_arguments` existed substitutes, as
/// the config's default does.
fn substitute_by_default() -> bool {
    true
}

/// The context block of one skill, with the accounting events and traces need.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillContextResponse {
    /// The skill the block belongs to (the winner for its id).
    pub id: SkillId,
    /// The source the skill was loaded from, named in the block's provenance.
    pub source: SkillSource,
    /// Absolute path of the instruction file, or `None` for a skill a
    /// provider serves from memory.
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
    /// The skill to invoke.
    pub id: SkillId,
    /// Arguments given at invocation (`/skill id args...`), as typed.
    pub arguments: Vec<String>,
}

/// What an invocation produced: text for the transcript or the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvokeSkillResponse {
    /// The skill that was invoked.
    pub id: SkillId,
    /// The text the provider produced, unbounded; the caller decides where it
    /// goes and how much of it is kept.
    pub output: String,
}

/// Why a skill operation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SkillError {
    /// No skill has this id; `suggestion` is the closest id there is.
    #[error("no skill with id `{id}`{}", suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default())]
    NotFound {
        /// The id as asked for (not necessarily a valid id).
        id: String,
        /// The closest known id, when one is close enough to offer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        suggestion: Option<String>,
    },
    /// The skill exists but `skills.disabled.ids` lists it.
    #[error("skill `{id}` is disabled by skills.disabled.ids")]
    Disabled {
        /// The disabled skill's id.
        id: String,
    },
    /// The whole subsystem is off (`skills.enabled = false`).
    #[error("skills are disabled (skills.enabled = false)")]
    SkillsDisabled,
    /// The user asked for a skill its author kept for the model
    /// (`user-invocable: false`).
    #[error(
        "skill `{id}` is for the model only (user-invocable: false): the model may use it from the catalog, but it cannot be activated with /skill"
    )]
    NotUserInvocable {
        /// The skill's id.
        id: String,
    },
    /// The skill is known but its body could not be read or no longer parses.
    #[error("skill `{id}` could not be loaded: {cause}")]
    Load {
        /// The id of the skill that failed to load.
        id: String,
        /// Why loading failed, as a closed set callers can match on.
        cause: LoadCause,
    },
    /// The skill's provider has no `invoke` (the default for every provider
    /// and for folder skills).
    #[error("skill `{id}` does not support invoke")]
    InvokeUnsupported {
        /// The id of the skill that was invoked.
        id: String,
    },
    /// A provider returned an error or panicked.
    #[error("skill provider `{provider}` failed: {reason}")]
    Provider {
        /// The id of the failing provider.
        provider: String,
        /// What went wrong, in the provider's words or the panic message.
        reason: String,
    },
}

/// Why a skill's body could not be loaded: a closed set, so callers (the
/// deep check, a host) decide by the cause, never by the words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum LoadCause {
    /// The instruction file grew past `skills.max_skill_file_bytes` since
    /// discovery.
    #[error("the file is {len} bytes; skills.max_skill_file_bytes is {max}")]
    TooLarge {
        /// Size of the file in bytes, as seen when reading it.
        len: u64,
        /// `skills.max_skill_file_bytes`.
        max: usize,
    },
    /// The path now names a FIFO, socket, device or directory.
    #[error("the file is not a regular file")]
    NotRegular,
    /// The operating system's error, as it worded it.
    #[error("{message}")]
    Io {
        /// The error text, kept as a string so the cause stays serializable.
        message: String,
    },
    /// The instruction file now resolves where its root's files may not be
    /// (outside the repository for a repository's root; under `/proc`,
    /// `/sys` or `/dev` for any): a link swapped in since discovery.
    #[error("{message}")]
    PathEscape {
        /// Which path leads where, and the folder it had to stay in.
        message: String,
    },
    /// The file was edited since discovery and its front matter is now opened
    /// but never closed.
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
    IdChanged {
        /// The id the file declares now.
        now: String,
    },
    /// The skill body (after the front matter) is not UTF-8.
    #[error("the body is not valid UTF-8 (body line {line}); save the file as UTF-8")]
    InvalidUtf8 {
        /// 1-based line within the body where the first invalid byte is.
        line: usize,
    },
    /// The skill's source names a provider that is not registered.
    #[error("no provider serves `{source_label}`")]
    NoProvider {
        /// The label of the skill's source (`bundled:<provider name>`).
        source_label: String,
    },
    /// A provider's body is larger than a skill file may be.
    #[error("the provider returned {len} bytes; skills.max_skill_file_bytes is {max}")]
    ProviderBodyTooLarge {
        /// Size of the returned body in bytes.
        len: usize,
        /// `skills.max_skill_file_bytes`.
        max: usize,
    },
    /// The context block's template failed to render.
    #[error("{message}")]
    Template {
        /// The template engine's error, naming the template.
        message: String,
    },
}
