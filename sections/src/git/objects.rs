//! A check of the loose objects the status scan will inflate, before it
//! starts: a loose object cut short (what a crash during `git commit` or
//! `git add` leaves, while `git status` still says clean) makes libgit2 spin
//! forever inflating it, on a worker thread that cannot be stopped.
//! Inflating them here first, bounded, turns that into a note.
//!
//! The scan inflates `HEAD`'s commit and every tree reachable from its root
//! tree (comparing `HEAD` with the index walks them all), and, when it looks
//! for staged renames, the blobs on both sides of the staged changes. Blobs
//! are otherwise never inflated: the working tree is compared with the index
//! by `stat` data and by hashing the file on disk. So this check inflates
//! every loose tree reachable from `HEAD` (reading packed ones through
//! libgit2 to find the loose trees below them) and, when some staged file
//! is added, the loose blobs of the staged changes. Packed objects are not
//! checked: libgit2 reads them through the pack index and stops with an
//! error on a cut-short or garbled pack instead of spinning.
//!
//! The walk also counts the paths `HEAD`'s tree spells out, each folder as
//! often as it is named: a tree naming one folder under ten names, eight
//! levels deep, is nine small objects but 10^8 paths, and comparing it with
//! the index would run for hours, packed or not. So the walk runs whether
//! or not anything is loose.
//!
//! The work is bounded ([`Budget`]): beyond it the status is not scanned and
//! the note says why, so neither this check nor the scan can run unbounded.
//! A check that passed is remembered for the repository's `HEAD` commit and
//! index, so a long-lived host walks the trees once per new commit.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use flate2::read::ZlibDecoder;
use git2::{Delta, Oid, Repository};

use super::racy::GitCache;

/// How much the check may do before it gives up and the status is not
/// scanned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Budget {
    /// The most distinct trees read (200,000: the largest public
    /// repositories have about a tenth of that many folders).
    pub(super) trees: usize,
    /// The most bytes of objects inflated or read in all (128 MiB; the
    /// trees of a 100,000-file checkout come to about 10 MiB).
    pub(super) bytes: u64,
    /// The most bytes of one loose commit or tree (64 MiB), which is held
    /// in memory while it is read; a larger one cannot be checked. Blobs
    /// stream through and are held only to `bytes`.
    pub(super) object_bytes: u64,
    /// The most paths `HEAD`'s tree may spell out, each folder counted as
    /// often as it is reached (2,000,000: more than an index within its
    /// size limit can hold). A tree naming the same folder under many names,
    /// nested, spells out more paths than it stores trees, and comparing it
    /// with the index would run for hours.
    pub(super) paths: u64,
    /// The most loose object names listed (500,000, about 25 MiB of
    /// memory; `git gc --auto` packs them from 6,700).
    pub(super) loose_names: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            trees: 200_000,
            bytes: 128 * 1024 * 1024,
            object_bytes: 64 * 1024 * 1024,
            paths: 2_000_000,
            loose_names: 500_000,
        }
    }
}

/// Why the status scan is not started, if it must not be.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Problem {
    /// A loose object it would inflate is damaged; what and how.
    Damaged(String),
    /// The check ran out of [`Budget`]; which bound.
    OverBudget(String),
}

impl Problem {
    /// The note the status outcome carries.
    pub(super) fn detail(&self) -> &str {
        match self {
            Problem::Damaged(why) | Problem::OverBudget(why) => why,
        }
    }
}

/// Checks the loose objects the status scan of `repo` would inflate for the
/// commit `head`; `None` when the scan may start.
///
/// A check that passed is remembered per repository (see [`Passed`]):
/// objects never change, so the walk is repeated only for a new `HEAD`
/// commit, and the staged-rename blobs only when the index changed too.
/// With `cache`, the trees checked are also remembered in the state folder
/// by id (see [`memo`]), so a new commit, or a new process, inflates only
/// the trees it has not seen. Returns whether the index holds `HEAD`'s tree
/// (`index_tree`, see `index_tree.rs`): then nothing is staged and the two
/// need not be compared.
pub(super) fn check_head(
    repo: &Repository,
    head: Oid,
    budget: &Budget,
    index_tree: Option<Oid>,
    cache: Option<&GitCache>,
) -> Result<bool, Problem> {
    let objects = repo.commondir().join("objects");
    // Taken before the index is read, so a later change shows as one.
    let index = index_stamp(repo);
    // By git folder: linked worktrees share their objects but not their
    // `HEAD` or index.
    let key = repo.path().to_path_buf();
    let earlier = passed::earlier(&key);
    if let Some(earlier) = &earlier
        && earlier.head == head
        && index.is_some()
        && earlier.index == index
    {
        return Ok(index_tree == Some(earlier.walked.root));
    }
    let store = Store::list(&objects, budget)?;
    let mut spent = Spent::default();
    let walked = match earlier {
        Some(earlier) if earlier.head == head => earlier.walked,
        _ => {
            let odb = repo.odb().ok();
            let mut packed = |oid: Oid| -> Option<Vec<u8>> {
                let object = odb.as_ref()?.read(oid).ok()?;
                Some(object.data().to_vec())
            };
            let mut memo = match cache {
                Some(cache) => memo::load(cache, &objects),
                None => TreeMemo::default(),
            };
            let walked = walk_head(&store, head, &mut packed, budget, &mut spent, &mut memo)?;
            if let Some(cache) = cache.filter(|_| memo.dirty) {
                memo::store(cache, &objects, &memo);
            }
            walked
        }
    };
    // With the index holding `HEAD`'s tree nothing is staged, so there is
    // no rename to look for.
    let staged_clean = index_tree == Some(walked.root);
    if !staged_clean
        && let Some(problem) = check_staged_blobs(repo, &store, &walked, budget, &mut spent)
    {
        return Err(problem);
    }
    passed::remember(
        key,
        Passed {
            head,
            index,
            walked,
        },
    );
    Ok(staged_clean)
}

