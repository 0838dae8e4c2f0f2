//! The memory of untracked entries (issue 42 item 6, issue 43): a read of
//! a tree whose tracked files are all clean answers from what the last scan
//! found untracked while nothing it depends on moved, and gives exactly
//! libgit2's answer after every kind of change that could move it: a file
//! added to a tracked, an untracked or an empty folder, deep or not, an
//! ignore file edited in place, `info/exclude`, a staged file, a tracked
//! file changed; a change inside an ignored folder keeps the memory.

use crate::common;

use std::path::Path;
use std::time::Duration;

use bcode_prompt_sections::{
    GitCache, GitProbeOptions, StatusFacts, StatusSplit, git_status, unscanned_status_reads,
};
use common::{commit_all, init, lines, status_of, write};
use git2::Repository;

fn options(cache: &Path) -> GitProbeOptions {
    GitProbeOptions {
        deadline: Duration::from_secs(30),
        cache: Some(GitCache {
            dir: cache.to_path_buf(),
            racy_window: Duration::ZERO,
            user_git_files: GitCache::user_git_files(&std::env::vars().collect()),
        }),
        ..GitProbeOptions::default()
    }
}

/// libgit2's own full answer, nothing remembered.
fn libgit2_status(root: &Path) -> StatusFacts {
    let repo = Repository::open(root).unwrap();
    let split = StatusSplit {
        min_entries: usize::MAX,
        groups: 1,
    };
    git_status(&repo, 10_000, split).unwrap()
}

/// Past a coarse file-system clock's tick: with a zero racy window, a
/// change in the same tick as a kept stamp would not move it.
fn tick() {
    std::thread::sleep(Duration::from_millis(20));
}

/// A committed tree with tracked folders, an ignored folder, an untracked
/// file, an untracked folder with a file deep inside, an empty untracked
/// folder and one holding only an empty folder.
fn repo() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    let repo = init(&root);
    write(&root, ".gitignore", "build/\n*.log\n");
    for i in 0..6 {
        write(&root, &format!("src/m{}/f{i}.rs", i % 2), "fn f() {}\n");
    }
    write(&root, "README.md", "# r\n");
    commit_all(&repo, "first");
    write(&root, "build/out.o", "o");
    write(&root, "src/m0/debug.log", "log");
    write(&root, "notes.txt", "n");
    write(&root, "new/deep/er/x.txt", "x");
    std::fs::create_dir_all(root.join("empty")).unwrap();
    std::fs::create_dir_all(root.join("hollow/inner")).unwrap();
    tick();
    (tmp, root)
}

#[test]
fn a_clean_tree_is_answered_from_the_memory_as_libgit2_answers() {
    let (tmp, root) = repo();
    let cache = tmp.path().join("cache");
    let options = options(&cache);
    let expected = libgit2_status(&root);
    assert_eq!(lines(&expected), ["??new/", "??notes.txt"]);
    assert_eq!(status_of(&root, &options), expected);
    assert_eq!(unscanned_status_reads(&cache), 0);
    tick();
    assert_eq!(status_of(&root, &options), expected);
    assert_eq!(unscanned_status_reads(&cache), 1);
    // The cap applies to remembered entries as to scanned ones.
    let capped = GitProbeOptions {
        max_entries: 1,
        ..options.clone()
    };
    let facts = status_of(&root, &capped);
    assert_eq!(lines(&facts), ["??new/"]);
    assert!(facts.capped);
    assert_eq!(facts.total.untracked, 2);
    assert_eq!(unscanned_status_reads(&cache), 2);
}

/// Applies `change`, then checks the read against libgit2's full answer
/// (and that the answer moved, or not, as `moves` says); returns whether
/// the read was answered from the memory.
fn after(root: &Path, options: &GitProbeOptions, change: &dyn Fn(&Path), moves: bool) -> bool {
    let cache = &options.cache.as_ref().unwrap().dir;
    // The memory is up to date with the tree as it is.
    let before = status_of(root, options);
    tick();
    change(root);
    tick();
    let recalled = unscanned_status_reads(cache);
    let read = status_of(root, options);
    let expected = libgit2_status(root);
    assert_eq!(lines(&read), lines(&expected));
    assert_eq!(read, expected);
    assert_eq!(
        read != before,
        moves,
        "{:?} -> {:?}",
        lines(&before),
        lines(&read)
    );
    unscanned_status_reads(cache) > recalled
}

/// A change: its name, what it does, whether the status moves.
type Case<'a> = (&'a str, &'a dyn Fn(&Path), bool);

