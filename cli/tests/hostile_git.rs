//! Hostile and damaged git repositories through the real binary (issues 12
//! and 24): truncated loose commit and subtree objects, FIFOs and a huge
//! sparse index where git reads files, and a `.git` file naming another
//! repository's git folder. Every render ends
//! within the git deadline (1.5 s by default) plus start-up, says in the git
//! section what went wrong, and never describes another repository.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
#![cfg(unix)] // FIFOs are a Unix fact

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bcode_test_support::commit_all;
use common::{Sandbox, mkfifo, write};
use git2::{Repository, RepositoryInitOptions};

/// Longer than any render needs (the git deadline is 1.5 s); a render
/// still running then has hung, and the test says so instead of hanging.
const HANG: Duration = Duration::from_secs(20);

/// A watchdog for renders that must not wait for git: the git deadline
/// (1.5 s) plus start-up, with room for a loaded machine. A render past it
/// is killed and fails its test; nothing asserts on a stopwatch.
const NO_WAIT: Duration = Duration::from_secs(5);

/// Runs `command` to its end or `limit`; returns (exit code, stdout).
fn run_bounded(mut command: Command, limit: Duration) -> (Option<i32>, String, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            panic!("the render ran past {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `render` in `repo`, then `render --explain`: both outputs joined, after
/// checking each exited 0.
fn render(sandbox: &Sandbox, repo: &Path) -> String {
    render_within(sandbox, repo, HANG)
}

/// [`render`], each of the two renders killed (and the test failed) once it
/// runs past `limit`.
fn render_within(sandbox: &Sandbox, repo: &Path, limit: Duration) -> String {
    let mut text = String::new();
    for extra in [None, Some("--explain")] {
        let mut command = sandbox.command_in(repo);
        command.args(["render", "--now", "2026-07-01T10:00:00Z"]);
        command.args(extra);
        let (code, stdout, stderr) = run_bounded(command, limit);
        assert_eq!(code, Some(0), "{stderr}");
        text.push_str(&stdout);
    }
    text
}

/// A repository on branch `branch` with one commit, in `dir`.
fn committed(dir: &Path, branch: &str) -> (Repository, git2::Oid) {
    let mut opts = RepositoryInitOptions::new();
    opts.initial_head(branch);
    let repo = Repository::init_opts(dir, &opts).unwrap();
    write(&dir.join("a.txt"), "a\n");
    let oid = commit_all(&repo, "first");
    (repo, oid)
}

/// A crash during `git commit` leaves HEAD's loose object cut short; the
/// render used to spin forever in libgit2. Now the revision still shows
/// and the status is said to have timed out.
#[test]
fn render_survives_a_truncated_head_commit_object() {
    let sandbox = Sandbox::new();
    let (_repo, oid) = committed(&sandbox.repo, "main");
    let hex = oid.to_string();
    let object = sandbox
        .repo
        .join(".git/objects")
        .join(&hex[..2])
        .join(&hex[2..]);
    let bytes = std::fs::read(&object).unwrap();
    std::fs::remove_file(&object).unwrap();
    std::fs::write(&object, &bytes[..bytes.len() / 2]).unwrap();
    let out = render(&sandbox, &sandbox.repo);
    assert!(
        out.contains(&format!(
            "Git revision: branch main at {} ({hex}); whether the working tree has changes is unknown."
        , &hex[..7])),
        "{out}"
    );
    // Inflated before the status scan, which would spin on it forever.
    assert!(
        out.contains(&format!("the HEAD commit object {hex} cannot be inflated")),
        "{out}"
    );
}

/// A FIFO at each file git opens on the way to `HEAD` is refused at once,
/// with the file named in the section and in `--explain`.
#[test]
fn render_refuses_a_fifo_where_git_reads_a_file() {
    for file in [
        ".git/config",
        ".git/packed-refs",
        ".git/refs/heads/main",
        ".git/HEAD",
        ".git/objects/info/alternates",
    ] {
        let sandbox = Sandbox::new();
        committed(&sandbox.repo, "main");
        mkfifo(&sandbox.repo.join(file));
        // Two renders, neither waiting for git.
        let out = render_within(&sandbox, &sandbox.repo, NO_WAIT);
        assert!(
            out.contains(&format!(
                "Git: no git information; {file} is not a regular file, so the repository was not read."
            )),
            "{file}: {out}"
        );
        assert!(
            out.contains(&format!(
                "{file} is not a regular file; the repository was not opened"
            )),
            "{file}: {out}"
        );
    }
}

/// A `.git` file naming another repository's git folder: the render says
/// so and shows nothing of that repository (its branch, commit or files).
#[test]
fn render_does_not_describe_the_repository_a_git_file_borrows() {
    let sandbox = Sandbox::new();
    let other = sandbox.base.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let (_repo, oid) = committed(&other, "planted-branch");
    write(
        &sandbox.repo.join(".git"),
        &format!("gitdir: {}\n", other.join(".git").display()),
    );
    let out = render(&sandbox, &sandbox.repo);
    assert!(
        out.contains(
            "Git: no git information; this folder's git metadata belongs to a working tree \
             elsewhere, so that repository is not described."
        ),
        "{out}"
    );
    assert!(!out.contains("planted-branch"), "{out}");
    assert!(!out.contains(&oid.to_string()[..7]), "{out}");
    assert!(!out.contains("a.txt"), "{out}");
}

/// A linked worktree made by `git worktree add` is its own checkout and
/// keeps being described.
#[test]
fn render_still_describes_a_linked_worktree() {
    let sandbox = Sandbox::new();
    let main = sandbox.base.join("main");
    std::fs::create_dir_all(&main).unwrap();
    let (repo, _) = committed(&main, "main");
    repo.worktree("feature", &sandbox.repo, None).unwrap();
    let out = render(&sandbox, &sandbox.repo);
    assert!(
        out.contains("Worktree: a linked git worktree named feature"),
        "{out}"
    );
    assert!(out.contains("Git revision: branch feature at"), "{out}");
}

/// A huge sparse `.git/index` (issue 24, item 6) is refused by its size
/// before git reads it: the render ends at once and names the file and its
/// limit, where libgit2 used to read all 4 GiB of it into memory.
#[test]
fn render_refuses_a_huge_sparse_index() {
    let sandbox = Sandbox::new();
    committed(&sandbox.repo, "main");
    let index = std::fs::File::create(sandbox.repo.join(".git/index")).unwrap();
    index.set_len(4 << 30).unwrap();
    // Two renders, neither reading the index.
    let out = render_within(&sandbox, &sandbox.repo, NO_WAIT);
    assert!(
        out.contains("Git: no git information; the repository could not be read."),
        "{out}"
    );
    assert!(
        out.contains(
            "git error: .git/index is 4294967296 bytes, more than the 128 MiB git is let \
             read of it; the repository was not opened"
        ),
        "{out}"
    );
}

/// A truncated loose object of a subtree (issue 24, item 5): the render
/// used to wait out the status deadline while libgit2 spun on it. The tree
/// is now inflated before the scan, so the render names it at once.
#[test]
fn render_names_a_truncated_subtree_object() {
    let sandbox = Sandbox::new();
    write(&sandbox.repo.join("sub/b.txt"), "b\n");
    let (repo, oid) = committed(&sandbox.repo, "main");
    let sub = repo
        .find_commit(oid)
        .unwrap()
        .tree()
        .unwrap()
        .get_name("sub")
        .unwrap()
        .id()
        .to_string();
    let object = sandbox
        .repo
        .join(".git/objects")
        .join(&sub[..2])
        .join(&sub[2..]);
    let bytes = std::fs::read(&object).unwrap();
    std::fs::remove_file(&object).unwrap();
    std::fs::write(&object, &bytes[..bytes.len() / 2]).unwrap();
    // Two renders, each within the git deadline plus start-up.
    let out = render_within(&sandbox, &sandbox.repo, NO_WAIT);
    let hex = oid.to_string();
    assert!(
        out.contains(&format!(
            "Git revision: branch main at {} ({hex}); whether the working tree has changes is unknown.",
            &hex[..7]
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "the tree object of sub in HEAD, {sub} cannot be inflated"
        )),
        "{out}"
    );
}
