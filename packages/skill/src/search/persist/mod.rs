//! The relevance index in the state folder's disk cache, beside the
//! registry's (`<state>/cache/skills`, the same `skills.disk_cache`
//! switch): a later process, or a session after a reload, reads and
//! analyzes only the skills that changed, and a one-shot query reads only
//! its own terms' postings (see `format` for the layout).
//!
//! A skill's entry is trusted only while its stamps hold, by the registry
//! cache's rules: the stamps of its instruction file and of every folder
//! its file list came from are taken when it is analyzed, and an entry is
//! reused only when none was racy then (changed within the racy window
//! before the analysis began) and all answer the same now. Skills with no
//! file (an MCP server's) are analyzed every time, from their summaries,
//! and never stored.
//!
//! The file is state (`bcode_fs::StateDir`): used only in a folder only
//! the user can write, opened `O_NOFOLLOW` and checked regular, read in
//! bounded pieces at offsets checked against its length, replaced by a
//! temporary file created `O_EXCL` and renamed. A file that is cut short,
//! corrupt, hostile, of another format or for another key is ignored
//! (the caller gets the reason, for a notice) and rebuilt.

mod format;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bcode_fs::{FileStamp, ReadError, StateDir};
use bcode_skill_models::{SkillId, SkillLayout, SkillSummary};

use crate::discover::registry::{DiscoveryOptions, SkillRegistry};
use crate::discover::snapshot::ConfirmedStamps;
use crate::discover::sources::SourceRoot;
use crate::search::analyze::{Normalizer, for_each_term};
use crate::search::document::{FIELDS, SkillText};
use crate::search::gather::other_files_and_folders;
use crate::search::index::{SearchHit, SkillIndex, WordCodes};

pub(crate) use format::DocStamps;
use format::{BLOCK_TERMS, BlockEntry, DocRecord, DocView, HEADER_BYTES, Header, TermEntry, bad};

/// Files larger than this are neither read nor written.
const MAX_BYTES: u64 = 512 * 1024 * 1024;

/// Routing cache files kept in the folder; the least recently written go
/// first ([`StateDir::prune`]).
const MAX_FILES: usize = 8;

/// Skills a worker takes at once when analyzing.
const BATCH: usize = 256;

/// Skills analyzed into one run of a first build, by default
/// ([`RoutingCache::with_run_size`]).
const RUN_SKILLS: usize = 1024;

/// Terms longer than this are not stored (a query never holds one).
const MAX_STORED_TERM: usize = 1024;

/// Gives the next term to write, in increasing order, with its postings
/// put into the list it is handed; `None` after the last.
type NextTerm<'a> = dyn FnMut(&mut Vec<(u32, [u32; FIELDS])>) -> io::Result<Option<Box<str>>> + 'a;

/// One term's postings: document numbers, increasing, with the term's
/// count in each field.
type Postings = Vec<(u32, [u32; FIELDS])>;

/// The stamps of every stored skill of an index, by id.
pub(crate) type Stamps = BTreeMap<SkillId, DocStamps>;

/// Where the relevance index of one set of roots and options is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoutingCache {
    dir: PathBuf,
    key: String,
    racy_window: Duration,
    run_size: usize,
}

/// What one use of the cache did, for tests, benchmarks and notices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RoutingStats {
    /// Skills read and analyzed (their bodies and file lists).
    pub analyzed: usize,
    /// Skills whose entries were taken from the cache file.
    pub reused: usize,
    /// The file was (re)written.
    pub written: bool,
    /// A cache file was there but not used, and why.
    pub ignored: Option<String>,
}

impl RoutingCache {
    /// The cache of the index over `roots` discovered with `options`, in
    /// `dir` (for Bcode, `<state dir>/cache/skills`, as for
    /// [`crate::DiskCache`]); stamps are believed after
    /// `options.walk.racy_window`.
    pub fn new(dir: impl Into<PathBuf>, options: &DiscoveryOptions, roots: &[SourceRoot]) -> Self {
        RoutingCache {
            dir: dir.into(),
            key: format!(
                "{}|{}|{options:?}|{roots:?}",
                format::FORMAT,
                env!("CARGO_PKG_VERSION")
            ),
            racy_window: options.walk.racy_window,
            run_size: RUN_SKILLS,
        }
    }

    /// How many skills a first build analyzes at a time (default 1,024):
    /// the index of one run is what it holds in memory; smaller runs hold
    /// less and merge more. The file written is the same whatever the size.
    #[must_use]
    pub fn with_run_size(mut self, skills: usize) -> Self {
        self.run_size = skills.max(1);
        self
    }

    /// The cache file's name in its folder.
    pub fn file_name(&self) -> String {
        let mut hasher = rustc_hash::FxHasher::default();
        self.key.hash(&mut hasher);
        format!("routing-{:016x}.idx", hasher.finish())
    }

    /// The skills of `registry` that best fit `query`, as
    /// [`SkillIndex::search`] over a whole index of it answers, byte for
    /// byte. While every stored entry holds, only the query's terms are
    /// read from the file and nothing is analyzed; otherwise the index is
    /// brought up to date (only changed skills analyzed) and written.
    pub fn search(
        &self,
        registry: &SkillRegistry,
        query: &str,
        limit: usize,
    ) -> (Vec<SearchHit>, RoutingStats) {
        self.search_confirmed(registry, None, query, limit)
    }

