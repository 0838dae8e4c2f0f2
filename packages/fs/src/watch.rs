//! A watch on a set of folders that answers "did anything change?" exactly,
//! at the moment it is asked: Linux inotify, read without blocking.
//!
//! The kernel queues an inotify event inside the system call that changes a
//! watched folder (a write, a rename, a new or removed entry, an attribute
//! change), before that call returns. So when [`FolderWatch::changed`] reads
//! the queue to its end, every change that finished before the call is in
//! it: there is no delivery thread and no debounce window in which an edit
//! made just before a turn could be missed. An event dropped because the
//! queue overflowed is reported by the kernel as an overflow event, which
//! counts as a change too.
//!
//! Two kinds of change are not seen by inotify, so a watch refuses the
//! folders where they happen: file systems whose files can change on
//! another machine (NFS, SMB, FUSE, 9p and the like), and nothing else is
//! promised (a write through a shared memory map updates no event until the
//! file is written back). Off Linux there is no watch; callers check stamps.

/// Why a folder cannot be watched; the caller falls back to checking
/// stamps. The message says what and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchError(pub String);

impl std::fmt::Display for WatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WatchError {}

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::BTreeMap;
    use std::mem::MaybeUninit;
    use std::os::fd::OwnedFd;
    use std::path::{Path, PathBuf};

    use rustix::fs::inotify::{self, CreateFlags, WatchFlags};
    use rustix::io::Errno;

    use super::WatchError;

    /// File-system magic numbers (`statfs`'s `f_type`) of file systems
    /// whose files may change without a local inotify event.
    const REMOTE_FILE_SYSTEMS: [(i64, &str); 12] = [
        (0x6969, "NFS"),
        (0x517B, "SMB"),
        (0xFF53_4D42, "CIFS"),
        (0xFE53_4D42, "SMB2"),
        (0x6573_5546, "FUSE"),
        (0x0102_1997, "9p"),
        (0x00C3_6400, "Ceph"),
        (0x5346_414F, "AFS"),
        (0x6B41_4653, "kAFS"),
        (0x7375_7245, "Coda"),
        (0x786F_4256, "VirtualBox shared folder"),
        (0x0BD0_0BD0, "Lustre"),
    ];

    /// The events that mean a folder's listing, an entry's content or an
    /// entry's metadata may differ from what was last read.
    fn interesting() -> WatchFlags {
        WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
    }

    /// See the module documentation.
    #[derive(Debug)]
    pub struct FolderWatch {
        fd: OwnedFd,
        /// Each listed folder's watch descriptor, and whether it is a full
        /// watch ([`FolderWatch::add`]) rather than one for new entries only.
        watches: BTreeMap<PathBuf, Listed>,
    }

    #[derive(Debug, Clone, Copy)]
    struct Listed {
        wd: i32,
        full: bool,
    }

    /// How a folder is added: listed or not, and with which events.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Full,
        NewEntries,
        Unlisted,
    }

    impl FolderWatch {
        /// A watch on no folder yet.
        pub fn new() -> Result<FolderWatch, WatchError> {
            let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)
                .map_err(|err| WatchError(format!("cannot start a folder watch: {err}")))?;
            Ok(FolderWatch {
                fd,
                watches: BTreeMap::new(),
            })
        }

        /// Starts watching `folder` (following links in its path): its
        /// listing, and the content and metadata of its entries. Refused on
        /// a file system where changes may not be reported. A folder
        /// watched for new entries only is watched fully from now on.
        pub fn add(&mut self, folder: &Path) -> Result<(), WatchError> {
            self.add_with(folder, Kind::Full)
        }

        /// [`FolderWatch::add`] without keeping the folder's path: it can
        /// then not be removed or listed, and adding it again is not
        /// noticed here (the kernel answers with the same watch). For a
        /// watch of many folders that is only ever dropped whole.
        pub fn add_unlisted(&mut self, folder: &Path) -> Result<(), WatchError> {
            self.add_with(folder, Kind::Unlisted)
        }

        /// Starts watching `folder` for new, renamed or removed entries
        /// only (and for its own removal): the ancestor of a root that does
        /// not exist yet, where edits of the files beside it do not matter.
        /// Nothing when `folder` is watched already (fully or so).
        pub fn add_for_new_entries(&mut self, folder: &Path) -> Result<(), WatchError> {
            self.add_with(folder, Kind::NewEntries)
        }

        /// Whether `folder` is listed with a full watch ([`FolderWatch::add`]).
        pub fn watches_fully(&self, folder: &Path) -> bool {
            self.watches.get(folder).is_some_and(|listed| listed.full)
        }

        /// The listed folders with a full watch.
        pub fn fully_watched(&self) -> impl Iterator<Item = &Path> {
            self.watches
                .iter()
                .filter(|(_, listed)| listed.full)
                .map(|(folder, _)| folder.as_path())
        }

        fn add_with(&mut self, folder: &Path, kind: Kind) -> Result<(), WatchError> {
            match self.watches.get(folder) {
                Some(listed) if listed.full || kind != Kind::Full => return Ok(()),
                // Watched for new entries only: the kernel replaces the
                // mask of the same watch with the full one.
                Some(_) | None => {}
            }
            let flags = match kind {
                Kind::Full | Kind::Unlisted => interesting(),
                Kind::NewEntries => {
                    WatchFlags::CREATE
                        | WatchFlags::DELETE
                        | WatchFlags::MOVED_FROM
                        | WatchFlags::MOVED_TO
                        | WatchFlags::DELETE_SELF
                        | WatchFlags::MOVE_SELF
                        | WatchFlags::ONLYDIR
                }
            };
            let stats = rustix::fs::statfs(folder)
                .map_err(|err| WatchError(format!("cannot watch `{}`: {err}", folder.display())))?;
            // `f_type` is 32 or 64 bits wide depending on the architecture;
            // the magic numbers are 32-bit.
            #[allow(clippy::unnecessary_cast)]
            let magic = (stats.f_type as i64) & 0xFFFF_FFFF;
            if let Some((_, name)) = REMOTE_FILE_SYSTEMS
                .iter()
                .find(|(known, _)| *known == magic)
            {
                return Err(WatchError(format!(
                    "`{}` is on a {name} file system, where changes made elsewhere are not reported",
                    folder.display()
                )));
            }
            let wd = inotify::add_watch(&self.fd, folder, flags).map_err(|err| {
                let why = if err == Errno::NOSPC {
                    "the user's inotify watch limit is reached (fs.inotify.max_user_watches)"
                        .to_owned()
                } else {
                    err.to_string()
                };
                WatchError(format!("cannot watch `{}`: {why}", folder.display()))
            })?;
            if kind != Kind::Unlisted {
                let full = kind == Kind::Full;
                self.watches
                    .insert(folder.to_path_buf(), Listed { wd, full });
            }
            Ok(())
        }

        /// Stops watching `folder` (nothing when it was not watched).
        pub fn remove(&mut self, folder: &Path) {
            if let Some(listed) = self.watches.remove(folder) {
                // A folder already gone has lost its watch with it.
                let _ = inotify::remove_watch(&self.fd, listed.wd);
            }
        }

        /// The folders watched now.
        pub fn folders(&self) -> impl Iterator<Item = &Path> {
            self.watches.keys().map(PathBuf::as_path)
        }

        /// Whether anything changed in a watched folder since the last
        /// call (or since it was added): reads every queued event, without
        /// blocking. A read error counts as a change, so a failure can only
        /// cost a stamp check.
        pub fn changed(&mut self) -> bool {
            let mut buffer = [MaybeUninit::<u8>::uninit(); 4096];
            let mut changed = false;
            loop {
                match rustix::io::read(&self.fd, &mut buffer[..]) {
                    Ok(([], _)) => return true,
                    Ok(_) => changed = true,
                    Err(Errno::AGAIN) => return changed,
                    Err(Errno::INTR) => {}
                    Err(_) => return true,
                }
            }
        }

        /// [`FolderWatch::changed`], saying also what changed: the names of
        /// the entries events were about, and whether a folder may have
        /// come in that the watch does not cover.
        pub fn drain(&mut self) -> Drained {
            let mut buffer = [MaybeUninit::<u8>::uninit(); 4096];
            let mut drained = Drained::default();
            loop {
                match rustix::io::read(&self.fd, &mut buffer[..]) {
                    Ok(([], _)) => return Drained::unknown(),
                    Ok((bytes, _)) => {
                        drained.changed = true;
                        events(bytes, &mut drained);
                    }
                    Err(Errno::AGAIN) => return drained,
                    Err(Errno::INTR) => {}
                    Err(_) => return Drained::unknown(),
                }
            }
        }
    }

    /// Adds the events in `bytes` (whole ones: the kernel never splits one
    /// over two reads) to `drained`.
    fn events(bytes: &[u8], drained: &mut Drained) {
        const HEADER: usize = 16;
        let word = |at: usize| {
            bytes
                .get(at..at + 4)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .map(u32::from_ne_bytes)
        };
        let mut at = 0;
        while at + HEADER <= bytes.len() {
            let (Some(mask), Some(len)) = (word(at + 4), word(at + 12)) else {
                *drained = Drained::unknown();
                return;
            };
            let len = len as usize;
            let mask = inotify::ReadFlags::from_bits_retain(mask);
            if mask.contains(inotify::ReadFlags::QUEUE_OVERFLOW)
                || (mask.contains(inotify::ReadFlags::ISDIR)
                    && mask.intersects(inotify::ReadFlags::CREATE | inotify::ReadFlags::MOVED_TO))
            {
                drained.new_folder = true;
            }
            let name = bytes
                .get(at + HEADER..at + HEADER + len)
                .unwrap_or_default();
            let name = name.split(|b| *b == 0).next().unwrap_or_default();
            if !name.is_empty() {
                use std::os::unix::ffi::OsStrExt;
                if drained.names.len() < MAX_NAMES {
                    drained
                        .names
                        .insert(std::ffi::OsStr::from_bytes(name).to_os_string());
                } else {
                    drained.names_capped = true;
                }
            }
            at += HEADER + len;
        }
    }

    /// The most names [`FolderWatch::drain`] keeps.
    const MAX_NAMES: usize = 4096;

    use super::Drained;
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::Path;

    use super::WatchError;

    /// See the module documentation: off Linux there is no exact watch.
    #[derive(Debug)]
    pub struct FolderWatch {
        _private: (),
    }

    impl FolderWatch {
        /// Always refused off Linux: callers check stamps instead.
        pub fn new() -> Result<FolderWatch, WatchError> {
            Err(WatchError(
                "an exact folder watch needs Linux inotify".to_owned(),
            ))
        }

        /// Never reached (see [`FolderWatch::new`]).
        pub fn add(&mut self, folder: &Path) -> Result<(), WatchError> {
            Err(WatchError(format!("cannot watch `{}`", folder.display())))
        }

        /// Never reached (see [`FolderWatch::new`]).
        pub fn add_for_new_entries(&mut self, folder: &Path) -> Result<(), WatchError> {
            self.add(folder)
        }

        /// Never reached (see [`FolderWatch::new`]).
        pub fn add_unlisted(&mut self, folder: &Path) -> Result<(), WatchError> {
            self.add(folder)
        }

        /// Never reached (see [`FolderWatch::new`]).
        pub fn watches_fully(&self, _folder: &Path) -> bool {
            false
        }

        /// Never reached (see [`FolderWatch::new`]).
        pub fn fully_watched(&self) -> impl Iterator<Item = &Path> {
            std::iter::empty()
        }

        /// Never reached (see [`FolderWatch::new`]).
        pub fn remove(&mut self, _folder: &Path) {}

        /// Never reached (see [`FolderWatch::new`]).
        pub fn folders(&self) -> impl Iterator<Item = &Path> {
            std::iter::empty()
        }

        /// Never reached (see [`FolderWatch::new`]).
        pub fn changed(&mut self) -> bool {
            true
        }

        /// Never reached (see [`FolderWatch::new`]).
        pub fn drain(&mut self) -> super::Drained {
            super::Drained::unknown()
        }
    }
}

