//! The untracked entries of the last status scan, remembered with what
//! they depend on, so a read that would find every tracked file clean does
//! not run the scan again (edge I/O).
//!
//! libgit2's scan loads and checksums the whole index and, walking the
//! working tree, matches every folder against every ignore rule: at git/git
//! that is most of a render and twice what `git status` spends. Yet when
//! nothing is staged (`HEAD`'s tree is the index's, `index_tree.rs`) and
//! every tracked file passes libgit2's own stat test (`racy::all_clean`),
//! the status is exactly its untracked entries, and those depend only on:
//!
//! - the paths the index tracks (kept as a hash of paths and modes);
//! - the entries of every folder the scan walks, which the folder's stamp
//!   covers (adding, removing or renaming an entry moves it);
//! - the ignore rules: each walked folder's `.gitignore`, the git folder's
//!   `info/exclude` and config, the user's and the system's config and
//!   excludes file (their stamps, or that they are missing).
//!
//! The folders walked: every folder holding a tracked path, and every
//! untracked folder that is not ignored, with what is not ignored below it
//! (a file appearing deep inside makes the folder show). Ignored folders
//! are not walked (nothing inside one can show), nor nested repositories
//! and gitlinks, whose own stamp is kept.
//!
//! After a scan, its untracked entries are kept in the cache folder with
//! those stamps, taken *before* the scan and only when each one vouches for
//! itself (`bcode_fs::vouches`: unchanged within the racy window), so no
//! change the scan missed can hide behind an equal stamp. A later read
//! answers from the memory while every stamp and the tracked paths are the
//! same; anything else runs the scan as before. A tree with more than
//! [`MAX_FOLDERS`] folders to walk is not remembered. The memory file
//! follows the state folder's rules, as `racy.rs`'s does.
//!
//! The walk itself can also spare the scan: when every entry of every
//! folder it walks is tracked (right after a clone, a checkout, a clean
//! build-free tree), nothing is untracked whatever the ignore rules say, so
//! a clean tracked tree with nothing staged has an empty status, even while
//! the stamps are too fresh to be kept.

use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use bcode_fs::{FileKind, FileStamp, StateDir};
use git2::Repository;
use rustc_hash::FxHashSet;

use super::index_file::GITLINK;
use super::racy::{self, GitCache, ReadIndex, Reader};
use super::{EntryState, StatusEntry, StatusFacts};

/// The most folders a survey walks before it gives up remembering.
const MAX_FOLDERS: usize = 50_000;

const MAGIC: &[u8] = b"bcode-git-untracked-1\n";
/// The most bytes of a memory file read or written.
const MAX_BYTES: u64 = 32 * 1024 * 1024;
/// The longest path or entry kept.
const MAX_PATH: usize = 4096;

/// How a kept path is looked at again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Look {
    /// A folder, its own stamp (a link is not followed).
    Folder,
    /// A file the rules are read from, followed as git reads it; missing
    /// is a state too.
    File,
}

/// One kept stamp: where, how, and what it was.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Input {
    path: PathBuf,
    look: Look,
    stamp: Option<FileStamp>,
}

impl Input {
    fn take(path: PathBuf, look: Look) -> Input {
        let stamp = stamp_now(&path, look);
        Input { path, look, stamp }
    }

    fn holds(&self) -> bool {
        stamp_now(&self.path, self.look) == self.stamp
    }
}

/// The stamp of `path` now, looked at as `look` says.
fn stamp_now(path: &Path, look: Look) -> Option<FileStamp> {
    match look {
        Look::Folder => bcode_fs::own_stamp_of(path, FileKind::Dir),
        Look::File => bcode_fs::stamp_of(path),
    }
}

/// What a memory holds.
#[derive(Debug, PartialEq, Eq)]
struct Memory {
    key: Vec<u8>,
    tracked: u64,
    inputs: Vec<Input>,
    /// The untracked entries' paths as shown, in the scan's order.
    entries: Vec<String>,
}

