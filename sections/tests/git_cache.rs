//! What the git probe remembers between reads (issue 43): the content
//! hashes of racily-clean index entries, kept in the state folder by path
//! and `lstat`, so a second read hashes nothing its first read hashed; a
//! changed file is compared again; a corrupt or planted memory file is not
//! used; and the repository itself is never written.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use bcode_prompt_sections::{
    GitCache, GitProbeOptions, RacyCounts, StatusFacts, StatusSplit, git_status, racy_counts,
};
use common::{commit_all, lines, status_of, write};
use git2::{Repository, RepositoryInitOptions};

const FILES: usize = 12;

/// A committed repository whose every index entry is racily clean: the
/// index file is dated before its entries, as when git wrote it in the
/// same clock tick as the files (a clone, a checkout, a commit).
fn racy_repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let mut opts = RepositoryInitOptions::new();
    opts.initial_head("main");
    let repo = Repository::init_opts(&root, &opts).unwrap();
    for i in 0..FILES {
        write(
            &root,
            &format!("d{}/f{i}.txt", i % 3),
            &format!("file {i}\n"),
        );
    }
    commit_all(&repo, "first");
    make_racy(&root);
    // Past the (zero) racy window on a coarse clock.
    std::thread::sleep(Duration::from_millis(20));
    (dir, root)
}

fn make_racy(root: &Path) {
    let index = std::fs::File::options()
        .write(true)
        .open(root.join(".git/index"))
        .unwrap();
    index
        .set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

fn options(cache: &Path, split: StatusSplit) -> GitProbeOptions {
    GitProbeOptions {
        deadline: Duration::from_secs(30),
        split,
        cache: Some(GitCache {
            dir: cache.to_path_buf(),
            racy_window: Duration::ZERO,
            user_git_files: GitCache::user_git_files(&std::env::vars().collect()),
        }),
        ..GitProbeOptions::default()
    }
}

const COMBINED: StatusSplit = StatusSplit {
    min_entries: usize::MAX,
    groups: 1,
};
const SPLIT: StatusSplit = StatusSplit {
    min_entries: 0,
    groups: 2,
};

/// Every file below `root` (the repository, `.git` included): its bytes,
/// size and modification time.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (Vec<u8>, u64, SystemTime)> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                let bytes = std::fs::read(entry.path()).unwrap_or_default();
                files.insert(entry.path(), (bytes, meta.len(), meta.modified().unwrap()));
            }
        }
    }
    files
}

#[test]
fn a_second_read_takes_every_racy_hash_from_the_memory() {
    for split in [COMBINED, SPLIT] {
        let (tmp, root) = racy_repo();
        let cache = tmp.path().join("cache");
        let options = options(&cache, split);
        let before = snapshot(&root);
        assert_eq!(status_of(&root, &options), StatusFacts::default());
        assert_eq!(
            racy_counts(&cache),
            RacyCounts {
                hashed: FILES as u64,
                remembered: 0
            }
        );
        assert_eq!(status_of(&root, &options), StatusFacts::default());
        assert_eq!(
            racy_counts(&cache),
            RacyCounts {
                hashed: FILES as u64,
                remembered: FILES as u64
            }
        );
        // The repository was never written, its index included.
        assert_eq!(snapshot(&root), before);
        // No copy of the index is left behind.
        let left: Vec<String> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| {
                !name.starts_with("racy-")
                    && !name.starts_with("trees-")
                    && !name.starts_with("untracked-")
            })
            .collect();
        assert_eq!(left, Vec::<String>::new());
    }
}

