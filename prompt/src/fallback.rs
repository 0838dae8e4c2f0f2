//! The bounded text form of a past tool call, for history that has to be
//! replayed as plain text. Arguments are bounded by
//! `model.tool_output.fallback_argument_chars` through the shared helper;
//! the stored arguments are only read, never changed. Its one user is
//! [`crate::PromptSession::tool_call_fallback`].

use bcode_prompt_config::ToolOutputConfig;
use bcode_prompt_pipeline::bound_text;
use bcode_templates::{TemplateError, Templates};
use bcode_text::Limit;
use minijinja::context;

/// The fallback template's name.
const FALLBACK_TEMPLATE: &str = "tool_call_fallback.j2";

/// Renders tool call `name` with `arguments` as fallback text. The
/// arguments appear as compact JSON (keys in the order the value holds
/// them), cut on a grapheme boundary with the truncation marker when they
/// exceed the configured number of characters.
pub(crate) fn format_tool_call(
    templates: &Templates,
    config: &ToolOutputConfig,
    name: &str,
    arguments: &serde_json::Value,
) -> Result<String, TemplateError> {
    let json = arguments.to_string();
    let limit = Some(Limit::Chars(config.fallback_argument_chars));
    let bounded = bound_text(templates, &json, limit, &[], None)?;
    templates.render(
        FALLBACK_TEMPLATE,
        context! {
            name,
            arguments => bounded.text,
            truncated => bounded.truncation.is_some(),
        },
    )
}

#[cfg(test)]
mod tests {
    use bcode_prompt_config::ToolOutputConfig;
    use bcode_templates::{EMBEDDED, TemplateOverride, Templates};
    use serde_json::json;

    use super::format_tool_call;

    fn check(chars: usize, arguments: &serde_json::Value, expected: &str) {
        let templates = Templates::embedded(&[EMBEDDED]).unwrap();
        let config = ToolOutputConfig {
            fallback_argument_chars: chars,
        };
        let before = arguments.clone();
        let out = format_tool_call(&templates, &config, "shell.run", arguments).unwrap();
        assert_eq!(out, expected);
        assert_eq!(arguments, &before);
    }

    #[test]
    fn small_arguments_are_shown_whole() {
        check(
            6000,
            &json!({"command": "cargo test", "cwd": "/repo"}),
            "[Earlier tool call: shell.run]\nArguments: {\"command\":\"cargo test\",\"cwd\":\"/repo\"}",
        );
        assert_eq!(ToolOutputConfig::default().fallback_argument_chars, 6000);
    }

    #[test]
    fn large_arguments_are_bounded_by_chars_with_the_marker() {
        let content = "é".repeat(200);
        // JSON is {"content":"ééé…"}: 14 + 200 = 214 chars. The marker takes 43,
        // leaving 17: the 12 chars of `{"content":"` and five é.
        check(
            60,
            &json!({ "content": content }),
            &format!(
                "[Earlier tool call: shell.run]\nArguments: {{\"content\":\"{}\n[truncated: 197 of 214 characters omitted]",
                "é".repeat(5)
            ),
        );
    }

    #[test]
    fn the_prose_comes_from_an_overridable_template() {
        let templates = Templates::new(
            &[EMBEDDED],
            vec![TemplateOverride {
                name: "tool_call_fallback.j2".into(),
                file: "/ops/tool_call_fallback.j2".into(),
                source: "{{ name }}({{ arguments }}) {{ 'cut' if truncated else 'whole' }}".into(),
            }],
        )
        .unwrap();
        let config = ToolOutputConfig {
            fallback_argument_chars: 6000,
        };
        let out = format_tool_call(&templates, &config, "read", &json!({"path": "a<b"})).unwrap();
        assert_eq!(out, "read({\"path\":\"a<b\"}) whole");
    }
}
