//! [`RelevantInvariants`]: the relevant-mode state machine a model-turn
//! builder drives through a session.
//!
//! - First prompt ([`RelevantInvariants::selection_for_prompt`]): run the
//!   selector and wait up to `initial_timeout_ms` (omitted: no deadline).
//!   The host reuses the returned [`Decision`] for every model/tool request
//!   of that turn.
//! - [`RelevantInvariants::on_final_assistant_turn_committed`]: start a
//!   re-evaluation in the background, bounded by `background_timeout_ms`. It
//!   returns at once, so it never delays response delivery.
//! - Next prompt: adopt a finished re-evaluation, else reuse the last valid
//!   selection without waiting; `wait_for_background_on_next_prompt = true`
//!   waits for the newest re-evaluation (up to its deadline).
//! - A timed-out or failed selection falls back to `on_timeout`; with
//!   `cancel_on_timeout` the provider call is dropped at its deadline,
//!   otherwise it runs on and a late answer is adopted at a later prompt.
//!   With `cancel_stale` a newer request cancels older unfinished work;
//!   otherwise older work runs on, and its answer is used only while nothing
//!   newer has answered.
//!
//! Time is tokio time (`tokio::time::Instant`), so a paused test runtime
//! drives every deadline exactly, with no real sleeping. Selector calls are
//! spawned on the caller's tokio runtime.

use std::sync::Arc;
use std::time::Duration;

use bcode_prompt_config::{InvariantsConfig, InvariantsMode, OnTimeout};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::selector::{
    InvariantSelector, SelectorAnswer, SelectorError, SelectorRequest, validate,
};
use super::sidecar::FocusState;
use super::{
    Decision, FallbackReason, FallbackUsed, Guidance, PathTaken, Selection, SelectionOrigin,
    TaskContext, deterministic,
};
use crate::invariants::InvariantCatalog;

/// What a spawned selector call yields: its answer and when it finished.
type CallResult = (Result<SelectorAnswer, SelectorError>, Instant);

/// One selector call in flight.
#[derive(Debug)]
struct Job {
    generation: u64,
    started: Instant,
    deadline: Option<Instant>,
    handle: JoinHandle<CallResult>,
    /// Aborts `handle` at the deadline (`cancel_on_timeout`).
    canceller: Option<JoinHandle<()>>,
    /// The deadline passed and a prompt already fell back for it; later
    /// prompts only wait for a late answer.
    timeout_reported: bool,
}

impl Job {
    fn abort(&self) {
        self.handle.abort();
        if let Some(canceller) = &self.canceller {
            canceller.abort();
        }
    }
}

/// How a finished or abandoned call ended.
#[derive(Debug)]
enum Outcome {
    Answer {
        answer: SelectorAnswer,
        took: Duration,
        late_by: Option<Duration>,
    },
    TimedOut {
        after: Duration,
        cancelled: bool,
    },
    Failed {
        message: String,
    },
}

/// The relevant-mode driver of one session. Build one per session; see the
/// module docs for the lifecycle.
#[derive(Debug)]
pub struct RelevantInvariants {
    config: InvariantsConfig,
    catalog: Arc<InvariantCatalog>,
    selector: Arc<dyn InvariantSelector>,
    /// The last valid focused selection.
    last_valid: Option<Selection>,
    /// Whether `last_valid` came from a fallback (a late answer of the same
    /// request may then replace it).
    last_is_fallback: bool,
    /// The guidance of the previous prompt.
    last_guidance: Option<Guidance>,
    /// Whether the session has had its first prompt (or was restored).
    started: bool,
    next_generation: u64,
    /// Calls in flight, oldest first.
    jobs: Vec<Job>,
    /// Events since the last decision, reported with the next one.
    pending_events: Vec<String>,
}

impl RelevantInvariants {
    /// A driver for one session over `catalog`, asking `selector` under the
    /// `[invariants]` settings; nothing runs until the first prompt.
    pub fn new(
        config: InvariantsConfig,
        catalog: Arc<InvariantCatalog>,
        selector: Arc<dyn InvariantSelector>,
    ) -> RelevantInvariants {
        RelevantInvariants {
            config,
            catalog,
            selector,
            last_valid: None,
            last_is_fallback: false,
            last_guidance: None,
            started: false,
            next_generation: 1,
            jobs: Vec::new(),
            pending_events: Vec::new(),
        }
    }

