//! Structured diagnostics: every problem found in a skill tree, kept as data
//! until the CLI prints it.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::id::SkillId;

/// How much a diagnostic matters. `Error` means the skill (or file) was
/// skipped; `Warning` means it loaded but something should be fixed; `Info`
/// is worth knowing and needs no action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The skill or file was skipped.
    Error,
    /// It loaded, but something should be fixed.
    Warning,
    /// Worth knowing; no action needed.
    Info,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        })
    }
}

/// Stable diagnostic codes. The `snake_case` spelling is the public name
/// (`--json`, docs, tests); never rename one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DiagnosticCode {
    /// A higher-precedence source has a skill with the same id.
    Shadowed,
    /// Two skills in one source share an id; the first by path wins.
    DuplicateId,
    /// The same file was reached twice (a symlink alias or overlapping roots).
    DuplicatePath,
    /// Front matter could not be parsed.
    MalformedFrontMatter,
    /// Front matter was invalid but its intent was clear; it was repaired in memory.
    RecoveredFrontMatter,
    /// A front-matter delimiter was opened and never closed.
    UnterminatedFrontMatter,
    /// Front matter exceeded a parser budget (aliases, nesting, size).
    FrontMatterTooComplex,
    /// Front matter has no usable `description`; the skill is skipped, since
    /// the catalog has nothing to show the model.
    MissingDescription,
    /// The `id` (or the folder name or file stem it falls back to) breaks the
    /// id grammar; the skill is skipped.
    InvalidId,
    /// The folder name or file stem is not a valid id and front matter has
    /// no `id`; the `name` field, a valid id, was used instead.
    IdFromName,
    /// A known field has the wrong type or value.
    InvalidField,
    /// A front-matter field Bcode does not know; it is kept in
    /// `SkillManifest::extra` and otherwise ignored.
    UnknownField,
    /// The instruction file is larger than `skills.max_skill_file_bytes`; the
    /// skill is skipped without reading it.
    FileTooLarge,
    /// The front matter or body is not valid UTF-8.
    InvalidUtf8,
    /// A path leads outside the root it was found under and was not followed.
    PathEscape,
    /// A symlink leads back to a folder already being walked; it was not
    /// followed again.
    SymlinkLoop,
    /// A symlink points at nothing.
    DanglingSymlink,
    /// A symlink was not followed because `follow_symlinks = false`.
    SymlinkSkipped,
    /// A FIFO, socket or device; never opened.
    SpecialFile,
    /// The file or folder could not be opened or read (permissions, I/O).
    Unreadable,
    /// Listed in `skills.disabled.ids`.
    Disabled,
    /// A markdown file that is documentation, not a skill (no front matter).
    NotASkill,
    /// A folder holds a file named like an instruction file in another case
    /// or spelling (`Skill.md`, `SKILLS.md`, `skill.MD`) and no recognised
    /// one; it is not loaded until renamed.
    MisnamedSkillFile,
    /// A walk stopped at its depth or entry budget.
    ScanLimit,
    /// A configured source root does not exist or is not a directory.
    MissingRoot,
    /// A repository's skill root in a folder above the working folder belongs
    /// (or that folder does) to another user the user does not trust
    /// (`trust.safe_directories`); its skills are not loaded.
    ForeignOwner,
    /// A skill provider failed or panicked; its skills are unavailable.
    ProviderFailed,
    /// An active skill's file disappeared; it stays active with the context loaded earlier.
    RemovedWhileActive,
    /// A `paths` glob was left out: it does not parse, is longer than
    /// 1,024 bytes, or comes after the skill's 64th; the skill's other
    /// globs still apply.
    InvalidPathsGlob,
    /// Portability lint (`skills doctor --profile`): The file starts with a byte-order mark, which other agents' validators reject.
    PortabilityByteOrderMark,
    /// Portability lint (`skills doctor --profile`): The file has no YAML front matter other agents read (none, TOML, or YAML they cannot parse).
    PortabilityFrontMatter,
    /// Portability lint (`skills doctor --profile`): The instruction file is not a `SKILL.md` in the skill's own folder.
    PortabilityFileName,
    /// Portability lint (`skills doctor --profile`): There is no `name`, or it is not a non-empty string.
    PortabilityNameMissing,
    /// Portability lint (`skills doctor --profile`): The `name` is not the folder's name (after NFKC).
    PortabilityNameMismatch,
    /// Portability lint (`skills doctor --profile`): The `name` has uppercase letters.
    PortabilityNameUppercase,
    /// Portability lint (`skills doctor --profile`): The `name` starts or ends with a hyphen or has two in a row.
    PortabilityNameHyphens,
    /// Portability lint (`skills doctor --profile`): The `name` has characters other than letters, digits and hyphens.
    PortabilityNameCharacters,
    /// Portability lint (`skills doctor --profile`): The `name` is over 64 characters.
    PortabilityNameTooLong,
    /// Portability lint (`skills doctor --profile`): The `name` is not ASCII, which
    /// common MCP clients refuse when the skill is served over MCP.
    PortabilityNameMcpClients,
    /// Portability lint (`skills doctor --profile`): There is no `description`, or it is not a non-empty string.
    PortabilityDescriptionMissing,
    /// Portability lint (`skills doctor --profile`): The `description` is over 1,024 characters.
    PortabilityDescriptionTooLong,
    /// Portability lint (`skills doctor --profile`): The `compatibility` is over 500 characters.
    PortabilityCompatibilityTooLong,
    /// Portability lint (`skills doctor --profile`): A field other agents read has the wrong type (`compatibility`, `allowed-tools`).
    PortabilityFieldType,
    /// Portability lint (`skills doctor --profile`): A top-level key outside the profile's fields.
    PortabilityUnknownField,
    /// Portability lint (`skills doctor --profile`): A `metadata` value YAML types as other than a string (`1.10`, `true`, a mapping).
    PortabilityMetadataNotString,
    /// Portability lint (`skills doctor --profile`): The `name` or `description` holds an XML tag.
    PortabilityXmlTag,
    /// Portability lint (`skills doctor --profile`): The `name` holds a reserved word (`anthropic`, `claude`).
    PortabilityReservedWord,
}