#[test]
fn every_change_the_memory_depends_on_is_seen() {
    let (tmp, root) = repo();
    let options = options(&tmp.path().join("cache"));
    status_of(&root, &options);
    // A file in a tracked folder, in an empty folder, deep in a folder
    // holding only a folder, deep in a folder already shown.
    let cases: [Case; 10] = [
        ("tracked folder", &|r| write(r, "src/m1/new.rs", "n"), true),
        ("empty folder", &|r| write(r, "empty/a.txt", "a"), true),
        (
            "hollow folder",
            &|r| write(r, "hollow/inner/b.txt", "b"),
            true,
        ),
        (
            "shown folder",
            &|r| write(r, "new/deep/er/y.txt", "y"),
            false,
        ),
        (
            "ignore file",
            &|r| {
                write(r, "src/m0/.gitignore", "nothing\n");
                write(r, "src/m0/scratch.tmp", "t");
            },
            true,
        ),
        (
            // Edited in place: no folder's stamp moves, its own does.
            "ignore file in place",
            &|r| write(r, "src/m0/.gitignore", "*.tmp\n"),
            true,
        ),
        (
            "info/exclude",
            &|r| write(r, ".git/info/exclude", "notes.txt\n"),
            true,
        ),
        ("ignored folder", &|r| write(r, "build/more.o", "o"), false),
        (
            "tracked file",
            &|r| write(r, "README.md", "# changed\n"),
            true,
        ),
        (
            "staged file",
            &|r| {
                let repo = Repository::open(r).unwrap();
                let mut index = repo.index().unwrap();
                index.add_path(Path::new("notes.txt")).unwrap();
                index.write().unwrap();
            },
            true,
        ),
    ];
    let mut recalled = Vec::new();
    for (name, change, moves) in cases {
        if after(&root, &options, change, moves) {
            recalled.push(name);
        }
    }
    // Only the change inside an ignored folder leaves the memory standing;
    // after the tracked file changed, its scan runs every time.
    assert_eq!(recalled, ["ignored folder"]);
}

#[test]
fn a_folder_deleted_or_a_file_removed_is_seen() {
    let (tmp, root) = repo();
    let options = options(&tmp.path().join("cache"));
    status_of(&root, &options);
    after(
        &root,
        &options,
        &|r| std::fs::remove_dir_all(r.join("new")).unwrap(),
        true,
    );
    after(
        &root,
        &options,
        &|r| std::fs::remove_file(r.join("notes.txt")).unwrap(),
        true,
    );
    // Back to a clean tree with nothing untracked: remembered as such.
    tick();
    status_of(&root, &options);
    tick();
    let cache = tmp.path().join("cache");
    let recalled = unscanned_status_reads(&cache);
    assert_eq!(status_of(&root, &options), StatusFacts::default());
    assert_eq!(unscanned_status_reads(&cache), recalled + 1);
}

#[test]
fn without_a_cache_nothing_is_remembered() {
    let (tmp, root) = repo();
    let options = GitProbeOptions {
        cache: None,
        ..options(&tmp.path().join("cache"))
    };
    let expected = libgit2_status(&root);
    assert_eq!(status_of(&root, &options), expected);
    assert_eq!(status_of(&root, &options), expected);
    assert!(!tmp.path().join("cache").exists());
}

#[test]
fn without_the_users_git_files_nothing_is_remembered() {
    // A hermetic host names no home: the user's config and excludes file,
    // which libgit2 reads, cannot be watched, so every read scans.
    let (tmp, root) = repo();
    let cache = tmp.path().join("cache");
    let mut options = options(&cache);
    if let Some(cache) = options.cache.as_mut() {
        cache.user_git_files = Vec::new();
    }
    let expected = libgit2_status(&root);
    for _ in 0..2 {
        assert_eq!(status_of(&root, &options), expected);
        tick();
    }
    assert_eq!(unscanned_status_reads(&cache), 0);
}

#[test]
fn a_gitignore_that_is_not_a_file_keeps_nothing() {
    let (tmp, root) = repo();
    let cache = tmp.path().join("cache");
    let options = options(&cache);
    std::fs::create_dir_all(root.join("src/m1/.gitignore")).unwrap();
    tick();
    let expected = libgit2_status(&root);
    for _ in 0..2 {
        assert_eq!(status_of(&root, &options), expected);
        tick();
    }
    assert_eq!(unscanned_status_reads(&cache), 0);
}

/// A committed tree with nothing else on disk, its files just written.
fn tracked_only() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    let repo = init(&root);
    write(&root, ".gitignore", "build/\n");
    for i in 0..6 {
        write(&root, &format!("src/m{}/f{i}.rs", i % 2), "fn f() {}\n");
    }
    commit_all(&repo, "first");
    (tmp, root)
}

