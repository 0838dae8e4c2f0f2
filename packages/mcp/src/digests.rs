//! The digest cache: each served skill's entry (its front matter as
//! written, every file with its `sha256:` digest, and the stamps of every
//! folder listed and file read), by instruction file, kept in the state
//! folder (`cache/mcp-server/digests.jsonl`; what this program fetches as a
//! client is in `cache/mcp/`), so a server started again lists a skill
//! whose stamps all answer as recorded without listing its folder or
//! reading a file. An entry read while a stamp was inside the racy window
//! (the file may change again within its clock tick) is never kept, and the
//! cache only ever saves reading: `resources/read` always reads the file.
//!
//! The same holding place carries entries across a registry swap: the
//! server hands the entries it built back before serving the new registry,
//! so a skill that did not change is not read again.
//!
//! Entries are held as lines, not values ([`StoredEntry`]): the file read
//! at start stays open and is indexed by where each line is, entries read
//! this run go to a nameless scratch file in the same folder, and a request
//! parses the lines it needs. A save copies lines as they are.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use bcode_fs::{FileStamp, RACY_WINDOW, StateDir};
use rmcp::model::Skill;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::entry::{ServedEntry, ServedFile, StampLooker};

/// The cache file, below `<state>/cache/mcp-server/`.
const FILE: &str = "digests.jsonl";

/// Bumped when what a line means changes (how front matter is read, for
/// one): lines of another format are not used.
const FORMAT: u64 = 2;

/// A cache file larger than this is not read (and is rewritten).
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Where a served skill's entry is kept between the requests that need it:
/// as its line, in the cache file read at start or in this run's scratch
/// file (10,000 entries held as values would cost the server as much memory
/// again as the registry it serves), or in memory when there is no state
/// folder to write to, or the entry was read inside the racy window (which
/// no file keeps). [`DigestCache::load`] makes the entry again.
#[derive(Clone, Debug)]
pub enum StoredEntry {
    /// A line of one of the cache's files.
    Line(LineAt),
    /// The entry itself.
    Memory(Arc<ServedEntry>),
}

impl StoredEntry {
    /// Whether a later run may trust the entry's stamps (a line is only
    /// ever written for a settled entry).
    pub fn settled(&self) -> bool {
        match self {
            StoredEntry::Line(_) => true,
            StoredEntry::Memory(entry) => entry.settled(),
        }
    }
}

/// Where a line is: which file, from which byte, how long (without its
/// newline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineAt {
    scratch: bool,
    offset: u64,
    len: u32,
}

/// The most bytes [`DigestCache::skills`] reads at once: a page of 100
/// skills' lines is typically 80-100 KB.
const MAX_SPAN_BYTES: u64 = 1 << 20;

/// Lines further apart than this are read apart: a read of what lies
/// between would cost more than a read of its own.
const MAX_GAP: u64 = 4096;

/// Lines of one cache file read together (see [`DigestCache::skills`]).
struct Span {
    scratch: bool,
    start: u64,
    bytes: Vec<u8>,
}

/// Runs of lines read together, by file and offset.
#[derive(Default)]
struct Spans {
    runs: Vec<Span>,
}

impl Spans {
    /// The line at `at`, when a run holds it.
    fn line(&self, at: LineAt) -> Option<&[u8]> {
        let after = self
            .runs
            .partition_point(|run| (run.scratch, run.start) <= (at.scratch, at.offset));
        let run = self.runs.get(after.checked_sub(1)?)?;
        if run.scratch != at.scratch {
            return None;
        }
        let from = usize::try_from(at.offset - run.start).ok()?;
        run.bytes.get(from..from.checked_add(at.len as usize)?)
    }
}

/// Entries by instruction file, loaded once and written back, when
/// anything changed, with what the server serves.
#[derive(Debug)]
pub struct DigestCache {
    dir: Option<StateDir>,
    /// Whether the cache file is read and written; without, `dir` only
    /// holds the scratch file (see [`DigestCache::scratch_in`]).
    persist: bool,
    /// The file's entries, indexed on first use (off a server's start: the
    /// first entry built reads them).
    held: OnceLock<Held>,
    /// A skill was read this run (new, or a stamp moved).
    read: AtomicBool,
    /// Stamps changed this recently are not trusted.
    racy_window: Duration,
}

impl Default for DigestCache {
    fn default() -> DigestCache {
        DigestCache {
            dir: None,
            persist: false,
            held: OnceLock::new(),
            read: AtomicBool::new(false),
            racy_window: RACY_WINDOW,
        }
    }
}

/// The entries held, by instruction file, and the files their lines are in.
#[derive(Debug, Default)]
struct Held {
    /// The cache file as it was at first use, kept open: its lines are read
    /// where they are (a save renames another file over its name, which
    /// leaves this one readable).
    file: Option<File>,
    /// This run's lines, one after the other; made on first need.
    scratch: OnceLock<Option<File>>,
    /// How many bytes the scratch file holds (new lines go after them).
    scratch_len: AtomicU64,
    /// Keyed by the path as text: hashing and comparing a `Path` goes
    /// component by component, which showed in profiles at 13,000 files.
    entries: Mutex<HashMap<String, StoredEntry>>,
    /// How many entries the file held when read.
    loaded: usize,
}

