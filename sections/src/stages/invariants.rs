//! The `repository_invariants` stages: the complete catalog (full mode,
//! bounded by `system_prompt.repository_invariants_max_chars` when set, the
//! cut marked in the text) and relevant mode's focused guidance, rendered
//! from the [`crate::relevant::Decision`] of the turn.

use bcode_text::{Limit, clean_body, clean_line};
use minijinja::context;

use bcode_prompt_config::BcodeConfig;
use bcode_prompt_pipeline::BoundedText;
use bcode_prompt_pipeline::{
    Section, SectionClass, SectionKind, Stage, StageContext, StageError, StageSpec,
};
use bcode_templates::TemplateUse;

use crate::gathered::{Gathered, need};
use crate::invariants::*;
use crate::relevant::{Guidance, Selection};

/// The invariants catalog.
#[derive(Clone, Copy, Debug, Default)]
pub struct RepositoryInvariantsStage;

impl Stage<Gathered> for RepositoryInvariantsStage {
    fn spec(&self) -> StageSpec {
        SectionKind::RepositoryInvariants.spec()
    }

    fn limit(&self, config: &BcodeConfig) -> Option<Limit> {
        config
            .system_prompt
            .repository_invariants_max_chars
            .map(Limit::Chars)
    }

    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let catalog = need(&cx.inputs.invariants, "the invariant catalog")?;
        let selected: Vec<&Invariant> = match &cx.inputs.invariant_selection {
            Some(InvariantSelection::Selected(ids)) => catalog
                .invariants
                .iter()
                .filter(|inv| ids.contains(&inv.id))
                .collect(),
            Some(InvariantSelection::Full) | None => catalog.invariants.iter().collect(),
        };
        if selected.is_empty() {
            if catalog.problems.is_empty() {
                return Ok(Vec::new());
            }
            let problems: Vec<String> = catalog.problems.iter().map(ToString::to_string).collect();
            return Err(StageError::Degraded {
                message: format!("no usable invariants: {}", problems.join("; ")),
            });
        }

        let section = catalog_section(cx, catalog, &selected, self.limit(cx.config))?;
        Ok(vec![section])
    }
}

/// The rendered `<invariant>` entries of `selected`, bounded by `limit`
/// (preferring cuts between whole invariants; the marker names the
/// directory with the full texts).
fn entries(
    cx: &StageContext<'_, Gathered>,
    catalog: &InvariantCatalog,
    selected: &[&Invariant],
    limit: Option<Limit>,
) -> Result<bcode_prompt_pipeline::BoundedText, StageError> {
    let mut entries = String::new();
    let mut entry_ends = Vec::with_capacity(selected.len());
    for inv in selected {
        // Neither the entry nor the catalog around it may be closed from
        // inside a body (`</invariant>` or `</repository_invariants>`).
        // Every value is the repository's, cleaned for the model first:
        // one-line facts with `clean_line`, the body with `clean_body`.
        let body = clean_body(&inv.body);
        let body = bcode_text::neutralize_closing_tag(&body, "invariant");
        let body = bcode_text::neutralize_closing_tag(&body, "repository_invariants").into_owned();
        let lines = |items: &[String]| -> Vec<String> {
            items
                .iter()
                .map(|item| clean_line(item).into_owned())
                .collect()
        };
        let (entry, _) = cx.render(
            INVARIANT_ENTRY_TEMPLATE,
            context! {
                id => clean_line(&inv.id),
                title => clean_line(&inv.title),
                summary => clean_line(&inv.summary),
                keywords => lines(&inv.keywords),
                paths => lines(&inv.paths),
                file => clean_line(&inv.file),
                body => body.as_str(),
            },
        )?;
        if !entries.is_empty() {
            entries.push_str("\n\n");
        }
        entries.push_str(&entry);
        entry_ends.push(entries.len());
    }
    cx.bound_at(&entries, limit, &entry_ends, Some(&catalog.directory))
}

/// The complete-catalog section (full mode, and the relevant-mode `full`
/// fallback).
fn catalog_section(
    cx: &StageContext<'_, Gathered>,
    catalog: &InvariantCatalog,
    selected: &[&Invariant],
    limit: Option<Limit>,
) -> Result<Section, StageError> {
    let bounded = entries(cx, catalog, selected, limit)?;
    let (text, template) = cx.render(
        INVARIANTS_TEMPLATE,
        context! {
            entries => &bounded.text,
            count => selected.len(),
            directory => INVARIANTS_DIR,
        },
    )?;
    let placed = format!("{} invariants placed", selected.len());
    Ok(invariants_section(
        text, template, &bounded, &placed, selected, catalog,
    ))
}

