//! The synchronous half of a session: everything that reads files, runs git
//! or walks skill trees. The async [`crate::PromptSession`] runs these
//! methods on blocking threads, so a runtime thread never waits on them.
//!
//! A turn is prepared in three steps: [`Core::refresh`] picks up changed
//! config, skills, instructions and invariants (between turns, never during
//! one); [`Core::apply`] runs the turn's skill command, activations or
//! prompt; [`Core::gather`] fills the typed [`Gathered`] the stages read.
//! Assembly ([`Core::assemble`]) is then a pure function of it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bcode_prompt_config::{InvariantsMode, LoadedConfig};
use bcode_prompt_pipeline::AssembledPrompt;
use bcode_prompt_pipeline::Pipeline;
use bcode_prompt_pipeline::SectionKind;
use bcode_prompt_sections::{
    Gathered, INVARIANTS_DIR, InstructionLimits, InvariantBudget, InvariantCatalog, Machine,
    ProbeRequest, RepositoryInstructions, RoutedSkills, StageChoice, TurnFacts, canonical_stages,
    gather_invariants_with, gather_session_facts, instruction_files, start_session_turn_facts,
    start_toolchain,
};
use bcode_skill::LazySkillIndex;
use bcode_skill::{
    CatalogOptions, EventSink, SessionError, SkillRegistry, SkillSession, SkillSessionOptions,
    SnapshotIndexes, format_catalog, parse_command, shown_summary,
};
use bcode_skill_models::{Diagnostic, LoadCause, SkillError, SkillEvent, SkillSummary};
use bcode_templates::{OverrideFiles, Templates};

use crate::error::PromptError;
use crate::facts::{FactsMachine, Resolved};
use crate::options::SessionOptions;
use crate::setup;
use crate::shared::{Pool, PoolKey, SharedSkills, ShownCatalog};
use crate::stamps::Stamps;
use crate::turn::{CommandReply, TurnChanges, TurnInput};
use crate::workspace::Workspace;

/// The host's options, whole, and the skill pools.
pub(crate) struct Opened {
    /// As the host built them (the event sink and the selector are taken
    /// out at open: the session holds those).
    pub(crate) options: SessionOptions,
    /// The skill pools: the host's shared ones, or the session's own.
    pools: SharedSkills,
}

impl Opened {
    /// The options a session opens with.
    pub(crate) fn new(mut options: SessionOptions) -> Opened {
        if options.hermetic {
            // A hermetic session reads nothing from the environment: no
            // user config or skills, no `BCODE_*` layer, no locale, shell
            // or CI.
            options.env.clear();
        }
        Opened {
            pools: options.skill_lifetime.pools(),
            options,
        }
    }
}

/// What depends on the config: rebuilt when a config file or a template
/// override changes.
struct Configured {
    /// The root, the environment, the loaded config and the state folder.
    workspace: Workspace,
    /// The config files and the override files (with their folders).
    stamps: Stamps,
    templates: Arc<Templates>,
    /// The overrides the templates were built with.
    overrides: OverrideFiles,
    pipeline: Pipeline<Gathered>,
    /// The pinned facts of this config and the host's.
    facts: Resolved,
    /// The machine the probes ask: the host's, behind the pinned facts.
    machine: Arc<dyn Machine>,
}

impl Configured {
    fn build(opened: &Opened, workspace: Workspace) -> Result<Configured, PromptError> {
        let loaded = &workspace.loaded;
        let pinned = loaded.config.facts.overlaid(&opened.options.facts);
        let facts = Resolved::new(
            &pinned,
            opened.options.hermetic,
            workspace.repo(),
            &opened.options.env,
        )?;
        let machine: Arc<dyn Machine> = if pinned.is_empty() && !opened.options.hermetic {
            Arc::clone(&opened.options.machine)
        } else {
            Arc::new(FactsMachine::new(
                Arc::clone(&opened.options.machine),
                facts.pins.clone(),
            ))
        };
        let (templates, overrides) = workspace.templates_and_overrides()?;
        // Stamped after reading; a write in between is within the racy
        // window, which counts as a change.
        let stamps = workspace.stamps.clone().and(overrides.read.iter().cloned());
        let invariants = &loaded.config.invariants;
        let mut stage_list = canonical_stages(StageChoice {
            invariants: invariants.enabled,
            relevant: relevant_mode(invariants),
            routing: loaded.config.skills.routing.enabled,
        });
        for stage in &opened.options.host_stages {
            stage_list.push(Box::new(Arc::clone(stage)));
        }
        let pipeline = Pipeline::new(stage_list)?;
        Ok(Configured {
            workspace,
            stamps,
            templates: Arc::new(templates),
            overrides,
            pipeline,
            facts,
            machine,
        })
    }

