//! What a walk depended on, so that an unchanged tree is confirmed without
//! walking it again: one stamp per file or folder the walk's answer came
//! from, checked relative to each root (see [`bcode_fs::DirHandle`]).
//!
//! The walk records a probe for every instruction file it accepted or
//! rejected, every symlink it followed (or found dangling or looping) and
//! every folder it listed, and where each followed folder link led (whether
//! such a folder is inside the root depends on that path, not on a stamp). A folder's stamp moves when an entry is added,
//! removed or renamed in it, a file's when its content or identity changes;
//! so when every probe answers as before, the walk would find the same
//! candidates with the same stamps, and the last registry is the answer
//! (the technique of git's untracked cache). Anything the probes cannot
//! vouch for makes the snapshot untrusted and the next build walks: an
//! I/O error, an exhausted entry budget, a file that could not be read, or
//! a stamp inside the racy window (modified or changed so recently that a
//! second change could leave it as it is).

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use bcode_fs::{Canonicalizer, DirHandle, FileStamp, below};
use serde::{Deserialize, Serialize};

use crate::discover::sources::SourceRoot;
use bcode_fs::{Observed, RACY_WINDOW};

/// Fewer probes (about one per skill) than this are checked on the calling
/// thread. Criterion `discovery/unchanged_rebuild/1000` (1,000 skills in two
/// roots): 0.85-0.95 ms on two threads against 1.27-1.69 ms on one.
const PARALLEL_MIN_PROBES: usize = 512;

#[derive(Debug)]
struct Probe {
    /// The path below the root's base folder, as a range of
    /// [`RootSnapshot::paths`] (one buffer rather than one allocation per
    /// probe: a walk records one probe per skill).
    relative: (u32, u32),
    follow: bool,
    expect: Observed,
}

/// The probes of one root, recorded while it is walked.
#[derive(Debug)]
pub(crate) struct RootSnapshot {
    root: SourceRoot,
    /// `None`: the root did not exist.
    canonical: Option<PathBuf>,
    /// The folder probes are relative to: the canonical root, or the folder
    /// of a root that is a single file.
    base: Option<PathBuf>,
    probes: Vec<Probe>,
    /// Each folder symlink followed, with where it led: whether such a
    /// folder is inside the root (or a loop) depends on that canonical
    /// path, which the target's own stamp does not cover (renaming a
    /// parent of the target moves it). Few, so checked by path.
    links: Vec<(PathBuf, PathBuf)>,
    /// The probes' relative paths, one after the other.
    paths: String,
    /// Every probe the answer depended on is recorded.
    trusted: bool,
    /// A stamp was taken inside the racy window: the probes are all there
    /// (a folder watch may rely on their list) but cannot vouch for the
    /// answer, so the next build walks.
    racy: bool,
    started: SystemTime,
    racy_window: Duration,
}

impl RootSnapshot {
    pub(crate) fn new(root: &SourceRoot, started: SystemTime, racy_window: Duration) -> Self {
        RootSnapshot {
            root: root.clone(),
            canonical: None,
            base: None,
            probes: Vec::new(),
            links: Vec::new(),
            paths: String::new(),
            trusted: true,
            racy: false,
            started,
            racy_window,
        }
    }

    /// The root resolved to `canonical`; probes are taken below `base`.
    pub(crate) fn set_base(&mut self, canonical: &Path, base: &Path) {
        self.canonical = Some(canonical.to_path_buf());
        self.base = Some(base.to_path_buf());
    }

    /// The walk saw something a later check could not vouch for.
    pub(crate) fn distrust(&mut self) {
        self.trusted = false;
    }

    /// Records that looking up `path` (following a final symlink or not)
    /// answered `stamp`.
    pub(crate) fn stamp(&mut self, path: &Path, follow: bool, stamp: FileStamp) {
        if !bcode_fs::vouches(&stamp, self.started, self.racy_window) {
            self.racy = true;
        }
        self.push(path, follow, Observed::Stamp(stamp));
    }

    /// Records that the folder symlink at `path` led to `canonical`.
    pub(crate) fn link(&mut self, path: &Path, canonical: &Path) {
        if self.trusted {
            self.links
                .push((path.to_path_buf(), canonical.to_path_buf()));
        }
    }

    /// Records that looking up `path` failed with `err`.
    pub(crate) fn error(&mut self, path: &Path, follow: bool, err: &io::Error) {
        match err.raw_os_error() {
            Some(code) => self.push(path, follow, Observed::Failed(code)),
            None => self.trusted = false,
        }
    }

