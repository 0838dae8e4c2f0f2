//! A skill session: which skills are active (with their arguments and the
//! context loaded for them), explicit activation and deactivation,
//! suggestion (by keywords, `paths` and the relevance index) and
//! conservative auto-activation, and registry changes between turns. The
//! session owns no storage: every change is returned as [`SkillEvent`]s
//! for the host to emit through its sink.
//!
//! This room owns everything that lives for a conversation: the session
//! itself, parsing the skill slash commands (`commands`), keyword suggestion
//! (`keywords`) and path triggers (`path_triggers`) over indexed summaries,
//! suggestion from the relevance index of [`crate::search`] (`relevance`),
//! the execution options of an invoked-skill turn (`turn_options`), and the
//! sinks the host emits the session's events into (`events`, whose JSON-lines
//! log is this room's only file access).
//!
//! It does not build or reload registries ([`crate::discover`]) and does not
//! format the catalog or the context block ([`crate::catalog`],
//! [`crate::context`]); it asks the registry it is given.

mod commands;
pub(crate) mod events;
pub(crate) mod keywords;
pub(crate) mod path_triggers;
pub(crate) mod relevance;
pub(crate) mod turn_options;

use std::collections::BTreeSet;
use std::sync::Arc;

use bcode_skill_models::{
    Diagnostic, DiagnosticCode, LoadCause, RelevanceMatch, SkillContextRequest,
    SkillContextResponse, SkillError, SkillEvent, SkillId,
};

use bcode_prompt_config::{AutoActivate, SkillsConfig};

pub use commands::{CommandError, SlashCommand, parse_command};
pub use events::{
    Clock, EventRecord, EventSink, EventSinkError, JsonlSink, LogProblem, LogProblemKind,
    MAX_RECORD_BYTES, MemorySink, ReadOutcome, SystemClock, context_loaded, read_events,
};
pub use keywords::{KeywordIndex, LazyKeywordIndex, Suggestion};
pub use path_triggers::MAX_GLOB_BYTES;
pub use relevance::strong_terms;
pub use turn_options::{
    InvocationOptions, SettingOrigin, SkillTurnHints, SkillTurnPolicy, TurnOptions, TurnReason,
    skill_turn_options,
};

use crate::context::preview_arguments;
use crate::discover::registry::SkillRegistry;
use crate::search::LazySkillIndex;
use bcode_templates::Templates;

/// Auto-activation by keywords needs matched keywords worth at least this
/// many words: two one-word keywords, or one keyword of two words or more.
/// One common word such as `rust` only ever suggests. (The relevance index
/// has its own rule: [`ACTIVATE_MIN_MARGIN`], [`ACTIVATE_MIN_COVERAGE`],
/// [`ACTIVATE_MAX_RIVAL_COVERAGE`].)
pub const AUTO_ACTIVATE_MIN_SCORE: usize = 2;

/// The most skills `/skills <query>` lists.
pub const SEARCH_LISTED: usize = 10;

/// At most this many skills are activated automatically per prompt.
pub const AUTO_ACTIVATE_MAX_PER_PROMPT: usize = 2;

/// The session's share of `[skills]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillSessionOptions {
    /// `skills.enabled`: when false, prompts trigger nothing and every
    /// activation fails with `SkillsDisabled`.
    pub enabled: bool,
    /// `skills.auto_activate`: whether keyword matches are ignored, only
    /// suggested, or activated.
    pub auto_activate: AutoActivate,
    /// `skills.max_context_bytes`: the cap on each context block in bytes;
    /// `None` means unlimited.
    pub max_context_bytes: Option<usize>,
    /// `skills.preview_max_chars`: the characters of body and arguments that
    /// events and replies keep.
    pub preview_max_chars: usize,
    /// How the paths in a context block are shown to the model (pinned
    /// roots); as they are by default.
    pub paths: bcode_text::PathDisplay,
    /// `skills.substitute_arguments`: whether a context block's body has
    /// its argument placeholders replaced.
    pub substitute_arguments: bool,
}