impl DiagnosticCode {
    /// The public `snake_case` name.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticCode::Shadowed => "shadowed",
            DiagnosticCode::DuplicateId => "duplicate_id",
            DiagnosticCode::DuplicatePath => "duplicate_path",
            DiagnosticCode::MalformedFrontMatter => "malformed_front_matter",
            DiagnosticCode::RecoveredFrontMatter => "recovered_front_matter",
            DiagnosticCode::UnterminatedFrontMatter => "unterminated_front_matter",
            DiagnosticCode::FrontMatterTooComplex => "front_matter_too_complex",
            DiagnosticCode::MissingDescription => "missing_description",
            DiagnosticCode::InvalidId => "invalid_id",
            DiagnosticCode::IdFromName => "id_from_name",
            DiagnosticCode::InvalidField => "invalid_field",
            DiagnosticCode::UnknownField => "unknown_field",
            DiagnosticCode::FileTooLarge => "file_too_large",
            DiagnosticCode::InvalidUtf8 => "invalid_utf8",
            DiagnosticCode::PathEscape => "path_escape",
            DiagnosticCode::SymlinkLoop => "symlink_loop",
            DiagnosticCode::DanglingSymlink => "dangling_symlink",
            DiagnosticCode::SymlinkSkipped => "symlink_skipped",
            DiagnosticCode::SpecialFile => "special_file",
            DiagnosticCode::Unreadable => "unreadable",
            DiagnosticCode::Disabled => "disabled",
            DiagnosticCode::NotASkill => "not_a_skill",
            DiagnosticCode::MisnamedSkillFile => "misnamed_skill_file",
            DiagnosticCode::ScanLimit => "scan_limit",
            DiagnosticCode::MissingRoot => "missing_root",
            DiagnosticCode::ForeignOwner => "foreign_owner",
            DiagnosticCode::ProviderFailed => "provider_failed",
            DiagnosticCode::RemovedWhileActive => "removed_while_active",
            DiagnosticCode::InvalidPathsGlob => "invalid_paths_glob",
            DiagnosticCode::PortabilityByteOrderMark => "portability_byte_order_mark",
            DiagnosticCode::PortabilityFrontMatter => "portability_front_matter",
            DiagnosticCode::PortabilityFileName => "portability_file_name",
            DiagnosticCode::PortabilityNameMissing => "portability_name_missing",
            DiagnosticCode::PortabilityNameMismatch => "portability_name_mismatch",
            DiagnosticCode::PortabilityNameUppercase => "portability_name_uppercase",
            DiagnosticCode::PortabilityNameHyphens => "portability_name_hyphens",
            DiagnosticCode::PortabilityNameCharacters => "portability_name_characters",
            DiagnosticCode::PortabilityNameTooLong => "portability_name_too_long",
            DiagnosticCode::PortabilityNameMcpClients => "portability_name_mcp_clients",
            DiagnosticCode::PortabilityDescriptionMissing => "portability_description_missing",
            DiagnosticCode::PortabilityDescriptionTooLong => "portability_description_too_long",
            DiagnosticCode::PortabilityCompatibilityTooLong => "portability_compatibility_too_long",
            DiagnosticCode::PortabilityFieldType => "portability_field_type",
            DiagnosticCode::PortabilityUnknownField => "portability_unknown_field",
            DiagnosticCode::PortabilityMetadataNotString => "portability_metadata_not_string",
            DiagnosticCode::PortabilityXmlTag => "portability_xml_tag",
            DiagnosticCode::PortabilityReservedWord => "portability_reserved_word",
        }
    }
}

