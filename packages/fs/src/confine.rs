//! Confinement: where a file a root supplies may really be. A repository's
//! files (instructions, invariants, template overrides, skills, its config)
//! must resolve inside the repository, and nothing is ever read from
//! `/proc`, `/sys` or `/dev`, whatever links lead there (`AGENTS.md ->
//! /proc/self/environ` would put the whole environment into the prompt, and
//! `/proc` files pass the regular-file check).
//!
//! Reads check the opened file, not the path: on Linux the file
//! descriptor's real path (`/proc/self/fd/N`), so a link swapped between a
//! check and the open cannot slip through; elsewhere, or without `/proc`,
//! the canonical path. Inside a folder, Linux opens the file with
//! `openat2(RESOLVE_BENEATH)` relative to the folder, so a file outside is
//! never even opened; where the kernel cannot (see
//! [`Confinement::open_regular`]) the path is resolved and checked first. The skill walk, which must not spend a syscall per
//! file, checks only the entries it already knows are links, with
//! [`Confinement::check`] on the target it resolved.

use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::read::{ReadError, check_regular, open_nonblocking, read_rest};

/// The folders nothing is ever read from: their files are the machine's
/// (the process environment, memory, devices), never a repository's.
pub(crate) const SYSTEM_FOLDERS: [&str; 3] = ["/proc", "/sys", "/dev"];

/// Whether `real` (a resolved path) lies in one of [`SYSTEM_FOLDERS`].
pub(crate) fn is_system_path(real: &Path) -> bool {
    cfg!(unix)
        && SYSTEM_FOLDERS
            .iter()
            .any(|folder| real.starts_with(Path::new(folder)))
}

/// Where the files of one root may resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confinement {
    /// The canonical folder every file must lie in; `None`: anywhere but
    /// the system folders (a user's own roots, whose links may lead into a
    /// Nix store or a dotfiles checkout).
    within: Option<PathBuf>,
}

impl Confinement {
    /// Files must resolve inside `root` (canonicalised here; as given when
    /// it does not exist, in which case nothing below it opens either).
    pub fn within(root: &Path) -> Self {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        Confinement { within: Some(root) }
    }

    /// Files may resolve anywhere except the system folders.
    pub fn anywhere_but_system() -> Self {
        Confinement { within: None }
    }

    /// Where a file at `path` (absolute; a file named on a command line,
    /// or one beside it) may resolve: inside the repository that holds it,
    /// the nearest folder at or above its folder, lexically, with a `.git`
    /// entry (the one [`crate::repository_root`] starts from), since the repository
    /// chose what lies there, links included; anywhere but the system
    /// folders when no repository holds it (a file of the user's own).
    pub fn for_path(path: &Path) -> Self {
        let path = bcode_text::lexical(path);
        let folder = path.parent().unwrap_or(&path);
        match crate::root::enclosing_repository(folder) {
            Some(repo) => Confinement::within(&repo),
            None => Confinement::anywhere_but_system(),
        }
    }

    /// The canonical folder files must stay in, if any.
    pub fn root(&self) -> Option<&Path> {
        self.within.as_deref()
    }

    /// Whether `path`, which resolves to `real` (canonical), may be read.
    pub fn check(&self, path: &Path, real: &Path) -> Result<(), Escape> {
        let escape = |reason| Escape {
            path: path.to_path_buf(),
            target: real.to_path_buf(),
            reason,
        };
        if is_system_path(real) {
            return Err(escape(EscapeReason::System));
        }
        match &self.within {
            Some(root) if !real.starts_with(root) => {
                Err(escape(EscapeReason::Outside { root: root.clone() }))
            }
            _ => Ok(()),
        }
    }

