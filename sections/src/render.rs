//! The glue the CLI's `render` command calls: load the layered config, build
//! the template environment (embedded templates plus the operator's
//! `system_prompt.templates_dir`), discover skills, run every probe and
//! gather, build the pipeline and assemble the prompt.
//!
//! This is an edge module: it reads files (config, templates, skills,
//! repository instructions and invariants) and runs the machine probes, all
//! through inputs the caller passes in (environment map, clock, timezone), so
//! the same request gives the same bytes.
//!
//! Every [`RenderError`] is a problem with the caller's setup or request (bad
//! config, broken template override, unknown `--skill` id): the CLI prints
//! its `Display` and exits 2. Skill diagnostics never make rendering fail;
//! they are returned in [`Rendered::skill_diagnostics`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bcode_prompt::assembled::AssembledPrompt;
use bcode_prompt::base::BaseStage;
use bcode_prompt::config::{
    ConfigError, ConfigInputs, ConfigWarning, InvariantsConfig, InvariantsMode, LoadedConfig, load,
};
use bcode_prompt::pipeline::{AssembleError, Pipeline, PipelineError};
use bcode_prompt::stage::{Inputs, Stage, StageContext};
use bcode_prompt::templates::{
    EmbeddedTemplate, PIPELINE_TEMPLATES, TemplateError, TemplateOverride, TemplateWarning,
    Templates, read_overrides,
};
use bcode_skill::{
    ConfiguredRoot, Discovery, DiscoveryOptions, DiskCache, RootsInput, SkillRegistry,
    SkillTemplates, SourceEnv, SourceRoot, closest, source_roots,
};
use bcode_skill_models::{Diagnostic, SkillError};

use crate::authority::UserAuthorityStage;
use crate::instructions::RepositoryContextStage;
use crate::invariants::{FocusedInvariantsStage, InvariantCatalog, RepositoryInvariantsStage};
use crate::probe;
use crate::relevant::{Decision, DeterministicSelector, RelevantInvariants, TaskContext, sidecar};
use crate::skills::{ActiveSkillStage, ActiveSkills, SkillCatalogStage, SkillsInput};
use crate::suffix::AgentSuffixStage;

/// The templates of the stages in this crate that are not machine probes
/// (the probes' own set is `probe::TEMPLATES`).
pub const TEMPLATES: &[EmbeddedTemplate] = &[
    (
        "sections/repo_instructions.j2",
        include_str!("../../templates/sections/repo_instructions.j2"),
    ),
    (
        "sections/repo_invariants.j2",
        include_str!("../../templates/sections/repo_invariants.j2"),
    ),
    (
        "sections/repo_invariant_entry.j2",
        include_str!("../../templates/sections/repo_invariant_entry.j2"),
    ),
    (
        "sections/relevant_invariants.j2",
        include_str!("../../templates/sections/relevant_invariants.j2"),
    ),
    (
        "sections/skill_active.j2",
        include_str!("../../templates/sections/skill_active.j2"),
    ),
    (
        "sections/user_authority.j2",
        include_str!("../../templates/sections/user_authority.j2"),
    ),
    (
        "sections/agent_suffix.j2",
        include_str!("../../templates/sections/agent_suffix.j2"),
    ),
];

/// Override names that go to the skill registry's templates.
const SKILL_TEMPLATE_PREFIX: &str = "skills/";

/// Everything one render depends on; nothing is read from the process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderRequest {
    /// The repository root (`--repo`); relative paths join `cwd`.
    pub repo: PathBuf,
    pub cwd: PathBuf,
    /// The environment (HOME, XDG_*, BCODE_*, LANG, ...).
    pub env: BTreeMap<String, String>,
    /// `--config` files, lowest precedence first.
    pub config_files: Vec<PathBuf>,
    /// `--set KEY=VALUE` flags as written.
    pub set: Vec<String>,
    pub now: chrono::DateTime<chrono::Utc>,
    /// `--timezone`; `None` lets the probe decide from the environment.
    pub timezone: Option<chrono_tz::Tz>,
    /// `--skill` ids, in activation order.
    pub skills: Vec<String>,
    /// `--prompt`: the user's prompt for this turn, if any.
    pub prompt: Option<String>,
    /// `--session DIR`: the session folder whose sidecar keeps the
    /// relevant-mode invariant focus from one render to the next.
    pub session_dir: Option<PathBuf>,
}

/// The assembled prompt and everything worth telling the operator.
#[derive(Debug)]
#[non_exhaustive]
pub struct Rendered {
    pub prompt: AssembledPrompt,
    pub config_warnings: Vec<ConfigWarning>,
    /// Discovery diagnostics (empty when `skills.enabled = false`).
    pub skill_diagnostics: Vec<Diagnostic>,
    /// Override files that match no template.
    pub template_warnings: Vec<TemplateWarning>,
}

