//! The git probe (edge I/O): opens the repository with git2 and reads
//! `HEAD`, the worktree kind and the status into [`GitFacts`].
//!
//! All libgit2 work runs on a worker thread and the probe waits at most
//! [`GitProbeOptions::deadline`] for all of it: opening the repository reads
//! its config, refs and objects with blocking calls, and a damaged one can
//! hold libgit2 forever (a truncated loose commit object makes it spin while
//! it abbreviates `HEAD`'s id; a FIFO at `.git/config` blocks its `open`).
//! The worker first reports `HEAD` and the worktree kind, then the status
//! (the one step that is slow on a healthy repository; see `status.rs` for
//! how a large tree is split over threads). Whatever has not arrived when
//! the deadline passes is reported as timed out, and the section says so.
//!
//! A worker cannot be stopped, so three things keep a hostile repository from
//! costing a thread per turn: `preflight` refuses a
//! repository whose known files are not regular files, or are larger than
//! libgit2 should read whole, before any thread starts;
//! `objects` inflates, bounded, the loose objects the
//! status scan would inflate (`HEAD`'s commit, every tree below it, the
//! blobs of staged renames) before it starts (a cut-short one would make it
//! spin), and every checked-out submodule the scan opens gets both checks
//! too; and a repository whose worker overran is remembered (see
//! `overdue`) until that worker ends; meanwhile later probes of it
//! start no new worker for the step that hung. Entries beyond
//! [`GitProbeOptions::max_entries`] are counted but not kept, so a huge
//! untracked tree cannot blow up memory either.
//!
//! The probe also refuses to describe another checkout: when the git folder
//! discovery found (through a `.git` file, or `core.worktree`) has its work
//! tree somewhere other than the folder holding that `.git`, the facts say
//! so instead of showing that other repository's branch and status. Linked
//! worktrees and submodules have their work tree right there, so they pass.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use git2::{ErrorCode, Repository};

use super::index_file::GITLINK;
use super::overdue::{self, Phase, Progress};
use super::preflight::{self, Preflight};
use super::racy;
pub use super::racy::{GitCache, RacyCounts, counts as racy_counts};
use super::status::{IndexShape, Known, StatusSplit, clean, display, status_with};
pub use super::untracked::unscanned as unscanned_status_reads;
use super::untracked::{self, Clean, Plan};
use super::watch::{self, WatchSlot};
use super::{
    CommitId, GitFacts, GitUnavailable, HeadFacts, RepoFacts, StatusFacts, StatusOutcome,
    WorktreeFacts,
};
use super::{index_tree, objects};

/// How the probe runs and which parts it reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitProbeOptions {
    /// Read the status (needed by `git_revision`'s dirty flag and by
    /// `dynamic_repository_context`).
    pub status: bool,
    /// How long the probe waits for all of its git work (opening, `HEAD`,
    /// the worktree and the status; default 1.5 s) before reporting what
    /// is missing as timed out; the worker itself is not stopped.
    pub deadline: Duration,
    /// The most status entries kept (default 10,000); the rest are only
    /// counted.
    pub max_entries: usize,
    /// When and how the status scan of a large tree is split over threads.
    pub split: StatusSplit,
    /// Where what the status learns is remembered between reads and
    /// processes (the hashes of racily-clean files, the trees checked);
    /// `None` (the default): nothing is kept.
    pub cache: Option<GitCache>,
}

impl Default for GitProbeOptions {
    fn default() -> Self {
        GitProbeOptions {
            status: true,
            deadline: Duration::from_millis(1500),
            max_entries: 10_000,
            split: StatusSplit::default(),
            cache: None,
        }
    }
}

/// What the worker sends, in this order.
enum Report {
    /// Opening ended the probe: no repository, or one that cannot be used.
    Ended(GitFacts),
    /// `HEAD` and the worktree kind; the status follows when asked for.
    Opened {
        head: HeadFacts,
        worktree: WorktreeFacts,
    },
    /// The status scan's result.
    Status(Result<StatusFacts, git2::Error>),
}

/// Reads the repository containing `path` (searching upwards, like git),
/// waiting at most [`GitProbeOptions::deadline`].
pub fn read_git(path: &Path, options: &GitProbeOptions) -> GitFacts {
    start_git_read(path, options).finish()
}

