//! The digest cache: each served file's `sha256:` digest and size, and each
//! instruction file's front matter, by path and stamp, kept in the state
//! folder (`cache/mcp-server/digests.jsonl`; what this program fetches as a client is
//! in `cache/mcp/`), so a server started again reads only
//! the files that changed since. A stamp inside the racy window (the file
//! may change again within its clock tick) is never trusted, and the cache
//! only ever saves reading: `resources/read` always reads the file.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

use bcode_fs::{FileStamp, RACY_WINDOW, StateDir};
use serde_json::{Value, json};

/// The cache file, below `<state>/cache/mcp-server/`.
const FILE: &str = "digests.jsonl";

/// Bumped when what a line means changes (how front matter is read, for
/// one): lines of another format are not used.
const FORMAT: u64 = 1;

/// A cache file larger than this is not read (and is rewritten).
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// What the cache knows of one file.
#[derive(Clone, Debug, PartialEq)]
pub struct Known {
    /// The stamp the digest was taken at.
    pub stamp: FileStamp,
    /// `sha256:<hex>` of the bytes.
    pub digest: String,
    /// The front matter as written, for an instruction file.
    pub front_matter: Option<Value>,
}

/// Digests by path, loaded once and written back, when anything changed,
/// with what this run used.
#[derive(Debug, Default)]
pub struct DigestCache {
    dir: Option<StateDir>,
    state: Mutex<State>,
}

/// Keyed by the path as text: hashing and comparing a `Path` goes
/// component by component, which showed in profiles at 13,000 files. A
/// path that is not UTF-8 is not cached.
#[derive(Debug, Default)]
struct State {
    known: HashMap<String, Known>,
    used: HashSet<String>,
    /// A file was read this run (new, or its stamp moved).
    changed: bool,
}

impl DigestCache {
    /// A cache that keeps nothing (no state folder, or it was refused).
    pub fn none() -> DigestCache {
        DigestCache::default()
    }

    /// The cache under `state` (the user's state folder), read now; none
    /// when the folder is not safe to keep state in (see
    /// `bcode_fs::StateDir`). A damaged line costs only itself.
    pub fn open(state: &Path) -> DigestCache {
        let Ok(dir) = StateDir::open(state)
            .and_then(|state| state.subdir("cache"))
            .and_then(|cache| cache.subdir("mcp-server"))
        else {
            return DigestCache::none();
        };
        let mut loaded = HashMap::new();
        if let Ok((file, len)) = dir.open_file(FILE)
            && len <= MAX_FILE_BYTES
        {
            for line in BufReader::new(file).lines() {
                let Ok(line) = line else { break };
                if let Some((path, known)) = parse_line(&line) {
                    loaded.insert(path, known);
                }
            }
        }
        DigestCache {
            dir: Some(dir),
            state: Mutex::new(State {
                known: loaded,
                used: HashSet::new(),
                changed: false,
            }),
        }
    }

    /// What is known of `path` at `stamp`, unless the stamp is racy.
    pub fn lookup(&self, path: &Path, stamp: &FileStamp) -> Option<Known> {
        if self.dir.is_none() || stamp.is_racy(SystemTime::now(), RACY_WINDOW) {
            return None;
        }
        let path = path.to_str()?;
        let mut state = self.lock();
        let known = state
            .known
            .get(path)
            .filter(|known| known.stamp == *stamp)?
            .clone();
        state.used.insert(path.to_owned());
        Some(known)
    }

    /// Records what was read of `path` at `stamp`.
    pub fn remember(&self, path: &Path, known: Known) {
        let (Some(_), Some(path)) = (&self.dir, path.to_str()) else {
            return;
        };
        let mut state = self.lock();
        state.known.insert(path.to_owned(), known);
        state.used.insert(path.to_owned());
        state.changed = true;
    }

