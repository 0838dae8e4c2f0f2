//! Writing files into a folder a repository controls (a golden file, its
//! facts sidecar, the render that differs from it), never through a link.
//! A repository may commit a link under any name a command writes:
//! `prompt.golden.new -> ~/.bashrc` would make a plain write overwrite the
//! user's file with the rendered prompt, and a dangling
//! `prompt.golden.facts.toml -> ~/.ssh/authorized_keys` would create one.
//!
//! So [`OutputDir`] opens the folder once and checks, on the open handle,
//! that it really lies within its [`Confinement`]; every file is then
//! written relative to that handle as a temporary file created
//! `O_EXCL | O_NOFOLLOW` under a random name (nothing can be planted under
//! it in advance), and renamed over its name: a rename replaces a link, it
//! never writes through it, and a reader never sees half a file. Removing a
//! name removes a link, never its target.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use crate::confine::Confinement;

/// A folder, checked to lie within its confinement, that files are written
/// into by name without following links (see the module docs).
#[derive(Debug)]
pub struct OutputDir {
    path: PathBuf,
    /// The folder as opened and checked; every name is resolved from it,
    /// so a link swapped in for the folder afterwards changes nothing.
    #[cfg(unix)]
    dir: File,
}

impl OutputDir {
    /// The folder `path` (absolute), created with its missing parents when
    /// absent, which must really lie within `confinement`. The nearest
    /// existing folder at or above `path` is checked before anything is
    /// created, so a link out of the confinement never gets folders made
    /// beyond it; the folder opened is checked again. A refusal is an error
    /// of kind `PermissionDenied` carrying the `Escape`.
    pub fn create(path: &Path, confinement: &Confinement) -> io::Result<OutputDir> {
        let mut existing = path;
        while std::fs::symlink_metadata(existing).is_err() {
            match existing.parent() {
                Some(parent) => existing = parent,
                None => break,
            }
        }
        // A dangling link is an existing entry that does not resolve: an
        // error here, before anything is made below it.
        let real = std::fs::canonicalize(existing)?;
        confinement.check(existing, &real).map_err(escape_error)?;
        std::fs::create_dir_all(path)?;
        Self::open(path, confinement)
    }

    #[cfg(unix)]
    fn open(path: &Path, confinement: &Confinement) -> io::Result<OutputDir> {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let dir = File::from(fd);
        let real = crate::confine::real_path(&dir, path)?;
        confinement.check(path, &real).map_err(escape_error)?;
        Ok(OutputDir {
            path: path.to_path_buf(),
            dir,
        })
    }

    #[cfg(not(unix))]
    fn open(path: &Path, confinement: &Confinement) -> io::Result<OutputDir> {
        let real = std::fs::canonicalize(path)?;
        confinement.check(path, &real).map_err(escape_error)?;
        Ok(OutputDir {
            path: path.to_path_buf(),
        })
    }

    /// The folder's path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces (or creates) the file `name` (one path component) in this
    /// folder with `contents`: written to a temporary file created
    /// `O_EXCL | O_NOFOLLOW` under a random name (`.<name>.XXXXXX.tmp`),
    /// with the permissions a plain write gives a new file (`0666` under
    /// the umask), then renamed over `name`, whatever `name` was (a link is
    /// replaced, not followed). On any error the temporary file is removed
    /// and `name` is left as it was.
    pub fn replace(&self, name: &OsStr, contents: &[u8]) -> io::Result<()> {
        let name = plain_name(name)?;
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(name);
        prefix.push(".");
        let temporary = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            // Cleaned up below, relative to the folder handle, never by path.
            .disable_cleanup(true)
            .make_in(&self.path, |path| self.create_new(path))?;
        let (mut file, temporary) = temporary.into_parts();
        let temporary = temporary
            .file_name()
            .map(ToOwned::to_owned)
            .ok_or_else(|| io::Error::other("a temporary file without a name"))?;
        let written = file
            .write_all(contents)
            .and_then(|()| self.rename(&temporary, name));
        if written.is_err() {
            let _ = self.unlink(&temporary);
        }
        written
    }

