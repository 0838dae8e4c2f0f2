//! A watch of everything a git read's answer depends on (edge I/O), so a
//! long-lived session can tell, without reading git again, that nothing
//! changed since its last read.
//!
//! `git status` compares the working tree with the index and the index
//! with `HEAD`; `HEAD` names a ref. So the answer can change only when a
//! file in the git folder changes (`HEAD`, `index`, `config`,
//! `packed-refs`, a ref below `refs/`, `info/exclude`; a new object, which
//! can lengthen `HEAD`'s abbreviated id), when a folder of
//! the working tree gains, loses or renames an entry, or when a file in it
//! is written or has its metadata changed. An exact folder watch
//! ([`bcode_fs::FolderWatch`], inotify read at the moment it is asked) on
//! the git folder, the folders below `refs/` and every folder of the
//! working tree the scan walks sees each of those. Ignored folders are
//! left out (their files never show, and nothing below an ignored folder
//! can be brought back by a pattern), unless the index tracks a file below
//! them. The user's own git config and excludes file are stamped instead.
//!
//! A watch stays valid across reads while only files change: a new
//! folder, or a change to what decides which folders the scan walks (an
//! ignore file, the config, the index), makes the next read watch anew.
//!
//! A repository with submodules (whose state lives in other git folders)
//! is not watched, nor one with more than [`MAX_FOLDERS`] folders: the
//! session then reads every turn, as a single read does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use bcode_fs::{FileStamp, FolderWatch};
use git2::Repository;

use super::index_file::GITLINK;

/// The most folders one watch covers (the git folder's included); a larger
/// tree is read every turn rather than use up the user's inotify watches.
pub const MAX_FOLDERS: usize = 20_000;

/// A watch of one repository, made before the read it vouches for.
#[derive(Debug)]
pub(super) struct RepoWatch {
    folders: FolderWatch,
    /// The user's git config and excludes files, stamped when the watch
    /// was made (`None`: there was no such file).
    stamped: Vec<(PathBuf, Option<FileStamp>)>,
    /// When the stamps were taken.
    taken: SystemTime,
}

/// What a watch saw since it was last asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Seen {
    /// Nothing the read depends on changed.
    Nothing,
    /// Files changed, but no folder came in and no rule of which folders
    /// the scan walks (ignore files, config, index): the watch still covers
    /// every folder it must, and the next read can keep it.
    Files,
    /// Anything may have changed, folders too: the next read watches anew.
    Anything,
}

/// Names whose change can alter which folders the scan walks: ignore
/// rules (`.gitignore`, `info/exclude`), the config naming more of them,
/// the index (a file added below an ignored folder is tracked there).
const RULES: [&str; 4] = [".gitignore", "exclude", "config", "index"];

impl RepoWatch {
    /// What changed since the watch was made (or last asked). A stamp
    /// changed within the racy window of when it was taken is not trusted.
    pub(super) fn look(&mut self) -> Seen {
        let drained = self.folders.drain();
        let taken = self.taken;
        let stamps = self.stamped.iter().any(|(path, stamp)| {
            let now = bcode_fs::stamp_of(path);
            now != *stamp
                || now.is_some_and(|s| !bcode_fs::vouches(&s, taken, bcode_fs::RACY_WINDOW))
        });
        if stamps
            || drained.new_folder
            || drained.names_capped
            || drained
                .names
                .iter()
                .any(|name| RULES.iter().any(|rule| name == rule))
        {
            Seen::Anything
        } else if drained.changed {
            Seen::Files
        } else {
            Seen::Nothing
        }
    }
}

/// Where a read's worker leaves the watch it made (or why it made none)
/// for the session that asked.
#[derive(Clone, Debug, Default)]
pub(super) struct WatchSlot(Arc<Mutex<Option<Result<RepoWatch, String>>>>);

impl WatchSlot {
    pub(super) fn fill(&self, watch: Result<RepoWatch, String>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(watch);
    }

