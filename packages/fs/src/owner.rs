//! Whose folders count as the user's. On a shared machine a folder above
//! the user's project may belong to someone else (a sticky `/tmp` holding
//! another user's `.git`, `AGENTS.md` and `.bcode/skills`): what it holds
//! is theirs, not instructions for this user. Like git's "dubious
//! ownership" check, a folder counts when the effective user owns it (as
//! root, only root's own: root-owned is not another user's only for root),
//! or when the user's config trusts it (`trust.safe_directories`: the
//! folders listed and everything below them, or `*` for every folder).

use std::fmt;
use std::path::{Path, PathBuf};

/// The user whose folders count, and the folders the user trusts whoever
/// owns them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ownership {
    /// The effective uid.
    user: u32,
    /// Every folder is trusted (`*`), or no check is possible (not Unix).
    any: bool,
    /// Trusted folders (canonical where they exist), each with what is
    /// below it.
    safe: Vec<PathBuf>,
}

/// A folder (or file) that belongs to another user and is not trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotOwned {
    /// The folder or file.
    pub path: PathBuf,
    /// Its owner's uid.
    pub owner: u32,
    /// The uid this process runs as.
    pub user: u32,
}

impl fmt::Display for NotOwned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` belongs to uid {}, not to this user (uid {})",
            self.path.display(),
            self.owner,
            self.user
        )
    }
}

impl Ownership {
    /// The process's effective user, trusting `safe` folders (and what is
    /// below them), or every folder when `any`.
    pub fn of_process(any: bool, safe: &[PathBuf]) -> Self {
        Self::of_user(current_user(), any, safe)
    }

    /// `user`'s folders, trusting `safe` folders (and what is below them),
    /// or every folder when `any` (tests name another user).
    pub fn of_user(user: u32, any: bool, safe: &[PathBuf]) -> Self {
        Ownership {
            user,
            any: any || !cfg!(unix),
            safe: safe
                .iter()
                .map(|folder| std::fs::canonicalize(folder).unwrap_or_else(|_| folder.clone()))
                .collect(),
        }
    }

    /// The effective uid.
    pub fn user(&self) -> u32 {
        self.user
    }

    /// Whether the user may take `path` (following links) for theirs: they
    /// own it, or trust it. A path that cannot be looked up holds nothing to
    /// read, so it passes (the caller's own read fails).
    pub fn check(&self, path: &Path) -> Result<(), NotOwned> {
        match std::fs::metadata(path) {
            Ok(meta) => self.check_metadata(path, &meta),
            Err(_) => Ok(()),
        }
    }

    /// [`Ownership::check`] of `path` whose metadata is `meta` (an open
    /// file's `fstat`, or a `stat` the caller made anyway).
    pub fn check_metadata(&self, path: &Path, meta: &std::fs::Metadata) -> Result<(), NotOwned> {
        if self.any {
            return Ok(());
        }
        let owner = owner_of(meta);
        if owner == self.user || self.trusts(path) {
            return Ok(());
        }
        Err(NotOwned {
            path: path.to_path_buf(),
            owner,
            user: self.user,
        })
    }

    /// [`Ownership::check`] of a link itself and of what it leads to (a
    /// `.git` entry: whoever owns the link decides where it leads).
    pub fn check_entry(&self, path: &Path) -> Result<(), NotOwned> {
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            self.check_metadata(path, &meta)?;
            if meta.file_type().is_symlink() {
                return self.check(path);
            }
        }
        Ok(())
    }

    /// Whether `path` is a trusted folder or below one (compared where they
    /// really are; looked up only for a folder another user owns).
    fn trusts(&self, path: &Path) -> bool {
        if self.safe.is_empty() {
            return false;
        }
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.safe.iter().any(|safe| real.starts_with(safe))
    }
}

#[cfg(unix)]
fn owner_of(meta: &std::fs::Metadata) -> u32 {
    std::os::unix::fs::MetadataExt::uid(meta)
}

#[cfg(not(unix))]
fn owner_of(_: &std::fs::Metadata) -> u32 {
    0
}

/// The uid this process runs as (what it creates files as).
#[cfg(unix)]
fn current_user() -> u32 {
    rustix::process::geteuid().as_raw()
}

#[cfg(not(unix))]
fn current_user() -> u32 {
    0
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// The rule, seen as another user: a folder this process owns is not
    /// that user's, unless trusted (by name, below a name, or `*`).
    #[test]
    fn another_users_folder_counts_only_when_trusted() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join("shared/sub")).unwrap();
        let me = std::fs::metadata(&base).unwrap().uid();
        let other = me.wrapping_add(4242);
        assert_eq!(Ownership::of_user(me, false, &[]).check(&base), Ok(()));
        assert_eq!(
            Ownership::of_user(other, false, &[]).check(&base.join("shared")),
            Err(NotOwned {
                path: base.join("shared"),
                owner: me,
                user: other
            })
        );
        let trusting = Ownership::of_user(other, false, &[base.join("shared")]);
        assert_eq!(trusting.check(&base.join("shared/sub")), Ok(()));
        assert!(trusting.check(&base).is_err());
        assert_eq!(Ownership::of_user(other, true, &[]).check(&base), Ok(()));
        // Nothing there: nothing to refuse.
        assert_eq!(
            Ownership::of_user(other, false, &[]).check(&base.join("missing")),
            Ok(())
        );
    }
}