    fn push(&mut self, path: &Path, follow: bool, expect: Observed) {
        if !self.trusted {
            return;
        }
        let relative = self
            .base
            .as_deref()
            .and_then(|base| below(path, base))
            .and_then(Path::to_str);
        let start = u32::try_from(self.paths.len()).ok();
        let end = relative.and_then(|r| u32::try_from(self.paths.len() + r.len()).ok());
        match (relative, start, end) {
            (Some(relative), Some(start), Some(end)) => {
                self.paths.push_str(relative);
                self.probes.push(Probe {
                    relative: (start, end),
                    follow,
                    expect,
                });
            }
            // Not below the base, or not UTF-8: walk next time.
            _ => self.trusted = false,
        }
    }

    fn relative(&self, probe: &Probe) -> &Path {
        let (start, end) = probe.relative;
        Path::new(
            self.paths
                .get(start as usize..end as usize)
                .unwrap_or_default(),
        )
    }

    /// The root resolves as before and its folder can be opened: the handle
    /// to check its probes with (`Some(None)` for a root that still does
    /// not exist). `None` when it changed or cannot be trusted.
    fn reopen(&self, root: &SourceRoot, paths: &mut Canonicalizer) -> Option<Option<DirHandle>> {
        if !self.trusted || self.racy || *root != self.root {
            return None;
        }
        let links_hold = self
            .links
            .iter()
            .all(|(link, before)| bcode_fs::still_resolves(link, before));
        if !links_hold {
            return None;
        }
        match (paths.canonicalize(&root.path), &self.canonical) {
            (Err(err), None) if err.kind() == io::ErrorKind::NotFound => Some(None),
            (Ok(now), Some(before)) if now == *before => {
                DirHandle::open(self.base.as_deref()?).ok().map(Some)
            }
            _ => None,
        }
    }
}

/// The probes of every root of one build.
#[derive(Debug)]
pub(crate) struct WalkSnapshot {
    roots: Vec<RootSnapshot>,
    /// Candidates the walk found (for the build's counters).
    candidates: usize,
}

impl WalkSnapshot {
    pub(crate) fn new(roots: Vec<RootSnapshot>, candidates: usize) -> Self {
        WalkSnapshot { roots, candidates }
    }

    pub(crate) fn candidates(&self) -> usize {
        self.candidates
    }

    /// Probe `at.1` of root `at.0`.
    fn probe(&self, at: (u32, u32)) -> Option<&Probe> {
        self.roots.get(at.0 as usize)?.probes.get(at.1 as usize)
    }

    /// Every folder whose entries the recorded walk's answer depended on:
    /// each root, each listed folder, and the folder of each probed file
    /// (through the followed links, so a link's target is covered). A
    /// watcher on exactly these sees every change a re-walk would; it is
    /// bounded by the walk's own budgets. `None` when a root's walk could
    /// not be recorded (then nothing short of a walk can vouch for it).
    pub(crate) fn folders(&self) -> Option<BTreeSet<PathBuf>> {
        let mut out = BTreeSet::new();
        for root in &self.roots {
            if !root.trusted {
                return None;
            }
            let Some(base) = &root.base else {
                continue;
            };
            out.insert(base.clone());
            for probe in &root.probes {
                let path = base.join(root.relative(probe));
                // The root's own probe has its parent outside the root:
                // that folder's other entries say nothing about skills.
                if let Some(parent) = path.parent().filter(|p| p.starts_with(base)) {
                    out.insert(parent.to_path_buf());
                }
                if path.is_dir() {
                    out.insert(path);
                }
            }
        }
        Some(out)
    }

    /// The canonical path of the root at `index` and the folder its probes
    /// are below (the root, or the folder of a root that is one file);
    /// `None` for a root that did not exist. A re-check confirms both.
    pub(crate) fn root_bounds(&self, index: usize) -> Option<(&Path, &Path)> {
        let root = self.roots.get(index)?;
        Some((root.canonical.as_deref()?, root.base.as_deref()?))
    }

    /// Whether walking `roots` now would find exactly what the recorded walk
    /// found, with the same stamps. Never reads a file.
    pub(crate) fn unchanged(&self, roots: &[SourceRoot]) -> bool {
        if roots.len() != self.roots.len() {
            return false;
        }
        let mut work: Vec<(&DirHandle, &RootSnapshot, &[Probe])> = Vec::new();
        let mut handles = Vec::new();
        // The roots share their folders (see `walk_root`): each resolved once.
        let mut paths = Canonicalizer::new();
        for (root, snapshot) in roots.iter().zip(&self.roots) {
            match snapshot.reopen(root, &mut paths) {
                Some(Some(handle)) => handles.push((handle, snapshot)),
                Some(None) => {}
                None => return false,
            }
        }
        let total: usize = handles.iter().map(|(_, root)| root.probes.len()).sum();
        let threads = bcode_fs::worker_threads();
        let per_thread = if total < PARALLEL_MIN_PROBES || threads < 2 {
            total.max(1)
        } else {
            total.div_ceil(threads)
        };
        for (handle, root) in &handles {
            for chunk in root.probes.chunks(per_thread) {
                work.push((handle, root, chunk));
            }
        }
        if work.len() < 2 {
            return work
                .iter()
                .all(|(handle, root, probes)| all_match(handle, root, probes));
        }
        std::thread::scope(|scope| {
            let checks: Vec<_> = work
                .iter()
                .map(|(handle, root, probes)| scope.spawn(|| all_match(handle, root, probes)))
                .collect();
            checks
                .into_iter()
                .all(|check| check.join().unwrap_or(false))
        })
    }
}