    fn relevant(&self) -> bool {
        relevant_mode(&self.workspace.loaded.config.invariants)
    }
}

/// Whether relevant-mode invariants are on: the one reading of
/// `invariants.enabled` with `invariants.mode` that the pipeline and the
/// turn both follow.
fn relevant_mode(invariants: &bcode_prompt_config::InvariantsConfig) -> bool {
    invariants.enabled && invariants.mode == InvariantsMode::Relevant
}

/// A cached read of repository files and the stamps it depends on.
struct Cached<T> {
    stamps: Stamps,
    value: Arc<T>,
}

/// The skills side: the pool this session's registry comes from (shared
/// with other sessions on the same roots, or private) and the skill session
/// (active skills, suggestions); no pool when `skills.enabled = false`.
struct Skills {
    pool: Option<Arc<Pool>>,
    /// The pool generation the session last took.
    generation: u64,
    session: SkillSession,
    /// The catalog of the current registry and config.
    catalog: Option<ShownCatalog>,
    /// The relevance index of the current registry, built on first use.
    search: Arc<LazySkillIndex>,
}

/// The blocking state of one session.
pub(crate) struct Core {
    pub(crate) opened: Opened,
    configured: Configured,
    skills: Skills,
    /// Session-class facts (OS, shell, hosting, locale, runtime mode,
    /// profile, toolchain), gathered at the first turn.
    session_facts: Option<Gathered>,
    instructions: Option<Cached<RepositoryInstructions>>,
    invariants: Option<Cached<InvariantCatalog>>,
    sink: Option<Box<dyn EventSink>>,
    first_turn: bool,
    /// The git reads: kept and watched when later turns follow.
    git: bcode_prompt_sections::GitSession,
}

/// A turn's inputs, gathered; the relevant-mode decision is added by the
/// async half before assembly.
pub(crate) struct Prepared {
    pub(crate) gathered: Gathered,
    pub(crate) events: Vec<SkillEvent>,
    pub(crate) command: Option<CommandReply>,
    pub(crate) suggestions: Vec<bcode_skill::Suggestion>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) config_warnings: Vec<bcode_prompt_config::ConfigWarning>,
    pub(crate) template_warnings: Vec<bcode_templates::TemplateWarning>,
    /// The root refused at open, on the first turn.
    pub(crate) foreign_root: Option<bcode_fs::RefusedRoot>,
    pub(crate) changes: TurnChanges,
    /// Relevant mode is on: the catalog and config the driver needs.
    pub(crate) relevant: Option<(Arc<InvariantCatalog>, bcode_prompt_config::InvariantsConfig)>,
    /// The task the relevant-mode selector sees, when the text was a prompt.
    pub(crate) task: Option<String>,
    pub(crate) event_log_problems: Vec<String>,
}

impl Core {
    /// Opens: checks the repository, loads the config, builds the template
    /// environment and the pipeline, and discovers skills once.
    pub(crate) fn open(
        opened: Opened,
        workspace: Workspace,
        sink: Option<Box<dyn EventSink>>,
    ) -> Result<Core, PromptError> {
        let configured = Configured::build(&opened, workspace)?;
        let skills = Skills::open(&opened, &configured)?;
        let git = bcode_prompt_sections::GitSession::new(opened.options.skill_lifetime.follows());
        Ok(Core {
            opened,
            configured,
            skills,
            session_facts: None,
            instructions: None,
            invariants: None,
            sink,
            first_turn: true,
            git,
        })
    }

    /// What the session's git reads have cost.
    pub(crate) fn git_stats(&self) -> bcode_prompt_sections::GitSessionStats {
        self.git.stats()
    }

    /// The loaded config (for hosts that show it).
    pub(crate) fn loaded(&self) -> &LoadedConfig {
        &self.configured.workspace.loaded
    }

