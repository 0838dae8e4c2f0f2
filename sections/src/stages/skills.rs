//! The skill stages: `skill_catalog` (the registry's model-visible catalog,
//! session class, system text) and `active_skill` (one request-only block per
//! activated skill, `active_skill:<id>` in activation order, each exactly as
//! the registry formats it, preceded once by a short guidance section with id
//! `active_skill`).
//!
//! The three ways to lose the catalog, each with only its own effect:
//! - `system_prompt.sections.skill_catalog = false`: the pipeline skips this
//!   stage; discovery still runs and active skill blocks still work;
//! - `skills.enabled = false`: the session does no discovery at all, the
//!   registry is empty, and asking for a skill is an error;
//! - `skills.prompt.catalog = "off"`: discovery runs, the catalog is empty,
//!   active skill blocks still work.
//!
//! Active skill blocks are loaded while gathering, before assembly: an
//! unknown, disabled or unloadable id is an error of the turn there (with a
//! did-you-mean), so the stage only formats what it is given.

use std::sync::Arc;

use bcode_text::Limit;
use minijinja::context;

use bcode_prompt_config::BcodeConfig;
use bcode_prompt_pipeline::{
    Section, SectionKind, SectionTruncation, Stage, StageContext, StageError, StageSpec,
};

use crate::gathered::Gathered;

/// The guidance placed once before active skill blocks.
pub const ACTIVE_SKILL_TEMPLATE: &str = "sections/skill_active.j2";

/// How the catalog size warning starts among the section's notes.
pub const WARNING_NOTE_PREFIX: &str = "warning: ";

/// Where the full catalog can be seen, for the truncation record.
const CATALOG_FULL_TEXT_AT: &str = "bcode-prompt skills list";

/// The model-visible skill catalog, formatted at gathering time (the
/// session keeps it while the registry is unchanged).
#[derive(Clone, Copy, Debug, Default)]
pub struct SkillCatalogStage;

impl Stage<Gathered> for SkillCatalogStage {
    fn spec(&self) -> StageSpec {
        SectionKind::SkillCatalog.spec()
    }

    fn limit(&self, config: &BcodeConfig) -> Option<Limit> {
        // The budget the catalog was formatted to, as the catalog reads it.
        bcode_skill::CatalogOptions::from_config(&config.skills)
            .max_bytes()
            .map(Limit::Bytes)
    }

    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        // No discovery happened, so there is nothing to list.
        let Some(catalog) = &cx.inputs.skill_catalog else {
            return Ok(Vec::new());
        };
        let kind = SectionKind::SkillCatalog;
        // The text is shown without a copy of its own, with the count the
        // catalog made once.
        let section = Section::shared(kind.name(), Arc::clone(&cx.inputs.skill_catalog_text))
            .with_char_count(catalog.chars());
        if section.text().is_empty() {
            return Ok(Vec::new());
        }
        let mut section = section
            .with_sources(&catalog.sources)
            .with_template(cx.templates.usage(kind.template()))
            .with_note(&format!(
                "listed {}, omitted {}",
                catalog.listed, catalog.omitted
            ));
        // Cut descriptions matter only when some entry made it into the
        // text: with nothing listed the note would describe nothing shown.
        if catalog.descriptions_cut > 0 && catalog.listed > 0 {
            section = section.with_note(&format!(
                "{} descriptions cut by skills.prompt.max_description_chars",
                catalog.descriptions_cut
            ));
        }
        if let Some(note) = catalog.shortened_note() {
            section = section.with_note(&note);
        }
        for warning in catalog.warnings() {
            // The warnings the turn carries (`Turn::catalog_warnings`), in
            // the report `--explain` and `--json` show.
            section = section.with_note(&format!("{WARNING_NOTE_PREFIX}{warning}"));
        }
        if let Some(truncation) = &catalog.truncation {
            section.truncations.push(SectionTruncation {
                truncation: truncation.clone(),
                full_text_at: Some(CATALOG_FULL_TEXT_AT.to_owned()),
            });
        }
        Ok(vec![section])
    }
}

/// The skills routed to the turn (`relevant_skills`, request-only): the
/// best matches of the relevance index for the turn's text and touched
/// paths, each entry as the catalog writes it, with why each ranked in the
/// section's notes (`render --explain`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RelevantSkillsStage;

impl Stage<Gathered> for RelevantSkillsStage {
    fn spec(&self) -> StageSpec {
        SectionKind::RelevantSkills.spec()
    }

    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let Some(routed) = &cx.inputs.relevant_skills else {
            return Ok(Vec::new());
        };
        if routed.hits.is_empty() {
            return Ok(Vec::new());
        }
        let kind = SectionKind::RelevantSkills;
        let (text, template) = cx.render(
            kind.template(),
            context! { entries => routed.entries.as_str() },
        )?;
        let mut section = Section::new(kind.name(), text)
            .with_template(template)
            .with_sources(&routed.sources);
        for hit in &routed.hits {
            section = section.with_note(&routed_note(hit));
        }
        Ok(vec![section])
    }
}

/// `routed <id> score <s> (<term>: <fields>; ...)`, the reason shown for
/// one routed skill.
fn routed_note(hit: &bcode_skill::SearchHit) -> String {
    let reasons: Vec<String> = hit
        .matched
        .iter()
        .map(|m| {
            let fields: Vec<&str> = m.fields.iter().map(|f| f.as_str()).collect();
            format!("{}: {}", m.term, fields.join(", "))
        })
        .collect();
    format!(
        "routed {} score {:.2} ({})",
        hit.id,
        hit.score,
        reasons.join("; ")
    )
}

/// The blocks of the active skills, each loaded before assembly (exactly
/// what the session's events recorded, arguments included).
#[derive(Clone, Copy, Debug, Default)]
pub struct ActiveSkillStage;

impl Stage<Gathered> for ActiveSkillStage {
    /// Active skills are asked for per request; no section toggle applies.
    fn spec(&self) -> StageSpec {
        SectionKind::ActiveSkill.spec()
    }

    fn limit(&self, config: &BcodeConfig) -> Option<Limit> {
        // The cap each block was cut to, as the session read it.
        bcode_skill::SkillSessionOptions::from_config(&config.skills)
            .max_context_bytes
            .map(Limit::Bytes)
    }

    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let active = &cx.inputs.active_skills;
        if active.is_empty() {
            return Ok(Vec::new());
        }
        let kind = SectionKind::ActiveSkill;
        let (guide, template) =
            cx.render(ACTIVE_SKILL_TEMPLATE, context! { count => active.len() })?;
        let mut sections = vec![Section::new(kind.name(), guide).with_template(template)];
        for response in active {
            let mut section = Section::new(
                &format!("{}:{}", kind.name(), response.id),
                response.text.clone(),
            )
            .with_template(cx.templates.usage(kind.template()))
            .with_source(&response.source.label);
            if let Some(location) = &response.location {
                section = section.with_source(&crate::instructions::model_path(location));
            }
            if let Some(truncation) = &response.truncation {
                // Reported like every other cut, so `--explain` and the JSON
                // say the block was truncated, by how much, and where the full
                // text lives.
                section.truncations.push(SectionTruncation {
                    truncation: truncation.clone(),
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
