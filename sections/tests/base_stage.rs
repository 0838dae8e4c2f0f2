//! The base stage alone, on no inputs: the built-in `base.j2` in default
//! mode, an operator's override of it (used, reported, or failing with its
//! file and line), and `system_prompt.text` verbatim in replace mode.

use bcode_prompt_config::{BcodeConfig, PromptMode};
use bcode_prompt_pipeline::AssembledPrompt;
use bcode_prompt_pipeline::{AssembleError, Pipeline};
use bcode_prompt_pipeline::{StageContext, StageError};
use bcode_prompt_sections::BaseStage;
use bcode_templates::{EMBEDDED, TemplateOverride, Templates};
use serde_json::json;

fn templates() -> Templates {
    Templates::embedded(&[EMBEDDED]).unwrap()
}

/// The base stage alone, on no inputs.
fn assemble_base(
    config: &BcodeConfig,
    templates: &Templates,
) -> Result<AssembledPrompt, AssembleError> {
    let pipeline = Pipeline::new(vec![Box::new(BaseStage)]).unwrap();
    pipeline.assemble(&StageContext::new(config, templates, &()), false)
}

/// The built-in templates with `base.j2` overridden from `/ops/base.j2`.
fn base_override(source: &str) -> Templates {
    Templates::new(
        &[EMBEDDED],
        vec![TemplateOverride {
            name: "base.j2".into(),
            file: "/ops/base.j2".into(),
            source: source.into(),
        }],
    )
    .unwrap()
}

/// The config in replace mode with `text` as the replacement.
fn replace_with(text: &str) -> BcodeConfig {
    let mut config = BcodeConfig::default();
    config.system_prompt.mode = PromptMode::Replace;
    config.system_prompt.text = text.into();
    config
}

#[test]
fn default_mode_uses_the_built_in_base_template() {
    let config = BcodeConfig::default();
    let templates = templates();
    let prompt = assemble_base(&config, &templates).unwrap();
    let base = templates.render("base.j2", minijinja::context! {}).unwrap();
    assert!(base.starts_with("You are Bcode, a coding agent"), "{base}");
    assert_eq!(prompt.system, base.trim_end());
    assert_eq!(prompt.cache_boundary, prompt.system.len());
    assert_eq!(
        serde_json::to_value(&prompt.sections[0].template).unwrap(),
        json!({"name": "base.j2", "overridden": false})
    );
}

#[test]
fn base_template_override_is_used_and_reported() {
    let prompt = assemble_base(&BcodeConfig::default(), &base_override("Custom base.\n")).unwrap();
    assert_eq!(prompt.system, "Custom base.");
    assert_eq!(
        serde_json::to_value(&prompt.sections[0].template).unwrap(),
        json!({"name": "base.j2", "overridden": true, "file": "/ops/base.j2"})
    );
}

#[test]
fn a_broken_base_override_aborts_assembly_naming_file_and_line() {
    let templates = base_override("Line one.\nHello {{ user_name }}.\n");
    let err = assemble_base(&BcodeConfig::default(), &templates).unwrap_err();
    assert_eq!(
        err.to_string(),
        "section `base` failed: template `base.j2` overridden by /ops/base.j2 failed to render \
         at line 2: undefined value: `user_name` is undefined"
    );
}

#[test]
fn replace_mode_uses_the_text_verbatim() {
    let prompt = assemble_base(&replace_with("Be {{ brief }}."), &templates()).unwrap();
    assert_eq!(prompt.system, "Be {{ brief }}.");
}

#[test]
fn replace_mode_without_text_is_an_error() {
    for text in ["", "  \n\t"] {
        let err = assemble_base(&replace_with(text), &templates()).unwrap_err();
        assert_eq!(
            err,
            AssembleError::Stage {
                section: "base".into(),
                error: StageError::Config {
                    key: "system_prompt.text".into(),
                    message: "mode = \"replace\" needs a non-empty replacement prompt".into(),
                },
            }
        );
        assert_eq!(
            err.to_string(),
            "section `base` failed: invalid configuration `system_prompt.text`: \
             mode = \"replace\" needs a non-empty replacement prompt"
        );
    }
}