impl SkillSessionOptions {
    /// Copies the session's keys out of the `[skills]` table.
    pub fn from_config(config: &SkillsConfig) -> Self {
        SkillSessionOptions {
            enabled: config.enabled,
            auto_activate: config.auto_activate,
            max_context_bytes: config.max_context_bytes,
            preview_max_chars: config.preview_max_chars,
            paths: bcode_text::PathDisplay::new(),
            substitute_arguments: config.substitute_arguments,
        }
    }

    /// A context request for `id` under these options' bounds: the one
    /// place a request takes `max_context_bytes`, `preview_max_chars` and
    /// `substitute_arguments` (a session's activations and `skills context`
    /// alike). `raw_arguments` is the text typed after the id, when there
    /// is one; `$ARGUMENTS` is otherwise the words joined by spaces.
    pub fn context_request(
        &self,
        id: SkillId,
        arguments: Vec<String>,
        raw_arguments: Option<String>,
    ) -> SkillContextRequest {
        SkillContextRequest {
            id,
            arguments,
            raw_arguments,
            substitute_arguments: self.substitute_arguments,
            max_bytes: self.max_context_bytes,
            preview_max_chars: self.preview_max_chars,
        }
    }
}

/// Why a skill is active.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ActivationReason {
    /// The user asked for it (`/skill <id>`).
    Explicit,
    /// `skills.auto_activate = "on"` activated it because the prompt matched
    /// its keywords, the turn touched a path it names, or the relevance
    /// index ranked it a clear winner.
    Auto {
        /// The keywords that matched, as the skill wrote them.
        matched_keywords: Vec<String>,
        /// The touched paths its `paths` globs matched.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        matched_paths: Vec<String>,
        /// What the relevance index said, when it is why the skill was
        /// activated (its keywords and paths alone were not enough).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        relevance: Option<RelevanceMatch>,
    },
    /// The user accepted a suggestion (`/accept`) made because the prompt
    /// matched its keywords, the turn touched a path it names, or the
    /// relevance index vouched for it.
    Accepted {
        /// The keywords that matched, as the skill wrote them.
        matched_keywords: Vec<String>,
        /// The touched paths its `paths` globs matched.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        matched_paths: Vec<String>,
        /// What the relevance index said, when it is why the skill was
        /// suggested.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        relevance: Option<RelevanceMatch>,
    },
    /// The model asked for it (the host's skill tool); allowed for skills
    /// kept for the model (`user-invocable: false`).
    Model,
}

impl ActivationReason {
    fn describe(&self) -> String {
        match self {
            ActivationReason::Explicit => "explicit".into(),
            ActivationReason::Model => "model".into(),
            ActivationReason::Auto {
                matched_keywords,
                matched_paths,
                relevance,
            } => {
                format!(
                    "auto: matched {}",
                    describe_matches(matched_keywords, matched_paths, relevance.as_ref())
                )
            }
            ActivationReason::Accepted {
                matched_keywords,
                matched_paths,
                relevance,
            } => {
                format!(
                    "accepted suggestion: matched {}",
                    describe_matches(matched_keywords, matched_paths, relevance.as_ref())
                )
            }
        }
    }

    /// What the relevance index said, for the activation's event.
    fn relevance(&self) -> Option<&RelevanceMatch> {
        match self {
            ActivationReason::Auto { relevance, .. }
            | ActivationReason::Accepted { relevance, .. } => relevance.as_ref(),
            ActivationReason::Explicit | ActivationReason::Model => None,
        }
    }

    /// Whether the user asked for the activation (then a skill kept for the
    /// model is refused).
    fn by_user(&self) -> bool {
        matches!(
            self,
            ActivationReason::Explicit | ActivationReason::Accepted { .. }
        )
    }
}

/// What a suggestion or activation matched, for its event and reply: the
/// keywords, then the touched paths (`path src/a.rs`); for a suggestion
/// the relevance index alone made (no keyword, no path), the prompt's
/// words it found in the skill's name, description or keywords.
pub fn describe_matches(
    keywords: &[String],
    paths: &[String],
    relevance: Option<&RelevanceMatch>,
) -> String {
    let paths = paths.iter().map(|path| format!("path {path}"));
    let mut words: Vec<String> = keywords.iter().cloned().chain(paths).collect();
    if words.is_empty()
        && let Some(relevance) = relevance
    {
        words = strong_terms(relevance);
    }
    words.join(", ")
}

