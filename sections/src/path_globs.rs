//! The compiled `paths` globs of one invariant, made once per version of its
//! file: [`PathGlobs::compile`] reuses the set compiled for the same file at
//! the same [`FileStamp`] (and the same patterns), so relevant mode does not
//! rebuild every invariant's glob set on every turn. No I/O: the stamp comes
//! from the gatherer.

use std::sync::Arc;

use bcode_fs::FileStamp;
use globset::{Glob, GlobSet, GlobSetBuilder};

/// A compiled glob set and the file version it was compiled for.
///
/// Equality ignores it: it is derived from the invariant's `paths`, which
/// the invariant's own equality compares, so a recompiled set of the same
/// patterns (a touched file) is not a change.
#[derive(Clone, Debug, Default)]
pub struct PathGlobs {
    /// The file version the set was compiled for; `None` when the
    /// invariant was parsed from text, not gathered from a file.
    stamp: Option<FileStamp>,
    /// The patterns it was compiled from.
    patterns: Arc<[String]>,
    /// The set; `None` when no pattern parses (nothing matches).
    set: Option<Arc<GlobSet>>,
}

impl PartialEq for PathGlobs {
    fn eq(&self, _other: &PathGlobs) -> bool {
        true
    }
}

impl Eq for PathGlobs {}

impl PathGlobs {
    /// The set of `patterns` for the file version `stamp`: `previous`'s own
    /// set when it was compiled for the same stamp and patterns, else a new
    /// one. A pattern that does not parse is a hint that cannot match.
    pub fn compile(
        patterns: &[String],
        stamp: Option<FileStamp>,
        previous: Option<&PathGlobs>,
    ) -> PathGlobs {
        if let Some(previous) = previous
            && stamp.is_some()
            && previous.stamp == stamp
            && *previous.patterns == *patterns
        {
            return previous.clone();
        }
        let mut builder = GlobSetBuilder::new();
        let mut any = false;
        for pattern in patterns {
            if let Ok(glob) = Glob::new(pattern) {
                builder.add(glob);
                any = true;
            }
        }
        let set = any.then(|| builder.build().ok()).flatten().map(Arc::new);
        PathGlobs {
            stamp,
            patterns: patterns.into(),
            set,
        }
    }

    /// Whether `path` matches one of the globs.
    pub fn is_match(&self, path: &str) -> bool {
        self.set.as_ref().is_some_and(|set| set.is_match(path))
    }

    /// Whether this set was compiled for `patterns` (a set made for other
    /// patterns, or none at all, must not be trusted).
    pub fn compiled_for(&self, patterns: &[String]) -> bool {
        *self.patterns == *patterns
    }

    /// Whether `self` and `other` share one compiled set (no recompilation
    /// happened between them).
    pub fn shares_set_with(&self, other: &PathGlobs) -> bool {
        match (&self.set, &other.set) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}