/// Why rendering stopped. `Display` is one paragraph naming the problem.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("template error: {0}")]
    Template(#[from] TemplateError),
    #[error("skill template override {file} is broken: {error}")]
    SkillTemplate {
        file: String,
        error: bcode_skill::TemplateError,
    },
    #[error("unknown skill `{id}` given with --skill{}", did_you_mean(suggestion.as_deref()))]
    UnknownSkill {
        id: String,
        suggestion: Option<String>,
    },
    #[error(
        "skill `{id}` given with --skill is disabled by skills.disabled.ids; remove it from that list to use it"
    )]
    DisabledSkill { id: String },
    #[error(
        "skill `{id}` given with --skill cannot be used: skills are disabled (skills.enabled = false)"
    )]
    SkillsDisabled { id: String },
    #[error("cannot build the prompt pipeline: {0}")]
    Pipeline(#[from] PipelineError),
    #[error("cannot assemble the prompt: {0}")]
    Assemble(#[from] AssembleError),
}

fn did_you_mean(suggestion: Option<&str>) -> String {
    match suggestion {
        Some(s) => format!("; did you mean `{s}`? (`bcode-prompt skills list` shows every id)"),
        None => "; `bcode-prompt skills list` shows every id".to_owned(),
    }
}

/// Loads the config for `request` and renders, probing the real machine.
pub fn render(request: &RenderRequest) -> Result<Rendered, RenderError> {
    render_with(request, &probe::RealMachine)
}

/// [`render`] with the machine facts (OS, container marker, system zone and
/// locale, toolchain commands) taken from `machine`: tests pass a fake so
/// every section is deterministic.
pub fn render_with(
    request: &RenderRequest,
    machine: &dyn probe::Machine,
) -> Result<Rendered, RenderError> {
    let loaded = load(&ConfigInputs {
        repo: request.repo.clone(),
        cwd: request.cwd.clone(),
        env: request.env.clone(),
        config_files: request.config_files.clone(),
        set: request.set.clone(),
    })?;
    render_from_loaded(request, &loaded, machine)
}

/// Renders with an already-loaded config (the config fields of `request`
/// are not read again) and the given machine.
pub fn render_from_loaded(
    request: &RenderRequest,
    loaded: &LoadedConfig,
    machine: &dyn probe::Machine,
) -> Result<Rendered, RenderError> {
    render_inner(request, loaded, machine, None)
}

/// What a live session brings to a render: its registry (nothing is
/// discovered again), the blocks it loaded for its active skills (the prompt
/// carries exactly what its events recorded, arguments included, even for a
/// skill removed since), and how Bcode is running.
#[derive(Debug)]
pub struct SessionSkills {
    pub registry: SkillRegistry,
    /// In activation order.
    pub active: Vec<bcode_skill_models::SkillContextResponse>,
    pub runtime_mode: probe::RuntimeMode,
}

/// [`render_from_loaded`] for a live session; `request.skills` may add more
/// skills, loaded from the session's registry.
pub fn render_for_session(
    request: &RenderRequest,
    loaded: &LoadedConfig,
    machine: &dyn probe::Machine,
    session: &SessionSkills,
) -> Result<Rendered, RenderError> {
    render_inner(request, loaded, machine, Some(session))
}

fn render_inner(
    request: &RenderRequest,
    loaded: &LoadedConfig,
    machine: &dyn probe::Machine,
    session: Option<&SessionSkills>,
) -> Result<Rendered, RenderError> {
    let config = &loaded.config;
    let repo = request.cwd.join(&request.repo);

    let overrides = match loaded.templates_dir() {
        Some(dir) => read_overrides(&dir)?,
        None => Vec::new(),
    };
    let (skill_overrides, pipeline_overrides): (Vec<TemplateOverride>, Vec<TemplateOverride>) =
        overrides
            .into_iter()
            .partition(|o| o.name.starts_with(SKILL_TEMPLATE_PREFIX));
    let templates = Templates::new(
        &[PIPELINE_TEMPLATES, probe::TEMPLATES, TEMPLATES],
        pipeline_overrides,
    )?;
    let mut template_warnings = templates.warnings().to_vec();
    let (skill_templates, overridden) = skill_templates(skill_overrides, &mut template_warnings)?;

    let mut inputs = Inputs::new();
    let mut skill_diagnostics = Vec::new();
    // `skills.enabled = false` means no discovery at all.
    if config.skills.enabled {
        let registry = match session {
            Some(session) => session.registry.clone(),
            None => discover(&repo, &request.env, loaded),
        };
        check_active(&registry, &request.skills)?;
        skill_diagnostics = registry.diagnostics().to_vec();
        inputs.insert(SkillsInput {
            registry,
            templates: skill_templates,
            overridden,
        });
    } else if let Some(id) = request.skills.first() {
        return Err(RenderError::SkillsDisabled { id: id.clone() });
    }
    let preloaded = session.map_or(&[][..], |s| s.active.as_slice());
    inputs.insert(ActiveSkills::with_preloaded(&request.skills, preloaded));

    probe::gather_with(
        &probe::ProbeRequest {
            repo: &repo,
            env: &request.env,
            now: request.now,
            timezone: request.timezone,
            config,
            profile: None,
            runtime_mode: session.map_or(probe::RuntimeMode::Render, |s| s.runtime_mode),
        },
        machine,
        &probe::ProbeLimits::default(),
        &mut inputs,
    );
    if config.system_prompt.sections.repository_context {
        inputs.insert(crate::instructions::gather(&repo));
    }
    // `[invariants] enabled = false` is the master switch: no loading and no
    // stage, so not even an "omitted" line mentions invariants.
    let invariants_on = config.invariants.enabled;
    let relevant = invariants_on && config.invariants.mode == InvariantsMode::Relevant;
    if relevant {
        // Relevant mode ignores the `repository_invariants` toggle (it only
        // places the complete catalog in full mode).
        let catalog = crate::invariants::gather(&repo);
        let session_dir = request
            .session_dir
            .as_ref()
            .map(|dir| request.cwd.join(dir));
        let decision = relevant_decision(
            &config.invariants,
            &catalog,
            request.prompt.as_deref().unwrap_or_default(),
            session_dir.as_deref(),
        );
        inputs.insert(decision);
        inputs.insert(catalog);
    } else if invariants_on && config.system_prompt.sections.repository_invariants {
        inputs.insert(crate::invariants::gather(&repo));
    }

    let pipeline = Pipeline::new(stages_for_mode(invariants_on, relevant))?;
    let prompt = pipeline.assemble(&StageContext::new(config, &templates, &inputs))?;
    Ok(Rendered {
        prompt,
        config_warnings: loaded.warnings.clone(),
        skill_diagnostics,
        template_warnings,
    })
}

/// The full stage list: the base, the machine probes' stages and ours
/// (invariants in full mode).
pub fn stages(invariants_enabled: bool) -> Vec<Box<dyn Stage>> {
    stages_for_mode(invariants_enabled, false)
}

/// [`stages`] with the relevant-mode invariants stage when `relevant`.
pub fn stages_for_mode(invariants_enabled: bool, relevant: bool) -> Vec<Box<dyn Stage>> {
    let mut stages: Vec<Box<dyn Stage>> = vec![Box::new(BaseStage)];
    stages.extend(probe::stages());
    stages.push(Box::new(RepositoryContextStage));
    if invariants_enabled && relevant {
        stages.push(Box::new(FocusedInvariantsStage));
    } else if invariants_enabled {
        stages.push(Box::new(RepositoryInvariantsStage));
    }
    stages.push(Box::new(SkillCatalogStage));
    stages.push(Box::new(UserAuthorityStage));
    stages.push(Box::new(ActiveSkillStage));
    stages.push(Box::new(AgentSuffixStage));
    stages
}

/// Relevant mode for one render, with the deterministic selector (the CLI
/// has no model) driven through the same [`RelevantInvariants`] a session
/// host uses, on a small current-thread runtime.
///
/// With a session folder the render plays one prompt of a session: the
/// sidecar's focus is restored (so this prompt reuses it, as a reconnected
/// session would), the prompt is answered, the re-evaluation that follows
/// the final assistant turn runs to completion, and its focus is saved for
/// the next render. Without one, every render is a session's first prompt.
/// Sidecar problems become notes; nothing here fails the render.
pub fn relevant_decision(
    config: &InvariantsConfig,
    catalog: &InvariantCatalog,
    prompt: &str,
    session_dir: Option<&Path>,
) -> Decision {
    let mut sidecar_events = Vec::new();
    let restored = match session_dir.map(sidecar::load) {
        Some(Ok(state)) => state,
        Some(Err(problem)) => {
            sidecar_events.push(format!("session sidecar: {problem}"));
            None
        }
        None => None,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            let mut decision = Decision::fallback_without_runtime(&err.to_string());
            decision.events.extend(sidecar_events);
            return decision;
        }
    };
    let task = TaskContext::new(prompt, &[]);
    let (mut decision, focus) = runtime.block_on(async {
        let mut driver = RelevantInvariants::new(
            config.clone(),
            Arc::new(catalog.clone()),
            Arc::new(DeterministicSelector),
        );
        if let Some(state) = &restored {
            driver.restore(state);
        }
        let decision = driver.selection_for_prompt(&task).await;
        if session_dir.is_some() {
            driver.on_final_assistant_turn_committed(&task);
            driver.finish_background().await;
        }
        (decision, driver.focus_state())
    });
    decision.events.extend(sidecar_events);
    if let (Some(dir), Some(focus)) = (session_dir, focus) {
        match sidecar::save(dir, &focus) {
            Ok(()) => decision.events.push(format!(
                "session sidecar: saved focus #{} [{}] for the next prompt",
                focus.generation,
                focus.ids.join(", ")
            )),
            Err(problem) => decision.events.push(format!("session sidecar: {problem}")),
        }
    }
    decision
}

