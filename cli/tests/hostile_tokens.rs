//! Token counting stays bounded whatever a repository holds (issue 24,
//! item 7): `render --explain` and `diff` count at most a budget of each
//! text exactly and estimate the rest, marked `~`, so two 8 MiB
//! instruction files of punctuation (one pre-token each, which a plain
//! byte-pair merge takes seconds and hundreds of megabytes on) cost about
//! what the render costs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
#![cfg(all(target_os = "linux", feature = "tokens"))] // peak memory from /proc

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Sandbox, write};

/// Far above what these runs need in a debug build (a few seconds, most of
/// it the render); the unbounded count took minutes there.
const DEADLINE: Duration = Duration::from_secs(40);

/// Just under the 8 MiB an instruction file may have: punctuation only,
/// so the whole file is one pre-token.
fn punctuation() -> String {
    "!@#$%^&*()-=+[]{};:,.<>/?|~".repeat((8 * 1024 * 1024 - 4096) / 27)
}

/// Runs `command` with stdout into `out`, killing it at [`DEADLINE`]
/// (then the test fails); returns the exit code, stderr and the highest
/// peak resident size (`VmHWM`, KiB) seen while it ran.
fn run_bounded(command: &mut Command, out: &Path) -> (Option<i32>, String, u64) {
    let err = out.with_extension("stderr");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let started = Instant::now();
    let mut peak_kib = 0;
    let status = loop {
        if let Some(hwm) = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        }) {
            peak_kib = peak_kib.max(hwm);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > DEADLINE {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "still running after {DEADLINE:?} (peak so far {} MiB)",
                peak_kib / 1024
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    (
        status.code(),
        std::fs::read_to_string(&err).unwrap(),
        peak_kib,
    )
}

/// The rows and lines of an `--explain` report that name `ids` or sizes.
fn rows<'a>(report: &'a str, ids: &[&str]) -> Vec<Vec<&'a str>> {
    report
        .lines()
        .filter(|line| ids.iter().any(|id| line.starts_with(&format!("{id} "))))
        .map(|line| line.split_whitespace().collect())
        .collect()
}

#[test]
fn render_explain_of_two_8_mib_punctuation_files_is_bounded_and_marked() {
    let sandbox = Sandbox::new();
    let text = punctuation();
    write(&sandbox.repo.join("BCODE.md"), &text);
    write(&sandbox.repo.join("AGENTS.md"), &text);
    let out = sandbox.base.join("explain.txt");
    // Both files whole: the user may raise the total bound on instructions
    // (1 Mi characters by default), and the counts are what is tested here.
    let whole = [
        "--set",
        "system_prompt.repository_instructions_total_max_chars=20000000",
    ];
    let (code, stderr, explain_kib) = run_bounded(
        sandbox
            .command()
            .args(whole)
            .args(common::RENDER_PINNED)
            .arg("--explain"),
        &out,
    );
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    let report = std::fs::read_to_string(&out).unwrap();
    let rows = rows(
        &report,
        &[
            "repository_context:BCODE.md",
            "repository_context:AGENTS.md",
        ],
    );
    // id, part, class, bytes, tokens, cut, source: the count is an
    // estimate, marked, near the exact figure for this text (which merges
    // to about 2.2 bytes a token).
    assert_eq!(rows.len(), 2, "{report}");
    for row in &rows {
        assert_eq!(row.len(), 7, "{row:?}");
        let tokens: usize = row[4].strip_prefix('~').expect("marked").parse().unwrap();
        assert!((text.len() / 4..text.len()).contains(&tokens), "{row:?}");
    }
    assert!(
        report.lines().any(|line| line
            == "(~: an estimate; each text is counted exactly up to 256 KiB, 1024 KiB in all, \
                a run of characters without a break up to 16 KiB at a time, the rest from the \
                bytes per token counted)"),
        "{report}"
    );
    // The plain render of the same repository holds the prompt too: the
    // counts add a fixed amount, not one proportional to the text.
    let (code, _, render_kib) = run_bounded(
        sandbox.command().args(whole).args(common::RENDER_PINNED),
        &sandbox.base.join("render.txt"),
    );
    assert_eq!(code, Some(0));
    assert!(
        explain_kib < render_kib + 64 * 1024,
        "explain {explain_kib} KiB, render {render_kib} KiB"
    );
}

/// A saved render as `render --json` writes it: one system section.
fn saved(system: &str) -> String {
    serde_json::json!({
        "system": system,
        "request_context": "",
        "cache_boundary": system.len(),
        "sections": [{
            "id": "repository_context:AGENTS.md",
            "placement": "system",
            "range": {"start": 0, "end": system.len()},
        }],
    })
    .to_string()
}

#[test]
fn diff_of_two_8_mib_punctuation_renders_is_bounded_and_marked() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    let text = punctuation();
    std::fs::write(&a, saved(&text)).unwrap();
    std::fs::write(&b, saved(&format!("{text}!"))).unwrap();
    let out = dir.path().join("diff.txt");
    let (code, stderr, _) = run_bounded(common::binary().arg("diff").arg(&a).arg(&b), &out);
    assert_eq!((code, stderr.as_str()), (Some(1), ""));
    let report = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = report.lines().collect();
    let summary = lines[lines.len() - 2];
    let (before, after) = summary.split_once("; ").unwrap();
    let n = text.len();
    assert!(
        before.starts_with(&format!(
            "summary: before the cache boundary {n} -> {} bytes (+1), ~",
            n + 1
        )),
        "{summary}"
    );
    assert!(
        before.ends_with(" tokens (~+0)") || before.ends_with(" tokens (~+1)"),
        "{summary}"
    );
    assert!(
        after.ends_with("after it (uncached system text and request-only context) 0 -> 0 bytes (+0), 0 -> 0 tokens (+0)"),
        "{summary}"
    );
    assert!(
        lines[lines.len() - 1].starts_with("(~: an estimate;"),
        "{report}"
    );
}