#[test]
fn a_tree_holding_only_tracked_files_needs_no_scan_even_when_fresh() {
    let (tmp, root) = tracked_only();
    let cache = tmp.path().join("cache");
    // Every stamp is younger than an hour: nothing can be remembered, yet
    // the walk sees every entry tracked, as right after a clone.
    let mut options = options(&cache);
    if let Some(cache) = options.cache.as_mut() {
        cache.racy_window = Duration::from_secs(3600);
    }
    assert_eq!(libgit2_status(&root), StatusFacts::default());
    assert_eq!(status_of(&root, &options), StatusFacts::default());
    assert_eq!(unscanned_status_reads(&cache), 1);
    assert_eq!(status_of(&root, &options), StatusFacts::default());
    assert_eq!(unscanned_status_reads(&cache), 2);
    // Anything untracked, even ignored or an empty folder, needs the scan;
    // a tracked file changed too.
    let changes: [&dyn Fn(&Path); 3] = [
        &|r| write(r, "build/out.o", "o"),
        &|r| std::fs::create_dir_all(r.join("src/m0/empty")).unwrap(),
        &|r| write(r, "src/m1/f1.rs", "fn g() {}\n"),
    ];
    for change in changes {
        change(&root);
        tick();
        let before = unscanned_status_reads(&cache);
        assert_eq!(status_of(&root, &options), libgit2_status(&root));
        assert_eq!(unscanned_status_reads(&cache), before);
    }
}

#[test]
fn an_empty_status_found_by_the_walk_is_remembered_once_it_settles() {
    let (tmp, root) = tracked_only();
    let cache = tmp.path().join("cache");
    let options = options(&cache);
    tick();
    assert_eq!(status_of(&root, &options), StatusFacts::default());
    tick();
    // An ignored file appears in an ignored folder: no folder the status
    // depends on moved, so the memory answers.
    std::fs::create_dir_all(root.join("build")).unwrap();
    tick();
    // The root folder moved (a new entry): walked again, now with an
    // untracked (ignored) folder, so scanned, and remembered.
    assert_eq!(status_of(&root, &options), libgit2_status(&root));
    let before = unscanned_status_reads(&cache);
    write(&root, "build/out.o", "o");
    tick();
    assert_eq!(status_of(&root, &options), StatusFacts::default());
    assert_eq!(unscanned_status_reads(&cache), before + 1);
}

#[test]
fn an_untracked_file_among_tracked_ones_needs_the_scan_even_at_the_same_count() {
    let (tmp, root) = tracked_only();
    let cache = tmp.path().join("cache");
    let mut options = options(&cache);
    if let Some(cache) = options.cache.as_mut() {
        cache.racy_window = Duration::from_secs(3600);
    }
    // One file more than the index tracks, in a tracked folder.
    write(&root, "src/m0/notes.txt", "n");
    tick();
    let before = unscanned_status_reads(&cache);
    let read = status_of(&root, &options);
    assert_eq!(lines(&read), ["??src/m0/notes.txt"]);
    assert_eq!(read, libgit2_status(&root));
    // A tracked file gone and the untracked one kept: as many files as
    // the index tracks, yet not the same ones.
    std::fs::remove_file(root.join("src/m1/f1.rs")).unwrap();
    tick();
    let read = status_of(&root, &options);
    assert_eq!(lines(&read), ["??src/m0/notes.txt", " Dsrc/m1/f1.rs"]);
    assert_eq!(read, libgit2_status(&root));
    assert_eq!(unscanned_status_reads(&cache), before);
}

#[test]
fn a_tracked_folder_turned_into_a_link_needs_the_scan() {
    // One tracked file in `a/` and one beside it; `a/` then moved out and
    // linked back: the same count of entries on disk, and the file is still
    // reached (through the link) with the same stat, yet libgit2 walks no
    // link: `a/one.txt` is gone and the link is new.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    let repo = init(&root);
    write(&root, "a/one.txt", "1");
    write(&root, "b.txt", "2");
    commit_all(&repo, "first");
    let cache = tmp.path().join("cache");
    let mut options = options(&cache);
    if let Some(cache) = options.cache.as_mut() {
        cache.racy_window = Duration::from_secs(3600);
    }
    std::fs::rename(root.join("a"), tmp.path().join("outside")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("outside"), root.join("a")).unwrap();
    tick();
    let before = unscanned_status_reads(&cache);
    let read = status_of(&root, &options);
    assert_eq!(read, libgit2_status(&root));
    assert_ne!(read, StatusFacts::default());
    assert_eq!(unscanned_status_reads(&cache), before);
}
