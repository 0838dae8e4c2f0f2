//! The `repository_context` stage: one section per repository instruction
//! file (`BCODE.md`, `AGENTS.md`), each bounded by
//! `system_prompt.repository_instructions_max_chars` when set, and all of
//! them by `system_prompt.repository_instructions_total_max_chars` (see
//! [`TotalBudget`]).

use bcode_text::{Limit, clean_body, clean_line};
use minijinja::context;

use bcode_prompt_config::BcodeConfig;
use bcode_prompt_pipeline::{Section, SectionKind, Stage, StageContext, StageError, StageSpec};

use crate::gathered::{Gathered, need};
use crate::instructions::{
    INSTRUCTIONS_TEMPLATE, InstructionLimits, Share, TOTAL_KEY, TotalBudget,
};

/// Repository instructions.
#[derive(Clone, Copy, Debug, Default)]
pub struct RepositoryContextStage;

impl Stage<Gathered> for RepositoryContextStage {
    fn spec(&self) -> StageSpec {
        SectionKind::RepositoryContext.spec()
    }

    fn limit(&self, config: &BcodeConfig) -> Option<Limit> {
        config
            .system_prompt
            .repository_instructions_max_chars
            .map(Limit::Chars)
    }

    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let gathered = need(&cx.inputs.instructions, "the repository instructions")?;
        let limit = self.limit(cx.config);
        let mut budget = TotalBudget::new(InstructionLimits::from_config(&cx.config.system_prompt));
        let mut sections = Vec::with_capacity(gathered.files.len());
        let mut past_total = Vec::new();
        for file in &gathered.files {
            // The limit applies to the file's own text, so the framing and
            // the marker never eat into another file's share.
            // The text is cleaned for the model before it is cut, so the
            // limit counts what the model sees; the path (the repository's
            // folder names) is cleaned as a one-line fact.
            let text = clean_body(&file.text);
            let share = budget.take(text.chars().count());
            let limit = match share {
                Share::Own => limit,
                Share::CutByTotal(left) => Some(Limit::Chars(left)),
                Share::PastTotal => {
                    // Gather keeps the same account and reads no such file;
                    // a config changed in between is the only way here.
                    past_total.push(format!(
                        "{} was left out: the instructions before it fill {TOTAL_KEY} ({} characters)",
                        file.name, cx.config.system_prompt.repository_instructions_total_max_chars
                    ));
                    continue;
                }
            };
            let bounded = cx.bound(&text, limit, Some(&file.path))?;
            let text = bcode_text::neutralize_closing_tag(&bounded.text, "repository_instructions");
            let (rendered, template) = cx.render(
                INSTRUCTIONS_TEMPLATE,
                context! {
                    name => clean_line(&file.name),
                    folder => clean_line(&file.folder),
                    path => clean_line(&file.path),
                    text => text.trim_end(),
                },
            )?;
            let mut section = Section::new(
                &format!("{}:{}", SectionKind::RepositoryContext.name(), file.name),
                rendered,
            )
            .with_source(&file.path)
            .with_template(template)
            .with_bounded(&bounded);
            if bounded.truncation.is_some() {
                section = section.with_note(match share {
                    Share::CutByTotal(_) => {
                        "cut by system_prompt.repository_instructions_total_max_chars"
                    }
                    _ => "cut by system_prompt.repository_instructions_max_chars",
                });
            }
            sections.push(section);
        }
        let problems: Vec<&String> = gathered.problems.iter().chain(&past_total).collect();
        if let (Some(first), false) = (sections.first_mut(), problems.is_empty()) {
            for problem in problems {
                first.notes.push(problem.clone());
            }
        } else if sections.is_empty() && !problems.is_empty() {
            return Err(StageError::Degraded {
                message: problems
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
            });
        }
        Ok(sections)
    }
}
