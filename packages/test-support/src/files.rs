//! Files for tests: trees written in one call, stamps aged past the racy
//! window, and FIFOs where a regular file is expected.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Writes `text` to `path`, creating its folders.
pub fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Writes each `(path relative to root, text)` of `files` below `root`.
pub fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (relative, text) in files {
        write(&root.join(relative), text);
    }
}

/// A short racy window for tests that build right after writing: stamps
/// older than this are trusted (the real default is two seconds).
pub const TEST_RACY_WINDOW: Duration = Duration::from_millis(100);

/// Waits until everything written so far is older than [`TEST_RACY_WINDOW`]
/// (the status-change time cannot be set back, so [`age`] alone is not
/// enough).
pub fn past_racy_window() {
    std::thread::sleep(TEST_RACY_WINDOW + Duration::from_millis(50));
}

/// Moves the modification time of everything under `path` (itself
/// included) an hour back, as for a tree not written lately. Symbolic links
/// are left alone, and not followed. This does not age the status-change
/// time: wait out the racy window too ([`past_racy_window`]).
pub fn age(path: &Path) {
    let old = SystemTime::now() - Duration::from_secs(3600);
    let meta = fs::symlink_metadata(path).unwrap();
    if meta.file_type().is_symlink() {
        return;
    }
    if meta.is_dir() {
        for entry in fs::read_dir(path).unwrap() {
            age(&entry.unwrap().path());
        }
    }
    fs::File::open(path).unwrap().set_modified(old).unwrap();
}

/// Makes a FIFO at `path` (replacing a file there, folders made): what a
/// reader would block on forever if it opened it.
pub fn mkfifo(path: &Path) {
    if path.exists() {
        fs::remove_file(path).unwrap();
    }
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}: {status}", path.display());
}
