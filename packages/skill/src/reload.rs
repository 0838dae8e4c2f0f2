//! Live reload between turns. A session's registry is rebuilt only at the
//! start of a turn, never inside one: with a debounced filesystem watcher
//! (notify) a quiet tree costs nothing, and otherwise (or when skills live
//! behind symlinks the watcher cannot see) a metadata check rebuilds through
//! the summary cache, which reads no unchanged file.

use std::collections::{BTreeMap, BTreeSet};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bcode_skill_models::SkillLayout;
use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use bcode_fs::FileStamp;

use crate::discovery::{Discovery, DiscoveryStats};
use crate::freshness;
use crate::provider::SkillProvider;
use crate::registry::{DiscoveryOptions, SkillRegistry};
use crate::sources::SourceRoot;

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
    dirty: Arc<AtomicBool>,
    watcher: Option<Debouncer<RecommendedWatcher, RecommendedCache>>,
    /// The folders the watcher covers, one non-recursive watch each: what
    /// the last discovery's answer depended on (see `watch`).
    watched: BTreeSet<PathBuf>,
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
        let mut live = LiveRegistry {
            discovery,
            roots,
            providers,
            stamps: BTreeMap::new(),
            dirty: Arc::new(AtomicBool::new(false)),
            watcher: None,
            watched: BTreeSet::new(),
            complete: false,
            max_watched: MAX_WATCHED_FOLDERS,
            last: SkillRegistry::empty(),
        };
        let registry = live
            .discovery
            .build_with_providers(&live.roots, &live.providers);
        live.stamps = stamps(&registry);
        live.last = registry.clone();
        (live, registry)
    }

    /// Starts a debounced watcher on exactly the folders the last
    /// discovery's answer depended on: each root, each listed folder and the
    /// folder of each skill file, through followed links (so a Nix / Home
    /// Manager link's target is covered), one non-recursive watch each; a
    /// root that does not exist yet through its nearest existing ancestor.
    /// That is bounded by the walk's own budgets, and capped at
    /// [`MAX_WATCHED_FOLDERS`]. When the folders cannot be covered the
    /// registry stays in metadata-check mode and the reason is returned for
    /// the host to show.
    pub fn watch(&mut self, debounce: Duration) -> Result<(), String> {
        self.watch_within(debounce, MAX_WATCHED_FOLDERS)
    }

    /// [`LiveRegistry::watch`] with another folder budget.
    pub fn watch_within(&mut self, debounce: Duration, max_folders: usize) -> Result<(), String> {
        self.max_watched = max_folders;
        let dirty = Arc::clone(&self.dirty);
        let mut debouncer = new_debouncer(debounce, None, move |result: DebounceEventResult| {
            // Errors (a queue overflow, for example) mean events may be lost:
            // treat them as a change so the next turn checks.
            if result.map(|events| !events.is_empty()).unwrap_or(true) {
                dirty.store(true, Ordering::SeqCst);
            }
        })
        .map_err(|err| err.to_string())?;
        for root in &self.roots {
            if !root.path.exists() {
                let (path, mode) = watch_target(&root.path);
                debouncer
                    .watch(&path, mode)
                    .map_err(|err| format!("cannot watch `{}`: {err}", path.display()))?;
            }
        }
        self.watcher = Some(debouncer);
        self.rewatch()
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
        for gone in self.watched.difference(&folders) {
            let _ = watcher.unwatch(gone);
        }
        for folder in folders.difference(&self.watched) {
            watcher
                .watch(folder, RecursiveMode::NonRecursive)
                .map_err(|err| format!("cannot watch `{}`: {err}", folder.display()))?;
        }
        self.watched = folders;
        self.complete = true;
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

    /// Call at the start of a turn. `None` when a watcher reports a quiet
    /// tree; otherwise the rebuilt registry (which the session diffs).
    pub fn begin_turn(&mut self) -> Option<TurnRefresh> {
        if self.mode() == ReloadMode::Watching && !self.dirty.swap(false, Ordering::SeqCst) {
            return None;
        }
        let registry = self
            .discovery
            .build_with_providers(&self.roots, &self.providers);
        // Every stamp the last build depended on answered as before (the
        // instruction files among them): no file changed, so the per-skill
        // stamps and the root-escape check would only repeat that answer.
        if self.discovery.last_stats().confirmed_by_stamps && registry.same_as(&self.last) {
            return Some(TurnRefresh {
                registry,
                changed_files: BTreeSet::new(),
            });
        }
        let now = stamps(&registry);
        let changed_files = now
            .iter()
            .filter(|(id, stamp)| self.stamps.get(*id).is_some_and(|old| old != *stamp))
            .map(|(id, _)| id.clone())
            .collect();
        self.stamps = now;
        if self.watcher.is_some() {
            // New folders are watched from now on; a failure leaves the
            // registry checking stamps at each turn.
            let _ = self.rewatch();
        }
        self.last = registry.clone();
        Some(TurnRefresh {
            registry,
            changed_files,
        })
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
        .filter_map(|s| Some((s.manifest.id.to_string(), freshness::stamp_of(&s.location)?)))
        .collect()
}

/// The most folders one live registry watches; beyond it every turn checks
/// stamps instead (inotify watches are a budget the whole user shares).
pub const MAX_WATCHED_FOLDERS: usize = 50_000;

/// A root that does not exist is watched through its nearest existing
/// ancestor, non-recursively, so its creation is noticed.
fn watch_target(root: &Path) -> (PathBuf, RecursiveMode) {
    if root.is_dir() {
        return (root.to_path_buf(), RecursiveMode::Recursive);
    }
    let mut ancestor = root.parent();
    while let Some(dir) = ancestor {
        if dir.is_dir() {
            return (dir.to_path_buf(), RecursiveMode::NonRecursive);
        }
        ancestor = dir.parent();
    }
    (PathBuf::from("/"), RecursiveMode::NonRecursive)
}
