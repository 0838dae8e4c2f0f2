//! Structured diagnostics: every problem found in a skill tree, kept as data
//! until the CLI prints it.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// How much it matters: whether the skill was skipped, loaded with a
    /// problem, or is merely noted.
    pub severity: Severity,
    /// The stable code tools and tests match on.
    pub code: DiagnosticCode,
    /// The file or directory concerned.
    pub path: Option<PathBuf>,
    /// 1-based line in the file, where known.
    pub line: Option<u32>,
    /// 1-based column (in characters), where known.
    pub column: Option<u32>,
    /// The front-matter field concerned, where one is.
    pub field: Option<String>,
    /// The skill id concerned, where known.
    pub skill_id: Option<String>,
    /// What is wrong, in one sentence for a person.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
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
            message: message.into(),
            hint: None,
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

    /// Names the file or directory concerned.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
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
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Names the skill id concerned.
    pub fn with_skill(mut self, id: impl Into<String>) -> Self {
        self.skill_id = Some(id.into());
        self
    }

    /// Adds how to fix the problem.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The order diagnostics are reported in: by path, then position, then code.
    pub fn sort_key(&self) -> impl Ord + '_ {
        (
            self.path.as_deref(),
            self.line,
            self.column,
            self.code,
            self.field.as_deref(),
            self.message.as_str(),
        )
    }
}
