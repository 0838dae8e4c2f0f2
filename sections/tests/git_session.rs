//! A long-lived session's git reads (issue 43): a turn in which nothing
//! changed starts no read and gives the last facts, every kind of change
//! shows on the next turn, and a read that outlives its deadline is waited
//! for by later turns instead of started again. Work is counted
//! ([`GitSessionStats`]), never timed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
#![cfg(target_os = "linux")] // the exact folder watch is inotify's

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use bcode_prompt_sections::{
    EntryState, GitFacts, GitProbeOptions, GitSession, GitSessionStats, GitUnavailable, HeadFacts,
    RepoFacts, StatusEntry, StatusOutcome, read_git,
};
use common::{commit_all, init, mkfifo, write};
use git2::Repository;

/// A short deadline, for the reads that must time out.
const DEADLINE: Duration = Duration::from_millis(400);

/// A deadline no test waits out: a turn with it that answers at all did
/// not wait for it (a turn that did would be caught by [`HUNG`]).
const NEVER: Duration = Duration::from_secs(3600);

/// How long a test waits for a turn before it calls it hung: catches a
/// hang, never measures speed.
const HUNG: Duration = Duration::from_secs(60);

fn options(deadline: Duration) -> GitProbeOptions {
    GitProbeOptions {
        deadline,
        ..GitProbeOptions::default()
    }
}

/// One turn of `session` on its own thread, failing the test if it does
/// not answer within [`HUNG`].
fn turn(session: &GitSession, path: &Path, deadline: Duration) -> GitFacts {
    let (session, path) = (session.clone(), path.to_owned());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(session.start(&path, &options(deadline)).finish());
    });
    rx.recv_timeout(HUNG)
        .unwrap_or_else(|_| panic!("no answer within {HUNG:?}"))
}

/// A turn that must not wait: its deadline is [`NEVER`].
fn steady(session: &GitSession, path: &Path) -> GitFacts {
    turn(session, path, NEVER)
}

fn counts(session: &GitSession) -> (u64, u64, u64) {
    let GitSessionStats {
        reads,
        reused,
        joined,
        ..
    } = session.stats();
    (reads, reused, joined)
}

/// A repository with one commit: `a.txt`, `src/lib.rs` and a `.gitignore`
/// ignoring `target/`, with `target/` on disk.
fn committed() -> (tempfile::TempDir, PathBuf, Repository) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir(&dir).unwrap();
    let repo = init(&dir);
    write(&dir, "a.txt", "a\n");
    write(&dir, "src/lib.rs", "//! lib\n");
    write(&dir, ".gitignore", "target/\n");
    commit_all(&repo, "first");
    std::fs::create_dir_all(dir.join("target/debug")).unwrap();
    (tmp, dir, repo)
}

fn status(facts: &GitFacts) -> Vec<(String, String)> {
    let GitFacts::Repository(RepoFacts {
        status: StatusOutcome::Done(status),
        ..
    }) = facts
    else {
        panic!("no status: {facts:?}");
    };
    status
        .entries
        .iter()
        .map(|StatusEntry { code, path, .. }| (code.clone(), path.clone()))
        .collect()
}

fn entry(code: &str, path: &str) -> (String, String) {
    (code.to_owned(), path.to_owned())
}

fn head(facts: &GitFacts) -> HeadFacts {
    let GitFacts::Repository(repo) = facts else {
        panic!("no repository: {facts:?}");
    };
    repo.head.clone()
}

/// Nothing changed: one read, then the same facts from it, turn after
/// turn; a write in an ignored folder is not a change either.
#[test]
fn a_steady_session_reads_once() {
    let (_tmp, dir, _repo) = committed();
    let session = GitSession::new(true);
    let first = steady(&session, &dir);
    assert_eq!(status(&first), []);
    for _ in 0..3 {
        assert_eq!(steady(&session, &dir), first);
    }
    assert_eq!(counts(&session), (1, 3, 0));
    write(&dir, "target/debug/out.bin", "built\n");
    assert_eq!(steady(&session, &dir), first);
    assert_eq!(counts(&session), (1, 4, 0));
    assert_eq!(session.stats().unwatched, None);
    // A session that does not follow later turns reads every turn.
    let single = GitSession::new(false);
    assert_eq!(steady(&single, &dir), first);
    assert_eq!(steady(&single, &dir), first);
    assert_eq!(counts(&single), (2, 0, 0));
}