    /// The current skill registry.
    pub(crate) fn registry(&self) -> &SkillRegistry {
        self.skills.session.registry()
    }

    /// The relevance index's answer for `query` over the current registry.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<bcode_skill::SearchHit> {
        let registry = self.skills.session.registry();
        self.skills
            .search
            .get_or_build(registry)
            .search(query, limit)
    }

    /// How the skills follow their roots between turns.
    pub(crate) fn skill_reload(&self) -> crate::shared::SkillReload {
        self.skills
            .pool
            .as_ref()
            .map_or(crate::shared::SkillReload::NotFollowed, |pool| {
                pool.reload()
            })
    }

    /// The template environment.
    pub(crate) fn templates(&self) -> &Arc<Templates> {
        &self.configured.templates
    }

    /// Every stage of the pipeline as configured, for `--explain`.
    pub(crate) fn describe(&self) -> Vec<bcode_prompt_pipeline::StageInfo> {
        self.configured
            .pipeline
            .describe(&self.configured.workspace.loaded.config)
    }

    /// Steps 1 to 3 of a turn (see the module docs).
    pub(crate) fn prepare(&mut self, input: &TurnInput) -> Result<Prepared, PromptError> {
        let mut prepared = Prepared {
            gathered: Gathered::new(),
            events: Vec::new(),
            command: None,
            suggestions: Vec::new(),
            diagnostics: Vec::new(),
            config_warnings: Vec::new(),
            template_warnings: Vec::new(),
            foreign_root: None,
            changes: TurnChanges::default(),
            relevant: None,
            task: None,
            event_log_problems: Vec::new(),
        };
        self.refresh(&mut prepared)?;
        self.apply(input, &mut prepared)?;
        if let Some(sink) = &mut self.sink {
            for event in &prepared.events {
                // A sink that cannot record must not stop the turn; the
                // events are still returned to the host with it.
                if let Err(err) = sink.emit(event) {
                    prepared.event_log_problems.push(err.to_string());
                }
            }
        }
        self.gather(input, &mut prepared)?;
        self.first_turn = false;
        Ok(prepared)
    }

    /// Picks up what changed since the last turn.
    fn refresh(&mut self, prepared: &mut Prepared) -> Result<(), PromptError> {
        if self.first_turn {
            prepared.foreign_root = self.configured.workspace.refused_root().cloned();
            prepared.config_warnings = self.configured.workspace.loaded.warnings.clone();
            prepared.template_warnings = self.configured.templates.warnings().to_vec();
            prepared.diagnostics = self.registry().diagnostics().to_vec();
            return Ok(());
        }
        if self.configured.stamps.changed() {
            let fresh = Configured::build(&self.opened, self.configured.workspace.reloaded()?)?;
            if fresh.workspace.loaded.config != self.configured.workspace.loaded.config {
                prepared.changes.config = true;
                prepared.changes.templates = fresh.overrides != self.configured.overrides;
                prepared.config_warnings = fresh.workspace.loaded.warnings.clone();
                prepared.template_warnings = fresh.templates.warnings().to_vec();
                let skills_changed = fresh.workspace.loaded.config.skills
                    != self.configured.workspace.loaded.config.skills;
                let invariant_budget_changed =
                    InvariantBudget::from(&fresh.workspace.loaded.config.invariants)
                        != InvariantBudget::from(
                            &self.configured.workspace.loaded.config.invariants,
                        );
                let instruction_limits_changed =
                    InstructionLimits::from_config(&fresh.workspace.loaded.config.system_prompt)
                        != InstructionLimits::from_config(
                            &self.configured.workspace.loaded.config.system_prompt,
                        );
                self.skills
                    .session
                    .set_templates((*fresh.templates).clone());
                self.configured = fresh;
                self.session_facts = None;
                self.skills.catalog = None;
                if invariant_budget_changed {
                    // Read the invariants again under the new budget.
                    self.invariants = None;
                }
                if instruction_limits_changed {
                    // Which files are read depends on the total.
                    self.instructions = None;
                }
                if skills_changed {
                    // New roots and options: discover again, and diff the
                    // new registry against the old one in the same skill
                    // session, so active skills stay active.
                    let fresh = Skills::open(&self.opened, &self.configured)?;
                    let registry = fresh.session.registry().clone();
                    let reload = self
                        .skills
                        .session
                        .replace_registry(registry, &BTreeSet::new());
                    self.skills.pool = fresh.pool;
                    self.skills.generation = fresh.generation;
                    prepared.changes.skills = reload.diff;
                    prepared.diagnostics = reload.diagnostics;
                    prepared.events.extend(reload.events);
                }
            } else {
                // Touched but equal: keep what was built from it, and take
                // the new stamps and the new load (its lines and warnings);
                // warnings the edit changed are reported with this turn.
                if fresh.workspace.loaded.warnings != self.configured.workspace.loaded.warnings {
                    prepared.config_warnings = fresh.workspace.loaded.warnings.clone();
                }
                if fresh.overrides != self.configured.overrides {
                    // An override edited, added or removed: the new
                    // templates, and the catalog formatted with them.
                    prepared.changes.templates = true;
                    if fresh.templates.warnings() != self.configured.templates.warnings() {
                        prepared.template_warnings = fresh.templates.warnings().to_vec();
                    }
                    self.skills
                        .session
                        .set_templates((*fresh.templates).clone());
                    self.configured.templates = fresh.templates;
                    self.configured.overrides = fresh.overrides;
                    self.skills.catalog = None;
                }
                self.configured.stamps = fresh.stamps;
                self.configured.workspace = fresh.workspace;
            }
        }
        if let Some(pool) = &self.skills.pool
            && let snapshot = pool.refresh(self.skills.generation)
            && snapshot.generation != self.skills.generation
        {
            self.skills.generation = snapshot.generation;
            self.skills.search = snapshot.search;
            // A pool that no longer remembers what changed since this
            // session's last turn: every id counts as changed.
            let changed = snapshot
                .changed
                .unwrap_or_else(|| snapshot.registry.ids().map(str::to_owned).collect());
            // The session suggests from the very relevance index routing
            // and `search` use.
            let indexes = SnapshotIndexes {
                keywords: snapshot.index,
                relevance: Arc::clone(&self.skills.search),
            };
            let reload = self.skills.session.replace_registry_with_indexes(
                snapshot.registry,
                indexes,
                &changed,
            );
            self.skills.catalog = None;
            if !reload.diff.is_empty() {
                prepared.changes.skills = reload.diff;
            }
            prepared.diagnostics.extend(reload.diagnostics);
            prepared.events.extend(reload.events);
        }
        Ok(())
    }

    /// Runs the turn's activations and its command or prompt.
    fn apply(&mut self, input: &TurnInput, prepared: &mut Prepared) -> Result<(), PromptError> {
        // The session's options are where `[skills]` keys are read.
        let skills_on = self.skills.session.options().enabled;
        for activation in &input.activate {
            if !skills_on {
                return Err(PromptError::Skill(SkillError::SkillsDisabled));
            }
            let outcome = self.skills.session.activate_typed(
                &activation.id,
                &activation.arguments,
                activation.raw_arguments.as_deref(),
                activation.reason.clone(),
            );
            prepared.events.extend(outcome.events);
            match outcome.reply {
                Err(SessionError::Skill(err)) => return Err(PromptError::Skill(err)),
                Err(other) => {
                    return Err(PromptError::Skill(SkillError::Load {
                        id: activation.id.clone(),
                        cause: LoadCause::Template {
                            message: other.to_string(),
                        },
                    }));
                }
                Ok(_) => {}
            }
        }
        let text = input.text.trim();
        if text.starts_with('/') {
            prepared.command = Some(match parse_command(text, &[]) {
                Ok(Some(command)) if skills_on => {
                    let outcome = self.skills.session.run(&command);
                    prepared.events.extend(outcome.events);
                    match outcome.reply {
                        Ok(reply) => CommandReply::Done(reply),
                        Err(err) => CommandReply::Failed(err),
                    }
                }
                Ok(Some(_)) => CommandReply::Failed(SkillError::SkillsDisabled.into()),
                Ok(None) => CommandReply::Invalid(bcode_skill::CommandError {
                    message: "not a command".to_owned(),
                    hint: None,
                }),
                Err(err) => CommandReply::Invalid(err),
            });
        } else if !text.is_empty() || !input.touched_paths.is_empty() {
            // Suggestions wait for a later turn to be accepted; a single-turn
            // session has none, so it skips matching unless skills would be
            // activated on this very turn (`auto_activate = "on"`).
            let suggest_only = self.skills.session.options().auto_activate
                != bcode_prompt_config::AutoActivate::On;
            let later_turns = self.opened.options.skill_lifetime.follows();
            if skills_on && (later_turns || !suggest_only) {
                let outcome = self.skills.session.on_turn(text, &input.touched_paths);
                prepared.events.extend(outcome.events);
                prepared.suggestions = outcome.suggestions;
            }
            if !text.is_empty() {
                prepared.task = Some(text.to_owned());
            }
        }
        Ok(())
    }

    /// Fills the typed inputs of the turn: one call per gathered value.
    /// The git read started with the facts works on its thread while the
    /// instructions, invariants and catalog are read; it is collected after
    /// them.
    fn gather(&mut self, input: &TurnInput, prepared: &mut Prepared) -> Result<(), PromptError> {
        let pinned_now = input.now.or(self.configured.facts.now);
        let (mut gathered, turn_facts) = self.gather_facts(input, pinned_now);
        gathered.prompt = prepared.task.clone();
        gathered.instructions = self.gather_instructions(&mut prepared.changes);
        gathered.invariants = self.gather_invariants(prepared);
        if let Some(shown) = self.gather_catalog()? {
            gathered.skill_catalog = Some(shown.catalog);
            gathered.skill_catalog_text = shown.text;
        }
        turn_facts.finish(&mut gathered);
        self.configured.facts.show_git(&mut gathered);
        if self.opened.options.hermetic && pinned_now.is_none() {
            // No clock reading is pinned: a hermetic turn does not read one.
            gathered.datetime = None;
        }
        gathered.active_skills = self.gather_active_skills();
        gathered.relevant_skills = self.gather_relevant_skills(input, prepared.task.as_deref())?;
        prepared.gathered = gathered;
        Ok(())
    }

    /// The session facts (probed at the first turn, kept after), and this
    /// turn's clock and git read, started. The toolchain commands of the
    /// first turn run while its git read starts.
    fn gather_facts(
        &mut self,
        input: &TurnInput,
        pinned_now: Option<chrono::DateTime<chrono::Utc>>,
    ) -> (Gathered, TurnFacts) {
        let repo = self.configured.workspace.repo().to_path_buf();
        let facts = &self.configured.facts;
        let request = ProbeRequest {
            repo: &repo,
            env: &self.opened.options.env,
            now: pinned_now.unwrap_or_else(chrono::Utc::now),
            timezone: input.timezone.or(facts.timezone),
            config: &self.configured.workspace.loaded.config,
            profile: None,
            runtime_mode: facts
                .runtime_mode
                .unwrap_or(self.opened.options.runtime_mode),
        };
        let machine = self.configured.machine.as_ref();
        let mut limits = self.opened.options.probe_limits.clone();
        if limits.git.cache.is_none() {
            limits.git.cache = self.configured.workspace.git_cache();
        }
        let limits = &limits;
        let first = self.session_facts.is_none();
        let toolchain = if first {
            start_toolchain(&request, machine, limits)
        } else {
            None
        };
        let mut gathered = match &self.session_facts {
            Some(facts) => facts.clone(),
            None => {
                let mut facts = Gathered::new();
                gather_session_facts(&request, machine, &mut facts);
                facts
            }
        };
        let turn_facts = start_session_turn_facts(&request, machine, limits, Some(&self.git));
        if let Some(run) = toolchain {
            gathered.toolchain = Some(run.finish());
        }
        if first {
            let mut kept = gathered.clone();
            kept.datetime = None;
            kept.git = None;
            self.session_facts = Some(kept);
        }
        (gathered, turn_facts)
    }

    /// `BCODE.md` and `AGENTS.md` from the root down to the working folder
    /// (re-read only when one may have changed), their paths as shown.
    fn gather_instructions(&mut self, changes: &mut TurnChanges) -> Option<RepositoryInstructions> {
        // Gathered only for a section the pipeline will show.
        let kind = bcode_prompt_pipeline::SectionKind::RepositoryContext;
        if !self
            .configured
            .pipeline
            .enables(kind.name(), &self.configured.workspace.loaded.config)
        {
            return None;
        }
        let repo = self.configured.workspace.repo().to_path_buf();
        let work = self.configured.workspace.work().to_path_buf();
        let limits =
            InstructionLimits::from_config(&self.configured.workspace.loaded.config.system_prompt);
        let (value, changed) = cached(
            &mut self.instructions,
            self.opened.options.racy_window,
            || instruction_paths(&repo, &work),
            || {
                bcode_prompt_sections::gather_instructions(
                    &repo,
                    &work,
                    &limits,
                    self.configured.workspace.owners(),
                )
            },
        );
        changes.instructions = changed;
        let mut instructions = (*value).clone();
        for file in &mut instructions.files {
            file.path = self
                .configured
                .facts
                .display
                .show(Path::new(&file.path))
                .into_owned();
        }
        Some(instructions)
    }

    /// The invariant catalog, when full or relevant mode needs it (unchanged
    /// files keep their compiled globs); relevant mode's driver gets it too.
    fn gather_invariants(&mut self, prepared: &mut Prepared) -> Option<Arc<InvariantCatalog>> {
        let config = &self.configured.workspace.loaded.config;
        let invariants = &config.invariants;
        let relevant = self.configured.relevant();
        // Relevant mode's driver needs the catalog whatever the section
        // toggles; otherwise only a section the pipeline will show does.
        let kind = bcode_prompt_pipeline::SectionKind::RepositoryInvariants;
        if !invariants.enabled
            || !(relevant || self.configured.pipeline.enables(kind.name(), config))
        {
            return None;
        }
        let repo = self.configured.workspace.repo().to_path_buf();
        let previous = self.invariants.as_ref().map(|c| Arc::clone(&c.value));
        let budget = InvariantBudget::from(invariants);
        let (catalog, changed) = cached(
            &mut self.invariants,
            self.opened.options.racy_window,
            || invariant_paths(&repo),
            || gather_invariants_with(&repo, &budget, previous.as_deref()),
        );
        prepared.changes.invariants = changed;
        if relevant {
            prepared.relevant = Some((Arc::clone(&catalog), invariants.clone()));
        }
        Some(catalog)
    }

    /// The formatted skill catalog (`None` when skills are off): the one
    /// this session keeps, else the one its pool keeps for this snapshot
    /// and these opened, else formatted now. A single-turn session keeps
    /// none (a further turn formats it again), so its text lives only as
    /// long as the turn's inputs.
    fn gather_catalog(&mut self) -> Result<Option<ShownCatalog>, PromptError> {
        let config = &self.configured.workspace.loaded.config;
        if !self.skills.session.options().enabled {
            return Ok(None);
        }
        if let Some(kept) = &self.skills.catalog {
            return Ok(Some(kept.clone()));
        }
        let options = CatalogOptions::from_config(&config.skills);
        let templates = &self.configured.templates;
        let registry = self.skills.session.registry();
        let display = &self.configured.facts.display;
        let format = || -> Result<ShownCatalog, PromptError> {
            let catalog = if display.is_identity() {
                format_catalog(registry.skills(), options, templates)?
            } else {
                // Locations under pinned roots, as the model sees them.
                let shown: Vec<SkillSummary> = registry
                    .skills()
                    .map(|skill| shown_summary(skill, display))
                    .collect();
                format_catalog(shown.iter(), options, templates)?
            };
            Ok(ShownCatalog::new(catalog))
        };
        if !self.opened.options.skill_lifetime.follows() {
            return format().map(Some);
        }
        let shown = match &self.skills.pool {
            // Sessions on one snapshot with the same catalog opened and
            // templates share one formatted catalog.
            Some(pool) => pool.catalog(
                self.skills.generation,
                &catalog_key(&self.configured),
                format,
            )?,
            None => format()?,
        };
        self.skills.catalog = Some(shown.clone());
        Ok(Some(shown))
    }

    /// The skills routed to this turn (`skills.routing`): the relevance
    /// index's best model-visible matches for the turn's text and touched
    /// paths, above the score floor, as catalog entries. `None` when
    /// routing or its section is off, or the turn has nothing to route.
    fn gather_relevant_skills(
        &self,
        input: &TurnInput,
        task: Option<&str>,
    ) -> Result<Option<RoutedSkills>, PromptError> {
        let config = &self.configured.workspace.loaded.config;
        let routing = &config.skills.routing;
        if !routing.enabled
            || !self.skills.session.options().enabled
            || !SectionKind::RelevantSkills.spec().enabled_by(config)
        {
            return Ok(None);
        }
        let query = routing_query(task, &input.touched_paths);
        if query.trim().is_empty() {
            return Ok(None);
        }
        let registry = self.skills.session.registry();
        let index = self.skills.search.get_or_build(registry);
        let visible = |id: &bcode_skill_models::SkillId| {
            registry.get(id.as_str()).is_some_and(|s| s.model_visible())
        };
        let floor = routing.min_score.0;
        let hits: Vec<bcode_skill::SearchHit> = index
            .search_where(&query, routing.max_results, &visible)
            .into_iter()
            .filter(|hit| f64::from(hit.score) >= floor)
            .collect();
        let display = &self.configured.facts.display;
        let shown: Vec<SkillSummary> = hits
            .iter()
            .filter_map(|hit| registry.get(hit.id.as_str()))
            .map(|skill| shown_summary(skill, display))
            .collect();
        let listed: Vec<&SkillSummary> = shown.iter().collect();
        let entries = bcode_skill::format_entries(
            &listed,
            CatalogOptions::from_config(&config.skills),
            &self.configured.templates,
        )?;
        let mut sources: Vec<String> = Vec::new();
        for skill in &shown {
            if !sources.contains(&skill.source.label) {
                sources.push(skill.source.label.clone());
            }
        }
        Ok(Some(RoutedSkills {
            entries,
            hits,
            sources,
        }))
    }

    /// The blocks of the active skills, each naming its file as shown.
    fn gather_active_skills(&self) -> Vec<bcode_skill_models::SkillContextResponse> {
        let display = &self.configured.facts.display;
        self.skills
            .session
            .active()
            .iter()
            .map(|active| {
                let mut context = active.context.clone();
                context.location = context.location.map(|location| display.path(&location));
                context
            })
            .collect()
    }

    /// Assembles the prompt from the gathered inputs (pure: no I/O), which
    /// are dropped before the sections are joined (a one-shot render's
    /// catalog then becomes the prompt itself instead of a copy beside it).
    pub(crate) fn assemble_owned(
        &self,
        gathered: Gathered,
    ) -> Result<AssembledPrompt, PromptError> {
        Ok(self.configured.pipeline.assemble_owned(
            &self.configured.workspace.loaded.config,
            &self.configured.templates,
            gathered,
            self.opened.options.strict,
        )?)
    }
}