/// An active skill and the context that was loaded for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActiveSkill {
    /// The active skill.
    pub id: SkillId,
    /// The invocation arguments, whole (events keep only a preview); a
    /// reload renders the context again with them.
    pub arguments: Vec<String>,
    /// The arguments as typed (`$ARGUMENTS`), when the session saw the text
    /// they were split from; a reload substitutes them again.
    pub raw_arguments: Option<String>,
    /// Whether the user or keyword auto-activation activated it.
    pub reason: ActivationReason,
    /// The context block injected each turn while the skill is active.
    pub context: SkillContextResponse,
    /// The skill's file vanished after activation; the context above is the
    /// last one loaded.
    pub file_missing: bool,
}

/// One available skill, as `/skills` lists it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SkillListing {
    /// The skill's id.
    pub id: SkillId,
    /// The display name (the id when front matter has no `name`).
    pub name: String,
    /// The description from front matter, whole.
    pub description: String,
    /// The label of the source it was loaded from.
    pub source: String,
    /// Whether it appears in the model-visible catalog (false for
    /// `disable_model_invocation` skills, which can still be activated).
    pub model_visible: bool,
    /// Whether `/skill` may activate it (false for `user-invocable: false`
    /// skills, kept for the model).
    pub user_invocable: bool,
    /// The front matter's `argument-hint`, to show beside the id.
    pub argument_hint: Option<String>,
    /// Whether it is active in this session.
    pub active: bool,
}

/// What a command did, for the UI to show.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionReply {
    /// `/skills`: every available skill, hidden ones included, by id.
    Listing(Vec<SkillListing>),
    /// `/skill <id>`: the skill is active and its context was loaded.
    Activated {
        /// The activated skill.
        id: SkillId,
        /// The label of its source.
        source: String,
        /// Size of the loaded context block in UTF-8 bytes.
        bytes: usize,
        /// Whether `skills.max_context_bytes` cut the body.
        truncated: bool,
        /// A bounded preview of the body (`skills.preview_max_chars`).
        preview: String,
    },
    /// `/skill active`: each active skill's id, arguments and reason, in
    /// activation order.
    ActiveList(Vec<(SkillId, Vec<String>, ActivationReason)>),
    /// `/skill off <id>`: the skill is no longer active.
    Deactivated {
        /// The deactivated skill.
        id: SkillId,
    },
}

/// Why a command could not be carried out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The skill cannot be used: unknown (with the closest id), disabled,
    /// skills disabled, or its file cannot be loaded. One error type for
    /// these, shared with the registry and the façade.
    #[error(transparent)]
    Skill(#[from] SkillError),
    /// `/skill off` for a skill that is not active.
    #[error("skill `{id}` is not active{}", if active.is_empty() { String::from("; no skill is active") } else { format!("; active: {}", active.join(", ")) })]
    NotActive {
        /// The id as typed.
        id: String,
        /// The ids that are active, in activation order, for the message.
        active: Vec<String>,
    },
}

/// A command's result and the events it produced (failures produce events too).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandOutcome {
    /// What to show the user: the command's result or why it failed.
    pub reply: Result<SessionReply, SessionError>,
    /// Events to record, in order, whether the command succeeded or not.
    pub events: Vec<SkillEvent>,
}

/// What a prompt triggered under `skills.auto_activate`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromptOutcome {
    /// Suggested, not applied (ranked).
    pub suggestions: Vec<Suggestion>,
    /// Activated automatically (`on` mode), in order.
    pub activated: Vec<SkillId>,
    /// Events to record: suggestions, activations and their failures.
    pub events: Vec<SkillEvent>,
}

/// How the registry changed between two turns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegistryDiff {
    /// Ids only the new registry has, sorted.
    pub added: Vec<String>,
    /// Ids in both whose summary differs or whose file changed on disk (a
    /// body edit), sorted.
    pub changed: Vec<String>,
    /// Ids only the old registry had, sorted.
    pub removed: Vec<String>,
}

impl RegistryDiff {
    /// Whether nothing was added, changed or removed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

impl std::fmt::Display for RegistryDiff {
    /// `+added ~changed -removed`, each a comma-separated list.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        for (sign, ids) in [
            ('+', &self.added),
            ('~', &self.changed),
            ('-', &self.removed),
        ] {
            if !ids.is_empty() {
                parts.push(format!("{sign}{}", ids.join(",")));
            }
        }
        f.write_str(&parts.join(" "))
    }
}