impl fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem, with everything needed to find and fix it.
///
/// Kept compact, since a registry can hold one per skill (57,000 of a
/// 61,000-skill public registry's folders are named `owner--repo--skill`,
/// each a consecutive-hyphen warning): the path is shared (`Arc<Path>`,
/// one per file for all its diagnostics), a field name is usually a
/// `'static` string, and a problem that many files share keeps only its
/// parameters, its message and hint rendered when shown
/// ([`Diagnostic::message`], [`Diagnostic::hint`]). Serialized, it is the
/// same record as ever: every field, the message and hint as text.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// How much it matters: whether the skill was skipped, loaded with a
    /// problem, or is merely noted.
    pub severity: Severity,
    /// The stable code tools and tests match on.
    pub code: DiagnosticCode,
    /// The file or directory concerned, shared with the other diagnostics
    /// of the same file.
    pub path: Option<Arc<Path>>,
    /// 1-based line in the file, where known.
    pub line: Option<u32>,
    /// 1-based column (in characters), where known.
    pub column: Option<u32>,
    /// The front-matter field concerned, where one is.
    pub field: Option<Cow<'static, str>>,
    /// The skill id concerned, where known ([`Diagnostic::skill_id`]).
    skill_id: Option<Arc<str>>,
    /// What is wrong and how to fix it: written out, or the parameters of
    /// a message rendered when shown.
    text: Text,
}

/// The message and hint of a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Text {
    /// Written out when the diagnostic was made: the message and the hint
    /// in one allocation (`text`, the message its first `message_len`
    /// bytes), not one each; 24 bytes, not 32. Make it with
    /// [`Text::written`].
    Written {
        text: Box<str>,
        message_len: u32,
        has_hint: bool,
    },
    /// The id has consecutive hyphens ([`Diagnostic::consecutive_hyphens`]):
    /// only the id is kept, and not even that once the diagnostic's
    /// `skill_id` is the same id (`None`: the id is the `skill_id`).
    ConsecutiveHyphens { id: Option<Box<str>> },
}

// The written text in one box and two small words: a diagnostic is 104
// bytes, not 112.
const _: () = assert!(std::mem::size_of::<Text>() == 24);

impl Text {
    /// `message` and `hint` written out, in one allocation.
    fn written(mut message: String, hint: Option<&str>) -> Self {
        // A message of 4 GiB is not made (they name a file or a field); if
        // one were, it would keep its text and lose its hint, not panic.
        let (message_len, hint) = match u32::try_from(message.len()) {
            Ok(len) => (len, hint),
            Err(_) => (u32::MAX, None),
        };
        if let Some(hint) = hint {
            message.reserve_exact(hint.len());
            message.push_str(hint);
        }
        Text::Written {
            text: message.into_boxed_str(),
            message_len,
            has_hint: hint.is_some(),
        }
    }

    /// The written message, when it is written.
    fn written_message(&self) -> Option<&str> {
        match self {
            Text::Written {
                text, message_len, ..
            } => Some(text.get(..*message_len as usize).unwrap_or(text)),
            Text::ConsecutiveHyphens { .. } => None,
        }
    }

    /// The message; `skill_id` is the diagnostic's.
    fn message<'a>(&'a self, skill_id: Option<&'a str>) -> Cow<'a, str> {
        match self {
            Text::Written { .. } => Cow::Borrowed(self.written_message().unwrap_or_default()),
            Text::ConsecutiveHyphens { id } => {
                let id = id.as_deref().or(skill_id).unwrap_or_default();
                Cow::Owned(format!(
                    "the id `{id}` has consecutive hyphens, which Agent Skills does not allow"
                ))
            }
        }
    }

