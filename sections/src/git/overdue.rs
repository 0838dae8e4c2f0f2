//! Repositories whose git worker overran the probe's deadline, remembered
//! until that worker ends, so a repository that hangs libgit2 costs one
//! thread per process rather than one per turn.
//!
//! The memory is process-wide on purpose: a stuck thread is a process-wide
//! cost, and two sessions on the same repository must not each add one. It
//! holds only repositories whose worker is still running; a worker that
//! finishes (a large status scan that was merely slow) clears its entry, so
//! the next probe reads the repository as usual.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Where a worker is in its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// Opening the repository and reading `HEAD` and the worktree.
    Opening,
    /// Scanning the status.
    Status,
    /// Finished (or gone).
    Done,
}

/// A worker's phase, shared between the worker and the memory.
#[derive(Debug)]
pub(super) struct Progress(AtomicU8);

impl Progress {
    /// A worker about to open the repository.
    pub(super) fn new() -> Arc<Progress> {
        Arc::new(Progress(AtomicU8::new(Phase::Opening as u8)))
    }

    /// Records that the worker entered `phase`.
    pub(super) fn enter(&self, phase: Phase) {
        self.0.store(phase as u8, Ordering::Release);
    }

    fn phase(&self) -> Phase {
        match self.0.load(Ordering::Acquire) {
            0 => Phase::Opening,
            1 => Phase::Status,
            _ => Phase::Done,
        }
    }

    /// A guard that marks the worker done when dropped, however it ends.
    pub(super) fn finish_on_drop(&self) -> FinishGuard<'_> {
        FinishGuard(self)
    }
}

/// Marks its worker [`Phase::Done`] when dropped.
pub(super) struct FinishGuard<'a>(&'a Progress);

impl Drop for FinishGuard<'_> {
    fn drop(&mut self) {
        self.0.enter(Phase::Done);
    }
}

type Overdue = BTreeMap<PathBuf, Arc<Progress>>;

static OVERDUE: Mutex<Overdue> = Mutex::new(BTreeMap::new());

fn overdue() -> std::sync::MutexGuard<'static, Overdue> {
    // The map stays consistent whatever a panicking holder did.
    OVERDUE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The key a repository is remembered under: its root, canonical when it
/// can be resolved.
pub(super) fn key(root: &Path) -> PathBuf {
    std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

/// Remembers that the worker of `key` overran.
pub(super) fn remember(key: PathBuf, progress: Arc<Progress>) {
    overdue().insert(key, progress);
}

/// Where an earlier overrunning worker of `key` still is, or `None` when
/// there is none (an entry whose worker has finished is forgotten).
pub(super) fn earlier(key: &Path) -> Option<Phase> {
    let mut map = overdue();
    let phase = map.get(key)?.phase();
    if phase == Phase::Done {
        map.remove(key);
        return None;
    }
    Some(phase)
}
