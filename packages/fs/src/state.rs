//! The user's state folder (`BCODE_STATE_DIR`, `$XDG_STATE_HOME/bcode`,
//! `~/.local/state/bcode`), used only when it is safe: the folder, and every
//! folder Bcode uses below it, belongs to the user and nobody else may write
//! to it. On a CI runner or a shared machine that variable may name a folder
//! another account prepared; there, a link planted under a predictable name
//! would make the disk cache or a session log overwrite or append to any
//! file the user can write.
//!
//! Inside a checked folder, files are never reached through a link: new
//! files are temporary files with random names created `O_EXCL` (which never
//! follows a link) and renamed over their final name (a rename replaces a
//! link, it does not write through it); existing files are opened
//! `O_NOFOLLOW | O_NONBLOCK` and `fstat`-checked to be regular files, so a
//! link, a FIFO or a device in a state file's place is refused, never read
//! or written.
//!
//! The state folder itself may be a link the user made (`~/.local/state ->
//! /data/state` is ordinary), so a link there is followed, but only a link
//! the user owns, to a folder the user owns: the owner is the criterion,
//! not the shape of the path. Root's folders count as the user's (root can
//! write anywhere anyway, and `/var/lib/...` style state folders are root's).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::read::{ReadError, check_regular};

/// A folder checked to be safe for state files (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateDir {
    path: PathBuf,
}

/// Why a state folder is not used.
#[derive(Debug)]
#[non_exhaustive]
pub enum StateError {
    /// The folder (or the link naming it) belongs to another user.
    NotOwned {
        /// The folder or link.
        path: PathBuf,
        /// Its owner's uid.
        owner: u32,
        /// The uid this process runs as.
        user: u32,
    },
    /// Users other than its owner may write to the folder.
    WritableByOthers {
        /// The folder.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A folder below the state folder is a link (never followed there).
    Link {
        /// The link.
        path: PathBuf,
    },
    /// The path names something that is not a folder.
    NotAFolder {
        /// The path.
        path: PathBuf,
    },
    /// Creating or inspecting the folder failed.
    Io {
        /// The folder.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
}

impl StateError {
    /// The folder (or link) the refusal is about.
    pub fn path(&self) -> &Path {
        match self {
            StateError::NotOwned { path, .. }
            | StateError::WritableByOthers { path, .. }
            | StateError::Link { path }
            | StateError::NotAFolder { path }
            | StateError::Io { path, .. } => path,
        }
    }
}

impl std::fmt::Display for StateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path().display();
        match self {
            StateError::NotOwned { owner, user, .. } => write!(
                f,
                "the state folder `{path}` belongs to uid {owner}, not to this user (uid {user}): \
                 another user could plant links in it; point BCODE_STATE_DIR or XDG_STATE_HOME \
                 at a folder of your own"
            ),
            StateError::WritableByOthers { mode, .. } => write!(
                f,
                "the state folder `{path}` is writable by other users (mode {:03o}): they could \
                 plant links in it; run `chmod go-w {path}` or use a folder of your own",
                mode & 0o7777
            ),
            StateError::Link { .. } => write!(
                f,
                "`{path}` in the state folder is a symbolic link; links there are never followed"
            ),
            StateError::NotAFolder { .. } => {
                write!(f, "the state folder `{path}` is not a folder")
            }
            StateError::Io { source, .. } => write!(f, "the state folder `{path}`: {source}"),
        }
    }
}

