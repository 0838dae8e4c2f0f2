//! Following edits of any file a served skill's entry lists: the
//! registry's own watch covers what discovery reads (the roots, each
//! skill's folder), and a new registry is announced only when a summary
//! changed; an edit of `refs/guide.md` or of `scripts/run.py` beside
//! `SKILL.md` changes only a digest `skills/list` sends. On an edit the
//! stdio loop rechecks the entries and tells the client.

use std::path::Path;
use std::time::{Duration, Instant};

use bcode_fs::FolderWatch;

use crate::server::{Followed, SkillServer};

/// The most folders one server watches for its entries (as many as the
/// registry's own watch may take); beyond it, such edits show only at the
/// next listing after the registry's watch fires.
const MAX_FOLDERS: usize = 50_000;

/// How often, at most, the watch of the entries' folders is set up
/// again for a new snapshot (each set-up reads every entry back and checks
/// every stamp; without a registry watch a snapshot is swapped in at every
/// refresh). Between set-ups the last watch goes on.
const RESETUP_EVERY: Duration = Duration::from_secs(10);

/// A watch of every folder the served entries list (each skill's folder
/// and those below it). Set up for a new snapshot once every entry is
/// built (at most every [`RESETUP_EVERY`]), checked each refresh.
#[derive(Default)]
pub(crate) struct EntryWatch {
    watch: Option<FolderWatch>,
    /// The snapshot the watch was set up for, and when.
    generation: Option<u64>,
    set_up: Option<Instant>,
    /// No watch can be had here (off Linux, the user's inotify limit, over
    /// [`MAX_FOLDERS`]).
    unavailable: bool,
}

impl EntryWatch {
    /// Whether a file or folder of a served skill changed since the last
    /// look (the caller rechecks every entry and tells the client).
    pub(crate) fn edited(&mut self, server: &SkillServer) -> bool {
        if self.unavailable {
            return false;
        }
        let generation = server.generation();
        let due = self.set_up.is_none_or(|at| at.elapsed() >= RESETUP_EVERY);
        if self.generation != Some(generation) && due {
            let Ok(mut watch) = FolderWatch::new() else {
                self.unavailable = true;
                return false;
            };
            // Folders are added as the entries are read back, one at a time.
            let mut watched = 0usize;
            let mut add = |folder: &Path| {
                watched += 1;
                watched <= MAX_FOLDERS && watch.add_unlisted(folder).is_ok()
            };
            let moved = match server.follow_entries(&mut add) {
                // Entries still being built: the last watch goes on.
                Followed::NotBuilt => return self.watch.as_mut().is_some_and(FolderWatch::changed),
                Followed::Refused => {
                    self.watch = None;
                    self.unavailable = true;
                    return false;
                }
                Followed::Visited { moved } => moved,
            };
            self.watch = Some(watch);
            self.generation = Some(generation);
            self.set_up = Some(Instant::now());
            return moved;
        }
        self.watch.as_mut().is_some_and(FolderWatch::changed)
    }
}
