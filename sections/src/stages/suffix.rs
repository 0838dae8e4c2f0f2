//! The `agent_suffix` stage: a short closing instruction block at the end of
//! the system text. Static, from one template.

use minijinja::context;

use bcode_prompt_pipeline::{Section, SectionKind, Stage, StageContext, StageError, StageSpec};

use crate::gathered::Gathered;

/// The suffix's template name.
pub const SUFFIX_TEMPLATE: &str = "sections/agent_suffix.j2";

/// The closing instructions.
#[derive(Clone, Copy, Debug, Default)]
pub struct AgentSuffixStage;

impl Stage<Gathered> for AgentSuffixStage {
    fn spec(&self) -> StageSpec {
        SectionKind::AgentSuffix.spec()
    }

    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let (text, template) = cx.render(SUFFIX_TEMPLATE, context! {})?;
        Ok(vec![
            Section::new(SectionKind::AgentSuffix.name(), text).with_template(template),
        ])
    }
}