/// How many status reads were answered without a scan, per cache folder
/// (for tests and benches: counted, not timed).
static UNSCANNED: Mutex<Vec<(PathBuf, u64)>> = Mutex::new(Vec::new());

/// How many status reads with the cache folder `dir` were answered without
/// libgit2's scan: from the memory of untracked entries, or because the
/// working tree held nothing untracked.
pub fn unscanned(dir: &Path) -> u64 {
    let counts = UNSCANNED.lock().unwrap_or_else(PoisonError::into_inner);
    counts
        .iter()
        .find(|(kept, _)| kept == dir)
        .map_or(0, |(_, n)| *n)
}

fn count_unscanned(dir: &Path) {
    let mut counts = UNSCANNED.lock().unwrap_or_else(PoisonError::into_inner);
    match counts.iter_mut().find(|(kept, _)| kept == dir) {
        Some((_, n)) => *n += 1,
        None => {
            // Bounded: a long-lived host uses a handful of folders.
            if counts.len() >= 64 {
                counts.clear();
            }
            counts.push((dir.to_path_buf(), 1));
        }
    }
}

/// The untracked entries remembered for `repo`, when every stamp they
/// depend on and the tracked paths of `index` are still the same.
fn recall(repo: &Repository, index: &ReadIndex, cache: &GitCache) -> Option<Vec<String>> {
    let key = racy::key(repo);
    let dir = StateDir::open(&cache.dir).ok()?;
    let (file, len) = dir.open_file(&memory_name(&key)).ok()?;
    if len > MAX_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES).read_to_end(&mut bytes).ok()?;
    let memory = parse(&bytes)?;
    let outer = outer_inputs(repo, cache)?;
    let holds = memory.key == key
        && memory.tracked == tracked_hash(index)
        && memory.inputs.len() >= outer.len()
        && memory
            .inputs
            .iter()
            .zip(&outer)
            .all(|(kept, now)| kept.path == *now)
        && memory.inputs.iter().all(Input::holds);
    holds.then_some(memory.entries)
}

/// The facts of a clean tracked tree with these untracked entries, at most
/// `max_entries` kept, as the scan would give them (counted as a read
/// answered without a scan in `cache`).
fn facts(entries: Vec<String>, max_entries: usize, cache: &GitCache) -> StatusFacts {
    count_unscanned(&cache.dir);
    let mut facts = StatusFacts::default();
    for path in entries {
        facts.total.add(EntryState::Untracked);
        if facts.entries.len() >= max_entries {
            facts.capped = true;
            continue;
        }
        facts.entries.push(StatusEntry {
            code: UNTRACKED.to_owned(),
            path,
            state: EntryState::Untracked,
        });
    }
    facts
}

/// What is known of the tracked side before the scan.
#[derive(Clone, Copy)]
pub(super) struct Clean<'a> {
    /// `HEAD`'s tree is the index's: nothing is staged.
    pub(super) staged: bool,
    /// What `racy::settle` found of the racily-clean entries.
    pub(super) settled: &'a racy::Settled,
    /// Every gitlink names a submodule that is not checked out.
    pub(super) unpopulated: bool,
}

/// What a status read does.
pub(super) enum Plan {
    /// Answer with these facts; no scan.
    Answer(StatusFacts),
    /// Run the scan, then keep its untracked entries with this survey.
    Scan(Option<Survey>),
}

