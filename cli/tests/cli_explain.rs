//! What `render` tells the operator about the prompt: `--explain` in
//! English, and a warning when a limit leaves a section nothing but its
//! truncation marker.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::process::Output;

use common::{Sandbox, write};

fn render(sandbox: &Sandbox, args: &[&str]) -> Output {
    let out = sandbox
        .command()
        .args(["render", "--now", "2026-07-01T10:00:00Z"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn sandbox_with_instructions() -> Sandbox {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join("AGENTS.md"),
        &format!(
            "Run the tests before you finish.\n{}",
            "Keep commits small.\n".repeat(10)
        ),
    );
    sandbox
}

#[test]
fn a_limit_smaller_than_the_marker_shows_the_marker_and_warns() {
    let sandbox = sandbox_with_instructions();
    let out = render(
        &sandbox,
        &[
            "--set",
            "system_prompt.repository_instructions_max_chars=10",
        ],
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let agents = sandbox.repo.join("AGENTS.md");
    assert!(
        stdout.contains(&format!(
            "\n[truncated: 233 of 233 characters omitted; full text: {}]",
            agents.display()
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("Keep commits small."), "{stdout}");
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "bcode-prompt: warning: the limit of 10 characters on section \
         `repository_context:AGENTS.md` leaves none of its 233 characters: the model sees \
         only the truncation marker (raise the limit; `render --explain` shows every cut)\n"
    );

    // A limit that keeps something warns about nothing.
    let out = render(
        &sandbox,
        &[
            "--set",
            "system_prompt.repository_instructions_max_chars=140",
        ],
    );
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("Run the tests before you finish.\nKeep commits small.\n")
            && stdout.contains(" of 233 characters omitted; full text: "),
        "{stdout}"
    );
}
