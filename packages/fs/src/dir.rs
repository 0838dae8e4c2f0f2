//! Directory handles: stamps of entries looked up relative to an open
//! directory. Checking ten thousand files below one root by absolute path
//! makes the kernel walk the root's path ten thousand times; relative to a
//! held directory it walks only the last components. On Linux this is one
//! `statx` per entry through rustix's safe API; elsewhere it falls back to
//! `std` with joined paths (same answers, no speed-up).

use std::io;
use std::path::{Path, PathBuf};

use crate::FileStamp;

/// An open directory to look entries up under.
#[derive(Debug)]
pub struct DirHandle {
    path: PathBuf,
    #[cfg(target_os = "linux")]
    fd: rustix::fd::OwnedFd,
}

impl DirHandle {
    /// Opens `path`, which must be a directory (a final symlink is followed).
    pub fn open(path: &Path) -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{Mode, OFlags};
            let fd = rustix::fs::open(
                path,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            Ok(DirHandle {
                path: path.to_path_buf(),
                fd,
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            if !std::fs::metadata(path)?.is_dir() {
                return Err(io::Error::other("not a directory"));
            }
            Ok(DirHandle {
                path: path.to_path_buf(),
            })
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stamp of `relative` below this directory (empty: the directory
    /// itself), following a final symlink only when `follow` is set, exactly
    /// as `std::fs::metadata` / `symlink_metadata` of the joined path would.
    pub fn stamp(&self, relative: &Path, follow: bool) -> io::Result<FileStamp> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{AtFlags, StatxFlags};
            let mut flags = if follow {
                AtFlags::empty()
            } else {
                AtFlags::SYMLINK_NOFOLLOW
            };
            if relative.as_os_str().is_empty() {
                flags |= AtFlags::EMPTY_PATH;
            }
            let stx = rustix::fs::statx(&self.fd, relative, flags, StatxFlags::BASIC_STATS)?;
            Ok(FileStamp {
                len: stx.stx_size,
                modified: (stx.stx_mtime.tv_sec, i64::from(stx.stx_mtime.tv_nsec)),
                changed: (stx.stx_ctime.tv_sec, i64::from(stx.stx_ctime.tv_nsec)),
                // As `std` builds `st_dev` from `statx`, so stamps compare equal.
                dev: libc::makedev(stx.stx_dev_major, stx.stx_dev_minor),
                ino: stx.stx_ino,
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let path = self.path.join(relative);
            let meta = if follow {
                std::fs::metadata(path)?
            } else {
                std::fs::symlink_metadata(path)?
            };
            Ok(FileStamp::of(&meta))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn relative_stamps_equal_std_stamps() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("skill")).unwrap();
        std::fs::write(root.join("skill/SKILL.md"), "---\n---\n").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("skill/SKILL.md", root.join("link.md")).unwrap();
        let handle = DirHandle::open(root).unwrap();
        let file = Path::new("skill/SKILL.md");
        let std_stamp = FileStamp::of(&std::fs::symlink_metadata(root.join(file)).unwrap());
        assert_eq!(handle.stamp(file, false).unwrap(), std_stamp);
        assert_eq!(handle.stamp(file, true).unwrap(), std_stamp);
        let itself = FileStamp::of(&std::fs::metadata(root).unwrap());
        assert_eq!(handle.stamp(Path::new(""), true).unwrap(), itself);
        #[cfg(unix)]
        {
            let link = Path::new("link.md");
            let link_stamp = FileStamp::of(&std::fs::symlink_metadata(root.join(link)).unwrap());
            assert_eq!(handle.stamp(link, false).unwrap(), link_stamp);
            assert_eq!(handle.stamp(link, true).unwrap(), std_stamp);
        }
    }

    #[test]
    fn missing_entries_and_loops_are_errors_of_their_kind() {
        let dir = tempfile::tempdir().unwrap();
        let handle = DirHandle::open(dir.path()).unwrap();
        let err = handle.stamp(Path::new("nope/SKILL.md"), true).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("loop", dir.path().join("loop")).unwrap();
            let err = handle.stamp(Path::new("loop"), true).unwrap_err();
            assert_eq!(err.raw_os_error(), Some(libc::ELOOP));
            assert!(handle.stamp(Path::new("loop"), false).is_ok());
        }
        assert!(DirHandle::open(&dir.path().join("nope")).is_err());
    }
}
