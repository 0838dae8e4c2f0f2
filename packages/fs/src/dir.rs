//! Directory handles: stamps of entries looked up relative to an open
//! directory. Checking ten thousand files below one root by absolute path
//! makes the kernel walk the root's path ten thousand times; relative to a
//! held directory it walks only the last components. On Linux this is one
//! `statx` per entry through rustix's safe API; elsewhere it falls back to
//! `std` with joined paths (same answers, no speed-up).

use std::io;
use std::path::{Path, PathBuf};

use crate::confine::Confinement;
use crate::read::ReadError;
use crate::stamp::{FileInfo, FileKind, FileStamp};

/// An open directory to look entries up under.
#[derive(Debug)]
pub struct DirHandle {
    path: PathBuf,
    #[cfg(target_os = "linux")]
    fd: rustix::fd::OwnedFd,
    /// Where files opened through the handle may resolve, when that is
    /// checked (see [`DirHandle::confined`]).
    confinement: Option<Confinement>,
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
                confinement: None,
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            if !std::fs::metadata(path)?.is_dir() {
                return Err(io::Error::other("not a directory"));
            }
            Ok(DirHandle {
                path: path.to_path_buf(),
                confinement: None,
            })
        }
    }

    /// This handle, with files opened through [`DirHandle::open_regular`]
    /// kept to `confinement`: on Linux with `openat2(RESOLVE_BENEATH)`
    /// relative to the handle, which costs what a plain `openat` costs, and,
    /// for a path the kernel will not resolve beneath the folder (one through
    /// a link leading out of it, which the walk checked), through
    /// [`Confinement::open_regular`]. So a file swapped for a link after
    /// the walk looked at it cannot lead a read out of its confinement.
    /// Where the kernel has no `openat2` (before 5.6, or a seccomp filter
    /// refuses it) files are opened as by an unconfined handle.
    pub fn confined(mut self, confinement: Confinement) -> Self {
        self.confinement = Some(confinement);
        self
    }

    /// The path the directory was opened at, as the caller gave it; stamps
    /// and reads below the handle are reported relative to it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stamp of `relative` below this directory (empty: the directory
    /// itself), following a final symlink only when `follow` is set, exactly
    /// as `std::fs::metadata` / `symlink_metadata` of the joined path would.
    pub fn stamp(&self, relative: &Path, follow: bool) -> io::Result<FileStamp> {
        self.info(relative, follow).map(|info| info.stamp)
    }

    /// `path` relative to this directory when it lies below it (compared as
    /// text: `Path::strip_prefix` parses every component of both paths).
    pub fn relative<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        below(path, &self.path)
    }

    /// [`crate::read::open_regular`] of `path`, looked up relative to this
    /// directory when it lies below it.
    pub fn open_regular(&self, path: &Path) -> Result<(std::fs::File, u64), ReadError> {
        #[cfg(target_os = "linux")]
        if let Some(relative) = self.relative(path)
            && !relative.as_os_str().is_empty()
        {
            use rustix::fs::{Mode, OFlags, ResolveFlags};
            use rustix::io::Errno;
            let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
            if let Some(confinement) = &self.confinement {
                let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
                match rustix::fs::openat2(&self.fd, relative, flags, Mode::empty(), resolve) {
                    Ok(fd) => return crate::read::check_regular(std::fs::File::from(fd)),
                    // No `openat2` here: as an unconfined handle, below.
                    Err(Errno::NOSYS | Errno::PERM) => {}
                    // Out of the folder, through an absolute link, or a
                    // rename racing the lookup: resolved and checked.
                    Err(Errno::XDEV | Errno::LOOP | Errno::INVAL | Errno::AGAIN) => {
                        return confinement.open_regular(path);
                    }
                    Err(err) => return Err(ReadError::Io(err.into())),
                }
            }
            let fd = rustix::fs::openat(&self.fd, relative, flags, Mode::empty())
                .map_err(|err| ReadError::Io(err.into()))?;
            return crate::read::check_regular(std::fs::File::from(fd));
        }
        match &self.confinement {
            Some(confinement) => confinement.open_regular(path),
            None => crate::read::open_regular(path),
        }
    }

    /// Kind and stamp of `relative`, as [`DirHandle::stamp`].
    pub fn info(&self, relative: &Path, follow: bool) -> io::Result<FileInfo> {
        #[cfg(target_os = "linux")]
        {
            use rustix::fd::AsFd;
            use rustix::fs::AtFlags;
            let mut flags = if follow {
                AtFlags::empty()
            } else {
                AtFlags::SYMLINK_NOFOLLOW
            };
            if relative.as_os_str().is_empty() {
                flags |= AtFlags::EMPTY_PATH;
            }
            info_at(self.fd.as_fd(), relative, flags)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let path = self.path.join(relative);
            let meta = if follow {
                std::fs::metadata(path)?
            } else {
                std::fs::symlink_metadata(path)?
            };
            Ok(FileInfo::of(&meta))
        }
    }
}