    /// [`RoutingCache::search`] right after the discovery that built
    /// `registry` confirmed its snapshot (`confirmed`, from
    /// [`crate::Discovery::confirmed_stamps`]): a stored entry's stamps of
    /// paths the snapshot holds (each skill's file and folder) are taken
    /// from it, so only the other folders' are looked up. The answer is the
    /// same.
    pub fn search_confirmed(
        &self,
        registry: &SkillRegistry,
        confirmed: Option<&ConfirmedStamps<'_>>,
        query: &str,
        limit: usize,
    ) -> (Vec<SearchHit>, RoutingStats) {
        let mut stats = RoutingStats::default();
        let stored = match self.open() {
            Ok(stored) => stored,
            Err(err) => {
                stats.ignored = Some(err.to_string());
                None
            }
        };
        // No usable file: the first index is written in runs (never whole
        // in memory) and the query is answered from the file like any
        // later one.
        let mut first = None;
        let stored = match stored {
            Some(stored) => Some(stored),
            None => {
                let all: Vec<&Arc<SkillSummary>> = registry.shared_skills().collect();
                if self.store_in_runs(registry, &all) {
                    first = Some(all.len());
                    self.open().ok().flatten()
                } else {
                    None
                }
            }
        };
        if let Some(stored) = &stored {
            let plan = plan(stored, registry, confirmed);
            if !plan.rewrite {
                match load_query(stored, &plan, query) {
                    Ok(mut index) => {
                        let again: Vec<&Arc<SkillSummary>> =
                            plan.retry.iter().chain(&plan.unstamped).copied().collect();
                        let (fresh, stamps) =
                            analyze(registry, &again, self.racy_window, Some(query));
                        // An entry that vouches now is worth writing: then
                        // the whole index is brought up to date below
                        // (but not right after the first one was written:
                        // the next process does that).
                        if first.is_some() || !stamps.values().any(|s| s.trusted) {
                            index.append(fresh);
                            stats.analyzed = again.len();
                            stats.reused = plan.kept.len();
                            if let Some(all) = first {
                                stats.analyzed = all;
                                stats.reused = 0;
                                stats.written = true;
                            }
                            return (index.search(query, limit), stats);
                        }
                    }
                    Err(err) => stats.ignored = Some(err.to_string()),
                }
            }
        }
        let (index, _) = self.whole(registry, stored, &mut stats);
        (index.search(query, limit), stats)
    }

    /// The whole index of `registry` and its stamps: read from the file
    /// where entries hold, the rest analyzed, the file rewritten when
    /// anything changed.
    pub(crate) fn load_or_build(
        &self,
        registry: &SkillRegistry,
    ) -> (SkillIndex, Stamps, RoutingStats) {
        let mut stats = RoutingStats::default();
        let stored = match self.open() {
            Ok(stored) => stored,
            Err(err) => {
                stats.ignored = Some(err.to_string());
                None
            }
        };
        let (index, stamps) = self.whole(registry, stored, &mut stats);
        (index, stamps, stats)
    }

    fn whole(
        &self,
        registry: &SkillRegistry,
        stored: Option<Stored>,
        stats: &mut RoutingStats,
    ) -> (SkillIndex, Stamps) {
        let all: Vec<&Arc<SkillSummary>> = registry.shared_skills().collect();
        let from_file = stored.and_then(|stored| {
            let plan = plan(&stored, registry, None);
            match load_full(&stored, &plan) {
                Ok((index, stamps)) => Some((index, stamps, plan)),
                Err(err) => {
                    stats.ignored = Some(err.to_string());
                    None
                }
            }
        });
        let (mut index, mut stamps, stale, unchanged) = match from_file {
            Some((index, stamps, plan)) => {
                stats.reused = plan.kept.len();
                let retried: BTreeSet<SkillId> =
                    plan.retry.iter().map(|s| s.manifest.id.clone()).collect();
                let mut stale = plan.stale;
                stale.extend(plan.retry);
                stale.extend(plan.unstamped);
                (
                    index,
                    stamps,
                    stale,
                    Some(retried).filter(|_| !plan.rewrite),
                )
            }
            None => (SkillIndex::new(), Stamps::new(), all, None),
        };
        let (fresh, fresh_stamps) = analyze(registry, &stale, self.racy_window, None);
        stats.analyzed = stale.len();
        // `unchanged`: the file holds every skill but those retried, whose
        // entries could not vouch for them; it is rewritten only when one
        // of them can now.
        let rewrite = match unchanged {
            None => true,
            Some(retried) => retried
                .iter()
                .any(|id| fresh_stamps.get(id).is_some_and(|s| s.trusted)),
        };
        index.append(fresh);
        stamps.extend(fresh_stamps);
        if rewrite {
            stats.written = self.store(&index, &stamps);
        }
        (index, stamps)
    }

    /// Brings `index` and its `stamps`, built over `before`, up to `after`:
    /// a skill whose summary is the very one `before` had keeps its entry,
    /// every other is analyzed again alone, skills gone are removed; the
    /// file is rewritten when anything changed.
    pub(crate) fn refresh(
        &self,
        index: &mut SkillIndex,
        stamps: &mut Stamps,
        before: &SkillRegistry,
        after: &SkillRegistry,
    ) -> RoutingStats {
        let kept: HashMap<&str, &Arc<SkillSummary>> = before
            .shared_skills()
            .map(|s| (s.manifest.id.as_str(), s))
            .collect();
        let mut changed = false;
        for skill in before.skills() {
            if after.get(skill.manifest.id.as_str()).is_none() {
                index.remove(&skill.manifest.id);
                stamps.remove(&skill.manifest.id);
                changed = true;
            }
        }
        let again: Vec<&Arc<SkillSummary>> = after
            .shared_skills()
            .filter(|skill| {
                let same = kept
                    .get(skill.manifest.id.as_str())
                    .is_some_and(|old| Arc::ptr_eq(old, skill));
                !same || !index.contains(&skill.manifest.id)
            })
            .collect();
        let (fresh, fresh_stamps) = analyze(after, &again, self.racy_window, None);
        for skill in &again {
            stamps.remove(&skill.manifest.id);
        }
        index.append(fresh);
        stamps.extend(fresh_stamps);
        let mut stats = RoutingStats {
            analyzed: again.len(),
            reused: after.len() - again.len(),
            ..RoutingStats::default()
        };
        if changed || !again.is_empty() {
            stats.written = self.store(index, stamps);
        }
        stats
    }