/// An edit to a tracked file (same size, so only the watch can tell), a
/// new untracked file, a new folder and a file in it later, and staging:
/// each shows on the next turn, and the turn after it reads nothing.
#[test]
fn working_tree_changes_show_on_the_next_turn() {
    let (_tmp, dir, repo) = committed();
    let session = GitSession::new(true);
    assert_eq!(status(&steady(&session, &dir)), []);

    write(&dir, "a.txt", "b\n");
    assert_eq!(status(&steady(&session, &dir)), [entry(" M", "a.txt")]);
    assert_eq!(status(&steady(&session, &dir)), [entry(" M", "a.txt")]);
    assert_eq!(counts(&session), (2, 1, 0));
    // Only a file changed: the read kept the first watch.
    assert_eq!(session.stats().watches, 1);

    write(&dir, "new.txt", "new\n");
    assert_eq!(
        status(&steady(&session, &dir)),
        [entry(" M", "a.txt"), entry("??", "new.txt")]
    );
    // An empty folder shows nothing, but is watched from that read on.
    std::fs::create_dir(dir.join("src/fresh")).unwrap();
    assert_eq!(
        status(&steady(&session, &dir)),
        [entry(" M", "a.txt"), entry("??", "new.txt")]
    );
    // The new folder was watched anew, the new file was not.
    assert_eq!(session.stats().watches, 2);
    write(&dir, "src/fresh/mod.rs", "//! new\n");
    assert_eq!(
        status(&steady(&session, &dir)),
        [
            entry(" M", "a.txt"),
            entry("??", "new.txt"),
            entry("??", "src/fresh/")
        ]
    );

    let mut index = repo.index().unwrap();
    index.add_path(Path::new("a.txt")).unwrap();
    index.write().unwrap();
    let staged = steady(&session, &dir);
    assert_eq!(
        status(&staged),
        [
            entry("M ", "a.txt"),
            entry("??", "new.txt"),
            entry("??", "src/fresh/")
        ]
    );
    assert_eq!(steady(&session, &dir), staged);
    assert_eq!(counts(&session), (6, 2, 0));
    // The index changed: watched anew.
    assert_eq!(session.stats().watches, 3);
    let GitFacts::Repository(RepoFacts {
        status: StatusOutcome::Done(done),
        ..
    }) = &staged
    else {
        panic!("{staged:?}");
    };
    assert_eq!(done.entries[0].state, EntryState::Modified);
    // The kept facts are what a fresh read says.
    assert_eq!(read_git(&dir, &options(NEVER)), staged);
}

/// A commit and a branch switch show on the next turn, and so does an edit
/// to `.git/info/exclude`.
#[test]
fn commits_and_branch_switches_show_on_the_next_turn() {
    let (_tmp, dir, repo) = committed();
    let session = GitSession::new(true);
    let first = steady(&session, &dir);

    write(&dir, "a.txt", "changed\n");
    let oid = commit_all(&repo, "second");
    let committed = steady(&session, &dir);
    assert_eq!(status(&committed), []);
    assert!(
        matches!(head(&committed), HeadFacts::Branch { name, commit } if name == "main" && commit.full == oid.to_string()),
        "{committed:?}"
    );
    assert_ne!(head(&committed), head(&first));
    assert_eq!(steady(&session, &dir), committed);

    let commit = repo.find_commit(oid).unwrap();
    repo.branch("topic", &commit, false).unwrap();
    repo.set_head("refs/heads/topic").unwrap();
    let switched = steady(&session, &dir);
    assert!(
        matches!(head(&switched), HeadFacts::Branch { name, .. } if name == "topic"),
        "{switched:?}"
    );

    write(&dir, "scratch.log", "x\n");
    assert_eq!(
        status(&steady(&session, &dir)),
        [entry("??", "scratch.log")]
    );
    write(&dir, ".git/info/exclude", "*.log\n");
    assert_eq!(status(&steady(&session, &dir)), []);
    assert_eq!(steady(&session, &dir), read_git(&dir, &options(NEVER)));
    assert_eq!(counts(&session), (5, 2, 0));
}