/// The registry's templates with the `skills/*.j2` overrides applied, and
/// which names were overridden by which file. Names the registry does not
/// use become warnings, like unknown pipeline overrides.
/// The registry's templates from `system_prompt.templates_dir` (its
/// `skills/*.j2` files; the rest belongs to the pipeline), with a warning for
/// every file there that names no template. The CLI's `skills` commands use
/// this too, so they see the same wording as a render.
pub fn skill_templates_from_config(
    loaded: &LoadedConfig,
) -> Result<(SkillTemplates, Vec<TemplateWarning>), RenderError> {
    let overrides = match loaded.templates_dir() {
        Some(dir) => read_overrides(&dir)?,
        None => Vec::new(),
    };
    let skill_overrides = overrides
        .into_iter()
        .filter(|o| o.name.starts_with(SKILL_TEMPLATE_PREFIX))
        .collect();
    let mut warnings = Vec::new();
    let (templates, _) = skill_templates(skill_overrides, &mut warnings)?;
    Ok((templates, warnings))
}

fn skill_templates(
    overrides: Vec<TemplateOverride>,
    warnings: &mut Vec<TemplateWarning>,
) -> Result<(SkillTemplates, BTreeMap<String, String>), RenderError> {
    let mut sources = BTreeMap::new();
    let mut files = BTreeMap::new();
    for TemplateOverride { name, file, source } in overrides {
        if bcode_skill::EMBEDDED_TEMPLATES
            .iter()
            .any(|(known, _)| *known == name)
        {
            sources.insert(name.clone(), source);
            files.insert(name, file);
        } else {
            warnings.push(TemplateWarning::UnknownTemplate { name, file });
        }
    }
    let templates = SkillTemplates::with_overrides(&sources).map_err(|error| {
        let file = files.get(&error.name).cloned().unwrap_or_default();
        RenderError::SkillTemplate { file, error }
    })?;
    Ok((templates, files))
}

