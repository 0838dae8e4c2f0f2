//! Parsed summaries cached by file stamp, so rebuilding an unchanged tree
//! reads no skill file. Whether a stamp may be believed, and when content
//! hashes must be compared instead, is decided by `bcode_fs::recheck`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bcode_skill_models::{Diagnostic, DiagnosticCode};

use bcode_fs::FileStamp;

use crate::discover::candidate::{CacheKey, Candidate};
use crate::discover::read::{ReadError, read_front, read_whole};
use crate::discover::record::InstructionRecord;
use crate::parse::front_matter;
use crate::parse::skill::{ParseOutcome, SkillOrigin, parse_split_keeping};
use bcode_fs::{ContentHash, RACY_WINDOW, Verdict};

struct Entry {
    stamp: FileStamp,
    /// Content hash, kept only for entries that were racy when stored: only
    /// they are ever re-verified.
    hash: Option<ContentHash>,
    outcome: Arc<ParseOutcome>,
    verified_at: SystemTime,
    /// The build that last saw this file; older entries are dropped.
    generation: u64,
}

/// The cache, keyed by the candidate's origin key (a hash of its path,
/// source and layout, computed once per candidate by the walk), because it
/// is only ever looked up by candidate and its order is never observed.
/// Hashing or copying the path again per lookup showed in profiles.
pub struct SummaryCache {
    entries: HashMap<u64, Entry, rustc_hash::FxBuildHasher>,
    generation: u64,
    racy_window: Duration,
}

impl Default for SummaryCache {
    fn default() -> Self {
        SummaryCache::new(RACY_WINDOW)
    }
}

impl std::fmt::Debug for SummaryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SummaryCache")
            .field("entries", &self.entries.len())
            .finish()
    }
}

/// What the cache knows about a candidate.
pub enum Lookup {
    /// Unchanged and trustworthy: no read needed.
    Hit(Arc<ParseOutcome>),
    /// Same metadata but modified within the racy window: re-read and
    /// compare content before reusing.
    Verify(Prior),
    Miss,
}

/// A cached outcome that may be reused if the content hash still matches.
pub struct Prior {
    hash: Option<ContentHash>,
    outcome: Arc<ParseOutcome>,
}

/// What loading one candidate afresh produced.
pub struct Loaded {
    pub outcome: Arc<ParseOutcome>,
    hash: Option<ContentHash>,
    pub read: bool,
    pub parsed: bool,
    /// Answered by a prior outcome after the content hash matched.
    pub reused: bool,
    /// Read failures are not cached: they are often transient.
    pub cacheable: bool,
    /// What a recording build keeps of the file (see
    /// [`crate::discover::record`]); boxed, so a build that does not record
    /// passes one word more per file.
    pub record: Option<Box<InstructionRecord>>,
}

impl SummaryCache {
    /// An empty cache that re-verifies entries modified within
    /// `racy_window` of their last check.
    pub fn new(racy_window: Duration) -> Self {
        SummaryCache {
            entries: HashMap::default(),
            generation: 0,
            racy_window,
        }
    }

    /// Looks `candidate` up without touching the file.
    pub fn lookup(&mut self, candidate: &Candidate) -> Lookup {
        let generation = self.generation;
        let Some(entry) = self.entries.get_mut(&candidate.origin_key) else {
            return Lookup::Miss;
        };
        match bcode_fs::recheck(
            &entry.stamp,
            entry.verified_at,
            &candidate.stamp,
            self.racy_window,
        ) {
            Verdict::Changed => Lookup::Miss,
            Verdict::Unchanged => {
                entry.generation = generation;
                Lookup::Hit(Arc::clone(&entry.outcome))
            }
            Verdict::CompareContent => {
                entry.generation = generation;
                Lookup::Verify(Prior {
                    hash: entry.hash,
                    outcome: Arc::clone(&entry.outcome),
                })
            }
        }
    }

    /// Records what loading the candidate of `key` produced (or forgets it when it
    /// must not be cached).
    pub fn store(&mut self, key: &CacheKey, loaded: &Loaded, now: SystemTime) {
        if !loaded.cacheable {
            self.entries.remove(&key.origin_key);
            return;
        }
        self.entries.insert(
            key.origin_key,
            Entry {
                stamp: key.stamp,
                hash: loaded.hash,
                outcome: Arc::clone(&loaded.outcome),
                verified_at: now,
                generation: self.generation,
            },
        );
    }

    /// Starts a build: entries not looked up or stored during it are dropped
    /// by [`SummaryCache::end_build`].
    pub fn begin_build(&mut self) {
        self.generation += 1;
    }

    /// Drops entries for files that were not seen in this build.
    pub fn end_build(&mut self) {
        let generation = self.generation;
        self.entries
            .retain(|_, entry| entry.generation == generation);
    }
}