/// Inflates the loose blobs the staged-rename search would read (see
/// [`rename_candidates`]); `None` when all are whole.
fn check_staged_blobs(
    repo: &Repository,
    store: &Store,
    walked: &Walked,
    budget: &Budget,
    spent: &mut Spent,
) -> Option<Problem> {
    if store.loose.is_empty() {
        return None;
    }
    // `None`: libgit2 cannot compare them either; its scan will say why.
    let candidates = rename_candidates(repo, walked.root)?;
    for (oid, path) in candidates {
        if !store.loose.contains_key(&oid) {
            continue;
        }
        match store.inflate(oid, false, budget, spent) {
            Inflated::Whole(_) | Inflated::Absent => {}
            Inflated::Damaged(why) => {
                return Some(Problem::Damaged(format!(
                    "the blob object {oid} of {path} {why}"
                )));
            }
            Inflated::OverBudget(why) => return Some(Problem::OverBudget(why)),
        }
    }
    None
}

/// A check that passed: for which `HEAD` commit and index, and what its
/// walk found.
#[derive(Clone)]
pub(super) struct Passed {
    head: Oid,
    index: Option<IndexStamp>,
    walked: Walked,
}

/// What identifies one version of the index file: its size, modification
/// time and inode. Git rewrites the index to a new file on every change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct IndexStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
}

fn index_stamp(repo: &Repository) -> Option<IndexStamp> {
    let meta = std::fs::metadata(repo.path().join("index")).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some(IndexStamp {
        len: meta.len(),
        modified: meta.modified().ok(),
        inode,
    })
}

/// The checks that passed, one per repository (by its git folder),
/// process-wide like the memory of overrunning workers: a long-lived host
/// reading the same repository every turn walks its trees once per `HEAD`
/// commit.
mod passed {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, PoisonError};

    use super::Passed;

    /// The most repositories remembered; past it the memory starts over.
    const MAX_REPOSITORIES: usize = 64;

    static PASSED: Mutex<BTreeMap<PathBuf, Passed>> = Mutex::new(BTreeMap::new());

    /// The last check that passed of the repository whose git folder is
    /// `git_dir`.
    pub(super) fn earlier(git_dir: &Path) -> Option<Passed> {
        let memory = PASSED.lock().unwrap_or_else(PoisonError::into_inner);
        memory.get(git_dir).cloned()
    }

    /// Remembers a check that passed.
    pub(super) fn remember(git_dir: PathBuf, passed: Passed) {
        let mut memory = PASSED.lock().unwrap_or_else(PoisonError::into_inner);
        if memory.len() >= MAX_REPOSITORIES && !memory.contains_key(&git_dir) {
            memory.clear();
        }
        memory.insert(git_dir, passed);
    }
}

/// The blobs the staged-rename search may inflate, with a path each. It
/// compares files only when there is both a source and a target (libgit2's
/// `git_diff_find_similar`): a target is a staged addition, a source a
/// staged deletion, or a staged change when `diff.renames` asks for copies.
/// Then the blobs of every source and target that is a regular file are
/// candidates (a superset: libgit2 stops after `diff.renameLimit` sources
/// per target, and skips pairs whose sizes are far apart). `None` when
/// libgit2 cannot compare `HEAD` with the index.
fn rename_candidates(repo: &Repository, root: Oid) -> Option<Vec<(Oid, String)>> {
    // Every tree reachable from `root` was checked, so reading them here
    // cannot spin; blobs are compared by id, not read.
    let tree = repo.find_tree(root).ok()?;
    let index = repo.index().ok()?;
    let diff = repo
        .diff_tree_to_index(Some(&tree), Some(&index), None)
        .ok()?;
    let copies = repo
        .config()
        .and_then(|config| config.get_string("diff.renames"))
        .is_ok_and(|rule| rule.eq_ignore_ascii_case("copies") || rule.eq_ignore_ascii_case("copy"));
    let file = |side: git2::DiffFile<'_>| {
        let regular = matches!(
            side.mode(),
            git2::FileMode::Blob | git2::FileMode::BlobExecutable
        );
        regular.then(|| {
            let path = side.path().map(super::status::display).unwrap_or_default();
            (side.id(), path)
        })
    };
    let (mut sources, mut targets) = (Vec::new(), Vec::new());
    for delta in diff.deltas() {
        match delta.status() {
            Delta::Added => targets.extend(file(delta.new_file())),
            Delta::Deleted => sources.extend(file(delta.old_file())),
            Delta::Modified if copies => sources.extend(file(delta.old_file())),
            _ => {}
        }
    }
    if sources.is_empty() || targets.is_empty() {
        return Some(Vec::new());
    }
    sources.append(&mut targets);
    Some(sources)
}

/// The loose objects of a repository: their ids and where each is.
pub(super) struct Store {
    /// Each loose object's id, with the index in `dirs` of the object
    /// folder holding it.
    loose: HashMap<Oid, usize>,
    /// The object folders listed: the repository's, then its alternates.
    dirs: Vec<PathBuf>,
}

