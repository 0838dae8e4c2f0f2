//! Racily-clean index entries, hashed once and remembered (edge I/O).
//!
//! Until git refreshes the index (`git status` rewrites it), an entry whose
//! file changed in the same clock tick as the index was written cannot be
//! trusted by its stat data: libgit2 treats an entry as modified when its
//! modification time is not older than the index file, and git itself
//! "smudges" such entries (records size 0) when it writes the index, right
//! after a clone, a checkout or a commit. libgit2's read-only status hashes
//! every such file on every scan, for as long as nobody runs git.
//!
//! Here each such entry is checked once: its file's `lstat` must match the
//! entry, then its content hash is taken from the memory kept in the state
//! folder (keyed by path and the whole `lstat`) or computed and remembered.
//! A hash is remembered only when the file's modification and change times
//! are older than the racy window, so a later write cannot keep the same
//! stat. Entries found clean are then told to libgit2 through a private copy
//! of the index in the state folder (the repository is never written): the
//! copy is newer than every entry, and a smudged entry gets its real size
//! back; an entry not found clean keeps libgit2 hashing it (its recorded
//! time is cleared in the copy). The copy is removed once the scan has read
//! it.
//!
//! The memory file follows the state folder's rules (see
//! `bcode_fs::StateDir`): never opened through a link, read bounded, written
//! to a random name and renamed; anything wrong with it means it is not
//! used.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bcode_fs::StateDir;
use git2::{ObjectType, Oid, Repository};

use super::index_file::{self, CHECKSUM_BYTES, IndexFile, MTIME_AT, SIZE_AT};

/// Where the memory is kept, and how old a stat must be to be trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitCache {
    /// The folder (for Bcode, `<state dir>/cache/git`), used only when it
    /// is safe state (see `bcode_fs::StateDir`).
    pub dir: PathBuf,
    /// A file changed less than this long ago is hashed but not remembered
    /// (`bcode_fs::RACY_WINDOW` unless a test shortens it).
    pub racy_window: Duration,
    /// The user's git config and excludes files as the environment names
    /// them ([`GitCache::user_git_files`]): the remembered untracked entries
    /// depend on them (see `untracked.rs`). Empty (a hermetic host, no
    /// `HOME`): no untracked entries are remembered.
    pub user_git_files: Vec<PathBuf>,
}

impl GitCache {
    /// The files git reads from the user's home for its config and ignore
    /// rules, as the environment snapshot `env` names them:
    /// `$HOME/.gitconfig`, and `git/config` and `git/ignore` under
    /// `$XDG_CONFIG_HOME` (else `$HOME/.config`); none without `HOME`.
    pub fn user_git_files(env: &BTreeMap<String, String>) -> Vec<PathBuf> {
        let Some(home) = env.get("HOME").filter(|home| !home.is_empty()) else {
            return Vec::new();
        };
        let home = PathBuf::from(home);
        let xdg = env
            .get("XDG_CONFIG_HOME")
            .filter(|xdg| !xdg.is_empty())
            .map_or_else(|| home.join(".config"), PathBuf::from);
        vec![
            home.join(".gitconfig"),
            xdg.join("git").join("config"),
            xdg.join("git").join("ignore"),
        ]
    }
}

/// How many racily-clean entries a scan hashed, and how many it took from
/// the memory, per cache folder (for tests and benches: counted, not timed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RacyCounts {
    /// Files hashed.
    pub hashed: u64,
    /// Hashes taken from the memory.
    pub remembered: u64,
}

static COUNTS: Mutex<BTreeMap<PathBuf, RacyCounts>> = Mutex::new(BTreeMap::new());

/// What the scans with the cache folder `dir` counted so far.
pub fn counts(dir: &Path) -> RacyCounts {
    let counts = COUNTS.lock().unwrap_or_else(PoisonError::into_inner);
    counts.get(dir).copied().unwrap_or_default()
}

fn count(dir: &Path, hashed: u64, remembered: u64) {
    if hashed == 0 && remembered == 0 {
        return;
    }
    let mut counts = COUNTS.lock().unwrap_or_else(PoisonError::into_inner);
    // Bounded: a long-lived host uses a handful of folders.
    if counts.len() >= 64 && !counts.contains_key(dir) {
        counts.clear();
    }
    let slot = counts.entry(dir.to_path_buf()).or_default();
    slot.hashed += hashed;
    slot.remembered += remembered;
}