/// Starts reading the repository containing `path` on the worker thread and
/// returns at once, so the caller can do other work meanwhile; the deadline
/// counts from here. [`GitRead::finish`] waits for the facts.
pub fn start_git_read(path: &Path, options: &GitProbeOptions) -> GitRead {
    start_with(path, options, None)
}

/// [`start_git_read`]; with `watch`, the worker first watches the repository's
/// folders (see `watch.rs`) and leaves the watch there, before it opens the
/// repository for the read, so any change the read could miss shows in it.
pub(super) fn start_with(
    path: &Path,
    options: &GitProbeOptions,
    watch: Option<WatchSlot>,
) -> GitRead {
    let root = match preflight::check(path) {
        Preflight::Clear { root } => root,
        Preflight::Refused { path } => {
            return GitRead::Ended(GitFacts::Unavailable(GitUnavailable::NotAFile { path }));
        }
        Preflight::TooLarge { path, len, limit } => {
            return GitRead::Ended(GitFacts::Unavailable(GitUnavailable::Unreadable {
                detail: too_large(&path, len, limit),
            }));
        }
    };
    let key = overdue::key(root.as_deref().unwrap_or(path));
    let mut want_status = options.status;
    let mut status_still_running = false;
    match overdue::earlier(&key) {
        Some(Phase::Opening) => {
            return GitRead::Ended(GitFacts::Unavailable(GitUnavailable::StillRunning));
        }
        Some(Phase::Status) if want_status => {
            want_status = false;
            status_still_running = true;
        }
        _ => {}
    }
    let started = Instant::now();
    let progress = Progress::new();
    let (tx, rx) = mpsc::channel();
    let work = Work {
        path: path.to_path_buf(),
        root,
        status: want_status,
        max_entries: options.max_entries,
        split: options.split,
        cache: options.cache.clone(),
        progress: Arc::clone(&progress),
        watch,
    };
    let spawned = std::thread::Builder::new()
        .name("bcode-git".to_owned())
        .spawn(move || work.run(&tx));
    if let Err(err) = spawned {
        return GitRead::Ended(GitFacts::Unavailable(GitUnavailable::Unreadable {
            detail: format!("the git worker could not start: {err}"),
        }));
    }
    GitRead::Running(RunningGitRead {
        rx,
        key,
        progress,
        waited: false,
        started,
        deadline: options.deadline,
        status_wanted: options.status,
        status_still_running,
        opened: None,
    })
}

/// A read [`start_git_read`]ed: its answer, or the worker it waits for.
#[derive(Debug)]
pub enum GitRead {
    /// Answered before any worker started (refused, or still running from
    /// an earlier turn).
    Ended(GitFacts),
    /// The worker is reading.
    Running(RunningGitRead),
    /// A session's read (`session::GitSession`): its own, or one an
    /// earlier turn started and left running.
    Session(Box<dyn WaitingGitRead>),
}

/// A read whose facts are waited for elsewhere: a session's, which keeps
/// the worker for a later turn when the deadline passes.
pub trait WaitingGitRead: Send + std::fmt::Debug {
    /// Waits at most the turn's deadline and gives the turn's facts.
    fn finish(self: Box<Self>) -> GitFacts;
}

/// The waiting side of a running read. Dropped without [`GitRead::finish`]
/// (a turn that failed after starting it), its worker is remembered as an
/// overrunning one, so a hung repository still costs one thread per process.
#[derive(Debug)]
pub struct RunningGitRead {
    rx: mpsc::Receiver<Report>,
    key: PathBuf,
    progress: Arc<Progress>,
    /// Set by `finish`; unset on drop means nobody waited.
    waited: bool,
    started: Instant,
    deadline: Duration,
    status_wanted: bool,
    status_still_running: bool,
    /// `HEAD` and the worktree kind, once reported.
    opened: Option<(HeadFacts, WorktreeFacts)>,
}

impl Drop for RunningGitRead {
    fn drop(&mut self) {
        if !self.waited {
            // A worker that already ended is forgotten at the next look.
            overdue::remember(std::mem::take(&mut self.key), Arc::clone(&self.progress));
        }
    }
}

impl GitRead {
    /// Waits for the facts until the deadline counted from [`start_git_read`].
    pub fn finish(self) -> GitFacts {
        match self {
            GitRead::Ended(facts) => facts,
            GitRead::Running(running) => running.finish(),
            GitRead::Session(waiting) => waiting.finish(),
        }
    }
}

