//! Parsed summaries cached by file metadata, so rebuilding an unchanged tree
//! reads no skill file. Where metadata cannot be trusted (a file modified
//! within the filesystem's timestamp granularity of the last check, the
//! "racy" case git also guards against) the bytes are re-read and compared by
//! content hash before a cached parse is reused.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use bcode_skill_models::{Diagnostic, DiagnosticCode};

use crate::parse::{Origin, ParseOutcome, parse_skill};
use crate::read::{ReadError, read_front};
use crate::walk::{Candidate, FileStamp};

/// Modification times this close to the last check may hide a second write
/// with the same timestamp.
const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Counters of the last build, for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiscoveryStats {
    pub candidates: usize,
    /// Instruction files opened and read.
    pub files_read: usize,
    /// Front matters parsed.
    pub files_parsed: usize,
    /// Candidates answered from the cache without reading.
    pub cache_hits: usize,
}

struct Entry {
    stamp: FileStamp,
    origin: Origin,
    hash: Option<blake3::Hash>,
    outcome: ParseOutcome,
    verified_at: SystemTime,
}

/// The cache. A `HashMap` because it is only ever looked up by path and its
/// order is never observed.
#[derive(Default)]
pub struct SummaryCache {
    entries: HashMap<PathBuf, Entry>,
}

impl std::fmt::Debug for SummaryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SummaryCache")
            .field("entries", &self.entries.len())
            .finish()
    }
}

impl SummaryCache {
    /// The parse outcome of `candidate`, from the cache when its file is unchanged.
    pub fn load(
        &mut self,
        candidate: &Candidate,
        max_bytes: usize,
        now: SystemTime,
        stats: &mut DiscoveryStats,
    ) -> ParseOutcome {
        let path = &candidate.origin.location;
        if let Some(entry) = self.entries.get(path)
            && entry.origin == candidate.origin
            && entry.stamp == candidate.stamp
            && !is_racy(entry)
        {
            stats.cache_hits += 1;
            return entry.outcome.clone();
        }
        if candidate.stamp.len > max_bytes as u64 {
            let outcome = too_large(&candidate.origin, candidate.stamp.len, max_bytes);
            self.store(candidate, None, outcome.clone(), now);
            return outcome;
        }
        stats.files_read += 1;
        let bytes = match read_front(path, max_bytes) {
            Ok(bytes) => bytes,
            Err(err) => {
                // Read failures are not cached: they are often transient.
                self.entries.remove(path);
                return read_failure(&candidate.origin, err);
            }
        };
        let hash = blake3::hash(&bytes);
        if let Some(entry) = self.entries.get_mut(path)
            && entry.origin == candidate.origin
            && entry.hash == Some(hash)
        {
            entry.stamp = candidate.stamp;
            entry.verified_at = now;
            stats.cache_hits += 1;
            return entry.outcome.clone();
        }
        stats.files_parsed += 1;
        let outcome = parse_skill(&candidate.origin, &bytes);
        self.store(candidate, Some(hash), outcome.clone(), now);
        outcome
    }

    fn store(
        &mut self,
        candidate: &Candidate,
        hash: Option<blake3::Hash>,
        outcome: ParseOutcome,
        now: SystemTime,
    ) {
        self.entries.insert(
            candidate.origin.location.clone(),
            Entry {
                stamp: candidate.stamp,
                origin: candidate.origin.clone(),
                hash,
                outcome,
                verified_at: now,
            },
        );
    }

    /// Drops entries for files that were not seen in the last build.
    pub fn retain(&mut self, seen: &std::collections::HashSet<PathBuf>) {
        self.entries.retain(|path, _| seen.contains(path));
    }
}

fn is_racy(entry: &Entry) -> bool {
    match entry.stamp.modified {
        Some(modified) => modified + RACY_WINDOW >= entry.verified_at,
        None => true,
    }
}

fn too_large(origin: &Origin, len: u64, max: usize) -> ParseOutcome {
    ParseOutcome {
        skill: None,
        not_a_skill: false,
        diagnostics: vec![
            Diagnostic::error(
                DiagnosticCode::FileTooLarge,
                format!("the skill file is {len} bytes; skills.max_skill_file_bytes is {max}; the skill is skipped"),
            )
            .with_path(&origin.location)
            .with_hint("move long material into resource files next to SKILL.md, or raise skills.max_skill_file_bytes"),
        ],
    }
}

fn read_failure(origin: &Origin, err: ReadError) -> ParseOutcome {
    let diagnostic = match err {
        ReadError::TooLarge { len, max } => return too_large(origin, len, max),
        ReadError::NotRegular => Diagnostic::warning(
            DiagnosticCode::SpecialFile,
            "the skill file is not a regular file (a FIFO, socket or device) and was not read",
        )
        .with_hint("replace it with a regular file"),
        ReadError::Io(err) => Diagnostic::error(
            DiagnosticCode::Unreadable,
            format!("the skill file cannot be read: {err}; the skill is skipped"),
        )
        .with_hint("check the file's permissions"),
    };
    ParseOutcome {
        skill: None,
        not_a_skill: false,
        diagnostics: vec![diagnostic.with_path(&origin.location)],
    }
}
