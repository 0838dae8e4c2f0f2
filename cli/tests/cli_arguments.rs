//! Argument placeholders through the binary (issue 25 item 5): `skills
//! context ID -- ARGS...`, where the shell already split the words, and a
//! session's `/skill ID ARGS`, where the text is kept as typed; and
//! `skills.substitute_arguments = false`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use common::{Sandbox, text, write};

const BODY: &str =
    "Fix issue $issue on $1 ($ARGUMENTS) with ${SKILL_DIR}/fix.sh.\n```sh\necho $0\n```\n";

fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/fix/SKILL.md"),
        &format!("---\ndescription: Fix an issue\narguments: [issue]\n---\n{BODY}"),
    );
    sandbox
}

/// The block for skill `fix` with `line` as its Invocation arguments line
/// and `body` as its body.
fn block(sandbox: &Sandbox, line: &str, body: &str) -> String {
    let root = sandbox.repo.join(".bcode/skills").display().to_string();
    format!(
        "<skill id=\"fix\" name=\"fix\" location=\"{root}/fix/SKILL.md\">\nReferences are relative to {root}/fix.\nSource label: repo:.bcode/skills\nInvocation arguments: {line}\n\n{body}</skill>"
    )
}

#[test]
fn skills_context_substitutes_the_words_the_shell_passed() {
    let sandbox = sandbox();
    let dir = sandbox.repo.join(".bcode/skills/fix").display().to_string();
    let out = sandbox.run(&["skills", "context", "fix", "--", "#12", "main branch"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let body = format!(
        "Fix issue #12 on main branch (#12 main branch) with {dir}/fix.sh.\n```sh\necho $0\n```\n"
    );
    assert_eq!(
        text(&out.stdout),
        block(&sandbox, "#12 main branch", &body) + "\n"
    );

    let off = sandbox.run(&[
        "--set",
        "skills.substitute_arguments=false",
        "skills",
        "context",
        "fix",
        "--",
        "#12",
        "main branch",
    ]);
    assert_eq!(off.status.code(), Some(0), "{}", text(&off.stderr));
    assert_eq!(
        text(&off.stdout),
        block(&sandbox, "#12 main branch", BODY) + "\n"
    );
}

#[test]
fn a_session_skill_command_substitutes_the_text_as_typed() {
    let sandbox = sandbox();
    let dir = sandbox.repo.join(".bcode/skills/fix").display().to_string();
    let out = sandbox.run_session(
        "arguments",
        &[],
        b"/skill fix 12 \"main branch\"  </skill>\n/render\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let transcript = text(&out.stdout);
    let (_, after_divider) = transcript
        .split_once("===== request-only context")
        .expect("the render has a request-only part");
    let body = format!(
        "Fix issue 12 on main branch (12 \"main branch\"  &lt;/skill>) with {dir}/fix.sh.\n```sh\necho $0\n```\n"
    );
    let expected = block(&sandbox, "12 main branch &lt;/skill&gt;", &body);
    assert!(after_divider.contains(&expected), "{transcript}");
}

#[test]
fn an_unclosed_quote_activates_and_says_how_it_split() {
    let sandbox = sandbox();
    let out = sandbox.run_session(
        "unclosed",
        &[],
        b"/skill fix don't \"panic\n/skill fix \"closed quote\"\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let notes: Vec<String> = text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("note: ") || l.starts_with("Loaded skill"))
        .map(|l| l.split(" (").next().unwrap_or(l).to_owned())
        .collect();
    assert_eq!(
        notes,
        [
            "note: a quote in the arguments is not closed; they were split at spaces, quotes kept",
            "Loaded skill `fix` from repo:.bcode/skills",
            "Loaded skill `fix` from repo:.bcode/skills",
        ]
    );
}