impl Skills {
    fn open(opened: &Opened, configured: &Configured) -> Result<Skills, PromptError> {
        let config = &configured.workspace.loaded.config.skills;
        let mut options = SkillSessionOptions::from_config(config);
        options.paths = configured.facts.display.clone();
        let templates = (*configured.templates).clone();
        if !config.enabled {
            return Ok(Skills {
                pool: None,
                generation: 0,
                session: SkillSession::new(SkillRegistry::empty(), options, templates),
                catalog: None,
                search: Arc::new(LazySkillIndex::new()),
            });
        }
        let workspace = &configured.workspace;
        let roots = workspace.skill_roots();
        // The host's providers first, then one per configured MCP server
        // (they rank as `mcp:<name>` whatever the order).
        let mut providers = opened.options.providers.clone();
        providers.extend(workspace.mcp_providers());
        // Read once: the pool is told apart by them and its discovery uses
        // them.
        let discovery_options = workspace.discovery_options();
        let disk_cache = workspace.disk_cache_dir();
        let key = PoolKey {
            roots,
            options: discovery_options.clone(),
            disk_cache: disk_cache.clone(),
            providers: providers
                .iter()
                .map(|provider| Arc::as_ptr(provider).cast::<()>() as usize)
                .collect(),
            live: opened.options.skill_lifetime.follows(),
        };
        let pool = opened.pools.pool(key);
        let snapshot = pool.open(
            || setup::discovery(discovery_options, disk_cache),
            &providers,
            opened.options.skill_lifetime.watches(),
        );
        Ok(Skills {
            pool: Some(pool),
            generation: snapshot.generation,
            session: SkillSession::with_indexes(
                snapshot.registry,
                SnapshotIndexes {
                    keywords: snapshot.index,
                    relevance: Arc::clone(&snapshot.search),
                },
                options,
                templates,
            ),
            catalog: None,
            search: snapshot.search,
        })
    }
}