    /// The hint; `skill_id` is the diagnostic's.
    fn hint<'a>(&'a self, skill_id: Option<&'a str>) -> Option<Cow<'a, str>> {
        match self {
            Text::Written {
                text,
                message_len,
                has_hint,
            } => has_hint
                .then(|| text.get(*message_len as usize..))
                .flatten()
                .map(Cow::Borrowed),
            Text::ConsecutiveHyphens { id } => {
                let id = id.as_deref().or(skill_id).unwrap_or_default();
                let single = id
                    .split('-')
                    .filter(|part| !part.is_empty())
                    .collect::<Vec<_>>()
                    .join("-");
                Some(Cow::Owned(format!("use single hyphens, e.g. `{single}`")))
            }
        }
    }
}

impl PartialEq for Diagnostic {
    /// Equal when every field and the text as shown are: a diagnostic read
    /// back from the disk cache (written out) equals the one it was.
    fn eq(&self, other: &Self) -> bool {
        self.severity == other.severity
            && self.code == other.code
            && self.path == other.path
            && self.line == other.line
            && self.column == other.column
            && self.field == other.field
            && self.skill_id == other.skill_id
            && (self.text == other.text
                || (self.message() == other.message() && self.hint() == other.hint()))
    }
}

impl Eq for Diagnostic {}

/// The serialized record, field for field as `Diagnostic` was before its
/// text became lazy (the `--json` output and the disk cache keep their
/// bytes).
#[derive(Serialize)]
struct DiagnosticOut<'a> {
    severity: Severity,
    code: DiagnosticCode,
    path: Option<&'a Path>,
    line: Option<u32>,
    column: Option<u32>,
    field: Option<&'a str>,
    skill_id: Option<&'a str>,
    message: Cow<'a, str>,
    hint: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct DiagnosticIn {
    severity: Severity,
    code: DiagnosticCode,
    path: Option<PathBuf>,
    line: Option<u32>,
    column: Option<u32>,
    field: Option<String>,
    skill_id: Option<String>,
    message: String,
    hint: Option<String>,
}

impl Serialize for Diagnostic {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        DiagnosticOut {
            severity: self.severity,
            code: self.code,
            path: self.path.as_deref(),
            line: self.line,
            column: self.column,
            field: self.field.as_deref(),
            skill_id: self.skill_id(),
            message: self.message(),
            hint: self.hint(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Diagnostic {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let d = DiagnosticIn::deserialize(deserializer)?;
        Ok(Diagnostic {
            severity: d.severity,
            code: d.code,
            path: d.path.map(Arc::from),
            line: d.line,
            column: d.column,
            field: d.field.map(Cow::Owned),
            skill_id: d.skill_id.map(Arc::from),
            text: Text::written(d.message, d.hint.as_deref()),
        })
    }
}

impl Diagnostic {
    /// A diagnostic with only severity, code and message; the `with_*`
    /// builders add the location, field, skill and hint.
    pub fn new(severity: Severity, code: DiagnosticCode, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            code,
            path: None,
            line: None,
            column: None,
            field: None,
            skill_id: None,
            text: Text::written(message.into(), None),
        }
    }

    /// A [`Severity::Error`] diagnostic: the skill or file was skipped.
    pub fn error(code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, message)
    }

