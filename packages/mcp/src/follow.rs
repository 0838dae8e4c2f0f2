//! Following edits below served skills' folders (`refs/`, `scripts/`
//! ...), which the registry's own watch does not cover: an edit there
//! changes a digest `skills/list` sends, so the stdio loop rechecks the
//! entries and tells the client.

use std::time::{Duration, Instant};

use bcode_fs::FolderWatch;

use crate::server::SkillServer;

/// The most folders below skill folders one server watches; beyond it,
/// edits there are seen only when the registry's watch also fires.
const MAX_SUBFOLDERS: usize = 10_000;

/// How often, at most, the watch of folders below skill folders is set up
/// again for a new snapshot (each set-up reads every entry back and checks
/// every stamp; without a registry watch a snapshot is swapped in at every
/// refresh). Between set-ups the last watch goes on.
const SUBFOLDER_RESETUP: Duration = Duration::from_secs(10);

/// A watch of the folders below served skills' folders (`refs/`,
/// `scripts/` ...), which the registry's watch does not cover: an edit
/// there changes a listed digest. Set up for a new snapshot once every
/// entry is built (at most every [`SUBFOLDER_RESETUP`]), checked each
/// refresh.
#[derive(Default)]
pub(crate) struct SubfolderWatch {
    watch: Option<FolderWatch>,
    /// The snapshot the watch was set up for, and when.
    generation: Option<u64>,
    set_up: Option<Instant>,
    /// No watch can be had here (off Linux, the user's inotify limit, over
    /// [`MAX_SUBFOLDERS`]).
    unavailable: bool,
}

impl SubfolderWatch {
    /// Whether a file or folder below a skill's folder changed since the
    /// last look (the caller rechecks every entry and tells the client).
    pub(crate) fn edited(&mut self, server: &SkillServer) -> bool {
        if self.unavailable {
            return false;
        }
        let generation = server.generation();
        let due = self
            .set_up
            .is_none_or(|at| at.elapsed() >= SUBFOLDER_RESETUP);
        if self.generation != Some(generation)
            && due
            && let Some(folders) = server.entry_subfolders()
        {
            self.watch = None;
            self.generation = Some(generation);
            self.set_up = Some(Instant::now());
            if folders.is_empty() {
                return false;
            }
            let watch = FolderWatch::new()
                .ok()
                .filter(|_| folders.len() <= MAX_SUBFOLDERS);
            let Some(mut watch) = watch else {
                self.unavailable = true;
                return false;
            };
            if folders.iter().any(|folder| watch.add(folder).is_err()) {
                self.unavailable = true;
                return false;
            }
            self.watch = Some(watch);
            // An edit between an entry's build and its folder's watch.
            return !server.entries_hold();
        }
        self.watch.as_mut().is_some_and(FolderWatch::changed)
    }
}
