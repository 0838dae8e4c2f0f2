//! Reading and parsing candidates on worker threads while the walk is still
//! finding them.
//!
//! A cold build used to walk every root first and load afterwards, so one
//! core idled while the walk listed folders and built candidates on the
//! other. Here the walk hands each candidate over as soon as it exists:
//! workers (one fewer than the cores, started once there is enough to do)
//! load while the walk goes on, and the building thread joins them when the
//! walk is done. Results carry their slot, so the registry comes out in the
//! same order whatever thread loaded what.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{Scope, ScopedJoinHandle};

use bcode_fs::DirHandle;

use crate::discover::cache::memory::{LoadSettings, Loaded, Prior, failed_load, load_fresh};
use crate::discover::candidate::Candidate;

/// One file to load: its slot among the build's candidates, the candidate
/// (the loader owns it, so the summary takes its paths), the root it is
/// opened relative to, and the cached outcome to re-verify.
pub(crate) struct Job {
    pub slot: usize,
    pub candidate: Candidate,
    pub root: Option<Arc<DirHandle>>,
    pub prior: Option<Prior>,
}

/// The queue between the walk and the workers. Jobs are handed over in
/// batches, so a wake-up costs one system call per batch, not per file.
pub(crate) struct JobQueue {
    settings: LoadSettings,
    state: Mutex<QueueState>,
    ready: Condvar,
}

struct QueueState {
    jobs: VecDeque<Job>,
    /// No more jobs will come: idle workers leave.
    closed: bool,
}

