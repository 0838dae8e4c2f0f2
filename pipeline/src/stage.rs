//! The stage trait: one producer of prompt sections, with everything the
//! pipeline needs to know to place, order, bound and report what it yields.
//!
//! A stage never reads files, runs commands or looks at the clock (STYLE 1):
//! probes gather those facts at the edge into one typed struct `I` (the
//! sections crate's `Gathered`); the stage is a pure function of it, the
//! config and the templates, so an input a stage needs but nobody gathers is
//! a compile error, not a runtime one.
//!
//! Error policy. A stage returns [`StageError`]; [`StageError::is_fatal`]
//! decides what happens:
//! - fatal errors abort assembly with an [`crate::AssembleError`]
//!   naming the section: a broken template override, an invalid config (for
//!   example `mode = "replace"` with no text). An operator who broke their
//!   setup must see it, not get a prompt quietly missing a part;
//! - `Degraded` omits that section only: the prompt is
//!   still assembled and the failure is listed in
//!   [`crate::AssembledPrompt::omitted`] with its message, so
//!   `render --explain` shows it. A git probe that timed out must not stop the
//!   agent from answering.

use bcode_text::Limit;

use crate::bounds::{self, BoundedText, SectionTruncation};
use crate::section::StageSpec;
use crate::section_text::{SectionText, SharedText};
use bcode_prompt_config::BcodeConfig;
use bcode_templates::{TemplateError, TemplateUse, Templates};

/// One section a stage yields. Build it with [`Section::new`] and the
/// `with_*` methods; the pipeline adds class, placement and offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Section {
    /// The stage's id, or `<stage id>:<suffix>` when a stage yields several.
    pub id: String,
    /// The section's model-visible text; trailing whitespace is trimmed at
    /// assembly, and empty text omits the section. Read it with
    /// [`Section::text`]: it is set only when the section is made, so a
    /// count given to [`Section::with_char_count`] cannot go stale.
    pub(crate) text: SectionText,
    /// Files and commands the text came from.
    pub sources: Vec<String>,
    /// The template that produced `text`, if any.
    pub template: Option<TemplateUse>,
    /// Every cut made while building `text`, recorded with
    /// [`Section::with_bounded`].
    pub truncations: Vec<SectionTruncation>,
    /// Free-form remarks for `--explain`, e.g. a probe's deadline being hit.
    pub notes: Vec<String>,
    /// `(bytes, chars)` of `text` when the stage already knew its length in
    /// characters ([`Section::with_char_count`]); trusted only while the
    /// text still has that many bytes (only the pipeline changes the text
    /// after it is made, and a cut or trim only shortens it).
    known_chars: Option<(usize, usize)>,
}

impl Section {
    /// A section with `id` and `text` and nothing yet recorded about where
    /// it came from.
    pub fn new(id: &str, text: String) -> Section {
        Section::with_text(id, SectionText::from(text))
    }

    /// A section showing the whole text of `owner`, a value kept between
    /// turns (a session's skill catalog), without a copy of its own.
    pub fn shared(id: &str, owner: SharedText) -> Section {
        Section::with_text(id, SectionText::shared(owner))
    }

    fn with_text(id: &str, text: SectionText) -> Section {
        Section {
            id: id.to_owned(),
            text,
            sources: Vec::new(),
            template: None,
            truncations: Vec::new(),
            notes: Vec::new(),
            known_chars: None,
        }
    }

    /// The section's model-visible text.
    pub fn text(&self) -> &SectionText {
        &self.text
    }

    /// Says that `text` is `chars` characters long, so assembly does not
    /// count them again: for a text of megabytes counted once and shown
    /// every turn (the skill catalog of a session). Checked in debug builds.
    pub fn with_char_count(mut self, chars: usize) -> Section {
        debug_assert_eq!(self.text.chars().count(), chars, "{}", self.id);
        self.known_chars = Some((self.text.len(), chars));
        self
    }

    /// The characters of `text`, this section's text as assembled: the
    /// known count while it has the bytes it had when counted, else counted.
    pub(crate) fn char_count_of(&self, text: &str) -> usize {
        match self.known_chars {
            Some((bytes, chars)) if bytes == text.len() => chars,
            _ => text.chars().count(),
        }
    }

    /// Records a file or command the text came from (shown by `--explain`).
    pub fn with_source(mut self, source: &str) -> Section {
        self.sources.push(source.to_owned());
        self
    }

    /// Records several sources at once, in order.
    pub fn with_sources(mut self, sources: &[String]) -> Section {
        self.sources.extend(sources.iter().cloned());
        self
    }

    /// Records the template that rendered the text, as returned by
    /// [`StageContext::render`].
    pub fn with_template(mut self, template: TemplateUse) -> Section {
        self.template = Some(template);
        self
    }

    /// Records the cut of a [`BoundedText`] that went into this section.
    pub fn with_bounded(mut self, bounded: &BoundedText) -> Section {
        if let Some(truncation) = &bounded.truncation {
            self.truncations.push(truncation.clone());
        }
        self
    }

