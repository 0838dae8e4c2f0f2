//! The status scan, on several threads when the tree is large.
//!
//! libgit2 compares the working tree with the index on one thread, one
//! `lstat` per file, while `git status` spreads that over the cores. For a
//! large tree the scan is therefore split: one run compares `HEAD` with the
//! index over the whole repository (so staged renames are found whatever
//! folders they cross; the first helper thread does it while the split is
//! planned), and the working tree is cut into groups of folders
//! and files that together cover every index entry and every entry on
//! disk, each compared with the index on its own thread (libgit2 prunes
//! the walk to a literal path list). The results are merged by path and
//! ordered as libgit2 orders one combined run. Anything unusual (a
//! submodule, a case-insensitive index, a path that is not UTF-8, a small
//! tree) takes the single combined run.

use std::collections::BTreeMap;
use std::path::Path;

use git2::{Repository, Status, StatusOptions, StatusShow};

use super::index_file::{GITLINK, IndexFile};
use super::racy::IndexCopy;
use super::{EntryState, StatusEntry, StatusFacts};

/// How the scan may be split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusSplit {
    /// Index entries from which the scan is split (0: always split).
    pub min_entries: usize,
    /// Working-tree groups to compare in parallel.
    pub groups: usize,
}

impl Default for StatusSplit {
    /// Measured (2026-12-05, `benches/notes/2026-12-05-git-speed.md`): each
    /// helper thread loads and checksums the whole index itself, which at
    /// every size costs more instructions than the share of the scan it
    /// takes over (at 100,001 files 760 M against 270 M for the whole
    /// working-tree comparison). On two cores the split lost in CPU
    /// (+20-27%) and in wall time (paired medians 1.13x at 100,001 files,
    /// 1.56x at 25,001, load 8-16); it won wall time in one run only, under
    /// a load of 15-18 (0.60x at 100,001: a larger share of a crowded
    /// scheduler, not work saved). So with two cores or
    /// fewer it is off; with more, a second thread may find an idle core
    /// for half the `lstat`s (not measured here): two groups from 50,000
    /// entries, never more (each group past two adds a whole index load
    /// for a smaller share of the scan).
    fn default() -> Self {
        StatusSplit {
            min_entries: 50_000,
            // The one worker count of the project (asked once per process).
            groups: if bcode_fs::worker_threads() > 2 { 2 } else { 1 },
        }
    }
}

/// What is known before the scan starts.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Known<'a> {
    /// `HEAD` and the index hold the same tree (see `index_tree.rs`): they
    /// need not be compared.
    pub(super) staged_clean: bool,
    /// A copy of the index to read instead (see `racy.rs`).
    pub(super) copy: Option<&'a IndexCopy>,
    /// What the index holds, when it was read before the scan.
    pub(super) shape: Option<&'a IndexShape>,
    /// Every gitlink of the index names a submodule that is not checked
    /// out (see [`IndexShape::unpopulated`]).
    pub(super) unpopulated: bool,
}

/// What the scan's plan needs to know of the index, from a reading of it
/// made before the scan.
#[derive(Debug)]
pub(super) struct IndexShape {
    /// How many entries it has.
    pub(super) entries: usize,
    /// The paths of its gitlinks (as text, lossily), in index order.
    pub(super) gitlinks: Vec<String>,
}

impl IndexShape {
    pub(super) fn of(index: &IndexFile) -> IndexShape {
        IndexShape {
            entries: index.entries.len(),
            gitlinks: index
                .entries
                .iter()
                .filter(|entry| entry.mode == GITLINK)
                .map(|entry| String::from_utf8_lossy(index.path(entry)).into_owned())
                .collect(),
        }
    }

    /// Whether the index has gitlinks and every one of them is a
    /// submodule that is not checked out: its path in `workdir` is a real
    /// folder (not a link) with no `.git` in it. libgit2 finds such a
    /// submodule unchanged (its working tree "uninitialized") whatever it
    /// is told, but only after building its submodule cache, a walk of
    /// every tree of `HEAD`. A gitlink whose path is not valid UTF-8 (kept
    /// here lossily) does not count as one.
    pub(super) fn unpopulated(&self, workdir: &Path) -> bool {
        !self.gitlinks.is_empty()
            && self.gitlinks.iter().all(|gitlink| {
                let folder = workdir.join(gitlink);
                !gitlink.contains(char::REPLACEMENT_CHARACTER)
                    && std::fs::symlink_metadata(&folder).is_ok_and(|meta| meta.is_dir())
                    && std::fs::symlink_metadata(folder.join(".git")).is_err()
            })
    }

