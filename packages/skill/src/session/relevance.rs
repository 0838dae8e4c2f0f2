//! Suggestions from the relevance index: which of its best hits for a
//! prompt are confident enough to offer, and when the best one is a clear
//! enough winner to activate under `auto_activate = "on"`. Pure: the index
//! is built and refreshed elsewhere ([`crate::search`]).
//!
//! The numbers below were chosen by ranking about ninety prompts (tasks
//! that name a skill's subject, and chat such as "thanks", "please fix the
//! error" or "write a test for this") against three real trees: a popular
//! open-source monorepo's `.agents/skills` (32 skills), a benchmark's 49
//! skills and the twelve of `anthropics/skills`. A hit's `coverage` over
//! every field proved useless as a floor: a body repeats every common
//! word, and most chat reached full coverage on some skill. What separates
//! a skill the prompt is about from one that merely mentions its words is
//! the share of the prompt's weight found where an author says what the
//! skill is for: its name, description and keywords (`metadata` keywords
//! and tags included). Of 36 skills the prompts were written for, the
//! floor below suggests 33, and 17 others over all ninety prompts, nearly
//! all for chat whose two common words one description has ("review my
//! code", "please fix the error"); "coverage of at least half and a match
//! in any of those fields" suggested 114 others. The clear-winner rule
//! activates 10 skills, each one whose description the task restates, and
//! nothing for chat. The floors read coverage, not scores, so they held
//! when ranking moved from BM25F to per-field sums (2026-12-05); the
//! activation margin reads scores, and the rival rule was added then.

use std::collections::BTreeMap;

use bcode_skill_models::{Figure, RelevanceMatch, RelevanceTerm, SkillId};

use crate::search::{SearchField, SearchHit, SkillIndex};

/// How many of the index's best hits for a prompt are considered: a
/// suggestion past the fifth best would not be read.
pub const SUGGEST_TOP_HITS: usize = 5;

/// The share of the prompt's weight a hit must match in its name,
/// description or keywords to be suggested, with at least two of the
/// prompt's words there or one in its name: one word of a description
/// (`pull` in "trust the pull of gravity") is a coincidence, not a task.
/// Half lets a short task through ("write storybook stories": all of it;
/// "seed some local data in postgres": all four words) and keeps out a
/// skill whose description shares a word or two with a longer prompt.
pub const SUGGEST_MIN_COVERAGE: f32 = 0.5;

/// The share that suffices for the best-ranked hit that matched a strong
/// field at all, when the prompt has a word of its name: a longer task
/// that names the skill's subject among other words ("add posthog tracking
/// to the export button" names `posthog-instrumentation` with a quarter of
/// its weight). Only the best such hit: a name word of a lesser hit (`test`
/// of `seed-test-data` in "fix the failing test") is no such evidence.
pub const SUGGEST_MIN_COVERAGE_NAMED: f32 = 0.25;

/// Auto-activation by the index needs the best hit to score at least this
/// many times the runner-up's: one skill clearly fits, not one of two
/// close readings (in the monorepo tree of `tests/routing_suggest.rs`,
/// "write storybook stories" puts `storybook` 2.7 times above the next).
/// Scores are per-field sums, where a name match counts for much: the
/// margin alone would let a name beat a description that says the same
/// task, hence [`ACTIVATE_MAX_RIVAL_COVERAGE`].
pub const ACTIVATE_MIN_MARGIN: f32 = 1.5;

/// ... and to match at least this share of the prompt's weight in its name,
/// description or keywords: most of the task, not a part of it.
pub const ACTIVATE_MIN_COVERAGE: f32 = 0.75;

/// ... and no other hit considered may match more than this share of the
/// prompt's weight where its author says what it is for: a rival that
/// states the same task is a second reading, however much lower its score
/// ("react components" is the name of one skill and words of another's
/// description; the name outscores the description by far, yet the task
/// fits both). Half: the winner's own floor for a suggestion.
pub const ACTIVATE_MAX_RIVAL_COVERAGE: f32 = 0.5;

/// A skill the index vouches for, for one prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Routed {
    /// The skill.
    pub id: SkillId,
    /// Its score, coverage and matched words, as suggestions record them.
    pub relevance: RelevanceMatch,
    /// Whether it may be activated under `auto_activate = "on"`
    /// ([`ACTIVATE_MIN_MARGIN`], [`ACTIVATE_MIN_COVERAGE`],
    /// [`ACTIVATE_MAX_RIVAL_COVERAGE`]).
    pub clear_winner: bool,
}