    /// The stored file, `None` when there is none (or no safe folder), an
    /// error saying why when one is there but cannot be used.
    fn open(&self) -> io::Result<Option<Stored>> {
        let Ok(dir) = StateDir::existing(&self.dir) else {
            return Ok(None);
        };
        let (file, len) = match dir.open_file(&self.file_name()) {
            Ok(opened) => opened,
            Err(ReadError::Io(err)) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(io::Error::other(err.to_string())),
        };
        if len > MAX_BYTES {
            return Err(bad(&format!(
                "{len} bytes, more than the limit of {MAX_BYTES}"
            )));
        }
        if len < HEADER_BYTES as u64 {
            return Err(bad("cut short"));
        }
        let head = read_at(&file, 0, HEADER_BYTES)?;
        let header = format::read_header(&head)?;
        if header.file_len != len {
            return Err(bad("cut short or run long"));
        }
        let meta_len = header.key.1 + header.docs_at.1 + header.block_index.1;
        let meta = read_at(&file, header.key.0, to_usize(meta_len)?)?;
        let checksum = format::checksum16(&[&head[..HEADER_BYTES - 16], &meta]);
        if checksum != header.checksum {
            return Err(bad("a checksum does not match"));
        }
        let key_len = to_usize(header.key.1)?;
        let docs_len = to_usize(header.docs_at.1)?;
        let (key, rest) = meta.split_at(key_len);
        if key != self.key.as_bytes() {
            return Err(bad("written for other roots, options or version"));
        }
        let (docs_bytes, blocks_bytes) = rest.split_at(docs_len);
        // A record takes at least 32 bytes, a block entry 21: a count
        // beyond what the bytes can hold is refused before anything is
        // reserved.
        if u64::from(header.docs) > docs_bytes.len() as u64 / 32
            || u64::from(header.blocks) > blocks_bytes.len() as u64 / 21
        {
            return Err(bad("more entries than bytes"));
        }
        // Every record is checked here, and only where each starts is
        // kept: the records stay in `meta`, read again when asked for.
        let mut cursor = format::Cursor::new(docs_bytes);
        let mut starts = Vec::with_capacity(header.docs as usize);
        for _ in 0..header.docs {
            let at = key_len + cursor.position();
            starts.push(u32::try_from(at).map_err(|_| bad("a section too long"))?);
            format::read_doc(&mut cursor)?;
        }
        if !cursor.is_done() {
            return Err(bad("documents run long"));
        }
        let mut cursor = format::Cursor::new(blocks_bytes);
        let mut blocks: Vec<BlockEntry> = Vec::with_capacity(header.blocks as usize);
        for _ in 0..header.blocks {
            let block = format::read_block_entry(&mut cursor)?;
            let end = block.at.checked_add(u64::from(block.len));
            if end.is_none_or(|end| end > header.dictionary.1)
                || blocks.last().is_some_and(|last| last.first >= block.first)
            {
                return Err(bad("a block out of place"));
            }
            blocks.push(block);
        }
        if !cursor.is_done() {
            return Err(bad("the block index runs long"));
        }
        Ok(Some(Stored {
            file,
            header,
            docs: Docs {
                bytes: meta,
                starts,
            },
            blocks,
        }))
    }

    /// Writes `index` (its stored skills: those with stamps) to the file.
    /// Best effort: a cache that cannot be written is not there next time.
    fn store(&self, index: &SkillIndex, stamps: &Stamps) -> bool {
        let Ok(dir) = StateDir::open(&self.dir) else {
            return false;
        };
        let written = dir.replace(&self.file_name(), &mut |file| {
            self.write(file, index, stamps)
        });
        if written.is_err() {
            return false;
        }
        dir.prune("routing-", ".idx", MAX_FILES);
        true
    }

    fn write(&self, file: &mut File, index: &SkillIndex, stamps: &Stamps) -> io::Result<()> {
        let mut docs = DocsWriter::default();
        let numbers = docs.add(index, stamps);
        let mut terms: Vec<&str> = index.term_list().collect();
        terms.sort_unstable();
        let mut terms = terms.into_iter();
        self.write_sections(file, docs, &mut |list| {
            for term in terms.by_ref() {
                list.clear();
                list.extend(index.postings_of(term).filter_map(|(doc, tf)| {
                    Some((numbers.get(doc as usize).copied().flatten()?, tf))
                }));
                if !list.is_empty() && term.len() <= MAX_STORED_TERM {
                    return Ok(Some(term.into()));
                }
            }
            Ok(None)
        })
    }

    /// A first index of `skills` written to the file without holding all
    /// of it: skills are analyzed a run at a time, each run's
    /// postings go to a scratch file in the state folder, and the runs are
    /// merged term by term into the file [`RoutingCache::write`] would
    /// write for the whole index, byte for byte. A cold build then holds one
    /// run's index and the merge's heads, not every term of the registry.
    fn store_in_runs(&self, registry: &SkillRegistry, skills: &[&Arc<SkillSummary>]) -> bool {
        let Ok(dir) = StateDir::open(&self.dir) else {
            return false;
        };
        let mut docs = DocsWriter::default();
        let mut runs = Vec::new();
        for chunk in skills.chunks(self.run_size) {
            let (part, stamps) = analyze(registry, chunk, self.racy_window, None);
            match Run::write(&dir, &part, &docs.add(&part, &stamps)) {
                Ok(run) => runs.push(run),
                Err(_) => return false,
            }
        }
        let written = dir.replace(&self.file_name(), &mut |file| {
            let total = docs.header.docs;
            let mut heads: Vec<Option<RunHead>> = Vec::with_capacity(runs.len());
            for run in &mut runs {
                heads.push(run.next()?);
            }
            let docs = std::mem::take(&mut docs);
            self.write_sections(file, docs, &mut |list| {
                let Some(first) = heads.iter().flatten().map(|head| &head.term).min().cloned()
                else {
                    return Ok(None);
                };
                list.clear();
                for (head, run) in heads.iter_mut().zip(&mut runs) {
                    if head.as_ref().is_some_and(|h| h.term == first) {
                        if let Some(h) = head.take() {
                            list.extend(format::read_postings(&h.postings, h.count, total)?);
                        }
                        *head = run.next()?;
                    }
                }
                Ok(Some(first))
            })
        });
        if written.is_err() {
            return false;
        }
        dir.prune("routing-", ".idx", MAX_FILES);
        true
    }

