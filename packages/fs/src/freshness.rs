//! The one notion of "this file has not changed", for every part that
//! keeps something made from a file: discovery's rebuild, disk cache and
//! live reload, the session's turn-start check, the routing cache and the
//! MCP server's digest cache.
//!
//! A file is the same, unchanged, while its [`FileStamp`] is (size,
//! modification and status-change times, device and inode). What this
//! module adds is when a recorded stamp may be believed:
//!
//! - A stamp taken within [`RACY_WINDOW`](crate::stamp::RACY_WINDOW) of its last change is *racy*: a
//!   second change in the same clock tick would leave it as it is (the case
//!   git's index also guards against). A racy stamp never vouches for a
//!   snapshot on its own, and a cached parse of a racy file is reused only
//!   when the file's content hash still matches.
//! - A path is *observed* as the stamp a lookup answered or the OS error it
//!   failed with (a dangling link, a loop); a recorded observation holds
//!   when the same lookup answers the same now. Files, listed folders and
//!   followed links are all recorded and re-checked this way.
//! - A followed folder link also holds only while it still resolves to the
//!   same canonical folder: whether that folder is inside the root depends
//!   on the path, which no stamp covers.

use std::io;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::dir::DirHandle;
use crate::stamp::{FileKind, FileStamp};

#[cfg(test)]
use crate::stamp::RACY_WINDOW;

/// Whether `stamp`, taken at `at`, vouches for its file on its own: it was
/// not changed within `window` before `at`.
pub fn vouches(stamp: &FileStamp, at: SystemTime, window: Duration) -> bool {
    !stamp.is_racy(at, window)
}

/// What a recorded stamp says about a file whose stamp is `current` now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Same stamp, and it vouched when it was recorded: unchanged.
    Unchanged,
    /// Same stamp, but it was racy when recorded: compare content hashes.
    CompareContent,
    /// Another stamp: the file changed (or is another file).
    Changed,
}

/// Compares a stamp `recorded` at `checked_at` with the `current` one.
pub fn recheck(
    recorded: &FileStamp,
    checked_at: SystemTime,
    current: &FileStamp,
    window: Duration,
) -> Verdict {
    if recorded != current {
        Verdict::Changed
    } else if vouches(recorded, checked_at, window) {
        Verdict::Unchanged
    } else {
        Verdict::CompareContent
    }
}

/// The content hash kept for a file whose stamp could not vouch for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContentHash(blake3::Hash);

impl ContentHash {
    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        ContentHash(blake3::hash(bytes))
    }
}

/// Whether a file read now (its stamp `current`, its bytes about to be
/// hashed) needs a content hash: when it was racy on an earlier check
/// (`recheck` said so) or is racy now, a later check will compare content.
pub fn needs_content_hash(
    current: &FileStamp,
    now: SystemTime,
    window: Duration,
    comparing: bool,
) -> bool {
    comparing || !vouches(current, now, window)
}

/// Whether a racy file's content is unchanged: both hashes known and equal.
pub fn same_content(recorded: Option<ContentHash>, now: Option<ContentHash>) -> bool {
    recorded.is_some() && recorded == now
}

/// What one lookup of a path answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observed {
    /// The lookup answered this stamp.
    Stamp(FileStamp),
    /// The lookup failed with this OS error (a dangling link, a loop).
    Failed(i32),
}

impl Observed {
    /// The observation behind a lookup's result; `None` for an error with no
    /// OS code, which cannot be compared later and so vouches for nothing.
    pub fn of(result: &io::Result<FileStamp>) -> Option<Observed> {
        match result {
            Ok(stamp) => Some(Observed::Stamp(*stamp)),
            Err(err) => err.raw_os_error().map(Observed::Failed),
        }
    }
}

/// Whether looking up `relative` below `handle` (following a final link or
/// not) still answers `recorded`. One `statx` relative to the held-open
/// root; never opens the file.
pub fn still_observed(
    handle: &DirHandle,
    relative: &Path,
    follow: bool,
    recorded: Observed,
) -> bool {
    Observed::of(&handle.stamp(relative, follow)) == Some(recorded)
}

/// Whether `path` still resolves to `canonical` (a root, or a folder link
/// the walk followed).
pub fn still_resolves(path: &Path, canonical: &Path) -> bool {
    std::fs::canonicalize(path).is_ok_and(|now| now == canonical)
}

/// The stamp of the file at `path` now, following links as reads do
/// (live reload's check of each skill's instruction file between turns,
/// the session's check of the files a turn read).
pub fn stamp_of(path: &Path) -> Option<FileStamp> {
    std::fs::metadata(path)
        .ok()
        .map(|meta| FileStamp::of(&meta))
}

/// The stamp of `path` itself (a final link is not followed) when it is a
/// `kind`: what a server that serves no link records of a file or folder.
pub fn own_stamp_of(path: &Path, kind: FileKind) -> Option<FileStamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    (FileKind::of(meta.file_type()) == kind).then(|| FileStamp::of(&meta))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn stamp(secs: i64) -> FileStamp {
        FileStamp {
            len: 3,
            modified: (secs, 0),
            changed: (secs, 0),
            dev: 1,
            ino: 2,
        }
    }

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn a_stamp_vouches_only_outside_the_racy_window() {
        let old = stamp(1_000);
        assert_eq!(
            recheck(&old, at(1_010), &old, RACY_WINDOW),
            Verdict::Unchanged
        );
        assert_eq!(
            recheck(&old, at(1_001), &old, RACY_WINDOW),
            Verdict::CompareContent
        );
        assert_eq!(
            recheck(&old, at(1_010), &stamp(1_005), RACY_WINDOW),
            Verdict::Changed
        );
        assert!(needs_content_hash(&old, at(1_001), RACY_WINDOW, false));
        assert!(!needs_content_hash(&old, at(1_010), RACY_WINDOW, false));
        assert!(needs_content_hash(&old, at(1_010), RACY_WINDOW, true));
    }

    #[test]
    fn content_matches_only_when_both_hashes_are_known() {
        let a = Some(ContentHash::of(b"a"));
        assert!(same_content(a, Some(ContentHash::of(b"a"))));
        assert!(!same_content(a, Some(ContentHash::of(b"b"))));
        assert!(!same_content(None, None));
    }

    #[test]
    fn observations_hold_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "x").unwrap();
        let handle = DirHandle::open(dir.path()).unwrap();
        let seen = Observed::of(&handle.stamp(Path::new("a"), false)).unwrap();
        assert!(still_observed(&handle, Path::new("a"), false, seen));
        let missing = Observed::of(&handle.stamp(Path::new("b"), false)).unwrap();
        assert_eq!(missing, Observed::Failed(libc::ENOENT));
        std::fs::write(dir.path().join("a"), "longer").unwrap();
        assert!(!still_observed(&handle, Path::new("a"), false, seen));
        assert!(still_observed(&handle, Path::new("b"), false, missing));
        assert_eq!(stamp_of(&dir.path().join("a")).map(|s| s.len), Some(6));
        let a = dir.path().join("a");
        assert_eq!(own_stamp_of(&a, FileKind::File), stamp_of(&a));
        assert_eq!(own_stamp_of(&a, FileKind::Dir), None);
        assert!(own_stamp_of(dir.path(), FileKind::Dir).is_some());
    }
}
