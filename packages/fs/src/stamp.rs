//! File stamps: the metadata that says whether a file is the one seen
//! before, unchanged. One type for every way a stamp is taken (`std`
//! metadata, a directory-relative `statx`), built from the same raw kernel
//! fields so that stamps of an unchanged file always compare equal.

use std::fs::Metadata;
use std::time::{Duration, SystemTime};

/// What kind of entry a path names (without or after following a link).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (only when the link itself was looked at, not
    /// followed).
    Symlink,
    /// A FIFO, socket or device.
    Special,
}

impl FileKind {
    /// The kind a `std` file type names; anything that is not a link,
    /// directory or regular file is [`FileKind::Special`].
    pub fn of(file_type: std::fs::FileType) -> Self {
        if file_type.is_symlink() {
            FileKind::Symlink
        } else if file_type.is_dir() {
            FileKind::Dir
        } else if file_type.is_file() {
            FileKind::File
        } else {
            FileKind::Special
        }
    }
}

/// A stamp with the kind of entry it belongs to: what a `stat` answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileInfo {
    /// What the path named: file, directory, link or special file.
    pub kind: FileKind,
    /// Size, times and identity of the same entry.
    pub stamp: FileStamp,
}

impl FileInfo {
    /// Kind and stamp from `std` metadata (`metadata` or `symlink_metadata`,
    /// whichever the caller took).
    pub fn of(meta: &Metadata) -> Self {
        FileInfo {
            kind: FileKind::of(meta.file_type()),
            stamp: FileStamp::of(meta),
        }
    }

    /// Whether the entry is a regular file.
    pub fn is_file(&self) -> bool {
        self.kind == FileKind::File
    }

    /// Whether the entry is a directory.
    pub fn is_dir(&self) -> bool {
        self.kind == FileKind::Dir
    }

    /// Whether the entry is a symbolic link (seen without following it).
    pub fn is_symlink(&self) -> bool {
        self.kind == FileKind::Symlink
    }
}

/// Stamps changed this close to the moment they were taken are not trusted
/// on their own (see [`FileStamp::is_racy`]). Two seconds covers the
/// coarsest common timestamps (FAT's two-second mtime; ext4 and APFS are
/// far finer). The one racy window of the project.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Size, times and identity of a file, compared whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileStamp {
    /// Size in bytes.
    pub len: u64,
    /// Modification time as seconds and nanoseconds since the epoch.
    pub modified: (i64, i64),
    /// Status-change time (`ctime`), which also moves on renames and
    /// permission changes; `(0, 0)` where the platform has none.
    pub changed: (i64, i64),
    /// Device number of the file system holding the file; `0` where the
    /// platform has none (see [`FileStamp::identity`]).
    pub dev: u64,
    /// Inode number on that device; `0` where the platform has none.
    pub ino: u64,
}

impl FileStamp {
    /// The stamp `std` metadata describes, from the raw Unix fields so it
    /// equals a `statx` stamp of the same unchanged file (elsewhere only the
    /// size and modification time are known).
    pub fn of(meta: &Metadata) -> Self {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            FileStamp {
                len: meta.len(),
                modified: (meta.mtime(), meta.mtime_nsec()),
                changed: (meta.ctime(), meta.ctime_nsec()),
                dev: meta.dev(),
                ino: meta.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            let modified = meta
                .modified()
                .ok()
                .and_then(|m| m.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or((0, 0), |d| {
                    (
                        i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                        i64::from(d.subsec_nanos()),
                    )
                });
            FileStamp {
                len: meta.len(),
                modified,
                changed: (0, 0),
                dev: 0,
                ino: 0,
            }
        }
    }

    /// Device and inode; `None` where the platform has none, which turns off
    /// alias detection rather than merging unrelated files.
    pub fn identity(&self) -> Option<(u64, u64)> {
        (self.dev != 0 || self.ino != 0).then_some((self.dev, self.ino))
    }

    /// The modification time as a `SystemTime` (`None` before the epoch or
    /// out of range), for racy-timestamp checks.
    pub fn modified_time(&self) -> Option<SystemTime> {
        let (secs, nanos) = self.modified;
        let secs = u64::try_from(secs).ok()?;
        let nanos = u32::try_from(nanos).ok()?;
        SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
    }

    /// Whether the file was modified within `window` before `at` (or its
    /// time is unknown): a change made in the same clock tick as the stamp
    /// would then not move the stamp, so it cannot be trusted alone.
    ///
    /// The later of the modification and status-change times counts: an
    /// mtime can be set back (`cp -p`, `rsync -t`, `tar`), the ctime cannot.
    pub fn is_racy(&self, at: SystemTime, window: Duration) -> bool {
        // An unknown modification time is never trusted.
        let Some(modified) = self.modified_time() else {
            return true;
        };
        let changed = u64::try_from(self.changed.0)
            .ok()
            .zip(u32::try_from(self.changed.1).ok())
            .and_then(|(secs, nanos)| {
                SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
            });
        let latest = changed.map_or(modified, |changed| changed.max(modified));
        latest + window >= at
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_fresh_file_is_racy_and_an_old_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a");
        std::fs::write(&path, "x").unwrap();
        let stamp = FileStamp::of(&std::fs::metadata(&path).unwrap());
        let window = Duration::from_secs(2);
        assert!(stamp.is_racy(SystemTime::now(), window));
        let later = SystemTime::now() + Duration::from_secs(60);
        assert!(!stamp.is_racy(later, window));
        assert!(stamp.identity().is_some());
        // Setting the mtime back does not make a just-written file old.
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
        let set_back = FileStamp::of(&std::fs::metadata(&path).unwrap());
        assert!(set_back.is_racy(SystemTime::now(), window));
    }

    #[test]
    fn times_before_the_epoch_have_no_system_time() {
        let stamp = FileStamp {
            len: 0,
            modified: (-5, 0),
            changed: (0, 0),
            dev: 1,
            ino: 1,
        };
        assert_eq!(stamp.modified_time(), None);
        assert!(stamp.is_racy(SystemTime::now(), Duration::from_secs(2)));
    }
}