    /// Whether [`plan`] would find no split for this index: too few
    /// entries, or a submodule.
    fn unsplittable(&self, split: StatusSplit) -> bool {
        self.entries < split.min_entries.max(1) || !self.gitlinks.is_empty()
    }
}

impl Known<'_> {
    /// Makes `repo` read the copy of the index, when there is one.
    fn install(&self, repo: &Repository) -> Result<(), git2::Error> {
        match self.copy {
            Some(copy) => copy.install(repo),
            None => Ok(()),
        }
    }

    /// What the combined run compares.
    fn show(&self) -> StatusShow {
        if self.staged_clean {
            StatusShow::Workdir
        } else {
            StatusShow::IndexAndWorkdir
        }
    }

    /// The combined run's options. Submodules are left out when that
    /// cannot change the answer: only the working tree is compared (so no
    /// staged change of a gitlink can be hidden) and every gitlink is a
    /// submodule that is not checked out, which libgit2 reports unchanged
    /// either way; it then skips its submodule cache (a walk of all of
    /// `HEAD`, 30% of a read of git/git).
    fn combined_options(&self) -> StatusOptions {
        let mut opts = options(self.show());
        if self.staged_clean && self.unpopulated {
            opts.exclude_submodules(true);
        }
        opts
    }
}

/// The status of `repo`'s working tree, keeping at most `max_entries`.
pub fn git_status(
    repo: &Repository,
    max_entries: usize,
    split: StatusSplit,
) -> Result<StatusFacts, git2::Error> {
    status_with(repo, max_entries, split, Known::default())
}

/// [`git_status`] with what is known before the scan.
pub(super) fn status_with(
    repo: &Repository,
    max_entries: usize,
    split: StatusSplit,
    known: Known<'_>,
) -> Result<StatusFacts, git2::Error> {
    known.install(repo)?;
    let changes = scan(repo, split, known)?;
    let mut facts = StatusFacts::default();
    for change in changes {
        let state = state_of(change.flags);
        facts.total.add(state);
        if facts.entries.len() >= max_entries {
            facts.capped = true;
            continue;
        }
        facts.entries.push(StatusEntry {
            code: code_of(change.flags),
            path: change.display,
            state,
        });
    }
    Ok(facts)
}

/// Every index entry takes at least this many bytes on disk (62 plus its
/// path), so an index file smaller than this many bytes per entry of
/// [`StatusSplit::min_entries`] cannot be split, and the helpers are only
/// started for a larger one.
const INDEX_BYTES_PER_ENTRY: u64 = 60;

