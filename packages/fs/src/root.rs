//! Where a working folder's repository begins, as git finds it: the nearest
//! folder at or above it holding a `.git` folder or file; a folder in no
//! repository is its own root. Nothing above the root is the repository's.
//!
//! As git does ("dubious ownership"), a root above the working folder that
//! another user owns (the folder or its `.git`) is refused unless the user
//! trusts it (see [`Ownership`]): on a shared machine, another user's
//! `/tmp/.git` would otherwise make their `AGENTS.md` and skills the
//! instructions of every folder below. Git then stops with an error; a
//! render must not fail, so the search stops instead (it does not look
//! further up, where a farther `.git` would be no more the user's) and the
//! working folder is its own root, with the refusal for the host to show.
//! The working folder itself is the user's choice and is not checked.

use std::path::{Path, PathBuf};

use crate::owner::{NotOwned, Ownership};

/// What [`repository_root`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepositoryRoot {
    /// The root: the folder holding the nearest `.git`, or the working
    /// folder (in no repository, or when that folder was refused).
    pub root: PathBuf,
    /// The folder holding the nearest `.git`, refused because another user
    /// owns it (or its `.git`) and the user does not trust it.
    pub refused: Option<RefusedRoot>,
}

/// A folder above the working folder holding a `.git`, not taken as the
/// root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedRoot {
    /// The folder (what `trust.safe_directories` would list).
    pub folder: PathBuf,
    /// What another user owns: the folder, or its `.git`.
    pub not_owned: NotOwned,
}

/// The repository root of `work` (an absolute folder): the nearest of
/// `work` and its ancestors, lexically, that holds a `.git` entry (a folder,
/// a file as linked worktrees and submodules have, or a link to either);
/// `work` itself when none does, or when the nearest one above `work` is
/// not the user's (see the module docs).
pub fn repository_root(work: &Path, owners: &Ownership) -> RepositoryRoot {
    let work = bcode_text::lexical(work);
    let own = |root: PathBuf| RepositoryRoot {
        root,
        refused: None,
    };
    let Some(dir) = enclosing_repository(&work) else {
        return own(work);
    };
    if dir == work {
        return own(dir);
    }
    let refused = owners
        .check(&dir)
        .and_then(|()| owners.check_entry(&dir.join(".git")))
        .err();
    match refused {
        None => own(dir),
        Some(not_owned) => RepositoryRoot {
            root: work,
            refused: Some(RefusedRoot {
                folder: dir,
                not_owned,
            }),
        },
    }
}

/// The repository that holds `folder` (absolute): the nearest of `folder`
/// and its ancestors, lexically, with a `.git` entry; `None` when there is
/// none, where [`repository_root`] takes the folder itself. Whose it is is
/// not asked: a caller that confines reads to it is only stricter.
pub(crate) fn enclosing_repository(folder: &Path) -> Option<PathBuf> {
    let folder = bcode_text::lexical(folder);
    folder
        .ancestors()
        .find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_of(work: &Path) -> PathBuf {
        repository_root(work, &Ownership::of_process(false, &[])).root
    }

    #[test]
    fn the_nearest_git_entry_above_is_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path();
        let deep = top.join("packages/web/src");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir(top.join(".git")).unwrap();
        assert_eq!(root_of(&deep), top);
        // A `.git` file (a linked worktree) nearer wins.
        std::fs::write(top.join("packages/.git"), "gitdir: ../.git/worktrees/p\n").unwrap();
        assert_eq!(root_of(&deep), top.join("packages"));
        assert_eq!(
            root_of(&top.join("packages/web/src/../..")),
            top.join("packages")
        );
        assert_eq!(enclosing_repository(&deep), Some(top.join("packages")));
        let lone = tempfile::tempdir().unwrap();
        assert_eq!(enclosing_repository(lone.path()), None);
        assert_eq!(root_of(lone.path()), lone.path());
    }

    /// Seen as another user, the root above is refused and the working
    /// folder is its own root; the working folder's own `.git` is taken
    /// whoever owns it; a trusted folder is taken.
    #[cfg(unix)]
    #[test]
    fn a_root_above_that_another_user_owns_is_refused() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(tmp.path()).unwrap();
        let work = top.join("mine/project");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir(top.join(".git")).unwrap();
        let me = std::fs::metadata(&top).unwrap().uid();
        let other = me.wrapping_add(4242);
        assert_eq!(
            repository_root(&work, &Ownership::of_user(other, false, &[])),
            RepositoryRoot {
                root: work.clone(),
                refused: Some(RefusedRoot {
                    folder: top.clone(),
                    not_owned: NotOwned {
                        path: top.clone(),
                        owner: me,
                        user: other
                    }
                }),
            }
        );
        assert_eq!(
            repository_root(
                &work,
                &Ownership::of_user(other, false, std::slice::from_ref(&top))
            ),
            RepositoryRoot {
                root: top.clone(),
                refused: None
            }
        );
        assert_eq!(
            repository_root(&top, &Ownership::of_user(other, false, &[])),
            RepositoryRoot {
                root: top.clone(),
                refused: None
            }
        );
    }
}
