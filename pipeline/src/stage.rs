//! The stage trait: one producer of prompt sections, with everything the
//! pipeline needs to know to place, order, bound and report what it yields.
//!
//! A stage never reads files, runs commands or looks at the clock (STYLE 1):
//! probes gather those facts at the edge and put them into [`Inputs`]; the
//! stage only turns them into text through templates.
//!
//! Error policy. A stage returns [`StageError`]; [`StageError::is_fatal`]
//! decides what happens:
//! - fatal errors abort assembly with an [`crate::pipeline::AssembleError`]
//!   naming the section: a broken template override, an invalid config (for
//!   example `mode = "replace"` with no text). An operator who broke their
//!   setup must see it, not get a prompt quietly missing a part;
//! - `Degraded` and `MissingInput` omit that section only: the prompt is
//!   still assembled and the failure is listed in
//!   [`crate::assembled::AssembledPrompt::omitted`] with its message, so
//!   `render --explain` shows it. A git probe that timed out must not stop the
//!   agent from answering.

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;

use bcode_text::Limit;
use serde::Serialize;

use crate::bounds::{self, BoundedText};
use crate::config::BcodeConfig;
use crate::templates::{TemplateError, TemplateUse, Templates};

/// How often a section's text can change, which decides whether it may sit
/// inside the cacheable prefix of the system text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SectionClass {
    /// The same for every request made with this config (base, user authority).
    Static,
    /// Fixed for a session (repository instructions, invariants, catalog).
    Session,
    /// Changes per request (datetime, git status, active skill blocks).
    Turn,
}

impl SectionClass {
    /// Whether the section may be part of the cacheable prefix.
    pub fn is_stable(self) -> bool {
        matches!(self, SectionClass::Static | SectionClass::Session)
    }
}

/// Which part of the assembled prompt a section goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Placement {
    /// The cacheable system text.
    System,
    /// The request-only model context (the spec's wording for datetime,
    /// environment, git revision and similar facts).
    RequestContext,
}

/// A cut made by the bounds helper, with where the full text can be found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SectionTruncation {
    /// Offsets in this truncation refer to the text that was bounded (the
    /// stage's input), not to the section or the prompt.
    #[serde(flatten)]
    pub truncation: bcode_text::Truncation,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_text_at: Option<String>,
}

/// One section a stage yields. Build it with [`Section::new`] and the
/// `with_*` methods; the pipeline adds class, placement and offsets.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Section {
    /// The stage's id, or `<stage id>:<suffix>` when a stage yields several.
    pub id: String,
    pub text: String,
    /// Files and commands the text came from.
    pub sources: Vec<String>,
    /// The template that produced `text`, if any.
    pub template: Option<TemplateUse>,
    pub truncations: Vec<SectionTruncation>,
    /// Free-form remarks for `--explain`, e.g. a probe's deadline being hit.
    pub notes: Vec<String>,
}

impl Section {
    pub fn new(id: &str, text: String) -> Section {
        Section {
            id: id.to_owned(),
            text,
            sources: Vec::new(),
            template: None,
            truncations: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn with_source(mut self, source: &str) -> Section {
        self.sources.push(source.to_owned());
        self
    }

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
    Config { key: String, message: String },
    /// A gathered input the stage needs is absent (its probe was not run or
    /// failed). The section is omitted and reported.
    #[error("missing input {type_name}")]
    MissingInput { type_name: &'static str },
    /// The stage could not produce useful text this time (a probe's data was
    /// unusable). The section is omitted and reported.
    #[error("{message}")]
    Degraded { message: String },
}

impl StageError {
    /// Whether this error aborts the whole assembly (see the module docs).
    pub fn is_fatal(&self) -> bool {
        match self {
            StageError::Template(_) | StageError::Config { .. } => true,
            StageError::MissingInput { .. } | StageError::Degraded { .. } => false,
        }
    }
}

/// A typed bag of already-gathered inputs (the clock reading, environment
/// facts, git status, discovered skills ...), keyed by type so that the
/// pipeline crate does not need to know the types the sections crate defines.
///
/// This is the one deliberate generic API across a crate boundary (STYLE 8):
/// the alternative, a struct naming every probe's output, would make this
/// crate depend on the sections crate it is meant to sit beneath.
#[derive(Default)]
pub struct Inputs {
    values: BTreeMap<TypeId, (&'static str, Box<dyn Any + Send + Sync>)>,
}

impl fmt::Debug for Inputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&str> = self.values.values().map(|(name, _)| *name).collect();
        names.sort_unstable();
        f.debug_struct("Inputs").field("types", &names).finish()
    }
}

impl Inputs {
    pub fn new() -> Inputs {
        Inputs::default()
    }

    /// Stores `value`, replacing any earlier value of the same type.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        self.values.insert(
            TypeId::of::<T>(),
            (std::any::type_name::<T>(), Box::new(value)),
        );
    }

    /// The value of type `T`, if one was gathered.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|(_, value)| value.downcast_ref::<T>())
    }
}

/// Everything a stage may look at: the resolved config, the templates and
/// the gathered inputs. Cheap to build per request.
#[derive(Clone, Copy, Debug)]
pub struct StageContext<'a> {
    pub config: &'a BcodeConfig,
    pub templates: &'a Templates,
    pub inputs: &'a Inputs,
}

impl<'a> StageContext<'a> {
    pub fn new(config: &'a BcodeConfig, templates: &'a Templates, inputs: &'a Inputs) -> Self {
        StageContext {
            config,
            templates,
            inputs,
        }
    }

    /// The gathered input of type `T`, or the non-fatal error that omits the
    /// section and says which input was missing.
    pub fn require<T: Any>(&self) -> Result<&'a T, StageError> {
        self.inputs.get::<T>().ok_or(StageError::MissingInput {
            type_name: std::any::type_name::<T>(),
        })
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

/// A producer of zero, one or several prompt sections.
///
/// The pipeline calls [`Stage::render`] only when the stage's toggle is on
/// (stages without a toggle always run); a stage that has nothing to say
/// returns an empty `Vec` or empty text, and the section is reported as
/// omitted. Every section id must be the stage id or start with
/// `<stage id>:`; all of a stage's sections share its class and placement.
///
/// `Send + Sync` so that one [`crate::pipeline::Pipeline`] can be built once
/// and shared by every request of a multi-threaded host; stages hold no
/// per-request state (that comes through [`Inputs`]).
pub trait Stage: Send + Sync {
    /// The section id: the `[system_prompt.sections]` toggle name, `base`, or
    /// `active_skill`. Must appear in [`crate::order::SECTION_ORDER`].
    fn id(&self) -> &'static str;

    /// The `[system_prompt.sections]` toggle that enables this stage, if any.
    fn toggle(&self) -> Option<&'static str> {
        Some(self.id())
    }

    fn class(&self) -> SectionClass;

    fn placement(&self) -> Placement;

    /// The main template this stage renders (for `--explain`).
    fn template(&self) -> Option<&'static str>;

    /// The bound this stage applies to its variable text under `config`;
    /// `None` means untruncated (for `--explain`).
    fn limit(&self, config: &BcodeConfig) -> Option<Limit> {
        let _ = config;
        None
    }

    /// Produces this stage's sections from the gathered inputs.
    fn render(&self, cx: &StageContext<'_>) -> Result<Vec<Section>, StageError>;
}