/// What reloading the registry did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReloadOutcome {
    /// Which ids were added, changed or removed.
    pub diff: RegistryDiff,
    /// A `removed_while_active` warning for each active skill whose file
    /// disappeared.
    pub diagnostics: Vec<Diagnostic>,
    /// `SkillsReloaded` first (when anything changed), then a
    /// `SkillContextLoaded` for each active skill whose context was reloaded.
    pub events: Vec<SkillEvent>,
}

/// The indexes a session matches prompts against, of one registry
/// snapshot: each built the first time a prompt needs it (a render without
/// a prompt never pays for them) and shared by every session on that
/// snapshot (a clone shares them).
#[derive(Clone, Debug, Default)]
pub struct SnapshotIndexes {
    /// Activation keywords and `paths` globs; cheap, from summaries.
    pub keywords: Arc<LazyKeywordIndex>,
    /// The relevance index that routes a task to skills; it reads every body.
    pub relevance: Arc<LazySkillIndex>,
}

impl SnapshotIndexes {
    /// Indexes not built yet.
    pub fn new() -> SnapshotIndexes {
        SnapshotIndexes::default()
    }

    /// The indexes of the registry rebuilt from `before` (whose indexes
    /// these are), none built yet: the keyword index is built anew when
    /// needed (it is cheap); the relevance index starts from this one when
    /// it was built, indexing again only what the rebuild changed
    /// ([`LazySkillIndex::following`]).
    pub fn following(&self, before: &SkillRegistry) -> SnapshotIndexes {
        SnapshotIndexes {
            keywords: Arc::new(LazyKeywordIndex::new()),
            relevance: Arc::new(LazySkillIndex::following(
                Arc::clone(&self.relevance),
                before.clone(),
            )),
        }
    }
}

/// The state of one session.
#[derive(Debug)]
pub struct SkillSession {
    registry: SkillRegistry,
    /// Shared: sessions on one registry snapshot share its indexes, built
    /// when a prompt first needs them.
    indexes: SnapshotIndexes,
    templates: Templates,
    options: SkillSessionOptions,
    active: Vec<ActiveSkill>,
    /// The touched paths already matched against `paths` globs: a path
    /// that every later turn repeats (hosts pass the paths touched so far)
    /// triggers its skills once.
    seen_paths: BTreeSet<String>,
}

/// At most this many touched paths are remembered as seen; past it, paths
/// are still matched, and may suggest their skills again.
pub const MAX_SEEN_PATHS: usize = 65_536;

impl SkillSession {
    /// A session with no active skill, building the indexes of `registry`
    /// for it when a prompt first needs them.
    pub fn new(
        registry: SkillRegistry,
        options: SkillSessionOptions,
        templates: Templates,
    ) -> Self {
        Self::with_indexes(registry, SnapshotIndexes::new(), options, templates)
    }

    /// [`SkillSession::new`] with the indexes of `registry` given (many
    /// sessions on one registry share them).
    pub fn with_indexes(
        registry: SkillRegistry,
        indexes: SnapshotIndexes,
        options: SkillSessionOptions,
        templates: Templates,
    ) -> Self {
        SkillSession {
            registry,
            indexes,
            templates,
            options,
            active: Vec::new(),
            seen_paths: BTreeSet::new(),
        }
    }

    /// The registry the session currently uses (replaced by a reload).
    pub fn registry(&self) -> &SkillRegistry {
        &self.registry
    }

    /// The indexes prompts are matched against: those of [`Self::registry`],
    /// each built once a prompt needed it.
    pub fn indexes(&self) -> &SnapshotIndexes {
        &self.indexes
    }

    /// Renders later context blocks and previews with `templates` (an
    /// operator edited an override). Blocks already active keep the text
    /// they were injected with.
    pub fn set_templates(&mut self, templates: Templates) {
        self.templates = templates;
    }

    /// The options the session was opened with.
    pub fn options(&self) -> &SkillSessionOptions {
        &self.options
    }

    /// Active skills in activation order: the order their blocks are injected.
    pub fn active(&self) -> &[ActiveSkill] {
        &self.active
    }