/// The combined run, or the split one when [`plan`] finds a split. Helper
/// threads open their own repository and load its index while the plan is
/// made on this thread (both read the same index; doing it one after the
/// other was a quarter of the scan), then wait for their group. The first
/// helper also compares `HEAD` with the index before it waits: that run
/// needs no plan, so it overlaps the planning instead of following it.
fn scan(
    repo: &Repository,
    split: StatusSplit,
    known: Known<'_>,
) -> Result<Vec<Change>, git2::Error> {
    // Known not to split: no helper thread opens the repository and loads
    // its index for nothing.
    if known.shape.is_some_and(|shape| shape.unsplittable(split)) {
        return combined_scan(repo, known);
    }
    let likely = split.groups >= 2
        && std::fs::metadata(repo.path().join("index")).is_ok_and(|meta| {
            meta.len() >= (split.min_entries as u64).saturating_mul(INDEX_BYTES_PER_ENTRY)
        });
    if !likely {
        // Every index entry takes more than 60 bytes on disk, so a smaller
        // index has fewer entries than the plan would split.
        return combined_scan(repo, known);
    }
    let git_dir = repo.path().to_path_buf();
    std::thread::scope(|scope| {
        let mut senders = Vec::new();
        let mut helpers = Vec::new();
        for helper in 1..split.groups {
            let (tx, rx) = std::sync::mpsc::channel::<Vec<String>>();
            let git_dir = &git_dir;
            senders.push(tx);
            helpers.push(scope.spawn(move || -> HelperResult {
                let repo = Repository::open(git_dir)?;
                known.install(&repo)?;
                repo.index()?;
                let staged = if helper == 1 && !known.staged_clean {
                    Some(staged_run(&repo)?)
                } else {
                    None
                };
                // A closed channel means no split: this thread's work,
                // the staged run included, is not needed.
                let Ok(group) = rx.recv() else {
                    return Ok(Vec::new());
                };
                let mut done: Vec<Changes> = staged.into_iter().collect();
                done.push(run_group(&group, &repo)?);
                Ok(done)
            }));
        }
        let Some(groups) = plan(repo, split) else {
            drop(senders);
            return combined_scan(repo, known);
        };
        let Some((first, rest)) = groups.split_first() else {
            drop(senders);
            return combined_scan(repo, known);
        };
        for (sender, group) in senders.into_iter().zip(rest) {
            // A helper that died is noticed when joined.
            let _ = sender.send(group.clone());
        }
        let mut results = vec![run_group(first, repo)];
        for helper in helpers {
            match helper.join() {
                Ok(Ok(done)) => results.extend(done.into_iter().map(Ok)),
                Ok(Err(err)) => results.push(Err(err)),
                Err(_) => results.push(Err(git2::Error::from_str("a status thread failed"))),
            }
        }
        merge(results).map(|merged| merged.into_values().collect())
    })
}

/// What a helper thread of a split scan hands back: its runs' changes.
type HelperResult = Result<Vec<Changes>, git2::Error>;

/// One path's status as merged from the runs, keyed (and so ordered) by
/// its path in the index, as libgit2 orders a combined run.
struct Change {
    flags: Status,
    display: String,
}

type Changes = BTreeMap<Vec<u8>, Change>;

fn options(show: StatusShow) -> StatusOptions {
    let mut opts = StatusOptions::new();
    opts.show(show)
        .include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(false)
        .renames_head_to_index(true);
    opts
}

/// One combined libgit2 run, in libgit2's own order (which is
/// case-insensitive where the index is).
fn combined_scan(repo: &Repository, known: Known<'_>) -> Result<Vec<Change>, git2::Error> {
    let mut changes = Vec::new();
    collect(repo, &mut known.combined_options(), &mut |_, change| {
        changes.push(change);
    })?;
    Ok(changes)
}

/// `HEAD` compared with the index over the whole repository, so staged
/// renames are found whatever folders they cross.
fn staged_run(repo: &Repository) -> Result<Changes, git2::Error> {
    let mut changes = Changes::new();
    collect(repo, &mut options(StatusShow::Index), &mut |key, change| {
        changes.insert(key, change);
    })?;
    Ok(changes)
}

/// Compares one group of literal paths with the index.
fn run_group(group: &[String], repo: &Repository) -> Result<Changes, git2::Error> {
    let mut opts = options(StatusShow::Workdir);
    opts.disable_pathspec_match(true);
    for path in group {
        opts.pathspec(path.as_str());
    }
    let mut changes = Changes::new();
    collect(repo, &mut opts, &mut |key, change| {
        changes.insert(key, change);
    })?;
    Ok(changes)
}

/// The runs' changes merged by index path.
fn merge(results: Vec<Result<Changes, git2::Error>>) -> Result<Changes, git2::Error> {
    let mut merged = Changes::new();
    for result in results {
        for (key, change) in result? {
            match merged.get_mut(&key) {
                Some(existing) => {
                    existing.flags |= change.flags;
                    // The staged run names renames as `old -> new`.
                    if change.flags.contains(Status::INDEX_RENAMED) {
                        existing.display = change.display;
                    }
                }
                None => {
                    merged.insert(key, change);
                }
            }
        }
    }
    Ok(merged)
}