    /// [`crate::open_regular`], refusing a file that really lies outside the
    /// confinement (see the module docs). Inside a folder, on Linux, the file
    /// is opened with `openat2(RESOLVE_BENEATH)` relative to the folder, so
    /// the kernel itself refuses every path that leaves it, whatever link
    /// is swapped in when. Where that cannot say (an older kernel, a seccomp
    /// filter, an absolute link, which `RESOLVE_BENEATH` refuses even when it
    /// points back inside) the path is resolved and checked before it is
    /// opened, so a file outside is not even opened; and whichever way it was
    /// opened, the open file's real path is checked before a byte is read.
    pub fn open_regular(&self, path: &Path) -> Result<(File, u64), ReadError> {
        #[cfg(target_os = "linux")]
        let beneath = match &self.within {
            Some(root) => open_beneath(root, path)?,
            None => None,
        };
        #[cfg(not(target_os = "linux"))]
        let beneath = None;
        let file = match beneath {
            Some(file) => file,
            None => {
                let real = std::fs::canonicalize(path).map_err(ReadError::Io)?;
                self.check(path, &real).map_err(ReadError::from)?;
                open_nonblocking(path)?
            }
        };
        let real = real_path(&file, path).map_err(ReadError::Io)?;
        self.check(path, &real).map_err(ReadError::from)?;
        check_regular(file)
    }

    /// [`crate::read_bounded`] through [`Confinement::open_regular`].
    pub fn read_bounded(&self, path: &Path, max: usize) -> Result<Vec<u8>, ReadError> {
        let (mut file, len) = self.open_regular(path)?;
        if len > max as u64 {
            return Err(ReadError::TooLarge { len, max });
        }
        let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        read_rest(&mut file, &mut buf, max)?;
        Ok(buf)
    }
}

/// `path` opened below `root` with `openat2(RESOLVE_BENEATH |
/// RESOLVE_NO_MAGICLINKS)`; `None` when the kernel cannot answer for it
/// (the caller then resolves and checks the path itself): `path` not written
/// below `root`, no `openat2` (`ENOSYS`, or `EPERM` from a seccomp filter),
/// or a refusal that may be an absolute link back inside (`EXDEV`, `ELOOP`).
#[cfg(target_os = "linux")]
fn open_beneath(root: &Path, path: &Path) -> Result<Option<File>, ReadError> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    use rustix::io::Errno;
    // Not `dir::below`: `dir` builds on this module.
    let Some(relative) = path
        .strip_prefix(root)
        .ok()
        .filter(|r| !r.as_os_str().is_empty())
    else {
        return Ok(None);
    };
    let Ok(dir) = rustix::fs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return Ok(None);
    };
    match rustix::fs::openat2(
        &dir,
        relative,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    ) {
        Ok(fd) => Ok(Some(File::from(fd))),
        Err(
            Errno::XDEV | Errno::LOOP | Errno::NOSYS | Errno::PERM | Errno::INVAL | Errno::AGAIN,
        ) => Ok(None),
        Err(err) => Err(ReadError::Io(err.into())),
    }
}

/// Where an open file really is: the descriptor's path on Linux (what was
/// opened, whatever happened to the path since), else the canonical path.
pub(crate) fn real_path(file: &File, path: &Path) -> io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            return Ok(real);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
    std::fs::canonicalize(path)
}

/// A path refused because it resolves where its root may not reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Escape {
    /// The path as it was asked for (the link, or a path through one).
    pub path: PathBuf,
    /// Where it really leads.
    pub target: PathBuf,
    /// Why that is refused.
    pub reason: EscapeReason,
}

/// Why a resolved path is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EscapeReason {
    /// It lies outside the folder its files must stay in.
    Outside {
        /// That folder (canonical).
        root: PathBuf,
    },
    /// It lies under `/proc`, `/sys` or `/dev`.
    System,
}

impl fmt::Display for Escape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, target) = (self.path.display(), self.target.display());
        match &self.reason {
            EscapeReason::Outside { root } => write!(
                f,
                "`{path}` resolves to `{target}`, outside `{}`",
                root.display()
            ),
            EscapeReason::System => write!(
                f,
                "`{path}` resolves to `{target}`, under /proc, /sys or /dev"
            ),
        }
    }
}

impl std::error::Error for Escape {}

impl From<Escape> for ReadError {
    /// An escape is a permission error as far as the read is concerned;
    /// [`ReadError::escape`] gives it back.
    fn from(escape: Escape) -> Self {
        ReadError::Io(io::Error::new(io::ErrorKind::PermissionDenied, escape))
    }
}