impl JobQueue {
    pub fn new(settings: LoadSettings) -> Self {
        JobQueue {
            settings,
            state: Mutex::new(QueueState {
                jobs: VecDeque::new(),
                closed: false,
            }),
            ready: Condvar::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, QueueState> {
        // Nothing panics while holding the lock; a poisoned queue is still
        // a consistent queue.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn len(&self) -> usize {
        self.state().jobs.len()
    }

    fn push_all(&self, jobs: &mut Vec<Job>) {
        self.state().jobs.extend(jobs.drain(..));
        self.ready.notify_all();
    }

    /// The next job; with `wait`, blocks until one comes or the queue closes.
    fn next(&self, wait: bool) -> Option<Job> {
        let mut state = self.state();
        loop {
            if let Some(job) = state.jobs.pop_front() {
                return Some(job);
            }
            if state.closed || !wait {
                return None;
            }
            state = self
                .ready
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn close(&self) {
        self.state().closed = true;
        self.ready.notify_all();
    }

    /// Loads one job with the calling thread's read buffer. A panic in a
    /// parser costs only that file, which becomes an `unreadable`
    /// diagnostic.
    fn run(&self, job: Job, buf: &mut Vec<u8>) -> (usize, Loaded) {
        let Job {
            slot,
            candidate,
            root,
            prior,
        } = job;
        let settings = &self.settings;
        // The loader takes the candidate whole; its path is kept apart for
        // the diagnostic should the load panic.
        let location = candidate.origin.location.clone();
        let loaded = catch_unwind(AssertUnwindSafe(|| {
            load_fresh(root.as_deref(), candidate, settings, prior, buf)
        }));
        // A file with a huge front matter does not keep its buffer (nor
        // one a panic may have left half-written).
        if loaded.is_err() || buf.capacity() > MAX_KEPT_BUFFER {
            *buf = Vec::new();
        }
        (slot, loaded.unwrap_or_else(|_| failed_load(&location)))
    }

    /// A worker: loads jobs until the queue closes, sending each result
    /// as it is done.
    fn work(&self, results: &Sender<(usize, Loaded)>) {
        let mut buf = Vec::new();
        while let Some(job) = self.next(true) {
            if results.send(self.run(job, &mut buf)).is_err() {
                return;
            }
        }
    }
}

/// The building thread's end of the queue: collects jobs, starts workers
/// when there is enough to share, and finishes the loads.
pub(crate) struct LoadPool<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    queue: &'env JobQueue,
    /// Jobs not yet handed over.
    pending: Vec<Job>,
    workers: Vec<ScopedJoinHandle<'scope, ()>>,
    max_workers: usize,
    dispatched: usize,
    /// Every thread's results as they are done, this one's included: the
    /// build files them at once (collecting them per thread held every
    /// result at once, a few MB at 60,000 skills).
    results: Receiver<(usize, Loaded)>,
    sender: Sender<(usize, Loaded)>,
    /// This thread's read buffer.
    buf: Vec<u8>,
}

/// A read buffer larger than this (a front matter of tens of KiB) is freed
/// after its file instead of being kept for the next one.
const MAX_KEPT_BUFFER: usize = 64 * 1024;

/// Jobs collected before they are handed over (and before the first worker
/// starts: smaller builds load on the building thread alone, as a thread
/// costs more than a handful of small files).
const BATCH: usize = 64;

/// Jobs waiting in the queue beyond which the walking thread loads instead
/// of queueing more. The walk finds a skill folder with one `stat` and a
/// load reads and parses a file, so an unbounded queue held nearly every
/// candidate with its paths at once: 14 MB of a 60,000-skill build's
/// 123 MB peak heap.
const MAX_QUEUED: usize = 4 * BATCH;

impl<'scope, 'env> LoadPool<'scope, 'env> {
    /// A pool whose workers, at most `threads - 1` of them, run in `scope`.
    pub fn new(scope: &'scope Scope<'scope, 'env>, queue: &'env JobQueue, threads: usize) -> Self {
        let (sender, results) = channel();
        LoadPool {
            scope,
            queue,
            pending: Vec::with_capacity(BATCH),
            workers: Vec::new(),
            max_workers: threads.saturating_sub(1),
            dispatched: 0,
            results,
            sender,
            buf: Vec::new(),
        }
    }

    /// Loads one job on this thread.
    fn run_here(&mut self, job: Job) {
        let done = self.queue.run(job, &mut self.buf);
        // The receiver lives as long as the pool, so this cannot fail.
        let _ = self.sender.send(done);
    }

    /// The results done so far and not yet taken.
    pub fn ready(&mut self) -> impl Iterator<Item = (usize, Loaded)> + '_ {
        self.results.try_iter()
    }

    /// Queues one job.
    pub fn submit(&mut self, job: Job) {
        self.dispatched += 1;
        self.pending.push(job);
        if self.pending.len() >= BATCH && self.max_workers > 0 {
            if self.workers.len() < self.max_workers {
                let queue = self.queue;
                let results = self.sender.clone();
                // A thread that cannot be started leaves its share to the
                // others, or to this thread in `finish`.
                match std::thread::Builder::new()
                    .name("bcode-skill-load".into())
                    .spawn_scoped(self.scope, move || queue.work(&results))
                {
                    Ok(worker) => self.workers.push(worker),
                    Err(_) => self.max_workers = self.workers.len(),
                }
            }
            if !self.workers.is_empty() {
                self.queue.push_all(&mut self.pending);
                while self.queue.len() > MAX_QUEUED {
                    let Some(job) = self.queue.next(false) else {
                        break;
                    };
                    self.run_here(job);
                }
            }
        }
        if self.pending.len() >= BATCH && self.max_workers == 0 {
            // No worker will come: load as the walk goes.
            for job in std::mem::take(&mut self.pending) {
                self.run_here(job);
            }
        }
    }

    /// How many jobs were submitted (tests check nothing was lost).
    #[cfg(test)]
    pub fn dispatched(&self) -> usize {
        self.dispatched
    }

    /// Loads what is left on this thread beside the workers, waits for
    /// them, and returns the results not yet taken. A worker that died (it
    /// cannot panic in a load, but anything else) leaves its slots empty;
    /// the caller fills those.
    pub fn finish(mut self) -> Vec<(usize, Loaded)> {
        if self.workers.is_empty() {
            for job in std::mem::take(&mut self.pending) {
                self.run_here(job);
            }
        } else {
            self.queue.push_all(&mut self.pending);
        }
        while let Some(job) = self.queue.next(false) {
            self.run_here(job);
        }
        self.queue.close();
        for worker in std::mem::take(&mut self.workers) {
            let _ = worker.join();
        }
        self.results.try_iter().collect()
    }
}

impl Drop for LoadPool<'_, '_> {
    /// Idle workers wait for jobs until the queue closes. Closing it here as
    /// well means a panic on the building thread (a bug) unwinds into a
    /// joined scope instead of waiting forever for workers that wait too,
    /// and without loading what was still queued. (`finish` has emptied
    /// the queue by the time it drops the pool.)
    fn drop(&mut self) {
        // Jobs still queued then are dropped unloaded: nobody will read
        // their results.
        self.queue.state().jobs.clear();
        self.queue.close();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;
    use crate::discover::sources::SourceRoot;
    use crate::discover::walk::{WalkOptions, walk_root};
    use bcode_skill_models::{SkillSource, SourceKind};
    use std::sync::mpsc;
    use std::time::{Duration, SystemTime};

    /// `n` skill folders under a temporary root, walked into candidates.
    fn candidates(n: usize) -> (tempfile::TempDir, Vec<Candidate>) {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..n {
            let folder = dir.path().join(format!("skill-{i:04}"));
            std::fs::create_dir(&folder).unwrap();
            std::fs::write(
                folder.join("SKILL.md"),
                format!("---\ndescription: skill number {i}\n---\nbody\n"),
            )
            .unwrap();
        }
        let root = SourceRoot {
            source: SkillSource {
                kind: SourceKind::Config,
                label: "test".into(),
                ordinal: 0,
                root: None,
                provider: None,
            },
            path: dir.path().to_path_buf(),
            repository: None,
            owner_check: None,
        };
        let mut found = Vec::new();
        walk_root(
            &root,
            bcode_fs::Confinement::anywhere_but_system(),
            &WalkOptions::default(),
            SystemTime::now(),
            true,
            &mut bcode_fs::Canonicalizer::new(),
            &mut |c| found.push(c),
        );
        assert_eq!(found.len(), n);
        (dir, found)
    }

    fn queue() -> JobQueue {
        JobQueue::new(LoadSettings {
            max_bytes: 1 << 20,
            now: SystemTime::now(),
            racy_window: Duration::from_millis(100),
            record: false,
        })
    }

    /// `candidate` as the job of `slot`.
    fn job(slot: usize, candidate: &Candidate) -> Job {
        Job {
            slot,
            candidate: candidate.clone(),
            root: None,
            prior: None,
        }
    }

    /// Submits `found` in order, each as the job of its index.
    fn submit_all(pool: &mut LoadPool<'_, '_>, found: &[Candidate]) {
        for (slot, candidate) in found.iter().enumerate() {
            pool.submit(job(slot, candidate));
        }
    }

    fn load_all(found: &[Candidate], threads: usize) -> Vec<(usize, Loaded)> {
        let queue = queue();
        std::thread::scope(|scope| {
            let mut pool = LoadPool::new(scope, &queue, threads);
            submit_all(&mut pool, found);
            assert_eq!(pool.dispatched(), found.len());
            pool.finish()
        })
    }

    #[test]
    fn every_job_comes_back_once_with_its_own_file_whatever_the_threads() {
        // Fewer jobs than a batch (no worker starts) and many batches.
        for n in [0, 3, BATCH - 1, BATCH, 5 * BATCH + 7] {
            let (_dir, found) = candidates(n);
            for threads in [1, 2, 4] {
                let mut done = load_all(&found, threads);
                done.sort_by_key(|(slot, _)| *slot);
                let slots: Vec<usize> = done.iter().map(|(slot, _)| *slot).collect();
                assert_eq!(
                    slots,
                    (0..n).collect::<Vec<_>>(),
                    "n {n}, threads {threads}"
                );
                for (slot, loaded) in &done {
                    let skill = loaded.outcome.skill.as_ref().unwrap();
                    assert_eq!(&*skill.location, found[*slot].origin.location.as_path());
                    let number = skill.manifest.description.rsplit(' ').next().unwrap();
                    assert_eq!(number.parse::<usize>().unwrap(), *slot);
                }
            }
        }
    }

    #[test]
    fn the_queue_stays_bounded_however_far_the_walk_runs_ahead() {
        let (_dir, found) = candidates(20 * BATCH);
        let queue = queue();
        let done = std::thread::scope(|scope| {
            let mut pool = LoadPool::new(scope, &queue, 2);
            for (slot, candidate) in found.iter().enumerate() {
                pool.submit(job(slot, candidate));
                assert!(queue.len() <= MAX_QUEUED, "{} queued", queue.len());
            }
            pool.finish()
        });
        let mut slots: Vec<usize> = done.into_iter().map(|(slot, _)| slot).collect();
        slots.sort_unstable();
        assert_eq!(slots, (0..found.len()).collect::<Vec<_>>());
    }

    #[test]
    fn a_panic_while_submitting_unwinds_instead_of_waiting_for_idle_workers() {
        let (_dir, found) = candidates(2 * BATCH);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let queue = queue();
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                std::thread::scope(|scope| {
                    let mut pool = LoadPool::new(scope, &queue, 2);
                    submit_all(&mut pool, &found);
                    panic!("a bug in the walk");
                });
            }));
            tx.send(result.is_err()).unwrap();
        });
        let unwound = rx.recv_timeout(Duration::from_secs(30));
        assert_eq!(unwound, Ok(true), "the scope never returned");
    }
}
