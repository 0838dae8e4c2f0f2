//! Skill registries shared by the sessions of one process.
//!
//! A host that runs many sessions on the same repositories hands them one
//! [`SharedSkills`]: sessions whose skill roots and discovery options are
//! the same then share one live registry, one keyword index and one
//! formatted catalog per registry snapshot, so an additional session costs
//! its own small state, not another copy of a 10,000-skill registry.
//! A session without one gets a private pool: one code path either way.
//!
//! Freshness is shared too: at a turn start a session checks the roots
//! (one stamp check for all sessions on the pool) unless another session is
//! checking right now, in which case it takes the current snapshot rather
//! than wait; a turn never waits on another session's turn.

use std::collections::{BTreeSet, VecDeque};
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use bcode_skill::{
    Catalog, DiscoveryOptions, LazyKeywordIndex, LazySkillIndex, LiveRegistry, ReloadMode,
    SkillProvider, SkillRegistry, SourceRoot,
};

/// How many registry changes a pool remembers for sessions that have not
/// started a turn since; a session further behind reloads every active
/// skill (it cannot know which files changed).
const REMEMBERED_CHANGES: usize = 64;

/// Skill pools shared by every session opened with a clone of this handle.
/// Cheap to clone; see the module docs.
#[derive(Clone, Default)]
pub struct SharedSkills {
    pools: Arc<Mutex<Vec<Arc<Pool>>>>,
}

impl fmt::Debug for SharedSkills {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedSkills")
            .field("pools", &lock(&self.pools).len())
            .finish()
    }
}

impl SharedSkills {
    /// An empty set of pools.
    pub fn new() -> SharedSkills {
        SharedSkills::default()
    }

    /// The pool for `key`, created (empty, not yet discovered) when new.
    pub(crate) fn pool(&self, key: PoolKey) -> Arc<Pool> {
        let mut pools = lock(&self.pools);
        if let Some(pool) = pools.iter().find(|pool| pool.key == key) {
            return Arc::clone(pool);
        }
        let pool = Arc::new(Pool::new(key));
        pools.push(Arc::clone(&pool));
        pool
    }
}

/// How a session's skills follow their roots between turns.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillReload {
    /// Discovered once and not followed: a single-turn session, or skills
    /// disabled.
    NotFollowed,
    /// The folders the last discovery depended on are watched: a turn on a
    /// quiet tree costs one system call.
    Watching,
    /// Every turn start checks the stamps of those files and folders.
    CheckingStamps {
        /// Why no watch covers them (`None`: none was asked for, see
        /// `SkillLifetime::StampChecked`).
        reason: Option<String>,
    },
}

/// What makes two sessions' skills the same: roots, discovery options, the
/// disk cache folder and the very same providers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PoolKey {
    pub(crate) roots: Vec<SourceRoot>,
    pub(crate) options: DiscoveryOptions,
    pub(crate) disk_cache: Option<PathBuf>,
    /// Provider identities (their addresses), in order.
    pub(crate) providers: Vec<usize>,
    /// Whether the pool follows its roots between turns (a single-turn
    /// session's pool discovers once and never checks again).
    pub(crate) live: bool,
}

/// One shared registry and everything derived from it.
pub(crate) struct Pool {
    key: PoolKey,
    /// The live registry; `None` until the first session discovers.
    live: Mutex<Option<LiveRegistry>>,
    state: RwLock<State>,
}

/// The current snapshot of a pool.
#[derive(Default)]
struct State {
    generation: u64,
    registry: SkillRegistry,
    index: Arc<LazyKeywordIndex>,
    /// The relevance index of this snapshot, built on first use from the
    /// last snapshot's (only what changed is indexed again).
    search: Arc<LazySkillIndex>,
    /// Ids whose files changed, by the generation that saw them.
    changes: VecDeque<(u64, BTreeSet<String>)>,
    /// Catalogs of this snapshot, by what formatting them depends on.
    catalogs: Vec<(String, ShownCatalog)>,
}

/// What a session gets from its pool at a turn start.
pub(crate) struct Snapshot {
    pub(crate) generation: u64,
    pub(crate) registry: SkillRegistry,
    pub(crate) index: Arc<LazyKeywordIndex>,
    pub(crate) search: Arc<LazySkillIndex>,
    /// Ids whose files changed since the session's last snapshot; `None`
    /// when the pool no longer remembers that far back.
    pub(crate) changed: Option<BTreeSet<String>>,
}

impl Pool {
    fn new(key: PoolKey) -> Pool {
        Pool {
            key,
            live: Mutex::new(None),
            state: RwLock::new(State::default()),
        }
    }

