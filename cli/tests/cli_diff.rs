//! `diff A.json B.json` line by line: a changed line reads as one changed
//! line, a section only one side has is shown with its content, and a
//! summary says how many bytes and tokens lie on each side of the cache
//! boundary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::path::{Path, PathBuf};

use common::{Sandbox, binary, succeed, write};

/// Twelve numbered rules; `changed` rewrites rules 3 and 10.
fn instructions(changed: bool) -> String {
    (1..=12)
        .map(|n| match (n, changed) {
            (3 | 10, true) => format!("Rule {n}: run clippy before you push.\n"),
            _ => format!("Rule {n}: keep the build green.\n"),
        })
        .collect()
}

/// Renders the sandbox as `--json` with `args` and saves it as `name`.
fn save(sandbox: &Sandbox, name: &str, args: &[&str]) -> PathBuf {
    let out = succeed(
        sandbox
            .command()
            .args(["render", "--json", "--now", "2026-07-01T10:00:00Z"])
            .args(args),
    );
    let path = sandbox.base.join(name);
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

fn diff(a: &Path, b: &Path) -> (Option<i32>, String) {
    let out = binary().arg("diff").arg(a).arg(b).output().unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

/// The report's part about section `id`: from its `== id` line to the next
/// section or the summary.
fn section_part<'a>(report: &'a str, id: &str) -> &'a str {
    let start = report
        .find(&format!("== {id} ("))
        .unwrap_or_else(|| panic!("no `{id}` in:\n{report}"));
    let rest = &report[start..];
    let end = rest[1..]
        .find("\n== ")
        .or_else(|| rest.find("\n\nsummary: "))
        .map_or(rest.len(), |i| i + 1);
    &rest[..end]
}

#[test]
fn a_changed_line_reads_as_one_changed_line() {
    let sandbox = Sandbox::new();
    write(&sandbox.repo.join("AGENTS.md"), &instructions(false));
    let a = save(&sandbox, "a.json", &[]);
    write(&sandbox.repo.join("AGENTS.md"), &instructions(true));
    let b = save(&sandbox, "b.json", &[]);

    let (code, report) = diff(&a, &b);
    assert_eq!(code, Some(1), "{report}");
    let part = section_part(&report, "repository_context:AGENTS.md");
    // Two changed lines far apart: two hunks, each with two lines of
    // context either side, one line out and one line in (not every line
    // between the two changes removed and added again).
    assert_eq!(
        part.lines().skip(1).collect::<Vec<_>>(),
        [
            "@@ -4,5 +4,5 @@",
            "  Rule 1: keep the build green.",
            "  Rule 2: keep the build green.",
            "- Rule 3: keep the build green.",
            "+ Rule 3: run clippy before you push.",
            "  Rule 4: keep the build green.",
            "  Rule 5: keep the build green.",
            "@@ -11,5 +11,5 @@",
            "  Rule 8: keep the build green.",
            "  Rule 9: keep the build green.",
            "- Rule 10: keep the build green.",
            "+ Rule 10: run clippy before you push.",
            "  Rule 11: keep the build green.",
            "  Rule 12: keep the build green.",
        ],
        "{report}"
    );
}

#[test]
fn a_section_only_one_side_has_is_shown_whole_and_the_summary_counts_the_cache() {
    let sandbox = Sandbox::new();
    write(&sandbox.repo.join("AGENTS.md"), &instructions(false));
    let a = save(&sandbox, "a.json", &[]);
    let b = save(
        &sandbox,
        "b.json",
        &["--set", "system_prompt.sections.repository_context=false"],
    );
    let (code, report) = diff(&a, &b);
    assert_eq!(code, Some(1), "{report}");
    let part = section_part(&report, "repository_context:AGENTS.md");
    let lines: Vec<&str> = part.lines().collect();
    assert!(lines[0].starts_with("== repository_context:AGENTS.md (only in A, "));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("- <repository_instructions file=\"AGENTS.md\"")),
        "{part}"
    );
    assert!(
        lines.contains(&"-"),
        "an empty line is the sign alone:\n{part}"
    );
    for n in 1..=12 {
        assert!(
            lines.contains(&format!("- Rule {n}: keep the build green.").as_str()),
            "{part}"
        );
    }
    assert_eq!(
        lines.last(),
        Some(&"- </repository_instructions>"),
        "{part}"
    );

    // The summary: what was cached in A, what of it B still shares, and
    // the uncached rest, in bytes and tokens.
    let summary = report
        .lines()
        .find(|l| l.starts_with("summary: "))
        .unwrap_or_else(|| panic!("no summary:\n{report}"));
    let doc = |path: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    };
    let (da, db) = (doc(&a), doc(&b));
    let boundary = |d: &serde_json::Value| d["cache_boundary"].as_u64().unwrap();
    let (ba, bb) = (boundary(&da), boundary(&db));
    assert!(ba > bb, "{summary}");
    let expected_start = format!(
        "summary: before the cache boundary {ba} -> {bb} bytes (-{}), ",
        ba - bb
    );
    assert!(summary.starts_with(&expected_start), "{summary}");
    if cfg!(feature = "tokens") {
        assert!(summary.contains(" tokens (-"), "{summary}");
    }
    assert!(summary.contains(" bytes of it shared (still cached); after it (uncached system text and request-only context) "), "{summary}");

    // Identical renders have no summary and exit 0.
    let (code, report) = diff(&a, &a);
    assert_eq!(code, Some(0));
    assert!(!report.contains("summary:"), "{report}");
}
