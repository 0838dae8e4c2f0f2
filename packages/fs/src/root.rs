//! Where a working folder's repository begins, as git finds it: the nearest
//! folder at or above it holding a `.git` folder or file; a folder in no
//! repository is its own root. Nothing above the root is the repository's.

use std::path::{Path, PathBuf};

/// The repository root of `work` (an absolute folder): the nearest of
/// `work` and its ancestors, lexically, that holds a `.git` entry (a folder,
/// a file as linked worktrees and submodules have, or a link to either);
/// `work` itself when none does.
pub fn repository_root(work: &Path) -> PathBuf {
    enclosing_repository(work).unwrap_or_else(|| bcode_text::lexical(work))
}

/// The repository that holds `folder` (absolute): the nearest of `folder`
/// and its ancestors, lexically, with a `.git` entry; `None` when there is
/// none, where [`repository_root`] takes the folder itself.
pub fn enclosing_repository(folder: &Path) -> Option<PathBuf> {
    let folder = bcode_text::lexical(folder);
    folder
        .ancestors()
        .find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_git_entry_above_is_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path();
        let deep = top.join("packages/web/src");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir(top.join(".git")).unwrap();
        assert_eq!(repository_root(&deep), top);
        // A `.git` file (a linked worktree) nearer wins.
        std::fs::write(top.join("packages/.git"), "gitdir: ../.git/worktrees/p\n").unwrap();
        assert_eq!(repository_root(&deep), top.join("packages"));
        assert_eq!(
            repository_root(&top.join("packages/web/src/../..")),
            top.join("packages")
        );
        assert_eq!(enclosing_repository(&deep), Some(top.join("packages")));
        let lone = tempfile::tempdir().unwrap();
        assert_eq!(enclosing_repository(lone.path()), None);
        assert_eq!(repository_root(lone.path()), lone.path());
    }
}