    fn active(&self) -> bool {
        self.config.enabled && self.config.mode == InvariantsMode::Relevant
    }

    /// Recovers the focus of a reconnected session from its sidecar: the
    /// next prompt reuses it instead of running a first selection. Ids the
    /// catalog no longer holds are dropped and reported.
    pub fn restore(&mut self, state: &FocusState) {
        if !self.active() {
            return;
        }
        let answer = SelectorAnswer {
            ids: state.ids.clone(),
            task_summary: state.task_summary.clone(),
        };
        let checked = validate(
            answer,
            &self.catalog,
            self.config.max_selected,
            state.origin,
            state.generation,
        );
        self.pending_events.push(format!(
            "recovered focus #{} from the session sidecar",
            state.generation
        ));
        if !checked.unknown_ids.is_empty() || !checked.over_limit_ids.is_empty() {
            let mut dropped = checked.unknown_ids;
            dropped.extend(checked.over_limit_ids);
            self.pending_events.push(format!(
                "sidecar ids no longer usable, dropped: {}",
                dropped.join(", ")
            ));
        }
        self.next_generation = self.next_generation.max(state.generation.saturating_add(1));
        self.last_valid = Some(checked.selection.clone());
        self.last_guidance = Some(Guidance::Focused(checked.selection));
        self.started = true;
    }

    /// The focus worth saving to the sidecar: the last valid selection.
    pub fn focus_state(&self) -> Option<FocusState> {
        self.last_valid.as_ref().map(FocusState::from_selection)
    }

    /// The invariant guidance for a new user prompt. Reuse the returned
    /// decision for every model/tool request of the turn.
    pub async fn selection_for_prompt(&mut self, task: &TaskContext) -> Decision {
        if !self.config.enabled {
            return Decision::new(PathTaken::Disabled, Guidance::Nothing);
        }
        if self.config.mode == InvariantsMode::Full {
            return Decision::new(PathTaken::FullMode, Guidance::Catalog);
        }
        let prompt_started = Instant::now();
        let mut decision = if self.started {
            self.next_prompt(task).await
        } else {
            self.started = true;
            self.first_prompt(task).await
        };
        decision.timings.waited = prompt_started.elapsed();
        let mut events = std::mem::take(&mut self.pending_events);
        events.append(&mut decision.events);
        decision.events = events;
        self.last_guidance = Some(decision.guidance.clone());
        decision
    }

    /// Starts a background re-evaluation for `task` (the prompt plus
    /// whatever the host adds, such as the committed final answer) and
    /// returns at once. Returns the request's generation, or `None` when
    /// relevant mode is off or no tokio runtime is running (reported with
    /// the next decision).
    pub fn on_final_assistant_turn_committed(&mut self, task: &TaskContext) -> Option<u64> {
        if !self.active() {
            return None;
        }
        if tokio::runtime::Handle::try_current().is_err() {
            self.pending_events
                .push("no async runtime: background re-evaluation skipped".to_owned());
            return None;
        }
        self.cancel_stale();
        let generation = self.start_job(task, true);
        self.pending_events.push(format!(
            "background re-evaluation #{generation} started after the final assistant turn"
        ));
        Some(generation)
    }

    /// Waits for every call in flight (each up to its deadline) and adopts
    /// the newest valid answer. For hosts with nothing to deliver, such as
    /// the CLI before it saves the sidecar; a session host does not call it.
    pub async fn finish_background(&mut self) {
        while let Some(job) = self.jobs.pop() {
            if let Waited::Done(generation, Outcome::Answer { answer, .. }) =
                wait_until_deadline(job, false).await
            {
                let _ = self.adopt(answer, generation, &mut Vec::new());
            }
        }
    }

    async fn first_prompt(&mut self, task: &TaskContext) -> Decision {
        let generation = self.start_job(task, false);
        let Some(job) = self.jobs.pop() else {
            return self.fallback(
                task,
                FallbackReason::Failed {
                    message: "selector call could not start".to_owned(),
                },
            );
        };
        let keep_running = !self.config.selector.cancel_on_timeout;
        let (generation, outcome) = match wait_until_deadline(job, keep_running).await {
            Waited::Done(generation, outcome) => (generation, outcome),
            Waited::StillRunning(mut job) => {
                job.timeout_reported = true;
                let after = job.deadline.map(|d| d - job.started).unwrap_or_default();
                self.jobs.push(job);
                let mut decision = self.fallback(task, FallbackReason::TimedOut { after });
                decision.events.push(format!(
                    "selector call #{generation} left running (cancel_on_timeout = false); a late answer is used from the next prompt on"
                ));
                decision.path = PathTaken::InitialSelection;
                return decision;
            }
        };
        let mut decision = self.decide(task, generation, outcome);
        decision.path = PathTaken::InitialSelection;
        decision
    }

