//! Live reload between turns. A session's registry is rebuilt only at the
//! start of a turn, never inside one. With a folder watch (`bcode_fs::FolderWatch`,
//! Linux inotify read at the turn start) a quiet tree costs one system call
//! and an edit finished before the turn is always seen; otherwise (off
//! Linux, on a network file system, over the watch budget) a metadata check
//! rebuilds through the summary cache, which reads no unchanged file.

use std::collections::{BTreeMap, BTreeSet};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bcode_fs::{FileStamp, FolderWatch};
use bcode_skill_models::SkillLayout;

use crate::discover::discovery::{Discovery, DiscoveryStats};
use crate::discover::registry::{DiscoveryOptions, SkillRegistry};
use crate::discover::sources::SourceRoot;
use crate::provider::SkillProvider;

/// How changes are noticed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReloadMode {
    /// A watcher covers every root; a quiet tree is not even stat-ed.
    Watching,
    /// Every turn rebuilds through the metadata cache.
    MetadataCheck,
}

/// A registry that follows its roots between turns.
pub struct LiveRegistry {
    discovery: Discovery,
    roots: Vec<SourceRoot>,
    /// Plugin providers, listed again at every rebuild so their skills
    /// survive reloads (and a provider's own changes show up).
    providers: Vec<Arc<dyn SkillProvider>>,
    /// The stamp of each skill's instruction file at the last build, to
    /// notice body-only edits (which leave the summary as it was).
    stamps: BTreeMap<String, FileStamp>,
    /// Whether `stamps` is kept (see [`LiveRegistry::summaries_only`]).
    track_bodies: bool,
    /// Its full watches are the folders the last discovery's answer
    /// depended on (see `watch`), one each, kept there and nowhere else
    /// (tens of thousands of paths at scale).
    watcher: Option<FolderWatch>,
    /// The nearest existing ancestor of each root that does not exist yet,
    /// watched for new entries only (unless it is one of those folders),
    /// so the root's creation is noticed.
    ancestors: BTreeSet<PathBuf>,
    /// Folders were added to the watch after the build that read them: the
    /// next turn checks stamps once, so an edit made in between is not lost.
    verify: bool,
    /// Why changes are checked by stamps although a watch was asked for.
    note: Option<String>,
    /// The watcher covers every folder the last discovery depended on; when
    /// not (over budget, a folder that could not be watched, a walk that
    /// could not be recorded), every turn checks stamps instead.
    complete: bool,
    /// The most folders the watcher may take (see [`MAX_WATCHED_FOLDERS`]).
    max_watched: usize,
    /// The registry of the last build.
    last: SkillRegistry,
}

impl std::fmt::Debug for LiveRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveRegistry")
            .field("roots", &self.roots.len())
            .field("mode", &self.mode())
            .finish()
    }
}

/// What changed at the start of a turn.
#[derive(Debug)]
pub struct TurnRefresh {
    /// The registry rebuilt at the start of the turn (the very last one
    /// when nothing changed), for the session to diff against its own.
    pub registry: SkillRegistry,
    /// Ids whose instruction file changed on disk (its stamp), including
    /// body-only edits that leave the summary as it was.
    pub changed_files: BTreeSet<String>,
}

impl LiveRegistry {
    /// Builds the first registry.
    pub fn new(options: DiscoveryOptions, roots: Vec<SourceRoot>) -> (Self, SkillRegistry) {
        Self::with_providers(options, roots, Vec::new())
    }

    /// Builds the first registry from roots and plugin providers.
    pub fn with_providers(
        options: DiscoveryOptions,
        roots: Vec<SourceRoot>,
        providers: Vec<Arc<dyn SkillProvider>>,
    ) -> (Self, SkillRegistry) {
        Self::with_discovery(Discovery::new(options), roots, providers)
    }

    /// Builds the first registry with a configured `discovery` (for example
    /// one with a disk cache, so a new process re-checks stamps instead of
    /// reading every skill).
    pub fn with_discovery(
        discovery: Discovery,
        roots: Vec<SourceRoot>,
        providers: Vec<Arc<dyn SkillProvider>>,
    ) -> (Self, SkillRegistry) {
        Self::build(discovery, roots, providers, true)
    }

    /// [`LiveRegistry::with_discovery`] for a host that needs only the
    /// registry (an MCP server, which checks each skill's files itself):
    /// body-only edits are not told apart ([`TurnRefresh::changed_files`]
    /// stays empty), which spares a stamp of every instruction file at each
    /// build (a path lookup each).
    pub fn summaries_only(
        discovery: Discovery,
        roots: Vec<SourceRoot>,
        providers: Vec<Arc<dyn SkillProvider>>,
    ) -> (Self, SkillRegistry) {
        Self::build(discovery, roots, providers, false)
    }

