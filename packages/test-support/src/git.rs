//! Git repositories for tests, made through `git2` so no `git` program is
//! needed.

use std::path::Path;

use git2::{Commit, IndexAddOption, Oid, Repository, RepositoryInitOptions, Signature, Time};

/// A new repository in `dir` whose first branch is `main`.
pub fn init(dir: &Path) -> Repository {
    let mut options = RepositoryInitOptions::new();
    options.initial_head("main");
    Repository::init_opts(dir, &options).unwrap()
}

/// Stages everything in the work tree and commits it on top of `HEAD`
/// (the first commit when there is none), as a planted author at the epoch:
/// an identity that must never show up in a prompt.
pub fn commit_all(repo: &Repository, message: &str) -> Oid {
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"].iter(), IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = Signature::new("Planted Author", "planted@example.com", &Time::new(0, 0)).unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&Commit> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .unwrap()
}