/// How much of the [`Budget`] is spent.
#[derive(Default)]
pub(super) struct Spent {
    bytes: u64,
}

/// libgit2 follows alternates this deep.
const MAX_ALTERNATES_DEPTH: usize = 5;

/// The most bytes of an `objects/info/alternates` file read (the preflight
/// refuses a larger one).
const ALTERNATES_BYTES: usize = 64 * 1024;

impl Store {
    /// Lists the loose objects of `objects` and of the object folders its
    /// alternates name (libgit2 reads loose objects from those as well).
    pub(super) fn list(objects: &Path, budget: &Budget) -> Result<Store, Problem> {
        let mut store = Store {
            loose: HashMap::new(),
            dirs: Vec::new(),
        };
        let mut level = vec![objects.to_path_buf()];
        for _ in 0..=MAX_ALTERNATES_DEPTH {
            let mut next = Vec::new();
            for dir in level {
                if store.dirs.contains(&dir) {
                    continue;
                }
                store.dirs.push(dir.clone());
                list_loose(&dir, store.dirs.len() - 1, &mut store.loose, budget)?;
                next.extend(alternates(&dir));
            }
            if next.is_empty() {
                break;
            }
            level = next;
        }
        Ok(store)
    }

    /// What identifies the loose file of `oid` (`None` when it is not
    /// loose): a memory of it holds while this is the same.
    fn stamp(&self, oid: Oid) -> Option<LooseStamp> {
        let meta = std::fs::symlink_metadata(self.path(oid)?).ok()?;
        #[cfg(unix)]
        let (ino, nanos) = {
            use std::os::unix::fs::MetadataExt;
            (meta.ino(), meta.mtime_nsec())
        };
        #[cfg(not(unix))]
        let (ino, nanos) = (0, 0);
        let secs = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        Some(LooseStamp {
            len: meta.len(),
            secs,
            nanos,
            ino,
        })
    }

    /// Where the loose object `oid` is, when it is loose.
    fn path(&self, oid: Oid) -> Option<PathBuf> {
        let dir = self.dirs.get(*self.loose.get(&oid)?)?;
        let hex = oid.to_string();
        Some(dir.join(hex.get(..2)?).join(hex.get(2..)?))
    }

    /// Inflates the loose object `oid`, keeping its body when `keep`.
    fn inflate(&self, oid: Oid, keep: bool, budget: &Budget, spent: &mut Spent) -> Inflated {
        let Some(path) = self.path(oid) else {
            return Inflated::Absent;
        };
        let Ok((file, _)) = bcode_fs::open_regular(&path) else {
            // Gone since it was listed (packed meanwhile) or not a file:
            // libgit2 decides.
            return Inflated::Absent;
        };
        let left = budget.bytes.saturating_sub(spent.bytes);
        // A body kept in memory is held to the per-object limit; one only
        // counted (a blob) streams through and costs time, not memory.
        let limit = if keep { budget.object_bytes } else { u64::MAX };
        let cap = limit.min(left);
        // The header's length is checked against what the stream holds;
        // the header (at most 65 bytes) and a few bytes more than `cap` are
        // read, so a stream longer than its header says shows.
        let mut decoder =
            ZlibDecoder::new(std::io::BufReader::new(file)).take(cap.saturating_add(128));
        let mut header = Vec::new();
        let mut byte = [0u8; 1];
        loop {
            match decoder.read(&mut byte) {
                Ok(0) => return Inflated::Damaged("has no header".to_owned()),
                Ok(_) if byte[0] == 0 => break,
                Ok(_) if header.len() >= 64 => {
                    return Inflated::Damaged("has no header".to_owned());
                }
                Ok(_) => header.push(byte[0]),
                Err(err) => return Inflated::Damaged(format!("cannot be inflated ({err})")),
            }
        }
        let header = String::from_utf8_lossy(&header).into_owned();
        let Some(declared) = header
            .split_once(' ')
            .and_then(|(_, len)| len.parse::<u64>().ok())
        else {
            return Inflated::Damaged(format!("has an unreadable header `{header}`"));
        };
        if declared > cap {
            return Inflated::OverBudget(if declared > limit {
                format!(
                    "the loose object {oid} is {declared} bytes, more than the {} \
                     checked before a status scan",
                    size(budget.object_bytes)
                )
            } else {
                over_bytes(budget)
            });
        }
        let mut body = Vec::new();
        let read = if keep {
            decoder.read_to_end(&mut body).map(|n| n as u64)
        } else {
            std::io::copy(&mut decoder, &mut std::io::sink())
        };
        let got = match read {
            Ok(got) => got,
            Err(err) => return Inflated::Damaged(format!("cannot be inflated ({err})")),
        };
        spent.bytes += got;
        if got < declared {
            return Inflated::Damaged(format!(
                "is cut short: {got} of its {declared} bytes are there"
            ));
        }
        if got > declared {
            return Inflated::Damaged(format!(
                "holds more than the {declared} bytes its header says"
            ));
        }
        Inflated::Whole(body)
    }
}

fn over_bytes(budget: &Budget) -> String {
    format!(
        "the objects to check before a status scan come to more than {}",
        size(budget.bytes)
    )
}