/// The invariants section of either mode: its text with what it placed,
/// the files it came from, whether the limit cut it, and the catalog's
/// problems.
fn invariants_section(
    text: String,
    template: TemplateUse,
    bounded: &BoundedText,
    placed: &str,
    selected: &[&Invariant],
    catalog: &InvariantCatalog,
) -> Section {
    let mut section = Section::new(SectionKind::RepositoryInvariants.name(), text)
        .with_template(template)
        .with_bounded(bounded)
        .with_note(placed);
    for inv in selected {
        section = section.with_source(&inv.file);
    }
    if bounded.truncation.is_some() {
        section = section.with_note("cut by system_prompt.repository_invariants_max_chars");
    }
    for problem in &catalog.problems {
        section = section.with_note(&problem.to_string());
    }
    section
}

/// Relevant mode's invariant guidance: renders the
/// [`crate::relevant::Decision`] the [`crate::relevant`] driver made for this
/// prompt (focused selection, complete catalog or nothing), with every step
/// of the decision as section notes.
///
/// Turn class: the focus may change from one prompt to the next, so it sits
/// after the cacheable prefix rather than invalidating it. No toggle: the
/// `repository_invariants` toggle places the complete catalog in full mode
/// only, and `[invariants] enabled` (checked by the render glue, which then
/// registers no stage at all) is the switch for both modes.
#[derive(Clone, Copy, Debug, Default)]
pub struct FocusedInvariantsStage;

impl Stage<Gathered> for FocusedInvariantsStage {
    fn spec(&self) -> StageSpec {
        SectionKind::RepositoryInvariants
            .spec()
            .with_class(SectionClass::Turn)
            .with_template(FOCUSED_TEMPLATE)
            .without_toggle()
    }

    fn limit(&self, config: &BcodeConfig) -> Option<Limit> {
        RepositoryInvariantsStage.limit(config)
    }

    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let catalog = need(&cx.inputs.invariants, "the invariant catalog")?;
        let decision = need(&cx.inputs.relevant, "the relevant-mode decision")?;
        if catalog.invariants.is_empty() {
            return RepositoryInvariantsStage.render(cx);
        }
        let mut section = match &decision.guidance {
            Guidance::Nothing => {
                return Err(StageError::Degraded {
                    message: format!(
                        "no invariant guidance this turn: {}",
                        decision.notes().join("; ")
                    ),
                });
            }
            Guidance::Catalog => {
                let all: Vec<&Invariant> = catalog.invariants.iter().collect();
                catalog_section(cx, catalog, &all, self.limit(cx.config))?
            }
            Guidance::Focused(selection) => {
                focused_section(cx, catalog, selection, self.limit(cx.config))?
            }
        };
        for note in decision.notes() {
            section = section.with_note(&note);
        }
        Ok(vec![section])
    }
}

/// The focused-guidance section: the selected invariants in full, in
/// catalog order, and the task summary when `include_task_summary`.
fn focused_section(
    cx: &StageContext<'_, Gathered>,
    catalog: &InvariantCatalog,
    selection: &Selection,
    limit: Option<Limit>,
) -> Result<Section, StageError> {
    let selected: Vec<&Invariant> = catalog
        .invariants
        .iter()
        .filter(|inv| selection.ids.contains(&inv.id))
        .collect();
    let bounded = entries(cx, catalog, &selected, limit)?;
    // The selector's words (or the prompt's first sentence), shown as one
    // line like every other fact.
    let task_summary = selection
        .task_summary
        .as_deref()
        .filter(|_| cx.config.invariants.include_task_summary)
        .map(clean_line);
    let (text, template) = cx.render(
        FOCUSED_TEMPLATE,
        context! {
            entries => &bounded.text,
            count => selected.len(),
            total => catalog.invariants.len(),
            directory => INVARIANTS_DIR,
            task_summary => task_summary,
        },
    )?;
    let placed = format!(
        "{} of {} invariants placed",
        selected.len(),
        catalog.invariants.len()
    );
    Ok(invariants_section(
        text, template, &bounded, &placed, &selected, catalog,
    ))
}