impl ReadError {
    /// The confinement this read broke, when that is why it failed.
    pub fn escape(&self) -> Option<&Escape> {
        match self {
            ReadError::Io(err) => err.get_ref()?.downcast_ref::<Escape>(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_path_is_confined_to_the_repository_that_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let repo = base.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("tests")).unwrap();
        assert_eq!(
            Confinement::for_path(&repo.join("tests/prompt.golden")),
            Confinement::within(&repo)
        );
        assert_eq!(
            Confinement::for_path(&repo.join("prompt.golden")),
            Confinement::within(&repo)
        );
        assert_eq!(
            Confinement::for_path(&repo.join("tests/../../facts.toml")),
            Confinement::anywhere_but_system()
        );
    }

    #[test]
    fn system_folders_are_matched_by_whole_components() {
        assert!(is_system_path(Path::new("/proc/self/environ")));
        assert!(is_system_path(Path::new("/sys")));
        assert!(is_system_path(Path::new("/dev/shm/x")));
        assert!(!is_system_path(Path::new("/devices/x")));
        assert!(!is_system_path(Path::new("/home/u/proc")));
    }

    #[cfg(unix)]
    #[test]
    fn reads_refuse_links_out_of_the_root_and_into_system_folders() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let (repo, outside) = (dir.path().join("repo"), dir.path().join("secret.txt"));
        std::fs::create_dir_all(repo.join("docs")).unwrap();
        std::fs::write(&outside, "secret").unwrap();
        std::fs::write(repo.join("docs/guide.md"), "inside").unwrap();
        symlink(&outside, repo.join("out.md")).unwrap();
        symlink("docs/guide.md", repo.join("in.md")).unwrap();
        symlink("/proc/self/environ", repo.join("env.md")).unwrap();
        symlink("docs", repo.join("docs-link")).unwrap();
        let confined = Confinement::within(&repo);
        let real_repo = std::fs::canonicalize(&repo).unwrap();
        assert_eq!(confined.root(), Some(real_repo.as_path()));

        assert_eq!(
            confined.read_bounded(&repo.join("in.md"), 100).unwrap(),
            b"inside"
        );
        assert_eq!(
            confined
                .read_bounded(&repo.join("docs-link/guide.md"), 100)
                .unwrap(),
            b"inside"
        );
        let err = confined
            .read_bounded(&repo.join("out.md"), 100)
            .unwrap_err();
        let escape = err.escape().unwrap();
        assert_eq!(escape.path, repo.join("out.md"));
        assert_eq!(escape.target, std::fs::canonicalize(&outside).unwrap());
        assert!(matches!(escape.reason, EscapeReason::Outside { .. }));
        assert!(err.to_string().contains("secret.txt"), "{err}");

        #[cfg(target_os = "linux")]
        for confinement in [confined.clone(), Confinement::anywhere_but_system()] {
            let err = confinement
                .read_bounded(&repo.join("env.md"), 1 << 20)
                .unwrap_err();
            assert_eq!(err.escape().unwrap().reason, EscapeReason::System, "{err}");
        }
        // Outside the root, but the user's own folder: read.
        assert_eq!(
            Confinement::anywhere_but_system()
                .read_bounded(&repo.join("out.md"), 100)
                .unwrap(),
            b"secret"
        );
        // An absolute link back inside (which `RESOLVE_BENEATH` refuses on
        // its own) is read, as any link that stays in the root.
        symlink(real_repo.join("docs/guide.md"), repo.join("abs.md")).unwrap();
        assert_eq!(
            confined.read_bounded(&repo.join("abs.md"), 100).unwrap(),
            b"inside"
        );
        // A relative link out through `..` is refused like an absolute one.
        symlink("../secret.txt", repo.join("up.md")).unwrap();
        let err = confined.read_bounded(&repo.join("up.md"), 100).unwrap_err();
        assert_eq!(
            err.escape().unwrap().target,
            std::fs::canonicalize(&outside).unwrap()
        );
        // A missing file is still an ordinary `NotFound`.
        let err = confined
            .read_bounded(&repo.join("nope.md"), 100)
            .unwrap_err();
        assert!(matches!(&err, ReadError::Io(e) if e.kind() == io::ErrorKind::NotFound));
        assert!(err.escape().is_none());
    }
}