impl RunningGitRead {
    fn finish(mut self) -> GitFacts {
        self.waited = true;
        match self.wait_until(self.started + self.deadline) {
            Some(facts) => facts,
            None => {
                self.remember();
                self.late(true)
            }
        }
    }

    /// Waits until `until` for the reports still missing: the facts once
    /// all have arrived, `None` when `until` passed first (the worker goes
    /// on, and a later call may still collect them).
    pub(super) fn wait_until(&mut self, until: Instant) -> Option<GitFacts> {
        let left = || until.saturating_duration_since(Instant::now());
        let stopped = || {
            GitFacts::Unavailable(GitUnavailable::Unreadable {
                detail: "the git worker stopped without an answer".to_owned(),
            })
        };
        if self.opened.is_none() {
            match self.rx.recv_timeout(left()) {
                Ok(Report::Opened { head, worktree }) => self.opened = Some((head, worktree)),
                Ok(Report::Ended(facts)) => return Some(facts),
                Ok(Report::Status(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Some(stopped());
                }
                Err(mpsc::RecvTimeoutError::Timeout) => return None,
            }
        }
        let (head, worktree) = self.opened.clone()?;
        let status = if self.status_still_running {
            StatusOutcome::StillRunning
        } else if !self.status_wanted {
            StatusOutcome::NotGathered
        } else if worktree == WorktreeFacts::Bare {
            StatusOutcome::Done(StatusFacts::default())
        } else {
            match self.rx.recv_timeout(left()) {
                Ok(Report::Status(Ok(facts))) => StatusOutcome::Done(facts),
                Ok(Report::Status(Err(err))) => StatusOutcome::Failed {
                    detail: err.message().to_owned(),
                },
                Ok(_) | Err(mpsc::RecvTimeoutError::Disconnected) => StatusOutcome::Failed {
                    detail: "the git worker stopped without an answer".to_owned(),
                },
                Err(mpsc::RecvTimeoutError::Timeout) => return None,
            }
        };
        Some(GitFacts::Repository(RepoFacts {
            head,
            worktree,
            status,
        }))
    }

    /// What a turn shows while the worker has not answered: timed out on
    /// the turn that started it (`first`), still running on a later one.
    pub(super) fn late(&self, first: bool) -> GitFacts {
        let deadline_ms = u64::try_from(self.deadline.as_millis()).unwrap_or(u64::MAX);
        match (&self.opened, first) {
            (None, true) => GitFacts::Unavailable(GitUnavailable::TimedOut { deadline_ms }),
            (None, false) => GitFacts::Unavailable(GitUnavailable::StillRunning),
            (Some((head, worktree)), _) => GitFacts::Repository(RepoFacts {
                head: head.clone(),
                worktree: worktree.clone(),
                status: if first {
                    StatusOutcome::TimedOut { deadline_ms }
                } else {
                    StatusOutcome::StillRunning
                },
            }),
        }
    }

    /// Remembers the worker as an overrunning one, so no other read of the
    /// repository in this process starts a second worker for the step it
    /// is stuck in.
    pub(super) fn remember(&self) {
        overdue::remember(self.key.clone(), Arc::clone(&self.progress));
    }

    /// When the read started (its deadline counts from here).
    pub(super) fn started(&self) -> Instant {
        self.started
    }

    /// The deadline it was started with.
    pub(super) fn deadline(&self) -> Duration {
        self.deadline
    }

    /// Marks the read as waited for: dropped now, it is not remembered as
    /// overrunning (a session that collected its facts, or remembered it
    /// itself).
    pub(super) fn waited(&mut self) {
        self.waited = true;
    }
}

/// Everything the worker needs, owned.
struct Work {
    path: PathBuf,
    root: Option<PathBuf>,
    status: bool,
    max_entries: usize,
    split: StatusSplit,
    cache: Option<GitCache>,
    progress: Arc<Progress>,
    /// Where to leave a watch of the repository's folders, made before the
    /// read (a session's, see `watch.rs`).
    watch: Option<WatchSlot>,
}

impl Work {
    /// Opens, reports `HEAD` and the worktree, then the status. Send errors
    /// mean the probe stopped waiting; that is expected after a timeout.
    fn run(self, tx: &mpsc::Sender<Report>) {
        let _finished = self.progress.finish_on_drop();
        if let Some(slot) = self.watch.as_ref().filter(|slot| !slot.is_filled()) {
            // Watched first, then opened afresh: whatever changes after the
            // watch starts is in it, whatever changed before is read.
            let watch = match open(&self.path, self.root.as_deref()) {
                Ok(repo) => watch::build(&repo),
                Err(_) => Err("there is no repository to watch".to_owned()),
            };
            slot.fill(watch);
        }
        let repo = match open(&self.path, self.root.as_deref()) {
            Ok(repo) => repo,
            Err(failure) => {
                let _ = tx.send(Report::Ended(failure.into()));
                return;
            }
        };
        let head = head(&repo);
        let worktree = worktree(&repo);
        let bare = worktree == WorktreeFacts::Bare;
        let _ = tx.send(Report::Opened { head, worktree });
        if self.status && !bare {
            self.progress.enter(Phase::Status);
            // The index, read once: the tree it would be committed as
            // tells whether anything is staged, and its racily-clean
            // entries are checked against what the cache remembers.
            let index = racy::read_index(&repo);
            let index_tree = index
                .as_ref()
                .and_then(|index| index_tree::index_tree_id(&index.file));
            // What the scan needs to know of the index, from this reading:
            // libgit2 need not load and checksum it again to find the
            // gitlinks, nor a helper thread to find no split is possible.
            let shape = index.as_ref().map(|index| IndexShape::of(&index.file));
            // A cut-short loose object the scan inflates (HEAD's commit, a
            // tree below it, a blob of a staged rename) would make it spin
            // forever on this thread; inflate them first, bounded.
            let staged_clean = match damaged_head(&repo, index_tree, self.cache.as_ref()) {
                Ok(staged_clean) => staged_clean,
                Err(problem) => {
                    let detail = problem.detail();
                    let _ = tx.send(Report::Status(Err(git2::Error::from_str(detail))));
                    return;
                }
            };
            // The scan opens each checked-out submodule and compares its
            // `HEAD`, index and working tree: the same checks, for each.
            let gitlinks = shape.as_ref().map(|shape| shape.gitlinks.as_slice());
            if let Some(detail) = damaged_submodules(&repo, gitlinks, 1, &mut 0) {
                let _ = tx.send(Report::Status(Err(git2::Error::from_str(&detail))));
                return;
            }
            let unpopulated = match (&shape, repo.workdir()) {
                (Some(shape), Some(workdir)) => shape.unpopulated(workdir),
                _ => false,
            };
            // Racily-clean entries settled against the cache, then the
            // status answered without the scan where it can be (see
            // `untracked.rs`).
            let settled = match (&index, &self.cache) {
                (Some(index), Some(cache)) => {
                    Some((index, cache, racy::settle(&repo, index, cache)))
                }
                _ => None,
            };
            let mut survey = None;
            if let Some((index, cache, settled)) = &settled {
                let clean = Clean {
                    staged: staged_clean,
                    settled,
                    unpopulated,
                };
                match untracked::plan(&repo, index, cache, clean, self.max_entries) {
                    Plan::Answer(facts) => {
                        let _ = tx.send(Report::Status(Ok(facts)));
                        return;
                    }
                    Plan::Scan(walked) => survey = walked,
                }
            }
            let copy = settled
                .as_ref()
                .and_then(|(index, cache, settled)| settled.copy(index, cache));
            let known = Known {
                staged_clean,
                copy: copy.as_ref(),
                shape: shape.as_ref(),
                unpopulated,
            };
            let facts = status_with(&repo, self.max_entries, self.split, known);
            drop(copy);
            if let (Some(survey), Ok(facts), Some(cache)) = (survey, &facts, &self.cache) {
                survey.remember(facts, cache);
            }
            let _ = tx.send(Report::Status(facts));
        }
    }
}

/// The note for a file [`preflight`] found too large for libgit2 to read.
fn too_large(path: &str, len: u64, limit: u64) -> String {
    const KIB: u64 = 1024;
    let limit = if limit >= KIB * KIB && limit.is_multiple_of(KIB * KIB) {
        format!("{} MiB", limit / (KIB * KIB))
    } else if limit >= KIB && limit.is_multiple_of(KIB) {
        format!("{} KiB", limit / KIB)
    } else {
        format!("{limit} bytes")
    };
    format!(
        "{path} is {len} bytes, more than the {limit} git is let read of it; \
         the repository was not opened"
    )
}

/// Why the status scan must not start, if a loose object it would inflate
/// is damaged or too much to check (see [`objects`](super::objects));
/// otherwise whether the index holds `HEAD`'s tree (`index_tree`).
fn damaged_head(
    repo: &Repository,
    index_tree: Option<git2::Oid>,
    cache: Option<&GitCache>,
) -> Result<bool, objects::Problem> {
    let Some(oid) = repo.head().ok().and_then(|head| head.target()) else {
        return Ok(false);
    };
    objects::check_head(repo, oid, &objects::Budget::default(), index_tree, cache)
}

/// How deep submodules inside submodules are checked; the scan of a
/// superproject compares each submodule's own status, nested ones included.
const MAX_SUBMODULE_DEPTH: usize = 4;

/// The most submodules checked, all levels together.
const MAX_SUBMODULES: usize = 1000;

/// Why the status scan must not start because of a submodule it would
/// open: one whose files [`preflight`] refuses, or whose objects
/// [`objects`](super::objects) finds damaged or too much to check, at
/// depth `depth` (1 for the superproject's own). `gitlinks`: the paths of
/// the index's gitlinks when the index was already read (else libgit2
/// reads it). `seen` counts the submodules checked so far.
fn damaged_submodules(
    repo: &Repository,
    gitlinks: Option<&[String]>,
    depth: usize,
    seen: &mut usize,
) -> Option<String> {
    let workdir = repo.workdir()?.to_path_buf();
    let read;
    let gitlinks = match gitlinks {
        Some(gitlinks) => gitlinks,
        None => {
            let index = repo.index().ok()?;
            read = index
                .iter()
                .filter(|entry| entry.mode == GITLINK)
                .map(|entry| String::from_utf8_lossy(&entry.path).into_owned())
                .collect::<Vec<_>>();
            &read
        }
    };
    for name in gitlinks {
        let folder = workdir.join(name);
        // libgit2 opens only a checked-out submodule: one with a `.git`.
        if std::fs::symlink_metadata(folder.join(".git")).is_err() {
            continue;
        }
        *seen += 1;
        if *seen > MAX_SUBMODULES || depth > MAX_SUBMODULE_DEPTH {
            return Some(format!(
                "the repository has more than {MAX_SUBMODULES} submodules, or submodules nested \
                 more than {MAX_SUBMODULE_DEPTH} deep, more than are checked before a status scan"
            ));
        }
        let why = match preflight::check(&folder) {
            Preflight::Clear { .. } => submodule_objects(&folder, depth, seen),
            Preflight::Refused { path } => Some(format!("{path} is not a regular file")),
            Preflight::TooLarge { path, len, limit } => Some(too_large(&path, len, limit)),
        };
        if let Some(why) = why {
            return Some(format!("in the submodule {}: {why}", clean(name)));
        }
    }
    None
}

/// Opens the submodule checked out at `folder` (its files passed the
/// preflight) and checks its objects and its own submodules.
fn submodule_objects(folder: &Path, depth: usize, seen: &mut usize) -> Option<String> {
    let sub = Repository::open(folder).ok()?;
    if let Some(oid) = sub.head().ok().and_then(|head| head.target())
        && let Err(problem) =
            objects::check_head(&sub, oid, &objects::Budget::default(), None, None)
    {
        return Some(problem.detail().to_owned());
    }
    damaged_submodules(&sub, None, depth + 1, seen)
}

/// Discovers the repository containing `path`, refusing one whose work
/// tree is not `root` (the folder holding the `.git` discovery used). The
/// error is what the probe reports: no repository, or an unusable one.
fn open(path: &Path, root: Option<&Path>) -> Result<Repository, OpenFailure> {
    let repo = match Repository::discover(path) {
        Ok(repo) => repo,
        Err(err) if err.code() == ErrorCode::NotFound => return Err(OpenFailure::NoRepository),
        Err(err) if err.code() == ErrorCode::Owner => {
            return Err(OpenFailure::Unavailable(GitUnavailable::OwnedByAnotherUser));
        }
        Err(err) => {
            return Err(OpenFailure::Unavailable(GitUnavailable::Unreadable {
                detail: err.message().to_owned(),
            }));
        }
    };
    if let (Some(workdir), Some(root)) = (repo.workdir(), root)
        && !same_folder(workdir, root)
    {
        return Err(OpenFailure::Unavailable(GitUnavailable::ForeignWorkTree {
            root: display(root),
            work_tree: display(workdir),
        }));
    }
    Ok(repo)
}

/// Why [`open`] gave no repository to read.
enum OpenFailure {
    /// No repository contains the path.
    NoRepository,
    /// There is one, but it cannot be used.
    Unavailable(GitUnavailable),
}

impl From<OpenFailure> for GitFacts {
    fn from(failure: OpenFailure) -> GitFacts {
        match failure {
            OpenFailure::NoRepository => GitFacts::NoRepository,
            OpenFailure::Unavailable(why) => GitFacts::Unavailable(why),
        }
    }
}

/// Whether two paths name the same folder (compared canonically, so a
/// symbolic link in either does not make a difference).
fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a.components().eq(b.components()),
    }
}

