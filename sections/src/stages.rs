//! The canonical stage list: the base, the machine-facing stages and the
//! repository and skill stages, for full or relevant invariant mode.

use bcode_prompt_pipeline::base::BaseStage;
use bcode_prompt_pipeline::stage::Stage;

use crate::authority::UserAuthorityStage;
use crate::gathered::Gathered;
use crate::instructions::RepositoryContextStage;
use crate::invariants::{FocusedInvariantsStage, RepositoryInvariantsStage};
use crate::probe;
use crate::skills::{ActiveSkillStage, SkillCatalogStage};
use crate::suffix::AgentSuffixStage;

/// Every canonical stage. `[invariants] enabled = false` registers no
/// invariant stage at all (not even an "omitted" line mentions invariants);
/// `relevant` chooses the focused stage over the complete catalog.
pub fn canonical(invariants_enabled: bool, relevant: bool) -> Vec<Box<dyn Stage<Gathered>>> {
    let mut stages: Vec<Box<dyn Stage<Gathered>>> = vec![Box::new(BaseStage)];
    stages.extend(probe::stages());
    stages.push(Box::new(RepositoryContextStage));
    if invariants_enabled && relevant {
        stages.push(Box::new(FocusedInvariantsStage));
    } else if invariants_enabled {
        stages.push(Box::new(RepositoryInvariantsStage));
    }
    stages.push(Box::new(SkillCatalogStage));
    stages.push(Box::new(UserAuthorityStage));
    stages.push(Box::new(ActiveSkillStage));
    stages.push(Box::new(AgentSuffixStage));
    stages
}