    fn build(
        discovery: Discovery,
        roots: Vec<SourceRoot>,
        providers: Vec<Arc<dyn SkillProvider>>,
        track_bodies: bool,
    ) -> (Self, SkillRegistry) {
        let mut live = LiveRegistry {
            discovery,
            roots,
            providers,
            stamps: BTreeMap::new(),
            track_bodies,
            watcher: None,
            ancestors: BTreeSet::new(),
            verify: false,
            note: None,
            complete: false,
            max_watched: MAX_WATCHED_FOLDERS,
            last: SkillRegistry::empty(),
        };
        let registry = live
            .discovery
            .build_with_providers(&live.roots, &live.providers);
        if track_bodies {
            live.stamps = stamps(&registry);
        }
        live.last = registry.clone();
        (live, registry)
    }

    /// Starts watching exactly the folders the last discovery's answer
    /// depended on: each root, each listed folder and the folder of each
    /// skill file, through followed links (so a Nix / Home Manager link's
    /// target is covered), one watch each; a root that does not exist yet
    /// through its nearest existing ancestor. That is bounded by the walk's
    /// own budgets, and capped at `MAX_WATCHED_FOLDERS`. When the folders
    /// cannot be covered (off Linux, a network file system, the user's
    /// inotify limit) the registry stays in metadata-check mode and the
    /// reason is returned for the host to show.
    pub fn watch(&mut self) -> Result<(), String> {
        self.watch_within(MAX_WATCHED_FOLDERS)
    }

    /// [`LiveRegistry::watch`] with another folder budget.
    pub fn watch_within(&mut self, max_folders: usize) -> Result<(), String> {
        self.max_watched = max_folders;
        let result = FolderWatch::new().map_err(fallback).and_then(|watcher| {
            self.watcher = Some(watcher);
            self.rewatch()
        });
        self.note = result.clone().err();
        result
    }

    /// Why every turn checks stamps although a watch was asked for (the
    /// last reason a watch could not cover the roots); `None` while
    /// watching or when no watch was asked for.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// Brings the watches in line with the folders of the last discovery.
    fn rewatch(&mut self) -> Result<(), String> {
        self.complete = false;
        let Some(watcher) = &mut self.watcher else {
            return Ok(());
        };
        let Some(folders) = self.discovery.folders() else {
            return Err(
                "the last walk could not be recorded; checking stamps at each turn".to_owned(),
            );
        };
        if folders.len() > self.max_watched {
            return Err(format!(
                "{} folders under the skill roots is over the watch budget of {}; checking stamps at each turn",
                folders.len(),
                self.max_watched
            ));
        }
        let gone: Vec<PathBuf> = watcher
            .fully_watched()
            .filter(|folder| !folders.contains(*folder))
            .map(Path::to_path_buf)
            .collect();
        for folder in &gone {
            watcher.remove(folder);
            // Still the ancestor of a missing root: watched as one again.
            if self.ancestors.contains(folder) {
                watcher.add_for_new_entries(folder).map_err(fallback)?;
            }
        }
        let mut added = false;
        for folder in &folders {
            if !watcher.watches_fully(folder) {
                watcher.add(folder).map_err(fallback)?;
                added = true;
            }
        }
        drop(folders);
        self.verify |= added;
        self.reanchor()?;
        self.complete = true;
        Ok(())
    }

    /// Moves the watch of each missing root's nearest existing ancestor
    /// down as folders on the way to it appear (which leaves the walk's
    /// answer, and so the other watches, as they were).
    fn reanchor(&mut self) -> Result<(), String> {
        let Some(watcher) = &mut self.watcher else {
            return Ok(());
        };
        let ancestors: BTreeSet<PathBuf> = self
            .roots
            .iter()
            .filter(|root| !root.path.is_dir())
            .map(|root| nearest_existing_ancestor(&root.path))
            .collect();
        if ancestors == self.ancestors {
            return Ok(());
        }
        for gone in self.ancestors.difference(&ancestors) {
            if !watcher.watches_fully(gone) {
                watcher.remove(gone);
            }
        }
        let mut added = false;
        for ancestor in ancestors.difference(&self.ancestors) {
            if let Err(err) = watcher.add_for_new_entries(ancestor) {
                self.complete = false;
                return Err(fallback(err));
            }
            added = true;
        }
        self.ancestors = ancestors;
        self.verify |= added;
        Ok(())
    }