/// What [`FolderWatch::drain`] read from the queue.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Drained {
    /// Anything changed in a watched folder (as [`FolderWatch::changed`]).
    pub changed: bool,
    /// A folder was created in or moved into a watched one, the queue
    /// overflowed, or it could not be read: a folder the watch does not
    /// cover may exist now.
    pub new_folder: bool,
    /// The names (without their folders) of the entries the events were
    /// about, the first 4,096.
    pub names: std::collections::BTreeSet<std::ffi::OsString>,
    /// Whether more names than that were seen (or they are unknown).
    pub names_capped: bool,
}

impl Drained {
    /// Anything may have changed, and nothing is known of what.
    pub fn unknown() -> Drained {
        Drained {
            changed: true,
            new_folder: true,
            names: std::collections::BTreeSet::new(),
            names_capped: true,
        }
    }
}

pub use imp::FolderWatch;

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_quiet_folder_reports_nothing_and_a_change_is_seen_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut watch = FolderWatch::new().unwrap();
        watch.add(dir.path()).unwrap();
        assert!(!watch.changed());
        // No sleep: the event is queued before `write` returns.
        for round in 0..50 {
            std::fs::write(dir.path().join("SKILL.md"), format!("{round}")).unwrap();
            assert!(watch.changed(), "round {round}");
            assert!(!watch.changed(), "round {round}: the queue was drained");
        }
    }

    #[test]
    fn drain_names_what_changed_and_sees_new_folders() {
        let dir = tempfile::tempdir().unwrap();
        let mut watch = FolderWatch::new().unwrap();
        watch.add(dir.path()).unwrap();
        assert_eq!(watch.drain(), Drained::default());
        std::fs::write(dir.path().join("a.rs"), "x").unwrap();
        std::fs::write(dir.path().join(".gitignore"), "x").unwrap();
        let drained = watch.drain();
        assert_eq!(
            drained,
            Drained {
                changed: true,
                new_folder: false,
                names: ["a.rs", ".gitignore"].iter().map(Into::into).collect(),
                names_capped: false,
            }
        );
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let drained = watch.drain();
        assert_eq!(
            drained,
            Drained {
                changed: true,
                new_folder: true,
                names: ["src"].iter().map(Into::into).collect(),
                names_capped: false,
            }
        );
        assert_eq!(watch.drain(), Drained::default());
    }

    #[test]
    fn new_and_removed_entries_and_attribute_changes_count() {
        let dir = tempfile::tempdir().unwrap();
        let mut watch = FolderWatch::new().unwrap();
        watch.add(dir.path()).unwrap();
        std::fs::create_dir(dir.path().join("skill")).unwrap();
        assert!(watch.changed());
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(watch.changed());
        let mut permissions = std::fs::metadata(&file).unwrap().permissions();
        permissions.set_readonly(true);
        std::fs::set_permissions(&file, permissions).unwrap();
        assert!(watch.changed());
        std::fs::remove_file(&file).unwrap();
        assert!(watch.changed());
        assert!(!watch.changed());
    }

    #[test]
    fn an_ancestor_watch_sees_new_entries_but_not_edits() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "x").unwrap();
        let mut watch = FolderWatch::new().unwrap();
        watch.add_for_new_entries(dir.path()).unwrap();
        std::fs::write(&file, "edited").unwrap();
        assert!(!watch.changed());
        std::fs::create_dir(dir.path().join(".bcode")).unwrap();
        assert!(watch.changed());
    }

    #[test]
    fn a_folder_watched_for_new_entries_is_watched_fully_once_added() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "x").unwrap();
        let mut watch = FolderWatch::new().unwrap();
        watch.add_for_new_entries(dir.path()).unwrap();
        assert!(!watch.watches_fully(dir.path()));
        watch.add(dir.path()).unwrap();
        assert!(watch.watches_fully(dir.path()));
        // A weaker add leaves the full watch as it is.
        watch.add_for_new_entries(dir.path()).unwrap();
        assert!(watch.watches_fully(dir.path()));
        assert_eq!(watch.fully_watched().collect::<Vec<_>>(), [dir.path()]);
        std::fs::write(&file, "edited").unwrap();
        assert!(watch.changed());
    }

    #[test]
    fn an_unlisted_watch_sees_edits_and_keeps_no_path() {
        let dir = tempfile::tempdir().unwrap();
        let mut watch = FolderWatch::new().unwrap();
        watch.add_unlisted(dir.path()).unwrap();
        watch.add_unlisted(dir.path()).unwrap();
        assert!(!watch.changed());
        std::fs::write(dir.path().join("f"), "x").unwrap();
        assert!(watch.changed());
        assert_eq!(watch.folders().count(), 0);
    }

    #[test]
    fn a_removed_folder_is_no_longer_watched() {
        let dir = tempfile::tempdir().unwrap();
        let mut watch = FolderWatch::new().unwrap();
        watch.add(dir.path()).unwrap();
        watch.remove(dir.path());
        let _ = watch.changed();
        std::fs::write(dir.path().join("f"), "x").unwrap();
        assert!(!watch.changed());
        assert_eq!(watch.folders().count(), 0);
    }

    #[test]
    fn a_file_or_a_missing_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let mut watch = FolderWatch::new().unwrap();
        assert!(watch.add(&file).is_err());
        assert!(watch.add(&dir.path().join("missing")).is_err());
        assert!(watch.add(dir.path()).is_ok());
    }
}
