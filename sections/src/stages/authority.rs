//! The `user_authority` stage: the instruction-precedence policy for explicit
//! user overrides (spec, "User overrides"). Static text from one template, on
//! by default and kept in replace mode: only its own toggle removes it.
//! Disabling skills does not touch it, because it is not a skill feature.

use minijinja::context;

use bcode_prompt_pipeline::{Section, SectionKind, Stage, StageContext, StageError, StageSpec};

use crate::gathered::Gathered;

/// The policy's template name.
pub const AUTHORITY_TEMPLATE: &str = "sections/user_authority.j2";

/// The instruction-precedence policy.
#[derive(Clone, Copy, Debug, Default)]
pub struct UserAuthorityStage;

impl Stage<Gathered> for UserAuthorityStage {
    fn spec(&self) -> StageSpec {
        SectionKind::UserAuthority.spec()
    }

    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let (text, template) = cx.render(AUTHORITY_TEMPLATE, context! {})?;
        Ok(vec![
            Section::new(SectionKind::UserAuthority.name(), text).with_template(template),
        ])
    }
}
