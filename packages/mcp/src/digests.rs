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

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bcode_fs::{FileStamp, RACY_WINDOW, StateDir};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::entry::{ServedEntry, ServedFile};

/// The cache file, below `<state>/cache/mcp-server/`.
const FILE: &str = "digests.jsonl";

/// Bumped when what a line means changes (how front matter is read, for
/// one): lines of another format are not used.
const FORMAT: u64 = 2;

/// A cache file larger than this is not read (and is rewritten).
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Entries by instruction file, loaded once and written back, when
/// anything changed, with what the server serves.
#[derive(Debug)]
pub struct DigestCache {
    dir: Option<StateDir>,
    /// The file's entries, read on first use (off a server's start: the
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
            held: OnceLock::new(),
            read: AtomicBool::new(false),
            racy_window: RACY_WINDOW,
        }
    }
}

/// The entries held, by instruction file.
#[derive(Debug, Default)]
struct Held {
    /// Keyed by the path as text: hashing and comparing a `Path` goes
    /// component by component, which showed in profiles at 13,000 files.
    entries: Mutex<HashMap<String, Arc<ServedEntry>>>,
    /// How many entries the file held when read.
    loaded: usize,
}

impl DigestCache {
    /// A cache that keeps nothing on disk (no state folder, or it was
    /// refused); it still carries entries across a registry swap.
    pub fn none() -> DigestCache {
        DigestCache::default()
    }

    /// The cache under `state` (the user's state folder), read when first
    /// used; none when the folder is not safe to keep state in (see
    /// `bcode_fs::StateDir`). A damaged line costs only itself.
    pub fn open(state: &Path) -> DigestCache {
        let Ok(dir) = StateDir::open(state)
            .and_then(|state| state.subdir("cache"))
            .and_then(|cache| cache.subdir("mcp-server"))
        else {
            return DigestCache::none();
        };
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

    fn held(&self) -> &Held {
        self.held.get_or_init(|| {
            let mut entries = HashMap::new();
            if let Some(dir) = &self.dir
                && let Ok((file, len)) = dir.open_file(FILE)
                && len <= MAX_FILE_BYTES
            {
                for line in BufReader::new(file).lines() {
                    let Ok(line) = line else { break };
                    if let Some((path, entry)) = parse_line(&line) {
                        entries.insert(path, Arc::new(entry));
                    }
                }
            }
            Held {
                loaded: entries.len(),
                entries: Mutex::new(entries),
            }
        })
    }

    /// The entry held for the skill whose instruction file is `location`,
    /// taken out (the caller checks it still holds).
    pub fn take(&self, location: &Path) -> Option<Arc<ServedEntry>> {
        let location = location.to_str()?;
        self.lock().remove(location)
    }

    /// Holds `entry` for the skill at `location` until a build takes it
    /// (a registry swap hands back what the old registry's skills built).
    pub fn hold(&self, location: &Path, entry: Arc<ServedEntry>) {
        if let Some(location) = location.to_str() {
            self.lock().insert(location.to_owned(), entry);
        }
    }

    /// Notes that a skill's files were read: the file is written at the
    /// next save.
    pub fn note_read(&self) {
        self.read.store(true, Ordering::Relaxed);
    }

    /// Writes `entries` (what is served now, by instruction file; a
    /// vanished skill drops out) when a skill was read or one dropped out,
    /// through a temporary file renamed into place. Entries read inside
    /// the racy window are left out. Failing to write only costs the next
    /// start its reads.
    pub fn save<'a>(&self, entries: impl IntoIterator<Item = (&'a Path, &'a ServedEntry)>) {
        let Some(dir) = &self.dir else { return };
        let settled: Vec<(&Path, &ServedEntry)> = entries
            .into_iter()
            .filter(|(_, entry)| entry.settled())
            .collect();
        if settled.is_empty()
            || (!self.read.load(Ordering::Relaxed) && settled.len() == self.held().loaded)
        {
            return;
        }
        let mut lines: Vec<(&str, String)> = settled
            .into_iter()
            .filter_map(|(location, entry)| {
                let location = location.to_str()?;
                Some((location, line_of(location, entry)?))
            })
            .collect();
        lines.sort_by(|a, b| a.0.cmp(b.0));
        let written = dir.replace(FILE, &mut |file| {
            let mut out = std::io::BufWriter::new(file);
            for (_, line) in &lines {
                writeln!(out, "{line}")?;
            }
            out.flush()
        });
        if written.is_ok() {
            self.read.store(false, Ordering::Relaxed);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<ServedEntry>>> {
        match self.held().entries.lock() {
            Ok(held) => held,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
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
    // The file is the user's own, but what it names is still kept below
    // the skill's folder: a path that could climb is not used (reads are
    // confined to the folder besides).
    let below = |path: &str| {
        let path = PathBuf::from(path);
        path.components()
            .all(|part| matches!(part, Component::Normal(_)))
            .then_some(path)
    };
    let files = line
        .files
        .into_iter()
        .map(|(served, real, stamp, digest)| {
            well_formed(&digest).then_some(())?;
            Some(ServedFile {
                served,
                real: below(&real)?,
                stamp: stamp_from(stamp),
                digest,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let folders = line
        .dirs
        .into_iter()
        .map(|(path, stamp)| Some((below(&path)?, stamp_from(stamp))))
        .collect::<Option<Vec<_>>>()?;
    let sorted = files.windows(2).all(|pair| pair[0].served < pair[1].served);
    sorted.then_some(())?;
    // What the entry will send must read as front matter: an object with a
    // `name` and a `description` (the rest is any JSON).
    #[derive(Deserialize)]
    struct Named {
        name: String,
        description: String,
    }
    let named: Named = serde_json::from_str(line.fm.get()).ok()?;
    (!named.name.is_empty()).then_some(named.description)?;
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
    fn a_saved_entry_comes_back_whole_and_only_once() {
        let state = tempfile::tempdir().unwrap_or_else(|_| unreachable!());
        let file = state.path().join("SKILL.md");
        std::fs::write(&file, "x").unwrap_or_else(|_| unreachable!());
        let stamp = old_stamp_of(&file);
        let cache = DigestCache::open(state.path());
        assert!(cache.take(&file).is_none());
        let entry = entry_for(state.path(), stamp);
        cache.save([(file.as_path(), &entry)]);
        let saved = state.path().join("cache/mcp-server").join(FILE);
        let inode = |path: &Path| old_stamp_of(path).ino;
        let written = inode(&saved);
        let again = DigestCache::open(state.path());
        let back = again.take(&file).unwrap_or_else(|| unreachable!());
        assert_eq!(
            (&back.id, &back.folder, &back.frontmatter, &back.files),
            (&entry.id, &entry.folder, &entry.frontmatter, &entry.files)
        );
        // Nothing read and nothing dropped: the file is not written again.
        again.save([(file.as_path(), &*back)]);
        assert_eq!(inode(&saved), written);
        again.note_read();
        again.save([(file.as_path(), &*back)]);
        assert_ne!(inode(&saved), written);
        assert!(again.take(&file).is_none(), "taken out once");
        assert!(DigestCache::none().take(&file).is_none());
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
}