/// `bytes` in MiB when a whole number of them, else in bytes.
fn size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// Adds the loose objects of the object folder `dir` (number `index` of
/// the store's folders) to `loose`.
fn list_loose(
    dir: &Path,
    index: usize,
    loose: &mut HashMap<Oid, usize>,
    budget: &Budget,
) -> Result<(), Problem> {
    let Ok(fanouts) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    let mut id = [0u8; 20];
    for fanout in fanouts.flatten() {
        let name = fanout.file_name();
        let Some(first) = hex_byte(name.as_encoded_bytes()).filter(|_| name.len() == 2) else {
            continue;
        };
        let Ok(files) = std::fs::read_dir(fanout.path()) else {
            continue;
        };
        for file in files.flatten() {
            let name = file.file_name();
            let name = name.as_encoded_bytes();
            // Decoded in place: a repository may hold many loose objects.
            if name.len() != 38 || !decode_rest(name, &mut id) {
                continue;
            }
            id[0] = first;
            let Ok(oid) = Oid::from_bytes(&id) else {
                continue;
            };
            if loose.len() >= budget.loose_names {
                return Err(Problem::OverBudget(format!(
                    "the repository holds more than {} loose objects, more than are \
                     checked before a status scan",
                    budget.loose_names
                )));
            }
            // The first folder listed wins, as libgit2 looks in its own
            // objects before the alternates.
            loose.entry(oid).or_insert(index);
        }
    }
    Ok(())
}

/// The byte two hex digits at the start of `hex` spell.
fn hex_byte(hex: &[u8]) -> Option<u8> {
    let digit = |b: u8| (b as char).to_digit(16);
    let (hi, lo) = (digit(*hex.first()?)?, digit(*hex.get(1)?)?);
    u8::try_from(hi * 16 + lo).ok()
}

/// Decodes the 38 hex digits of a loose object's file name into `id[1..]`;
/// `false` when it is not one.
fn decode_rest(name: &[u8], id: &mut [u8; 20]) -> bool {
    for (slot, pair) in id.iter_mut().skip(1).zip(name.chunks(2)) {
        match hex_byte(pair) {
            Some(byte) => *slot = byte,
            None => return false,
        }
    }
    true
}

/// The object folders `dir`'s `info/alternates` names (relative ones
/// relative to `dir`, as libgit2 reads them).
fn alternates(dir: &Path) -> Vec<PathBuf> {
    let Ok(bytes) = bcode_fs::read_bounded(&dir.join("info/alternates"), ALTERNATES_BYTES) else {
        return Vec::new();
    };
    String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| dir.join(line))
        .collect()
}

enum Inflated {
    /// Inflated in full, its header's length matching: the body, when kept.
    Whole(Vec<u8>),
    /// No loose file for it (packed, or not there at all).
    Absent,
    /// What is wrong with it.
    Damaged(String),
    /// It is larger than the budget lets the check read; why.
    OverBudget(String),
}

/// What [`walk_head`] found.
#[derive(Clone)]
pub(super) struct Walked {
    /// `HEAD`'s root tree.
    root: Oid,
}

/// One tree read during the walk.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Node {
    /// Entries that are not folders (files, links, submodules).
    files: u64,
    /// The folders it holds, once per entry.
    subtrees: Vec<Oid>,
    /// Their names, in the same order.
    names: Vec<Vec<u8>>,
}

/// Checks the commit `head` and every tree reachable from its root tree:
/// loose ones are inflated here, packed ones read through `packed` (which
/// answers `None` for an object it does not have).
pub(super) fn walk_head(
    store: &Store,
    head: Oid,
    packed: &mut dyn FnMut(Oid) -> Option<Vec<u8>>,
    budget: &Budget,
    spent: &mut Spent,
    memo: &mut TreeMemo,
) -> Result<Walked, Problem> {
    let root = head_tree(store, head, packed, budget, spent)?;
    let mut nodes: HashMap<Oid, Node> = HashMap::new();
    let mut stack = vec![(root, String::new())];
    while let Some((oid, path)) = stack.pop() {
        if nodes.contains_key(&oid) {
            continue;
        }
        if nodes.len() >= budget.trees {
            return Err(Problem::OverBudget(format!(
                "HEAD's tree holds more than {} folders, more than are checked before a \
                 status scan",
                budget.trees
            )));
        }
        // A tree checked before is not inflated again while its loose file
        // (if any) is the one checked.
        let loose = store.stamp(oid);
        if let Some(node) = memo.get(oid, loose.as_ref()) {
            for (sub, name) in node.subtrees.iter().zip(&node.names) {
                if !nodes.contains_key(sub) {
                    stack.push((*sub, child_path(&path, name)));
                }
            }
            memo.keep(oid);
            nodes.insert(oid, node);
            continue;
        }
        let body = match store.inflate(oid, true, budget, spent) {
            Inflated::Whole(body) => body,
            Inflated::Absent => match packed(oid) {
                Some(body) => {
                    spent.bytes += body.len() as u64;
                    if spent.bytes > budget.bytes {
                        return Err(Problem::OverBudget(over_bytes(budget)));
                    }
                    body
                }
                // Missing: libgit2's scan fails on it with an error.
                None => {
                    nodes.insert(
                        oid,
                        Node {
                            files: 0,
                            subtrees: Vec::new(),
                            names: Vec::new(),
                        },
                    );
                    continue;
                }
            },
            Inflated::Damaged(why) => {
                let what = if path.is_empty() {
                    "the HEAD tree object".to_owned()
                } else {
                    format!("the tree object of {path} in HEAD,")
                };
                return Err(Problem::Damaged(format!("{what} {oid} {why}")));
            }
            Inflated::OverBudget(why) => return Err(Problem::OverBudget(why)),
        };
        let mut node = Node {
            files: 0,
            subtrees: Vec::new(),
            names: Vec::new(),
        };
        for entry in TreeEntries(&body) {
            if entry.is_tree {
                node.subtrees.push(entry.oid);
                node.names.push(entry.name.to_vec());
                if !nodes.contains_key(&entry.oid) {
                    stack.push((entry.oid, child_path(&path, entry.name)));
                }
            } else {
                node.files += 1;
            }
        }
        memo.insert(oid, node.clone(), loose);
        nodes.insert(oid, node);
    }
    if spelled_out(&nodes, root, budget.paths) > budget.paths {
        return Err(Problem::OverBudget(format!(
            "HEAD's tree spells out more than {} paths, more than a status scan is \
             started for",
            budget.paths
        )));
    }
    Ok(Walked { root })
}

