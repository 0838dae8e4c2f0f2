//! Git fixtures shared by the section tests: the workspace's test helpers
//! under the names these tests use.

#![allow(dead_code)] // each test binary uses a subset

use std::path::Path;

use bcode_prompt_sections::{GitFacts, GitProbeOptions, StatusFacts, StatusOutcome, read_git};

#[allow(unused_imports)] // each test binary uses a subset
pub use bcode_test_support::{commit_all, init, mkfifo};

/// Writes `text` to `dir/name`, creating its folders.
pub fn write(dir: &Path, name: &str, text: &str) {
    bcode_test_support::write(&dir.join(name), text);
}

/// Puts a gitlink to `id` at `path` in `repo`'s index and writes it (not
/// committed): a submodule as git records one.
pub fn stage_gitlink(repo: &git2::Repository, path: &str, id: git2::Oid) {
    let mut index = repo.index().expect("index");
    index
        .add(&git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: 0o160000,
            uid: 0,
            gid: 0,
            file_size: 0,
            id,
            flags: 0,
            flags_extended: 0,
            path: path.as_bytes().to_vec(),
        })
        .expect("add the gitlink");
    index.write().expect("write the index");
}

/// The finished status of a read of `root`; anything else fails the test.
pub fn status_of(root: &Path, options: &GitProbeOptions) -> StatusFacts {
    match read_git(root, options) {
        GitFacts::Repository(facts) => match facts.status {
            StatusOutcome::Done(status) => status,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

/// A status as `git status --short` lines, code and path run together.
pub fn lines(facts: &StatusFacts) -> Vec<String> {
    facts
        .entries
        .iter()
        .map(|e| format!("{}{}", e.code, e.path))
        .collect()
}