/// Whether the status can be answered without the scan: with nothing
/// staged and every tracked file clean (`racy::all_clean`), from the
/// memory while it holds, else from a survey that finds every entry
/// tracked (an empty status). Otherwise the scan runs, with the survey
/// taken before it when the memory did not hold.
pub(super) fn plan(
    repo: &Repository,
    index: &ReadIndex,
    cache: &GitCache,
    clean: Clean<'_>,
    max_entries: usize,
) -> Plan {
    // While something is staged the scan runs, and nothing is surveyed.
    if !clean.staged {
        return Plan::Scan(None);
    }
    let tracked_clean = || {
        repo.workdir().is_some_and(|workdir| {
            racy::all_clean(workdir, index, clean.settled, clean.unpopulated)
        })
    };
    if let Some(entries) = recall(repo, index, cache) {
        if tracked_clean() {
            return Plan::Answer(facts(entries, max_entries, cache));
        }
        // The memory holds: the scan need not be surveyed.
        return Plan::Scan(None);
    }
    let survey = survey(repo, index, cache, MAX_FOLDERS);
    if survey.as_ref().is_some_and(Survey::nothing_untracked) && tracked_clean() {
        let facts = facts(Vec::new(), max_entries, cache);
        if let Some(survey) = survey {
            survey.remember(&facts, cache);
        }
        return Plan::Answer(facts);
    }
    Plan::Scan(survey)
}

/// The code of an untracked entry.
const UNTRACKED: &str = "??";

/// What a walk of the working tree found before the scan: the stamps the
/// scan's untracked entries will depend on, and whether there can be any.
pub(super) struct Survey {
    key: Vec<u8>,
    tracked: u64,
    inputs: Vec<Input>,
    /// Every stamp vouched for itself: the scan's answer may be kept.
    vouched: bool,
    /// Every entry of every folder walked is tracked, given every tracked
    /// file is there: nothing is untracked, whatever the ignore rules say.
    nothing_untracked: bool,
}

/// Takes the survey's stamps, while they all vouch for themselves.
struct Stamps {
    inputs: Vec<Input>,
    vouched: bool,
    taken_at: SystemTime,
    racy_window: std::time::Duration,
}

impl Stamps {
    fn take(&mut self, path: PathBuf, look: Look) {
        if !self.vouched {
            return;
        }
        let input = Input::take(path, look);
        let vouches = input
            .stamp
            .as_ref()
            .is_none_or(|stamp| bcode_fs::vouches(stamp, self.taken_at, self.racy_window));
        if vouches {
            self.inputs.push(input);
        } else {
            // Nothing of this survey can be kept now.
            self.vouched = false;
            self.inputs = Vec::new();
        }
    }
}