/// The stamps of a snapshot that was just confirmed (every probe answered
/// as recorded), by path: each is what a lookup of that path answers now,
/// so a later check of the same path for the same build (the routing
/// cache's check of each skill's file and folder) takes it from here
/// instead of asking the file system again.
///
/// A path's followed stamp is its `follow` probe when the walk took one
/// (the walk follows every link it accepts, recording where it led); a
/// path probed only without following is no link, so that stamp is also
/// the followed one. A path whose probe failed, or whose hash another path
/// shares, has none here and is looked up as before.
#[derive(Debug)]
pub struct ConfirmedStamps<'s> {
    snapshot: &'s WalkSnapshot,
    /// By the hash of root number and relative path: the root and probe
    /// numbers, `u32::MAX` as the probe for two paths of one hash.
    by_path: std::collections::HashMap<u64, (u32, u32), rustc_hash::FxBuildHasher>,
}

impl<'s> ConfirmedStamps<'s> {
    /// The stamps of `snapshot`, which its caller has just confirmed with
    /// [`WalkSnapshot::unchanged`].
    pub(crate) fn of(snapshot: &'s WalkSnapshot) -> Self {
        let total: usize = snapshot.roots.iter().map(|root| root.probes.len()).sum();
        let mut by_path =
            std::collections::HashMap::with_capacity_and_hasher(total, rustc_hash::FxBuildHasher);
        for (r, root) in snapshot.roots.iter().enumerate() {
            if root.base.is_none() {
                continue;
            }
            for (p, probe) in root.probes.iter().enumerate() {
                let (Ok(r), Ok(p)) = (u32::try_from(r), u32::try_from(p)) else {
                    continue;
                };
                let relative = root.relative(probe);
                by_path
                    .entry(path_key(r, relative))
                    .and_modify(|held: &mut (u32, u32)| {
                        let Some(other) = snapshot.probe(*held) else {
                            return;
                        };
                        if held.0 != r || root.relative(other) != relative {
                            held.1 = u32::MAX;
                        } else if probe.follow && !other.follow {
                            held.1 = p;
                        }
                    })
                    .or_insert((r, p));
            }
        }
        ConfirmedStamps { snapshot, by_path }
    }

    /// The stamp `std::fs::metadata(path)` answers now, if the snapshot
    /// knows it.
    pub fn followed(&self, path: &Path) -> Option<FileStamp> {
        for (r, root) in self.snapshot.roots.iter().enumerate() {
            let Some(relative) = root.base.as_deref().and_then(|base| below(path, base)) else {
                continue;
            };
            let r = u32::try_from(r).ok()?;
            let Some(held) = self.by_path.get(&path_key(r, relative)) else {
                continue;
            };
            let Some(probe) = self.snapshot.probe(*held) else {
                continue;
            };
            if held.0 != r || root.relative(probe) != relative {
                continue;
            }
            return match probe.expect {
                Observed::Stamp(stamp) => Some(stamp),
                Observed::Failed(_) => None,
            };
        }
        None
    }
}

fn path_key(root: u32, relative: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = rustc_hash::FxHasher::default();
    root.hash(&mut hasher);
    relative.as_os_str().as_encoded_bytes().hash(&mut hasher);
    hasher.finish()
}

fn all_match(handle: &DirHandle, root: &RootSnapshot, probes: &[Probe]) -> bool {
    probes.iter().all(|probe| {
        bcode_fs::still_observed(handle, root.relative(probe), probe.follow, probe.expect)
    })
}

/// A snapshot as written to disk by [`crate::discover::cache::disk`]: the probes of each
/// root, without the roots themselves (the file is keyed by them).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct StoredSnapshot {
    candidates: usize,
    roots: Vec<StoredRoot>,
}

#[derive(Debug, Serialize, Deserialize)]
struct StoredRoot {
    canonical: Option<PathBuf>,
    base: Option<PathBuf>,
    links: Vec<(PathBuf, PathBuf)>,
    /// [`PROBE_WORDS`] numbers per probe, flat (a list per probe made
    /// reading the file several times slower): see [`encode`].
    probes: Vec<u64>,
    paths: String,
}

