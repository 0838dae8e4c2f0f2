//! What `render` tells the operator about the prompt: `--explain` in
//! English, and a warning when a limit leaves a section nothing but its
//! truncation marker.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::path::Path;
use std::process::Output;

use common::{Sandbox, succeed, succeed_stdout, write};

fn render(sandbox: &Sandbox, args: &[&str]) -> Output {
    succeed(
        sandbox
            .command()
            .args(["render", "--now", "2026-07-01T10:00:00Z"])
            .args(args),
    )
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

/// `render --explain` run from inside the repository as `--repo .`, with a
/// repository config that turns the locale off, a user skill activated and
/// a catalog bound that leaves no skill listed.
fn explain_from_inside(sandbox: &Sandbox, extra: &[&str]) -> String {
    succeed_stdout(
        sandbox
            .command_in(Path::new("."))
            .env("TZ", "UTC")
            .current_dir(&sandbox.repo)
            .args(["render", "--explain", "--now", "2026-07-01T10:00:00Z"])
            .args(extra),
    )
}

fn explain_sandbox() -> Sandbox {
    let sandbox = sandbox_with_instructions();
    write(
        &sandbox.repo.join(".bcode/bcode.toml"),
        "[system_prompt.sections]\nlocale = false\n",
    );
    write(
        &sandbox.repo.join(".bcode/skills/alpha/SKILL.md"),
        "---\ndescription: Alpha skill for the repository\n---\nAlpha body\n",
    );
    write(
        &sandbox.home.join(".config/bcode/skills/beta/SKILL.md"),
        "---\ndescription: Beta skill from the home\n---\nBeta body\n",
    );
    sandbox
}

/// The row of section `id`, split into its columns.
fn row<'a>(report: &'a str, id: &str) -> Vec<&'a str> {
    report
        .lines()
        .find(|line| line.split_whitespace().next() == Some(id))
        .unwrap_or_else(|| panic!("no row for `{id}`:\n{report}"))
        .split_whitespace()
        .collect()
}

#[test]
fn explain_reads_as_english_with_relative_paths() {
    let sandbox = explain_sandbox();
    let report = explain_from_inside(&sandbox, &["--skill", "beta"]);
    // Never an absolute path of the sandbox, never JSON.
    let base = sandbox.base.display().to_string();
    assert!(!report.contains(&base), "{report}");
    assert!(!report.contains('{'), "{report}");
    assert!(!report.contains("/./"), "{report}");

    assert_eq!(
        report
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>(),
        [
            "section", "part", "class", "bytes", "tokens", "cut", "sources"
        ]
    );
    assert_eq!(row(&report, "repository_context:AGENTS.md")[6], "AGENTS.md");
    // The catalog names the sources of the skills it lists, strongest first
    // (it read `-`).
    assert_eq!(
        row(&report, "skill_catalog")[6..],
        ["repo:.bcode/skills,", "user-config:skills"]
    );
    assert_eq!(
        row(&report, "active_skill:beta")[6..],
        [
            "user-config:skills,",
            "~/.config/bcode/skills/beta/SKILL.md"
        ]
    );
    // Every row has a token count (`-` in a build without the tokenizer).
    for line in report.lines().skip(1).take_while(|l| !l.is_empty()) {
        let cells: Vec<&str> = line.split_whitespace().collect();
        let counted = cells[4].parse::<usize>().is_ok();
        assert!(
            counted == cfg!(feature = "tokens") || cells[4] == "-",
            "{line}"
        );
    }
    assert!(
        report
            .lines()
            .any(|l| l
                == "  locale                           disabled by system_prompt.sections.locale"),
        "{report}"
    );
    let mut parts = vec![
        "cacheable prefix (system text before the cache boundary, byte ",
        "request-only context: ",
    ];
    if cfg!(feature = "tokens") {
        parts.extend([
            "system text after the boundary (changes per turn): 0 bytes, 0 tokens",
            "(tokens are estimates with the o200k_base encoding",
        ]);
    }
    for part in parts {
        assert!(report.contains(part), "`{part}` missing:\n{report}");
    }
}

#[test]
fn explain_marks_a_marker_only_cut_and_notes_nothing_about_unlisted_skills() {
    let sandbox = explain_sandbox();
    let report = explain_from_inside(
        &sandbox,
        &[
            "--set",
            "system_prompt.repository_instructions_max_chars=5",
            "--set",
            "skills.prompt.max_description_chars=3",
            "--set",
            "skills.prompt.max_bytes=500",
        ],
    );
    assert_eq!(
        row(&report, "repository_context:AGENTS.md")[5..7],
        ["marker", "only"]
    );
    assert!(!report.contains("descriptions cut"), "{report}");
    assert!(
        report.contains("skill_catalog: listed 0, omitted 2"),
        "{report}"
    );
}

#[test]
fn columns_hold_for_ids_longer_than_the_id_column() {
    let sandbox = explain_sandbox();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    let nested = "web/src/app/(dashboard)/settings/billing";
    write(
        &sandbox.repo.join(nested).join("AGENTS.md"),
        "Bill in cents.\n",
    );
    let report = succeed_stdout(
        sandbox
            .command_in(&sandbox.repo.join(nested))
            .env("TZ", "UTC")
            .args(["render", "--explain", "--now", "2026-07-01T10:00:00Z"]),
    );
    let long = format!("repository_context:{nested}/AGENTS.md");
    assert!(long.len() > 34, "{long}");
    let table: Vec<&str> = report.lines().take_while(|l| !l.is_empty()).collect();
    let header = table[0];
    // Every row's cells start where the header's names do.
    let starts = |line: &str| -> Vec<usize> {
        line.char_indices()
            .filter(|&(at, c)| c != ' ' && (at == 0 || line.as_bytes()[at - 1] == b' '))
            .map(|(at, _)| at)
            .take(3)
            .collect()
    };
    let expected = starts(header);
    assert_eq!(expected[1], long.len() + 1, "{report}");
    for line in &table {
        assert_eq!(starts(line), expected, "{line:?} in\n{report}");
    }
    assert_eq!(row(&report, &long)[1..3], ["system", "session"]);
}