    /// Runs a parsed slash command.
    pub fn run(&mut self, command: &SlashCommand) -> CommandOutcome {
        match command {
            SlashCommand::List => CommandOutcome {
                reply: Ok(SessionReply::Listing(self.listing())),
                events: Vec::new(),
            },
            SlashCommand::Search { query } => CommandOutcome {
                reply: Ok(SessionReply::Listing(self.search_listing(query))),
                events: Vec::new(),
            },
            SlashCommand::Active => CommandOutcome {
                reply: Ok(SessionReply::ActiveList(
                    self.active
                        .iter()
                        .map(|a| (a.id.clone(), a.arguments.clone(), a.reason.clone()))
                        .collect(),
                )),
                events: Vec::new(),
            },
            SlashCommand::Activate {
                id,
                arguments,
                raw_arguments,
            } => self.activate_typed(
                id,
                arguments,
                raw_arguments.as_deref(),
                ActivationReason::Explicit,
            ),
            SlashCommand::Off { id } => self.deactivate(id),
        }
    }

    fn listing(&self) -> Vec<SkillListing> {
        self.registry.skills().map(|s| self.listed(s)).collect()
    }

    /// `/skills <query>`: the skills of the relevance index's best
    /// matches, best first, at most [`SEARCH_LISTED`] (hidden ones
    /// included, as `/skills` lists them).
    fn search_listing(&self, query: &str) -> Vec<SkillListing> {
        let index = self.indexes.relevance.get_or_build(&self.registry);
        index
            .search(query, SEARCH_LISTED)
            .into_iter()
            .filter_map(|hit| self.registry.get(hit.id.as_str()))
            .map(|s| self.listed(s))
            .collect()
    }

    fn listed(&self, s: &bcode_skill_models::SkillSummary) -> SkillListing {
        SkillListing {
            id: s.manifest.id.clone(),
            name: s.manifest.name.clone(),
            description: s.manifest.description.clone(),
            source: s.source.label.clone(),
            model_visible: s.model_visible(),
            user_invocable: s.manifest.user_invocable(),
            argument_hint: s.manifest.details().argument_hint().map(str::to_owned),
            active: self.active.iter().any(|a| a.id == s.manifest.id),
        }
    }

    /// Activates `id` (hidden skills included: explicit invocation is always
    /// allowed unless skills are disabled). Activating an active skill again
    /// reloads its context with the new arguments and keeps its position.
    pub fn activate(
        &mut self,
        id: &str,
        arguments: &[String],
        reason: ActivationReason,
    ) -> CommandOutcome {
        self.activate_typed(id, arguments, None, reason)
    }

    /// [`SkillSession::activate`] with the text the arguments were split
    /// from (`raw_arguments`), which the body's `$ARGUMENTS` stands for;
    /// without it `$ARGUMENTS` is the words joined by spaces.
    pub fn activate_typed(
        &mut self,
        id: &str,
        arguments: &[String],
        raw_arguments: Option<&str>,
        reason: ActivationReason,
    ) -> CommandOutcome {
        let mut events = Vec::new();
        let reply = self.try_activate(id, arguments, raw_arguments, reason, &mut events);
        if let Err(err) = &reply {
            // The id is whatever was typed (a megabyte, perhaps) and the
            // error quotes it: both are bounded like previews so the failure
            // is still logged.
            events.push(SkillEvent::SkillInvocationFailed {
                id: self.bounded(id),
                error: self.bounded(&err.to_string()),
            });
        }
        CommandOutcome { reply, events }
    }