/// A private copy of the index for the scan; removed when dropped.
#[derive(Debug)]
pub(super) struct IndexCopy {
    path: PathBuf,
}

impl IndexCopy {
    /// Makes `repo` read the copy instead of its own index.
    pub(super) fn install(&self, repo: &Repository) -> Result<(), git2::Error> {
        let mut index = git2::Index::open(&self.path)?;
        repo.set_index(&mut index)
    }
}

impl Drop for IndexCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The index read once, before the scan.
pub(super) struct ReadIndex {
    pub(super) file: IndexFile,
    /// The index file's modification time (seconds, nanoseconds).
    pub(super) stamp: (u32, u32),
}

/// The most bytes of the index read (the preflight refuses a larger one).
const INDEX_BYTES: u64 = 128 * 1024 * 1024;

/// Reads and parses `repo`'s index; `None` when it is missing or unusual.
pub(super) fn read_index(repo: &Repository) -> Option<ReadIndex> {
    let (file, len) = bcode_fs::open_regular(&repo.path().join("index")).ok()?;
    if len > INDEX_BYTES {
        return None;
    }
    let meta = file.metadata().ok()?;
    let stamp = index_mtime_of(&meta)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).ok()?);
    file.take(INDEX_BYTES).read_to_end(&mut bytes).ok()?;
    let file = index_file::parse(bytes)?;
    Some(ReadIndex { file, stamp })
}

#[cfg(unix)]
fn index_mtime_of(meta: &std::fs::Metadata) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.mtime() as u32, meta.mtime_nsec() as u32))
}

#[cfg(not(unix))]
fn index_mtime_of(_: &std::fs::Metadata) -> Option<(u32, u32)> {
    None
}

/// A file's whole `lstat`, as remembered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stat {
    mtime: (i64, i64),
    ctime: (i64, i64),
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    uid: u32,
    gid: u32,
}

#[cfg(unix)]
fn lstat(path: &Path) -> Option<Stat> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    meta.file_type().is_file().then(|| Stat {
        mtime: (meta.mtime(), meta.mtime_nsec()),
        ctime: (meta.ctime(), meta.ctime_nsec()),
        dev: meta.dev(),
        ino: meta.ino(),
        size: meta.size(),
        mode: meta.mode(),
        uid: meta.uid(),
        gid: meta.gid(),
    })
}

#[cfg(not(unix))]
fn lstat(_: &Path) -> Option<Stat> {
    None
}

/// Whether `stat` matches what the index recorded for `entry`, as libgit2
/// compares them (more strictly: ctime always counts); the size is not
/// compared for a smudged entry (size 0).
fn matches(entry: &index_file::RawEntry, stat: &Stat) -> bool {
    let executable = stat.mode & 0o100 != 0;
    let mode = if executable { 0o100755 } else { 0o100644 };
    entry.mode == mode
        && (entry.size == 0 || u64::from(entry.size) == stat.size & 0xffff_ffff)
        && entry.mtime == (stat.mtime.0 as u32, stat.mtime.1 as u32)
        && entry.ctime == (stat.ctime.0 as u32, stat.ctime.1 as u32)
        && entry.ino == stat.ino as u32
        && entry.uid == stat.uid
        && entry.gid == stat.gid
}

/// Whether libgit2 would distrust `entry`'s stat data against an index
/// written at `stamp`: not older than the index.
fn racy(entry: &index_file::RawEntry, stamp: (u32, u32)) -> bool {
    (entry.mtime.0 as i32, entry.mtime.1) >= (stamp.0 as i32, stamp.1)
}

/// The flag git sets on an entry it must not look at (`assume-unchanged`).
const VALID: u16 = 0x8000;
/// A conflict's stage bits.
const STAGE: u16 = 0x3000;

/// What [`settle`] found of the index's racily-clean and smudged entries.
pub(super) struct Settled {
    /// The bytes a copy of the index changes (where, what) to tell libgit2
    /// which of them are clean.
    patches: Vec<(usize, [u8; 4])>,
    /// How many of them the copy tells libgit2 are clean.
    clean: usize,
    /// How many could not be found clean: another stat, other content, a
    /// path that is not UTF-8, no cache folder to settle them in.
    pub(super) unsettled: usize,
}

