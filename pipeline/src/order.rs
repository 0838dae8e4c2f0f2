//! The canonical order of sections: the one place that decides which
//! section comes before which (design card: base or replace, datetime,
//! environment, git status, invariants, skill catalog, user authority,
//! active skill blocks). The pipeline sorts by this rank within each part,
//! after first moving turn sections of the system part behind the stable
//! ones so that the cacheable prefix is not interrupted.

/// Stage ids in canonical order. Section ids are a stage id or
/// `<stage id>:<suffix>` (e.g. `active_skill:rust-debugging`).
pub const SECTION_ORDER: &[&str] = &[
    "base",
    "current_datetime",
    "execution_environment",
    "hosting_environment",
    "locale",
    "runtime_mode",
    "worktree_context",
    "config_profile",
    "git_revision",
    "toolchain_context",
    "dynamic_repository_context",
    "repository_context",
    "repository_invariants",
    "skill_catalog",
    "user_authority",
    "active_skill",
    "agent_suffix",
];

/// The rank of the stage a section id belongs to, or `None` when the id
/// names no known stage.
pub fn rank(section_id: &str) -> Option<usize> {
    let stage = stage_of(section_id);
    SECTION_ORDER.iter().position(|known| *known == stage)
}

/// The stage id part of a section id.
pub fn stage_of(section_id: &str) -> &str {
    section_id
        .split_once(':')
        .map_or(section_id, |(stage, _)| stage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_the_design_card() {
        assert_eq!(rank("base"), Some(0));
        assert_eq!(rank("active_skill:rust-debugging"), Some(15));
        assert_eq!(rank("repository_context:AGENTS.md"), Some(11));
        assert_eq!(rank("nope"), None);
        assert_eq!(rank("base_extra"), None);
        let card = [
            "base",
            "current_datetime",
            "execution_environment",
            "dynamic_repository_context",
            "repository_invariants",
            "skill_catalog",
            "user_authority",
            "active_skill",
        ];
        let ranks: Vec<usize> = card.iter().map(|id| rank(id).unwrap()).collect();
        assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
    }

    #[test]
    fn every_toggle_has_a_place_and_every_place_is_a_stage() {
        let toggles = crate::config::SectionToggles::default();
        let json = serde_json::to_value(&toggles).unwrap();
        for name in json.as_object().unwrap().keys() {
            assert!(rank(name).is_some(), "toggle {name} has no place");
        }
        for id in SECTION_ORDER {
            let known = toggles.get(id).is_some() || matches!(*id, "base" | "active_skill");
            assert!(known, "{id}");
        }
    }
}