    fn try_activate(
        &mut self,
        id: &str,
        arguments: &[String],
        raw_arguments: Option<&str>,
        reason: ActivationReason,
        events: &mut Vec<SkillEvent>,
    ) -> Result<SessionReply, SessionError> {
        if !self.options.enabled {
            return Err(SkillError::SkillsDisabled.into());
        }
        let skill = self.registry.lookup(id)?;
        if reason.by_user() && !skill.manifest.user_invocable() {
            return Err(SkillError::NotUserInvocable {
                id: skill.manifest.id.to_string(),
            }
            .into());
        }
        let skill_id = skill.manifest.id.clone();
        let source = skill.source.label.clone();
        let context = self.load_context(&skill_id, arguments, raw_arguments)?;
        // Arguments are the operator's text, of any size: the event keeps a
        // bounded preview of them, or the sink would refuse the record
        // (`MAX_RECORD_BYTES`) and the activation would go unlogged.
        let shown = preview_arguments(arguments, self.options.preview_max_chars, &self.templates)
            .map_err(|err| SkillError::Load {
            id: skill_id.to_string(),
            cause: LoadCause::Template {
                message: err.to_string(),
            },
        })?;
        events.push(SkillEvent::SkillActivated {
            id: skill_id.to_string(),
            source: source.clone(),
            arguments_truncated: shown.truncated,
            arguments_bytes: shown.truncated.then_some(shown.original_bytes),
            arguments: shown.arguments,
            reason: reason.describe(),
            relevance: reason.relevance().cloned(),
        });
        events.push(loaded_event(&context));
        let reply = SessionReply::Activated {
            id: skill_id.clone(),
            source,
            bytes: context.bytes,
            truncated: context.truncated,
            preview: context.preview.clone(),
        };
        let active = ActiveSkill {
            id: skill_id.clone(),
            arguments: arguments.to_vec(),
            raw_arguments: raw_arguments.map(str::to_owned),
            reason,
            context,
            file_missing: false,
        };
        match self.active.iter_mut().find(|a| a.id == skill_id) {
            Some(slot) => *slot = active,
            None => self.active.push(active),
        }
        Ok(reply)
    }

    /// `text` bounded to [`ARGUMENTS_PREVIEW_MAX_CHARS`], for event fields
    /// that quote what the operator typed (a wrong id); far above any real
    /// id or message, so only a flood is cut. Falls back to a plain cut when
    /// the marker template fails, so an event is never lost for want of a
    /// marker.
    ///
    /// [`ARGUMENTS_PREVIEW_MAX_CHARS`]: crate::ARGUMENTS_PREVIEW_MAX_CHARS
    fn bounded(&self, text: &str) -> String {
        let max = crate::context::ARGUMENTS_PREVIEW_MAX_CHARS;
        crate::context::preview(text, max, &self.templates)
            .unwrap_or_else(|_| text.chars().take(max).collect())
    }

    fn load_context(
        &self,
        id: &SkillId,
        arguments: &[String],
        raw_arguments: Option<&str>,
    ) -> Result<SkillContextResponse, SessionError> {
        let request = self.options.context_request(
            id.clone(),
            arguments.to_vec(),
            raw_arguments.map(str::to_owned),
        );
        Ok(self
            .registry
            .context_shown(&request, &self.templates, &self.options.paths)?)
    }

    /// Deactivates `id`.
    pub fn deactivate(&mut self, id: &str) -> CommandOutcome {
        let Some(position) = self.active.iter().position(|a| a.id.as_str() == id) else {
            let active = self.active.iter().map(|a| a.id.to_string()).collect();
            return CommandOutcome {
                reply: Err(SessionError::NotActive {
                    id: id.to_owned(),
                    active,
                }),
                events: Vec::new(),
            };
        };
        let removed = self.active.remove(position);
        CommandOutcome {
            reply: Ok(SessionReply::Deactivated {
                id: removed.id.clone(),
            }),
            events: vec![SkillEvent::SkillDeactivated {
                id: removed.id.to_string(),
                reason: "explicit".into(),
            }],
        }
    }

    /// Applies `skills.auto_activate` to a user prompt: `off` does nothing;
    /// `suggest` ranks matching skills; `on` activates the strongest matches
    /// (never a hidden skill, at most `AUTO_ACTIVATE_MAX_PER_PROMPT`, each
    /// scoring at least `AUTO_ACTIVATE_MIN_SCORE` or the relevance index's
    /// clear winner) and suggests the rest.
    ///
    /// A skill matches when the prompt has one of its keywords, or when the
    /// relevance index ranks it among its `SUGGEST_TOP_HITS` best for the
    /// prompt and the prompt's words found in its name, description or
    /// keywords pass the confidence floor (`SUGGEST_MIN_COVERAGE`,
    /// `SUGGEST_MIN_COVERAGE_NAMED`); so a skill with no Bcode field is
    /// suggested too. Keyword and path matches come first, as they always
    /// ranked; skills only the index vouched for follow, best first.
    pub fn on_prompt(&mut self, prompt: &str) -> PromptOutcome {
        self.on_turn(prompt, &[])
    }