impl std::error::Error for StateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StateError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl StateDir {
    /// The state folder at `path`, created (mode 0700, with any missing
    /// parent) when it does not exist, then checked: a folder (a link to one
    /// is followed when the user owns the link) owned by this user and not
    /// writable by group or others.
    pub fn open(path: &Path) -> Result<StateDir, StateError> {
        if let Err(source) = private_builder().create(path) {
            return Err(StateError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
        Self::check(path)
    }

    /// [`StateDir::open`] without creating anything: a missing folder is an
    /// [`StateError::Io`] of kind `NotFound`.
    pub fn existing(path: &Path) -> Result<StateDir, StateError> {
        Self::check(path)
    }

    fn check(path: &Path) -> Result<StateDir, StateError> {
        let io_error = |source| StateError::Io {
            path: path.to_path_buf(),
            source,
        };
        let link = std::fs::symlink_metadata(path).map_err(io_error)?;
        if link.file_type().is_symlink() {
            check_owner(path, &link)?;
        }
        let meta = std::fs::metadata(path).map_err(io_error)?;
        check_folder(path, &meta)?;
        Ok(StateDir {
            path: path.to_path_buf(),
        })
    }

    /// The folder's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder `name` (one path component) below this one, created mode
    /// 0700 when missing, and checked like the state folder, except that a
    /// link is refused rather than followed: below the state folder nothing
    /// is a link Bcode did not make, and it makes none.
    pub fn subdir(&self, name: &str) -> Result<StateDir, StateError> {
        let path = self
            .path
            .join(component(name).map_err(|source| StateError::Io {
                path: self.path.join(name),
                source,
            })?);
        let io_error = |source| StateError::Io {
            path: path.clone(),
            source,
        };
        let mut builder = private_builder();
        builder.recursive(false);
        match builder.create(&path) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(io_error(err)),
        }
        let meta = std::fs::symlink_metadata(&path).map_err(io_error)?;
        if meta.file_type().is_symlink() {
            return Err(StateError::Link { path });
        }
        check_folder(&path, &meta)?;
        Ok(StateDir { path })
    }

    /// Opens the existing file `name` in this folder for reading: never
    /// through a link (`O_NOFOLLOW`), without blocking (`O_NONBLOCK`), and
    /// only when `fstat` on the open file says it is a regular file. Returns
    /// the file and its length. A link is an error of kind
    /// `InvalidInput` that says so.
    pub fn open_file(&self, name: &str) -> Result<(File, u64), ReadError> {
        let path = self.file_path(name).map_err(ReadError::Io)?;
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        no_follow(&mut options);
        let file = options
            .open(&path)
            .map_err(|err| ReadError::Io(link_error(err, &path)))?;
        check_regular(file)
    }

    /// Opens the file `name` in this folder for reading and appending,
    /// creating it (mode 0600) when missing: never through a link, without
    /// blocking on a FIFO, and only when `fstat` on the open file says it is
    /// a regular file.
    pub fn open_append(&self, name: &str) -> Result<File, ReadError> {
        let path = self.file_path(name).map_err(ReadError::Io)?;
        let mut options = std::fs::OpenOptions::new();
        options.read(true).append(true).create(true);
        no_follow(&mut options);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options
            .open(&path)
            .map_err(|err| ReadError::Io(link_error(err, &path)))?;
        check_regular(file).map(|(file, _)| file)
    }

    /// Replaces (or creates) the file `name` in this folder with what
    /// `write` puts into a fresh temporary file: created `O_EXCL` under a
    /// random name (`.<name>.XXXXXX.tmp`, so nobody can plant a link under
    /// it in advance), mode 0600, then renamed over `name`. On any error the
    /// temporary file is removed and `name` is left as it was; a reader never
    /// sees half a file. `write` may `sync_all` the file for durability;
    /// [`StateDir::sync`] then makes the rename itself durable.
    pub fn replace(
        &self,
        name: &str,
        write: &mut dyn FnMut(&mut File) -> io::Result<()>,
    ) -> io::Result<()> {
        let target = self.file_path(name)?;
        let prefix = format!(".{name}.");
        let mut temporary = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            .tempfile_in(&self.path)?;
        write(temporary.as_file_mut())?;
        temporary.persist(&target).map_err(|err| err.error)?;
        Ok(())
    }

    /// A scratch file in this folder with no name (removed as it is
    /// created, or on Linux never named: `O_TMPFILE`), mode 0600: room for
    /// what a process would otherwise hold in memory, gone when it closes.
    pub fn scratch(&self) -> io::Result<File> {
        tempfile::tempfile_in(&self.path)
    }

    /// Makes renames in this folder durable (`fsync` of the folder). Not
    /// every platform can open a folder for syncing; the rename has happened
    /// either way, so that is not an error.
    pub fn sync(&self) {
        if let Ok(dir) = File::open(&self.path) {
            let _ = dir.sync_all();
        }
    }

    /// Keeps the `keep` most recently written files of this folder whose
    /// names start with `prefix` and end with `suffix` (the older ones are
    /// removed), and removes the temporary files [`StateDir::replace`]
    /// left for such names more than an hour ago (a process that died
    /// while writing). Best effort: what cannot be listed or removed stays.
    pub fn prune(&self, prefix: &str, suffix: &str, keep: usize) {
        let Ok(entries) = std::fs::read_dir(&self.path) else {
            return;
        };
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        let temporary = format!(".{prefix}");
        let mut files: Vec<(SystemTime, PathBuf)> = Vec::new();
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Some(modified) = entry.metadata().ok().and_then(|m| m.modified().ok()) else {
                continue;
            };
            if name.starts_with(prefix) && name.ends_with(suffix) {
                files.push((modified, entry.path()));
            } else if name.starts_with(&temporary) && name.ends_with(".tmp") && modified < hour_ago
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        if files.len() <= keep {
            return;
        }
        files.sort();
        for (_, path) in &files[..files.len() - keep] {
            let _ = std::fs::remove_file(path);
        }
    }

    fn file_path(&self, name: &str) -> io::Result<PathBuf> {
        Ok(self.path.join(component(name)?))
    }
}

/// `name` when it is one ordinary path component.
fn component(name: &str) -> io::Result<&str> {
    let plain = !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains('/')
        && !name.contains(std::path::MAIN_SEPARATOR);
    if plain {
        Ok(name)
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{name}` is not a plain file name"),
        ))
    }
}

fn private_builder() -> std::fs::DirBuilder {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
}

/// Adds `O_NOFOLLOW` (a final link is an error, `ELOOP`), `O_NONBLOCK` (a
/// FIFO cannot block the open) and `O_NOCTTY` (a terminal device never
/// becomes the controlling one).
fn no_follow(options: &mut std::fs::OpenOptions) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    #[cfg(not(unix))]
    let _ = options;
}

/// `ELOOP` from an `O_NOFOLLOW` open, said plainly.
fn link_error(err: io::Error, path: &Path) -> io::Error {
    #[cfg(unix)]
    if err.raw_os_error() == Some(libc::ELOOP) {
        return io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "`{}` is a symbolic link; files in the state folder are never opened through links",
                path.display()
            ),
        );
    }
    let _ = path;
    err
}

/// The uid this process creates files as.
#[cfg(unix)]
fn current_user() -> u32 {
    rustix::process::geteuid().as_raw()
}

#[cfg(unix)]
fn check_owner(path: &Path, meta: &std::fs::Metadata) -> Result<(), StateError> {
    use std::os::unix::fs::MetadataExt;
    let (owner, user) = (meta.uid(), current_user());
    if owner == user || owner == 0 {
        Ok(())
    } else {
        Err(StateError::NotOwned {
            path: path.to_path_buf(),
            owner,
            user,
        })
    }
}

#[cfg(not(unix))]
fn check_owner(_: &Path, _: &std::fs::Metadata) -> Result<(), StateError> {
    Ok(())
}

/// A folder, owned by this user (or root), that neither its group nor
/// others may write to. A sticky world-writable folder (`/tmp`) is refused
/// too: others cannot remove our files there, but they can plant names.
fn check_folder(path: &Path, meta: &std::fs::Metadata) -> Result<(), StateError> {
    if !meta.is_dir() {
        return Err(StateError::NotAFolder {
            path: path.to_path_buf(),
        });
    }
    check_owner(path, meta)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode();
        if mode & 0o022 != 0 {
            return Err(StateError::WritableByOthers {
                path: path.to_path_buf(),
                mode,
            });
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_missing_state_folder_is_created_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/bcode");
        let state = StateDir::open(&path).unwrap();
        assert_eq!(state.path(), path);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let sessions = state.subdir("sessions").unwrap().subdir("s1").unwrap();
        assert_eq!(sessions.path(), path.join("sessions/s1"));
        assert!(matches!(
            StateDir::existing(&dir.path().join("nope")),
            Err(StateError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound
        ));
    }

    #[test]
    fn folders_others_may_write_to_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        std::fs::create_dir(&path).unwrap();
        for mode in [0o777, 0o1777, 0o770, 0o702] {
            chmod(&path, mode);
            let err = StateDir::open(&path).unwrap_err();
            assert!(
                matches!(&err, StateError::WritableByOthers { mode: m, .. } if m & 0o7777 == mode),
                "{mode:o}: {err}"
            );
        }
        chmod(&path, 0o777);
        assert_eq!(
            StateDir::open(&path).unwrap_err().to_string(),
            format!(
                "the state folder `{0}` is writable by other users (mode 777): they could plant \
                 links in it; run `chmod go-w {0}` or use a folder of your own",
                path.display()
            )
        );
        chmod(&path, 0o755);
        let state = StateDir::open(&path).unwrap();
        // The same check below it.
        std::fs::create_dir(path.join("cache")).unwrap();
        chmod(&path.join("cache"), 0o777);
        assert!(matches!(
            state.subdir("cache"),
            Err(StateError::WritableByOthers { .. })
        ));
    }

    #[test]
    fn the_users_own_link_to_the_state_folder_is_followed_links_below_it_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        chmod(&real, 0o700);
        let link = dir.path().join("state");
        symlink(&real, &link).unwrap();
        let state = StateDir::open(&link).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        symlink(&elsewhere, real.join("cache")).unwrap();
        assert!(matches!(
            state.subdir("cache"),
            Err(StateError::Link { path }) if path == link.join("cache")
        ));
        std::fs::write(real.join("file"), "").unwrap();
        assert!(matches!(
            state.subdir("file"),
            Err(StateError::NotAFolder { .. })
        ));
        assert!(state.subdir("../x").is_err());
    }

    /// Root can give a folder away; as anyone else the test cannot.
    #[test]
    fn a_folder_of_another_user_is_refused() {
        if current_user() != 0 {
            eprintln!("skipped: only root can make a folder another user's");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        std::fs::create_dir(&path).unwrap();
        chmod(&path, 0o700);
        std::os::unix::fs::chown(&path, Some(4242), Some(4242)).unwrap();
        let err = StateDir::open(&path).unwrap_err();
        assert!(
            matches!(
                err,
                StateError::NotOwned {
                    owner: 4242,
                    user: 0,
                    ..
                }
            ),
            "{err}"
        );
        // A link another user made to a folder of ours is refused as well.
        let ours = dir.path().join("ours");
        std::fs::create_dir(&ours).unwrap();
        chmod(&ours, 0o700);
        let link = dir.path().join("link");
        symlink(&ours, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(4242), Some(4242)).unwrap();
        assert!(matches!(
            StateDir::open(&link),
            Err(StateError::NotOwned { owner: 4242, .. })
        ));
    }

    #[test]
    fn files_are_never_reached_through_links_nor_special_files() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::open(&dir.path().join("state")).unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        symlink(&victim, state.path().join("events.jsonl")).unwrap();
        let err = state.open_append("events.jsonl").unwrap_err();
        assert!(err.to_string().contains("is a symbolic link"), "{err}");
        let err = state.open_file("events.jsonl").unwrap_err();
        assert!(err.to_string().contains("is a symbolic link"), "{err}");
        // Replacing renames over the link: the victim is untouched.
        state
            .replace("events.jsonl", &mut |file| file.write_all(b"new"))
            .unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let (mut file, len) = state.open_file("events.jsonl").unwrap();
        let mut text = String::new();
        file.read_to_string(&mut text).unwrap();
        assert_eq!((text.as_str(), len), ("new", 3));
        let mut log = state.open_append("log").unwrap();
        log.write_all(b"a\n").unwrap();
        assert_eq!(std::fs::read(state.path().join("log")).unwrap(), b"a\n");
        let fifo = state.path().join("fifo");
        bcode_test_support::mkfifo(&fifo);
        assert!(matches!(
            state.open_file("fifo"),
            Err(ReadError::NotRegular)
        ));
        // Opening a FIFO for writing with no reader fails at once
        // (`ENXIO`) rather than blocking; with a reader it would open and be
        // refused as not regular.
        assert!(state.open_append("fifo").is_err());
        // Nothing but the replaced file, the log and the FIFO: no
        // temporary file was left behind.
        let mut names: Vec<String> = std::fs::read_dir(state.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["events.jsonl", "fifo", "log"]);
    }

    #[test]
    fn a_failed_replace_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::open(dir.path()).unwrap();
        state
            .replace("a.json", &mut |f| f.write_all(b"old"))
            .unwrap();
        let err = state
            .replace("a.json", &mut |f| {
                f.write_all(b"half")?;
                Err(io::Error::other("interrupted"))
            })
            .unwrap_err();
        assert_eq!(err.to_string(), "interrupted");
        assert_eq!(std::fs::read(dir.path().join("a.json")).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
