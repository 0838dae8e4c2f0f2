//! The compiled `paths` globs of one invariant, made once per version of its
//! file: [`PathGlobs::compile`] reuses the set compiled for the same file at
//! the same [`FileStamp`] (and the same patterns), so relevant mode does not
//! rebuild every invariant's glob set on every turn. The set itself is built
//! on the first [`PathGlobs::is_match`]: full mode never matches paths, and
//! compiling ten invariants' sets was 12% of a small render (issue 15's
//! profile of `render/git_sections_off`). No I/O: the stamp comes from the
//! gatherer.

use std::sync::{Arc, OnceLock};

use bcode_fs::FileStamp;
use bcode_skill::MAX_GLOB_BYTES;
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
    /// The set, built from `patterns` on first use and shared by every
    /// clone; `None` inside when no pattern parses (nothing matches).
    set: Arc<OnceLock<Option<GlobSet>>>,
}

impl PartialEq for PathGlobs {
    fn eq(&self, _other: &PathGlobs) -> bool {
        true
    }
}

impl Eq for PathGlobs {}

impl PathGlobs {
    /// The set of `patterns` for the file version `stamp`: `previous`'s own
    /// set when it was made for the same stamp and patterns, else a new one,
    /// built when first matched. A pattern that does not parse is a hint
    /// that cannot match.
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
        PathGlobs {
            stamp,
            patterns: patterns.into(),
            set: Arc::default(),
        }
    }

    /// Whether `path` matches one of the globs (the first call builds the
    /// set).
    pub fn is_match(&self, path: &str) -> bool {
        self.set
            .get_or_init(|| build(&self.patterns))
            .as_ref()
            .is_some_and(|set| set.is_match(path))
    }

    /// Whether this set was compiled for `patterns` (a set made for other
    /// patterns, or none at all, must not be trusted).
    pub fn compiled_for(&self, patterns: &[String]) -> bool {
        *self.patterns == *patterns
    }

    /// Whether `self` and `other` share one set (no recompilation happened
    /// between them).
    pub fn shares_set_with(&self, other: &PathGlobs) -> bool {
        Arc::ptr_eq(&self.set, &other.set)
    }
}

/// The set of the patterns that parse and are no longer than
/// [`MAX_GLOB_BYTES`] (parsing leaves longer ones out with a note; these
/// patterns may come from elsewhere); `None` when none does.
fn build(patterns: &[String]) -> Option<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    let mut any = false;
    for pattern in patterns.iter().filter(|p| p.len() <= MAX_GLOB_BYTES) {
        if let Ok(glob) = Glob::new(pattern) {
            builder.add(glob);
            any = true;
        }
    }
    any.then(|| builder.build().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::PathGlobs;

    #[test]
    fn the_set_is_built_on_first_match_and_shared_by_clones() {
        let patterns = ["src/**/*.rs".to_owned(), "[".to_owned()];
        let globs = PathGlobs::compile(&patterns, None, None);
        let clone = globs.clone();
        assert!(globs.set.get().is_none(), "built before any match");
        assert!(clone.is_match("src/a/b.rs"));
        assert!(
            globs.set.get().is_some(),
            "the clone's match built a set of its own"
        );
        assert!(!globs.is_match("docs/a.md"));
        // No pattern that parses: nothing matches.
        let broken = PathGlobs::compile(&["[".to_owned()], None, None);
        assert!(!broken.is_match("["));
    }
}
