//! One channel for every problem of a turn: skill diagnostics, config and
//! template warnings, a refused repository root, catalog warnings, failed
//! sections and events the sink refused, each as a [`Notice`] with the
//! shape of a skill [`Diagnostic`]
//! (severity, stable code, message, hint) and the part of the session it
//! came from.

use std::fmt;
use std::path::{Path, PathBuf};

use bcode_fs::RefusedRoot;
use bcode_prompt_config::{ConfigWarning, ConfigWarningKind};
use bcode_skill::CatalogWarning;
use bcode_skill_models::{Diagnostic, Severity};
use bcode_templates::TemplateWarning;

/// One problem of a turn. Its `Display` is the sentence to show an
/// operator: the message, then the hint after `; ` when there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Notice {
    /// Which part of the session raised it.
    pub source: NoticeSource,
    /// How much it matters.
    pub severity: Severity,
    /// The stable code tools and tests match on: a skill diagnostic's own
    /// code (`malformed_front_matter` ...), else one named for the problem
    /// (`unknown_config_key`, `catalog_too_large`, `section_failed` ...).
    pub code: &'static str,
    /// What is wrong, in one sentence for a person (with where, for config
    /// and template warnings).
    pub message: String,
    /// How to fix it, where there is a hint.
    pub hint: Option<String>,
    /// The file concerned, where one is known.
    pub path: Option<PathBuf>,
    /// The 1-based line in that file, where known.
    pub line: Option<u32>,
}

/// The part of a session a [`Notice`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum NoticeSource {
    /// A skill file or root (new since the previous turn; all of them on
    /// the first turn).
    Skills,
    /// The config layers (an unknown key, a key the repository may not set).
    Config,
    /// The template overrides of `system_prompt.templates_dir`.
    Templates,
    /// The repository root: the nearest `.git` above the working folder
    /// was another user's and was not taken (`foreign_owner`).
    Repository,
    /// The skill catalog this turn's prompt holds.
    Catalog,
    /// A section whose stage failed; it was left out of the prompt.
    Section,
    /// The session's event sink, which could not record an event (it is
    /// still among the turn's events).
    EventLog,
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

impl Notice {
    fn new(source: NoticeSource, severity: Severity, code: &'static str, message: String) -> Self {
        Notice {
            source,
            severity,
            code,
            message,
            hint: None,
            path: None,
            line: None,
        }
    }

    fn from_diagnostic(diagnostic: &Diagnostic) -> Notice {
        Notice {
            source: NoticeSource::Skills,
            severity: diagnostic.severity,
            code: diagnostic.code.as_str(),
            message: diagnostic.message().into_owned(),
            hint: diagnostic.hint().map(std::borrow::Cow::into_owned),
            path: diagnostic.path.as_deref().map(Path::to_path_buf),
            line: diagnostic.line,
        }
    }

    fn from_config(warning: &ConfigWarning) -> Notice {
        let code = match warning.kind {
            ConfigWarningKind::UnknownKey => "unknown_config_key",
            ConfigWarningKind::Untrusted => "untrusted_config_key",
            _ => "config_warning",
        };
        // The warning's own sentence names where it was written; its
        // suggestion is the hint.
        let located = ConfigWarning {
            suggestion: None,
            ..warning.clone()
        };
        let mut notice = Notice::new(
            NoticeSource::Config,
            Severity::Warning,
            code,
            located.to_string(),
        );
        notice.hint = warning
            .suggestion
            .as_ref()
            .map(|key| format!("did you mean `{key}`?"));
        notice.line = warning.line.and_then(|line| u32::try_from(line).ok());
        notice
    }

    fn from_template(warning: &TemplateWarning) -> Notice {
        let (code, file) = match warning {
            TemplateWarning::UnknownTemplate { file, .. } => ("unknown_template", Some(file)),
            TemplateWarning::EscapingLink { file, .. } => ("escaping_template_link", Some(file)),
            TemplateWarning::NotTrusted { file, .. } => ("untrusted_template", Some(file)),
            _ => ("template_warning", None),
        };
        let mut notice = Notice::new(
            NoticeSource::Templates,
            Severity::Warning,
            code,
            warning.to_string(),
        );
        notice.path = file.map(PathBuf::from);
        notice
    }

    /// The notice of a repository root refused because another user owns
    /// it ([`crate::Turn::foreign_root`]); a command that opens no session
    /// shows the same.
    pub fn from_foreign_root(refused: &RefusedRoot) -> Notice {
        let mut notice = Notice::new(
            NoticeSource::Repository,
            Severity::Warning,
            "foreign_owner",
            format!(
                "`{}` holds a `.git` above the working folder but is not taken as the \
                 repository root: {}; the working folder is its own root and nothing above it \
                 is read",
                refused.folder.display(),
                refused.not_owned
            ),
        );
        notice.hint = Some(format!(
            "if you trust that folder, add {:?} to `trust.safe_directories` in your user config",
            refused.folder.display().to_string()
        ));
        notice.path = Some(refused.folder.clone());
        notice
    }

    fn from_catalog(warning: &CatalogWarning) -> Notice {
        let code = match warning {
            CatalogWarning::TooLarge(_) => "catalog_too_large",
            CatalogWarning::NoRoom { .. } => "catalog_no_room",
            _ => "catalog_warning",
        };
        Notice::new(
            NoticeSource::Catalog,
            Severity::Warning,
            code,
            warning.to_string(),
        )
    }

    fn from_section((id, message): (&str, &str)) -> Notice {
        Notice::new(
            NoticeSource::Section,
            Severity::Error,
            "section_failed",
            format!("section {id} was left out: {message}"),
        )
    }

    fn from_event_log(problem: &str) -> Notice {
        Notice::new(
            NoticeSource::EventLog,
            Severity::Warning,
            "event_not_recorded",
            problem.to_owned(),
        )
    }
}

/// The problems of one turn, each kind with its own structure (a turn's
/// fields, borrowed).
pub(crate) struct Problems<'a> {
    pub(crate) diagnostics: &'a [Diagnostic],
    pub(crate) config: &'a [ConfigWarning],
    pub(crate) templates: &'a [TemplateWarning],
    pub(crate) foreign_root: Option<&'a RefusedRoot>,
    pub(crate) catalog: &'a [CatalogWarning],
    /// Each failed section's id and what its stage said.
    pub(crate) failed_sections: Vec<(&'a str, &'a str)>,
    pub(crate) event_log: &'a [String],
}

/// Every problem, as notices, by source in the order of [`NoticeSource`].
pub(crate) fn collect(problems: Problems<'_>) -> Vec<Notice> {
    let mut notices: Vec<Notice> = problems
        .diagnostics
        .iter()
        .map(Notice::from_diagnostic)
        .collect();
    notices.extend(problems.config.iter().map(Notice::from_config));
    notices.extend(problems.templates.iter().map(Notice::from_template));
    notices.extend(problems.foreign_root.map(Notice::from_foreign_root));
    notices.extend(problems.catalog.iter().map(Notice::from_catalog));
    notices.extend(
        problems
            .failed_sections
            .into_iter()
            .map(Notice::from_section),
    );
    notices.extend(
        problems
            .event_log
            .iter()
            .map(|problem| Notice::from_event_log(problem)),
    );
    notices
}