    /// Writes the file: `docs`, then each term `next_term` gives (in
    /// increasing order, its postings put in the list it is handed) with
    /// its postings, the dictionary and the block index.
    fn write_sections(
        &self,
        file: &mut File,
        docs: DocsWriter,
        next_term: &mut NextTerm<'_>,
    ) -> io::Result<()> {
        let DocsWriter {
            mut header,
            bytes: docs,
        } = docs;
        let mut out = io::BufWriter::with_capacity(1 << 20, &mut *file);
        out.write_all(&[0u8; HEADER_BYTES])?;
        // The dictionary is written block by block as the postings go
        // out: a term entry is serialized at once and only each block's
        // first term is kept, so writing costs the file's bytes, not a
        // second copy of every term (at 60,000 skills the terms are most of
        // the index).
        let mut dictionary = Vec::new();
        let mut blocks = BlockWriter::default();
        let mut run = Vec::new();
        let mut list = Vec::new();
        let mut offset = 0u64;
        while let Some(term) = next_term(&mut list)? {
            run.clear();
            format::write_postings(&mut run, &list);
            blocks.push(
                &mut dictionary,
                &TermEntry {
                    term,
                    count: list.len() as u32,
                    at: offset,
                    len: u32::try_from(run.len()).map_err(io::Error::other)?,
                    checksum: format::checksum8(&run),
                },
            )?;
            out.write_all(&run)?;
            offset += run.len() as u64;
            if offset > MAX_BYTES {
                return Err(io::Error::other("larger than the cache limit"));
            }
        }
        let (terms, block_index) = blocks.finish(&dictionary)?;
        header.terms = terms;
        header.blocks = terms.div_ceil(BLOCK_TERMS as u32);
        let mut at = HEADER_BYTES as u64;
        let mut section = |len: usize| {
            let place = (at, len as u64);
            at += len as u64;
            place
        };
        header.postings = section(offset as usize);
        header.key = section(self.key.len());
        header.docs_at = section(docs.len());
        header.block_index = section(block_index.len());
        header.dictionary = section(dictionary.len());
        header.file_len = at;
        if header.file_len > MAX_BYTES {
            return Err(io::Error::other("larger than the cache limit"));
        }
        for part in [self.key.as_bytes(), &docs, &block_index, &dictionary] {
            out.write_all(part)?;
        }
        out.flush()?;
        drop(out);
        let unsigned = format::write_header(&header);
        header.checksum = format::checksum16(&[
            &unsigned[..HEADER_BYTES - 16],
            self.key.as_bytes(),
            &docs,
            &block_index,
        ]);
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&format::write_header(&header))?;
        Ok(())
    }
}

/// The documents section as it grows: stored skills numbered in index
/// order (so every postings list stays in increasing order), with the
/// header's counts and length sums.
#[derive(Default)]
struct DocsWriter {
    header: Header,
    bytes: Vec<u8>,
}

impl DocsWriter {
    /// Adds the stored skills of `index` (those with stamps) and returns
    /// each of its documents' stored number, `None` for one not stored.
    fn add(&mut self, index: &SkillIndex, stamps: &Stamps) -> Vec<Option<u32>> {
        let mut numbers: Vec<Option<u32>> = Vec::new();
        for (doc, id, lens) in index.doc_entries() {
            let Some(stamps) = stamps.get(id) else {
                continue;
            };
            if numbers.len() <= doc as usize {
                numbers.resize(doc as usize + 1, None);
            }
            numbers[doc as usize] = Some(self.header.docs);
            self.header.docs += 1;
            for (sum, len) in self.header.len_sums.iter_mut().zip(lens) {
                *sum += u64::from(len);
            }
            format::write_doc(
                &mut self.bytes,
                &DocRecord {
                    id: id.clone(),
                    lens,
                    stamps: stamps.clone(),
                },
            );
        }
        numbers
    }
}

/// One run of a cold build in a scratch file: its terms in increasing
/// order, each with its postings already numbered as stored.
struct Run {
    reader: BufReader<File>,
    left: usize,
}

/// The term a run is at, with its postings as the file stores them.
struct RunHead {
    term: Box<str>,
    count: u32,
    postings: Vec<u8>,
}

impl Run {
    fn write(dir: &StateDir, part: &SkillIndex, numbers: &[Option<u32>]) -> io::Result<Run> {
        let mut terms: Vec<&str> = part.term_list().collect();
        terms.sort_unstable();
        let mut out = io::BufWriter::with_capacity(1 << 20, dir.scratch()?);
        let mut list = Vec::new();
        let mut postings = Vec::new();
        let mut left = 0;
        for term in terms {
            list.clear();
            list.extend(
                part.postings_of(term).filter_map(|(doc, tf)| {
                    Some((numbers.get(doc as usize).copied().flatten()?, tf))
                }),
            );
            if list.is_empty() || term.len() > MAX_STORED_TERM {
                continue;
            }
            postings.clear();
            format::write_postings(&mut postings, &list);
            for part in [term.len(), list.len(), postings.len()] {
                out.write_all(&(part as u64).to_le_bytes())?;
            }
            out.write_all(term.as_bytes())?;
            out.write_all(&postings)?;
            left += 1;
        }
        let mut file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.seek(SeekFrom::Start(0))?;
        Ok(Run {
            reader: BufReader::with_capacity(1 << 16, file),
            left,
        })
    }

    fn next(&mut self) -> io::Result<Option<RunHead>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let mut lens = [0usize; 3];
        for len in &mut lens {
            let mut word = [0u8; 8];
            self.reader.read_exact(&mut word)?;
            *len = to_usize(u64::from_le_bytes(word))?;
        }
        let [term_len, count, postings_len] = lens;
        let mut term = vec![0u8; term_len];
        self.reader.read_exact(&mut term)?;
        let mut postings = vec![0u8; postings_len];
        self.reader.read_exact(&mut postings)?;
        Ok(Some(RunHead {
            term: String::from_utf8(term).map_err(io::Error::other)?.into(),
            count: u32::try_from(count).map_err(io::Error::other)?,
            postings,
        }))
    }
}

/// The dictionary's blocks as they are written: the current block's term
/// entries, serialized, and the block index so far.
#[derive(Default)]
struct BlockWriter {
    terms: u32,
    first: Option<Box<str>>,
    start: usize,
    block_index: Vec<u8>,
}

impl BlockWriter {
    /// Appends `entry` to `dictionary`, closing the block when it is full.
    fn push(&mut self, dictionary: &mut Vec<u8>, entry: &TermEntry) -> io::Result<()> {
        if self.first.is_none() {
            self.first = Some(entry.term.clone());
            self.start = dictionary.len();
        }
        format::write_term_entry(dictionary, entry);
        self.terms += 1;
        if (self.terms as usize).is_multiple_of(BLOCK_TERMS) {
            self.close(dictionary)?;
        }
        Ok(())
    }

    fn close(&mut self, dictionary: &[u8]) -> io::Result<()> {
        let Some(first) = self.first.take() else {
            return Ok(());
        };
        let block = &dictionary[self.start..];
        format::write_block_entry(
            &mut self.block_index,
            &BlockEntry {
                first,
                at: self.start as u64,
                len: u32::try_from(block.len()).map_err(io::Error::other)?,
                checksum: format::checksum8(block),
            },
        );
        Ok(())
    }

