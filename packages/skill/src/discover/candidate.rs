//! A file the walk found that may be a skill: where it is, what kind of
//! instruction file it is, and the stamp it had when found. Shared by the
//! walk that makes candidates, the cache that answers them and the loaders
//! that read them, so it lives below all three.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bcode_fs::FileStamp;
use bcode_skill_models::{SkillLayout, SkillSource};

use crate::parse::skill::{InstructionKind, SkillOrigin};

/// A file that may be a skill.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub origin: SkillOrigin,
    pub stamp: FileStamp,
    /// [`origin_key`] of `origin`, computed once.
    pub origin_key: u64,
}

impl Candidate {
    /// A candidate found at `location` in `directory` (the folder of a
    /// folder skill, the root of a flat one).
    pub fn new(
        source: Arc<SkillSource>,
        location: PathBuf,
        directory: PathBuf,
        layout: SkillLayout,
        kind: InstructionKind,
        stamp: FileStamp,
    ) -> Self {
        let inferred_id = match layout {
            SkillLayout::Flat => location.file_stem(),
            _ => directory.file_name(),
        }
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
        let origin = SkillOrigin {
            source,
            layout,
            kind,
            location,
            directory,
            inferred_id,
        };
        Candidate {
            origin_key: origin_key(&origin),
            origin,
            stamp,
        }
    }
}

/// Where a candidate's outcome goes in the summary cache: what a build
/// that keeps a cache holds of each candidate once a loader owns it (the
/// loader moves the candidate's paths into the summary).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CacheKey {
    pub origin_key: u64,
    pub stamp: FileStamp,
}

impl CacheKey {
    pub fn of(candidate: &Candidate) -> Self {
        CacheKey {
            origin_key: candidate.origin_key,
            stamp: candidate.stamp,
        }
    }
}

/// A fingerprint of `origin`, the summary cache's key, hashing paths as
/// bytes (`PathBuf`'s own hash walks components, which showed up in
/// profiles). Two origins sharing a key cannot share a cache entry: an
/// entry also matches on the file's stamp, whose identity differs between
/// distinct files.
pub(crate) fn origin_key(origin: &SkillOrigin) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    origin.location.as_os_str().hash(&mut hasher);
    origin.directory.as_os_str().hash(&mut hasher);
    origin.kind.hash(&mut hasher);
    origin.layout.hash(&mut hasher);
    origin.inferred_id.hash(&mut hasher);
    origin.source.kind.hash(&mut hasher);
    origin.source.ordinal.hash(&mut hasher);
    origin.source.label.hash(&mut hasher);
    origin
        .source
        .root
        .as_deref()
        .map(Path::as_os_str)
        .hash(&mut hasher);
    hasher.finish()
}
