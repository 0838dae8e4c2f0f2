//! The git stages: `worktree_context`, `git_revision` and
//! `dynamic_repository_context` (git status, bounded by
//! `system_prompt.git_status_max_chars`). The stages render facts gathered
//! by [`read`] at the edge; they never open a repository themselves.
//!
//! Nothing here shows remote URLs, user names or emails: the facts do not
//! even carry them.

mod index_file;
mod index_tree;
mod objects;
mod overdue;
mod preflight;
mod racy;
pub(crate) mod read;
pub(crate) mod session;
pub(crate) mod status;
mod untracked;
mod watch;

use serde::Serialize;

/// The template of `git_revision`: branch or detached HEAD, commit, dirty
/// flag.
pub const REVISION_TEMPLATE: &str = "sections/git_revision.j2";
/// The template of `worktree_context`: main, linked or bare, and the root.
pub const WORKTREE_TEMPLATE: &str = "sections/worktree_context.j2";
/// The template of `dynamic_repository_context`: the short status listing.
pub const STATUS_TEMPLATE: &str = "sections/git_status.j2";
/// The one line said when there is no git information at all.
pub const NO_GIT_TEMPLATE: &str = "sections/no_git.j2";

/// What the marker names as the place to see the whole status.
pub const STATUS_FULL_TEXT_AT: &str = "git status --short";

/// Everything the git stages may show.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GitFacts {
    /// The working directory is not inside a repository.
    NoRepository,
    /// There is a repository, but it could not be used.
    Unavailable(GitUnavailable),
    /// The repository was opened; what could be read from it.
    Repository(RepoFacts),
}

/// Why a repository could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GitUnavailable {
    /// libgit2 refused it: it is owned by another user (`Owner`).
    OwnedByAnotherUser,
    /// Any other failure; `detail` goes to the section notes only.
    Unreadable {
        /// libgit2's error message.
        detail: String,
    },
    /// A file git reads on the way to `HEAD` or the status (its config,
    /// `HEAD`, `packed-refs`, a ref, `objects/info/alternates`, ...) is not
    /// a regular file (a FIFO would block git forever), so the repository
    /// was not opened.
    NotAFile {
        /// That file, relative to the repository root when below it, `/`
        /// separators.
        path: String,
    },
    /// Opening the repository and reading `HEAD` did not finish within the
    /// deadline ([`read::GitProbeOptions::deadline`]).
    TimedOut {
        /// The deadline that passed, in milliseconds.
        deadline_ms: u64,
    },
    /// An earlier probe of this repository overran its deadline while
    /// opening it and has still not finished, so no new one was started.
    StillRunning,
    /// The git folder discovery found has its work tree elsewhere (a `.git`
    /// file naming another repository's git folder, or `core.worktree`
    /// pointing away): nothing of that other checkout is shown.
    ForeignWorkTree {
        /// The folder holding the `.git` discovery used, `/` separators.
        root: String,
        /// The work tree that git folder belongs to, `/` separators.
        work_tree: String,
    },
}

/// A commit id, abbreviated and in full.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CommitId {
    /// The unambiguous abbreviation libgit2's `short_id` gives (honouring
    /// `core.abbrev`), or the first seven hex digits when that fails.
    pub short: String,
    /// The full object id in hex.
    pub full: String,
}

/// Where `HEAD` points.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeadFacts {
    /// `HEAD` is on a local branch.
    Branch {
        /// The branch's short name (e.g. `main`), control characters
        /// replaced.
        name: String,
        /// The commit the branch points at.
        commit: CommitId,
    },
    /// `HEAD` points at a commit directly, not through a branch.
    Detached {
        /// The checked-out commit.
        commit: CommitId,
    },
    /// A branch with no commits yet.
    Unborn {
        /// The branch `HEAD` names (without `refs/heads/`), or `HEAD` when
        /// it could not be read.
        name: String,
    },
    /// `HEAD` could not be read; `detail` goes to the notes.
    Unknown {
        /// Why, as libgit2 or the probe put it.
        detail: String,
    },
}