/// The skill roots of `repo`, highest precedence first, from the config and
/// the injected environment (the CLI uses this too: one computation).
pub fn skill_roots(
    repo: &Path,
    env: &BTreeMap<String, String>,
    loaded: &LoadedConfig,
) -> Vec<SourceRoot> {
    let source_env = SourceEnv::from_vars(&|name| env.get(name).cloned());
    let configured: Vec<ConfiguredRoot> = loaded
        .configured_skill_roots()
        .into_iter()
        .map(|root| ConfiguredRoot {
            written: root.written,
            resolved: root.resolved,
        })
        .collect();
    source_roots(RootsInput {
        repo,
        env: &source_env,
        config: &loaded.config.skills,
        configured: &configured,
        bundled: &[],
    })
}

/// Discovers skills from the roots the config and the injected environment
/// name.
///
/// A one-shot render keeps its discovery in `<state dir>/cache/skills`
/// (`skills.disk_cache`), so the next one, with nothing changed, checks
/// stamps instead of reading every skill file.
fn discover(repo: &Path, env: &BTreeMap<String, String>, loaded: &LoadedConfig) -> SkillRegistry {
    let skills = &loaded.config.skills;
    let mut discovery = Discovery::new(DiscoveryOptions::from_config(skills));
    if skills.disk_cache
        && let Some(state) = SourceEnv::from_vars(&|name| env.get(name).cloned()).state_dir()
    {
        discovery = discovery.with_disk_cache(DiskCache::new(state.join("cache").join("skills")));
    }
    discovery.build(&skill_roots(repo, env, loaded))
}

/// Fails on the first `--skill` id the registry cannot serve.
fn check_active(registry: &SkillRegistry, ids: &[String]) -> Result<(), RenderError> {
    for id in ids {
        match registry.lookup(id) {
            Ok(_) => {}
            Err(SkillError::Disabled { id }) => return Err(RenderError::DisabledSkill { id }),
            Err(_) => {
                return Err(RenderError::UnknownSkill {
                    id: id.clone(),
                    suggestion: closest(id, registry.ids()).map(str::to_owned),
                });
            }
        }
    }
    Ok(())
}