    /// The number of terms and the block index, the last block closed.
    fn finish(mut self, dictionary: &[u8]) -> io::Result<(u32, Vec<u8>)> {
        self.close(dictionary)?;
        Ok((self.terms, self.block_index))
    }
}

/// A cache file opened and checked up to its dictionary.
struct Stored {
    file: File,
    header: Header,
    docs: Docs,
    blocks: Vec<BlockEntry>,
}

/// The stored documents: the bytes read (the key, the documents and the
/// block index), every record checked, and where each record starts.
/// A record is parsed again when asked for rather than held parsed: at
/// 60,000 skills the parsed records weighed three times their bytes.
struct Docs {
    bytes: Vec<u8>,
    starts: Vec<u32>,
}

impl Docs {
    fn len(&self) -> usize {
        self.starts.len()
    }

    /// The record numbered `at` (checked whole by `RoutingCache::open`).
    fn get(&self, at: usize) -> Option<DocView<'_>> {
        let start = *self.starts.get(at)? as usize;
        format::read_checked_doc(&mut format::Cursor::new(self.bytes.get(start..)?)).ok()
    }

    fn iter(&self) -> impl Iterator<Item = DocView<'_>> {
        (0..self.len()).filter_map(|at| self.get(at))
    }
}

/// What of a stored file a registry can use.
struct Plan<'r> {
    /// By stored document: its number in the index read back, if kept.
    numbers: Vec<Option<u32>>,
    /// The kept documents' stored numbers, in that numbering.
    kept: Vec<usize>,
    /// Skills whose entries do not hold (or that have none).
    stale: Vec<&'r Arc<SkillSummary>>,
    /// Skills whose entries could not vouch for them when written (a
    /// stamp inside the racy window, a body that could not be read) and
    /// whose stamps have not moved since: analyzed again, and written only
    /// when they vouch now, so an unreadable skill does not make every
    /// process rewrite the file.
    retry: Vec<&'r Arc<SkillSummary>>,
    /// Skills without a file, analyzed every time and never stored.
    unstamped: Vec<&'r Arc<SkillSummary>>,
    /// The file no longer says what the registry holds.
    rewrite: bool,
}

fn plan<'r>(
    stored: &Stored,
    registry: &'r SkillRegistry,
    confirmed: Option<&ConfirmedStamps<'_>>,
) -> Plan<'r> {
    let by_id: HashMap<&str, usize, rustc_hash::FxBuildHasher> = stored
        .docs
        .iter()
        .enumerate()
        .map(|(at, doc)| (doc.id, at))
        .collect();
    let skills: Vec<&Arc<SkillSummary>> = registry.shared_skills().collect();
    let verdicts = in_parallel(
        &skills,
        confirmed,
        &|skill: &&Arc<SkillSummary>, handles: &mut Handles| {
            if is_unstamped(skill) {
                return Verdict::Changed;
            }
            by_id
                .get(skill.manifest.id.as_str())
                .and_then(|at| stored.docs.get(*at))
                .map_or(Verdict::Changed, |doc| verdict(skill, &doc, handles))
        },
    );
    let mut keep = vec![false; stored.docs.len()];
    let mut retried = 0;
    let mut stale = Vec::new();
    let mut retry = Vec::new();
    let mut unstamped = Vec::new();
    for (skill, verdict) in skills.into_iter().zip(verdicts) {
        let at = by_id.get(skill.manifest.id.as_str());
        match (verdict, at) {
            _ if is_unstamped(skill) => unstamped.push(skill),
            (Verdict::Holds, Some(at)) => keep[*at] = true,
            (Verdict::Retry, Some(_)) => {
                retried += 1;
                retry.push(skill);
            }
            _ => stale.push(skill),
        }
    }
    let mut numbers = vec![None; stored.docs.len()];
    let mut kept = Vec::new();
    for (at, keep) in keep.into_iter().enumerate() {
        if keep {
            numbers[at] = Some(kept.len() as u32);
            kept.push(at);
        }
    }
    let rewrite = !stale.is_empty() || kept.len() + retried != stored.docs.len();
    Plan {
        numbers,
        kept,
        stale,
        retry,
        unstamped,
        rewrite,
    }
}

/// Whether a skill has no file of its own to stamp (an MCP server's).
fn is_unstamped(skill: &SkillSummary) -> bool {
    skill.layout == SkillLayout::Provided || skill.source.provider.is_some()
}

/// What a stored entry says of a skill now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// It vouched when written, for the same instruction file, and every
    /// stamp answers the same now: the entry is the skill's.
    Holds,
    /// The same, except that it could not vouch when written.
    Retry,
    /// Another file, or a stamp moved.
    Changed,
}

fn verdict(skill: &SkillSummary, doc: &DocView<'_>, handles: &mut Handles<'_>) -> Verdict {
    let same = doc.location == path_hash(&skill.location)
        && current_digest(skill, doc.folders(), handles)
            .is_some_and(|(digest, _)| digest == doc.digest);
    match (same, doc.trusted) {
        (true, true) => Verdict::Holds,
        (true, false) => Verdict::Retry,
        (false, _) => Verdict::Changed,
    }
}

/// The digest of the stamps of `skill`'s instruction file and of
/// `folders` (relative to its folder), and the latest of their changes;
/// `None` when one cannot be taken.
fn current_digest<'f>(
    skill: &SkillSummary,
    folders: impl Iterator<Item = &'f str>,
    handles: &mut Handles<'_>,
) -> Option<([u8; 16], Vec<FileStamp>)> {
    let directory = skill.directory();
    let mut stamps = Vec::with_capacity(2);
    stamps.push(handles.stamp(&skill.location)?);
    for folder in folders {
        let relative = Path::new(folder);
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        {
            return None;
        }
        stamps.push(handles.stamp(&directory.join(relative))?);
    }
    let mut bytes = Vec::with_capacity(stamps.len() * 56);
    for stamp in &stamps {
        for number in [
            stamp.len,
            stamp.modified.0 as u64,
            stamp.modified.1 as u64,
            stamp.changed.0 as u64,
            stamp.changed.1 as u64,
            stamp.dev,
            stamp.ino,
        ] {
            bytes.extend_from_slice(&number.to_le_bytes());
        }
    }
    Some((format::checksum16(&[&bytes]), stamps))
}

