//! One turn: what the host asks for ([`TurnInput`]) and what it gets back
//! ([`Turn`]): the assembled prompt with its per-section report, the skill
//! events of the turn, new diagnostics and what changed since the last turn.

use bcode_prompt_config::ConfigWarning;
use bcode_prompt_pipeline::{AssembledPrompt, OmittedSection, SectionReport};
use bcode_skill::{
    ActivationReason, CatalogWarning, CommandError, RegistryDiff, SessionError, SessionReply,
    Suggestion,
};
use bcode_skill_models::{Diagnostic, SkillEvent};
use bcode_templates::TemplateWarning;

use crate::notice::{Notice, Problems};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;

/// What the host brings to a turn. `TurnInput::new(text)`: a text starting
/// with `/` is a skill command (`/skill id args`, `/skill off id`, ...), as
/// in `bcode-prompt session`; any other text is the user's prompt (matched
/// against skill keywords, and the task relevant-mode invariants focus on).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TurnInput {
    /// The user's prompt, or a `/` skill command.
    pub text: String,
    /// The clock reading of this turn; `None` asks the system clock.
    pub now: Option<DateTime<Utc>>,
    /// The zone the datetime section uses; `None`: `TZ`, else the system's.
    pub timezone: Option<Tz>,
    /// Skills to activate before the turn. Unlike a slash command, an
    /// unknown id here is an error of the turn.
    pub activate: Vec<Activation>,
    /// Repository paths (with `/`) the task touched so far, for the
    /// relevant-mode selector.
    pub touched_paths: Vec<String>,
    /// This turn is the last of its process: after the relevant-mode
    /// selection, run the re-evaluation that committing the final answer
    /// would start and wait for it (up to its deadline), so the focus saved
    /// to the session sidecar is the settled one. One-shot renders use it.
    pub settle: bool,
}

impl TurnInput {
    /// A turn with the user's `text` (a prompt or a `/` command).
    pub fn new(text: impl Into<String>) -> TurnInput {
        TurnInput {
            text: text.into(),
            ..TurnInput::default()
        }
    }

    /// Pins the clock reading (golden files, replays).
    pub fn now(mut self, now: DateTime<Utc>) -> TurnInput {
        self.now = Some(now);
        self
    }

    /// Pins the timezone of the datetime section.
    pub fn timezone(mut self, zone: Tz) -> TurnInput {
        self.timezone = Some(zone);
        self
    }

    /// Activates skill `id` (without arguments) before the turn.
    pub fn activate(self, id: impl Into<String>) -> TurnInput {
        self.activate_because(id, Vec::new(), ActivationReason::Explicit)
    }

    /// Activates skill `id` with `arguments` before the turn.
    pub fn activate_with(self, id: impl Into<String>, arguments: Vec<String>) -> TurnInput {
        self.activate_because(id, arguments, ActivationReason::Explicit)
    }

    /// Activates skill `id` with the arguments as the user typed them
    /// (`raw`, the text after `/skill <id>`): the body's `$ARGUMENTS` is
    /// `raw`, and `$0`, `$1` ... its words split as a shell splits them
    /// (an unclosed quote splits on whitespace alone).
    pub fn activate_typed(mut self, id: impl Into<String>, raw: impl Into<String>) -> TurnInput {
        let raw = raw.into().trim().to_owned();
        self.activate.push(Activation {
            id: id.into(),
            arguments: bcode_skill::split_arguments(&raw).words,
            raw_arguments: (!raw.is_empty()).then_some(raw),
            reason: ActivationReason::Explicit,
        });
        self
    }

    /// Activates skill `id` with `arguments` for `reason` (for example a
    /// suggestion the user accepted: `ActivationReason::Accepted`), which the
    /// activation event records.
    pub fn activate_because(
        mut self,
        id: impl Into<String>,
        arguments: Vec<String>,
        reason: ActivationReason,
    ) -> TurnInput {
        self.activate.push(Activation {
            id: id.into(),
            arguments,
            raw_arguments: None,
            reason,
        });
        self
    }

    /// Marks the turn as the last of its process (see [`TurnInput::settle`]).
    pub fn settle(mut self) -> TurnInput {
        self.settle = true;
        self
    }

    /// Paths the task touched, for the relevant-mode selector.
    pub fn touched_paths(mut self, paths: Vec<String>) -> TurnInput {
        self.touched_paths = paths;
        self
    }
}

/// A skill to activate before a turn.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Activation {
    /// The skill id.
    pub id: String,
    /// The invocation arguments, shown in its block.
    pub arguments: Vec<String>,
    /// The arguments as typed, which `$ARGUMENTS` stands for; `None` means
    /// the words joined by spaces.
    pub raw_arguments: Option<String>,
    /// Why it is activated (recorded in its event).
    pub reason: ActivationReason,
}

/// The outcome of a slash command.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CommandReply {
    /// The command was carried out.
    Done(SessionReply),
    /// The command could not be carried out (unknown or disabled skill,
    /// a skill that is not active ...); an event records it.
    Failed(SessionError),
    /// The text was not a valid command (with a near-miss hint).
    Invalid(CommandError),
}