/// What a turn is routed on: its text, then the paths it touched (their
/// folder and file names, and extensions, are words the index knows).
fn routing_query(task: Option<&str>, touched: &[String]) -> String {
    let mut query = task.unwrap_or_default().to_owned();
    for path in touched {
        query.push('\n');
        query.push_str(path);
    }
    query
}

/// What a formatted catalog depends on besides the registry: the catalog
/// opened and the overrides of the catalog's templates (file and text:
/// an override edited in place is another catalog).
fn catalog_key(configured: &Configured) -> String {
    let config = &configured.workspace.loaded.config.skills;
    let overrides: Vec<(&str, &str)> = configured
        .overrides
        .overrides
        .iter()
        .filter(|o| {
            [
                "skills/catalog.j2",
                "skills/catalog_truncated.j2",
                "skills/description_truncated.j2",
            ]
            .contains(&o.name.as_str())
        })
        .map(|o| (o.file.as_str(), o.source.as_str()))
        .collect();
    format!(
        "{:?}|{}|{overrides:?}|{:?}",
        config.prompt, config.include_user_skills, configured.facts.display
    )
}

/// The cached value, re-read when one of `paths` may have changed. Returns
/// whether the value differs from an earlier read (a change the host is
/// told about); an equal re-read keeps the earlier value, so everything
/// built from it stays valid.
fn cached<T: PartialEq>(
    slot: &mut Option<Cached<T>>,
    window: std::time::Duration,
    paths: impl FnOnce() -> Vec<PathBuf>,
    read: impl FnOnce() -> T,
) -> (Arc<T>, bool) {
    if let Some(cached) = slot
        && !cached.stamps.changed()
    {
        return (Arc::clone(&cached.value), false);
    }
    // Stamped before reading: a write in between shows up next turn.
    // (Listing the invariants folder for its paths is itself I/O: only
    // when re-reading.)
    let stamps = Stamps::of(paths(), window);
    let fresh = read();
    let (value, changed) = match slot.take() {
        Some(old) if *old.value == fresh => (old.value, false),
        Some(_) => (Arc::new(fresh), true),
        None => (Arc::new(fresh), false),
    };
    *slot = Some(Cached {
        stamps,
        value: Arc::clone(&value),
    });
    (value, changed)
}

