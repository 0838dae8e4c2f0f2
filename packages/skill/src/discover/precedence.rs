//! The one place that decides which skill wins an id. Sources rank by
//! [`SourceKind`](bcode_skill_models::SourceKind) (declared highest first)
//! then by their position among configured paths; within one source the
//! lexicographically first path wins. Every loser is reported, never dropped
//! silently, and nothing depends on the order directories were read in.

use std::collections::BTreeSet;
use std::sync::Arc;

use bcode_skill_models::{Diagnostic, DiagnosticCode, SkillSummary};

/// Resolves ids: returns the winners and a diagnostic for every loser and
/// every disabled skill. The winner of an id is the skill with the lowest
/// (source precedence, path bytes); losers are named against it, so the
/// input order changes nothing. The skills are sorted by id first: the walk
/// yields them nearly in id order (folders are listed sorted), which a
/// stable sort confirms in one pass, and the map is then built from sorted
/// keys in one pass too, where inserting 10,000 ids one by one compared
/// each with a dozen others scattered over the heap.
pub fn resolve(
    loaded: Vec<Arc<SkillSummary>>,
    disabled: &BTreeSet<String>,
) -> (Vec<Arc<SkillSummary>>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut enabled = Vec::with_capacity(loaded.len());
    for skill in loaded {
        let id = &skill.manifest.id;
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
        enabled.push(skill);
    }
    enabled.sort_by(|a, b| a.manifest.id.cmp(&b.manifest.id));
    let mut winners = Vec::with_capacity(enabled.len());
    for group in enabled.chunk_by(|a, b| a.manifest.id == b.manifest.id) {
        let Some(best) = (0..group.len()).reduce(|best, i| {
            if outranks(&group[i], &group[best]) {
                i
            } else {
                best
            }
        }) else {
            continue;
        };
        let winner = &group[best];
        for (i, skill) in group.iter().enumerate() {
            if i != best {
                diagnostics.push(loser(skill, winner));
            }
        }
        winners.push(Arc::clone(winner));
    }
    // Sorted by id, each id once: the registry's index.
    (winners, diagnostics)
}

/// The diagnostic for `skill`, which lost its id to `winner`.
/// Where provider skills start ranking: as bundled, after every bundled
/// root (the one place, with [`resolve`], that decides who outranks whom).
pub(crate) fn first_provider_ordinal(roots: &[crate::discover::sources::SourceRoot]) -> usize {
    roots
        .iter()
        .filter(|r| r.source.kind == bcode_skill_models::SourceKind::Bundled)
        .map(|r| r.source.ordinal.saturating_add(1))
        .max()
        .unwrap_or(0)
}

fn loser(skill: &SkillSummary, winner: &SkillSummary) -> Diagnostic {
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
    diagnostic
        .with_path(&skill.location)
        .with_skill(id.as_str())
}

/// Whether `a` wins an id over `b`: a stronger source, then the first path.
fn outranks(a: &SkillSummary, b: &SkillSummary) -> bool {
    (a.source.precedence(), a.location.as_os_str())
        < (b.source.precedence(), b.location.as_os_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bcode_skill_models::{SkillLayout, SkillManifest, SkillSource, SourceKind};

    fn skill(id: &str, kind: SourceKind, path: &str) -> Arc<SkillSummary> {
        Arc::new(SkillSummary {
            manifest: SkillManifest::new(
                bcode_skill_models::SkillId::parse(id).unwrap_or_else(|_| unreachable!()),
            ),
            source: Arc::new(SkillSource {
                kind,
                label: format!("{kind:?}"),
                ordinal: 0,
                root: None,
                provider: None,
            }),
            layout: SkillLayout::Folder,
            location: std::path::Path::new(path).into(),
            directory_override: None,
            body_offset: 0,
        })
    }

    #[test]
    fn the_input_order_changes_nothing() {
        let skills = vec![
            skill("a", SourceKind::UserConfig, "/u/b/SKILL.md"),
            skill("a", SourceKind::RepoBcode, "/r/z/SKILL.md"),
            skill("a", SourceKind::RepoBcode, "/r/a/SKILL.md"),
            skill("b", SourceKind::UserConfig, "/u/b2/SKILL.md"),
            skill("c", SourceKind::RepoBcode, "/r/c/SKILL.md"),
        ];
        let disabled = BTreeSet::from(["c".to_owned()]);
        let mut outcomes = Vec::new();
        for rotation in 0..skills.len() {
            let mut input = skills.clone();
            input.rotate_left(rotation);
            if rotation % 2 == 1 {
                input.reverse();
            }
            let (winners, mut diagnostics) = resolve(input, &disabled);
            diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
            let winners: Vec<String> = winners
                .iter()
                .map(|s| format!("{} {}", s.manifest.id, s.location.display()))
                .collect();
            outcomes.push((winners, diagnostics));
        }
        assert!(outcomes.windows(2).all(|w| w[0] == w[1]));
        let (winners, diagnostics) = &outcomes[0];
        assert_eq!(winners, &["a /r/a/SKILL.md", "b /u/b2/SKILL.md"]);
        assert_eq!(diagnostics.len(), 3, "{diagnostics:#?}");
        assert!(
            diagnostics.iter().all(
                |d| d.message().contains("/r/a/SKILL.md") || d.code == DiagnosticCode::Disabled
            )
        );
    }
}
