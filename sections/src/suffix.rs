//! The `agent_suffix` stage: a short closing instruction block at the end of
//! the system text. Static, from one template.

use minijinja::context;

use bcode_prompt::stage::{Placement, Section, SectionClass, Stage, StageContext, StageError};

/// The suffix's template name.
pub const SUFFIX_TEMPLATE: &str = "sections/agent_suffix.j2";

/// The closing instructions.
#[derive(Clone, Copy, Debug, Default)]
pub struct AgentSuffixStage;

impl Stage for AgentSuffixStage {
    fn id(&self) -> &'static str {
        "agent_suffix"
    }

    fn class(&self) -> SectionClass {
        SectionClass::Static
    }

    fn placement(&self) -> Placement {
        Placement::System
    }

    fn template(&self) -> Option<&'static str> {
        Some(SUFFIX_TEMPLATE)
    }

    fn render(&self, cx: &StageContext<'_>) -> Result<Vec<Section>, StageError> {
        let (text, template) = cx.render(SUFFIX_TEMPLATE, context! {})?;
        Ok(vec![Section::new(self.id(), text).with_template(template)])
    }
}