fn instruction_paths(repo: &Path, work: &Path) -> Vec<PathBuf> {
    instruction_files(repo, work)
        .into_iter()
        .map(|(path, _, _)| path)
        .collect()
}

/// The invariants folder itself (an added or removed file moves its time)
/// and every file in it.
fn invariant_paths(repo: &Path) -> Vec<PathBuf> {
    let dir = repo.join(INVARIANTS_DIR);
    let mut paths = vec![dir.clone()];
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut files: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
        files.sort();
        paths.extend(files);
    }
    paths
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::{Core, Opened};
    use crate::options::{SessionOptions, SkillLifetime};
    use crate::turn::TurnInput;
    use crate::workspace::Workspace;

    /// Assembly is a pure function of the gathered inputs: a single turn's
    /// catalog text is shared, not handed over once, so assembling the same
    /// inputs again gives the same prompt, catalog included.
    #[test]
    fn assembling_the_same_inputs_twice_gives_the_same_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("skills/fix/SKILL.md");
        std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
        std::fs::write(&skill, "---\ndescription: Fix things\n---\nFix it.\n").unwrap();
        let options = SessionOptions::new(dir.path())
            .hermetic(true)
            .skill_lifetime(SkillLifetime::SingleTurn);
        let workspace = Workspace::open(&options).unwrap();
        let mut core = Core::open(Opened::new(options), workspace, None).unwrap();
        let prepared = core.prepare(&TurnInput::new("hello")).unwrap();
        let first = core.assemble_owned(prepared.gathered.clone()).unwrap();
        let second = core.assemble_owned(prepared.gathered.clone()).unwrap();
        assert!(
            first.sections.iter().any(|s| s.id == "skill_catalog"),
            "{:?}",
            first.sections
        );
        assert_eq!(first.system, second.system);
        assert_eq!(first.sections, second.sections);
    }
}