    async fn next_prompt(&mut self, task: &TaskContext) -> Decision {
        let mut events = Vec::new();
        // Collect whatever finished since the last prompt, newest first: the
        // newest answer wins and older ones are reported as stale. Only the
        // newest request's failure matters, and only when no newer request
        // is still running.
        let mut latest_failure = None;
        let mut adopted = None;
        let mut finished = self.harvest().await;
        finished.reverse();
        let newest_running = self.jobs.last().map(|job| job.generation);
        for (index, (generation, outcome)) in finished.into_iter().enumerate() {
            match outcome {
                Outcome::Answer {
                    answer,
                    took,
                    late_by,
                } => {
                    if let Some(late) = late_by {
                        events.push(format!(
                            "selector call #{generation} answered {} ms after its deadline",
                            late.as_millis()
                        ));
                    }
                    if self.adopt(answer, generation, &mut events) && adopted.is_none() {
                        adopted = Some(took);
                    }
                }
                other => {
                    let newest = index == 0
                        && newest_running.is_none_or(|running| running < generation)
                        && self
                            .last_valid
                            .as_ref()
                            .is_none_or(|s| generation > s.generation);
                    if newest {
                        latest_failure = Some((generation, other));
                    } else {
                        events.push(format!(
                            "superseded selector call #{generation} failed or timed out; ignored"
                        ));
                    }
                }
            }
        }
        // The newest call still running, if any.
        let running = self.jobs.last().map(|job| {
            let timed_out = job.deadline.is_some_and(|d| Instant::now() >= d);
            (job.generation, timed_out, job.timeout_reported)
        });
        let mut path = if adopted.is_some() {
            PathTaken::AdoptedBackground
        } else {
            PathTaken::ReusedLast
        };
        if let Some((generation, timed_out, reported)) = running {
            if self.config.selector.wait_for_background_on_next_prompt && !timed_out {
                if let Some(job) = self.jobs.pop() {
                    let keep_running = !self.config.selector.cancel_on_timeout;
                    match wait_until_deadline(job, keep_running).await {
                        Waited::Done(generation, outcome) => {
                            let mut decision = self.decide(task, generation, outcome);
                            decision.path = PathTaken::WaitedForBackground;
                            events.append(&mut decision.events);
                            decision.events = events;
                            return decision;
                        }
                        Waited::StillRunning(mut job) => {
                            job.timeout_reported = true;
                            let after = job.deadline.map(|d| d - job.started).unwrap_or_default();
                            events.push(format!(
                                "selector call #{} left running (cancel_on_timeout = false)",
                                job.generation
                            ));
                            self.jobs.push(job);
                            latest_failure = Some((
                                generation,
                                Outcome::TimedOut {
                                    after,
                                    cancelled: false,
                                },
                            ));
                            path = PathTaken::WaitedForBackground;
                        }
                    }
                }
            } else if timed_out && !reported {
                if let Some(job) = self.jobs.last_mut() {
                    job.timeout_reported = true;
                    let after = job.deadline.map(|d| d - job.started).unwrap_or_default();
                    latest_failure = Some((
                        generation,
                        Outcome::TimedOut {
                            after,
                            cancelled: false,
                        },
                    ));
                    events.push(format!(
                        "selector call #{generation} still running past its deadline (cancel_on_timeout = false)"
                    ));
                }
            } else {
                events.push(format!(
                    "background re-evaluation #{generation} still running; not waited for"
                ));
            }
        }
        if let Some((generation, outcome)) = latest_failure {
            let mut decision = self.decide(task, generation, outcome);
            decision.path = if path == PathTaken::WaitedForBackground {
                path
            } else {
                PathTaken::BackgroundFallback
            };
            events.append(&mut decision.events);
            decision.events = events;
            return decision;
        }
        let guidance = match &self.last_valid {
            Some(selection) => Guidance::Focused(selection.clone()),
            None => self.last_guidance.clone().unwrap_or(Guidance::Catalog),
        };
        let mut decision = Decision::new(path, guidance);
        decision.timings.selector = adopted;
        decision.events = events;
        decision
    }