impl Settled {
    /// A private copy of the index telling libgit2 which entries are clean
    /// (written to the cache folder), or `None` when it would tell nothing.
    pub(super) fn copy(&self, index: &ReadIndex, cache: &GitCache) -> Option<IndexCopy> {
        if self.clean == 0 {
            return None;
        }
        let dir = StateDir::open(&cache.dir).ok()?;
        let mut bytes = index.file.bytes.clone();
        for (at, value) in &self.patches {
            if let Some(slot) = bytes.get_mut(*at..*at + 4) {
                slot.copy_from_slice(value);
            }
        }
        // A zero checksum is what `index.skipHash` writes; libgit2 accepts it.
        let len = bytes.len();
        if let Some(sum) = bytes.get_mut(len - CHECKSUM_BYTES..) {
            sum.fill(0);
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let copy_name = format!(
            "index-{}-{}",
            std::process::id(),
            now.as_nanos() % 1_000_000_000_000
        );
        dir.replace(&copy_name, &mut |out| out.write_all(&bytes))
            .ok()?;
        Some(IndexCopy {
            path: dir.path().join(copy_name),
        })
    }
}

/// The entries libgit2 would not trust by their stat data alone: smudged
/// (size 0) or not older than the index, among plain files at stage 0.
fn candidates(index: &ReadIndex) -> impl Iterator<Item = &index_file::RawEntry> {
    index
        .file
        .entries
        .iter()
        .filter(|e| is_candidate(e, index.stamp))
}

fn is_candidate(e: &index_file::RawEntry, stamp: (u32, u32)) -> bool {
    e.flags & (VALID | STAGE) == 0
        && e.extended == 0
        && matches!(e.mode, 0o100644 | 0o100755)
        && (e.size == 0 || racy(e, stamp))
}

/// Checks the index's racily-clean and smudged entries against the memory
/// in `cache` (hashing what it does not hold): which are clean, for a copy
/// of the index that tells libgit2 (see [`Settled::copy`]).
pub(super) fn settle(repo: &Repository, index: &ReadIndex, cache: &GitCache) -> Settled {
    let mut settled = Settled {
        patches: Vec::new(),
        clean: 0,
        unsettled: 0,
    };
    let file = &index.file;
    let candidates: Vec<&index_file::RawEntry> = candidates(index).collect();
    if candidates.is_empty() {
        return settled;
    }
    let (Some(workdir), Ok(dir)) = (repo.workdir(), StateDir::open(&cache.dir)) else {
        settled.unsettled = candidates.len();
        return settled;
    };
    let key = key(repo);
    let name = memory_name(&key);
    let mut memory = load(&dir, &name, &key);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let trusted_before = now.saturating_sub(cache.racy_window);
    let mut kept: Vec<(Vec<u8>, Stat, Oid)> = Vec::new();
    let mut changed = false;
    let (mut hashed, mut remembered) = (0u64, 0u64);
    for entry in candidates {
        let path = file.path(entry);
        let Ok(text) = std::str::from_utf8(path) else {
            settled.unsettled += 1;
            continue;
        };
        let full = workdir.join(text);
        let Some(stat) = lstat(&full) else {
            settled.unsettled += 1;
            continue;
        };
        if !matches(entry, &stat) {
            // A real change of stat: libgit2 hashes it, as git would.
            settled.unsettled += 1;
            continue;
        }
        let known = memory
            .remove(path)
            .filter(|(s, oid)| *s == stat && *oid == entry.oid);
        let is_clean = if known.is_some() {
            remembered += 1;
            kept.push((path.to_vec(), stat, entry.oid));
            true
        } else {
            hashed += 1;
            let oid = Oid::hash_file(ObjectType::Blob, &full).ok();
            let same = oid == Some(entry.oid);
            if same && settled_stat(&stat, trusted_before) {
                kept.push((path.to_vec(), stat, entry.oid));
                changed = true;
            }
            same
        };
        if is_clean {
            // Only a smudged entry or one libgit2 would distrust needs the
            // copy; a tracked empty file is clean as it stands.
            if entry.size == 0 && stat.size != 0 {
                let size = (stat.size as u32).to_be_bytes();
                settled.patches.push((entry.at + SIZE_AT, size));
                settled.clean += 1;
            } else if racy(entry, index.stamp) {
                settled.clean += 1;
            }
        } else {
            settled.unsettled += 1;
            if racy(entry, index.stamp) {
                // The copy is newer than the entry: without its time,
                // libgit2 still compares the content.
                settled.patches.push((entry.at + MTIME_AT, [0; 4]));
                settled.patches.push((entry.at + MTIME_AT + 4, [0; 4]));
            }
        }
    }
    count(&cache.dir, hashed, remembered);
    if changed || !memory.is_empty() {
        store(&dir, &name, &key, &kept);
    }
    settled
}

/// Whether libgit2 would find every tracked file of `workdir` unchanged
/// against `index`, by its own test: each entry's `lstat` matches what the
/// index recorded and is older than the index, or is one [`settle`] found
/// clean (`settled` found them all clean); a gitlink only when it names a
/// submodule that is not checked out (`unpopulated`). Anything else (a
/// conflict, an assume-unchanged or skip-worktree entry, a folder entry of
/// a sparse index) answers `false`.
#[cfg(unix)]
pub(super) fn all_clean(
    workdir: &Path,
    index: &ReadIndex,
    settled: &Settled,
    unpopulated: bool,
) -> bool {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    if settled.unsettled != 0 {
        return false;
    }
    let file = &index.file;
    // One path buffer for every entry: the working tree, then the path.
    let mut full = workdir.as_os_str().as_bytes().to_vec();
    full.push(b'/');
    let base = full.len();
    file.entries.iter().all(|entry| {
        if entry.flags & (VALID | STAGE) != 0 || entry.extended != 0 {
            return false;
        }
        full.truncate(base);
        full.extend_from_slice(file.path(entry));
        let full = Path::new(std::ffi::OsStr::from_bytes(&full));
        match entry.mode {
            0o100644 | 0o100755 => {
                is_candidate(entry, index.stamp)
                    || lstat(full).is_some_and(|stat| matches(entry, &stat))
            }
            0o120000 => std::fs::symlink_metadata(full).is_ok_and(|meta| {
                meta.file_type().is_symlink()
                    && !racy(entry, index.stamp)
                    && u64::from(entry.size) == meta.size() & 0xffff_ffff
                    && entry.mtime == (meta.mtime() as u32, meta.mtime_nsec() as u32)
                    && entry.ctime == (meta.ctime() as u32, meta.ctime_nsec() as u32)
                    && entry.ino == meta.ino() as u32
                    && entry.uid == meta.uid()
                    && entry.gid == meta.gid()
            }),
            index_file::GITLINK => unpopulated,
            _ => false,
        }
    })
}

#[cfg(not(unix))]
pub(super) fn all_clean(_: &Path, _: &ReadIndex, _: &Settled, _: bool) -> bool {
    false
}

/// Whether a stat is old enough to be remembered: changed before
/// `trusted_before` (seconds since the epoch), so a write after the hash
/// would show as a new time.
fn settled_stat(stat: &Stat, trusted_before: Duration) -> bool {
    let newest = stat.mtime.max(stat.ctime);
    let Ok(secs) = u64::try_from(newest.0) else {
        return true;
    };
    let at = Duration::new(secs, u32::try_from(newest.1).unwrap_or(0));
    at < trusted_before
}

/// The repository the memory is for: its git folder and work tree.
pub(super) fn key(repo: &Repository) -> Vec<u8> {
    let mut key = repo.path().as_os_str().as_encoded_bytes().to_vec();
    key.push(0);
    if let Some(workdir) = repo.workdir() {
        key.extend_from_slice(workdir.as_os_str().as_encoded_bytes());
    }
    key
}

fn memory_name(key: &[u8]) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    format!("racy-{:016x}.bin", hasher.finish())
}