    /// How changes are noticed now: watching only while the watcher covers
    /// every folder the last discovery depended on.
    pub fn mode(&self) -> ReloadMode {
        if self.watcher.is_some() && self.complete {
            ReloadMode::Watching
        } else {
            ReloadMode::MetadataCheck
        }
    }

    /// Call at the start of a turn. `None` when the watch reports a quiet
    /// tree; otherwise the rebuilt registry (which the session diffs).
    pub fn begin_turn(&mut self) -> Option<TurnRefresh> {
        // Only the stamp check after new watches: a quiet answer stays `None`.
        let mut quiet_unless_stamps_differ = false;
        if self.mode() == ReloadMode::Watching {
            // Read the queue first: whatever changes after this read is seen
            // by the next turn; whatever changed before is in the queue or,
            // for folders watched only since the last build, found by the
            // stamp check `verify` asks for.
            let changed = self.watcher.as_mut().is_some_and(FolderWatch::changed);
            let verify = std::mem::take(&mut self.verify);
            if !changed && !verify {
                return None;
            }
            quiet_unless_stamps_differ = !changed;
        }
        let registry = self
            .discovery
            .build_with_providers(&self.roots, &self.providers);
        // Every stamp the last build depended on answered as before (the
        // instruction files among them): no file changed, so the per-skill
        // stamps and the root-escape check would only repeat that answer.
        if self.discovery.last_stats().confirmed_by_stamps && registry.same_as(&self.last) {
            if self.watcher.is_some() {
                self.note = self.reanchor().err();
            }
            if quiet_unless_stamps_differ {
                return None;
            }
            return Some(TurnRefresh {
                registry,
                changed_files: BTreeSet::new(),
            });
        }
        let now = if self.track_bodies {
            stamps(&registry)
        } else {
            BTreeMap::new()
        };
        let changed_files: BTreeSet<String> = now
            .iter()
            .filter(|(id, stamp)| self.stamps.get(*id).is_some_and(|old| old != *stamp))
            .map(|(id, _)| id.clone())
            .collect();
        self.stamps = now;
        if self.watcher.is_some() {
            // New folders are watched from now on; a failure leaves the
            // registry checking stamps at each turn.
            self.note = self.rewatch().err();
        }
        let same = registry.same_as(&self.last);
        self.last = registry.clone();
        if quiet_unless_stamps_differ && same && changed_files.is_empty() {
            return None;
        }
        Some(TurnRefresh {
            registry,
            changed_files,
        })
    }

    /// The stamps the last rebuild found unchanged, when it was answered
    /// by checking them (see [`Discovery::confirmed_stamps`]).
    pub fn confirmed_stamps(&self) -> Option<crate::discover::snapshot::ConfirmedStamps<'_>> {
        self.discovery.confirmed_stamps()
    }

    /// What the first build recorded (see [`Discovery::take_records`]),
    /// taken out, for a host serving its registry (built by a discovery
    /// made with [`Discovery::recording_instructions`]) that need not read
    /// those files again. Later builds record nothing: a reload reads only
    /// what changed, and a host hands its kept entries on.
    pub fn take_records(&mut self) -> crate::discover::record::InstructionRecords {
        self.discovery.stop_recording();
        self.discovery.take_records()
    }

    /// Counters of the last rebuild (tests check that unchanged files are not read).
    pub fn last_stats(&self) -> DiscoveryStats {
        self.discovery.last_stats()
    }
}

fn stamps(registry: &SkillRegistry) -> BTreeMap<String, FileStamp> {
    registry
        .skills()
        .filter(|s| s.layout != SkillLayout::Provided)
        .filter_map(|s| Some((s.manifest.id.to_string(), bcode_fs::stamp_of(&s.location)?)))
        .collect()
}

/// The most folders one live registry watches; beyond it every turn checks
/// stamps instead (inotify watches are a budget the whole user shares).
pub const MAX_WATCHED_FOLDERS: usize = 50_000;

fn fallback(err: bcode_fs::WatchError) -> String {
    format!("{err}; checking stamps at each turn")
}

/// A root that does not exist is watched through its nearest existing
/// ancestor, for new entries only, so its creation is noticed.
fn nearest_existing_ancestor(root: &Path) -> PathBuf {
    let mut ancestor = root.parent();
    while let Some(dir) = ancestor {
        if dir.is_dir() {
            return dir.to_path_buf();
        }
        ancestor = dir.parent();
    }
    PathBuf::from("/")
}
