//! `--help` answers the operator's questions: every command documents its
//! arguments, exit codes and the environment it reads; `render --help`
//! lists every section id; flags appear only where they apply.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use bcode_prompt_pipeline::SectionKind;
use common::{Sandbox, binary, succeed, succeed_stdout};

/// The help text of `args` (run with an empty environment).
fn help(args: &[&str]) -> String {
    succeed_stdout(binary().args(args).arg("--help"))
}

/// Every command with its own help, leaves and groups alike.
const COMMANDS: [&[&str]; 14] = [
    &[],
    &["skills"],
    &["skills", "list"],
    &["skills", "show"],
    &["skills", "doctor"],
    &["skills", "catalog"],
    &["skills", "context"],
    &["config"],
    &["config", "show"],
    &["config", "explain"],
    &["config", "schema"],
    &["render"],
    &["diff"],
    &["session"],
];

#[test]
fn render_help_lists_every_section_id() {
    let text = help(&["render"]);
    let table = text
        .split_once("Section ids")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no section table:\n{text}"));
    for kind in SectionKind::ALL {
        assert!(
            table
                .lines()
                .any(|line| line.split_whitespace().next() == Some(kind.name())),
            "`{}` missing from render --help:\n{text}",
            kind.name()
        );
    }
}

#[test]
fn diff_help_has_no_repository_flags_and_documents_its_arguments() {
    let text = help(&["diff"]);
    for flag in ["--repo", "--config", "--set"] {
        assert!(!text.contains(flag), "{flag} in diff --help:\n{text}");
    }
    assert!(
        text.contains("Usage: bcode-prompt diff <A.json> <B.json>"),
        "{text}"
    );
    assert!(
        text.contains("<A.json>  The earlier render, saved from `render --json`"),
        "{text}"
    );
    assert!(
        text.contains("<B.json>  The later render, saved from `render --json`"),
        "{text}"
    );
    assert!(
        text.contains(
            "Exit codes:\n  0  the two renders are identical\n  1  they differ\n  2  trouble"
        ),
        "{text}"
    );
    assert!(
        text.contains("Environment:\n  none: the two files are all this command reads"),
        "{text}"
    );
}

#[test]
fn every_command_documents_exit_codes_and_environment() {
    for command in COMMANDS {
        let text = help(command);
        assert!(
            text.contains("\nExit codes:\n  0  "),
            "{command:?}:\n{text}"
        );
        assert!(text.contains("\nEnvironment:\n  "), "{command:?}:\n{text}");
        if command != ["diff"] {
            for name in [
                "HOME",
                "XDG_CONFIG_HOME",
                "XDG_STATE_HOME",
                "BCODE_STATE_DIR",
            ] {
                assert!(
                    text.contains(&format!("\n  {name} ")),
                    "{command:?} does not name {name}:\n{text}"
                );
            }
            assert!(
                text.contains("--repo <DIR>") && text.contains("--set <KEY=VALUE>"),
                "{command:?} does not show the layer flags:\n{text}"
            );
        }
    }
    // The commands that render a prompt also read the machine's variables.
    for command in [&["render"][..], &["session"]] {
        let text = help(command);
        for name in ["TZ", "SHELL", "LANG", "SSH_CONNECTION", "GITHUB_ACTIONS"] {
            assert!(text.contains(name), "{command:?} does not name {name}");
        }
    }
    assert!(help(&["skills", "doctor"]).contains("  1  --strict and at least one error-level"));
}

#[test]
fn every_argument_has_help_text() {
    for command in COMMANDS {
        let text = help(command);
        // clap prints an argument without help as its name alone on the line.
        let sections = ["Arguments:\n", "Options:\n"];
        for section in sections {
            let Some((_, rest)) = text.split_once(section) else {
                continue;
            };
            for line in rest.lines().take_while(|line| !line.is_empty()) {
                let line = line.trim_start();
                if !line.starts_with('-') && !line.starts_with('<') && !line.starts_with('[') {
                    continue; // a wrapped help line
                }
                let words: Vec<&str> = line.split_whitespace().collect();
                let described = words
                    .iter()
                    .position(|w| !w.starts_with('-') && !w.starts_with('<') && !w.starts_with('['))
                    .is_some_and(|i| i < words.len());
                assert!(described, "{command:?}: `{line}` has no help");
            }
        }
    }
}

#[test]
fn repository_flags_are_refused_by_diff_and_accepted_after_render() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(&sandbox.repo).unwrap();
    // `Sandbox::command` puts `--repo` before the command.
    let out = sandbox
        .command()
        .args(["diff", "a.json", "b.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "bcode-prompt: --repo, --config and --set do not apply to `diff`: it compares two saved renders\n"
    );
    // After the command they are refused by the parser itself.
    let out = binary()
        .args(["diff", "a.json", "b.json", "--set", "x=1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unexpected argument '--set'"));

    // `render --repo DIR --set ...` works as well as the flags before it.
    let out = succeed(
        binary()
            .env("HOME", &sandbox.home)
            .env("BCODE_STATE_DIR", &sandbox.state)
            .args(["render", "--now", "2026-07-01T10:00:00Z", "--repo"])
            .arg(&sandbox.repo)
            .args([
                "--set",
                "system_prompt.sections.user_authority=false",
                "--json",
            ]),
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let omitted = doc["omitted"].as_array().unwrap();
    assert!(
        omitted
            .iter()
            .any(|o| o["id"] == "user_authority" && o["reason"] == "disabled"),
        "{doc}"
    );
}
