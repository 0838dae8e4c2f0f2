//! A long-lived session's git sections (issue 43): a turn in which
//! nothing changed reads no git, and an edit, a new file or a commit shows
//! on the next turn. Work is counted (`PromptSession::git_stats`), never
//! timed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(target_os = "linux")] // the exact folder watch is inotify's

use crate::common;

use bcode_prompt::{PromptSession, SkillLifetime, TurnInput};
use bcode_test_support::{commit_all, init};
use common::{Repo, at, write};
use git2::Repository;

/// The repository committed, and session options with the git sections on.
fn committed(repo: &Repo) -> (Repository, bcode_prompt::SessionOptions) {
    let git = init(&repo.root);
    commit_all(&git, "first");
    let mut options = repo.options();
    for section in [
        "git_revision",
        "worktree_context",
        "dynamic_repository_context",
    ] {
        options = options.set(format!("system_prompt.sections.{section}=true"));
    }
    (git, options)
}

fn turn(session: &mut PromptSession) -> String {
    let turn = session
        .next_turn_blocking(TurnInput::new("go on").now(at("2026-12-01T10:00:00Z")))
        .unwrap();
    session.commit_turn("done");
    format!("{}{}", turn.system(), turn.request_context())
}

fn reads(session: &PromptSession) -> (u64, u64) {
    let stats = session.git_stats();
    (stats.reads, stats.reused)
}

#[test]
fn a_steady_session_reads_git_once_and_sees_every_change() {
    let repo = Repo::new();
    let (git, options) = committed(&repo);
    let mut session = PromptSession::open_blocking(options).unwrap();
    let first = turn(&mut session);
    assert!(
        first.contains("Git status: the working tree is clean."),
        "{first}"
    );
    assert_eq!(turn(&mut session), first);
    assert_eq!(turn(&mut session), first);
    assert_eq!(reads(&session), (1, 2));

    write(
        &repo.root.join("AGENTS.md"),
        "Run cargo test before you finish!\n",
    );
    let edited = turn(&mut session);
    assert!(edited.ends_with("untracked):\n M AGENTS.md"), "{edited}");
    write(&repo.root.join("notes.txt"), "new\n");
    let added = turn(&mut session);
    assert!(
        added.ends_with("untracked):\n M AGENTS.md\n?? notes.txt"),
        "{added}"
    );
    assert_eq!(turn(&mut session), added);
    assert_eq!(reads(&session), (3, 3));

    commit_all(&git, "second");
    let committed = turn(&mut session);
    assert!(
        committed.contains("Git status: the working tree is clean."),
        "{committed}"
    );
    assert_ne!(committed, first, "the commit id changed");
    assert_eq!(reads(&session), (4, 3));
}

/// A one-turn session pays for no watch: each turn reads.
#[test]
fn a_single_turn_session_reads_every_turn() {
    let repo = Repo::new();
    let (_git, options) = committed(&repo);
    let mut session =
        PromptSession::open_blocking(options.skill_lifetime(SkillLifetime::SingleTurn)).unwrap();
    let first = turn(&mut session);
    assert_eq!(turn(&mut session), first);
    assert_eq!(reads(&session), (2, 0));
}
