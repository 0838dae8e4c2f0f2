//! Routing: which skills fit a task. A relevance index over every skill of
//! a registry (name, description, keywords, the body, the names of the
//! skill's other files), ranked with BM25F over English stems, so a host,
//! a model or another agent can ask "which skill fits this task?" of tens
//! of thousands of skills without model weights.
//!
//! - `analyze`: text to terms (identifier splitting, extensions, stop
//!   words, Snowball stems); pure.
//! - `document`: which text of a skill goes in which field; pure.
//! - `index`: the inverted index, its updates and its ranking; pure.
//! - `gather`: the edge that reads bodies and file names to index a
//!   registry, and re-indexes only what a reload changed.

mod analyze;
mod document;
mod gather;
mod index;

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

pub use analyze::{MAX_WORD_BYTES, Normalizer, for_each_term, for_each_word};
pub use document::{FIELDS, Field, SkillText};
pub use gather::{MAX_FILES_LISTED, index_registry, other_files, refresh};
pub use index::{MAX_QUERY_TERMS, MatchedTerm, SearchHit, SkillIndex};

use crate::discover::registry::SkillRegistry;

/// The relevance index of one registry snapshot, built the first time a
/// search needs it (a render that never routes never pays for it) and
/// shared by everything on that snapshot.
///
/// After a reload, the next snapshot's index starts from the last one:
/// built from it with [`refresh`], so only the skills the reload changed
/// are read and indexed again.
#[derive(Debug, Default)]
pub struct LazySkillIndex {
    index: OnceLock<SkillIndex>,
    /// The snapshot before this one, until this index is built: its index
    /// (if it was ever built) and its registry.
    previous: Mutex<Option<(Arc<LazySkillIndex>, SkillRegistry)>>,
}

impl LazySkillIndex {
    /// An index not built yet.
    pub fn new() -> Self {
        LazySkillIndex::default()
    }

    /// The index of the snapshot after `previous`'s (whose registry was
    /// `registry`), not built yet: when it is, it starts from `previous`'s
    /// index if that was built. When it was not, this one starts from
    /// what `previous` would have started from, so no chain of unbuilt
    /// snapshots is kept.
    pub fn following(previous: Arc<LazySkillIndex>, registry: SkillRegistry) -> Self {
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
            match previous {
                Some((index, before)) => match index.index.get() {
                    Some(built) => {
                        let mut index = built.clone();
                        refresh(&mut index, &before, registry);
                        index
                    }
                    None => index_registry(registry, None),
                },
                None => index_registry(registry, None),
            }
        })
    }

    /// The index, if it was built.
    pub fn get(&self) -> Option<&SkillIndex> {
        self.index.get()
    }
}