impl DigestCache {
    /// A cache that keeps nothing on disk (no state folder, or it was
    /// refused); it still carries entries across a registry swap, in
    /// memory.
    pub fn none() -> DigestCache {
        DigestCache::default()
    }

    /// The cache in `dir` (the state folder's `cache/mcp-server`, opened
    /// by the caller), read when first used. A damaged line costs only
    /// itself.
    pub fn open(dir: StateDir) -> DigestCache {
        DigestCache {
            persist: true,
            ..DigestCache::scratch_in(dir)
        }
    }

    /// A cache that reads and writes no cache file, but holds this run's
    /// entries as lines of a scratch file in `dir` (nameless, gone when
    /// the server ends) rather than in memory: what a server runs with when
    /// the disk cache is off.
    pub fn scratch_in(dir: StateDir) -> DigestCache {
        DigestCache {
            dir: Some(dir),
            ..DigestCache::default()
        }
    }

    /// This cache with another racy window than [`RACY_WINDOW`]: the
    /// operator's or a test's choice (tests shorten it instead of waiting),
    /// never a repository's.
    pub fn with_racy_window(mut self, window: Duration) -> DigestCache {
        self.racy_window = window;
        self
    }

    /// The racy window entries are built and checked with.
    pub fn racy_window(&self) -> Duration {
        self.racy_window
    }