    /// Removes the file `name` (one path component) from this folder: a
    /// link is removed itself, never its target. A missing file is no error.
    pub fn remove(&self, name: &OsStr) -> io::Result<()> {
        match self.unlink(plain_name(name)?) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// A new file at the last component of `path`, relative to the folder
    /// handle: `O_EXCL` (an existing entry, a link included, is
    /// `AlreadyExists`, and the caller tries another name) and `O_NOFOLLOW`.
    #[cfg(unix)]
    fn create_new(&self, path: &Path) -> io::Result<File> {
        use rustix::fs::{Mode, OFlags};
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::other("a temporary file without a name"))?;
        let mode = Mode::RUSR | Mode::WUSR | Mode::RGRP | Mode::WGRP | Mode::ROTH | Mode::WOTH;
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::NOCTTY
            | OFlags::CLOEXEC;
        Ok(File::from(rustix::fs::openat(
            &self.dir, name, flags, mode,
        )?))
    }

    #[cfg(unix)]
    fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::renameat(&self.dir, from, &self.dir, to)?)
    }

    #[cfg(unix)]
    fn unlink(&self, name: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(
            &self.dir,
            name,
            rustix::fs::AtFlags::empty(),
        )?)
    }

    /// Without `*at` calls: by path, `create_new` (which never follows a
    /// link) and a rename, which replaces a link.
    #[cfg(not(unix))]
    fn create_new(&self, path: &Path) -> io::Result<File> {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
    }

    #[cfg(not(unix))]
    fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        std::fs::rename(self.path.join(from), self.path.join(to))
    }

    #[cfg(not(unix))]
    fn unlink(&self, name: &OsStr) -> io::Result<()> {
        std::fs::remove_file(self.path.join(name))
    }
}

/// `name` when it is one ordinary path component (not empty, `.`, `..`,
/// nor holding a separator).
fn plain_name(name: &OsStr) -> io::Result<&OsStr> {
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(part)), None) if part == name => Ok(name),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is not a plain file name", name.to_string_lossy()),
        )),
    }
}

