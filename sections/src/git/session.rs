//! A long-lived session's git reads: the last read's facts are used again
//! while nothing they depend on has changed, and a read that outlives its
//! turn's deadline goes on in the background for a later turn.
//!
//! Each read a following session starts first watches the repository (see
//! `watch.rs`); while that watch reports no change, a later turn takes the
//! read's facts as they are and starts no worker. A change (a file edited,
//! added or removed, a commit, a branch switch, the index written) makes
//! the next turn read again; the watch goes on with it unless a folder
//! came in or an ignore rule, the config or the index changed.
//!
//! A read that has not answered by its turn's deadline is kept, not
//! dropped: that turn says it timed out, a later turn that finds it still
//! running waits for it (again at most its deadline) and starts no second
//! worker, and once it has answered its facts serve any turn before the
//! next change.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::read::{self, GitProbeOptions, GitRead, RunningGitRead, WaitingGitRead};
use super::watch::{RepoWatch, Seen, WatchSlot};
use super::{GitFacts, RepoFacts, StatusOutcome};

/// The git reads of one session; cloning gives another handle to the same
/// reads. See the module documentation.
#[derive(Clone, Debug, Default)]
pub struct GitSession {
    state: Arc<Mutex<State>>,
}

/// What a session's reads have cost, for tests and operators: the work
/// counted, never timed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitSessionStats {
    /// Reads started: a worker each, opening the repository and scanning
    /// its status.
    pub reads: u64,
    /// Turns answered with an earlier read's facts, nothing having changed.
    pub reused: u64,
    /// Turns that found a read still running and waited for it instead of
    /// starting another.
    pub joined: u64,
    /// Reads that watched the repository anew (a walk of its folders); a
    /// read after files changed, and no folder or ignore rule, keeps the
    /// last watch.
    pub watches: u64,
    /// Why the last read could not be watched (each turn then reads), when
    /// the session asked for watches.
    pub unwatched: Option<String>,
}

#[derive(Debug, Default)]
struct State {
    /// Whether reads are watched: only worth it when later turns follow.
    follow: bool,
    /// The last read that answered, and whether its facts still hold.
    last: Option<Kept>,
    /// A read still running past its turn's deadline.
    pending: Option<Pending>,
    stats: GitSessionStats,
}

/// What a read's facts depend on besides the repository's files.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Key {
    path: PathBuf,
    status: bool,
    max_entries: usize,
}

impl Key {
    fn of(path: &Path, options: &GitProbeOptions) -> Key {
        Key {
            path: path.to_path_buf(),
            status: options.status,
            max_entries: options.max_entries,
        }
    }
}

#[derive(Debug)]
struct Kept {
    key: Key,
    facts: GitFacts,
    /// Whether the facts still hold (nothing changed since the watch
    /// began, the read was whole).
    fresh: bool,
    /// `None`: not watched, so never used again.
    watch: Option<RepoWatch>,
}

#[derive(Debug)]
struct Pending {
    key: Key,
    running: RunningGitRead,
    slot: Option<WatchSlot>,
}

impl GitSession {
    /// A session's reads; `follow`: later turns will come, so each read is
    /// watched and its facts used again until something changes.
    pub fn new(follow: bool) -> GitSession {
        GitSession {
            state: Arc::new(Mutex::new(State {
                follow,
                ..State::default()
            })),
        }
    }