    /// The decision for one call's outcome: its validated answer, or the
    /// `on_timeout` fallback.
    fn decide(&mut self, task: &TaskContext, generation: u64, outcome: Outcome) -> Decision {
        match outcome {
            Outcome::Answer { answer, took, .. } => {
                let mut events = Vec::new();
                let checked = validate(
                    answer,
                    &self.catalog,
                    self.config.max_selected,
                    self.selector.origin(),
                    generation,
                );
                self.last_valid = Some(checked.selection.clone());
                self.last_is_fallback = false;
                if checked.selection.ids.is_empty() {
                    events.push("the selector found no invariant relevant".to_owned());
                }
                let mut decision = Decision::new(
                    PathTaken::InitialSelection,
                    Guidance::Focused(checked.selection),
                );
                decision.timings.selector = Some(took);
                decision.unknown_ids = checked.unknown_ids;
                decision.over_limit_ids = checked.over_limit_ids;
                decision.events = events;
                decision
            }
            Outcome::TimedOut { after, cancelled } => {
                let mut decision = self.fallback(task, FallbackReason::TimedOut { after });
                if cancelled {
                    decision.events.push(format!(
                        "selector call #{generation} cancelled at its deadline (cancel_on_timeout = true)"
                    ));
                }
                decision
            }
            Outcome::Failed { message } => self.fallback(task, FallbackReason::Failed { message }),
        }
    }

    /// The `on_timeout` fallback for this prompt.
    fn fallback(&mut self, task: &TaskContext, reason: FallbackReason) -> Decision {
        let policy = self.config.selector.on_timeout;
        let mut events = Vec::new();
        let guidance = match policy {
            OnTimeout::Full => Guidance::Catalog,
            OnTimeout::None => Guidance::Nothing,
            OnTimeout::Previous => match &self.last_valid {
                Some(selection) => Guidance::Focused(selection.clone()),
                None => {
                    events.push("no previous valid selection: complete catalog".to_owned());
                    Guidance::Catalog
                }
            },
            OnTimeout::Deterministic => {
                let generation = self.last_valid.as_ref().map_or(0, |s| s.generation);
                let request = SelectorRequest::new(task, &self.catalog, &self.config);
                let checked = validate(
                    deterministic::select_deterministic(&request),
                    &self.catalog,
                    self.config.max_selected,
                    SelectionOrigin::Deterministic,
                    generation,
                );
                self.last_valid = Some(checked.selection.clone());
                self.last_is_fallback = true;
                Guidance::Focused(checked.selection)
            }
        };
        let mut decision = Decision::new(PathTaken::InitialSelection, guidance);
        decision.fallback = Some(FallbackUsed { policy, reason });
        decision.events = events;
        decision
    }

    /// Makes `answer` the last valid selection when nothing newer has
    /// answered. Returns whether it was adopted.
    fn adopt(&mut self, answer: SelectorAnswer, generation: u64, events: &mut Vec<String>) -> bool {
        let newer = match &self.last_valid {
            None => true,
            Some(last) => {
                generation > last.generation
                    || (self.last_is_fallback && generation >= last.generation)
            }
        };
        if !newer {
            events.push(format!(
                "answer of stale selector call #{generation} ignored (a newer selection exists)"
            ));
            return false;
        }
        let checked = validate(
            answer,
            &self.catalog,
            self.config.max_selected,
            self.selector.origin(),
            generation,
        );
        if !checked.unknown_ids.is_empty() {
            events.push(format!(
                "dropped unknown ids from selector call #{generation}: {}",
                checked.unknown_ids.join(", ")
            ));
        }
        if !checked.over_limit_ids.is_empty() {
            events.push(format!(
                "dropped ids beyond max_selected from selector call #{generation}: {}",
                checked.over_limit_ids.join(", ")
            ));
        }
        self.last_valid = Some(checked.selection);
        self.last_is_fallback = false;
        true
    }

    /// Finished calls, removed from the in-flight list, oldest first.
    async fn harvest(&mut self) -> Vec<(u64, Outcome)> {
        let (finished, running): (Vec<Job>, Vec<Job>) = std::mem::take(&mut self.jobs)
            .into_iter()
            .partition(|job| job.handle.is_finished());
        self.jobs = running;
        let mut outcomes = Vec::with_capacity(finished.len());
        for job in finished {
            outcomes.push(wait(job).await);
        }
        outcomes
    }

