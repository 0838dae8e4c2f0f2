//! Git fixtures shared by the section tests.

#![allow(clippy::unwrap_used, dead_code)] // test helpers; each test binary uses a subset

use std::path::Path;

use git2::{IndexAddOption, Repository, Signature, Time};

/// Writes `text` to `dir/name`, creating its folders.
pub fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Stages everything and commits it on top of `HEAD`.
pub fn commit_all(repo: &Repository, message: &str) -> git2::Oid {
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"].iter(), IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    // A planted identity: it must never show up in a section.
    let sig = Signature::new("Planted Author", "planted@example.com", &Time::new(0, 0)).unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .unwrap()
}

/// A FIFO at `path` (replacing a file there, folders made): what git would
/// block on forever if it opened it.
pub fn mkfifo(path: &Path) {
    if path.exists() {
        std::fs::remove_file(path).unwrap();
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}