/// Runs one status and hands each change, with its path in the index, to
/// `sink`, in libgit2's order.
fn collect(
    repo: &Repository,
    opts: &mut StatusOptions,
    sink: &mut dyn FnMut(Vec<u8>, Change),
) -> Result<(), git2::Error> {
    let statuses = repo.statuses(Some(opts))?;
    for entry in statuses.iter() {
        let flags = entry.status();
        if flags.is_empty() || flags.contains(Status::IGNORED) {
            continue;
        }
        let staged = entry.head_to_index();
        let unstaged = entry.index_to_workdir();
        // libgit2's order: the working-tree delta's new path, else the
        // staged delta's (both are the path in the index).
        let key = unstaged
            .as_ref()
            .or(staged.as_ref())
            .and_then(|delta| {
                delta
                    .new_file()
                    .path_bytes()
                    .or(delta.old_file().path_bytes())
            })
            .unwrap_or(entry.path_bytes())
            .to_vec();
        let display = match staged.filter(|_| state_of(flags) == EntryState::Renamed) {
            Some(delta) => {
                let old = delta.old_file().path().map(display).unwrap_or_default();
                let new = delta.new_file().path().map(display).unwrap_or_default();
                format!("{old} -> {new}")
            }
            None => clean(&String::from_utf8_lossy(entry.path_bytes())),
        };
        sink(key, Change { flags, display });
    }
    Ok(())
}

/// Groups of literal paths (folders end in `/`) covering the whole working
/// tree and index, balanced by index entries; `None` when the scan should
/// not be split.
fn plan(repo: &Repository, split: StatusSplit) -> Option<Vec<Vec<String>>> {
    if split.groups < 2 {
        return None;
    }
    let workdir = repo.workdir()?.to_path_buf();
    if repo
        .config()
        .and_then(|c| c.get_bool("core.ignorecase"))
        .unwrap_or(false)
    {
        return None;
    }
    let index = repo.index().ok()?;
    if index.len() < split.min_entries.max(1) {
        return None;
    }
    let mut paths = Vec::with_capacity(index.len());
    for entry in index.iter() {
        // A submodule's folder is another repository: not split.
        if entry.mode == GITLINK {
            return None;
        }
        paths.push(String::from_utf8(entry.path).ok()?);
    }
    // `paths` is sorted (the index is). Pieces start as the top level and
    // the largest folder is opened up until none holds more than a group's
    // share, a few levels at most.
    let mut pieces = pieces_under(&paths, &workdir, "")?;
    let share = paths.len().div_ceil(split.groups);
    for _ in 0..4 {
        let Some((largest, count)) = pieces
            .iter()
            .filter(|(name, _)| name.ends_with('/'))
            .max_by_key(|(_, count)| *count)
            .map(|(name, count)| (name.clone(), *count))
        else {
            break;
        };
        if count <= share {
            break;
        }
        pieces.remove(&largest);
        pieces.extend(pieces_under(&paths, &workdir, &largest)?);
    }
    // libgit2 still reads each path as a pattern when matching folders: a
    // wildcard, a backslash or a leading `#`, `!` or `:` would change what
    // it covers, so such a tree takes the combined run.
    if pieces.keys().any(|piece| {
        piece.contains(['[', ']', '*', '?', '\\']) || piece.starts_with(['#', '!', ':'])
    }) {
        return None;
    }
    // Largest first into the lightest group. A name that is both a folder
    // and a file (a type change) stays in one group.
    let mut by_base: BTreeMap<&str, (usize, Vec<&str>)> = BTreeMap::new();
    for (name, count) in &pieces {
        let slot = by_base.entry(name.trim_end_matches('/')).or_default();
        slot.0 += count;
        slot.1.push(name);
    }
    let mut order: Vec<_> = by_base.into_values().collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut groups: Vec<(usize, Vec<String>)> = vec![(0, Vec::new()); split.groups];
    // Head starts, from a `perf` profile of the 10,000-file render bench:
    // this thread loads the index and plans (about a fifth of scanning the
    // whole tree) while the second group's thread, its index loaded,
    // compares `HEAD` with the index (about three eighths).
    groups[0].0 = paths.len() / 5;
    groups[1].0 = paths.len() * 3 / 8;
    for (count, names) in order {
        let lightest = groups.iter_mut().rev().min_by_key(|(load, _)| *load)?;
        lightest.0 += count.max(1);
        lightest.1.extend(names.into_iter().map(str::to_owned));
    }
    let groups: Vec<Vec<String>> = groups
        .into_iter()
        .map(|(_, names)| names)
        .filter(|names| !names.is_empty())
        .collect();
    (groups.len() >= 2).then_some(groups)
}

