//! A past tool call as plain text through the session: the session's
//! templates (an operator's override included) and its
//! `model.tool_output.fallback_argument_chars`, the stored arguments
//! untouched.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use bcode_prompt::PromptSession;
use common::{Repo, write};

#[test]
fn a_tool_call_is_text_bounded_by_the_sessions_config() {
    let repo = Repo::new();
    let arguments = serde_json::json!({ "content": "é".repeat(200) });
    let stored = arguments.clone();
    let session = PromptSession::open_blocking(
        repo.options()
            .set("model.tool_output.fallback_argument_chars=60"),
    )
    .unwrap();
    assert_eq!(
        session.tool_call_fallback("shell.run", &arguments).unwrap(),
        format!(
            "[Earlier tool call: shell.run]\nArguments: {{\"content\":\"{}\n[truncated: 197 of 214 characters omitted]",
            "é".repeat(5)
        )
    );
    assert_eq!(arguments, stored);
    // The default limit keeps small arguments whole.
    let session = PromptSession::open_blocking(repo.options()).unwrap();
    assert_eq!(
        session
            .tool_call_fallback("read", &serde_json::json!({"path": "src/lib.rs"}))
            .unwrap(),
        "[Earlier tool call: read]\nArguments: {\"path\":\"src/lib.rs\"}"
    );
}

#[test]
fn an_operators_template_words_the_fallback() {
    let repo = Repo::new();
    let templates = repo.home.join("templates");
    write(
        &templates.join("tool_call_fallback.j2"),
        "(called {{ name }} with {{ arguments }})",
    );
    let session = PromptSession::open_blocking(repo.options().set(format!(
        "system_prompt.templates_dir={:?}",
        templates.display().to_string()
    )))
    .unwrap();
    assert_eq!(
        session
            .tool_call_fallback("read", &serde_json::json!({"path": "a"}))
            .unwrap(),
        "(called read with {\"path\":\"a\"})"
    );
}