fn path_hash(path: &Path) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    path.as_os_str().as_encoded_bytes().hash(&mut hasher);
    hasher.finish()
}

/// Analyzes `skills` (in this order) on worker threads: an index of them
/// (of `query`'s terms only, with one) and the stamps of those with files.
fn analyze(
    registry: &SkillRegistry,
    skills: &[&Arc<SkillSummary>],
    window: Duration,
    query: Option<&str>,
) -> (SkillIndex, Stamps) {
    // Taken before anything is read: a change made while analyzing is
    // after it, so inside the racy window, and the entry is not trusted.
    let now = SystemTime::now();
    let fresh = || match query {
        Some(query) => SkillIndex::for_query(query),
        None => SkillIndex::new(),
    };
    let run = |batch: &[&Arc<SkillSummary>], normalizer: &mut Normalizer, codes: &mut WordCodes| {
        codes.next_index();
        let mut index = fresh();
        let mut stamps = Stamps::new();
        let mut handles = Handles::default();
        for skill in batch {
            let taken = analyze_one(
                &mut index,
                registry,
                skill,
                (normalizer, codes),
                &mut handles,
            );
            if let Some(taken) = taken.map(|(taken, stamps)| vouch(taken, &stamps, now, window)) {
                stamps.insert(skill.manifest.id.clone(), taken);
            }
        }
        (index, stamps)
    };
    let batches: Vec<&[&Arc<SkillSummary>]> = skills.chunks(BATCH).collect();
    let threads = bcode_fs::worker_threads().min(batches.len()).max(1);
    let mut parts: Vec<(usize, (SkillIndex, Stamps))> = if threads == 1 {
        let mut normalizer = Normalizer::new();
        let mut codes = WordCodes::new();
        batches
            .iter()
            .enumerate()
            .map(|(at, batch)| (at, run(batch, &mut normalizer, &mut codes)))
            .collect()
    } else {
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut normalizer = Normalizer::new();
                        let mut codes = WordCodes::new();
                        let mut done = Vec::new();
                        loop {
                            let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(batch) = batches.get(at) else { break };
                            done.push((at, run(batch, &mut normalizer, &mut codes)));
                        }
                        done
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|worker| worker.join().unwrap_or_default())
                .collect()
        })
    };
    parts.sort_by_key(|(at, _)| *at);
    let mut whole = fresh();
    let mut stamps = Stamps::new();
    for (_, (index, taken)) in parts {
        whole.append(index);
        stamps.extend(taken);
    }
    (whole, stamps)
}

/// Indexes one skill (its body when it has a file: an unreadable one is
/// indexed without, and not trusted) and returns its stamps, taken after
/// the reads, with the stamps their digest is of.
fn analyze_one(
    index: &mut SkillIndex,
    registry: &SkillRegistry,
    skill: &SkillSummary,
    (normalizer, codes): (&mut Normalizer, &mut WordCodes),
    handles: &mut Handles<'_>,
) -> Option<(DocStamps, Vec<FileStamp>)> {
    if is_unstamped(skill) {
        let text = SkillText::of(skill, None, &[]);
        index.insert_remembering(skill.manifest.id.clone(), &text, normalizer, codes);
        return None;
    }
    let body = registry.body(skill).ok();
    let (files, mut folders) = match skill.layout {
        SkillLayout::Flat => (Vec::new(), Vec::new()),
        _ => other_files_and_folders(skill),
    };
    let text = SkillText::of(skill, body.as_deref(), &files);
    index.insert_remembering(skill.manifest.id.clone(), &text, normalizer, codes);
    let trusted = body.is_some() && folders.len() <= format::MAX_FOLDERS;
    folders.truncate(format::MAX_FOLDERS);
    let (digest, stamps) =
        current_digest(skill, folders.iter().map(String::as_str), handles).unzip();
    Some((
        DocStamps {
            trusted: trusted && digest.is_some(),
            location: path_hash(&skill.location),
            folders,
            digest: digest.unwrap_or([0; 16]),
        },
        stamps.unwrap_or_default(),
    ))
}

/// `taken`, trusted only if none of `stamps` (those its digest is of) is
/// inside the racy window before `now`.
fn vouch(
    mut taken: DocStamps,
    stamps: &[FileStamp],
    now: SystemTime,
    window: Duration,
) -> DocStamps {
    taken.trusted &= stamps
        .iter()
        .all(|stamp| bcode_fs::vouches(stamp, now, window));
    taken
}

/// Handles on the folders that hold skills' folders, so a stamp is one
/// `statx` relative to a held folder rather than a walk of the whole path
/// (at 60,000 skills the path walks were most of a warm search). A worker
/// holds a few at a time; a skill under none of them is stamped by path.
/// With `confirmed`, a path the discovery just confirmed is answered from
/// there.
#[derive(Default)]
struct Handles<'c> {
    open: Vec<bcode_fs::DirHandle>,
    confirmed: Option<&'c ConfirmedStamps<'c>>,
}

/// Folders a worker keeps open at once.
const MAX_HANDLES: usize = 16;

impl Handles<'_> {
    /// The stamp of `path` (a symlink followed, as `std::fs::metadata`).
    fn stamp(&mut self, path: &Path) -> Option<FileStamp> {
        if let Some(stamp) = self.confirmed.and_then(|c| c.followed(path)) {
            return Some(stamp);
        }
        // Below the folder that holds the skill's folder: the skill's file
        // and folders are a component or two from there.
        let held = self
            .open
            .iter()
            .find_map(|dir| Some((dir, bcode_fs::below(path, dir.path())?)));
        if let Some((dir, relative)) = held {
            return dir.stamp(relative, true).ok();
        }
        let holder = path.parent().and_then(Path::parent);
        if let Some(holder) = holder.filter(|h| !h.as_os_str().is_empty())
            && let Ok(dir) = bcode_fs::DirHandle::open(holder)
        {
            let stamp = bcode_fs::below(path, holder).map(|relative| dir.stamp(relative, true));
            if self.open.len() == MAX_HANDLES {
                self.open.remove(0);
            }
            self.open.push(dir);
            if let Some(stamp) = stamp {
                return stamp.ok();
            }
        }
        bcode_fs::stamp_of(path)
    }
}

