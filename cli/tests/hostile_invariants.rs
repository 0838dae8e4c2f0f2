//! A repository with too many invariants, or invariants with too many
//! globs, through the real binary (issue 12): both are bounded by
//! `[invariants] max_files` / `max_globs_per_file` and `render --explain`
//! says what was left out.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use common::{Sandbox, succeed_stdout, write};

fn invariant(sandbox: &Sandbox, name: &str, globs: usize) {
    let paths: Vec<String> = (0..globs).map(|i| format!("\"src/m{i}/**\"")).collect();
    write(
        &sandbox.repo.join(format!(".bcode/invariants/{name}.md")),
        &format!(
            "---\nid: {name}\ntitle: Rule {name}\nsummary: About {name}\npaths: [{}]\n---\nBody.\n",
            paths.join(", ")
        ),
    );
}

fn explain(sandbox: &Sandbox, extra: &[&str]) -> String {
    succeed_stdout(sandbox.command().args(extra).args([
        "render",
        "--explain",
        "--prompt",
        "change src/m70/x.rs",
    ]))
}

#[test]
fn render_reads_at_most_max_files_invariants() {
    let sandbox = Sandbox::new();
    for i in 0..105 {
        invariant(&sandbox, &format!("r{i:03}"), 1);
    }
    let out = explain(&sandbox, &[]);
    assert!(
        out.contains(
            "repository_invariants: .bcode/invariants: 105 files; only the first 100 by name \
             are read (invariants.max_files), the other 5 skipped"
        ),
        "{out}"
    );
    assert!(
        out.contains("repository_invariants: 100 invariants placed"),
        "{out}"
    );
    let out = explain(&sandbox, &["--set", "invariants.max_files=2"]);
    assert!(
        out.contains("repository_invariants: 2 invariants placed"),
        "{out}"
    );
}

#[test]
fn render_uses_at_most_max_globs_per_file() {
    let sandbox = Sandbox::new();
    invariant(&sandbox, "wide", 100);
    let out = explain(&sandbox, &["--set", "invariants.mode=\"relevant\""]);
    assert!(
        out.contains(
            "repository_invariants: .bcode/invariants/wide.md: 100 path globs; only the first 64 \
             are used (invariants.max_globs_per_file)"
        ),
        "{out}"
    );
}
