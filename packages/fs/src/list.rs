//! Listing a directory's entries: name, kind and inode, without `.` and
//! `..`. On Linux the entries are read with `getdents64` into one 32 KiB
//! buffer per listing through rustix's safe `RawDir`, so an entry costs one
//! allocation (its name) where `std::fs::read_dir` makes two or three; a
//! root of 10,000 skill folders is listed on the one thread that walks it.
//! Elsewhere `std` is used, with the same answers.

use std::ffi::OsString;
use std::io;
use std::path::Path;

use crate::stamp::FileKind;

/// One directory entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedEntry {
    /// The name, or its raw bytes when it is not UTF-8.
    pub name: Result<String, OsString>,
    /// What the entry itself is (a symlink is `Symlink`, not followed).
    pub kind: FileKind,
    /// The inode number (0 where the platform has none).
    pub ino: u64,
}

/// Calls `each` with every entry of the directory `path`, or with the error
/// that stopped reading one; `each` returns `false` to stop early. Opening
/// the directory failing is the returned error.
pub fn for_each_entry(
    path: &Path,
    each: &mut dyn FnMut(io::Result<ListedEntry>) -> bool,
) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        linux::for_each_entry(path, each)
    }
    #[cfg(not(target_os = "linux"))]
    {
        portable::for_each_entry(path, each)
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::OsStr;
    use std::io;
    use std::mem::MaybeUninit;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    use rustix::fd::AsFd;
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};

    use super::ListedEntry;

    /// `getdents64` buffer: a few hundred entries per system call.
    const BUFFER: usize = 32 * 1024;

    pub fn for_each_entry(
        path: &Path,
        each: &mut dyn FnMut(io::Result<ListedEntry>) -> bool,
    ) -> io::Result<()> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut buf = vec![MaybeUninit::<u8>::uninit(); BUFFER];
        let mut dir = RawDir::new(&fd, &mut buf);
        while let Some(entry) = dir.next() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    // A failed read is reported once and ends the listing.
                    each(Err(err.into()));
                    return Ok(());
                }
            };
            let name = entry.file_name().to_bytes();
            // Inode 0 marks a deleted entry on some filesystems; glibc's
            // readdir (and so `std`) skips those too.
            if name == b"." || name == b".." || entry.ino() == 0 {
                continue;
            }
            let kind = match entry.file_type() {
                // The filesystem did not say (DT_UNKNOWN): ask it.
                FileType::Unknown => {
                    let path = Path::new(OsStr::from_bytes(name));
                    match crate::dir::info_at(fd.as_fd(), path, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(info) => info.kind,
                        Err(err) => {
                            // Named, as the error is about this entry.
                            let err =
                                io::Error::new(err.kind(), format!("{}: {err}", path.display()));
                            if !each(Err(err)) {
                                return Ok(());
                            }
                            continue;
                        }
                    }
                }
                known => crate::dir::kind_of(known),
            };
            let name = match std::str::from_utf8(name) {
                Ok(text) => Ok(text.to_owned()),
                Err(_) => Err(OsStr::from_bytes(name).to_owned()),
            };
            let keep_going = each(Ok(ListedEntry {
                name,
                kind,
                ino: entry.ino(),
            }));
            if !keep_going {
                return Ok(());
            }
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod portable {
    use std::io;
    use std::path::Path;

    use super::ListedEntry;
    use crate::stamp::FileKind;

    pub fn for_each_entry(
        path: &Path,
        each: &mut dyn FnMut(io::Result<ListedEntry>) -> bool,
    ) -> io::Result<()> {
        for entry in std::fs::read_dir(path)? {
            let listed = entry.and_then(|entry| {
                let kind = FileKind::of(entry.file_type()?);
                Ok(ListedEntry {
                    name: entry.file_name().into_string(),
                    kind,
                    ino: ino(&entry),
                })
            });
            if !each(listed) {
                break;
            }
        }
        Ok(())
    }

    #[cfg(unix)]
    fn ino(entry: &std::fs::DirEntry) -> u64 {
        std::os::unix::fs::DirEntryExt::ino(entry)
    }

    #[cfg(not(unix))]
    fn ino(_entry: &std::fs::DirEntry) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn listing(path: &Path) -> Vec<ListedEntry> {
        let mut out = Vec::new();
        for_each_entry(path, &mut |entry| {
            out.push(entry.unwrap());
            true
        })
        .unwrap();
        out.sort_by(|a, b| format!("{:?}", a.name).cmp(&format!("{:?}", b.name)));
        out
    }

    #[cfg(unix)]
    #[test]
    fn lists_what_std_lists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("folder")).unwrap();
        std::fs::write(root.join("file.md"), "x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("folder", root.join("link")).unwrap();
        // More entries than one getdents buffer holds.
        for i in 0..2000 {
            std::fs::write(root.join(format!("many-{i:04}-{}", "x".repeat(20))), "").unwrap();
        }
        let ours = listing(root);
        let mut std_entries: Vec<ListedEntry> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                ListedEntry {
                    name: e.file_name().into_string(),
                    kind: FileKind::of(e.file_type().unwrap()),
                    ino: std::os::unix::fs::DirEntryExt::ino(&e),
                }
            })
            .collect();
        std_entries.sort_by(|a, b| format!("{:?}", a.name).cmp(&format!("{:?}", b.name)));
        assert_eq!(ours, std_entries);
        assert_eq!(ours.len(), 2003);
        let kind = |name: &str| {
            ours.iter()
                .find(|e| e.name.as_deref() == Ok(name))
                .unwrap()
                .kind
        };
        assert_eq!(kind("folder"), FileKind::Dir);
        assert_eq!(kind("file.md"), FileKind::File);
        assert_eq!(kind("link"), FileKind::Symlink);
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_names_come_back_raw() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let raw = std::ffi::OsStr::from_bytes(b"bad-\xff");
        std::fs::write(dir.path().join(raw), "").unwrap();
        let ours = listing(dir.path());
        assert_eq!(ours.len(), 1);
        assert_eq!(ours[0].name, Err(raw.to_owned()));
    }

    #[test]
    fn stopping_early_and_missing_folders() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..10 {
            std::fs::write(dir.path().join(format!("{i}")), "").unwrap();
        }
        let mut seen = 0;
        for_each_entry(dir.path(), &mut |_| {
            seen += 1;
            seen < 3
        })
        .unwrap();
        assert_eq!(seen, 3);
        assert!(for_each_entry(&dir.path().join("missing"), &mut |_| true).is_err());
    }
}