/// `check` of each item, on worker threads for many.
fn in_parallel<T: Sync>(
    items: &[T],
    confirmed: Option<&ConfirmedStamps<'_>>,
    check: &(dyn Fn(&T, &mut Handles<'_>) -> Verdict + Sync),
) -> Vec<Verdict> {
    let threads = bcode_fs::worker_threads().min(items.len() / 1024).max(1);
    let check_all = |chunk: &[T]| {
        let mut handles = Handles {
            open: Vec::new(),
            confirmed,
        };
        chunk
            .iter()
            .map(|item| check(item, &mut handles))
            .collect::<Vec<Verdict>>()
    };
    if threads == 1 {
        return check_all(items);
    }
    let size = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(size)
            .map(|chunk| scope.spawn(move || check_all(chunk)))
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| {
                // A worker that died answers "changed" for its part.
                worker
                    .join()
                    .unwrap_or_else(|_| vec![Verdict::Changed; size])
            })
            .take(items.len())
            .collect()
    })
}

/// The documents `plan` keeps numbered `at`, with their ids and lengths.
fn kept_docs(
    stored: &Stored,
    plan: &Plan<'_>,
    at: impl Iterator<Item = usize>,
) -> io::Result<Vec<(SkillId, [u32; FIELDS])>> {
    at.map(|at| {
        let doc = plan
            .kept
            .get(at)
            .and_then(|stored_at| stored.docs.get(*stored_at))
            .ok_or_else(|| bad("a document out of range"))?;
        let id = SkillId::parse(doc.id).map_err(|_| bad("a bad skill id"))?;
        Ok((id, doc.lens))
    })
    .collect()
}

/// The whole index the file holds, without the entries `plan` drops, and
/// the stamps of those it keeps.
fn load_full(stored: &Stored, plan: &Plan<'_>) -> io::Result<(SkillIndex, Stamps)> {
    let header = &stored.header;
    let docs = kept_docs(stored, plan, 0..plan.kept.len())?;
    let stamps: Stamps = docs
        .iter()
        .zip(&plan.kept)
        .filter_map(|((id, _), at)| Some((id.clone(), stored.docs.get(*at)?.stamps())))
        .collect();
    let mut index = SkillIndex::from_docs(docs);
    let mut file = &stored.file;
    file.seek(SeekFrom::Start(header.postings.0))?;
    let mut postings = BufReader::with_capacity(1 << 20, file.take(header.postings.1));
    let mut expected = 0u64;
    let mut terms = 0u64;
    let mut run = Vec::new();
    let mut last: Option<Box<str>> = None;
    for block in &stored.blocks {
        for entry in read_block(stored, block)? {
            if entry.at != expected || last.as_ref().is_some_and(|last| *last >= entry.term) {
                return Err(bad("the dictionary is out of order"));
            }
            run.resize(entry.len as usize, 0);
            postings.read_exact(&mut run)?;
            expected += u64::from(entry.len);
            terms += 1;
            if format::checksum8(&run) != entry.checksum {
                return Err(bad("a checksum does not match"));
            }
            let list = format::read_postings(&run, entry.count, header.docs)?;
            index.push_term(
                entry.term.clone(),
                list.into_iter().filter_map(|(doc, tf)| {
                    Some((plan.numbers.get(doc as usize).copied().flatten()?, tf))
                }),
            );
            last = Some(entry.term);
        }
    }
    if expected != header.postings.1 || terms != u64::from(header.terms) {
        return Err(bad("the dictionary does not cover the postings"));
    }
    Ok((index, stamps))
}

/// An index of the entries `plan` keeps holding only `query`'s terms:
/// one block and one postings run read per term.
fn load_query(stored: &Stored, plan: &Plan<'_>, query: &str) -> io::Result<SkillIndex> {
    let header = &stored.header;
    let mut wanted: BTreeSet<Box<str>> = BTreeSet::new();
    let mut normalizer = Normalizer::new();
    for_each_term(query, &mut normalizer, &mut |term| {
        if !wanted.contains(term) {
            wanted.insert(term.into());
        }
    });
    let mut lists: Vec<(Box<str>, Postings)> = Vec::new();
    // Terms are sorted, so each block is read once.
    let mut current: Option<(usize, Vec<TermEntry>)> = None;
    for term in wanted {
        let at = stored.blocks.partition_point(|b| *b.first <= *term);
        let Some(block_at) = at.checked_sub(1) else {
            continue;
        };
        if current.as_ref().is_none_or(|(at, _)| *at != block_at) {
            let Some(block) = stored.blocks.get(block_at) else {
                continue;
            };
            current = Some((block_at, read_block(stored, block)?));
        }
        let Some((_, entries)) = &current else {
            continue;
        };
        let Ok(found) = entries.binary_search_by(|e| (*e.term).cmp(&*term)) else {
            continue;
        };
        let entry = &entries[found];
        let end = entry.at.checked_add(u64::from(entry.len));
        if end.is_none_or(|end| end > header.postings.1) {
            return Err(bad("postings out of place"));
        }
        let run = read_at(
            &stored.file,
            header.postings.0 + entry.at,
            entry.len as usize,
        )?;
        if format::checksum8(&run) != entry.checksum {
            return Err(bad("a checksum does not match"));
        }
        let list = format::read_postings(&run, entry.count, header.docs)?;
        lists.push((
            term,
            list.into_iter()
                .filter_map(|(doc, tf)| {
                    Some((plan.numbers.get(doc as usize).copied().flatten()?, tf))
                })
                .collect(),
        ));
    }
    // Only the documents a query term names are held; the others count
    // in the number of documents and the lengths, as in a whole index.
    let mut touched: Vec<u32> = lists
        .iter()
        .flat_map(|(_, list)| list.iter().map(|(doc, _)| *doc))
        .collect();
    touched.sort_unstable();
    touched.dedup();
    let docs = kept_docs(stored, plan, touched.iter().map(|at| *at as usize))?;
    let mut absent_lens = [0u64; FIELDS];
    for doc in plan.kept.iter().filter_map(|at| stored.docs.get(*at)) {
        for (sum, len) in absent_lens.iter_mut().zip(doc.lens) {
            *sum += u64::from(len);
        }
    }
    for (_, lens) in &docs {
        for (sum, len) in absent_lens.iter_mut().zip(lens) {
            *sum = sum.saturating_sub(u64::from(*len));
        }
    }
    let mut index = SkillIndex::from_touched(
        docs,
        plan.kept.len().saturating_sub(touched.len()),
        absent_lens,
    );
    for (term, list) in lists {
        index.push_term(
            term,
            list.into_iter().filter_map(|(doc, tf)| {
                Some((u32::try_from(touched.binary_search(&doc).ok()?).ok()?, tf))
            }),
        );
    }
    Ok(index)
}

