//! The one place that decides which skill wins an id. Sources rank by
//! [`SourceKind`](bcode_skill_models::SourceKind) (declared highest first)
//! then by their position among configured paths; within one source the
//! lexicographically first path wins. Every loser is reported, never dropped
//! silently, and nothing depends on the order directories were read in.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use bcode_skill_models::{Diagnostic, DiagnosticCode, SkillId, SkillSummary};

/// Resolves ids: returns the winners and a diagnostic for every loser and
/// every disabled skill.
pub fn resolve(
    mut loaded: Vec<Arc<SkillSummary>>,
    disabled: &BTreeSet<String>,
) -> (BTreeMap<SkillId, Arc<SkillSummary>>, Vec<Diagnostic>) {
    loaded.sort_by(|a, b| {
        a.source
            .precedence()
            .cmp(&b.source.precedence())
            // Path bytes, not components: a total order either way, and
            // byte comparison is several times cheaper on large registries.
            .then_with(|| a.location.as_os_str().cmp(b.location.as_os_str()))
    });
    let mut winners: BTreeMap<SkillId, Arc<SkillSummary>> = BTreeMap::new();
    let mut diagnostics = Vec::new();
    for skill in loaded {
        let id = skill.manifest.id.clone();
        if disabled.contains(id.as_str()) {
            diagnostics.push(
                Diagnostic::info(
                    DiagnosticCode::Disabled,
                    format!(
                        "skill `{id}` from {} is disabled by skills.disabled.ids",
                        skill.source.label
                    ),
                )
                .with_path(&skill.location)
                .with_skill(id.as_str()),
            );
            continue;
        }
        let winner = match winners.entry(id) {
            Entry::Vacant(slot) => {
                slot.insert(skill);
                continue;
            }
            Entry::Occupied(slot) => slot.into_mut(),
        };
        let id = &skill.manifest.id;
        let diagnostic = if winner.source.precedence() == skill.source.precedence() {
            Diagnostic::warning(
                DiagnosticCode::DuplicateId,
                format!(
                    "skill `{id}` is defined twice in {}; `{}` wins (first by path) over this one",
                    skill.source.label,
                    winner.location.display()
                ),
            )
            .with_hint("give one of them a different `id`")
        } else {
            Diagnostic::info(
                DiagnosticCode::Shadowed,
                format!(
                    "skill `{id}` from {} is shadowed by the one from {} at `{}`",
                    skill.source.label,
                    winner.source.label,
                    winner.location.display()
                ),
            )
        };
        diagnostics.push(
            diagnostic
                .with_path(&skill.location)
                .with_skill(id.as_str()),
        );
    }
    (winners, diagnostics)
}
