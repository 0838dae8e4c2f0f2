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

use std::sync::OnceLock;

pub use analyze::{MAX_WORD_BYTES, Normalizer, for_each_term, for_each_word};
pub use document::{FIELDS, Field, SkillText};
pub use gather::{MAX_FILES_LISTED, index_registry, other_files, refresh};
pub use index::{MAX_QUERY_TERMS, MatchedTerm, SearchHit, SkillIndex};

use crate::discover::registry::SkillRegistry;

/// The relevance index of one registry snapshot, built the first time a
/// search needs it (a render that never routes never pays for it) and
/// shared by everything on that snapshot.
#[derive(Debug, Default)]
pub struct LazySkillIndex {
    index: OnceLock<SkillIndex>,
}

impl LazySkillIndex {
    /// An index not built yet.
    pub fn new() -> Self {
        LazySkillIndex::default()
    }

    /// An index already built (carried over from the last snapshot and
    /// refreshed, see [`refresh`]).
    pub fn built(index: SkillIndex) -> Self {
        let cell = OnceLock::new();
        let _ = cell.set(index);
        LazySkillIndex { index: cell }
    }

    /// The index of `registry`, built on the first call (later calls must
    /// pass the same registry: the index belongs to one snapshot).
    pub fn get_or_build(&self, registry: &SkillRegistry) -> &SkillIndex {
        self.index.get_or_init(|| index_registry(registry, None))
    }

    /// The index, if it was built.
    pub fn get(&self) -> Option<&SkillIndex> {
        self.index.get()
    }
}