/// The path of the folder `name` inside `parent` (`""` for the root).
fn child_path(parent: &str, name: &[u8]) -> String {
    let name = String::from_utf8_lossy(name);
    if parent.is_empty() {
        name.into_owned()
    } else {
        format!("{parent}/{name}")
    }
}

/// The root tree of the commit `head`, reading it (and, for a `HEAD` that
/// names an annotated tag, the tags on the way) as the walk reads trees.
fn head_tree(
    store: &Store,
    head: Oid,
    packed: &mut dyn FnMut(Oid) -> Option<Vec<u8>>,
    budget: &Budget,
    spent: &mut Spent,
) -> Result<Oid, Problem> {
    /// How many tags are peeled on the way to the commit.
    const MAX_TAGS: usize = 5;
    let mut oid = head;
    for _ in 0..=MAX_TAGS {
        let body = match store.inflate(oid, true, budget, spent) {
            Inflated::Whole(body) => body,
            Inflated::Absent => packed(oid).ok_or_else(|| {
                // Neither loose nor readable: libgit2's scan fails on it too.
                Problem::Damaged(format!("the HEAD commit object {oid} cannot be read"))
            })?,
            Inflated::Damaged(why) => {
                return Err(Problem::Damaged(format!(
                    "the HEAD commit object {oid} {why}"
                )));
            }
            Inflated::OverBudget(why) => return Err(Problem::OverBudget(why)),
        };
        // A commit starts with its tree, a tag with the object it names.
        let first = std::str::from_utf8(body.get(..47).unwrap_or(&body))
            .unwrap_or("")
            .to_owned();
        let named = |prefix: &str| {
            first
                .strip_prefix(prefix)
                .and_then(|rest| rest.get(..40))
                .and_then(|hex| Oid::from_str(hex).ok())
        };
        if let Some(tree) = named("tree ") {
            return Ok(tree);
        }
        match named("object ") {
            Some(next) => oid = next,
            None => break,
        }
    }
    Err(Problem::Damaged(format!(
        "the HEAD commit object {head} names no tree"
    )))
}

/// How many paths the tree `root` spells out, each folder counted once per
/// entry naming it; stops counting past `cap`.
fn spelled_out(nodes: &HashMap<Oid, Node>, root: Oid, cap: u64) -> u64 {
    // Post-order without recursion: a deeply nested tree must not overflow
    // the stack.
    let mut counts: HashMap<Oid, u64> = HashMap::new();
    let mut stack = vec![(root, false)];
    while let Some((oid, children_done)) = stack.pop() {
        if counts.contains_key(&oid) {
            continue;
        }
        let Some(node) = nodes.get(&oid) else {
            counts.insert(oid, 0);
            continue;
        };
        if children_done {
            let mut total = node.files;
            for sub in &node.subtrees {
                total = total
                    .saturating_add(1)
                    .saturating_add(counts.get(sub).copied().unwrap_or(0))
                    .min(cap.saturating_add(1));
            }
            counts.insert(oid, total);
        } else {
            stack.push((oid, true));
            for sub in &node.subtrees {
                if !counts.contains_key(sub) {
                    stack.push((*sub, false));
                }
            }
        }
    }
    counts.get(&root).copied().unwrap_or(0)
}

/// One entry of a tree object.
struct TreeEntry<'a> {
    name: &'a [u8],
    oid: Oid,
    is_tree: bool,
}

/// The entries of a tree object's body (`<mode> <name>\0<20-byte id>`
/// each); stops at the first malformed one (libgit2 then reports the tree
/// as corrupt).
struct TreeEntries<'a>(&'a [u8]);

impl<'a> Iterator for TreeEntries<'a> {
    type Item = TreeEntry<'a>;

    fn next(&mut self) -> Option<TreeEntry<'a>> {
        let space = self.0.iter().position(|&b| b == b' ')?;
        let mode = self.0.get(..space)?;
        let rest = self.0.get(space + 1..)?;
        let nul = rest.iter().position(|&b| b == 0)?;
        let name = rest.get(..nul)?;
        let oid = Oid::from_bytes(rest.get(nul + 1..nul + 21)?).ok()?;
        self.0 = rest.get(nul + 21..)?;
        Some(TreeEntry {
            name,
            oid,
            is_tree: mode == b"40000" || mode == b"040000",
        })
    }
}

/// What identifies one loose object file: a tree remembered as checked
/// holds only while its file is the one checked (or it is packed now).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LooseStamp {
    len: u64,
    secs: u64,
    nanos: i64,
    ino: u64,
}