/// Walks what the scan will walk and takes its stamps (see the module
/// docs), noting whether any entry is untracked. `None` when there is no
/// working tree or the user's files are not known, when the tree has more
/// than `max_folders` folders to walk, when a `.gitignore` is not a regular
/// file, or as soon as the survey can serve for nothing: a stamp that does
/// not vouch for itself yet (changed within `cache`'s racy window; right
/// after a clone) and an untracked entry.
fn survey(
    repo: &Repository,
    index: &ReadIndex,
    cache: &GitCache,
    max_folders: usize,
) -> Option<Survey> {
    let workdir = repo.workdir()?.to_path_buf();
    let file = &index.file;
    // Tracked files and links (a gitlink is a folder on disk).
    let mut tracked_files = 0usize;
    let mut tracked_folders: FxHashSet<&[u8]> = FxHashSet::default();
    let mut gitlinks: FxHashSet<&[u8]> = FxHashSet::default();
    for entry in &file.entries {
        let path = file.path(entry);
        if entry.mode == GITLINK {
            gitlinks.insert(path);
        } else {
            tracked_files += 1;
        }
        // Each folder above the path, the deepest first: once one is known,
        // so are those above it (entries come sorted, so that is soon).
        let mut end = path.len();
        while let Some(slash) = path[..end].iter().rposition(|byte| *byte == b'/') {
            if !tracked_folders.insert(&path[..slash]) {
                break;
            }
            end = slash;
        }
    }
    let mut stamps = Stamps {
        inputs: Vec::new(),
        vouched: true,
        taken_at: SystemTime::now(),
        racy_window: cache.racy_window,
    };
    for path in outer_inputs(repo, cache)? {
        stamps.take(path, Look::File);
    }
    // Files and links met in the folders walked: with every tracked one
    // there (which `racy::all_clean` checks), as many as the index tracks
    // means none is untracked, and no per-name lookup is needed.
    let mut files_met = 0usize;
    // Tracked folders met as real folders: one replaced by a link is
    // walked by nobody, though `lstat` still reaches its files through it.
    let mut folders_met = 0usize;
    let mut nothing_untracked = true;
    let mut stack: Vec<Vec<u8>> = vec![Vec::new()];
    let mut folders = 0usize;
    while let Some(relative) = stack.pop() {
        folders += 1;
        if folders > max_folders || !(stamps.vouched || nothing_untracked) {
            return None;
        }
        let folder = workdir.join(path_of(&relative)?);
        stamps.take(folder.clone(), Look::Folder);
        // One buffer for every entry's path from the root.
        let mut child = relative;
        if !child.is_empty() {
            child.push(b'/');
        }
        let prefix = child.len();
        for entry in std::fs::read_dir(&folder).ok()? {
            let entry = entry.ok()?;
            let name = entry.file_name();
            let name = name.as_encoded_bytes();
            let kind = entry.file_type().ok()?;
            if name == b".git" {
                continue;
            }
            if name == b".gitignore" {
                // Not a regular file (a FIFO would block whoever reads the
                // rules, as `watch.rs` refuses it too): nothing is kept.
                if !kind.is_file() {
                    return None;
                }
                stamps.take(entry.path(), Look::File);
            }
            if !kind.is_dir() {
                files_met += 1;
                nothing_untracked &= files_met <= tracked_files;
                if !(stamps.vouched || nothing_untracked) {
                    return None;
                }
                continue;
            }
            child.truncate(prefix);
            child.extend_from_slice(name);
            if tracked_folders.contains(child.as_slice()) {
                folders_met += 1;
                stack.push(child.clone());
            } else if gitlinks.contains(child.as_slice()) {
                // A submodule: its own stamp moves when `.git` comes or goes.
                stamps.take(entry.path(), Look::Folder);
            } else if std::fs::symlink_metadata(entry.path().join(".git")).is_ok() {
                // A nested repository: shown, or not, as a whole.
                nothing_untracked = false;
                stamps.take(entry.path(), Look::Folder);
            } else {
                nothing_untracked = false;
                if !repo.is_path_ignored(path_of(&child)?).ok()? {
                    stack.push(child.clone());
                }
            }
            if !(stamps.vouched || nothing_untracked) {
                return None;
            }
        }
    }
    Some(Survey {
        key: racy::key(repo),
        tracked: tracked_hash(index),
        inputs: stamps.inputs,
        vouched: stamps.vouched,
        nothing_untracked: nothing_untracked
            && files_met == tracked_files
            && folders_met == tracked_folders.len(),
    })
}

impl Survey {
    /// Whether the walk found every entry tracked, given that every tracked
    /// file is there (`racy::all_clean`, which must hold too): every folder
    /// met holds tracked paths (or is a submodule's), every tracked folder
    /// was met as a folder (not a link), and the files met are exactly as
    /// many as the index tracks. With nothing staged the status
    /// is then empty, no scan needed.
    fn nothing_untracked(&self) -> bool {
        self.nothing_untracked
    }

    /// Keeps the untracked entries of `facts`, the status that followed the
    /// survey, in the cache folder: only when every stamp vouched, the
    /// status listed every entry and every untracked one is untracked alone
    /// (not also staged).
    pub(super) fn remember(self, facts: &StatusFacts, cache: &GitCache) {
        if facts.capped || !self.vouched {
            return;
        }
        let mut entries = Vec::new();
        for entry in &facts.entries {
            if entry.code == UNTRACKED {
                entries.push(entry.path.clone());
            } else if entry.code.contains('?') || entry.state == EntryState::Untracked {
                return;
            }
        }
        let memory = Memory {
            key: self.key,
            tracked: self.tracked,
            inputs: self.inputs,
            entries,
        };
        let Some(bytes) = encode(&memory) else {
            return;
        };
        if let Ok(dir) = StateDir::open(&cache.dir) {
            let _ = dir.replace(&memory_name(&memory.key), &mut |out| out.write_all(&bytes));
        }
    }
}