/// `oid` in full and abbreviated as `git_object_short_id` does (the
/// shortest unambiguous prefix from `core.abbrev` up), but from the object
/// database's index of names alone: reading the object itself would make
/// libgit2 spin forever on a truncated loose object.
fn commit_id(repo: &Repository, oid: git2::Oid) -> CommitId {
    let full = oid.to_string();
    let short = short_len(repo, oid)
        .and_then(|len| full.get(..len))
        .unwrap_or_else(|| full.get(..7).unwrap_or(&full))
        .to_owned();
    CommitId { short, full }
}

/// The length of the shortest unambiguous prefix of `oid`, at least
/// `core.abbrev` (default 7); `None` when the object database cannot say.
fn short_len(repo: &Repository, oid: git2::Oid) -> Option<usize> {
    const DEFAULT_ABBREV: usize = 7;
    let hex = oid.to_string();
    let start = repo
        .config()
        .and_then(|config| config.get_i32("core.abbrev"))
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| (4..=hex.len()).contains(n))
        .unwrap_or(DEFAULT_ABBREV);
    let odb = repo.odb().ok()?;
    for len in start..hex.len() {
        let prefix = git2::Oid::from_str(hex.get(..len)?).ok()?;
        match odb.exists_prefix(prefix, len) {
            Ok(_) => return Some(len),
            Err(err) if err.code() == ErrorCode::Ambiguous => continue,
            Err(_) => return None,
        }
    }
    Some(hex.len())
}