    /// A [`Severity::Warning`] diagnostic: loaded, but should be fixed.
    pub fn warning(code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, message)
    }

    /// A [`Severity::Info`] diagnostic: worth knowing, no action needed.
    pub fn info(code: DiagnosticCode, message: impl Into<String>) -> Self {
        Self::new(Severity::Info, code, message)
    }

    /// The warning for an id with consecutive hyphens, which Agent Skills
    /// does not allow but Bcode loads (`invalid_field` on `id`, with a
    /// hint naming the id with single hyphens). It keeps only the id: its
    /// message and hint are rendered when shown.
    pub fn consecutive_hyphens(id: &str) -> Self {
        Diagnostic {
            text: Text::ConsecutiveHyphens {
                id: Some(id.into()),
            },
            ..Self::new(
                Severity::Warning,
                DiagnosticCode::InvalidField,
                String::new(),
            )
        }
        .with_field("id")
    }

    /// What is wrong, in one sentence for a person.
    pub fn message(&self) -> Cow<'_, str> {
        self.text.message(self.skill_id.as_deref())
    }

    /// How to fix it, where the diagnostic says.
    pub fn hint(&self) -> Option<Cow<'_, str>> {
        self.text.hint(self.skill_id.as_deref())
    }

    /// The skill id concerned, where known.
    pub fn skill_id(&self) -> Option<&str> {
        self.skill_id.as_deref()
    }

    /// Sets (or with `None` clears) the skill id concerned. A message kept
    /// as its parameters that names the same id keeps it once.
    pub fn set_skill_id(&mut self, id: Option<&str>) {
        self.set_skill_id_shared(id.map(Arc::from));
    }

    /// Sets the skill id concerned to `id`'s text, shared with the id
    /// rather than copied (a registry's diagnostics name their skills).
    pub fn set_skill(&mut self, id: &SkillId) {
        self.set_skill_id_shared(Some(id.shared()));
    }

    fn set_skill_id_shared(&mut self, id: Option<Arc<str>>) {
        if let Text::ConsecutiveHyphens { id: own } = &mut self.text {
            // The id the message names, wherever it is kept now.
            let named = own
                .take()
                .or_else(|| self.skill_id.as_deref().map(Box::from));
            *own = if named.as_deref() == id.as_deref() {
                None
            } else {
                named
            };
        }
        self.skill_id = id;
    }

    /// Names the file or directory concerned (a copy of `path`; see
    /// [`Diagnostic::with_shared_path`] to share one).
    pub fn with_path(self, path: impl AsRef<Path>) -> Self {
        self.with_shared_path(Arc::from(path.as_ref()))
    }

    /// Names the file or directory concerned, sharing `path` with the other
    /// holders of it.
    pub fn with_shared_path(mut self, path: Arc<Path>) -> Self {
        self.path = Some(path);
        self
    }

    /// Sets the 1-based line and, where known, the 1-based column in
    /// characters.
    pub fn with_position(mut self, line: u32, column: Option<u32>) -> Self {
        self.line = Some(line);
        self.column = column;
        self
    }

    /// Names the front-matter field concerned.
    pub fn with_field(mut self, field: impl Into<Cow<'static, str>>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Names the skill id concerned.
    pub fn with_skill(mut self, id: impl Into<String>) -> Self {
        self.set_skill_id(Some(&id.into()));
        self
    }

    /// Adds how to fix the problem (or replaces the hint it had).
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.text = Text::written(
            self.text.message(self.skill_id.as_deref()).into_owned(),
            Some(&hint.into()),
        );
        self
    }

    /// The order diagnostics are reported in: by path, then position, then
    /// code, field and message (rendered only to break a tie).
    pub fn sort_key(&self) -> impl Ord + '_ {
        SortKey(self)
    }
}

/// [`Diagnostic::sort_key`]: compares the message last and only when
/// everything before it is equal, so sorting renders no message for
/// diagnostics of different files.
struct SortKey<'a>(&'a Diagnostic);

impl SortKey<'_> {
    fn head(&self) -> impl Ord + '_ {
        let d = self.0;
        (
            d.path.as_deref(),
            d.line,
            d.column,
            d.code,
            d.field.as_deref(),
        )
    }
}

impl Ord for SortKey<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.head()
            .cmp(&other.head())
            .then_with(|| match (&self.0.text, &other.0.text) {
                (a @ Text::Written { .. }, b @ Text::Written { .. }) => {
                    a.written_message().cmp(&b.written_message())
                }
                _ => self.0.message().cmp(&other.0.message()),
            })
    }
}