/// Opens the FIFO at `path` for writing (its reader is blocked in `open`),
/// removes it and closes it: the reader sees an empty file and goes on.
fn release_and_remove(path: &Path) {
    let writer = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    std::fs::remove_file(path).unwrap();
    drop(writer);
}

/// Waits until the worker the session left running has ended: a plain
/// read of the repository says it is still running until then (the
/// process remembers a worker that overran).
fn wait_for_worker(dir: &Path) {
    for _ in 0..500 {
        match read_git(dir, &options(DEADLINE)) {
            GitFacts::Unavailable(GitUnavailable::StillRunning)
            | GitFacts::Repository(RepoFacts {
                status: StatusOutcome::StillRunning,
                ..
            }) => std::thread::sleep(Duration::from_millis(20)),
            _ => return,
        }
    }
    panic!("the worker never ended");
}

/// A read held in `open` (a FIFO where libgit2 reads a pack index, in an
/// alternate object store outside the repository, so freeing it changes
/// nothing the watch sees): the turn that started it says it timed out,
/// the next turn waits for it and starts no second read, and once it has
/// answered its facts serve a later turn without a new read.
#[test]
fn a_late_read_serves_a_later_turn_and_is_not_started_twice() {
    let (tmp, dir, _repo) = committed();
    let objects = tmp.path().canonicalize().unwrap().join("alternate/objects");
    let pack = objects.join("pack/pack-0123456789012345678901234567890123456789");
    std::fs::create_dir_all(pack.parent().unwrap()).unwrap();
    std::fs::write(pack.with_extension("pack"), b"PACK").unwrap();
    let fifo = pack.with_extension("idx");
    mkfifo(&fifo);
    write(
        &dir,
        ".git/objects/info/alternates",
        &format!("{}\n", objects.display()),
    );
    let session = GitSession::new(true);
    assert_eq!(
        turn(&session, &dir, DEADLINE),
        GitFacts::Unavailable(GitUnavailable::TimedOut { deadline_ms: 400 })
    );
    assert_eq!(
        turn(&session, &dir, DEADLINE),
        GitFacts::Unavailable(GitUnavailable::StillRunning)
    );
    assert_eq!(counts(&session), (1, 0, 1));
    release_and_remove(&fifo);
    wait_for_worker(&dir);
    let late = steady(&session, &dir);
    assert_eq!(status(&late), []);
    assert_eq!(late, read_git(&dir, &options(NEVER)));
    assert_eq!(steady(&session, &dir), late);
    assert_eq!(counts(&session), (1, 2, 1));
}

/// A FIFO `.gitignore` holds the status scan: the watch is refused
/// (listing it would block too), the revision shows, the status times
/// out, the next turn waits for the same scan, and after it the session
/// reads every turn until a watch is possible again.
#[test]
fn a_hung_status_scan_is_joined_not_started_again() {
    let (_tmp, dir, _repo) = committed();
    let ignore = dir.join(".gitignore");
    mkfifo(&ignore);
    let session = GitSession::new(true);
    let first = turn(&session, &dir, DEADLINE);
    let GitFacts::Repository(repo) = &first else {
        panic!("{first:?}");
    };
    assert_eq!(repo.status, StatusOutcome::TimedOut { deadline_ms: 400 });
    assert!(matches!(&repo.head, HeadFacts::Branch { name, .. } if name == "main"));
    let second = turn(&session, &dir, DEADLINE);
    let GitFacts::Repository(repo) = &second else {
        panic!("{second:?}");
    };
    assert_eq!(repo.status, StatusOutcome::StillRunning);
    assert_eq!(counts(&session), (1, 0, 1));
    release_and_remove(&ignore);
    wait_for_worker(&dir);
    // The scan that answered was not watched: this turn reads again.
    let after = steady(&session, &dir);
    assert_eq!(
        session.stats().unwatched.as_deref(),
        None,
        "the new read is watched"
    );
    assert_eq!(status(&after), [entry(" D", ".gitignore")]);
    assert_eq!(steady(&session, &dir), after);
    assert_eq!(counts(&session), (2, 1, 1));
}