/// The files outside the working tree the ignore rules come from, in a
/// fixed order: the git folder's `info/exclude` and config (and the common
/// folder's, for a linked worktree), the user's files (`cache`), the
/// system's config and the file `core.excludesFile` names; `None` when the
/// user's files are not known.
fn outer_inputs(repo: &Repository, cache: &GitCache) -> Option<Vec<PathBuf>> {
    if cache.user_git_files.is_empty() {
        return None;
    }
    let mut paths = vec![
        repo.path().join("info").join("exclude"),
        repo.path().join("config"),
        repo.path().join("config.worktree"),
    ];
    if repo.commondir() != repo.path() {
        paths.push(repo.commondir().join("info").join("exclude"));
        paths.push(repo.commondir().join("config"));
    }
    paths.extend(cache.user_git_files.iter().cloned());
    paths.push(PathBuf::from("/etc/gitconfig"));
    if let Some(excludes) = repo
        .config()
        .ok()
        .and_then(|config| config.get_path("core.excludesfile").ok())
    {
        paths.push(excludes);
    }
    Some(paths)
}

/// A hash of the index's paths and modes, in order: which paths are
/// tracked, and which are gitlinks.
fn tracked_hash(index: &ReadIndex) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    let file = &index.file;
    file.entries.len().hash(&mut hasher);
    for entry in &file.entries {
        file.path(entry).hash(&mut hasher);
        entry.mode.hash(&mut hasher);
    }
    hasher.finish()
}

#[cfg(unix)]
fn path_of(bytes: &[u8]) -> Option<&Path> {
    use std::os::unix::ffi::OsStrExt;
    Some(Path::new(std::ffi::OsStr::from_bytes(bytes)))
}

#[cfg(not(unix))]
fn path_of(bytes: &[u8]) -> Option<&Path> {
    std::str::from_utf8(bytes).ok().map(Path::new)
}

fn memory_name(key: &[u8]) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    format!("untracked-{:016x}.bin", hasher.finish())
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn encode(memory: &Memory) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(256 + memory.inputs.len() * 96);
    out.extend_from_slice(MAGIC);
    put_bytes(&mut out, &memory.key);
    out.extend_from_slice(&memory.tracked.to_le_bytes());
    out.extend_from_slice(&(memory.inputs.len() as u32).to_le_bytes());
    for input in &memory.inputs {
        let path = input.path.as_os_str().as_encoded_bytes();
        if path.len() > MAX_PATH {
            return None;
        }
        put_bytes(&mut out, path);
        let look = match input.look {
            Look::Folder => 0u8,
            Look::File => 1,
        };
        out.push(look);
        match &input.stamp {
            None => out.push(0),
            Some(stamp) => {
                out.push(1);
                out.extend_from_slice(&stamp.len.to_le_bytes());
                for value in [
                    stamp.modified.0,
                    stamp.modified.1,
                    stamp.changed.0,
                    stamp.changed.1,
                ] {
                    out.extend_from_slice(&value.to_le_bytes());
                }
                out.extend_from_slice(&stamp.dev.to_le_bytes());
                out.extend_from_slice(&stamp.ino.to_le_bytes());
            }
        }
    }
    out.extend_from_slice(&(memory.entries.len() as u32).to_le_bytes());
    for entry in &memory.entries {
        if entry.len() > MAX_PATH {
            return None;
        }
        put_bytes(&mut out, entry.as_bytes());
    }
    (out.len() as u64 <= MAX_BYTES).then_some(out)
}