/// Kind and stamp of `path` under `dir` with one `statx`, or with
/// `fstatat` where `statx` is missing (kernels before 4.11) or refused
/// (some seccomp profiles), as `std` falls back too. Both give the same
/// stamp `std` would.
#[cfg(target_os = "linux")]
pub(crate) fn info_at(
    dir: rustix::fd::BorrowedFd<'_>,
    path: &Path,
    flags: rustix::fs::AtFlags,
) -> io::Result<FileInfo> {
    use rustix::io::Errno;
    match rustix::fs::statx(dir, path, flags, rustix::fs::StatxFlags::BASIC_STATS) {
        Ok(stx) => Ok(FileInfo {
            kind: kind_of_mode(stx.stx_mode.into()),
            stamp: FileStamp {
                len: stx.stx_size,
                modified: (stx.stx_mtime.tv_sec, i64::from(stx.stx_mtime.tv_nsec)),
                changed: (stx.stx_ctime.tv_sec, i64::from(stx.stx_ctime.tv_nsec)),
                // As `std` builds `st_dev` from `statx`, so stamps compare equal.
                dev: libc::makedev(stx.stx_dev_major, stx.stx_dev_minor),
                ino: stx.stx_ino,
            },
        }),
        Err(err) if err == Errno::NOSYS || err == Errno::PERM => info_by_stat(dir, path, flags),
        Err(err) => Err(err.into()),
    }
}

/// [`info_at`] with `fstatat`, for where `statx` is unavailable.
#[cfg(target_os = "linux")]
// `struct stat`'s field types differ by architecture; the conversions are
// no-ops on some of them.
#[allow(clippy::useless_conversion)]
fn info_by_stat(
    dir: rustix::fd::BorrowedFd<'_>,
    path: &Path,
    flags: rustix::fs::AtFlags,
) -> io::Result<FileInfo> {
    let st = rustix::fs::statat(dir, path, flags)?;
    let int = |v: i128| i64::try_from(v).unwrap_or(0);
    Ok(FileInfo {
        kind: kind_of_mode(st.st_mode.into()),
        stamp: FileStamp {
            len: u64::try_from(st.st_size).unwrap_or(0),
            modified: (int(st.st_mtime.into()), int(st.st_mtime_nsec.into())),
            changed: (int(st.st_ctime.into()), int(st.st_ctime_nsec.into())),
            dev: st.st_dev.into(),
            ino: st.st_ino.into(),
        },
    })
}

#[cfg(target_os = "linux")]
fn kind_of_mode(mode: u32) -> FileKind {
    kind_of(rustix::fs::FileType::from_raw_mode(
        rustix::fs::RawMode::from(mode),
    ))
}

/// The kind a file type stands for (anything but a regular file, a folder
/// or a symlink is special).
#[cfg(target_os = "linux")]
pub(crate) fn kind_of(file_type: rustix::fs::FileType) -> FileKind {
    use rustix::fs::FileType;
    match file_type {
        FileType::RegularFile => FileKind::File,
        FileType::Directory => FileKind::Dir,
        FileType::Symlink => FileKind::Symlink,
        _ => FileKind::Special,
    }
}

