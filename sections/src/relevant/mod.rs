//! Relevant-mode invariant guidance (`[invariants] mode = "relevant"`): a
//! selector picks the invariants that matter for the task, a driver runs it
//! on the session's lifecycle (first prompt, model/tool turn, background
//! re-evaluation after the final assistant turn, next prompt), and a
//! per-session sidecar keeps the focus across reconnects.
//!
//! - [`selector`]: the [`InvariantSelector`] seam a host implements with a
//!   model call, and the validation every answer goes through (unknown ids
//!   and ids over `max_selected` are dropped and reported).
//! - [`deterministic`]: the built-in lexical selector (no model), used for
//!   `on_timeout = "deterministic"` and by the CLI.
//! - [`driver`]: [`RelevantInvariants`], the state machine a model-turn
//!   builder drives; every call returns a [`Decision`] saying which path was
//!   taken, the fallback used, timings and ids.
//! - [`sidecar`]: the bounded, atomically written focus file.
//!
//! The stage that renders a [`Decision`] lives with the full-mode stage in
//! [`crate::invariants`]; this module produces data only.

pub(crate) mod deterministic;
pub(crate) mod driver;
pub(crate) mod selector;
pub(crate) mod sidecar;

use std::time::Duration;

use bcode_prompt_config::OnTimeout;

pub use deterministic::DeterministicSelector;
pub use driver::RelevantInvariants;
pub use selector::{InvariantSelector, SelectorAnswer, SelectorError, SelectorRequest};

/// What the selector is told about the task: the user's prompt (and, for a
/// re-evaluation, whatever the host adds, such as the final assistant turn)
/// and the repository paths the task touched so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskContext {
    /// The user's prompt, plus for a re-evaluation whatever the host adds
    /// (such as the final assistant turn).
    pub text: String,
    /// Repository-relative paths with `/` separators.
    pub touched_paths: Vec<String>,
}

impl TaskContext {
    /// A task from borrowed parts, copied so the selector may keep it past
    /// the call.
    pub fn new(text: &str, touched_paths: &[String]) -> TaskContext {
        TaskContext {
            text: text.to_owned(),
            touched_paths: touched_paths.to_vec(),
        }
    }
}

/// Where a focused selection came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelectionOrigin {
    /// The host's selector (a model call).
    Selector,
    /// The built-in deterministic selector.
    Deterministic,
}

impl SelectionOrigin {
    /// The lower-case name used in `--explain` notes and the sidecar file.
    pub fn as_str(self) -> &'static str {
        match self {
            SelectionOrigin::Selector => "selector",
            SelectionOrigin::Deterministic => "deterministic",
        }
    }
}

/// A validated focused selection: known ids only, at most `max_selected`, in
/// the selector's order of relevance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The selected invariant ids, most relevant first.
    pub ids: Vec<String>,
    /// The selector's short task summary, if it gave one.
    pub task_summary: Option<String>,
    /// Which selector made it: the host's or the deterministic one.
    pub origin: SelectionOrigin,
    /// Which selector request produced it (1 is the session's first); a newer
    /// request's answer always wins over an older one.
    pub generation: u64,
}

/// The invariant guidance of one prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Guidance {
    /// The complete catalog (full mode, or the `full` fallback).
    Catalog,
    /// Only the selected invariants.
    Focused(Selection),
    /// No invariant guidance this turn (`on_timeout = "none"`, or disabled).
    Nothing,
}

/// Which way the driver reached its decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathTaken {
    /// `[invariants] enabled = false`: nothing was loaded or asked.
    Disabled,
    /// `mode = "full"`: the complete catalog, no selector work.
    FullMode,
    /// The first prompt of the session ran the selector and waited for it.
    InitialSelection,
    /// A later prompt reused the last valid selection without waiting.
    ReusedLast,
    /// A later prompt adopted a background re-evaluation that had finished.
    AdoptedBackground,
    /// A later prompt waited for background work
    /// (`wait_for_background_on_next_prompt = true`).
    WaitedForBackground,
    /// A later prompt fell back because the newest re-evaluation failed or
    /// passed its deadline.
    BackgroundFallback,
}

impl PathTaken {
    /// The wording of the `relevant mode: ...` note in `--explain`.
    pub fn as_str(self) -> &'static str {
        match self {
            PathTaken::Disabled => "disabled",
            PathTaken::FullMode => "full mode",
            PathTaken::InitialSelection => "initial selection",
            PathTaken::ReusedLast => "reused last valid selection",
            PathTaken::AdoptedBackground => "adopted finished background re-evaluation",
            PathTaken::WaitedForBackground => "waited for background re-evaluation",
            PathTaken::BackgroundFallback => "background re-evaluation failed or timed out",
        }
    }
}

