//! Has a file the session read changed since? One [`bcode_fs::FileStamp`]
//! per path (absent files included, so a file appearing counts), checked
//! at each turn start with one `stat` each, by `bcode_fs`'s one notion of
//! an unchanged file: a stamp that did not vouch when taken (the racy
//! rule) keeps no content hash here, so such a set always counts as
//! changed (and is read again).

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use bcode_fs::FileStamp;

/// The stamps of a set of files, taken when they were read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stamps {
    entries: Vec<(PathBuf, Option<FileStamp>)>,
    racy: bool,
    window: Duration,
}

impl Stamps {
    /// Stamps `paths` now (following symlinks, as the reads do); one
    /// changed within `window` of now counts as changed (the session's
    /// racy window, `bcode_fs::RACY_WINDOW` unless a test shortens it).
    pub(crate) fn of(paths: impl IntoIterator<Item = PathBuf>, window: Duration) -> Stamps {
        let now = SystemTime::now();
        let entries: Vec<(PathBuf, Option<FileStamp>)> = paths
            .into_iter()
            .map(|path| {
                let stamp = bcode_fs::stamp_of(&path);
                (path, stamp)
            })
            .collect();
        let racy = entries
            .iter()
            .any(|(_, stamp)| stamp.is_some_and(|s| !bcode_fs::vouches(&s, now, window)));
        Stamps {
            entries,
            racy,
            window,
        }
    }

    /// These stamps and those of `paths`, taken now.
    pub(crate) fn and(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Stamps {
        let more = Stamps::of(paths, self.window);
        self.entries.extend(more.entries);
        self.racy |= more.racy;
        self
    }

    /// Whether any file changed, appeared or vanished since [`Stamps::of`].
    pub(crate) fn changed(&self) -> bool {
        self.racy
            || self
                .entries
                .iter()
                .any(|(path, old)| bcode_fs::stamp_of(path) != *old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_changed_or_removed_file_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.md");
        let absent = Stamps::of([file.clone()], Duration::ZERO);
        assert!(!absent.changed());
        std::fs::write(&file, "one").unwrap();
        assert!(absent.changed());
        let present = Stamps::of([file.clone()], Duration::ZERO);
        assert!(!present.changed());
        std::fs::write(&file, "two!").unwrap();
        assert!(present.changed());
        let again = Stamps::of([file.clone()], bcode_fs::RACY_WINDOW);
        assert!(again.changed(), "a fresh modification is racy");
        std::fs::remove_file(&file).unwrap();
        assert!(again.changed());
    }
}