/// What every load of one build shares.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LoadSettings {
    pub max_bytes: usize,
    pub now: SystemTime,
    pub racy_window: Duration,
    /// Read each file whole and record it (see [`crate::discover::record`]).
    pub record: bool,
}

/// Reads and parses one candidate. Touches only that file (and `buf`, the
/// calling thread's read buffer), so discovery runs it on several threads
/// at once. With `settings.record`, the file is read whole and, when it
/// makes a skill, recorded (see [`crate::discover::record`]).
pub fn load_fresh(
    root: Option<&bcode_fs::DirHandle>,
    candidate: Candidate,
    settings: &LoadSettings,
    prior: Option<Prior>,
    buf: &mut Vec<u8>,
) -> Loaded {
    let LoadSettings {
        max_bytes,
        now,
        racy_window,
        record,
    } = *settings;
    let fresh = |outcome: ParseOutcome, read: bool, parsed: bool, cacheable: bool| Loaded {
        outcome: Arc::new(outcome),
        hash: None,
        read,
        parsed,
        reused: false,
        cacheable,
        record: None,
    };
    if candidate.stamp.len > max_bytes as u64 {
        return fresh(
            too_large(&candidate.origin, candidate.stamp.len, max_bytes),
            false,
            false,
            true,
        );
    }
    let read = if record {
        read_whole(root, &candidate.origin.location, max_bytes, buf).map(|()| None)
    } else {
        read_front(root, &candidate.origin.location, max_bytes, buf)
    };
    let split = match read {
        Ok(split) => split,
        Err(err) => return fresh(read_failure(&candidate.origin, err), true, false, false),
    };
    let bytes = buf.as_slice();
    // Hash only what a later racy check will compare: entries modified
    // within the window now, or re-verified ones.
    let hash = bcode_fs::needs_content_hash(&candidate.stamp, now, racy_window, prior.is_some())
        .then(|| ContentHash::of(bytes));
    if let Some(prior) = prior
        && bcode_fs::same_content(prior.hash, hash)
    {
        return Loaded {
            outcome: prior.outcome,
            hash,
            read: true,
            parsed: false,
            reused: true,
            cacheable: true,
            record: None,
        };
    }
    let stamp = candidate.stamp;
    let mut fields = None;
    let split = split.unwrap_or_else(|| front_matter::split(bytes));
    let outcome = parse_split_keeping(
        candidate.origin,
        bytes,
        split,
        record.then_some(&mut fields),
    );
    // Recorded only when a later equal stamp means these very bytes: the
    // stamp vouched before the read, and the read returned its length. And
    // only a file the MCP server would take whole (UTF-8 throughout).
    let recorded = fields
        .filter(|_| {
            outcome.skill.is_some()
                && bytes.len() as u64 == stamp.len
                && bcode_fs::vouches(&stamp, now, racy_window)
                && std::str::from_utf8(bytes).is_ok()
        })
        .map(|fields| Box::new(InstructionRecord::new(stamp, bytes, fields)));
    let mut loaded = fresh(outcome, true, true, true);
    loaded.hash = hash;
    loaded.record = recorded;
    loaded
}

/// What a worker that failed unexpectedly (a panic in a parser) leaves for
/// its files: a diagnostic, never a crash of the whole build.
pub fn failed_load(location: &Path) -> Loaded {
    unloaded(
        Diagnostic::error(
            DiagnosticCode::Unreadable,
            "loading this skill file failed unexpectedly (an internal error); the skill is skipped",
        )
        .with_path(location)
        .with_hint("please report this file to the Bcode developers"),
        true,
    )
}

/// What a loader thread that stopped (not a panic in a load: those are
/// caught) leaves for each file it had taken: a diagnostic on their root,
/// as the file itself went with the thread.
pub fn lost_load(root: &Path) -> Loaded {
    unloaded(
        Diagnostic::error(
            DiagnosticCode::Unreadable,
            "a skill file under this root was not loaded: a loader thread stopped unexpectedly (an internal error)",
        )
        .with_path(root)
        .with_hint("please report this to the Bcode developers"),
        false,
    )
}

/// A load that produced no skill, only `diagnostic`, and must not be
/// cached (the next build tries again).
fn unloaded(diagnostic: Diagnostic, read: bool) -> Loaded {
    Loaded {
        outcome: Arc::new(ParseOutcome {
            skill: None,
            not_a_skill: false,
            diagnostics: vec![diagnostic],
        }),
        hash: None,
        read,
        parsed: false,
        reused: false,
        cacheable: false,
        record: None,
    }
}

fn too_large(origin: &SkillOrigin, len: u64, max: usize) -> ParseOutcome {
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

fn read_failure(origin: &SkillOrigin, err: ReadError) -> ParseOutcome {
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