/// What kind of checkout the working directory is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WorktreeFacts {
    /// The repository's main working tree, rooted at `root`.
    Main {
        /// The working tree's root, with `/` separators and no trailing
        /// slash.
        root: String,
    },
    /// A linked worktree (`git worktree add`).
    Linked {
        /// This linked working tree's root, with `/` separators.
        root: String,
        /// The worktree's name under `.git/worktrees`, when libgit2 reports
        /// one.
        name: Option<String>,
        /// The main working tree's root, or `None` when the main
        /// repository is bare.
        main_root: Option<String>,
    },
    /// A bare repository: no working tree.
    Bare,
}

/// The state one status entry is counted under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntryState {
    /// Changed content or type, staged or not (anything not listed below).
    Modified,
    /// A new file staged in the index.
    Added,
    /// Deleted in the index or the working tree.
    Deleted,
    /// Renamed in the index or the working tree.
    Renamed,
    /// A new file not in the index.
    Untracked,
    /// An unresolved merge conflict; wins over every other state.
    Conflicted,
}

/// Entry counts by state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StateCounts {
    /// Entries counted as [`EntryState::Modified`].
    pub modified: usize,
    /// Entries counted as [`EntryState::Added`].
    pub added: usize,
    /// Entries counted as [`EntryState::Deleted`].
    pub deleted: usize,
    /// Entries counted as [`EntryState::Renamed`].
    pub renamed: usize,
    /// Entries counted as [`EntryState::Untracked`].
    pub untracked: usize,
    /// Entries counted as [`EntryState::Conflicted`].
    pub conflicted: usize,
}

impl StateCounts {
    /// Counts one more entry in `state`.
    pub fn add(&mut self, state: EntryState) {
        let slot = match state {
            EntryState::Modified => &mut self.modified,
            EntryState::Added => &mut self.added,
            EntryState::Deleted => &mut self.deleted,
            EntryState::Renamed => &mut self.renamed,
            EntryState::Untracked => &mut self.untracked,
            EntryState::Conflicted => &mut self.conflicted,
        };
        *slot += 1;
    }

    /// Every entry counted, whatever its state; zero means a clean tree.
    pub fn total(&self) -> usize {
        self.modified + self.added + self.deleted + self.renamed + self.untracked + self.conflicted
    }

    pub(crate) fn minus(&self, other: &StateCounts) -> StateCounts {
        StateCounts {
            modified: self.modified.saturating_sub(other.modified),
            added: self.added.saturating_sub(other.added),
            deleted: self.deleted.saturating_sub(other.deleted),
            renamed: self.renamed.saturating_sub(other.renamed),
            untracked: self.untracked.saturating_sub(other.untracked),
            conflicted: self.conflicted.saturating_sub(other.conflicted),
        }
    }
}

/// One line of short-format status: `code` is git's two-letter `XY`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusEntry {
    /// The two-letter code as `git status --short` prints it, e.g. ` M`,
    /// `A `, `??` or `UU`.
    pub code: String,
    /// The path, or `old -> new` for a rename; control characters replaced.
    pub path: String,
    /// The one state the entry is counted under in [`StatusFacts::total`].
    pub state: EntryState,
}

/// A finished status listing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusFacts {
    /// At most `read::GitProbeOptions::max_entries` entries, sorted by path.
    pub entries: Vec<StatusEntry>,
    /// Counts over every entry, including those beyond the cap.
    pub total: StateCounts,
    /// Whether entries were dropped by the cap.
    pub capped: bool,
}

/// What became of the status probe.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StatusOutcome {
    /// No enabled section needed it.
    NotGathered,
    /// It did not finish within the deadline.
    TimedOut {
        /// The deadline that passed, in milliseconds
        /// ([`read::GitProbeOptions::deadline`], shared with opening the
        /// repository).
        deadline_ms: u64,
    },
    /// An earlier status scan of this repository overran its deadline and
    /// is still running, so no new one was started.
    StillRunning,
    /// It failed; `detail` goes to the notes.
    Failed {
        /// libgit2's error message, or why the worker thread could not
        /// start.
        detail: String,
    },
    /// The scan finished; its listing and counts.
    Done(StatusFacts),
}

/// Facts about a usable repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepoFacts {
    /// Where `HEAD` points, for `git_revision`.
    pub head: HeadFacts,
    /// The kind of checkout, for `worktree_context`.
    pub worktree: WorktreeFacts,
    /// The status scan, for `git_revision`'s dirty flag and
    /// `dynamic_repository_context`.
    pub status: StatusOutcome,
}