    /// [`SkillSession::on_prompt`] for a turn that also touched `touched`
    /// (repository paths, `/`-separated, relative to the root): a skill
    /// whose `paths` globs match a path not seen on an earlier turn counts
    /// as matched (`PATH_MATCH_SCORE`). Absolute and climbing
    /// paths are ignored. A skill kept for the model (`user-invocable:
    /// false`) may be auto-activated but is never suggested.
    pub fn on_turn(&mut self, prompt: &str, touched: &[String]) -> PromptOutcome {
        let mut outcome = PromptOutcome::default();
        if !self.options.enabled || self.options.auto_activate == AutoActivate::Off {
            return outcome;
        }
        let fresh = self.fresh_paths(touched);
        let active: BTreeSet<SkillId> = self.active.iter().map(|a| a.id.clone()).collect();
        let (candidates, winner) = self.candidates(prompt, &fresh);
        // Hidden skills are kept out of automatic discovery of every kind.
        let candidates: Vec<Suggestion> = candidates
            .into_iter()
            .filter(|s| s.model_visible && !active.contains(&s.id))
            .collect();
        for mut candidate in candidates {
            let by_keywords = candidate.score >= AUTO_ACTIVATE_MIN_SCORE;
            let by_index =
                !by_keywords && winner.as_ref().is_some_and(|(id, _)| *id == candidate.id);
            let eligible = self.options.auto_activate == AutoActivate::On
                && (by_keywords || by_index)
                && outcome.activated.len() < AUTO_ACTIVATE_MAX_PER_PROMPT;
            if eligible {
                if by_index && candidate.relevance.is_none() {
                    // Its keywords alone were too weak: the index is why
                    // it is activated, and its record says so.
                    candidate.relevance = winner.as_ref().map(|(_, relevance)| relevance.clone());
                }
                let reason = ActivationReason::Auto {
                    matched_keywords: candidate.matched_keywords.clone(),
                    matched_paths: candidate.matched_paths.clone(),
                    relevance: candidate.relevance.clone(),
                };
                let result = self.activate(candidate.id.as_str(), &[], reason);
                outcome.events.extend(result.events);
                if result.reply.is_ok() {
                    outcome.activated.push(candidate.id.clone());
                    continue;
                }
            }
            if !candidate.user_invocable {
                continue;
            }
            outcome.events.push(SkillEvent::SkillSuggested {
                id: candidate.id.to_string(),
                source: candidate.source.clone(),
                matched_keywords: candidate.matched_keywords.clone(),
                matched_paths: candidate.matched_paths.clone(),
                relevance: candidate.relevance.clone(),
            });
            outcome.suggestions.push(candidate);
        }
        outcome
    }

    /// Every skill the turn points at, in the order they are offered
    /// (keyword and path matches, as they always were, then those only the
    /// relevance index vouched for, with what it said), and the index's
    /// clear winner, if any, with what it said. The relevance index is
    /// built here, the first time a prompt with words needs it.
    fn candidates(
        &self,
        prompt: &str,
        fresh: &[String],
    ) -> (Vec<Suggestion>, Option<(SkillId, RelevanceMatch)>) {
        let mut candidates = self
            .indexes
            .keywords
            .get_or_build(self.registry.skills())
            .suggest_turn(prompt, fresh);
        if prompt.trim().is_empty() {
            return (candidates, None);
        }
        let index = self.indexes.relevance.get_or_build(&self.registry);
        let mut winner = None;
        let hidden = |id: &SkillId| {
            self.registry
                .get(id.as_str())
                .is_none_or(|skill| !skill.model_visible())
        };
        for routed in relevance::route(index, prompt, &hidden) {
            if routed.clear_winner {
                winner = Some((routed.id.clone(), routed.relevance.clone()));
            }
            // A skill its keywords or paths already point at keeps its
            // suggestion, and its record, as they were.
            if candidates.iter().any(|c| c.id == routed.id) {
                continue;
            }
            let Some(skill) = self.registry.get(routed.id.as_str()) else {
                continue;
            };
            candidates.push(Suggestion {
                id: routed.id,
                source: skill.source.label.clone(),
                matched_keywords: Vec::new(),
                matched_paths: Vec::new(),
                score: 0,
                model_visible: skill.model_visible(),
                user_invocable: skill.manifest.user_invocable(),
                relevance: Some(routed.relevance),
            });
        }
        (candidates, winner)
    }

