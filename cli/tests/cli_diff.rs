//! `diff A.json B.json` line by line: a changed line reads as one changed
//! line, a section only one side has is shown with its content, and a
//! summary says how many bytes and tokens lie on each side of the cache
//! boundary. Sections are matched by id however many there are, and the
//! line-by-line diffs share one counted budget for the whole command.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

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

/// A saved `render --json` result whose system text is `sections`' texts
/// one after the other, all of it before the cache boundary (written
/// directly: a `serde_json::Value` of 200,000 sections is slow to build in
/// a debug test).
fn saved_render(path: &Path, sections: &[(String, String)]) {
    let mut system = String::new();
    let mut ranges = Vec::new();
    for (id, text) in sections {
        let start = system.len();
        system.push_str(text);
        ranges.push(format!(
            "{{\"id\":{},\"range\":{{\"start\":{start},\"end\":{}}}}}",
            serde_json::to_string(id).unwrap(),
            system.len()
        ));
    }
    let doc = format!(
        "{{\"system\":{},\"request_context\":\"\",\"cache_boundary\":{},\"sections\":[{}]}}",
        serde_json::to_string(&system).unwrap(),
        system.len(),
        ranges.join(",")
    );
    std::fs::write(path, doc).unwrap();
}

/// `diff a b`, killed after two minutes: far more than either case below
/// needs now (a few seconds of CPU), far less than they took before.
fn bounded_diff(a: &Path, b: &Path) -> (Option<i32>, String) {
    let child = binary()
        .arg("diff")
        .arg(a)
        .arg(b)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = common::wait_or_kill(child, std::time::Duration::from_secs(120));
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

/// The report between `changed sections:` and the summary.
fn changes(report: &str) -> &str {
    let start = report
        .find("\nchanged sections:\n")
        .unwrap_or_else(|| panic!("no changed sections:\n{report}"))
        + "\nchanged sections:\n".len();
    let end = report.find("\n\nsummary: ").unwrap_or(report.len());
    &report[start..end]
}

/// Issue 38, item 12: each section was looked up by a scan of every
/// section, so 100,000 sections (5 MB) took a minute, and 200,000 take
/// minutes (killed at two here); they are indexed by id, and take seconds.
#[test]
fn two_hundred_thousand_sections_are_matched_by_id() {
    let sandbox = Sandbox::new();
    let count = 200_000;
    let sections = |last: &str| -> Vec<(String, String)> {
        (0..count)
            .map(|n| {
                let text = if n == count - 1 {
                    format!("{last}\n")
                } else {
                    format!("rule {n}\n")
                };
                (format!("s{n}"), text)
            })
            .collect()
    };
    let (a, b) = (sandbox.base.join("a.json"), sandbox.base.join("b.json"));
    saved_render(&a, &sections("old last rule"));
    saved_render(&b, &sections("new last rule"));
    let (code, report) = bounded_diff(&a, &b);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(
        changes(&report),
        "== s199999 (changed: 14 -> 14 bytes)\n@@ -1 +1 @@\n- old last rule\n+ new last rule",
        "{report}"
    );
}

/// Issue 38, item 12: each section's line diff had a deadline of its own,
/// so twenty rewritten sections of 10,000 lines ran for 2 s each, and how
/// much was diffed depended on the machine. One budget, counted in search
/// steps, covers the command: the small section (diffed first) is shown
/// line by line, each big one past the budget as one block that says so,
/// and the same files always give this report.
#[test]
fn one_budget_covers_every_section_and_a_section_past_it_says_so() {
    let sandbox = Sandbox::new();
    let big = |side: &str| -> Vec<(String, String)> {
        let mut sections = vec![(
            "small".to_owned(),
            format!("one\n{}\nthree\n", if side == "a" { "two" } else { "TWO" }),
        )];
        for n in 0..20 {
            let text: String = (0..10_000)
                .map(|line| format!("{side}{n}.{line}\n"))
                .collect();
            sections.push((format!("big{n}"), text));
        }
        sections
    };
    let (a, b) = (sandbox.base.join("a.json"), sandbox.base.join("b.json"));
    saved_render(&a, &big("a"));
    saved_render(&b, &big("b"));
    let (code, report) = bounded_diff(&a, &b);
    assert_eq!(code, Some(1), "{report}");
    let changes = changes(&report);
    assert!(
        changes.starts_with(
            "== small (changed: 14 -> 14 bytes)\n@@ -1,3 +1,3 @@\n  one\n- two\n+ TWO\n  three\n== big0 "
        ),
        "{report}"
    );
    let headers: Vec<&str> = changes.lines().filter(|l| l.starts_with("== ")).collect();
    let mut expected = vec!["== small (changed: 14 -> 14 bytes)".to_owned()];
    for n in 0..20 {
        let bytes = (0..10_000)
            .map(|line| format!("a{n}.{line}\n").len())
            .sum::<usize>();
        expected.push(format!(
            "== big{n} (changed: {bytes} -> {bytes} bytes; past the diff budget, its changed lines shown as one block)"
        ));
    }
    assert_eq!(headers, expected, "{report}");
    // A block is a hunk like any other: its first 200 changed lines, then
    // a count of the rest.
    let big0 = section_part(&report, "big0");
    let lines: Vec<&str> = big0.lines().collect();
    assert_eq!(lines[1], "@@ -1,10000 +1,10000 @@");
    assert_eq!(lines[2], "- a0.0");
    assert_eq!(lines.len(), 2 + 200 + 1, "{big0}");
    assert_eq!(lines[lines.len() - 1], "… 19800 more changed lines");
    assert!(
        changes.ends_with(
            "\n\n20 changed section(s) shown as one block: the line-by-line diffs share one \
             budget of 25000000 search steps, smallest section first"
        ),
        "{changes}"
    );
    // Counted, not timed: a second run prints the same bytes.
    assert_eq!(bounded_diff(&a, &b), (Some(1), report));
}