    pub(super) fn take(&self) -> Option<Result<RepoWatch, String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// Whether a watch (or why there is none) is there already: a session
    /// hands a read the watch of the last one when it still covers all.
    pub(super) fn is_filled(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

/// Watches `repo`'s git folder, refs and working tree; the reason when it
/// cannot be watched exactly.
pub(super) fn build(repo: &Repository) -> Result<RepoWatch, String> {
    let taken = SystemTime::now();
    let mut folders = Folders {
        watch: FolderWatch::new().map_err(|err| err.0)?,
        count: 0,
    };
    let git_dir = repo.path().to_path_buf();
    let common = repo.commondir().to_path_buf();
    folders.add(&git_dir)?;
    if common != git_dir {
        folders.add(&common)?;
    }
    for base in [&git_dir, &common] {
        for below in ["refs", "info"] {
            folders.add_tree(&base.join(below))?;
        }
    }
    // A new object can lengthen the abbreviation of `HEAD`'s id (the
    // shortest unambiguous prefix): the object folders count too.
    folders.add_tree(&common.join("objects"))?;
    if let Some(workdir) = repo.workdir() {
        work_tree(repo, workdir, &mut folders)?;
    }
    let mut files: BTreeSet<PathBuf> = [
        git2::Config::find_global(),
        git2::Config::find_xdg(),
        git2::Config::find_system(),
    ]
    .into_iter()
    .filter_map(Result::ok)
    .collect();
    // The default excludes file sits beside the XDG config.
    if let Some(folder) = git2::Config::find_xdg()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
    {
        files.insert(folder.join("ignore"));
    }
    if let Ok(path) = repo.config().and_then(|c| c.get_path("core.excludesFile")) {
        files.insert(path);
    }
    let stamped = files
        .into_iter()
        .map(|path| {
            let stamp = bcode_fs::stamp_of(&path);
            (path, stamp)
        })
        .collect();
    Ok(RepoWatch {
        folders: folders.watch,
        stamped,
        taken,
    })
}

/// The watch being built, counted.
struct Folders {
    watch: FolderWatch,
    count: usize,
}

impl Folders {
    fn add(&mut self, folder: &Path) -> Result<(), String> {
        self.count += 1;
        if self.count > MAX_FOLDERS {
            return Err(format!(
                "the repository has more than {MAX_FOLDERS} folders to watch"
            ));
        }
        self.watch.add_unlisted(folder).map_err(|err| err.0)
    }

    /// `top` and every folder below it (no link followed); nothing when
    /// `top` does not exist.
    fn add_tree(&mut self, top: &Path) -> Result<(), String> {
        if !std::fs::symlink_metadata(top).is_ok_and(|meta| meta.is_dir()) {
            return Ok(());
        }
        let mut stack = vec![top.to_path_buf()];
        while let Some(folder) = stack.pop() {
            self.add(&folder)?;
            for entry in list(&folder)? {
                if entry.1 {
                    stack.push(folder.join(entry.0));
                }
            }
        }
        Ok(())
    }
}

/// The entries of `folder`: name and whether it is a folder (not followed).
/// Refused when its `.gitignore` is not a regular file: asking libgit2
/// whether a folder is ignored reads it, and a FIFO would block that.
fn list(folder: &Path) -> Result<Vec<(std::ffi::OsString, bool)>, String> {
    let listing = std::fs::read_dir(folder)
        .map_err(|err| format!("cannot list `{}`: {err}", folder.display()))?;
    let mut entries = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|err| format!("cannot list `{}`: {err}", folder.display()))?;
        let kind = entry.file_type().ok();
        let name = entry.file_name();
        if name == ".gitignore" && !kind.is_some_and(|kind| kind.is_file()) {
            return Err(format!(
                "`{}` is not a regular file",
                folder.join(name).display()
            ));
        }
        entries.push((name, kind.is_some_and(|kind| kind.is_dir())));
    }
    Ok(entries)
}

/// Every folder of the working tree the status scan may walk: not ignored,
/// or holding a tracked file.
fn work_tree(repo: &Repository, workdir: &Path, folders: &mut Folders) -> Result<(), String> {
    let index = repo.index().map_err(|err| err.message().to_owned())?;
    let mut tracked = BTreeSet::new();
    for entry in index.iter() {
        if entry.mode == GITLINK {
            return Err(
                "the repository has submodules, whose changes are kept elsewhere".to_owned(),
            );
        }
        // Names compared lossily on both sides: two names that look alike
        // can only make a folder watched that need not be.
        let path = String::from_utf8_lossy(&entry.path).into_owned();
        let mut end = path.len();
        while let Some(slash) = path[..end].rfind('/') {
            if !tracked.insert(path[..slash].to_owned()) {
                break;
            }
            end = slash;
        }
    }
    let mut stack = vec![(workdir.to_path_buf(), String::new())];
    while let Some((folder, relative)) = stack.pop() {
        folders.add(&folder)?;
        for (name, is_dir) in list(&folder)? {
            // Git's own folder (watched above), or a nested repository's:
            // the scan never walks either.
            if !is_dir || name == ".git" {
                continue;
            }
            let path = folder.join(&name);
            let name = name.to_string_lossy();
            let below = if relative.is_empty() {
                name.into_owned()
            } else {
                format!("{relative}/{name}")
            };
            if !tracked.contains(&below) && repo.is_path_ignored(&below).unwrap_or(false) {
                continue;
            }
            stack.push((path, below));
        }
    }
    Ok(())
}