/// The entries directly under folder `prefix` (`""` or ending in `/`): from
/// the index (counted) and from the disk (so untracked ones are covered),
/// folders with a trailing `/`. `None` when the disk cannot be listed.
fn pieces_under(paths: &[String], workdir: &Path, prefix: &str) -> Option<BTreeMap<String, usize>> {
    let mut pieces = BTreeMap::new();
    // Paths under one piece are contiguous in the sorted index: count runs.
    let start = paths.partition_point(|p| p.as_str() < prefix);
    let mut run: Option<(&str, usize)> = None;
    for path in paths[start..].iter().take_while(|p| p.starts_with(prefix)) {
        let rest = &path[prefix.len()..];
        let piece = match rest.find('/') {
            Some(slash) => &rest[..=slash],
            None => rest,
        };
        match &mut run {
            Some((current, count)) if *current == piece => *count += 1,
            _ => {
                if let Some((done, count)) = run.replace((piece, 1)) {
                    *pieces.entry(format!("{prefix}{done}")).or_insert(0) += count;
                }
            }
        }
    }
    if let Some((done, count)) = run {
        *pieces.entry(format!("{prefix}{done}")).or_insert(0) += count;
    }
    // A folder deleted from the disk still has its index entries above.
    let listing = match std::fs::read_dir(workdir.join(prefix)) {
        Ok(listing) => listing,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Some(pieces),
        Err(_) => return None,
    };
    for entry in listing {
        let entry = entry.ok()?;
        let name = entry.file_name().into_string().ok()?;
        if prefix.is_empty() && name == ".git" {
            continue;
        }
        let is_dir = entry.file_type().ok()?.is_dir();
        let piece = if is_dir {
            format!("{prefix}{name}/")
        } else {
            format!("{prefix}{name}")
        };
        pieces.entry(piece).or_insert(0);
    }
    Some(pieces)
}

pub(super) fn display(path: &Path) -> String {
    let text = bcode_text::model_path(path);
    let text = text.strip_suffix('/').unwrap_or(&text);
    clean(text)
}

fn state_of(flags: Status) -> EntryState {
    if flags.contains(Status::CONFLICTED) {
        EntryState::Conflicted
    } else if flags.intersects(Status::INDEX_RENAMED | Status::WT_RENAMED) {
        EntryState::Renamed
    } else if flags.contains(Status::INDEX_NEW) {
        EntryState::Added
    } else if flags.contains(Status::WT_NEW) {
        EntryState::Untracked
    } else if flags.intersects(Status::INDEX_DELETED | Status::WT_DELETED) {
        EntryState::Deleted
    } else {
        EntryState::Modified
    }
}

/// Git's porcelain `XY` code for `flags`.
fn code_of(flags: Status) -> String {
    if flags.contains(Status::CONFLICTED) {
        return "UU".to_owned();
    }
    if flags.contains(Status::WT_NEW) && !flags.intersects(index_flags()) {
        return "??".to_owned();
    }
    let x = if flags.contains(Status::INDEX_NEW) {
        'A'
    } else if flags.contains(Status::INDEX_MODIFIED) {
        'M'
    } else if flags.contains(Status::INDEX_DELETED) {
        'D'
    } else if flags.contains(Status::INDEX_RENAMED) {
        'R'
    } else if flags.contains(Status::INDEX_TYPECHANGE) {
        'T'
    } else {
        ' '
    };
    let y = if flags.contains(Status::WT_MODIFIED) {
        'M'
    } else if flags.contains(Status::WT_DELETED) {
        'D'
    } else if flags.contains(Status::WT_RENAMED) {
        'R'
    } else if flags.contains(Status::WT_TYPECHANGE) {
        'T'
    } else {
        ' '
    };
    format!("{x}{y}")
}

fn index_flags() -> Status {
    Status::INDEX_NEW
        | Status::INDEX_MODIFIED
        | Status::INDEX_DELETED
        | Status::INDEX_RENAMED
        | Status::INDEX_TYPECHANGE
}

/// Replaces control characters so a path or branch name cannot break the
/// line structure of a section.
pub(super) fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}