    /// The snapshot for a session opening now: discovers on first use.
    pub(crate) fn open(
        &self,
        discovery: impl FnOnce() -> bcode_skill::Discovery,
        providers: &[Arc<dyn SkillProvider>],
        watch: bool,
    ) -> Snapshot {
        let mut live = lock(&self.live);
        let mut state = write(&self.state);
        if live.is_none() && !self.key.live && state.generation == 0 {
            // One discovery, nothing kept to follow the roots: a single
            // turn pays for no stamps of its own nor a watcher.
            let registry = discovery()
                .single_build()
                .build_with_providers(&self.key.roots, providers);
            state.index = Arc::new(LazyKeywordIndex::new());
            state.search = self.fresh_search();
            state.registry = registry;
            state.generation = 1;
        } else if live.is_none() && self.key.live {
            let (mut fresh, registry) = LiveRegistry::with_discovery(
                discovery(),
                self.key.roots.clone(),
                providers.to_vec(),
            );
            if watch {
                // Where a watch is not possible, every turn start checks
                // stamps instead (`LiveRegistry::mode`).
                let _ = fresh.watch();
            }
            state.index = Arc::new(LazyKeywordIndex::new());
            state.search = self.fresh_search();
            state.registry = registry;
            *live = Some(fresh);
        }
        drop(state);
        drop(live);
        self.snapshot(u64::MAX)
    }

    /// A relevance index not built yet, kept in the routing cache beside
    /// the registry's disk cache when the pool has one.
    fn fresh_search(&self) -> Arc<LazySkillIndex> {
        Arc::new(match &self.key.disk_cache {
            Some(dir) => LazySkillIndex::with_disk_cache(bcode_skill::RoutingCache::new(
                dir,
                &self.key.options,
                &self.key.roots,
            )),
            None => LazySkillIndex::new(),
        })
    }

    /// How this pool follows its roots (waits for a turn start that is
    /// checking them right now).
    pub(crate) fn reload(&self) -> SkillReload {
        match lock(&self.live).as_ref() {
            None => SkillReload::NotFollowed,
            Some(live) if live.mode() == ReloadMode::Watching => SkillReload::Watching,
            Some(live) => SkillReload::CheckingStamps {
                reason: live.fallback_reason().map(str::to_owned),
            },
        }
    }

    /// The current snapshot after checking the roots for changes (unless
    /// another session is checking right now: then the current one).
    pub(crate) fn refresh(&self, seen: u64) -> Snapshot {
        if let Ok(mut live) = self.live.try_lock()
            && let Some(live) = live.as_mut()
            && let Some(refresh) = live.begin_turn()
        {
            let mut state = write(&self.state);
            if !refresh.registry.same_as(&state.registry) || !refresh.changed_files.is_empty() {
                state.generation += 1;
                let generation = state.generation;
                state.index = Arc::new(LazyKeywordIndex::new());
                state.search = Arc::new(LazySkillIndex::following(
                    Arc::clone(&state.search),
                    state.registry.clone(),
                ));
                state.registry = refresh.registry;
                state.changes.push_back((generation, refresh.changed_files));
                while state.changes.len() > REMEMBERED_CHANGES {
                    state.changes.pop_front();
                }
                state.catalogs.clear();
            }
        }
        self.snapshot(seen)
    }

    fn snapshot(&self, seen: u64) -> Snapshot {
        let state = read(&self.state);
        let changed = if seen == u64::MAX || seen >= state.generation {
            Some(BTreeSet::new())
        } else if state
            .changes
            .front()
            .is_some_and(|(oldest, _)| *oldest <= seen + 1)
        {
            Some(
                state
                    .changes
                    .iter()
                    .filter(|(generation, _)| *generation > seen)
                    .flat_map(|(_, ids)| ids.iter().cloned())
                    .collect(),
            )
        } else {
            None
        };
        Snapshot {
            generation: state.generation,
            registry: state.registry.clone(),
            index: Arc::clone(&state.index),
            search: Arc::clone(&state.search),
            changed,
        }
    }

    /// The catalog of snapshot `generation` for `key`, formatted once.
    pub(crate) fn catalog<E>(
        &self,
        generation: u64,
        key: &str,
        format: impl FnOnce() -> Result<ShownCatalog, E>,
    ) -> Result<ShownCatalog, E> {
        {
            let state = read(&self.state);
            if state.generation == generation
                && let Some((_, catalog)) = state.catalogs.iter().find(|(k, _)| k == key)
            {
                return Ok(catalog.clone());
            }
        }
        let catalog = format()?;
        let mut state = write(&self.state);
        if state.generation == generation && !state.catalogs.iter().any(|(k, _)| k == key) {
            state.catalogs.push((key.to_owned(), catalog.clone()));
        }
        Ok(catalog)
    }
}

/// A formatted catalog as sessions, pools and turns hold it: the text once,
/// shared by every holder (the prompt makes the only other copy, none when
/// no holder is left), and the accounting beside it, whose own `text` is
/// left empty.
#[derive(Clone, Debug)]
pub(crate) struct ShownCatalog {
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) text: bcode_prompt_pipeline::SharedText,
}

impl ShownCatalog {
    /// Moves the text of a freshly formatted catalog out into the shared
    /// one.
    pub(crate) fn new(mut catalog: Catalog) -> ShownCatalog {
        // Counted while the catalog still holds its text: the count stays
        // with it, and every turn that shows the text reuses it.
        catalog.chars();
        let text = Arc::new(std::mem::take(&mut catalog.text));
        ShownCatalog {
            catalog: Arc::new(catalog),
            text,
        }
    }
}

/// The lock, even after a panic elsewhere (every update replaces whole
/// values, so the state is consistent).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
