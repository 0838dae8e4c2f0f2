//! Invariants are bounded like skills (issue 12): at most
//! `invariants.max_files` files and `invariants.max_globs_per_file` globs
//! per file are used, each overflow with a problem note, as is a glob
//! longer than a skill's may be; and each file's
//! globs are compiled once per file stamp, shared with relevant mode's
//! selector requests, instead of on every turn.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use std::path::Path;

use bcode_prompt_config::InvariantsConfig;
use bcode_prompt_sections::{
    InvariantBudget, SelectorRequest, TaskContext, gather_invariants_with, select_deterministic,
};

fn write_invariant(dir: &Path, name: &str, globs: usize) {
    let paths: Vec<String> = (0..globs).map(|i| format!("\"src/m{i}/**\"")).collect();
    std::fs::write(
        dir.join(format!("{name}.md")),
        format!(
            "---\nid: {name}\ntitle: Rule {name}\nsummary: About {name}\npaths: [{}]\n---\nBody.\n",
            paths.join(", ")
        ),
    )
    .unwrap();
}

fn folder() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".bcode/invariants");
    std::fs::create_dir_all(&dir).unwrap();
    (tmp, dir)
}

#[test]
fn files_beyond_max_files_are_not_read_and_noted() {
    let (tmp, dir) = folder();
    for i in 0..5 {
        write_invariant(&dir, &format!("r{i}"), 1);
    }
    let budget = InvariantBudget {
        max_files: 3,
        max_globs_per_file: 64,
    };
    let catalog = gather_invariants_with(tmp.path(), &budget, None);
    let ids: Vec<&str> = catalog.invariants.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["r0", "r1", "r2"]);
    let problems: Vec<String> = catalog.problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        problems,
        [
            ".bcode/invariants: 5 files; only the first 3 by name are read \
          (invariants.max_files), the other 2 skipped"
        ]
    );
}

#[test]
fn globs_beyond_max_globs_per_file_are_ignored_and_noted() {
    let (tmp, dir) = folder();
    write_invariant(&dir, "wide", 10);
    let budget = InvariantBudget {
        max_files: 100,
        max_globs_per_file: 4,
    };
    let catalog = gather_invariants_with(tmp.path(), &budget, None);
    let wide = &catalog.invariants[0];
    assert_eq!(wide.paths.len(), 4);
    assert!(wide.globs.is_match("src/m3/a.rs"));
    assert!(!wide.globs.is_match("src/m4/a.rs"));
    let problems: Vec<String> = catalog.problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        problems,
        [
            ".bcode/invariants/wide.md: 10 path globs; only the first 4 are used \
          (invariants.max_globs_per_file)"
        ]
    );
}

/// Issue 38, item 14: a glob too large for globset's size limit made the
/// invariant's whole set fail, so none of its globs matched; a glob longer
/// than `MAX_GLOB_BYTES` is left out with a note, the others still apply.
#[test]
fn a_glob_longer_than_the_bound_is_ignored_and_noted() {
    let (tmp, dir) = folder();
    let huge = "?".repeat(200_000);
    std::fs::write(
        dir.join("huge.md"),
        format!(
            "---\nid: huge\ntitle: Huge\nsummary: A huge glob\npaths: [\"src/**\", \"{huge}\", \"docs/**\"]\n---\nBody.\n"
        ),
    )
    .unwrap();
    let catalog = gather_invariants_with(tmp.path(), &InvariantBudget::default(), None);
    let invariant = &catalog.invariants[0];
    assert_eq!(invariant.paths, ["src/**", "docs/**"]);
    assert!(invariant.globs.is_match("src/a.rs"));
    assert!(invariant.globs.is_match("docs/a.md"));
    let problems: Vec<String> = catalog.problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        problems,
        [format!(
            ".bcode/invariants/huge.md: path glob 2 is 200000 bytes; a glob longer than {} bytes is ignored",
            bcode_skill::MAX_GLOB_BYTES
        )]
    );
}

#[test]
fn the_config_defaults_bound_a_hostile_folder() {
    let defaults = InvariantBudget::from(&InvariantsConfig::default());
    assert_eq!(
        defaults,
        InvariantBudget {
            max_files: 100,
            max_globs_per_file: 64,
        }
    );
    let (tmp, dir) = folder();
    for i in 0..120 {
        write_invariant(&dir, &format!("r{i:03}"), 100);
    }
    let catalog = gather_invariants_with(tmp.path(), &defaults, None);
    assert_eq!(catalog.invariants.len(), 100);
    assert!(catalog.invariants.iter().all(|i| i.paths.len() == 64));
}

#[test]
fn compiled_globs_are_reused_while_the_file_stamp_holds() {
    let (tmp, dir) = folder();
    write_invariant(&dir, "kept", 3);
    write_invariant(&dir, "edited", 3);
    let budget = InvariantBudget::default();
    let first = gather_invariants_with(tmp.path(), &budget, None);
    let again = gather_invariants_with(tmp.path(), &budget, Some(&first));
    for (a, b) in first.invariants.iter().zip(&again.invariants) {
        assert!(a.globs.shares_set_with(&b.globs), "{} recompiled", a.id);
    }
    // Without a previous catalog every set is new.
    let fresh = gather_invariants_with(tmp.path(), &budget, None);
    assert!(
        !first.invariants[0]
            .globs
            .shares_set_with(&fresh.invariants[0].globs)
    );
    // An edited file (new stamp, new globs) is compiled again; the other
    // is still shared.
    write_invariant(&dir, "edited", 5);
    let after = gather_invariants_with(tmp.path(), &budget, Some(&first));
    let by_id = |id: &str| after.invariants.iter().find(|i| i.id == id).unwrap();
    let before = |id: &str| first.invariants.iter().find(|i| i.id == id).unwrap();
    assert!(by_id("kept").globs.shares_set_with(&before("kept").globs));
    assert!(
        !by_id("edited")
            .globs
            .shares_set_with(&before("edited").globs)
    );
    assert!(by_id("edited").globs.is_match("src/m4/x.rs"));
    // Selector requests carry the catalog's sets, not copies to rebuild.
    let request = SelectorRequest::new(
        &TaskContext::new("change src/m4/x.rs", &[]),
        &after,
        &InvariantsConfig::default(),
    );
    for (summary, inv) in request.invariants.iter().zip(&after.invariants) {
        assert!(summary.globs.shares_set_with(&inv.globs));
    }
    assert_eq!(select_deterministic(&request).ids, ["edited"]);
}