/// What changed between the previous turn and this one (all `false` and
/// empty on the first turn, and whenever nothing moved).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TurnChanges {
    /// Skills added, changed or removed on disk.
    pub skills: RegistryDiff,
    /// A config file changed and the config was loaded again.
    pub config: bool,
    /// A template override in `system_prompt.templates_dir` was edited,
    /// added or removed (with the config as it was): the turn renders with
    /// the new templates.
    pub templates: bool,
    /// `BCODE.md` or `AGENTS.md` changed.
    pub instructions: bool,
    /// An invariant file changed (or one was added or removed).
    pub invariants: bool,
}

impl TurnChanges {
    /// Whether anything changed.
    pub fn any(&self) -> bool {
        !self.skills.is_empty()
            || self.config
            || self.templates
            || self.instructions
            || self.invariants
    }
}

/// One assembled turn. Within a turn nothing moves: every model or tool
/// request of the turn reuses these texts.
#[derive(Debug)]
#[non_exhaustive]
pub struct Turn {
    /// The assembled prompt and its per-section report.
    pub prompt: AssembledPrompt,
    /// Skill events of this turn, in order (also sent to the session's
    /// sink, if it has one).
    pub events: Vec<SkillEvent>,
    /// The reply to a slash command, when the text was one (an unknown
    /// skill is a failed reply here, with a near-miss hint, not a turn
    /// error).
    pub command: Option<CommandReply>,
    /// Skills suggested for the prompt (its keywords, the paths touched, or
    /// the relevance index), not activated.
    pub suggestions: Vec<Suggestion>,
    /// Skill diagnostics new since the previous turn (all of them on the
    /// first turn).
    pub diagnostics: Vec<Diagnostic>,
    /// Config warnings (unknown keys ...), on the first turn, after the
    /// config changed, and after an edit that changed only the warnings.
    pub config_warnings: Vec<ConfigWarning>,
    /// Template overrides that name no template, or were refused, on the
    /// first turn, after the config changed, and after an override edit
    /// that changed them.
    pub template_warnings: Vec<TemplateWarning>,
    /// On the first turn: the folder holding the nearest `.git` above the
    /// working folder, not taken as the repository root because another
    /// user owns it (or its `.git`) and `trust.safe_directories` does not
    /// list it; the working folder was its own root, and nothing above it
    /// was read.
    pub foreign_root: Option<bcode_fs::RefusedRoot>,
    /// Warnings about the skill catalog this turn's prompt holds, on every
    /// turn they apply to: estimated to take more than
    /// `skills.prompt.warn_percent` of `skills.prompt.context_window_tokens`
    /// (the warning names `skills.prompt.max_bytes` and
    /// `max_description_chars`), or a `max_bytes` that leaves room for no
    /// skill. Each `Display`s as the sentence to print; the catalog
    /// section's report carries them as notes too.
    pub catalog_warnings: Vec<CatalogWarning>,
    /// What changed since the previous turn.
    pub changes: TurnChanges,
    /// Events the session's sink refused (they are still in `events`).
    pub event_log_problems: Vec<String>,
    /// Sections whose stage failed this turn and were left out (a host
    /// section that failed or panicked, a probe that could not answer),
    /// with why; the same sections are in the report's omitted list.
    pub section_failures: Vec<SectionFailure>,
}

/// A section left out of a turn because its stage failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SectionFailure {
    /// The section id.
    pub id: String,
    /// What the stage said.
    pub message: String,
}

impl Turn {
    /// The cacheable system text.
    pub fn system(&self) -> &str {
        &self.prompt.system
    }

    /// The byte offset in [`Turn::system`] up to which the text is stable
    /// for the session (a provider's prompt cache can end there).
    pub fn cache_boundary(&self) -> usize {
        self.prompt.cache_boundary
    }

    /// The request-only context (datetime, environment, git, active skills).
    pub fn request_context(&self) -> &str {
        &self.prompt.request_context
    }

    /// Every emitted section: id, class, placement, bytes, sources, cuts.
    pub fn sections(&self) -> &[SectionReport] {
        &self.prompt.sections
    }

    /// Sections left out, and why.
    pub fn omitted(&self) -> &[OmittedSection] {
        &self.prompt.omitted
    }

    /// Every problem of the turn, in one type: the skill diagnostics, the
    /// config and template warnings, the refused repository root, the
    /// catalog warnings, the failed sections and the events the sink
    /// refused, in that order (the fields above hold each
    /// kind with its own structure).
    pub fn notices(&self) -> Vec<Notice> {
        crate::notice::collect(Problems {
            diagnostics: &self.diagnostics,
            config: &self.config_warnings,
            templates: &self.template_warnings,
            foreign_root: self.foreign_root.as_ref(),
            catalog: &self.catalog_warnings,
            failed_sections: self
                .section_failures
                .iter()
                .map(|failure| (failure.id.as_str(), failure.message.as_str()))
                .collect(),
            event_log: &self.event_log_problems,
        })
    }
}