    /// The held entries: on first use, where each line of the cache file
    /// is, by its instruction file (one pass over the file, one line in
    /// memory at a time; a line is parsed only when its skill asks).
    fn held(&self) -> &Held {
        self.held.get_or_init(|| {
            let mut entries = HashMap::new();
            let mut kept = None;
            if let Some(dir) = self.dir.as_ref().filter(|_| self.persist)
                && let Ok((file, len)) = dir.open_file(FILE)
                && len <= MAX_FILE_BYTES
            {
                let prefix = format!(r#"{{"v":{FORMAT},"p":"#);
                let mut lines = BufReader::new(&file);
                let (mut line, mut offset) = (Vec::new(), 0u64);
                while let Ok(read) = lines.read_until(b'\n', &mut line) {
                    if read == 0 {
                        break;
                    }
                    let text = line.strip_suffix(b"\n").unwrap_or(&line);
                    if let Some(path) = path_of(text, prefix.as_bytes())
                        && let Ok(len) = u32::try_from(text.len())
                    {
                        let at = LineAt {
                            scratch: false,
                            offset,
                            len,
                        };
                        entries.insert(path, StoredEntry::Line(at));
                    }
                    offset += read as u64;
                    line.clear();
                }
                kept = Some(file);
            }
            Held {
                file: kept,
                loaded: entries.len(),
                entries: Mutex::new(entries),
                ..Held::default()
            }
        })
    }

    /// How many entries the cache file held when it was read (on first
    /// use: this reads it). None: a cold start, whose every entry is read
    /// from its files, which a recording discovery can spare a second read
    /// of each instruction file (see [`crate::SkillServer::with_records`]).
    pub fn kept(&self) -> usize {
        self.held().loaded
    }

    /// The entry held for the skill whose instruction file is `location`,
    /// taken out (the caller loads it and checks it still holds).
    pub fn take(&self, location: &Path) -> Option<StoredEntry> {
        let location = location.to_str()?;
        self.lock().remove(location)
    }

    /// Holds `entry` for the skill at `location` until a build takes it
    /// (a registry swap hands back what the old registry's skills built).
    pub fn hold(&self, location: &Path, entry: StoredEntry) {
        if let Some(location) = location.to_str() {
            self.lock().insert(location.to_owned(), entry);
        }
    }

    /// The entry `stored` keeps; `None` when its line cannot be read back
    /// or no longer reads as an entry (then the skill is read again).
    pub fn load(&self, stored: &StoredEntry) -> Option<Arc<ServedEntry>> {
        match stored {
            StoredEntry::Memory(entry) => Some(Arc::clone(entry)),
            StoredEntry::Line(at) => {
                let line = self.line(*at)?;
                let text = std::str::from_utf8(&line).ok()?;
                parse_line(text).map(|(_, entry)| Arc::new(entry))
            }
        }
    }

    /// Whether the entry `stored` keeps is still the entry of the skill
    /// `id` served from `folder`: every stamp it recorded still answers
    /// (through `looker`, relative to the folder that holds the skill's),
    /// and with `racy_window`, none is inside that window (a file changed
    /// again within its clock tick could keep its stamp); then the listing
    /// and every digest still hold, and nothing is read. `confirmed` is the
    /// instruction file's stamp when discovery has just confirmed it. A
    /// line is read for its stamps alone, borrowed, not made into an entry
    /// (most of a warm start is this check), but checked as [`Self::load`]
    /// checks it, so a line that holds also answers a page.
    pub fn holds(
        &self,
        stored: &StoredEntry,
        id: &str,
        folder: &Path,
        looker: &mut StampLooker,
        racy_window: Option<Duration>,
        confirmed: Option<&FileStamp>,
    ) -> bool {
        let racy = racy_window.map(|window| (std::time::SystemTime::now(), window));
        match stored {
            StoredEntry::Memory(entry) => {
                entry.id == id
                    && entry.folder == folder
                    && crate::entry::stamps_answer(
                        looker,
                        folder,
                        entry.recorded(),
                        racy,
                        confirmed,
                    )
            }
            StoredEntry::Line(at) => self.line(*at).is_some_and(|line| {
                let Some(stamps) = LineStamps::read(&line) else {
                    return false;
                };
                stamps.id == id
                    && Path::new(&*stamps.dir) == folder
                    && crate::entry::stamps_answer(
                        looker,
                        folder,
                        stamps.recorded(),
                        racy,
                        confirmed,
                    )
            }),
        }
    }

    /// The SEP-2640 entry `stored` keeps, as `skills/list` sends it: from a
    /// line, one parse of only what the entry sends. `None` when the line
    /// cannot be read back or does not read as an entry.
    pub fn skill(&self, stored: &StoredEntry) -> Option<Skill> {
        match stored {
            StoredEntry::Memory(entry) => entry.skill(),
            StoredEntry::Line(at) => skill_of_line(&self.line(*at)?),
        }
    }

    /// [`DigestCache::skill`] of each of `stored`, in order, reading the
    /// lines of one file that lie close together (a page of a listing:
    /// the file is sorted by instruction file, the listing by id, mostly
    /// the same order) with one read of each run of them, instead of a
    /// read each.
    pub fn skills(&self, stored: &[&StoredEntry]) -> Vec<Option<Skill>> {
        let lines: Vec<LineAt> = stored
            .iter()
            .filter_map(|entry| match entry {
                StoredEntry::Line(at) => Some(*at),
                StoredEntry::Memory(_) => None,
            })
            .collect();
        let spans = self.spans_of(lines);
        stored
            .iter()
            .map(|entry| {
                let read = match entry {
                    StoredEntry::Line(at) => spans.line(*at),
                    StoredEntry::Memory(_) => None,
                };
                match read {
                    Some(line) => skill_of_line(line),
                    None => self.skill(entry),
                }
            })
            .collect()
    }

    /// `lines` read in runs: lines of one file no more than [`MAX_GAP`]
    /// bytes apart, at most [`MAX_SPAN_BYTES`] a run, each run read at
    /// once. A run of one line is left to be read alone; a run that cannot
    /// be read is left out (its lines are then read alone).
    fn spans_of(&self, mut lines: Vec<LineAt>) -> Spans {
        lines.sort_by_key(|at| (at.scratch, at.offset));
        let mut spans = Spans::default();
        let mut run: Option<(LineAt, u64, usize)> = None;
        let held = self.held();
        let mut read = |first: LineAt, end: u64, count: usize| {
            if count < 2 {
                return;
            }
            let file = if first.scratch {
                held.scratch.get().and_then(Option::as_ref)
            } else {
                held.file.as_ref()
            };
            let Some(file) = file else {
                return;
            };
            let Ok(len) = usize::try_from(end - first.offset) else {
                return;
            };
            let mut bytes = vec![0; len];
            if read_at(file, &mut bytes, first.offset).is_ok() {
                spans.runs.push(Span {
                    scratch: first.scratch,
                    start: first.offset,
                    bytes,
                });
            }
        };
        for at in lines {
            let end = at.offset + u64::from(at.len);
            run = match run {
                Some((first, run_end, count))
                    if first.scratch == at.scratch
                        && at.offset <= run_end + MAX_GAP
                        && end - first.offset <= MAX_SPAN_BYTES =>
                {
                    Some((first, run_end.max(end), count + 1))
                }
                done => {
                    if let Some((first, run_end, count)) = done {
                        read(first, run_end, count);
                    }
                    Some((at, end, 1))
                }
            };
        }
        if let Some((first, run_end, count)) = run {
            read(first, run_end, count);
        }
        spans
    }

    /// Keeps `entry`, the skill at `location` just read: as a line of the
    /// scratch file when it is settled and there is one, else in memory.
    pub fn keep(&self, location: &Path, entry: Arc<ServedEntry>) -> StoredEntry {
        if entry.settled()
            && let Some(location) = location.to_str()
            && let Some(line) = line_of(location, &entry)
            && let Some(at) = self.append(line.as_bytes())
        {
            return StoredEntry::Line(at);
        }
        StoredEntry::Memory(entry)
    }

    /// Notes that a skill's files were read: the file is written at the
    /// next save.
    pub fn note_read(&self) {
        self.read.store(true, Ordering::Relaxed);
    }

    /// Writes `entries` (what is served now, by instruction file; a
    /// vanished skill drops out) when a skill was read or one dropped out,
    /// through a temporary file renamed into place: a line already in a
    /// file is copied as it is. Entries read inside the racy window are
    /// left out. Failing to write only costs the next start its reads.
    pub fn save<'a>(&self, entries: impl IntoIterator<Item = (&'a Path, &'a StoredEntry)>) {
        let Some(dir) = self.dir.as_ref().filter(|_| self.persist) else {
            return;
        };
        let mut settled: Vec<(&str, &StoredEntry)> = entries
            .into_iter()
            .filter(|(_, entry)| entry.settled())
            .filter_map(|(location, entry)| Some((location.to_str()?, entry)))
            .collect();
        if settled.is_empty()
            || (!self.read.load(Ordering::Relaxed) && settled.len() == self.held().loaded)
        {
            return;
        }
        settled.sort_by(|a, b| a.0.cmp(b.0));
        let written = dir.replace(FILE, &mut |file| {
            let mut out = std::io::BufWriter::new(file);
            for (location, entry) in &settled {
                let line = match entry {
                    StoredEntry::Line(at) => self.line(*at),
                    StoredEntry::Memory(entry) => line_of(location, entry).map(String::into_bytes),
                };
                if let Some(line) = line {
                    out.write_all(&line)?;
                    out.write_all(b"\n")?;
                }
            }
            out.flush()
        });
        if written.is_ok() {
            self.read.store(false, Ordering::Relaxed);
        }
    }

