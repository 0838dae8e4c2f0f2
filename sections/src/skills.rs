//! The skill stages: `skill_catalog` (the registry's model-visible catalog,
//! session class, system text) and `active_skill` (one request-only block per
//! activated skill, `active_skill:<id>` in activation order, each exactly as
//! the registry formats it, preceded once by a short guidance section with id
//! `active_skill`).
//!
//! The three ways to lose the catalog, each with only its own effect:
//! - `system_prompt.sections.skill_catalog = false`: the pipeline skips this
//!   stage; discovery still runs and active skill blocks still work;
//! - `skills.enabled = false`: the render glue does no discovery at all, the
//!   registry is empty, and asking for a skill is an error;
//! - `skills.prompt.catalog = "off"`: discovery runs, the catalog is empty,
//!   active skill blocks still work.
//!
//! Unknown, disabled or unloadable active skill ids are fatal
//! ([`StageError::Config`] on key `skills.active`): the caller asked for a
//! skill and must not get a prompt silently missing it. The render glue
//! checks ids before assembly to give a did-you-mean; this is the backstop.

use std::collections::BTreeMap;

use bcode_skill::{CatalogOptions, SkillRegistry, SkillTemplates, format_catalog};
use bcode_skill_models::{SkillContextRequest, SkillContextResponse, SkillId};
use bcode_text::Limit;
use minijinja::context;

use bcode_prompt::config::BcodeConfig;
use bcode_prompt::stage::{
    Placement, Section, SectionClass, SectionTruncation, Stage, StageContext, StageError,
};
use bcode_prompt::templates::{TemplateError, TemplatePhase};

/// The guidance placed once before active skill blocks.
pub const ACTIVE_SKILL_TEMPLATE: &str = "sections/skill_active.j2";

/// Where the full catalog can be seen, for the truncation record.
const CATALOG_FULL_TEXT_AT: &str = "bcode-prompt skills list";

/// The discovered skills and the registry's templates (with overrides).
#[derive(Debug)]
pub struct SkillsInput {
    pub registry: SkillRegistry,
    pub templates: SkillTemplates,
    /// Override file per overridden skill template name, so a failure names
    /// the operator's file.
    pub overridden: BTreeMap<String, String>,
}

impl SkillsInput {
    fn template_error(&self, err: &bcode_skill::TemplateError) -> TemplateError {
        match self.overridden.get(&err.name) {
            Some(file) => TemplateError::Override {
                name: err.name.clone(),
                file: file.clone(),
                phase: TemplatePhase::Render,
                line: err.line,
                detail: err.message.clone(),
            },
            None => TemplateError::Builtin {
                name: err.name.clone(),
                phase: TemplatePhase::Render,
                line: err.line,
                detail: err.message.clone(),
            },
        }
    }
}

/// The skills activated for this request, in activation order, duplicates
/// removed (the first activation counts).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActiveSkills {
    pub ids: Vec<String>,
    /// Blocks a live session already loaded, by id: used as they are, so the
    /// prompt carries exactly what the session's events recorded (with the
    /// invocation arguments), even for a skill whose file has since vanished.
    pub preloaded: BTreeMap<String, SkillContextResponse>,
}

impl ActiveSkills {
    pub fn new(ids: &[String]) -> ActiveSkills {
        let mut out: Vec<String> = Vec::with_capacity(ids.len());
        for id in ids {
            if !out.contains(id) {
                out.push(id.clone());
            }
        }
        ActiveSkills {
            ids: out,
            preloaded: BTreeMap::new(),
        }
    }

    /// `ids` (loaded from the registry) followed by a session's loaded
    /// blocks, in activation order.
    pub fn with_preloaded(ids: &[String], loaded: &[SkillContextResponse]) -> ActiveSkills {
        let mut all: Vec<String> = ids.to_vec();
        all.extend(loaded.iter().map(|r| r.id.to_string()));
        let mut active = ActiveSkills::new(&all);
        for response in loaded {
            active
                .preloaded
                .entry(response.id.to_string())
                .or_insert_with(|| response.clone());
        }
        active
    }
}

/// The model-visible skill catalog.
#[derive(Clone, Copy, Debug, Default)]
pub struct SkillCatalogStage;

