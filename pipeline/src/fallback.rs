//! The bounded text form of a past tool call, for history that has to be
//! replayed as plain text. Arguments are bounded by
//! `model.tool_output.fallback_argument_chars` through the shared helper;
//! the stored arguments are only read, never changed.

use bcode_text::Limit;
use minijinja::context;

use crate::bounds;
use bcode_prompt_config::ToolOutputConfig;
use bcode_templates::{TemplateError, Templates};

/// The fallback template's name.
pub const FALLBACK_TEMPLATE: &str = "tool_call_fallback.j2";

/// Renders tool call `name` with `arguments` as fallback text. The
/// arguments appear as compact JSON (keys in the order the value holds
/// them), cut on a grapheme boundary with the truncation marker when they
/// exceed the configured number of characters.
pub fn format_tool_call(
    templates: &Templates,
    config: &ToolOutputConfig,
    name: &str,
    arguments: &serde_json::Value,
) -> Result<String, TemplateError> {
    let json = arguments.to_string();
    let limit = Some(Limit::Chars(config.fallback_argument_chars));
    let bounded = bounds::bound_text(templates, &json, limit, &[], None)?;
    templates.render(
        FALLBACK_TEMPLATE,
        context! {
            name,
            arguments => bounded.text,
            truncated => bounded.truncation.is_some(),
        },
    )
}