fn head(repo: &Repository) -> HeadFacts {
    match repo.head() {
        Ok(reference) => {
            let Some(oid) = reference.target() else {
                return HeadFacts::Unknown {
                    detail: "HEAD has no target".to_owned(),
                };
            };
            let commit = commit_id(repo, oid);
            if reference.is_branch() {
                HeadFacts::Branch {
                    name: clean(&String::from_utf8_lossy(reference.shorthand_bytes())),
                    commit,
                }
            } else {
                HeadFacts::Detached { commit }
            }
        }
        Err(err) if err.code() == ErrorCode::UnbornBranch => {
            // HEAD is symbolic and names the branch to be born.
            let name = repo
                .find_reference("HEAD")
                .ok()
                .and_then(|r| r.symbolic_target_bytes().map(|t| t.to_vec()))
                .map(|t| String::from_utf8_lossy(&t).into_owned())
                .map(|t| t.trim_start_matches("refs/heads/").to_owned())
                .unwrap_or_else(|| "HEAD".to_owned());
            HeadFacts::Unborn { name: clean(&name) }
        }
        Err(err) => HeadFacts::Unknown {
            detail: err.message().to_owned(),
        },
    }
}

fn worktree(repo: &Repository) -> WorktreeFacts {
    let Some(workdir) = repo.workdir() else {
        return WorktreeFacts::Bare;
    };
    let root = display(workdir);
    if !repo.is_worktree() {
        return WorktreeFacts::Main { root };
    }
    let name = git2::Worktree::open_from_repository(repo)
        .ok()
        .and_then(|wt| wt.name().ok().flatten().map(clean));
    // The common directory is the main repository's `.git`; its parent is
    // the main working tree unless the main repository is bare.
    let common = repo.commondir();
    let main_root = (common.file_name().is_some_and(|n| n == ".git"))
        .then(|| common.parent().map(display))
        .flatten();
    WorktreeFacts::Linked {
        root,
        name,
        main_root,
    }
}