impl Stage for SkillCatalogStage {
    fn id(&self) -> &'static str {
        "skill_catalog"
    }

    fn class(&self) -> SectionClass {
        SectionClass::Session
    }

    fn placement(&self) -> Placement {
        Placement::System
    }

    fn template(&self) -> Option<&'static str> {
        Some("skills/catalog.j2")
    }

    fn limit(&self, config: &BcodeConfig) -> Option<Limit> {
        config.skills.prompt.max_bytes.map(Limit::Bytes)
    }

    fn render(&self, cx: &StageContext<'_>) -> Result<Vec<Section>, StageError> {
        // No discovery happened, so there is nothing to list.
        if !cx.config.skills.enabled {
            return Ok(Vec::new());
        }
        let skills = cx.require::<SkillsInput>()?;
        let options = CatalogOptions {
            prompt: &cx.config.skills.prompt,
            user_skills_enabled: cx.config.skills.include_user_skills,
        };
        let catalog = format_catalog(skills.registry.skills(), options, &skills.templates)
            .map_err(|err| StageError::Template(skills.template_error(&err)))?;
        if catalog.text.is_empty() {
            return Ok(Vec::new());
        }
        let mut section = Section::new(self.id(), catalog.text)
            .with_template(cx.templates.usage("skills/catalog.j2"))
            .with_note(&format!(
                "listed {}, omitted {}",
                catalog.listed, catalog.omitted
            ));
        // The pipeline's template set does not hold the registry's templates,
        // so report their override status from our own record.
        if let Some(template) = &mut section.template {
            template.file = skills.overridden.get("skills/catalog.j2").cloned();
            template.overridden = template.file.is_some();
        }
        if catalog.descriptions_cut > 0 {
            section = section.with_note(&format!(
                "{} descriptions cut by skills.prompt.max_description_chars",
                catalog.descriptions_cut
            ));
        }
        if let Some(truncation) = catalog.truncation {
            section.truncations.push(SectionTruncation {
                truncation,
                full_text_at: Some(CATALOG_FULL_TEXT_AT.to_owned()),
            });
        }
        Ok(vec![section])
    }
}

/// The blocks of explicitly activated skills.
#[derive(Clone, Copy, Debug, Default)]
pub struct ActiveSkillStage;

impl Stage for ActiveSkillStage {
    fn id(&self) -> &'static str {
        "active_skill"
    }

    /// Active skills are asked for per request; no section toggle applies.
    fn toggle(&self) -> Option<&'static str> {
        None
    }

    fn class(&self) -> SectionClass {
        SectionClass::Turn
    }

    fn placement(&self) -> Placement {
        Placement::RequestContext
    }

    fn template(&self) -> Option<&'static str> {
        Some("skills/context.j2")
    }

    fn limit(&self, config: &BcodeConfig) -> Option<Limit> {
        config.skills.max_context_bytes.map(Limit::Bytes)
    }

    fn render(&self, cx: &StageContext<'_>) -> Result<Vec<Section>, StageError> {
        let Some(active) = cx.inputs.get::<ActiveSkills>() else {
            return Ok(Vec::new());
        };
        if active.ids.is_empty() {
            return Ok(Vec::new());
        }
        let fatal = |message: String| StageError::Config {
            key: "skills.active".to_owned(),
            message,
        };
        let skills = cx.inputs.get::<SkillsInput>().ok_or_else(|| {
            fatal("skills were requested but skills.enabled = false (no discovery ran)".into())
        })?;
        let (guide, template) = cx.render(
            ACTIVE_SKILL_TEMPLATE,
            context! { count => active.ids.len() },
        )?;
        let mut sections = vec![Section::new(self.id(), guide).with_template(template)];
        for id in &active.ids {
            let skill_id = SkillId::parse(id)
                .map_err(|err| fatal(format!("`{id}` is not a valid skill id: {err}")))?;
            let response = match active.preloaded.get(id) {
                Some(response) => response.clone(),
                None => {
                    let request = SkillContextRequest {
                        id: skill_id,
                        arguments: Vec::new(),
                        max_bytes: cx.config.skills.max_context_bytes,
                        preview_max_chars: cx.config.skills.preview_max_chars,
                    };
                    skills
                        .registry
                        .context(&request, &skills.templates)
                        .map_err(|err| fatal(err.to_string()))?
                }
            };
            let mut section = Section::new(&format!("{}:{id}", self.id()), response.text)
                .with_template(cx.templates.usage("skills/context.j2"))
                .with_source(&response.source.label);
            if let Some(location) = &response.location {
                section = section.with_source(&crate::instructions::model_path(location));
            }
            if let Some(template) = &mut section.template {
                template.file = skills.overridden.get("skills/context.j2").cloned();
                template.overridden = template.file.is_some();
            }
            if let Some(truncation) = response.truncation {
                // Reported like every other cut, so `--explain` and the JSON
                // say the block was truncated, by how much, and where the full
                // text lives.
                section.truncations.push(SectionTruncation {
                    truncation,
                    full_text_at: response
                        .location
                        .as_deref()
                        .map(crate::instructions::model_path),
                });
                section = section.with_note("body cut by skills.max_context_bytes");
            }
            sections.push(section);
        }
        Ok(sections)
    }
}