/// Trees checked before, by id: what the walk needs of each (its folders
/// and how many other entries), so a tree is not inflated again while its
/// id is the same (see [`memo`] for where it is kept).
#[derive(Default)]
pub(super) struct TreeMemo {
    nodes: HashMap<Oid, (Node, Option<LooseStamp>)>,
    /// The trees this walk reached; only these are stored again.
    reached: HashSet<Oid>,
    /// Whether a tree was inflated (so the memory is worth storing).
    dirty: bool,
}

impl TreeMemo {
    /// The remembered tree `oid`, when its loose file (`loose`, `None`
    /// when packed now) is still the one checked.
    fn get(&self, oid: Oid, loose: Option<&LooseStamp>) -> Option<Node> {
        let (node, checked) = self.nodes.get(&oid)?;
        match loose {
            None => Some(node.clone()),
            Some(now) => (checked.as_ref() == Some(now)).then(|| node.clone()),
        }
    }

    fn keep(&mut self, oid: Oid) {
        self.reached.insert(oid);
    }

    fn insert(&mut self, oid: Oid, node: Node, loose: Option<LooseStamp>) {
        self.nodes.insert(oid, (node, loose));
        self.reached.insert(oid);
        self.dirty = true;
    }
}

/// The tree memory in the state folder: one file per object folder,
/// written to a random name and renamed, read bounded and never through a
/// link (see `bcode_fs::StateDir`); anything wrong with it means an empty
/// memory.
pub(super) mod memo {
    use std::collections::HashMap;
    use std::hash::{Hash, Hasher};
    use std::io::{Read, Write};
    use std::path::Path;

    use bcode_fs::StateDir;
    use git2::Oid;

    use super::{LooseStamp, Node, TreeMemo};
    use crate::git::racy::GitCache;

    const MAGIC: &[u8] = b"bcode-git-trees-1\n";
    /// The most bytes read or written.
    const MAX_BYTES: u64 = 64 * 1024 * 1024;