#[test]
fn a_changed_file_is_compared_again_and_shown() {
    let (tmp, root) = racy_repo();
    let cache = tmp.path().join("cache");
    let options = options(&cache, COMBINED);
    assert_eq!(status_of(&root, &options), StatusFacts::default());
    // Same size, new content: its stat no longer matches the index.
    write(&root, "d0/f0.txt", "FILE 0\n");
    let got = status_of(&root, &options);
    assert_eq!(lines(&got), vec![" Md0/f0.txt".to_owned()]);
    assert_eq!(
        racy_counts(&cache),
        RacyCounts {
            hashed: FILES as u64,
            remembered: FILES as u64 - 1
        }
    );
    let repo = Repository::open(&root).unwrap();
    assert_eq!(got, git_status(&repo, 10_000, COMBINED).unwrap());
}

/// An entry whose stat matches its file exactly but whose content differs
/// (a write within the clock tick the index was written in): the racy
/// check is what finds it, and the copy of the index must not hide it.
#[test]
fn a_racy_entry_with_other_content_stays_modified() {
    let (tmp, root) = racy_repo();
    let cache = tmp.path().join("cache");
    let options = options(&cache, COMBINED);
    let repo = Repository::open(&root).unwrap();
    let mut index = repo.index().unwrap();
    let mut entry = index.get_path(Path::new("d1/f1.txt"), 0).unwrap();
    entry.id = git2::Oid::hash_object(git2::ObjectType::Blob, b"file 9\n").unwrap();
    repo.blob(b"file 9\n").unwrap();
    index.add(&entry).unwrap();
    index.write().unwrap();
    make_racy(&root);
    // Staged (the index names other content than `HEAD`) and changed in
    // the working tree (the file is not what the index names).
    let want = vec!["MMd1/f1.txt".to_owned()];
    assert_eq!(lines(&status_of(&root, &options)), want);
    assert_eq!(lines(&status_of(&root, &options)), want);
    assert_eq!(
        lines(&git_status(&Repository::open(&root).unwrap(), 10_000, COMBINED).unwrap()),
        want
    );
}

#[test]
fn a_corrupt_or_planted_memory_file_is_not_used() {
    let (tmp, root) = racy_repo();
    let cache = tmp.path().join("cache");
    let options = options(&cache, COMBINED);
    status_of(&root, &options);
    let memory = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("racy-")
        })
        .unwrap();
    // Garbage: not used, every file hashed again.
    let good = std::fs::read(&memory).unwrap();
    std::fs::write(&memory, &good[..good.len() - 3]).unwrap();
    assert_eq!(status_of(&root, &options), StatusFacts::default());
    assert_eq!(
        racy_counts(&cache),
        RacyCounts {
            hashed: 2 * FILES as u64,
            remembered: 0
        }
    );
    // A link in its place: neither read nor written through.
    let target = tmp.path().join("elsewhere");
    std::fs::write(&target, &good).unwrap();
    std::fs::remove_file(&memory).unwrap();
    std::os::unix::fs::symlink(&target, &memory).unwrap();
    assert_eq!(status_of(&root, &options), StatusFacts::default());
    assert_eq!(
        racy_counts(&cache),
        RacyCounts {
            hashed: 3 * FILES as u64,
            remembered: 0
        }
    );
    assert_eq!(std::fs::read(&target).unwrap(), good);
    assert!(!std::fs::symlink_metadata(&memory).unwrap().is_symlink());
}

/// With nothing staged the split scan skips comparing `HEAD` with the
/// index; its answer is still the combined run's.
#[test]
fn nothing_staged_split_and_combined_still_agree() {
    let (tmp, root) = racy_repo();
    let cache = tmp.path().join("cache");
    write(&root, "d0/f0.txt", "changed\n");
    write(&root, "new.txt", "new\n");
    std::fs::remove_file(root.join("d2/f2.txt")).unwrap();
    let repo = Repository::open(&root).unwrap();
    let want = git_status(&repo, 10_000, COMBINED).unwrap();
    assert_eq!(
        lines(&want),
        vec![
            " Md0/f0.txt".to_owned(),
            " Dd2/f2.txt".to_owned(),
            "??new.txt".to_owned()
        ]
    );
    for split in [COMBINED, SPLIT] {
        assert_eq!(status_of(&root, &options(&cache, split)), want);
    }
}