/// The skills of `index` the index vouches for as suggestions for
/// `prompt`, best first. Skills `hidden` says are kept from automatic
/// discovery are left out before anything is ranked, so they neither
/// count as a runner-up nor take a place; an active skill still does (the
/// session then leaves it out), so the runner-up of a task an active skill
/// fits is not activated for it. Nothing for a prompt whose words no skill
/// has.
pub(crate) fn route(
    index: &SkillIndex,
    prompt: &str,
    hidden: &dyn Fn(&SkillId) -> bool,
) -> Vec<Routed> {
    let hits = index.search_where(prompt, SUGGEST_TOP_HITS, &|id| !hidden(id));
    if hits.is_empty() {
        return Vec::new();
    }
    let weights: BTreeMap<String, f32> = index.query_weights(prompt).into_iter().collect();
    let total: f32 = weights.values().sum();
    let evidence: Vec<Evidence> = hits
        .iter()
        .map(|hit| Evidence::of(hit, &weights, total))
        .collect();
    let first_strong = evidence.iter().position(|e| e.strong_terms > 0);
    let runner_up = hits.get(1).map(|hit| hit.score);
    let best_rival = evidence
        .iter()
        .skip(1)
        .map(|e| e.coverage)
        .fold(0.0f32, f32::max);
    hits.iter()
        .zip(&evidence)
        .enumerate()
        .filter_map(|(rank, (hit, evidence))| {
            let floor = (evidence.coverage >= SUGGEST_MIN_COVERAGE
                && (evidence.strong_terms >= 2 || evidence.named))
                || (first_strong == Some(rank)
                    && evidence.named
                    && evidence.coverage >= SUGGEST_MIN_COVERAGE_NAMED);
            if !floor {
                return None;
            }
            let clear_winner = rank == 0
                && evidence.coverage >= ACTIVATE_MIN_COVERAGE
                && best_rival <= ACTIVATE_MAX_RIVAL_COVERAGE
                && runner_up.is_none_or(|next| hit.score >= ACTIVATE_MIN_MARGIN * next);
            Some(Routed {
                id: hit.id.clone(),
                relevance: record(hit, evidence.coverage),
                clear_winner,
            })
        })
        .collect()
}

/// What a hit matched where an author says what the skill is for.
struct Evidence {
    /// The share of the prompt's weight matched in a strong field.
    coverage: f32,
    /// How many of the prompt's words matched in a strong field.
    strong_terms: usize,
    /// Whether one of them is in the skill's name.
    named: bool,
}

impl Evidence {
    fn of(hit: &SearchHit, weights: &BTreeMap<String, f32>, total: f32) -> Evidence {
        let mut evidence = Evidence {
            coverage: 0.0,
            strong_terms: 0,
            named: false,
        };
        let mut weight = 0.0f32;
        for term in &hit.matched {
            if !term.fields.iter().copied().any(is_strong) {
                continue;
            }
            evidence.strong_terms += 1;
            evidence.named |= term.fields.contains(&SearchField::Name);
            weight += weights.get(&term.term).copied().unwrap_or(0.0);
        }
        if total > 0.0 {
            evidence.coverage = (weight / total).min(1.0);
        }
        evidence
    }
}

/// The fields an author writes to say what a skill is for.
const STRONG_FIELDS: [SearchField; 3] = [
    SearchField::Name,
    SearchField::Description,
    SearchField::Keywords,
];

fn is_strong(field: SearchField) -> bool {
    STRONG_FIELDS.contains(&field)
}

/// A hit as suggestions and events record it.
fn record(hit: &SearchHit, coverage: f32) -> RelevanceMatch {
    RelevanceMatch {
        score: Figure::new(hit.score),
        coverage: Figure::new(coverage),
        matched: hit
            .matched
            .iter()
            .map(|term| RelevanceTerm {
                term: term.term.clone(),
                fields: term
                    .fields
                    .iter()
                    .map(|field| field.as_str().to_owned())
                    .collect(),
            })
            .collect(),
    }
}

