//! Every input of one turn, gathered before assembly into one typed struct.
//! Stages are pure functions of it (with the config and the templates): an
//! input a stage reads is a field here, so wiring that is missing is a
//! compile error. A field is `None` only when its section is off or its
//! probe was not asked for; a stage that still finds it `None` omits its
//! section with a note instead of failing the prompt.

use std::sync::Arc;

use bcode_prompt_pipeline::StageError;
use bcode_skill::Catalog;
use bcode_skill_models::SkillContextResponse;

use crate::datetime::DateTimeInput;
use crate::environment::{ConfigProfile, ExecutionFacts, HostingSignals, LocaleFacts, RuntimeMode};
use crate::git::GitFacts;
use crate::instructions::RepositoryInstructions;
use crate::invariants::{InvariantCatalog, InvariantSelection};
use crate::relevant::Decision;
use crate::toolchain::ToolchainFacts;

/// The gathered inputs of one turn.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Gathered {
    /// The user's prompt of this turn, if any (host sections may read it).
    pub prompt: Option<String>,
    /// The clock reading and zone for `current_datetime`.
    pub datetime: Option<DateTimeInput>,
    /// OS, architecture and shell for `execution_environment`.
    pub execution: Option<ExecutionFacts>,
    /// CI, container and SSH presence for `hosting_environment`.
    pub hosting: Option<HostingSignals>,
    /// The locale for `locale`.
    pub locale: Option<LocaleFacts>,
    /// How Bcode runs this request, for `runtime_mode`.
    pub runtime_mode: Option<RuntimeMode>,
    /// The active profile for `config_profile`.
    pub config_profile: Option<ConfigProfile>,
    /// One read of the repository, shared by `git_revision`,
    /// `worktree_context` and `dynamic_repository_context`.
    pub git: Option<GitFacts>,
    /// The version lines for `toolchain_context`.
    pub toolchain: Option<ToolchainFacts>,
    /// The instruction files for `repository_context`.
    pub instructions: Option<RepositoryInstructions>,
    /// The invariant catalog (full mode, or relevant mode's whole catalog).
    pub invariants: Option<Arc<InvariantCatalog>>,
    /// Full mode: which invariants to place (all when `None`).
    pub invariant_selection: Option<InvariantSelection>,
    /// Relevant mode: the selector's decision for this turn.
    pub relevant: Option<Decision>,
    /// The formatted skill catalog's accounting (`None` when skills are
    /// disabled); its text is `skill_catalog_text`.
    pub skill_catalog: Option<Arc<Catalog>>,
    /// The catalog's text, shared with whoever keeps the catalog (the
    /// session, its pool): `skill_catalog`'s own `text` is empty, and the
    /// section shows this one without a copy of its own.
    pub skill_catalog_text: bcode_prompt_pipeline::SharedText,
    /// The blocks of the active skills, loaded before assembly, in
    /// activation order.
    pub active_skills: Vec<SkillContextResponse>,
    /// The skills routed to this turn (`skills.routing`): `None` when
    /// routing is off or the turn has no task to route.
    pub relevant_skills: Option<RoutedSkills>,
}

/// The skills that best fit a turn's task, best first, ranked by the
/// relevance index: their catalog entries and why each ranked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoutedSkills {
    /// The entries, in the catalog's entry format, best first.
    pub entries: String,
    /// One per entry, in the same order.
    pub hits: Vec<bcode_skill::SearchHit>,
    /// Sources of the listed skills, strongest first, each once.
    pub sources: Vec<String>,
}

impl Gathered {
    /// An empty set of inputs: every optional section has nothing to say.
    pub fn new() -> Gathered {
        Gathered::default()
    }
}

/// The gathered value, or the non-fatal error that omits the section and
/// says what was not gathered.
pub fn need<'a, T>(value: &'a Option<T>, what: &str) -> Result<&'a T, StageError> {
    value.as_ref().ok_or_else(|| StageError::Degraded {
        message: format!("{what} was not gathered"),
    })
}