/// `path` relative to `base`, which it was joined from; `None` when it does
/// not lie below it.
pub fn below<'p>(path: &'p Path, base: &Path) -> Option<&'p Path> {
    // Compared as bytes on Unix: validating both paths as UTF-8 first was
    // a visible share of opening 10,000 files.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let prefix = base.as_os_str().as_bytes();
        let rest = path.as_os_str().as_bytes().strip_prefix(prefix)?;
        let rest = match rest.strip_prefix(b"/") {
            Some(rest) => rest,
            None if rest.is_empty() || prefix.ends_with(b"/") => rest,
            None => return None,
        };
        Some(Path::new(std::ffi::OsStr::from_bytes(rest)))
    }
    #[cfg(not(unix))]
    {
        if let (Some(text), Some(prefix)) = (path.to_str(), base.to_str()) {
            let rest = text.strip_prefix(prefix)?;
            let rest = match rest.strip_prefix(std::path::MAIN_SEPARATOR) {
                Some(rest) => rest,
                None if rest.is_empty() || prefix.ends_with(std::path::MAIN_SEPARATOR) => rest,
                None => return None,
            };
            return Some(Path::new(rest));
        }
        path.strip_prefix(base).ok()
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
        let info = handle.info(file, false).unwrap();
        assert_eq!(
            info,
            FileInfo::of(&std::fs::metadata(root.join(file)).unwrap())
        );
        assert!(info.is_file());
        assert!(handle.info(Path::new("skill"), false).unwrap().is_dir());
        let (_, len) = handle.open_regular(&root.join(file)).unwrap();
        assert_eq!(len, 8);
        assert!(matches!(
            handle.open_regular(&root.join("skill")),
            Err(ReadError::NotRegular)
        ));
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
            assert!(handle.info(link, false).unwrap().is_symlink());
            assert_eq!(handle.stamp(link, true).unwrap(), std_stamp);
        }
    }

    /// A confined handle refuses a file swapped for a link out of its
    /// confinement, and follows links the confinement allows (inside the
    /// folder, or out of it to elsewhere inside the repository).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_confined_handle_keeps_reads_inside_the_confinement() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (repo, root) = (base.join("repo"), base.join("repo/skills"));
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(repo.join("docs")).unwrap();
        std::fs::write(root.join("a/SKILL.md"), "inside").unwrap();
        std::fs::write(repo.join("docs/b.md"), "in the repo").unwrap();
        std::fs::write(base.join("secret.md"), "secret").unwrap();
        std::os::unix::fs::symlink("../docs/b.md", root.join("b.md")).unwrap();
        std::os::unix::fs::symlink(base.join("secret.md"), root.join("out.md")).unwrap();
        std::os::unix::fs::symlink("../../secret.md", root.join("up.md")).unwrap();
        let handle = DirHandle::open(&root)
            .unwrap()
            .confined(Confinement::within(&repo));
        let read = |name: &str| {
            let (mut file, _) = handle.open_regular(&root.join(name))?;
            let mut text = String::new();
            std::io::Read::read_to_string(&mut file, &mut text).map_err(ReadError::Io)?;
            Ok::<_, ReadError>(text)
        };
        assert_eq!(read("a/SKILL.md").unwrap(), "inside");
        assert_eq!(read("b.md").unwrap(), "in the repo");
        for name in ["out.md", "up.md"] {
            let err = read(name).unwrap_err();
            assert_eq!(
                err.escape().unwrap().target,
                base.join("secret.md"),
                "{name}"
            );
        }
        // Unconfined, as before: links are followed.
        let plain = DirHandle::open(&root).unwrap();
        assert!(plain.open_regular(&root.join("out.md")).is_ok());
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

    #[cfg(target_os = "linux")]
    #[test]
    fn the_fstatat_fallback_gives_the_same_info_as_statx() {
        use rustix::fd::AsFd;
        use rustix::fs::AtFlags;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("skill")).unwrap();
        std::fs::write(root.join("skill/SKILL.md"), "---\n---\n").unwrap();
        std::os::unix::fs::symlink("skill/SKILL.md", root.join("link.md")).unwrap();
        let handle = DirHandle::open(root).unwrap();
        for (name, flags) in [
            ("skill", AtFlags::SYMLINK_NOFOLLOW),
            ("skill/SKILL.md", AtFlags::SYMLINK_NOFOLLOW),
            ("link.md", AtFlags::SYMLINK_NOFOLLOW),
            ("link.md", AtFlags::empty()),
        ] {
            let path = Path::new(name);
            let by_statx = info_at(handle.fd.as_fd(), path, flags).unwrap();
            let by_stat = info_by_stat(handle.fd.as_fd(), path, flags).unwrap();
            assert_eq!(by_statx, by_stat, "{name}");
        }
    }

    #[test]
    fn below_strips_whole_components_only() {
        let base = Path::new("/r/skills");
        assert_eq!(
            below(Path::new("/r/skills/a/SKILL.md"), base),
            Some(Path::new("a/SKILL.md"))
        );
        assert_eq!(below(Path::new("/r/skills"), base), Some(Path::new("")));
        assert_eq!(below(Path::new("/r/skillset/a"), base), None);
        assert_eq!(below(Path::new("/other"), base), None);
        assert_eq!(
            below(Path::new("/a.md"), Path::new("/")),
            Some(Path::new("a.md"))
        );
        #[cfg(unix)]
        {
            use std::ffi::OsStr;
            use std::os::unix::ffi::OsStrExt;
            let odd = Path::new(OsStr::from_bytes(b"/r/skills/\xff/SKILL.md"));
            assert_eq!(
                below(odd, base),
                Some(Path::new(OsStr::from_bytes(b"\xff/SKILL.md")))
            );
        }
    }
}