/// The words of `relevance` found in a strong field: what a suggestion the
/// index alone made shows as its reason.
pub fn strong_terms(relevance: &RelevanceMatch) -> Vec<String> {
    relevance
        .matched
        .iter()
        .filter(|term| {
            term.fields
                .iter()
                .any(|field| STRONG_FIELDS.iter().any(|strong| strong.as_str() == field))
        })
        .map(|term| term.term.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::search::{Normalizer, SkillText};

    /// An index of skills given as (id, name, description, keywords, body).
    fn index_of(skills: &[(&str, &str, &str, &str)]) -> SkillIndex {
        let mut index = SkillIndex::new();
        let mut normalizer = Normalizer::new();
        for (id, description, keywords, body) in skills {
            let text = SkillText {
                fields: [
                    (*id).to_owned(),
                    (*description).to_owned(),
                    (*keywords).to_owned(),
                    String::new(),
                    (*body).to_owned(),
                ],
            };
            index.insert(SkillId::parse(id).unwrap(), &text, &mut normalizer);
        }
        index
    }

    fn routed(index: &SkillIndex, prompt: &str) -> Vec<(String, bool)> {
        route(index, prompt, &|_| false)
            .into_iter()
            .map(|r| (r.id.to_string(), r.clear_winner))
            .collect()
    }

    fn shelf() -> SkillIndex {
        index_of(&[
            (
                "storybook",
                "Use when writing or reviewing Storybook stories for React components.",
                "",
                "Write CSF3 stories. Good stories are small.",
            ),
            (
                "react-components",
                "Guidelines for writing React components.",
                "",
                "Keep components small; stories live beside them.",
            ),
            (
                "pr-review",
                "Review pull requests",
                "pull request",
                "Read the diff first.",
            ),
            (
                "posthog-instrumentation",
                "Product analytics. Use when adding a user action in the web app.",
                "",
                "Capture events with the shared helper; tracking names are snake_case.",
            ),
        ])
    }

    #[test]
    fn a_task_about_a_skill_suggests_it_and_a_clear_winner_may_activate() {
        let index = shelf();
        assert_eq!(
            routed(&index, "write storybook stories"),
            [("storybook".to_owned(), true)]
        );
        // The prompt names the skill among other words: the best hit with
        // a name word needs only a quarter of the prompt's weight.
        assert_eq!(
            routed(&index, "add posthog tracking to the export button"),
            [("posthog-instrumentation".to_owned(), false)]
        );
    }

    #[test]
    fn close_readings_suggest_both_and_activate_neither() {
        let index = shelf();
        // Both name `react` and describe React components.
        assert_eq!(
            routed(&index, "react components"),
            [
                ("react-components".to_owned(), false),
                ("storybook".to_owned(), false)
            ]
        );
    }

    #[test]
    fn a_hidden_skill_takes_no_place_and_is_no_runner_up() {
        let index = shelf();
        // `storybook` hidden: `react-components` is the only reading of
        // the task left, and a clear one.
        let hidden = |id: &SkillId| id.as_str() == "storybook";
        let routed: Vec<(String, bool)> = route(&index, "react components", &hidden)
            .into_iter()
            .map(|r| (r.id.to_string(), r.clear_winner))
            .collect();
        assert_eq!(routed, [("react-components".to_owned(), true)]);
    }

    #[test]
    fn a_body_mention_or_one_description_word_suggests_nothing() {
        let index = shelf();
        // `diff` is in one body only; `good` too.
        assert_eq!(routed(&index, "show me the diff"), []);
        assert_eq!(routed(&index, "thanks, that looks good"), []);
        // `pull` is a word of one description and one keyword: a
        // coincidence, not a task.
        assert_eq!(routed(&index, "trust the pull of gravity"), []);
        assert_eq!(routed(&index, "kubernetes"), []);
        assert_eq!(routed(&index, ""), []);
    }

    #[test]
    fn the_record_keeps_the_score_the_floor_read_and_every_matched_word() {
        let index = shelf();
        let routed = route(&index, "write storybook stories", &|_| false);
        let hit = &index.search("write storybook stories", 1)[0];
        assert_eq!(
            routed[0].relevance,
            RelevanceMatch {
                score: Figure::new(hit.score),
                coverage: Figure::new(1.0),
                matched: vec![
                    RelevanceTerm {
                        term: "write".into(),
                        fields: vec!["description".into(), "body".into()],
                    },
                    RelevanceTerm {
                        term: "storybook".into(),
                        fields: vec!["name".into(), "description".into()],
                    },
                    RelevanceTerm {
                        term: "stories".into(),
                        fields: vec!["description".into(), "body".into()],
                    },
                ],
            }
        );
        assert_eq!(
            strong_terms(&routed[0].relevance),
            ["write", "storybook", "stories"]
        );
    }
}
