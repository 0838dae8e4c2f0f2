//! The selector seam: what a host implements with a model call (using
//! `[invariants.selector] model_profile`, or the active model when it is
//! omitted), and [`validate`], which every answer goes through before it is
//! used, so a selector naming unknown ids or too many is never trusted
//! blindly.

use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use bcode_text::Limit;

use super::{Selection, SelectionOrigin, TaskContext};
use crate::invariants::InvariantCatalog;

/// The most characters of a task summary that are kept (selectors are asked
/// for a short one; a long answer is cut with a marker).
pub const TASK_SUMMARY_MAX_CHARS: usize = 280;

/// What a selector sees of one invariant (never its body: the selector
/// decides from the metadata).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvariantSummary {
    /// The invariant's id, which the answer must name to select it.
    pub id: String,
    /// The invariant's short title.
    pub title: String,
    /// The invariant's one- or two-sentence summary.
    pub summary: String,
    /// The invariant's activation keywords, possibly empty.
    pub keywords: Vec<String>,
    /// Globs of the repository paths it applies to, possibly empty.
    pub paths: Vec<String>,
    /// `paths` compiled once per version of the invariant's file (shared
    /// with the catalog), so the deterministic selector does not rebuild
    /// them on every turn. Trusted only when compiled for `paths`.
    pub globs: crate::path_globs::PathGlobs,
}

/// One selector call. Owned, so a host can move it into a spawned task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectorRequest {
    /// The prompt and touched paths to select for.
    pub task: TaskContext,
    /// The catalog, in catalog order.
    pub invariants: Vec<InvariantSummary>,
    /// `[invariants] max_selected`: ids beyond it are dropped by
    /// `validate`, so a host may tell the model the cap.
    pub max_selected: usize,
    /// `[invariants.selector] model_profile`; `None` means the active model.
    pub model_profile: Option<String>,
    /// Whether the answer's task summary will be used
    /// (`include_task_summary`), so a host may skip asking for it.
    pub want_task_summary: bool,
}

impl SelectorRequest {
    /// The request for `task` over the whole `catalog`, with the selection
    /// settings of the `[invariants]` config.
    pub fn new(
        task: &TaskContext,
        catalog: &InvariantCatalog,
        config: &bcode_prompt_config::InvariantsConfig,
    ) -> SelectorRequest {
        SelectorRequest {
            task: task.clone(),
            invariants: catalog
                .invariants
                .iter()
                .map(|inv| InvariantSummary {
                    id: inv.id.clone(),
                    title: inv.title.clone(),
                    summary: inv.summary.clone(),
                    keywords: inv.keywords.clone(),
                    paths: inv.paths.clone(),
                    globs: inv.globs.clone(),
                })
                .collect(),
            max_selected: config.max_selected,
            model_profile: config.selector.model_profile.clone(),
            want_task_summary: config.include_task_summary,
        }
    }
}

/// A selector's raw answer: ids in order of relevance and an optional short
/// task summary. Not trusted until `validate`d.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SelectorAnswer {
    /// Invariant ids, most relevant first; may name unknown ids or too many.
    pub ids: Vec<String>,
    /// A short description of the task for the focused guidance; cut to
    /// `TASK_SUMMARY_MAX_CHARS` when longer.
    pub task_summary: Option<String>,
}

/// Why a selector could not answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SelectorError {
    /// What went wrong, in the host's words; shown in the decision's notes.
    pub message: String,
}

impl SelectorError {
    /// An error with `message`.
    pub fn new(message: &str) -> SelectorError {
        SelectorError {
            message: message.to_owned(),
        }
    }
}

/// The future a selector returns: `Send + 'static` so the driver can spawn
/// it, and dropping it is how a provider call is cancelled.
pub type SelectorFuture =
    Pin<Box<dyn Future<Output = Result<SelectorAnswer, SelectorError>> + Send + 'static>>;

/// Picks the invariants relevant to a task. A host implements this with a
/// model call; [`super::DeterministicSelector`] is the built-in one.
pub trait InvariantSelector: Send + Sync + fmt::Debug {
    /// Starts one selection. The driver owns the deadline: a selector does
    /// not need its own timeout, and must tolerate being dropped mid-call.
    fn select(&self, request: SelectorRequest) -> SelectorFuture;

    /// How its selections are labelled in decisions and the sidecar.
    fn origin(&self) -> SelectionOrigin {
        SelectionOrigin::Selector
    }
}

/// An answer checked against the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validated {
    /// The usable part of the answer: known ids within the cap, and the
    /// bounded summary.
    pub selection: Selection,
    /// Ids the catalog does not hold, in the order given.
    pub unknown_ids: Vec<String>,
    /// Known ids beyond `max_selected`, in the order given.
    pub over_limit_ids: Vec<String>,
}

/// Keeps the known ids of `answer` (first mention wins; duplicates are
/// dropped silently), at most `max_selected`, and cuts the task summary to
/// [`TASK_SUMMARY_MAX_CHARS`].
pub fn validate(
    answer: SelectorAnswer,
    catalog: &InvariantCatalog,
    max_selected: usize,
    origin: SelectionOrigin,
    generation: u64,
) -> Validated {
    let known: BTreeSet<&str> = catalog.invariants.iter().map(|i| i.id.as_str()).collect();
    let mut seen = BTreeSet::new();
    let mut ids = Vec::new();
    let mut unknown_ids = Vec::new();
    let mut over_limit_ids = Vec::new();
    for id in answer.ids {
        let id = id.trim().to_owned();
        if !seen.insert(id.clone()) {
            continue;
        }
        if !known.contains(id.as_str()) {
            unknown_ids.push(id);
        } else if ids.len() >= max_selected {
            over_limit_ids.push(id);
        } else {
            ids.push(id);
        }
    }
    let task_summary = answer
        .task_summary
        .map(|s| bound_summary(s.trim()))
        .filter(|s| !s.is_empty());
    Validated {
        selection: Selection {
            ids,
            task_summary,
            origin,
            generation,
        },
        unknown_ids,
        over_limit_ids,
    }
}

/// A summary cut to [`TASK_SUMMARY_MAX_CHARS`], an ellipsis marking the cut.
pub fn bound_summary(summary: &str) -> String {
    bcode_text::bound(summary, Limit::Chars(TASK_SUMMARY_MAX_CHARS), &|_| {
        "…".to_owned()
    })
    .text
    .into_owned()
}
