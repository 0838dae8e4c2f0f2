//! The historical tool-call fallback text: arguments bounded by
//! `model.tool_output.fallback_argument_chars`, stored arguments untouched.

// Test helpers may fail loudly too; clippy.toml only covers `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bcode_prompt_config::ToolOutputConfig;
use bcode_prompt_pipeline::fallback::format_tool_call;
use bcode_templates::{EMBEDDED, TemplateOverride, Templates};
use serde_json::json;

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