    /// The bytes of the line at `at`.
    fn line(&self, at: LineAt) -> Option<Vec<u8>> {
        let held = self.held();
        let file = if at.scratch {
            held.scratch.get()?.as_ref()?
        } else {
            held.file.as_ref()?
        };
        let mut line = vec![0; at.len as usize];
        read_at(file, &mut line, at.offset).ok()?;
        Some(line)
    }

    /// Appends `line` to the scratch file (made in the state folder on
    /// first use, nameless, gone when the server ends); `None` without one.
    fn append(&self, line: &[u8]) -> Option<LineAt> {
        let held = self.held();
        let file = held
            .scratch
            .get_or_init(|| self.dir.as_ref()?.scratch().ok())
            .as_ref()?;
        let len = u32::try_from(line.len()).ok()?;
        let offset = held
            .scratch_len
            .fetch_add(u64::from(len) + 1, Ordering::Relaxed);
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line);
        bytes.push(b'\n');
        write_at(file, &bytes, offset).ok()?;
        Some(LineAt {
            scratch: true,
            offset,
            len,
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, StoredEntry>> {
        match self.held().entries.lock() {
            Ok(held) => held,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

/// The instruction file a line is for, and `None` for a line of another
/// format. A line as this program writes it starts `{"v":2,"p":` and a
/// JSON string, which is read without parsing the rest; any other order of
/// the fields (a line rewritten by another program) is parsed whole.
fn path_of(line: &[u8], prefix: &[u8]) -> Option<String> {
    if let Some(rest) = line.strip_prefix(prefix) {
        let mut strings = serde_json::Deserializer::from_slice(rest).into_iter::<String>();
        return strings.next()?.ok();
    }
    #[derive(Deserialize)]
    struct Key {
        v: u64,
        p: String,
    }
    let key: Key = serde_json::from_slice(line).ok()?;
    (key.v == FORMAT).then_some(key.p)
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(unix)]
fn write_at(file: &File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

#[cfg(windows)]
fn read_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(windows)]
fn write_at(file: &File, mut buf: &[u8], mut offset: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_write(file, buf, offset)? {
            0 => return Err(std::io::ErrorKind::WriteZero.into()),
            n => {
                buf = &buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn read_at(_: &File, _: &mut [u8], _: u64) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(not(any(unix, windows)))]
fn write_at(_: &File, _: &[u8], _: u64) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// A stamp as a line writes it: length, modified and changed (seconds,
/// nanoseconds), device, inode.
type Stamp = (u64, i64, i64, i64, i64, u64, u64);

/// One line: a served skill's entry.
#[derive(Deserialize, Serialize)]
struct Line<'a> {
    v: u64,
    /// The instruction file.
    p: &'a str,
    id: String,
    /// The folder files are read from.
    dir: String,
    /// The front matter, as the JSON object the entry sends.
    fm: Box<RawValue>,
    /// Served path, path below `dir`, stamp, digest.
    files: Vec<(String, String, Stamp, String)>,
    /// Folders listed, below `dir`, with their stamps.
    dirs: Vec<(String, Stamp)>,
}

fn stamp_to(s: &FileStamp) -> Stamp {
    (
        s.len,
        s.modified.0,
        s.modified.1,
        s.changed.0,
        s.changed.1,
        s.dev,
        s.ino,
    )
}

fn stamp_from(s: Stamp) -> FileStamp {
    FileStamp {
        len: s.0,
        modified: (s.1, s.2),
        changed: (s.3, s.4),
        dev: s.5,
        ino: s.6,
    }
}

fn line_of(location: &str, entry: &ServedEntry) -> Option<String> {
    let text = |path: &Path| path.to_str().map(str::to_owned);
    let line = Line {
        v: FORMAT,
        p: location,
        id: entry.id.clone(),
        dir: text(&entry.folder)?,
        fm: RawValue::from_string(entry.frontmatter.to_string()).ok()?,
        files: entry
            .files
            .iter()
            .map(|file| {
                Some((
                    file.served.clone(),
                    text(&file.real)?,
                    stamp_to(&file.stamp),
                    file.digest.clone(),
                ))
            })
            .collect::<Option<_>>()?,
        dirs: entry
            .folders
            .iter()
            .map(|(path, stamp)| Some((text(path)?, stamp_to(stamp))))
            .collect::<Option<_>>()?,
    };
    serde_json::to_string(&line).ok()
}

fn parse_line(text: &str) -> Option<(String, ServedEntry)> {
    let line: Line<'_> = serde_json::from_str(text).ok()?;
    if line.v != FORMAT {
        return None;
    }
    // A path that could climb is not used (reads are confined to the
    // folder besides).
    let files = line
        .files
        .into_iter()
        .map(|(served, real, stamp, digest)| {
            well_formed(&digest).then_some(())?;
            Some(ServedFile {
                served,
                real: below(&real)?.to_path_buf(),
                stamp: stamp_from(stamp),
                digest,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let folders = line
        .dirs
        .into_iter()
        .map(|(path, stamp)| Some((below(&path)?.to_path_buf(), stamp_from(stamp))))
        .collect::<Option<Vec<_>>>()?;
    let sorted = files.windows(2).all(|pair| pair[0].served < pair[1].served);
    sorted.then_some(())?;
    let named: Named<'_> = serde_json::from_str(line.fm.get()).ok()?;
    (!named.name.is_empty()).then_some(())?;
    let frontmatter = String::from(line.fm.get()).into_boxed_str();
    Some((
        line.p.to_owned(),
        ServedEntry::from_parts(
            line.id,
            PathBuf::from(line.dir),
            frontmatter,
            files,
            folders,
        ),
    ))
}

/// What the stamp check needs of a line ([`DigestCache::holds`]),
/// borrowed from it; the front matter only as far as [`parse_line`]
/// checks it.
#[derive(Deserialize)]
struct LineStamps<'a> {
    v: u64,
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    dir: Cow<'a, str>,
    #[serde(borrow)]
    fm: Named<'a>,
    #[serde(borrow)]
    files: Vec<LineFile<'a>>,
    #[serde(borrow)]
    dirs: Vec<(Cow<'a, str>, Stamp)>,
}

/// A file of a line, borrowed: its served path, its path below the
/// skill's folder, its stamp and its digest.
type LineFile<'a> = (Cow<'a, str>, Cow<'a, str>, Stamp, Cow<'a, str>);

/// What the entry will send must read as front matter: an object with a
/// `name` and a `description` (the rest is any JSON).
#[derive(Deserialize)]
struct Named<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, rename = "description")]
    _description: Cow<'a, str>,
}

impl<'a> LineStamps<'a> {
    /// The line's stamps, when it reads as an entry [`parse_line`] would
    /// take.
    fn read(line: &'a [u8]) -> Option<LineStamps<'a>> {
        let stamps: LineStamps<'a> = serde_json::from_slice(line).ok()?;
        let files_ok = stamps
            .files
            .iter()
            .all(|file| well_formed(&file.3) && below(&file.1).is_some());
        let sorted = stamps.files.windows(2).all(|pair| pair[0].0 < pair[1].0);
        let dirs_ok = stamps.dirs.iter().all(|dir| below(&dir.0).is_some());
        (stamps.v == FORMAT && !stamps.fm.name.is_empty() && files_ok && sorted && dirs_ok)
            .then_some(stamps)
    }

    fn recorded(&self) -> impl Iterator<Item = crate::entry::Recorded<'_>> {
        let folders = self
            .dirs
            .iter()
            .map(|(relative, stamp)| crate::entry::Recorded {
                served: None,
                relative: Path::new(relative.as_ref()),
                kind: bcode_fs::FileKind::Dir,
                stamp: stamp_from(*stamp),
            });
        let files = self
            .files
            .iter()
            .map(|(served, real, stamp, _)| crate::entry::Recorded {
                served: Some(served.as_ref()),
                relative: Path::new(real.as_ref()),
                kind: bcode_fs::FileKind::File,
                stamp: stamp_from(*stamp),
            });
        folders.chain(files)
    }
}

/// `path` when none of its parts could climb out of the folder it is
/// below (the cache file is the user's own, but what it names is still
/// kept below the skill's folder).
fn below(path: &str) -> Option<&Path> {
    let path = Path::new(path);
    path.components()
        .all(|part| matches!(part, Component::Normal(_)))
        .then_some(path)
}

/// The SEP-2640 entry a line keeps, parsing only the fields it sends (the
/// front matter straight to the map the entry holds).
fn skill_of_line(line: &[u8]) -> Option<Skill> {
    #[derive(Deserialize)]
    struct Listed<'a> {
        v: u64,
        #[serde(borrow)]
        id: Cow<'a, str>,
        fm: serde_json::Map<String, serde_json::Value>,
        #[serde(borrow)]
        files: Vec<(Cow<'a, str>, IgnoredAny, Stamp, String)>,
    }
    let line: Listed<'_> = serde_json::from_slice(line).ok()?;
    let sorted = line.files.windows(2).all(|pair| pair[0].0 < pair[1].0);
    let digests = line.files.iter().all(|file| well_formed(&file.3));
    (line.v == FORMAT && sorted && digests).then_some(())?;
    let files = line
        .files
        .into_iter()
        .map(|(served, _, stamp, digest)| (served, digest, stamp.0));
    crate::entry::sep_skill(&line.id, line.fm, files)
}

/// Whether `digest` is `sha256:` and 64 lowercase hex digits.
fn well_formed(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

    /// `<state>/cache/mcp-server`, opened as `bcode-prompt mcp` opens it.
    fn cache_dir(state: &Path) -> StateDir {
        StateDir::open(state)
            .and_then(|state| state.subdir("cache"))
            .and_then(|cache| cache.subdir("mcp-server"))
            .unwrap_or_else(|_| unreachable!())
    }

    fn old_stamp_of(path: &Path) -> FileStamp {
        let meta = std::fs::symlink_metadata(path).unwrap_or_else(|_| unreachable!());
        FileStamp::of(&meta)
    }

    fn entry_for(folder: &Path, stamp: FileStamp) -> ServedEntry {
        ServedEntry::from_parts(
            "a".into(),
            folder.to_path_buf(),
            r#"{"name":"a","description":"A skill."}"#.into(),
            vec![ServedFile {
                served: "SKILL.md".into(),
                real: "SKILL.md".into(),
                stamp,
                digest: DIGEST.into(),
            }],
            Vec::new(),
        )
    }

    #[test]
    fn a_page_of_lines_read_at_once_answers_as_each_line_read_alone() {
        let state = tempfile::tempdir().unwrap_or_else(|_| unreachable!());
        let cache = DigestCache::open(cache_dir(state.path()));
        let mut kept = Vec::new();
        for n in 0..5 {
            let folder = state.path().join(format!("s{n}"));
            std::fs::create_dir(&folder).unwrap_or_else(|_| unreachable!());
            let file = folder.join("SKILL.md");
            std::fs::write(&file, "x").unwrap_or_else(|_| unreachable!());
            let entry = ServedEntry::from_parts(
                format!("s{n}"),
                folder,
                format!(r#"{{"name":"s{n}","description":"Skill {n}."}}"#).into(),
                vec![ServedFile {
                    served: "SKILL.md".into(),
                    real: "SKILL.md".into(),
                    stamp: old_stamp_of(&file),
                    digest: DIGEST.into(),
                }],
                Vec::new(),
            );
            kept.push(cache.keep(&file, Arc::new(entry)));
        }
        assert!(kept.iter().all(|k| matches!(k, StoredEntry::Line(_))));
        let stamp = old_stamp_of(&state.path().join("s0/SKILL.md"));
        let memory = StoredEntry::Memory(Arc::new(entry_for(state.path(), stamp)));
        let json = |skills: Vec<Option<Skill>>| serde_json::to_value(skills).ok();
        let alone = |stored: &[&StoredEntry]| stored.iter().map(|s| cache.skill(s)).collect();
        // In file order, out of it, and with an entry held in memory.
        let in_order: Vec<&StoredEntry> = kept.iter().collect();
        let mut turned = in_order.clone();
        turned.reverse();
        let mixed = vec![&kept[3], &memory, &kept[1]];
        for stored in [in_order, turned, mixed] {
            let together = cache.skills(&stored);
            assert!(together.iter().all(Option::is_some), "{together:?}");
            assert_eq!(json(together), json(alone(&stored)));
        }
        // Runs: lines close together are read at once, one far off alone.
        let line_of = |k: &StoredEntry| match k {
            StoredEntry::Line(at) => *at,
            StoredEntry::Memory(_) => unreachable!(),
        };
        let runs = cache.spans_of(kept.iter().map(line_of).collect());
        assert_eq!(runs.runs.len(), 1);
        let far = LineAt {
            offset: line_of(&kept[4]).offset + 2 * MAX_GAP,
            ..line_of(&kept[4])
        };
        let runs = cache.spans_of(vec![line_of(&kept[0]), line_of(&kept[1]), far]);
        assert_eq!(runs.runs.len(), 1, "the far line is not read with the run");
        assert!(runs.line(far).is_none());
        assert!(runs.line(line_of(&kept[1])).is_some());
        assert_eq!(
            json(cache.skills(&[&kept[0], &kept[4]])),
            json(alone(&[&kept[0], &kept[4]]))
        );
    }

    #[test]
    fn a_saved_entry_comes_back_whole_and_only_once() {
        let state = tempfile::tempdir().unwrap_or_else(|_| unreachable!());
        let file = state.path().join("SKILL.md");
        std::fs::write(&file, "x").unwrap_or_else(|_| unreachable!());
        let stamp = old_stamp_of(&file);
        let cache = DigestCache::open(cache_dir(state.path()));
        assert!(cache.take(&file).is_none());
        assert_eq!(cache.kept(), 0, "a cold start");
        let entry = Arc::new(entry_for(state.path(), stamp));
        // Read this run: kept as a line of the scratch file, not in memory.
        let kept = cache.keep(&file, Arc::clone(&entry));
        assert!(matches!(kept, StoredEntry::Line(_)), "{kept:?}");
        let again = cache.load(&kept).unwrap_or_else(|| unreachable!());
        assert_eq!(
            (&again.id, &again.folder, &again.frontmatter, &again.files),
            (&entry.id, &entry.folder, &entry.frontmatter, &entry.files)
        );
        // What a listing sends from the line is what the entry sends.
        let json = |skill: Option<Skill>| serde_json::to_value(skill).ok();
        assert_eq!(json(cache.skill(&kept)), json(entry.skill()));
        assert!(json(entry.skill()).is_some_and(|v| v["frontmatter"]["name"] == "a"));
        cache.note_read();
        cache.save([(file.as_path(), &kept)]);
        let saved = state.path().join("cache/mcp-server").join(FILE);
        let inode = |path: &Path| old_stamp_of(path).ino;
        let written = inode(&saved);
        let again = DigestCache::open(cache_dir(state.path()));
        assert_eq!(again.kept(), 1);
        let stored = again.take(&file).unwrap_or_else(|| unreachable!());
        let back = again.load(&stored).unwrap_or_else(|| unreachable!());
        assert_eq!(
            (&back.id, &back.folder, &back.frontmatter, &back.files),
            (&entry.id, &entry.folder, &entry.frontmatter, &entry.files)
        );
        // Nothing read and nothing dropped: the file is not written again.
        again.save([(file.as_path(), &stored)]);
        assert_eq!(inode(&saved), written);
        again.note_read();
        again.save([(file.as_path(), &stored)]);
        assert_ne!(inode(&saved), written);
        // The line was copied from the file replaced, which stays readable.
        assert!(again.load(&stored).is_some());
        let third = DigestCache::open(cache_dir(state.path()));
        let copied = third.take(&file).and_then(|stored| third.load(&stored));
        assert_eq!(copied.map(|e| e.files.clone()), Some(entry.files.clone()));
        assert!(again.take(&file).is_none(), "taken out once");
        assert!(DigestCache::none().take(&file).is_none());
    }

    /// A state folder holding one skill file, and an entry for it.
    fn one_skill() -> (tempfile::TempDir, PathBuf, Arc<ServedEntry>) {
        let state = tempfile::tempdir().unwrap_or_else(|_| unreachable!());
        let file = state.path().join("SKILL.md");
        std::fs::write(&file, "x").unwrap_or_else(|_| unreachable!());
        let entry = Arc::new(entry_for(state.path(), old_stamp_of(&file)));
        (state, file, entry)
    }

    #[test]
    fn without_a_state_folder_an_entry_stays_in_memory() {
        let (state, file, entry) = one_skill();
        let kept = DigestCache::none().keep(&file, Arc::clone(&entry));
        assert!(matches!(&kept, StoredEntry::Memory(e) if Arc::ptr_eq(e, &entry)));
        // Nothing is written without a state folder.
        DigestCache::none().save([(file.as_path(), &kept)]);
        assert!(!state.path().join("cache").exists());
    }

    #[test]
    fn a_scratch_only_cache_keeps_lines_but_reads_and_writes_no_cache_file() {
        let (state, file, entry) = one_skill();
        // A cache file another run saved is not read.
        let saving = DigestCache::open(cache_dir(state.path()));
        let saved = saving.keep(&file, Arc::clone(&entry));
        saving.note_read();
        saving.save([(file.as_path(), &saved)]);
        let cache_file = state.path().join("cache/mcp-server").join(FILE);
        let written = old_stamp_of(&cache_file).ino;
        let scratch = DigestCache::scratch_in(cache_dir(state.path()));
        assert!(scratch.take(&file).is_none());
        let kept = scratch.keep(&file, Arc::clone(&entry));
        assert!(matches!(kept, StoredEntry::Line(_)), "{kept:?}");
        assert_eq!(
            scratch.load(&kept).map(|e| e.files.clone()),
            Some(entry.files.clone())
        );
        scratch.note_read();
        scratch.save([(file.as_path(), &kept)]);
        assert_eq!(old_stamp_of(&cache_file).ino, written, "not written");
    }

    #[test]
    fn a_line_is_found_by_its_path_without_parsing_the_rest() {
        let prefix = format!(r#"{{"v":{FORMAT},"p":"#);
        let line = format!(r#"{prefix}"/s/a\"b/SKILL.md","id":broken"#);
        assert_eq!(
            path_of(line.as_bytes(), prefix.as_bytes()).as_deref(),
            Some(r#"/s/a"b/SKILL.md"#)
        );
        assert_eq!(
            path_of(br#"{"v":1,"p":"/s/SKILL.md"}"#, prefix.as_bytes()),
            None
        );
        // Fields in another order (a line rewritten by another program).
        let reordered = format!(r#"{{"id":"a","p":"/s/SKILL.md","v":{FORMAT}}}"#);
        assert_eq!(
            path_of(reordered.as_bytes(), prefix.as_bytes()).as_deref(),
            Some("/s/SKILL.md")
        );
        assert_eq!(path_of(b"not json", prefix.as_bytes()), None);
    }

    #[test]
    fn damaged_or_climbing_lines_are_skipped() {
        assert!(parse_line("not json").is_none());
        let line = |real: &str, digest: &str, v: u64| {
            format!(
                r#"{{"v":{v},"p":"/s/a/SKILL.md","id":"a","dir":"/s/a","fm":{{"name":"a","description":"d"}},"files":[["SKILL.md","{real}",[1,2,3,4,5,6,7],"{digest}"]],"dirs":[]}}"#
            )
        };
        assert!(parse_line(&line("SKILL.md", DIGEST, FORMAT)).is_some());
        assert!(parse_line(&line("SKILL.md", DIGEST, 1)).is_none());
        assert!(parse_line(&line("../SKILL.md", DIGEST, FORMAT)).is_none());
        assert!(parse_line(&line("/etc/passwd", DIGEST, FORMAT)).is_none());
        assert!(parse_line(&line("SKILL.md", "sha256:00", FORMAT)).is_none());
    }

    #[test]
    fn a_line_read_for_its_stamps_alone_takes_what_an_entry_takes() {
        let line = |real: &str, digest: &str, fm: &str, files: &str| {
            format!(
                r#"{{"v":{FORMAT},"p":"/s/a/SKILL.md","id":"a","dir":"/s/a","fm":{fm},"files":[["SKILL.md","{real}",[1,2,3,4,5,6,7],"{digest}"]{files}],"dirs":[["refs",[1,2,3,4,5,6,7]]]}}"#
            )
        };
        let named = r#"{"name":"a","description":"d","x":[1]}"#;
        let other = r#",["b.md","b.md",[1,2,3,4,5,6,7],"sha256:0000000000000000000000000000000000000000000000000000000000000000"]"#;
        let cases = [
            line("SKILL.md", DIGEST, named, ""),
            line("SKILL.md", DIGEST, named, other),
            line("../SKILL.md", DIGEST, named, ""),
            line("/etc/passwd", DIGEST, named, ""),
            line("SKILL.md", "sha256:00", named, ""),
            line("SKILL.md", DIGEST, r#"{"name":"","description":"d"}"#, ""),
            line("SKILL.md", DIGEST, r#"{"name":"a"}"#, ""),
            line("SKILL.md", DIGEST, named, other)
                .replace("\"SKILL.md\",\"SKILL.md\"", "\"c.md\",\"SKILL.md\""),
            "not json".to_owned(),
        ];
        for case in &cases {
            assert_eq!(
                LineStamps::read(case.as_bytes()).is_some(),
                parse_line(case).is_some(),
                "{case}"
            );
        }
        let taken = cases
            .iter()
            .filter(|case| parse_line(case).is_some())
            .count();
        assert_eq!(taken, 2, "both kinds are exercised");
        let stamps = LineStamps::read(cases[1].as_bytes()).unwrap_or_else(|| unreachable!());
        let (_, entry) = parse_line(&cases[1]).unwrap_or_else(|| unreachable!());
        let of = |recorded: Vec<crate::entry::Recorded<'_>>| {
            recorded
                .into_iter()
                .map(|one| {
                    (
                        one.served.map(str::to_owned),
                        one.relative.to_path_buf(),
                        one.stamp,
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            of(stamps.recorded().collect()),
            of(entry.recorded().collect())
        );
    }

    #[test]
    fn a_kept_entry_holds_while_its_stamps_answer_without_being_made_again() {
        let (state, file, entry) = one_skill();
        let folder = state.path();
        let cache = DigestCache::open(cache_dir(folder));
        let line = cache.keep(&file, Arc::clone(&entry));
        assert!(matches!(line, StoredEntry::Line(_)), "{line:?}");
        let memory = StoredEntry::Memory(Arc::clone(&entry));
        let stamp = old_stamp_of(&file);
        let mut looker = StampLooker::default();
        for stored in [&line, &memory] {
            assert!(cache.holds(stored, "a", folder, &mut looker, None, None));
            assert!(!cache.holds(stored, "b", folder, &mut looker, None, None));
            assert!(!cache.holds(stored, "a", &folder.join("x"), &mut looker, None, None));
            // Just written: inside a racy window, it is not trusted.
            let window = Some(Duration::from_secs(3600));
            assert!(!cache.holds(stored, "a", folder, &mut looker, window, None));
        }
        // Moved away: no stamp answers, unless discovery has just
        // confirmed the instruction file's (then it is not asked again).
        std::fs::rename(&file, folder.join("moved")).unwrap_or_else(|_| unreachable!());
        let moved = old_stamp_of(&folder.join("moved"));
        for stored in [&line, &memory] {
            assert!(!cache.holds(stored, "a", folder, &mut looker, None, None));
            assert!(cache.holds(stored, "a", folder, &mut looker, None, Some(&stamp)));
            let other = FileStamp {
                ino: stamp.ino.wrapping_add(1),
                ..moved
            };
            assert!(!cache.holds(stored, "a", folder, &mut looker, None, Some(&other)));
        }
        // Back, but written again: its stamp no longer answers.
        std::fs::write(&file, "changed").unwrap_or_else(|_| unreachable!());
        for stored in [&line, &memory] {
            let now = old_stamp_of(&file);
            assert_ne!(now, stamp);
            assert!(!cache.holds(stored, "a", folder, &mut looker, None, None));
            assert!(!cache.holds(stored, "a", folder, &mut looker, None, Some(&now)));
        }
    }
}
