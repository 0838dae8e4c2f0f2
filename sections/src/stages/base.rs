//! The `base` stage: the built-in coding-agent prompt (`base.j2`) in
//! `mode = "default"`, or `system_prompt.text` in `mode = "replace"`. Every
//! prompt has a base; it is the first stage of the canonical list. It reads
//! no gathered input, so it is a stage for any inputs (`Stage<I>`).

use minijinja::context;

use bcode_prompt_config::PromptMode;
use bcode_prompt_pipeline::{Section, SectionKind, Stage, StageContext, StageError, StageSpec};

/// The base template's name.
pub const BASE_TEMPLATE: &str = "base.j2";

/// The first section of every system prompt.
#[derive(Clone, Copy, Debug, Default)]
pub struct BaseStage;

impl<I> Stage<I> for BaseStage {
    /// The base cannot be switched off; `replace` mode changes its text.
    fn spec(&self) -> StageSpec {
        SectionKind::Base.spec()
    }

    fn render(&self, cx: &StageContext<'_, I>) -> Result<Vec<Section>, StageError> {
        let prompt = &cx.config.system_prompt;
        let section = match prompt.mode {
            PromptMode::Default => {
                let (text, template) = cx.render(BASE_TEMPLATE, context! {})?;
                Section::new(SectionKind::Base.name(), text).with_template(template)
            }
            // Replacement text is the operator's own prompt, used verbatim:
            // it is not a template, so `{{` in it stays literal. An empty
            // replacement is refused rather than silently producing a prompt
            // that has only sections.
            PromptMode::Replace if prompt.text.trim().is_empty() => {
                return Err(StageError::Config {
                    key: "system_prompt.text".to_owned(),
                    message: "mode = \"replace\" needs a non-empty replacement prompt".to_owned(),
                });
            }
            PromptMode::Replace => Section::new(SectionKind::Base.name(), prompt.text.clone())
                .with_source("system_prompt.text"),
        };
        Ok(vec![section])
    }
}
