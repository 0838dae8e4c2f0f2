//! The opt-in `toolchain_context` stage: the versions of the tools that
//! answered, each line bounded.

use minijinja::value::Serde;
use minijinja::{Value, context};

use bcode_prompt_config::BcodeConfig;
use bcode_prompt_pipeline::{Section, SectionKind, Stage, StageContext, StageError, StageSpec};
use bcode_text::Limit;

use crate::gathered::{Gathered, need};
use crate::toolchain::{TOOLCHAIN_COMMANDS, TOOLCHAIN_TEMPLATE, ToolVersion, VERSION_LINE_LIMIT};

/// `toolchain_context`: the versions of the tools that answered.
#[derive(Clone, Copy, Debug, Default)]
pub struct ToolchainStage;

impl Stage<Gathered> for ToolchainStage {
    fn spec(&self) -> StageSpec {
        SectionKind::ToolchainContext.spec()
    }

    /// Applies to each version line.
    fn limit(&self, _config: &BcodeConfig) -> Option<Limit> {
        Some(VERSION_LINE_LIMIT)
    }
    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let facts = need(&cx.inputs.toolchain, "the toolchain versions")?;
        if facts.versions.is_empty() {
            return Ok(Vec::new());
        }
        let mut tools = Vec::with_capacity(facts.versions.len());
        let mut cuts = Vec::new();
        for tool in &facts.versions {
            let bounded = cx.bound(&tool.version, Some(VERSION_LINE_LIMIT), None)?;
            tools.push(ToolVersion {
                name: tool.name.clone(),
                version: bounded.text.clone(),
            });
            cuts.push(bounded);
        }
        let (text, usage) = cx.render(
            TOOLCHAIN_TEMPLATE,
            context! { tools => Value::from(Serde(tools)) },
        )?;
        let mut section =
            Section::new(SectionKind::ToolchainContext.name(), text).with_template(usage);
        for (tool, bounded) in facts.versions.iter().zip(&cuts) {
            let args = TOOLCHAIN_COMMANDS
                .iter()
                .find(|(name, _, _)| *name == tool.name)
                .map(|(_, program, args)| format!("{program} {}", args.join(" ")));
            section = section
                .with_source(args.as_deref().unwrap_or(&tool.name))
                .with_bounded(bounded);
        }
        for (name, why) in &facts.omitted {
            section = section.with_note(&format!("{name}: omitted ({})", why.describe()));
        }
        Ok(vec![section])
    }
}