    /// `cancel_stale`: a newer request makes every call in flight stale.
    fn cancel_stale(&mut self) {
        if !self.config.selector.cancel_stale {
            return;
        }
        for job in std::mem::take(&mut self.jobs) {
            if job.handle.is_finished() {
                // Its answer is already there; keep it for the next harvest.
                self.jobs.push(job);
                continue;
            }
            job.abort();
            self.pending_events.push(format!(
                "cancelled stale selector call #{} (cancel_stale = true)",
                job.generation
            ));
        }
    }

    /// Spawns one selector call and returns its generation.
    fn start_job(&mut self, task: &TaskContext, background: bool) -> u64 {
        let generation = self.next_generation;
        self.next_generation += 1;
        let timeout_ms = if background {
            self.config.selector.background_timeout_ms
        } else {
            self.config.selector.initial_timeout_ms
        };
        let started = Instant::now();
        let deadline = timeout_ms.map(|ms| started + Duration::from_millis(ms));
        let request = SelectorRequest::new(task, &self.catalog, &self.config);
        // A host's selector may panic while building its call, not only
        // inside the future (which the spawned task isolates): either way
        // only this selection fails, and the fallback rules apply.
        let selector = &self.selector;
        let call =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| selector.select(request)))
                .unwrap_or_else(|_| {
                    Box::pin(std::future::ready(Err(SelectorError::new(
                        "the selector panicked",
                    ))))
                });
        let handle = tokio::spawn(async move {
            let result = call.await;
            (result, Instant::now())
        });
        let canceller = match deadline {
            Some(deadline) if self.config.selector.cancel_on_timeout => {
                let abort = handle.abort_handle();
                Some(tokio::spawn(async move {
                    tokio::time::sleep_until(deadline).await;
                    abort.abort();
                }))
            }
            _ => None,
        };
        self.jobs.push(Job {
            generation,
            started,
            deadline,
            handle,
            canceller,
            timeout_reported: false,
        });
        generation
    }
}

impl Drop for RelevantInvariants {
    /// A session that ends takes its unfinished selector work with it.
    fn drop(&mut self) {
        for job in &self.jobs {
            job.abort();
        }
    }
}

/// The result of waiting for a call up to its deadline.
enum Waited {
    Done(u64, Outcome),
    /// The deadline passed and the call was left running.
    StillRunning(Job),
}

/// Waits for `job` until its deadline (none: without a deadline). At the
/// deadline the call is aborted unless `keep_running`.
async fn wait_until_deadline(mut job: Job, keep_running: bool) -> Waited {
    let Some(deadline) = job.deadline else {
        return Waited::Done(job.generation, wait(job).await.1);
    };
    match tokio::time::timeout_at(deadline, &mut job.handle).await {
        Ok(joined) => Waited::Done(job.generation, classify(&job, joined)),
        Err(_) if keep_running => Waited::StillRunning(job),
        Err(_) => {
            job.abort();
            Waited::Done(
                job.generation,
                Outcome::TimedOut {
                    after: deadline - job.started,
                    cancelled: true,
                },
            )
        }
    }
}

/// Waits for `job` to end (the deadline canceller, when there is one, ends
/// it at its deadline) and classifies the result.
async fn wait(mut job: Job) -> (u64, Outcome) {
    let joined = (&mut job.handle).await;
    if let Some(canceller) = &job.canceller {
        canceller.abort();
    }
    (job.generation, classify(&job, joined))
}

fn classify(job: &Job, joined: Result<CallResult, tokio::task::JoinError>) -> Outcome {
    if let Some(canceller) = &job.canceller {
        canceller.abort();
    }
    match joined {
        Ok((Ok(answer), finished)) => Outcome::Answer {
            answer,
            took: finished - job.started,
            late_by: job
                .deadline
                .filter(|deadline| finished > *deadline)
                .map(|deadline| finished - deadline),
        },
        Ok((Err(err), _)) => Outcome::Failed {
            message: err.message,
        },
        Err(err) if err.is_cancelled() => match job.deadline {
            Some(deadline) => Outcome::TimedOut {
                after: deadline - job.started,
                cancelled: true,
            },
            None => Outcome::Failed {
                message: "selector call was cancelled".to_owned(),
            },
        },
        Err(_) => Outcome::Failed {
            message: "selector task panicked".to_owned(),
        },
    }
}