/// The terms of one dictionary block, checked: its checksum, sorted
/// terms, at most [`BLOCK_TERMS`] of them, the first the index's.
fn read_block(stored: &Stored, block: &BlockEntry) -> io::Result<Vec<TermEntry>> {
    let bytes = read_at(
        &stored.file,
        stored.header.dictionary.0 + block.at,
        block.len as usize,
    )?;
    if format::checksum8(&bytes) != block.checksum {
        return Err(bad("a checksum does not match"));
    }
    let mut cursor = format::Cursor::new(&bytes);
    let mut entries: Vec<TermEntry> = Vec::new();
    while !cursor.is_done() && entries.len() < BLOCK_TERMS {
        let entry = format::read_term_entry(&mut cursor)?;
        if entries.last().is_some_and(|last| last.term >= entry.term) {
            return Err(bad("a block out of order"));
        }
        entries.push(entry);
    }
    if !cursor.is_done()
        || entries
            .first()
            .is_none_or(|first| first.term != block.first)
    {
        return Err(bad("a block does not match its index"));
    }
    Ok(entries)
}

/// `len` bytes at `at`: the caller has checked them against the file's
/// length, which is bounded.
fn read_at(file: &File, at: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut bytes = vec![0u8; len];
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(&mut bytes, at)?;
    }
    #[cfg(not(unix))]
    {
        let mut file = file;
        file.seek(SeekFrom::Start(at))?;
        file.read_exact(&mut bytes)?;
    }
    Ok(bytes)
}

fn to_usize(len: u64) -> io::Result<usize> {
    usize::try_from(len).map_err(|_| bad("a section too long"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A stamp taken relative to a held folder is the one
    /// `std::fs::metadata` of the whole path gives, through links too,
    /// and a missing entry has none; more holders than are kept open
    /// still answer right.
    #[test]
    fn stamps_through_held_folders_are_those_of_whole_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let mut paths = Vec::new();
        for i in 0..MAX_HANDLES + 3 {
            let skill = root.join(format!("root-{i}/skill"));
            std::fs::create_dir_all(skill.join("scripts")).unwrap();
            std::fs::write(skill.join("SKILL.md"), format!("body {i}")).unwrap();
            paths.push(skill.join("SKILL.md"));
            paths.push(skill.join("scripts"));
            paths.push(skill.clone());
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.join("root-0/skill"), root.join("root-1/linked"))
                .unwrap();
            paths.push(root.join("root-1/linked/SKILL.md"));
            paths.push(root.join("root-1/linked/scripts"));
        }
        let mut handles = Handles::default();
        // Twice over, in turning order: held folders are found again and
        // replaced as more are opened.
        for _ in 0..2 {
            for path in &paths {
                let expected = FileStamp::of(&std::fs::metadata(path).unwrap());
                assert_eq!(handles.stamp(path), Some(expected), "{}", path.display());
            }
        }
        assert_eq!(handles.open.len(), MAX_HANDLES);
        assert_eq!(handles.stamp(&root.join("root-0/skill/gone.md")), None);
        assert_eq!(handles.stamp(&root.join("nowhere/skill/SKILL.md")), None);
    }

    /// After a discovery its stamps confirmed, each skill's file (a link
    /// followed) and its folder answer from the confirmation exactly as
    /// `std::fs::metadata` does; a path the snapshot does not hold (a
    /// skill's other folder) is not answered from there.
    #[cfg(unix)]
    #[test]
    fn confirmed_stamps_are_those_of_whole_paths() {
        use bcode_skill_models::{SkillSource, SourceKind};
        let tmp = tempfile::tempdir().unwrap();
        let skills = tmp.path().join("skills");
        let elsewhere = tmp.path().join("elsewhere");
        let skill = |name: &str| format!("---\nname: {name}\ndescription: D.\n---\nbody\n");
        for (path, text) in [
            (skills.join("plain/SKILL.md"), skill("plain")),
            (skills.join("plain/scripts/run.sh"), "x".to_owned()),
            (elsewhere.join("linked/SKILL.md"), skill("linked")),
            (elsewhere.join("file.md"), skill("file-linked")),
        ] {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::os::unix::fs::symlink(elsewhere.join("linked"), skills.join("linked")).unwrap();
        std::fs::create_dir(skills.join("file-linked")).unwrap();
        std::os::unix::fs::symlink(
            elsewhere.join("file.md"),
            skills.join("file-linked/SKILL.md"),
        )
        .unwrap();
        let roots = [SourceRoot {
            source: SkillSource {
                kind: SourceKind::UserConfig,
                label: "user-config:skills".into(),
                ordinal: 0,
                root: None,
                provider: None,
            },
            path: skills.clone(),
            repository: None,
            owner_check: None,
        }];
        let mut options =
            DiscoveryOptions::from_config(&bcode_prompt_config::SkillsConfig::default());
        options.walk.racy_window = Duration::ZERO;
        let cache = crate::DiskCache::new(tmp.path().join("cache"));
        let mut first = crate::Discovery::new(options.clone()).with_disk_cache(cache.clone());
        first.build(&roots);
        assert!(first.confirmed_stamps().is_none());
        let mut second = crate::Discovery::new(options).with_disk_cache(cache);
        let registry = second.build(&roots);
        assert_eq!(registry.len(), 3);
        let confirmed = second.confirmed_stamps().unwrap();
        let whole = |path: &Path| FileStamp::of(&std::fs::metadata(path).unwrap());
        for skill in registry.skills() {
            let file = &skill.location;
            assert_eq!(
                confirmed.followed(file),
                Some(whole(file)),
                "{}",
                file.display()
            );
            let folder = skill.directory();
            if let Some(stamp) = confirmed.followed(folder) {
                assert_eq!(stamp, whole(folder), "{}", folder.display());
            }
        }
        // The linked file's stamp is its target's, not the link's.
        let link = skills.join("file-linked/SKILL.md");
        let own = FileStamp::of(&std::fs::symlink_metadata(&link).unwrap());
        assert_ne!(confirmed.followed(&link), Some(own));
        assert_eq!(confirmed.followed(&skills.join("plain/scripts")), None);
    }
}
