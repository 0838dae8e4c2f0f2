//! The git probe (edge I/O): opens the repository with git2 and reads
//! `HEAD`, the worktree kind and the status into [`GitFacts`].
//!
//! Status is the one potentially slow step (it scans the working tree; see
//! `status.rs` for how a large one is split over threads), and
//! libgit2 offers no progress callback for it, so it runs on a worker thread
//! and the probe waits at most [`GitProbeOptions::status_deadline`]. When the
//! deadline passes the outcome is `TimedOut` and the section says so; the
//! worker finishes on its own and its result is dropped. Entries beyond
//! [`GitProbeOptions::max_entries`] are counted but not kept, so a huge
//! untracked tree cannot blow up memory either.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use git2::{ErrorCode, Repository};

use super::status::{StatusSplit, clean, display, status};
use super::{
    CommitId, GitFacts, GitUnavailable, HeadFacts, RepoFacts, StatusFacts, StatusOutcome,
    WorktreeFacts,
};

/// How the probe runs and which parts it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GitProbeOptions {
    /// Read the status (needed by `git_revision`'s dirty flag and by
    /// `dynamic_repository_context`).
    pub status: bool,
    /// How long the probe waits for the status scan before reporting
    /// `TimedOut` (default 1.5 s); the scan itself is not stopped.
    pub status_deadline: Duration,
    /// The most status entries kept (default 10,000); the rest are only
    /// counted.
    pub max_entries: usize,
    /// When and how the status scan of a large tree is split over threads.
    pub split: StatusSplit,
}

impl Default for GitProbeOptions {
    fn default() -> Self {
        GitProbeOptions {
            status: true,
            status_deadline: Duration::from_millis(1500),
            max_entries: 10_000,
            split: StatusSplit::default(),
        }
    }
}

/// Reads the repository containing `path` (searching upwards, like git).
pub fn read(path: &Path, options: &GitProbeOptions) -> GitFacts {
    let repo = match Repository::discover(path) {
        Ok(repo) => repo,
        Err(err) if err.code() == ErrorCode::NotFound => return GitFacts::NoRepository,
        Err(err) if err.code() == ErrorCode::Owner => {
            return GitFacts::Unavailable(GitUnavailable::OwnedByAnotherUser);
        }
        Err(err) => {
            return GitFacts::Unavailable(GitUnavailable::Unreadable {
                detail: err.message().to_owned(),
            });
        }
    };
    let head = head(&repo);
    let worktree = worktree(&repo);
    let status = if !options.status {
        StatusOutcome::NotGathered
    } else if repo.is_bare() {
        StatusOutcome::Done(StatusFacts::default())
    } else {
        status_with_deadline(repo, options)
    };
    GitFacts::Repository(RepoFacts {
        head,
        worktree,
        status,
    })
}

fn commit_id(repo: &Repository, oid: git2::Oid) -> CommitId {
    let full = oid.to_string();
    let short = repo
        .find_object(oid, None)
        .and_then(|object| object.short_id())
        .ok()
        .and_then(|buf| buf.as_str().map(str::to_owned).ok())
        .unwrap_or_else(|| full.chars().take(7).collect());
    CommitId { short, full }
}

fn head(repo: &Repository) -> HeadFacts {
    match repo.head() {
        Ok(reference) => {
            let Some(oid) = reference.target() else {
                return HeadFacts::Unknown {
                    detail: "HEAD has no target".to_owned(),
                };
            };
            let commit = commit_id(repo, oid);
            if reference.is_branch() {
                HeadFacts::Branch {
                    name: clean(&String::from_utf8_lossy(reference.shorthand_bytes())),
                    commit,
                }
            } else {
                HeadFacts::Detached { commit }
            }
        }
        Err(err) if err.code() == ErrorCode::UnbornBranch => {
            // HEAD is symbolic and names the branch to be born.
            let name = repo
                .find_reference("HEAD")
                .ok()
                .and_then(|r| r.symbolic_target_bytes().map(|t| t.to_vec()))
                .map(|t| String::from_utf8_lossy(&t).into_owned())
                .map(|t| t.trim_start_matches("refs/heads/").to_owned())
                .unwrap_or_else(|| "HEAD".to_owned());
            HeadFacts::Unborn { name: clean(&name) }
        }
        Err(err) => HeadFacts::Unknown {
            detail: err.message().to_owned(),
        },
    }
}

fn worktree(repo: &Repository) -> WorktreeFacts {
    let Some(workdir) = repo.workdir() else {
        return WorktreeFacts::Bare;
    };
    let root = display(workdir);
    if !repo.is_worktree() {
        return WorktreeFacts::Main { root };
    }
    let name = git2::Worktree::open_from_repository(repo)
        .ok()
        .and_then(|wt| wt.name().ok().flatten().map(clean));
    // The common directory is the main repository's `.git`; its parent is
    // the main working tree unless the main repository is bare.
    let common = repo.commondir();
    let main_root = (common.file_name().is_some_and(|n| n == ".git"))
        .then(|| common.parent().map(display))
        .flatten();
    WorktreeFacts::Linked {
        root,
        name,
        main_root,
    }
}

fn status_with_deadline(repo: Repository, options: &GitProbeOptions) -> StatusOutcome {
    let (tx, rx) = mpsc::channel();
    let max_entries = options.max_entries;
    let split = options.split;
    // `Repository` is `Send`; the worker owns it from here on.
    let spawned = std::thread::Builder::new()
        .name("bcode-git-status".to_owned())
        .spawn(move || {
            // The receiver may be gone after a timeout; that is expected.
            let _ = tx.send(status(&repo, max_entries, split));
        });
    if let Err(err) = spawned {
        return StatusOutcome::Failed {
            detail: err.to_string(),
        };
    }
    match rx.recv_timeout(options.status_deadline) {
        Ok(Ok(facts)) => StatusOutcome::Done(facts),
        Ok(Err(err)) => StatusOutcome::Failed {
            detail: err.message().to_owned(),
        },
        Err(_) => StatusOutcome::TimedOut {
            deadline_ms: u64::try_from(options.status_deadline.as_millis()).unwrap_or(u64::MAX),
        },
    }
}
