//! Cheap checks before any libgit2 call (edge I/O: `stat` and small bounded
//! reads only): find the `.git` entry that discovery will use, the folder
//! holding it (the repository root) and the git folder it names, and refuse
//! the repository when one of the files libgit2 opens on the way to `HEAD`
//! and the status is not a regular file. libgit2 opens those files with a
//! blocking `open`, so a FIFO at `.git/config` would hold its thread forever;
//! the probe's deadline bounds the wait either way, but refusing here costs
//! no thread at all.
//!
//! The search mirrors libgit2's (`.git` in the start folder and each parent,
//! following symbolic links, never across a file-system boundary); where the
//! two could disagree, the probe's deadline still holds.

use std::path::{Component, Path, PathBuf};

/// What the checks found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Preflight {
    /// Nothing in the way. `root` is the folder holding the `.git` entry,
    /// when one was found (a bare repository has none).
    Clear {
        /// The repository root: the folder whose `.git` discovery uses.
        root: Option<PathBuf>,
    },
    /// `path` (shown relative to the root when it is below it) is not a
    /// regular file, so the repository is not read.
    Refused {
        /// The offending path, `/` separators.
        path: String,
    },
}

/// The most bytes read of a `.git` file, `commondir` or `HEAD`: each holds
/// one short line.
const SMALL_FILE_BYTES: usize = 4096;

/// Files libgit2 reads in the git folder of a working tree (`HEAD`, the
/// per-worktree config, the index and the worktree links).
const GIT_DIR_FILES: &[&str] = &["HEAD", "config.worktree", "index", "commondir", "gitdir"];

/// Files libgit2 reads in the common git folder (the main repository's
/// `.git`, the same folder outside linked worktrees).
const COMMON_DIR_FILES: &[&str] = &[
    "config",
    "packed-refs",
    "objects/info/alternates",
    "info/exclude",
    "info/attributes",
];

/// Runs the checks for a probe starting at `start`.
pub(super) fn check(start: &Path) -> Preflight {
    let Some((root, git_dir)) = find_git_dir(start) else {
        return Preflight::Clear { root: None };
    };
    let common = common_dir(&git_dir);
    let mut paths: Vec<PathBuf> = GIT_DIR_FILES.iter().map(|f| git_dir.join(f)).collect();
    paths.extend(COMMON_DIR_FILES.iter().map(|f| common.join(f)));
    // The branch `HEAD` names: its loose ref, per worktree or shared.
    if let Some(reference) = head_ref(&git_dir) {
        paths.push(git_dir.join(&reference));
        paths.push(common.join(&reference));
    }
    for path in paths {
        // `stat` follows links as libgit2's `open` does; it never blocks
        // on a FIFO. A missing file is libgit2's business.
        if std::fs::metadata(&path).is_ok_and(|meta| !meta.is_file()) {
            return Preflight::Refused {
                path: shown(&path, &root),
            };
        }
    }
    Preflight::Clear { root: Some(root) }
}

/// The nearest folder at or above `start` holding a `.git` folder or
/// `.git` file (`gitdir: ...`), with the git folder it names.
fn find_git_dir(start: &Path) -> Option<(PathBuf, PathBuf)> {
    // libgit2 searches from the real path: a relative or linked start
    // folder must reach the same parents.
    let start = std::fs::canonicalize(start).ok()?;
    let first_device = device(&start);
    for folder in start.ancestors() {
        if device(folder) != first_device {
            return None;
        }
        let dot_git = folder.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            return Some((folder.to_path_buf(), dot_git));
        }
        if meta.is_file() {
            let target = read_small(&dot_git)?;
            let target = target.strip_prefix("gitdir:")?.trim();
            return Some((folder.to_path_buf(), folder.join(target)));
        }
        // Anything else (a FIFO, a socket) libgit2 passes over as well.
    }
    None
}

/// The common git folder: what `commondir` names, else the git folder.
fn common_dir(git_dir: &Path) -> PathBuf {
    let path = git_dir.join("commondir");
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => match read_small(&path) {
            Some(common) if !common.trim().is_empty() => git_dir.join(common.trim()),
            _ => git_dir.to_path_buf(),
        },
        _ => git_dir.to_path_buf(),
    }
}

/// The reference a symbolic `HEAD` names (`refs/heads/main`), when it is a
/// plain relative path inside the git folder.
fn head_ref(git_dir: &Path) -> Option<PathBuf> {
    let head = read_small(&git_dir.join("HEAD"))?;
    let name = head.strip_prefix("ref:")?.trim();
    let path = PathBuf::from(name);
    path.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then_some(path)
}

/// A small file's text, through `bcode-fs` (non-blocking, regular files
/// only, bounded); `None` when it cannot be read as UTF-8.
fn read_small(path: &Path) -> Option<String> {
    let bytes = bcode_fs::read_bounded(path, SMALL_FILE_BYTES).ok()?;
    String::from_utf8(bytes).ok()
}

/// `path` relative to `root` when below it, with `/` separators.
fn shown(path: &Path, root: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    super::status::display(relative)
}

#[cfg(unix)]
fn device(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|meta| meta.dev())
}

#[cfg(not(unix))]
fn device(_path: &Path) -> Option<u64> {
    None
}
