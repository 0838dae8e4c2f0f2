//! The stages: one module each, pure functions of the turn's
//! [`Gathered`] inputs, the config and the templates (they import no
//! filesystem API; the fact modules beside them gather at the edge), and the
//! canonical stage list for full or relevant invariant mode.

pub(crate) mod authority;
pub(crate) mod base;
pub(crate) mod datetime;
pub(crate) mod environment;
pub(crate) mod git;
pub(crate) mod instructions;
pub(crate) mod invariants;
pub(crate) mod skills;
pub(crate) mod suffix;
pub(crate) mod toolchain;

use bcode_prompt_pipeline::Stage;

use crate::gathered::Gathered;
use authority::UserAuthorityStage;
use base::BaseStage;
use datetime::DateTimeStage;
use environment::{
    ConfigProfileStage, ExecutionEnvironmentStage, HostingEnvironmentStage, LocaleStage,
    RuntimeModeStage,
};
use git::{GitRevisionStage, GitStatusStage, WorktreeStage};
use instructions::RepositoryContextStage;
use invariants::{FocusedInvariantsStage, RepositoryInvariantsStage};
use skills::{ActiveSkillStage, RelevantSkillsStage, SkillCatalogStage};
use suffix::AgentSuffixStage;
use toolchain::ToolchainStage;

/// The machine-facing stages, in canonical order.
pub fn machine_stages() -> Vec<Box<dyn Stage<Gathered>>> {
    vec![
        Box::new(DateTimeStage),
        Box::new(ExecutionEnvironmentStage),
        Box::new(HostingEnvironmentStage),
        Box::new(LocaleStage),
        Box::new(RuntimeModeStage),
        Box::new(WorktreeStage),
        Box::new(ConfigProfileStage),
        Box::new(GitRevisionStage),
        Box::new(ToolchainStage),
        Box::new(GitStatusStage),
    ]
}

/// Which optional stages a pipeline registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageChoice {
    /// `[invariants] enabled`: with `false`, no invariant stage at all (not
    /// even an "omitted" line mentions invariants).
    pub invariants: bool,
    /// Relevant mode: the focused invariant stage instead of the complete
    /// catalog.
    pub relevant: bool,
    /// `skills.routing.enabled`: the `relevant_skills` stage. Without
    /// routing it is not registered, so a prompt and its report are exactly
    /// what they were before routing existed.
    pub routing: bool,
}

/// Every canonical stage the choice asks for, in canonical order.
pub fn canonical_stages(choice: StageChoice) -> Vec<Box<dyn Stage<Gathered>>> {
    let mut stages: Vec<Box<dyn Stage<Gathered>>> = vec![Box::new(BaseStage)];
    stages.extend(machine_stages());
    stages.push(Box::new(RepositoryContextStage));
    if choice.invariants && choice.relevant {
        stages.push(Box::new(FocusedInvariantsStage));
    } else if choice.invariants {
        stages.push(Box::new(RepositoryInvariantsStage));
    }
    stages.push(Box::new(SkillCatalogStage));
    stages.push(Box::new(UserAuthorityStage));
    if choice.routing {
        stages.push(Box::new(RelevantSkillsStage));
    }
    stages.push(Box::new(ActiveSkillStage));
    stages.push(Box::new(AgentSuffixStage));
    stages
}