    /// What the reads have cost so far.
    pub fn stats(&self) -> GitSessionStats {
        self.lock().stats.clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent whatever a panicking holder did.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts this turn's read of the repository containing `path`: the
    /// last facts when nothing changed, else the read still running, else
    /// a new read. [`GitRead::finish`] waits at most `options.deadline`.
    pub fn start(&self, path: &Path, options: &GitProbeOptions) -> GitRead {
        let key = Key::of(path, options);
        let mut state = self.lock();
        if let Some(mut pending) = state.pending.take() {
            match pending.running.wait_until(Instant::now()) {
                Some(facts) => state.keep(pending, facts),
                None => {
                    state.stats.joined += 1;
                    state.pending = Some(pending);
                    return GitRead::Session(Box::new(SessionRead {
                        session: self.clone(),
                        until: Instant::now() + options.deadline,
                        first: false,
                    }));
                }
            }
        }
        // A watch that still covers every folder goes on to the next read.
        let mut kept_watch = None;
        if let Some(mut last) = state.last.take()
            && last.key == key
            && let Some(mut watch) = last.watch.take()
        {
            match watch.look() {
                Seen::Nothing if last.fresh => {
                    let facts = last.facts.clone();
                    last.watch = Some(watch);
                    state.last = Some(last);
                    state.stats.reused += 1;
                    return GitRead::Ended(facts);
                }
                Seen::Nothing | Seen::Files => kept_watch = Some(watch),
                Seen::Anything => {}
            }
        }
        let slot = state.follow.then(WatchSlot::default);
        let anew = match (&slot, kept_watch) {
            (Some(slot), Some(watch)) => {
                slot.fill(Ok(watch));
                false
            }
            (slot, _) => slot.is_some(),
        };
        match read::start_with(path, options, slot.clone()) {
            GitRead::Running(running) => {
                state.stats.reads += 1;
                state.stats.watches += u64::from(anew);
                let until = running.started() + running.deadline();
                state.pending = Some(Pending { key, running, slot });
                GitRead::Session(Box::new(SessionRead {
                    session: self.clone(),
                    until,
                    first: true,
                }))
            }
            other => other,
        }
    }
}

impl State {
    /// Keeps the facts of a read that answered, with its watch when they
    /// can be used again.
    fn keep(&mut self, mut pending: Pending, facts: GitFacts) {
        pending.running.waited();
        let mut fresh = false;
        let watch = match pending.slot.as_ref().and_then(WatchSlot::take) {
            Some(Ok(mut watch)) => {
                self.stats.unwatched = None;
                // A change since the watch began may have come after the
                // read looked: these facts are not used again, though the
                // watch may serve the next read.
                match watch.look() {
                    Seen::Nothing => {
                        fresh = reusable(&facts);
                        Some(watch)
                    }
                    Seen::Files => Some(watch),
                    Seen::Anything => None,
                }
            }
            Some(Err(why)) => {
                self.stats.unwatched = Some(why);
                None
            }
            None => None,
        };
        self.last = Some(Kept {
            key: pending.key,
            facts,
            fresh,
            watch,
        });
    }
}

/// Whether facts describe the repository as it was, whole: not a read
/// that failed or did not finish.
fn reusable(facts: &GitFacts) -> bool {
    matches!(
        facts,
        GitFacts::Repository(RepoFacts {
            status: StatusOutcome::Done(_) | StatusOutcome::NotGathered,
            ..
        })
    )
}

/// A turn's wait for its session's read.
#[derive(Debug)]
struct SessionRead {
    session: GitSession,
    /// This turn's deadline.
    until: Instant,
    /// Whether this turn started the read (else an earlier one did).
    first: bool,
}

impl WaitingGitRead for SessionRead {
    fn finish(self: Box<Self>) -> GitFacts {
        let Some(mut pending) = self.session.lock().pending.take() else {
            // Another handle's turn collected the read meanwhile.
            return match &self.session.lock().last {
                Some(kept) => kept.facts.clone(),
                None => GitFacts::Unavailable(super::GitUnavailable::StillRunning),
            };
        };
        let answered = pending.running.wait_until(self.until);
        let mut state = self.session.lock();
        match answered {
            Some(facts) => {
                state.keep(pending, facts.clone());
                facts
            }
            None => {
                let late = pending.running.late(self.first);
                if self.first {
                    // Other reads of the repository in this process start
                    // no second worker for the step it is stuck in either.
                    pending.running.remember();
                }
                state.pending = Some(pending);
                late
            }
        }
    }
}