fn parse(bytes: &[u8]) -> Option<Memory> {
    let mut r = Reader(bytes);
    if r.take(MAGIC.len())? != MAGIC {
        return None;
    }
    let key_len = r.u32()? as usize;
    let key = r.take(key_len)?.to_vec();
    let tracked = r.u64()?;
    let count = r.u32()? as usize;
    // Every input takes at least six bytes: a lying count stops here.
    if count > bytes.len() / 6 {
        return None;
    }
    let mut inputs = Vec::with_capacity(count);
    for _ in 0..count {
        let path_len = r.u32()? as usize;
        if path_len > MAX_PATH {
            return None;
        }
        let path = PathBuf::from(path_string(r.take(path_len)?)?);
        let look = match r.take(1)? {
            [0] => Look::Folder,
            [1] => Look::File,
            _ => return None,
        };
        let stamp = match r.take(1)? {
            [0] => None,
            [1] => Some(FileStamp {
                len: r.u64()?,
                modified: (r.i64()?, r.i64()?),
                changed: (r.i64()?, r.i64()?),
                dev: r.u64()?,
                ino: r.u64()?,
            }),
            _ => return None,
        };
        inputs.push(Input { path, look, stamp });
    }
    let count = r.u32()? as usize;
    if count > bytes.len() / 4 {
        return None;
    }
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let len = r.u32()? as usize;
        if len > MAX_PATH {
            return None;
        }
        entries.push(String::from_utf8(r.take(len)?.to_vec()).ok()?);
    }
    r.0.is_empty().then_some(Memory {
        key,
        tracked,
        inputs,
        entries,
    })
}

#[cfg(unix)]
fn path_string(bytes: &[u8]) -> Option<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt;
    Some(std::ffi::OsStr::from_bytes(bytes).to_os_string())
}

#[cfg(not(unix))]
fn path_string(bytes: &[u8]) -> Option<std::ffi::OsString> {
    String::from_utf8(bytes.to_vec()).ok().map(Into::into)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_memory_file_reads_back_and_anything_else_is_not_used() {
        let memory = Memory {
            key: b"key".to_vec(),
            tracked: 7,
            inputs: vec![
                Input {
                    path: PathBuf::from("/r/a"),
                    look: Look::Folder,
                    stamp: Some(FileStamp {
                        len: 1,
                        modified: (2, 3),
                        changed: (4, 5),
                        dev: 6,
                        ino: 7,
                    }),
                },
                Input {
                    path: PathBuf::from("/r/.git/info/exclude"),
                    look: Look::File,
                    stamp: None,
                },
            ],
            entries: vec!["new.txt".to_owned(), "dir/".to_owned()],
        };
        let bytes = encode(&memory).unwrap();
        assert_eq!(parse(&bytes), Some(memory));
        for cut in [1, 5, bytes.len() / 2] {
            assert_eq!(parse(&bytes[..bytes.len() - cut]), None);
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(parse(&longer), None);
        assert_eq!(parse(b"garbage"), None);
    }

    #[test]
    fn a_survey_gives_up_past_its_folder_bound_or_on_a_fresh_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        for name in ["a", "b", "c"] {
            std::fs::create_dir_all(dir.path().join(name).join("x")).unwrap();
        }
        repo.index().unwrap().write().unwrap();
        let read = racy::read_index(&repo).unwrap();
        let cache = |window| GitCache {
            dir: PathBuf::from("unused"),
            racy_window: window,
            user_git_files: vec![PathBuf::from("/nonexistent/.gitconfig")],
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        let zero = cache(std::time::Duration::ZERO);
        // The root and six untracked folders, none ignored.
        let survey_of = |bound| survey(&repo, &read, &zero, bound);
        assert_eq!(
            survey_of(7).map(|s| s.inputs.len() - outer_inputs(&repo, &zero).unwrap().len()),
            Some(7)
        );
        assert!(survey_of(6).is_none());
        // Everything here changed within the last hour.
        let hour = cache(std::time::Duration::from_secs(3600));
        assert!(survey(&repo, &read, &hour, 100).is_none());
    }
}