    /// The paths of `touched` that are repository paths not seen before,
    /// normalised, each once; they are remembered as seen (up to
    /// [`MAX_SEEN_PATHS`]).
    fn fresh_paths(&mut self, touched: &[String]) -> Vec<String> {
        let mut fresh = Vec::new();
        for path in touched {
            let Some(path) = crate::session::path_triggers::normalize(path) else {
                continue;
            };
            if self.seen_paths.contains(&path) || fresh.contains(&path) {
                continue;
            }
            if self.seen_paths.len() < MAX_SEEN_PATHS {
                self.seen_paths.insert(path.clone());
            }
            fresh.push(path);
        }
        fresh
    }

    /// Swaps in a registry rebuilt between turns. `changed_files` names ids
    /// whose files changed on disk although their summaries may not have
    /// (a body edit). Active skills that changed get fresh context; active
    /// skills that vanished stay active with their last context and a
    /// diagnostic.
    pub fn replace_registry(
        &mut self,
        registry: SkillRegistry,
        changed_files: &BTreeSet<String>,
    ) -> ReloadOutcome {
        let indexes = self.indexes.following(&self.registry);
        self.replace_registry_with_indexes(registry, indexes, changed_files)
    }

    /// [`SkillSession::replace_registry`] with the new registry's indexes
    /// given (sessions on one registry share them).
    pub fn replace_registry_with_indexes(
        &mut self,
        registry: SkillRegistry,
        indexes: SnapshotIndexes,
        changed_files: &BTreeSet<String>,
    ) -> ReloadOutcome {
        let old: BTreeSet<String> = self.registry.ids().map(str::to_owned).collect();
        let new: BTreeSet<String> = registry.ids().map(str::to_owned).collect();
        let mut diff = RegistryDiff {
            added: new.difference(&old).cloned().collect(),
            removed: old.difference(&new).cloned().collect(),
            changed: Vec::new(),
        };
        for id in old.intersection(&new) {
            if self.registry.get(id) != registry.get(id) || changed_files.contains(id) {
                diff.changed.push(id.clone());
            }
        }
        self.registry = registry;
        self.indexes = indexes;
        let mut outcome = ReloadOutcome::default();
        for slot in 0..self.active.len() {
            let id = self.active[slot].id.to_string();
            if diff.removed.contains(&id) {
                if !self.active[slot].file_missing {
                    self.active[slot].file_missing = true;
                    outcome.diagnostics.push(
                        Diagnostic::warning(
                            DiagnosticCode::RemovedWhileActive,
                            format!("active skill `{id}` was removed from disk; it stays active with the context loaded earlier"),
                        )
                        .with_skill(&id)
                        .with_hint(format!("/skill off {id} to drop it")),
                    );
                }
            } else if diff.changed.contains(&id) || self.active[slot].file_missing {
                let arguments = self.active[slot].arguments.clone();
                let raw_arguments = self.active[slot].raw_arguments.clone();
                let skill_id = self.active[slot].id.clone();
                if let Ok(context) =
                    self.load_context(&skill_id, &arguments, raw_arguments.as_deref())
                {
                    outcome.events.push(loaded_event(&context));
                    self.active[slot].context = context;
                    self.active[slot].file_missing = false;
                }
            }
        }
        if !diff.is_empty() {
            outcome.events.insert(
                0,
                SkillEvent::SkillsReloaded {
                    added: diff.added.clone(),
                    changed: diff.changed.clone(),
                    removed: diff.removed.clone(),
                },
            );
        }
        outcome.diff = diff;
        outcome
    }
}

fn loaded_event(context: &SkillContextResponse) -> SkillEvent {
    SkillEvent::SkillContextLoaded {
        id: context.id.to_string(),
        source: context.source.label.clone(),
        bytes: context.bytes,
        truncated: context.truncated,
        preview: context.preview.clone(),
    }
}