/// The bulk of one stored root: its probes' words and their paths.
pub(crate) type StoredBulk = (Vec<u64>, String);

impl StoredSnapshot {
    /// Moves each root's probe words and paths out, leaving them empty: the
    /// disk cache writes these megabytes in pieces.
    pub(crate) fn take_bulk(&mut self) -> Vec<StoredBulk> {
        self.roots
            .iter_mut()
            .map(|root| {
                (
                    std::mem::take(&mut root.probes),
                    std::mem::take(&mut root.paths),
                )
            })
            .collect()
    }

    /// Puts back what [`Self::take_bulk`] moved out. `None` when there is
    /// not one entry per root.
    pub(crate) fn put_bulk(&mut self, bulk: Vec<StoredBulk>) -> Option<()> {
        if bulk.len() != self.roots.len() {
            return None;
        }
        for (root, (probes, paths)) in self.roots.iter_mut().zip(bulk) {
            root.probes = probes;
            root.paths = paths;
        }
        Some(())
    }
}

impl WalkSnapshot {
    /// The snapshot as stored, when every root is trusted (an untrusted one
    /// would only make the next process walk anyway).
    pub(crate) fn to_stored(&self) -> Option<StoredSnapshot> {
        let roots = self
            .roots
            .iter()
            .map(|root| {
                (root.trusted && !root.racy).then(|| StoredRoot {
                    canonical: root.canonical.clone(),
                    base: root.base.clone(),
                    probes: root.probes.iter().flat_map(encode).collect(),
                    links: root.links.clone(),
                    paths: root.paths.clone(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(StoredSnapshot {
            candidates: self.candidates,
            roots,
        })
    }

    /// The stored snapshot for `roots` (which the file was keyed by).
    /// `None` when it does not fit them or a value is out of range.
    pub(crate) fn from_stored(stored: StoredSnapshot, roots: &[SourceRoot]) -> Option<Self> {
        if stored.roots.len() != roots.len() {
            return None;
        }
        let roots = stored
            .roots
            .into_iter()
            .zip(roots)
            .map(|(stored, root)| {
                if stored.probes.len() % PROBE_WORDS != 0 {
                    return None;
                }
                let probes = stored
                    .probes
                    .chunks_exact(PROBE_WORDS)
                    .map(|words| {
                        let probe = decode(words)?;
                        let (start, end) = probe.relative;
                        let in_range = start <= end
                            && stored.paths.is_char_boundary(start as usize)
                            && stored.paths.is_char_boundary(end as usize);
                        in_range.then_some(probe)
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(RootSnapshot {
                    root: root.clone(),
                    canonical: stored.canonical,
                    base: stored.base,
                    probes,
                    links: stored.links,
                    paths: stored.paths,
                    trusted: true,
                    racy: false,
                    started: SystemTime::UNIX_EPOCH,
                    racy_window: RACY_WINDOW,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(WalkSnapshot {
            roots,
            candidates: stored.candidates,
        })
    }
}

/// Numbers per stored probe: start, end, flags (1: follow, 2: an error),
/// then length (or the error number), mtime s and ns, ctime s and ns,
/// device and inode. Signed values are stored by their bits.
const PROBE_WORDS: usize = 10;

const FOLLOW: u64 = 1;
const FAILED: u64 = 2;

fn encode(probe: &Probe) -> [u64; PROBE_WORDS] {
    let follow = if probe.follow { FOLLOW } else { 0 };
    let (start, end) = (u64::from(probe.relative.0), u64::from(probe.relative.1));
    match probe.expect {
        Observed::Stamp(s) => [
            start,
            end,
            follow,
            s.len,
            s.modified.0 as u64,
            s.modified.1 as u64,
            s.changed.0 as u64,
            s.changed.1 as u64,
            s.dev,
            s.ino,
        ],
        Observed::Failed(code) => [start, end, follow | FAILED, code as u64, 0, 0, 0, 0, 0, 0],
    }
}

fn decode(words: &[u64]) -> Option<Probe> {
    let &[start, end, flags, len, ms, mns, cs, cns, dev, ino] = words else {
        return None;
    };
    let expect = if flags & FAILED != 0 {
        Observed::Failed(i32::try_from(len as i64).ok()?)
    } else {
        Observed::Stamp(FileStamp {
            len,
            modified: (ms as i64, mns as i64),
            changed: (cs as i64, cns as i64),
            dev,
            ino,
        })
    };
    Some(Probe {
        relative: (u32::try_from(start).ok()?, u32::try_from(end).ok()?),
        follow: flags & FOLLOW != 0,
        expect,
    })
}