const MAGIC: &[u8] = b"bcode-git-racy-1\n";
/// The most bytes of a memory file read or written.
const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The longest path remembered.
const MAX_PATH: usize = 4096;

type Memory = HashMap<Vec<u8>, (Stat, Oid)>;

/// The memory for `key`; empty when missing, another repository's, or
/// malformed in any way.
fn load(dir: &StateDir, name: &str, key: &[u8]) -> Memory {
    let Ok((file, len)) = dir.open_file(name) else {
        return Memory::new();
    };
    if len > MAX_BYTES {
        return Memory::new();
    }
    let mut bytes = Vec::new();
    if file.take(MAX_BYTES).read_to_end(&mut bytes).is_err() {
        return Memory::new();
    }
    parse_memory(&bytes, key).unwrap_or_default()
}

/// Reads a memory file's fields in order; `None` past its end.
pub(super) struct Reader<'a>(pub(super) &'a [u8]);

impl Reader<'_> {
    pub(super) fn take(&mut self, n: usize) -> Option<&[u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }
    pub(super) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub(super) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub(super) fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

fn parse_memory(bytes: &[u8], key: &[u8]) -> Option<Memory> {
    let mut r = Reader(bytes);
    if r.take(MAGIC.len())? != MAGIC {
        return None;
    }
    let key_len = r.u32()? as usize;
    if r.take(key_len)? != key {
        return None;
    }
    let count = r.u32()? as usize;
    // Every record takes more than 80 bytes: a lying count stops here.
    if count > bytes.len() / 80 {
        return None;
    }
    let mut memory = Memory::with_capacity(count);
    for _ in 0..count {
        let path_len = r.u32()? as usize;
        if path_len > MAX_PATH {
            return None;
        }
        let path = r.take(path_len)?.to_vec();
        let stat = Stat {
            mtime: (r.i64()?, r.i64()?),
            ctime: (r.i64()?, r.i64()?),
            dev: r.u64()?,
            ino: r.u64()?,
            size: r.u64()?,
            mode: r.u32()?,
            uid: r.u32()?,
            gid: r.u32()?,
        };
        let oid = Oid::from_bytes(r.take(20)?).ok()?;
        memory.insert(path, (stat, oid));
    }
    r.0.is_empty().then_some(memory)
}