impl PartialOrd for SortKey<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for SortKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for SortKey<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The consecutive-hyphen warning as it was written out before it was
    /// kept as its id.
    fn written(id: &str, single: &str) -> Diagnostic {
        Diagnostic::warning(
            DiagnosticCode::InvalidField,
            format!("the id `{id}` has consecutive hyphens, which Agent Skills does not allow"),
        )
        .with_field("id")
        .with_hint(format!("use single hyphens, e.g. `{single}`"))
    }

    #[test]
    fn a_lazy_message_reads_and_serializes_as_the_written_one() {
        let lazy = Diagnostic::consecutive_hyphens("acme--tools--pdf-report")
            .with_shared_path(Arc::from(Path::new("/r/acme--tools--pdf-report/SKILL.md")))
            .with_skill("acme--tools--pdf-report");
        let written = written("acme--tools--pdf-report", "acme-tools-pdf-report")
            .with_path("/r/acme--tools--pdf-report/SKILL.md")
            .with_skill("acme--tools--pdf-report");
        assert_eq!(
            (lazy.message(), lazy.hint(), lazy.skill_id()),
            (
                Cow::Borrowed(
                    "the id `acme--tools--pdf-report` has consecutive hyphens, which Agent Skills does not allow"
                ),
                Some(Cow::Borrowed(
                    "use single hyphens, e.g. `acme-tools-pdf-report`"
                )),
                Some("acme--tools--pdf-report"),
            )
        );
        assert_eq!(lazy, written);
        let json = serde_json::to_string(&lazy).unwrap_or_default();
        assert_eq!(json, serde_json::to_string(&written).unwrap_or_default());
        assert_eq!(
            json,
            r#"{"severity":"warning","code":"invalid_field","path":"/r/acme--tools--pdf-report/SKILL.md","line":null,"column":null,"field":"id","skill_id":"acme--tools--pdf-report","message":"the id `acme--tools--pdf-report` has consecutive hyphens, which Agent Skills does not allow","hint":"use single hyphens, e.g. `acme-tools-pdf-report`"}"#
        );
        let back: Diagnostic = serde_json::from_str(&json).unwrap_or_else(|_| written.clone());
        assert_eq!((back.message(), back.hint()), (lazy.message(), lazy.hint()));
        assert_eq!(back, lazy);
    }

    #[test]
    fn a_skill_set_by_its_id_shares_the_text_and_reads_as_a_copy_would() {
        let id = SkillId::parse("a--b").unwrap_or_else(|_| unreachable!());
        let mut shared = Diagnostic::consecutive_hyphens("a--b");
        shared.set_skill(&id);
        let mut copied = Diagnostic::consecutive_hyphens("a--b");
        copied.set_skill_id(Some("a--b"));
        assert_eq!(shared, copied);
        assert_eq!(shared.text, Text::ConsecutiveHyphens { id: None });
        let kept = shared.skill_id.clone().unwrap_or_else(|| Arc::from(""));
        assert!(Arc::ptr_eq(&kept, &id.shared()), "one allocation, not two");
    }

    #[test]
    fn the_id_survives_a_skill_id_set_cleared_or_changed() {
        let mut d = Diagnostic::consecutive_hyphens("a--b");
        d.set_skill_id(Some("a--b"));
        assert_eq!(d.text, Text::ConsecutiveHyphens { id: None });
        d.set_skill_id(Some("other"));
        assert_eq!(
            (d.skill_id(), d.hint()),
            (
                Some("other"),
                Some(Cow::Borrowed("use single hyphens, e.g. `a-b`"))
            )
        );
        d.set_skill_id(None);
        assert_eq!(
            (d.skill_id(), d.message()),
            (
                None,
                Cow::Borrowed(
                    "the id `a--b` has consecutive hyphens, which Agent Skills does not allow"
                )
            )
        );
        // A hint set on top writes the message out.
        let hinted = Diagnostic::consecutive_hyphens("a--b")
            .with_skill("a--b")
            .with_hint("rename it");
        assert_eq!(
            (hinted.message(), hinted.hint()),
            (
                Cow::Borrowed(
                    "the id `a--b` has consecutive hyphens, which Agent Skills does not allow"
                ),
                Some(Cow::Borrowed("rename it"))
            )
        );
    }

    #[test]
    fn sorting_compares_messages_only_on_a_tie() {
        let at = |path: &str, message: &str| {
            Diagnostic::warning(DiagnosticCode::InvalidField, message)
                .with_path(path)
                .with_field("id")
        };
        let mut found = [
            at("/b", "a"),
            Diagnostic::consecutive_hyphens("x--y").with_path("/a"),
            at("/a", "the id `x--y` z"),
            at("/a", "the id `x--y` a"),
        ];
        found.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        let order: Vec<(Option<&Path>, String)> = found
            .iter()
            .map(|d| (d.path.as_deref(), d.message().into_owned()))
            .collect();
        assert_eq!(
            order,
            [
                (Some(Path::new("/a")), "the id `x--y` a".to_owned()),
                (
                    Some(Path::new("/a")),
                    "the id `x--y` has consecutive hyphens, which Agent Skills does not allow"
                        .to_owned()
                ),
                (Some(Path::new("/a")), "the id `x--y` z".to_owned()),
                (Some(Path::new("/b")), "a".to_owned()),
            ]
        );
    }
}
