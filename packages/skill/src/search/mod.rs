//! Routing: which skills fit a task. A relevance index over every skill of
//! a registry (name, description, keywords, the body, the names of the
//! skill's other files), ranked with BM25 per field, summed, over English
//! stems, so a host, a model or another agent can ask "which skill fits
//! this task?" of tens of thousands of skills without model weights.
//!
//! - `analyze`: text to terms (identifier splitting, extensions, stop
//!   words, Snowball stems); pure.
//! - `document`: which text of a skill goes in which field; pure.
//! - `index`: the inverted index, its updates and its ranking; pure.
//! - `gather`: the edge that reads bodies and file names to index a
//!   registry, and re-indexes only what a reload changed.
//! - `persist`: the index in the state folder's disk cache, read back by
//!   a later process (a query reads only its terms' postings) and updated
//!   skill by skill.

mod analyze;
mod document;
mod gather;
mod index;
mod persist;

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

pub use analyze::{Normalizer, for_each_term, for_each_word};
pub use document::{SearchField, SkillText};
pub use gather::{index_registry, other_files, refresh_index};
pub use index::{MAX_QUERY_TERMS, MatchedTerm, SearchHit, SkillIndex};
pub use persist::{RoutingCache, RoutingStats};

use crate::discover::registry::SkillRegistry;

/// The relevance index of one registry snapshot, built the first time a
/// search needs it (a render that never routes never pays for it) and
/// shared by everything on that snapshot.
///
/// After a reload, the next snapshot's index starts from the last one:
/// built from it with [`refresh_index`], so only the skills the reload changed
/// are read and indexed again. With a [`RoutingCache`], a first build
/// starts from the cache file instead (only skills whose stamps moved are
/// analyzed), and every build that changed something is written back.
#[derive(Debug, Default)]
pub struct LazySkillIndex {
    index: OnceLock<SkillIndex>,
    /// The snapshot before this one, until this index is built: its index
    /// (if it was ever built) and its registry.
    previous: Mutex<Option<(Arc<LazySkillIndex>, SkillRegistry)>>,
    disk: Option<RoutingCache>,
    /// With `disk`, the stamps of the built index's stored skills.
    stamps: Mutex<Option<persist::Stamps>>,
    stats: Mutex<RoutingStats>,
}

impl LazySkillIndex {
    /// An index not built yet.
    pub fn new() -> Self {
        LazySkillIndex::default()
    }

    /// An index not built yet, kept in `cache` (see [`RoutingCache`]).
    pub fn with_disk_cache(cache: RoutingCache) -> Self {
        LazySkillIndex {
            disk: Some(cache),
            ..LazySkillIndex::default()
        }
    }

    /// The index of the snapshot after `previous`'s (whose registry was
    /// `registry`), not built yet: when it is, it starts from `previous`'s
    /// index if that was built. When it was not, this one starts from
    /// what `previous` would have started from, so no chain of unbuilt
    /// snapshots is kept. It keeps to `previous`'s disk cache.
    pub fn following(previous: Arc<LazySkillIndex>, registry: SkillRegistry) -> Self {
        let disk = previous.disk.clone();
        let base = if previous.index.get().is_some() {
            Some((previous, registry))
        } else {
            previous
                .previous
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
        };
        LazySkillIndex {
            index: OnceLock::new(),
            previous: Mutex::new(base),
            disk,
            stamps: Mutex::new(None),
            stats: Mutex::new(RoutingStats::default()),
        }
    }

    /// The index of `registry`, built on the first call (later calls must
    /// pass the same registry: the index belongs to one snapshot).
    pub fn get_or_build(&self, registry: &SkillRegistry) -> &SkillIndex {
        self.index.get_or_init(|| {
            let previous = self
                .previous
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let built = previous.and_then(|(index, before)| {
                let stamps = index
                    .stamps
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                index
                    .index
                    .get()
                    .map(|built| (built.clone(), stamps, before))
            });
            let (index, stamps, stats) = match (built, &self.disk) {
                (Some((mut index, Some(mut stamps), before)), Some(cache)) => {
                    let stats = cache.refresh(&mut index, &mut stamps, &before, registry);
                    (index, Some(stamps), stats)
                }
                (Some((mut index, _, before)), None) => {
                    let analyzed = refresh_index(&mut index, &before, registry);
                    let stats = RoutingStats {
                        analyzed,
                        reused: registry.len() - analyzed,
                        ..RoutingStats::default()
                    };
                    (index, None, stats)
                }
                (_, Some(cache)) => {
                    let (index, stamps, stats) = cache.load_or_build(registry);
                    (index, Some(stamps), stats)
                }
                (None, None) => {
                    let stats = RoutingStats {
                        analyzed: registry.len(),
                        ..RoutingStats::default()
                    };
                    (index_registry(registry, None), None, stats)
                }
            };
            *self.stamps.lock().unwrap_or_else(PoisonError::into_inner) = stamps;
            *self.stats.lock().unwrap_or_else(PoisonError::into_inner) = stats;
            index
        })
    }

    /// The index, if it was built.
    pub fn get(&self) -> Option<&SkillIndex> {
        self.index.get()
    }

    /// What building this index did (all zero until it is built): how
    /// many skills were analyzed and how many came from the last index or
    /// the cache file, and whether that file was used and written.
    pub fn stats(&self) -> RoutingStats {
        self.stats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
