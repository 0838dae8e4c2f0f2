//! The status scan split over threads answers exactly what one combined
//! libgit2 run answers, for every kind of change, including renames across
//! folders, deleted folders, untracked files at every level and type
//! changes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::fs;
use std::path::Path;

use bcode_prompt_sections::{StatusFacts, StatusSplit, git_status};
use common::{commit_all, write};
use git2::{Repository, RepositoryInitOptions};

const ALWAYS: StatusSplit = StatusSplit {
    min_entries: 0,
    groups: 2,
};
const NEVER: StatusSplit = StatusSplit {
    min_entries: usize::MAX,
    groups: 1,
};

fn both(repo: &Repository, groups: usize) -> (StatusFacts, StatusFacts) {
    let split = git_status(repo, 10_000, StatusSplit { groups, ..ALWAYS }).unwrap();
    let combined = git_status(repo, 10_000, NEVER).unwrap();
    (split, combined)
}

fn lines(facts: &StatusFacts) -> Vec<String> {
    facts
        .entries
        .iter()
        .map(|e| format!("{} {}", e.code, e.path))
        .collect()
}

#[test]
fn split_and_combined_scans_agree_on_every_kind_of_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut opts = RepositoryInitOptions::new();
    opts.initial_head("main");
    let repo = Repository::init_opts(root, &opts).unwrap();
    for d in ["a", "b", "c/deep/er", "c/other", "gone", "typed"] {
        for i in 0..6 {
            write(
                root,
                &format!("{d}/f{i}.txt"),
                &format!("file {d} {i} with enough text for rename detection\n"),
            );
        }
    }
    write(root, "top.txt", "top\n");
    write(root, "a-b.txt", "sorts between a and a/\n");
    write(
        root,
        "moved.txt",
        "a file that will move to another folder entirely\n",
    );
    commit_all(&repo, "base");

    write(root, "a/f0.txt", "modified\n");
    write(root, "c/deep/er/f1.txt", "modified deep\n");
    fs::remove_file(root.join("b/f2.txt")).unwrap();
    fs::remove_dir_all(root.join("gone")).unwrap();
    write(root, "untracked.txt", "new at the top\n");
    write(root, "a/new.txt", "new in a folder\n");
    write(root, "fresh/dir/x.txt", "an untracked folder\n");
    write(root, "c/deep/new/y.txt", "an untracked folder deep down\n");
    // A folder replaced by a file of the same name.
    fs::remove_dir_all(root.join("typed")).unwrap();
    write(root, "typed", "now a file\n");
    // Staged: an addition, a modification, and a rename across folders
    // that is then modified again in the working tree.
    write(root, "b/staged.txt", "staged\n");
    write(root, "c/other/f3.txt", "staged change\n");
    fs::create_dir_all(root.join("c/other")).unwrap();
    fs::rename(root.join("moved.txt"), root.join("c/other/moved.txt")).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("b/staged.txt")).unwrap();
    index.add_path(Path::new("c/other/f3.txt")).unwrap();
    index.remove_path(Path::new("moved.txt")).unwrap();
    index.add_path(Path::new("c/other/moved.txt")).unwrap();
    index.write().unwrap();
    write(
        root,
        "c/other/moved.txt",
        "a file that will move to another folder entirely, then edited\n",
    );

    for groups in [2, 3, 4] {
        let (split, combined) = both(&repo, groups);
        assert_eq!(lines(&split), lines(&combined), "groups {groups}");
        assert_eq!(split, combined, "groups {groups}");
    }
    let (_, combined) = both(&repo, 2);
    let listed = lines(&combined);
    // The cases are all there (the combined run is the reference).
    for expected in [
        " M a/f0.txt",
        "?? a/new.txt",
        " D b/f2.txt",
        "A  b/staged.txt",
        "M  c/other/f3.txt",
        "RM moved.txt -> c/other/moved.txt",
        " D gone/f0.txt",
        "?? fresh/",
        "?? untracked.txt",
    ] {
        assert!(
            listed.contains(&expected.to_owned()),
            "{expected} in {listed:#?}"
        );
    }
}

#[test]
fn a_clean_tree_and_a_small_cap_agree_too() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = Repository::init(root).unwrap();
    for i in 0..40 {
        write(root, &format!("d{}/f{i}.txt", i % 7), "x\n");
    }
    commit_all(&repo, "base");
    let (split, combined) = both(&repo, 2);
    assert_eq!(split, combined);
    assert!(split.entries.is_empty());
    for i in 0..40 {
        write(root, &format!("d{}/f{i}.txt", i % 7), "changed\n");
    }
    let split = git_status(&repo, 5, ALWAYS).unwrap();
    let combined = git_status(&repo, 5, NEVER).unwrap();
    assert_eq!(split, combined);
    assert!(split.capped);
    assert_eq!(split.entries.len(), 5);
}

#[test]
fn a_deleted_largest_folder_is_still_covered() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = Repository::init(root).unwrap();
    for i in 0..30 {
        write(root, &format!("big/d{}/f{i}.txt", i % 5), "x\n");
    }
    write(root, "small/a.txt", "a\n");
    commit_all(&repo, "base");
    fs::remove_dir_all(root.join("big")).unwrap();
    write(root, "new.txt", "untracked\n");
    let (split, combined) = both(&repo, 2);
    assert_eq!(split, combined);
    assert_eq!(split.total.deleted, 30);
}