    /// Writes the files this run used (a vanished file drops out) when a
    /// file was read or one dropped out, through a temporary file renamed
    /// into place. Failing to write only costs the next start its reads.
    pub fn save(&self) {
        let Some(dir) = &self.dir else { return };
        let mut state = self.lock();
        let State {
            known,
            used,
            changed,
        } = &mut *state;
        if used.is_empty() || (!*changed && used.len() == known.len()) {
            return;
        }
        known.retain(|path, _| used.contains(path));
        let mut paths: Vec<&String> = known.keys().collect();
        paths.sort();
        let written = dir.replace(FILE, &mut |file| {
            let mut out = std::io::BufWriter::new(file);
            for path in &paths {
                if let Some(record) = known.get(*path) {
                    writeln!(out, "{}", line_of(path, record))?;
                }
            }
            out.flush()
        });
        if written.is_ok() {
            *changed = false;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

fn line_of(path: &str, known: &Known) -> Value {
    let s = &known.stamp;
    json!({
        "v": FORMAT,
        "p": path,
        "s": [s.len, s.modified.0, s.modified.1, s.changed.0, s.changed.1, s.dev, s.ino],
        "d": known.digest,
        "f": known.front_matter,
    })
}

fn parse_line(line: &str) -> Option<(String, Known)> {
    let value: Value = serde_json::from_str(line).ok()?;
    if value.get("v")?.as_u64()? != FORMAT {
        return None;
    }
    let path = value.get("p")?.as_str()?.to_owned();
    let s: Vec<i64> = value
        .get("s")?
        .as_array()?
        .iter()
        .map(Value::as_i64)
        .collect::<Option<_>>()?;
    let [len, msec, mnsec, csec, cnsec, dev, ino] = s.as_slice() else {
        return None;
    };
    let unsigned = |n: &i64| u64::try_from(*n).ok();
    let stamp = FileStamp {
        len: unsigned(len)?,
        modified: (*msec, *mnsec),
        changed: (*csec, *cnsec),
        dev: unsigned(dev)?,
        ino: unsigned(ino)?,
    };
    let digest = value.get("d")?.as_str()?.to_owned();
    let front_matter = value.get("f").filter(|f| !f.is_null()).cloned();
    Some((
        path,
        Known {
            stamp,
            digest,
            front_matter,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_cache_answers_for_unchanged_old_files_only() {
        let state = tempfile::tempdir().unwrap_or_else(|_| unreachable!());
        let file = state.path().join("a.md");
        std::fs::write(&file, "x").unwrap_or_else(|_| unreachable!());
        let meta = std::fs::metadata(&file).unwrap_or_else(|_| unreachable!());
        let mut stamp = FileStamp::of(&meta);
        // Old enough to be past the racy window.
        stamp.modified.0 -= 3600;
        stamp.changed.0 -= 3600;
        let known = Known {
            stamp,
            digest: "sha256:00".into(),
            front_matter: Some(json!({"name": "a"})),
        };
        let cache = DigestCache::open(state.path());
        assert_eq!(cache.lookup(&file, &stamp), None);
        cache.remember(&file, known.clone());
        cache.save();
        let again = DigestCache::open(state.path());
        assert_eq!(again.lookup(&file, &stamp), Some(known));
        let mut moved = stamp;
        moved.len += 1;
        assert_eq!(again.lookup(&file, &moved), None);
        // A fresh stamp is racy: never answered.
        let fresh = FileStamp::of(&meta);
        again.remember(
            &file,
            Known {
                stamp: fresh,
                ..again
                    .lookup(&file, &stamp)
                    .unwrap_or_else(|| unreachable!())
            },
        );
        again.save();
        assert_eq!(DigestCache::open(state.path()).lookup(&file, &fresh), None);
        assert_eq!(DigestCache::none().lookup(&file, &stamp), None);
    }

    #[test]
    fn damaged_lines_are_skipped() {
        assert_eq!(parse_line("not json"), None);
        assert_eq!(parse_line(r#"{"p":"a","s":[1,2],"d":"x"}"#), None);
        assert!(parse_line(r#"{"v":1,"p":"a","s":[1,2,3,4,5,6,7],"d":"x","f":null}"#).is_some());
        // Another format's line is not used.
        assert_eq!(
            parse_line(r#"{"v":0,"p":"a","s":[1,2,3,4,5,6,7],"d":"x"}"#),
            None
        );
    }
}