    /// Adds a remark for `--explain`, e.g. that a probe hit its deadline.
    pub fn with_note(mut self, note: &str) -> Section {
        self.notes.push(note.to_owned());
        self
    }
}

/// Why a stage could not produce its sections.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StageError {
    /// A template failed. Fatal: an operator's override is broken or a
    /// built-in template and its stage disagree.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// The configuration cannot produce this section. Fatal.
    #[error("invalid configuration `{key}`: {message}")]
    Config {
        /// The dotted config key at fault, e.g. `system_prompt.text`.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// The stage could not produce useful text this time (a probe's data was
    /// unusable). The section is omitted and reported.
    #[error("{message}")]
    Degraded {
        /// Why the section is missing, shown in the omitted list.
        message: String,
    },
}

impl StageError {
    /// Whether this error aborts the whole assembly (see the module docs).
    pub fn is_fatal(&self) -> bool {
        match self {
            StageError::Template(_) | StageError::Config { .. } => true,
            StageError::Degraded { .. } => false,
        }
    }
}

/// Everything a stage may look at: the resolved config, the templates and
/// the gathered inputs of this turn. Cheap to build per request.
#[derive(Debug)]
pub struct StageContext<'a, I> {
    /// The resolved configuration of this session.
    pub config: &'a BcodeConfig,
    /// The template environment, with operator overrides applied.
    pub templates: &'a Templates,
    /// What the edge gathered for this turn (the sections crate's
    /// `Gathered`).
    pub inputs: &'a I,
}

impl<I> Clone for StageContext<'_, I> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<I> Copy for StageContext<'_, I> {}

impl<'a, I> StageContext<'a, I> {
    /// Borrows the three parts a stage may read for one assembly.
    pub fn new(config: &'a BcodeConfig, templates: &'a Templates, inputs: &'a I) -> Self {
        StageContext {
            config,
            templates,
            inputs,
        }
    }

    /// Renders `template` and returns the section text together with the
    /// [`TemplateUse`] to record on the section.
    pub fn render(
        &self,
        template: &str,
        context: minijinja::Value,
    ) -> Result<(String, TemplateUse), StageError> {
        let text = self.templates.render(template, context)?;
        Ok((text, self.templates.usage(template)))
    }

    /// Bounds `text` with the shared helper and the marker template; see
    /// [`bounds::bound_text`]. `None` leaves the text whole.
    pub fn bound(
        &self,
        text: &str,
        limit: Option<Limit>,
        full_text_at: Option<&str>,
    ) -> Result<BoundedText, StageError> {
        self.bound_at(text, limit, &[], full_text_at)
    }

    /// Like [`StageContext::bound`], preferring to cut at one of
    /// `preferred_cuts` (byte offsets such as the ends of entries).
    pub fn bound_at(
        &self,
        text: &str,
        limit: Option<Limit>,
        preferred_cuts: &[usize],
        full_text_at: Option<&str>,
    ) -> Result<BoundedText, StageError> {
        Ok(bounds::bound_text(
            self.templates,
            text,
            limit,
            preferred_cuts,
            full_text_at,
        )?)
    }
}

/// A producer of zero, one or several prompt sections from the gathered
/// inputs `I` of a turn.
///
/// The pipeline calls [`Stage::render`] only when the stage's toggle is on
/// (stages without a toggle always run); a stage that has nothing to say
/// returns an empty `Vec` or empty text, and the section is reported as
/// omitted. Every section id must be the stage id or start with
/// `<stage id>:`; all of a stage's sections share its class and placement.
///
/// `Send + Sync` so that one [`crate::Pipeline`] can be built once
/// and shared by every request of a multi-threaded host; stages hold no
/// per-request state (that comes through the inputs).
pub trait Stage<I>: Send + Sync {
    /// Id, toggle, class, placement, template and position; canonical
    /// stages return [`crate::SectionKind::spec`] (possibly with another class).
    fn spec(&self) -> StageSpec;

    /// The bound this stage applies to its variable text under `config`;
    /// `None` means untruncated (for `--explain`).
    fn limit(&self, config: &BcodeConfig) -> Option<Limit> {
        let _ = config;
        None
    }

    /// Produces this stage's sections from the gathered inputs.
    fn render(&self, cx: &StageContext<'_, I>) -> Result<Vec<Section>, StageError>;
}

/// A shared stage is a stage: a host keeps its stages in `Arc`s so a
/// session can rebuild its pipeline (after a config change) without asking
/// for them again.
impl<I, S: Stage<I> + ?Sized> Stage<I> for std::sync::Arc<S> {
    fn spec(&self) -> StageSpec {
        (**self).spec()
    }

    fn limit(&self, config: &BcodeConfig) -> Option<Limit> {
        (**self).limit(config)
    }

    fn render(&self, cx: &StageContext<'_, I>) -> Result<Vec<Section>, StageError> {
        (**self).render(cx)
    }
}