#[test]
fn ignored_folders_and_files_stay_ignored_when_split() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = Repository::init(root).unwrap();
    write(root, ".gitignore", "target/\n*.log\nsrc/gen/\n");
    for i in 0..12 {
        write(root, &format!("src/m{}/f{i}.rs", i % 3), "x\n");
    }
    commit_all(&repo, "base");
    write(root, "target/debug/out.bin", "ignored\n");
    write(root, "build.log", "ignored\n");
    write(
        root,
        "src/gen/a.rs",
        "ignored folder inside a split piece\n",
    );
    write(
        root,
        "src/m1/trace.log",
        "ignored file inside a split piece\n",
    );
    write(root, "src/m2/new.rs", "untracked\n");
    let (split, combined) = both(&repo, 2);
    assert_eq!(split, combined);
    assert_eq!(lines(&combined), ["?? src/m2/new.rs"]);
}

#[test]
fn names_libgit2_would_read_as_patterns_keep_the_combined_answer() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = Repository::init(root).unwrap();
    for i in 0..12 {
        write(root, &format!("app/m{}/f{i}.rs", i % 3), "x\n");
    }
    commit_all(&repo, "base");
    for name in [
        "app/[slug]/page.tsx",
        "q?/a",
        "#tmp/a",
        "!bang/a",
        "st*r/a",
        "sp /a",
    ] {
        write(root, name, "untracked\n");
    }
    let (split, combined) = both(&repo, 2);
    assert_eq!(lines(&split), lines(&combined));
    assert_eq!(combined.entries.len(), 6, "{:#?}", lines(&combined));
}

#[test]
fn a_case_insensitive_index_keeps_libgit2_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = Repository::init(root).unwrap();
    repo.config()
        .unwrap()
        .set_bool("core.ignorecase", true)
        .unwrap();
    write(root, "keep.txt", "x\n");
    commit_all(&repo, "base");
    for name in ["B.txt", "a.txt", "C.txt"] {
        write(root, name, "untracked\n");
    }
    let (split, combined) = both(&repo, 2);
    assert_eq!(split, combined);
    assert_eq!(lines(&combined), ["?? a.txt", "?? B.txt", "?? C.txt"]);
}

/// The probe's status, read as a render reads it.
fn probed(root: &Path) -> StatusFacts {
    use bcode_prompt_sections::{GitFacts, StatusOutcome};
    use bcode_prompt_sections::{GitProbeOptions, read_git};
    let options = GitProbeOptions {
        deadline: std::time::Duration::from_secs(60),
        ..GitProbeOptions::default()
    };
    match read_git(root, &options) {
        GitFacts::Repository(facts) => match facts.status {
            StatusOutcome::Done(status) => status,
            other => panic!("no status: {other:?}"),
        },
        other => panic!("not read: {other:?}"),
    }
}

/// Puts a gitlink to `id` at `sub` in the index (not committed).
fn stage_gitlink(repo: &Repository, id: git2::Oid) {
    common::stage_gitlink(repo, "sub", id);
}

/// A submodule that is not checked out (its gitlink committed, its folder
/// empty, as after a clone without `--recurse-submodules`) lets the probe
/// skip libgit2's submodule cache; the answer is the one libgit2 gives
/// with it, also once the folder is gone, the gitlink staged anew, or the
/// folder holds a `.git`.
#[test]
fn a_submodule_not_checked_out_answers_as_libgit2_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = Repository::init(root).unwrap();
    write(root, "a.txt", "a\n");
    write(root, "d/b.txt", "b\n");
    let first = commit_all(&repo, "base");
    stage_gitlink(&repo, first);
    let tree = repo
        .find_tree(repo.index().unwrap().write_tree().unwrap())
        .unwrap();
    let sig = git2::Signature::new("A", "a@example.com", &git2::Time::new(0, 0)).unwrap();
    let parent = repo.find_commit(first).unwrap();
    let second = repo
        .commit(Some("HEAD"), &sig, &sig, "sub", &tree, &[&parent])
        .unwrap();
    fs::create_dir(root.join("sub")).unwrap();
    let reference = || git_status(&Repository::open(root).unwrap(), 10_000, NEVER).unwrap();
    let shows_sub = |facts: &StatusFacts| lines(facts).iter().any(|l| l.ends_with(" sub"));

    // Not checked out, nothing changed; then a change beside it.
    assert_eq!(probed(root), reference());
    assert!(probed(root).entries.is_empty());
    write(root, "a.txt", "changed\n");
    write(root, "d/new.txt", "untracked\n");
    assert_eq!(probed(root), reference());
    assert_eq!(probed(root).entries.len(), 2);

    // Its folder deleted.
    fs::remove_dir(root.join("sub")).unwrap();
    let gone = probed(root);
    assert_eq!(gone, reference());
    assert!(shows_sub(&gone), "{:?}", lines(&gone));
    fs::create_dir(root.join("sub")).unwrap();

    // The gitlink staged at another commit.
    stage_gitlink(&repo, second);
    let staged = probed(root);
    assert_eq!(staged, reference());
    assert!(shows_sub(&staged), "{:?}", lines(&staged));
    stage_gitlink(&repo, first);
    assert_eq!(probed(root), reference());

    // A `.git` in the folder: libgit2 opens it as a submodule.
    fs::create_dir(root.join("sub/.git")).unwrap();
    let opened = probed(root);
    assert_eq!(opened, reference());
    assert!(shows_sub(&opened), "{:?}", lines(&opened));
}