fn store(dir: &StateDir, name: &str, key: &[u8], kept: &[(Vec<u8>, Stat, Oid)]) {
    let mut out = Vec::with_capacity(64 + kept.len() * 120);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
    let records: Vec<_> = kept
        .iter()
        .filter(|(p, _, _)| p.len() <= MAX_PATH)
        .collect();
    out.extend_from_slice(&(records.len() as u32).to_le_bytes());
    for (path, stat, oid) in records {
        out.extend_from_slice(&(path.len() as u32).to_le_bytes());
        out.extend_from_slice(path);
        for value in [stat.mtime.0, stat.mtime.1, stat.ctime.0, stat.ctime.1] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        for value in [stat.dev, stat.ino, stat.size] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        for value in [stat.mode, stat.uid, stat.gid] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        out.extend_from_slice(oid.as_bytes());
    }
    if out.len() as u64 > MAX_BYTES {
        return;
    }
    let _ = dir.replace(name, &mut |file| file.write_all(&out));
    prune(dir.path());
}

/// Removes index copies and temporary files a process left behind (older
/// than an hour).
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified < hour_ago);
        if stale && (name.starts_with("index-") || name.ends_with(".tmp")) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_memory_file_reads_back_and_anything_else_is_empty() {
        let stat = Stat {
            mtime: (1, 2),
            ctime: (3, 4),
            dev: 5,
            ino: 6,
            size: 7,
            mode: 0o100644,
            uid: 8,
            gid: 9,
        };
        let oid = Oid::hash_object(ObjectType::Blob, b"x").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::open(dir.path()).unwrap();
        store(&state, "m.bin", b"key", &[(b"a/b".to_vec(), stat, oid)]);
        let read = load(&state, "m.bin", b"key");
        assert_eq!(read, Memory::from([(b"a/b".to_vec(), (stat, oid))]));
        // Another repository's memory, a cut file, garbage: all empty.
        assert!(load(&state, "m.bin", b"other").is_empty());
        let bytes = std::fs::read(dir.path().join("m.bin")).unwrap();
        assert!(parse_memory(&bytes[..bytes.len() - 1], b"key").is_none());
        assert!(parse_memory(b"garbage", b"key").is_none());
    }
}
