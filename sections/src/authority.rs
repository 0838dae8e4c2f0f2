//! The `user_authority` stage: the instruction-precedence policy for explicit
//! user overrides (spec, "User overrides"). Static text from one template, on
//! by default and kept in replace mode: only its own toggle removes it.
//! Disabling skills does not touch it, because it is not a skill feature.

use minijinja::context;

use bcode_prompt::stage::{Placement, Section, SectionClass, Stage, StageContext, StageError};

/// The policy's template name.
pub const AUTHORITY_TEMPLATE: &str = "sections/user_authority.j2";

/// The instruction-precedence policy.
#[derive(Clone, Copy, Debug, Default)]
pub struct UserAuthorityStage;

impl Stage for UserAuthorityStage {
    fn id(&self) -> &'static str {
        "user_authority"
    }

    fn class(&self) -> SectionClass {
        SectionClass::Static
    }

    fn placement(&self) -> Placement {
        Placement::System
    }

    fn template(&self) -> Option<&'static str> {
        Some(AUTHORITY_TEMPLATE)
    }

    fn render(&self, cx: &StageContext<'_>) -> Result<Vec<Section>, StageError> {
        let (text, template) = cx.render(AUTHORITY_TEMPLATE, context! {})?;
        Ok(vec![Section::new(self.id(), text).with_template(template)])
    }
}