    pub(super) fn name(objects: &Path) -> (String, Vec<u8>) {
        let key = objects.as_os_str().as_encoded_bytes().to_vec();
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut hasher);
        (format!("trees-{:016x}.bin", hasher.finish()), key)
    }

    /// The memory for the object folder `objects`.
    pub(in crate::git) fn load(cache: &GitCache, objects: &Path) -> TreeMemo {
        let (name, key) = name(objects);
        let Ok(dir) = StateDir::existing(&cache.dir) else {
            return TreeMemo::default();
        };
        let Ok((file, len)) = dir.open_file(&name) else {
            return TreeMemo::default();
        };
        if len > MAX_BYTES {
            return TreeMemo::default();
        }
        let mut bytes = Vec::new();
        if file.take(MAX_BYTES).read_to_end(&mut bytes).is_err() {
            return TreeMemo::default();
        }
        TreeMemo {
            nodes: parse(&bytes, &key).unwrap_or_default(),
            ..TreeMemo::default()
        }
    }

    type Nodes = HashMap<Oid, (Node, Option<LooseStamp>)>;

    struct Reader<'a>(&'a [u8]);

    impl Reader<'_> {
        fn take(&mut self, n: usize) -> Option<&[u8]> {
            let (head, rest) = self.0.split_at_checked(n)?;
            self.0 = rest;
            Some(head)
        }
        fn u64(&mut self) -> Option<u64> {
            Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
        }
        fn oid(&mut self) -> Option<Oid> {
            Oid::from_bytes(self.take(20)?).ok()
        }
    }

    pub(super) fn parse(bytes: &[u8], key: &[u8]) -> Option<Nodes> {
        let mut r = Reader(bytes);
        if r.take(MAGIC.len())? != MAGIC {
            return None;
        }
        let key_len = usize::try_from(r.u64()?).ok()?;
        if r.take(key_len)? != key {
            return None;
        }
        let count = usize::try_from(r.u64()?).ok()?;
        // A record takes at least 60 bytes: a lying count stops here.
        if count > bytes.len() / 60 {
            return None;
        }
        let mut nodes = Nodes::with_capacity(count);
        for _ in 0..count {
            let oid = r.oid()?;
            let files = r.u64()?;
            let loose = match r.take(1)? {
                [0] => None,
                [1] => Some(LooseStamp {
                    len: r.u64()?,
                    secs: r.u64()?,
                    nanos: i64::from_le_bytes(r.take(8)?.try_into().ok()?),
                    ino: r.u64()?,
                }),
                _ => return None,
            };
            let subtrees = usize::try_from(r.u64()?).ok()?;
            if subtrees > r.0.len() / 28 {
                return None;
            }
            let mut node = Node {
                files,
                subtrees: Vec::with_capacity(subtrees),
                names: Vec::with_capacity(subtrees),
            };
            for _ in 0..subtrees {
                node.subtrees.push(r.oid()?);
                let len = usize::try_from(r.u64()?).ok()?;
                node.names.push(r.take(len)?.to_vec());
            }
            nodes.insert(oid, (node, loose));
        }
        r.0.is_empty().then_some(nodes)
    }

    /// Stores the trees the last walk reached. Best effort.
    pub(in crate::git) fn store(cache: &GitCache, objects: &Path, memo: &TreeMemo) {
        let (name, key) = name(objects);
        let Ok(dir) = StateDir::open(&cache.dir) else {
            return;
        };
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(key.len() as u64).to_le_bytes());
        out.extend_from_slice(&key);
        let mut reached: Vec<&Oid> = memo.reached.iter().collect();
        reached.sort();
        let records: Vec<_> = reached
            .into_iter()
            .filter_map(|oid| Some((oid, memo.nodes.get(oid)?)))
            .collect();
        out.extend_from_slice(&(records.len() as u64).to_le_bytes());
        for (oid, (node, loose)) in records {
            out.extend_from_slice(oid.as_bytes());
            out.extend_from_slice(&node.files.to_le_bytes());
            match loose {
                None => out.push(0),
                Some(stamp) => {
                    out.push(1);
                    out.extend_from_slice(&stamp.len.to_le_bytes());
                    out.extend_from_slice(&stamp.secs.to_le_bytes());
                    out.extend_from_slice(&stamp.nanos.to_le_bytes());
                    out.extend_from_slice(&stamp.ino.to_le_bytes());
                }
            }
            out.extend_from_slice(&(node.subtrees.len() as u64).to_le_bytes());
            for (sub, name) in node.subtrees.iter().zip(&node.names) {
                out.extend_from_slice(sub.as_bytes());
                out.extend_from_slice(&(name.len() as u64).to_le_bytes());
                out.extend_from_slice(name);
            }
        }
        if out.len() as u64 > MAX_BYTES {
            return;
        }
        let _ = dir.replace(&name, &mut |file| file.write_all(&out));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Writes a loose object of `kind` with `body` into `objects`, its
    /// compressed form cut short by `cut` bytes; returns its id.
    fn write_object(objects: &Path, kind: &str, body: &[u8], cut: usize) -> Oid {
        let mut raw = format!("{kind} {}\0", body.len()).into_bytes();
        raw.extend_from_slice(body);
        let oid = Oid::hash_object(git2::ObjectType::from_str(kind).unwrap(), body).unwrap();
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&raw).unwrap();
        let mut compressed = encoder.finish().unwrap();
        compressed.truncate(compressed.len().saturating_sub(cut));
        let hex = oid.to_string();
        let path = objects.join(&hex[..2]).join(&hex[2..]);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, compressed).unwrap();
        oid
    }

    fn tree_body(entries: &[(&str, &str, Oid)]) -> Vec<u8> {
        let mut body = Vec::new();
        for (mode, name, oid) in entries {
            body.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            body.extend_from_slice(oid.as_bytes());
        }
        body
    }

    fn commit_body(tree: Oid) -> Vec<u8> {
        format!("tree {tree}\nauthor a <a> 0 +0000\n\nmessage\n").into_bytes()
    }

    fn walk(objects: &Path, head: Oid, budget: &Budget) -> Result<Walked, Problem> {
        let store = Store::list(objects, budget).unwrap();
        walk_head(
            &store,
            head,
            &mut |_| None,
            budget,
            &mut Spent::default(),
            &mut TreeMemo::default(),
        )
    }

    #[test]
    fn whole_objects_pass_and_cut_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path();
        let blob = write_object(objects, "blob", b"b\n", 0);
        let deep = write_object(objects, "tree", &tree_body(&[("100644", "b.txt", blob)]), 0);
        let sub = write_object(objects, "tree", &tree_body(&[("40000", "deep", deep)]), 0);
        let root = write_object(objects, "tree", &tree_body(&[("40000", "sub", sub)]), 0);
        let head = write_object(objects, "commit", &commit_body(root), 0);
        let budget = Budget::default();
        let walked = walk(objects, head, &budget).unwrap();
        assert_eq!(walked.root, root);

        // The deepest tree cut short, as a crash leaves it.
        let body = tree_body(&[("100644", "b.txt", blob)]);
        write_object(objects, "tree", &body, 6);
        let Err(Problem::Damaged(why)) = walk(objects, head, &budget) else {
            panic!("the cut tree passed");
        };
        assert!(
            why.starts_with(&format!("the tree object of sub/deep in HEAD, {deep} ")),
            "{why}"
        );

        write_object(objects, "commit", &commit_body(root), 10);
        let Err(Problem::Damaged(why)) = walk(objects, head, &budget) else {
            panic!("the cut commit passed");
        };
        assert!(
            why.starts_with(&format!("the HEAD commit object {head} ")),
            "{why}"
        );
    }

    #[test]
    fn packed_trees_are_read_through_the_reader() {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path();
        let blob = Oid::hash_object(git2::ObjectType::Blob, b"b\n").unwrap();
        let loose = write_object(objects, "tree", &tree_body(&[("100644", "b", blob)]), 3);
        // A packed root tree naming a cut-short loose subtree.
        let root_body = tree_body(&[("40000", "sub", loose)]);
        let root = Oid::hash_object(git2::ObjectType::Tree, &root_body).unwrap();
        let head = write_object(objects, "commit", &commit_body(root), 0);
        let budget = Budget::default();
        let store = Store::list(objects, &budget).unwrap();
        let mut packed = |oid: Oid| (oid == root).then(|| root_body.clone());
        let got = walk_head(
            &store,
            head,
            &mut packed,
            &budget,
            &mut Spent::default(),
            &mut TreeMemo::default(),
        );
        assert!(
            matches!(&got, Err(Problem::Damaged(why)) if why.starts_with("the tree object of sub in HEAD,")),
            "{:?}",
            got.err()
        );
    }

    #[test]
    fn budgets_end_the_walk_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path();
        let blob = write_object(objects, "blob", b"b\n", 0);
        // Ten levels, each naming the one below ten times: 10^10 paths
        // from eleven trees.
        let mut tree = write_object(objects, "tree", &tree_body(&[("100644", "b", blob)]), 0);
        for _ in 0..10 {
            let names: Vec<String> = (0..10).map(|i| format!("d{i}")).collect();
            let entries: Vec<_> = names.iter().map(|n| ("40000", n.as_str(), tree)).collect();
            tree = write_object(objects, "tree", &tree_body(&entries), 0);
        }
        let head = write_object(objects, "commit", &commit_body(tree), 0);
        let budget = Budget::default();
        assert_eq!(
            walk(objects, head, &budget).err(),
            Some(Problem::OverBudget(
                "HEAD's tree spells out more than 2000000 paths, more than a status scan is \
                 started for"
                    .to_owned()
            ))
        );
        let few = Budget { trees: 5, ..budget };
        assert_eq!(
            walk(objects, head, &few).err(),
            Some(Problem::OverBudget(
                "HEAD's tree holds more than 5 folders, more than are checked before a \
                 status scan"
                    .to_owned()
            ))
        );
        let small = Budget {
            object_bytes: 16,
            ..budget
        };
        let Err(Problem::OverBudget(why)) = walk(objects, head, &small) else {
            panic!("a commit over the object limit passed");
        };
        assert!(
            why.ends_with("more than the 16 bytes checked before a status scan"),
            "{why}"
        );
    }

    #[test]
    fn missing_objects_are_left_to_libgit2() {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path();
        let missing = Oid::hash_object(git2::ObjectType::Tree, b"").unwrap();
        let head = write_object(objects, "commit", &commit_body(missing), 0);
        let walked = walk(objects, head, &Budget::default()).unwrap();
        assert_eq!(walked.root, missing);
    }

    #[test]
    fn a_head_naming_a_tag_is_peeled_to_its_commit() {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path();
        let root = write_object(objects, "tree", b"", 0);
        let commit = write_object(objects, "commit", &commit_body(root), 0);
        let tag = format!("object {commit}\ntype commit\ntag v1\n\nmessage\n");
        let tag = write_object(objects, "tag", tag.as_bytes(), 0);
        assert_eq!(walk(objects, tag, &Budget::default()).unwrap().root, root);
    }

    #[test]
    fn a_passed_check_is_remembered_with_its_head_and_index() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("a.txt")).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("a", "a@example.com").unwrap();
        let head = repo
            .commit(Some("HEAD"), &sig, &sig, "m", &tree, &[])
            .unwrap();
        assert_eq!(
            check_head(&repo, head, &Budget::default(), Some(tree.id()), None),
            Ok(true)
        );
        let earlier = passed::earlier(repo.path()).unwrap();
        assert_eq!(earlier.head, head);
        assert_eq!(earlier.index, index_stamp(&repo));
        assert_eq!(earlier.walked.root, tree.id());
    }

    /// A tree checked once is not inflated again while its id and its
    /// loose file are the same; the memory survives a round trip through
    /// the state folder; a loose tree cut short after it was remembered is
    /// inflated again and named.
    #[test]
    fn checked_trees_are_remembered_by_id_until_their_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path().join("objects");
        let blob = write_object(&objects, "blob", b"b\n", 0);
        let deep_body = tree_body(&[("100644", "b.txt", blob)]);
        let deep = write_object(&objects, "tree", &deep_body, 0);
        let sub = write_object(&objects, "tree", &tree_body(&[("40000", "deep", deep)]), 0);
        let root = write_object(&objects, "tree", &tree_body(&[("40000", "sub", sub)]), 0);
        let head = write_object(&objects, "commit", &commit_body(root), 0);
        let budget = Budget::default();
        let cache = GitCache {
            dir: dir.path().join("cache"),
            racy_window: std::time::Duration::ZERO,
            user_git_files: Vec::new(),
        };
        let walk_with = |memo: &mut TreeMemo| {
            let store = Store::list(&objects, &budget).unwrap();
            let mut spent = Spent::default();
            let walked = walk_head(&store, head, &mut |_| None, &budget, &mut spent, memo);
            (walked.map(|w| w.root), spent.bytes)
        };
        let mut memo = TreeMemo::default();
        let (first, first_bytes) = walk_with(&mut memo);
        assert_eq!(first, Ok(root));
        assert!(memo.dirty);
        memo::store(&cache, &objects, &memo);
        let mut memo = memo::load(&cache, &objects);
        assert_eq!(memo.nodes.len(), 3);
        let (again, again_bytes) = walk_with(&mut memo);
        assert_eq!(again, Ok(root));
        // Only the commit is inflated again; no tree.
        assert!(!memo.dirty);
        assert!(again_bytes < first_bytes, "{again_bytes} vs {first_bytes}");
        assert_eq!(again_bytes, commit_body(root).len() as u64);
        // The deepest tree cut short behind the memory's back.
        write_object(&objects, "tree", &deep_body, 6);
        let (damaged, _) = walk_with(&mut memo);
        let Err(Problem::Damaged(why)) = damaged else {
            panic!("the cut tree passed: {damaged:?}");
        };
        assert!(
            why.starts_with(&format!("the tree object of sub/deep in HEAD, {deep} ")),
            "{why}"
        );
        // A corrupt memory file is an empty memory.
        let (name, _) = memo::name(&objects);
        std::fs::write(cache.dir.join(name), b"bcode-git-trees-1\nnonsense").unwrap();
        assert!(memo::load(&cache, &objects).nodes.is_empty());
    }
}