/// Why a fallback was needed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FallbackReason {
    /// The selector did not answer by its deadline.
    TimedOut {
        /// The deadline the selector was given, measured from the call's
        /// start.
        after: Duration,
    },
    /// The selector failed (an error, a cancelled or panicked task).
    Failed {
        /// The selector's error, or what went wrong with its task.
        message: String,
    },
}

/// A fallback that `on_timeout` chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FallbackUsed {
    /// The `[invariants] on_timeout` policy that decided the guidance.
    pub policy: OnTimeout,
    /// What went wrong with the selection that made a fallback necessary.
    pub reason: FallbackReason,
}

/// How long the decision took on the driver's clock (tokio time, so paused
/// time in tests gives exact values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    /// How long the prompt waited before the decision was made.
    pub waited: Duration,
    /// How long the selector took to answer, when its answer was used.
    pub selector: Option<Duration>,
}

/// Everything about one prompt's invariant guidance: what to place and how
/// the driver got there. [`Decision::notes`] is the `--explain` wording.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// What the invariants section places this turn.
    pub guidance: Guidance,
    /// Which branch of the driver's lifecycle produced the decision.
    pub path: PathTaken,
    /// The `on_timeout` fallback applied, when the selector did not deliver.
    pub fallback: Option<FallbackUsed>,
    /// How long the prompt waited and the selector took.
    pub timings: Timings,
    /// Ids a selector named that the catalog does not hold (dropped).
    pub unknown_ids: Vec<String>,
    /// Ids beyond `max_selected` (dropped).
    pub over_limit_ids: Vec<String>,
    /// Everything else that happened: cancellations, late answers, sidecar
    /// recovery and saving.
    pub events: Vec<String>,
}

impl Decision {
    pub(crate) fn new(path: PathTaken, guidance: Guidance) -> Decision {
        Decision {
            guidance,
            path,
            fallback: None,
            timings: Timings::default(),
            unknown_ids: Vec::new(),
            over_limit_ids: Vec::new(),
            events: Vec::new(),
        }
    }

    /// The complete catalog, when no runtime could be started to run the
    /// selector at all (reported like a failed selection).
    pub fn fallback_without_runtime(message: &str) -> Decision {
        let mut decision = Decision::new(PathTaken::InitialSelection, Guidance::Catalog);
        decision.fallback = Some(FallbackUsed {
            policy: OnTimeout::Full,
            reason: FallbackReason::Failed {
                message: format!("no async runtime ({message})"),
            },
        });
        decision
    }

    /// The decision as section notes for the section report and `--explain`.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = vec![format!("relevant mode: {}", self.path.as_str())];
        match &self.guidance {
            Guidance::Catalog => notes.push("guidance: complete catalog".to_owned()),
            Guidance::Nothing => notes.push("guidance: none this turn".to_owned()),
            Guidance::Focused(selection) => notes.push(format!(
                "guidance: {} selection #{} [{}]",
                selection.origin.as_str(),
                selection.generation,
                selection.ids.join(", ")
            )),
        }
        if let Some(fallback) = &self.fallback {
            let reason = match &fallback.reason {
                FallbackReason::TimedOut { after } => {
                    format!("selector timed out after {} ms", after.as_millis())
                }
                FallbackReason::Failed { message } => format!("selector failed: {message}"),
            };
            notes.push(format!(
                "fallback: on_timeout = {} ({reason})",
                on_timeout_name(fallback.policy)
            ));
        }
        let mut timing = format!("waited {} ms", self.timings.waited.as_millis());
        if let Some(selector) = self.timings.selector {
            timing.push_str(&format!(
                "; selector answered in {} ms",
                selector.as_millis()
            ));
        }
        notes.push(timing);
        if !self.unknown_ids.is_empty() {
            notes.push(format!(
                "dropped unknown ids from the selector: {}",
                self.unknown_ids.join(", ")
            ));
        }
        if !self.over_limit_ids.is_empty() {
            notes.push(format!(
                "dropped ids beyond max_selected: {}",
                self.over_limit_ids.join(", ")
            ));
        }
        notes.extend(self.events.iter().cloned());
        notes
    }
}

/// The config spelling of an `on_timeout` value.
pub fn on_timeout_name(policy: OnTimeout) -> &'static str {
    match policy {
        OnTimeout::Full => "full",
        OnTimeout::Previous => "previous",
        OnTimeout::Deterministic => "deterministic",
        OnTimeout::None => "none",
    }
}