/// A confinement refusal as an I/O error (as a `ReadError` carries
/// one), so callers report it with the path and where it leads.
fn escape_error(escape: crate::confine::Escape) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, escape)
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::symlink;

    /// Names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let repo = base.join("repo");
        std::fs::create_dir(&repo).unwrap();
        (tmp, base, repo)
    }

    #[test]
    fn files_are_replaced_whole_and_links_in_their_place_are_replaced_not_followed() {
        let (_tmp, base, repo) = repo();
        let victim = base.join("bashrc");
        std::fs::write(&victim, "precious").unwrap();
        symlink(&victim, repo.join("prompt.golden.new")).unwrap();
        let keys = base.join("ssh/authorized_keys");
        symlink(&keys, repo.join("prompt.golden.facts.toml")).unwrap();
        let dir = OutputDir::create(&repo, &Confinement::within(&repo)).unwrap();
        assert_eq!(dir.path(), repo);
        dir.replace(OsStr::new("prompt.golden.new"), b"rendered")
            .unwrap();
        dir.replace(OsStr::new("prompt.golden.facts.toml"), b"facts")
            .unwrap();
        dir.replace(OsStr::new("prompt.golden"), b"first").unwrap();
        dir.replace(OsStr::new("prompt.golden"), b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!base.join("ssh").exists());
        for (name, text) in [
            ("prompt.golden.new", "rendered"),
            ("prompt.golden.facts.toml", "facts"),
            ("prompt.golden", "second"),
        ] {
            let path = repo.join(name);
            assert!(
                std::fs::symlink_metadata(&path).unwrap().is_file(),
                "{name}"
            );
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        }
        // No temporary file is left behind.
        assert_eq!(
            names(&repo),
            [
                "prompt.golden",
                "prompt.golden.facts.toml",
                "prompt.golden.new"
            ]
        );
        // A new file gets what a plain write gives it.
        std::fs::write(base.join("plain"), "").unwrap();
        let mode = |path: &Path| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(path).unwrap().permissions().mode() & 0o777
        };
        assert_eq!(mode(&repo.join("prompt.golden")), mode(&base.join("plain")));
    }

    #[test]
    fn removing_a_link_leaves_its_target_and_a_missing_file_is_fine() {
        let (_tmp, base, repo) = repo();
        let victim = base.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        symlink(&victim, repo.join("x.new")).unwrap();
        let dir = OutputDir::create(&repo, &Confinement::within(&repo)).unwrap();
        dir.remove(OsStr::new("x.new")).unwrap();
        dir.remove(OsStr::new("x.new")).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(names(&repo).is_empty());
        for bad in ["", ".", "..", "a/b", "a/", "./a", "/a"] {
            let bad = OsStr::new(bad);
            assert_eq!(
                dir.replace(bad, b"x").unwrap_err().kind(),
                io::ErrorKind::InvalidInput,
                "{bad:?}"
            );
            assert!(dir.remove(bad).is_err(), "{bad:?}");
        }
        // A name that is not UTF-8 is a name like any other.
        use std::os::unix::ffi::OsStrExt;
        let latin1 = OsStr::from_bytes(b"caf\xe9.golden");
        dir.replace(latin1, b"x").unwrap();
        assert_eq!(std::fs::read(repo.join(latin1)).unwrap(), b"x");
    }

    #[test]
    fn folders_are_created_inside_the_confinement_only() {
        let (_tmp, base, repo) = repo();
        let inside = Confinement::within(&repo);
        let dir = OutputDir::create(&repo.join("golden/deep"), &inside).unwrap();
        dir.replace(OsStr::new("p"), b"x").unwrap();
        assert_eq!(
            std::fs::read_to_string(repo.join("golden/deep/p")).unwrap(),
            "x"
        );
        // A folder link out of the repository: refused, and nothing is
        // created beyond it.
        let elsewhere = base.join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        symlink(&elsewhere, repo.join("out")).unwrap();
        for path in [repo.join("out"), repo.join("out/sub/deeper")] {
            let err = OutputDir::create(&path, &inside).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{err}");
            let escape = err
                .get_ref()
                .unwrap()
                .downcast_ref::<crate::confine::Escape>();
            assert_eq!(escape.unwrap().target, elsewhere);
        }
        assert!(names(&elsewhere).is_empty());
        // A dangling folder link: an error, nothing created at its target.
        symlink(base.join("nowhere"), repo.join("dangling")).unwrap();
        let err = OutputDir::create(&repo.join("dangling/sub"), &inside).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
        assert!(!base.join("nowhere").exists());
        // A link inside the repository is fine; a user's own folder may be
        // anywhere but the system folders.
        symlink("golden", repo.join("alias")).unwrap();
        OutputDir::create(&repo.join("alias/deep"), &inside).unwrap();
        OutputDir::create(&elsewhere, &Confinement::anywhere_but_system()).unwrap();
        #[cfg(target_os = "linux")]
        assert_eq!(
            OutputDir::create(Path::new("/proc/self"), &Confinement::anywhere_but_system())
                .unwrap_err()
                .kind(),
            io::ErrorKind::PermissionDenied
        );
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let (_tmp, _base, repo) = repo();
        let dir = OutputDir::create(&repo, &Confinement::within(&repo)).unwrap();
        dir.replace(OsStr::new("a"), b"old").unwrap();
        std::fs::create_dir(repo.join("b")).unwrap();
        std::fs::write(repo.join("b/inner"), "").unwrap();
        // Renaming a file over a non-empty folder fails.
        assert!(dir.replace(OsStr::new("b"), b"new").is_err());
        assert_eq!(names(&repo), ["a", "b"]);
        assert_eq!(std::fs::read_to_string(repo.join("a")).unwrap(), "old");
    }
}
