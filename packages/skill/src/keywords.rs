//! Keyword suggestion: prompts matched against the activation keywords of
//! indexed summaries (no body is read). Matching is on Unicode word
//! boundaries (UAX #29) and case-folded, so `Rust` matches `rust` but not
//! `trust`, and a multi-word keyword such as `pull request` matches only
//! those words in that order.

use std::collections::{BTreeMap, BTreeSet};

use bcode_skill_models::{SkillId, SkillSummary};
use unicode_segmentation::UnicodeSegmentation;

/// One skill the prompt points at, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Suggestion {
    /// The suggested skill.
    pub id: SkillId,
    /// The label of the skill's source, as events record it.
    pub source: String,
    /// The keywords that matched, as the skill wrote them, in the skill's order.
    pub matched_keywords: Vec<String>,
    /// Total words of the matched keywords: a two-word keyword is stronger
    /// evidence than a one-word one.
    pub score: usize,
    /// Whether the skill appears in the model-visible catalog; sessions
    /// never auto-activate or suggest a hidden one.
    pub model_visible: bool,
}

#[derive(Clone, Debug)]
struct Keyword {
    words: Vec<String>,
    written: String,
    skill: usize,
    order: usize,
}

/// The keyword index of one registry snapshot, built the first time a
/// prompt needs it (a render without a prompt never pays for it) and shared
/// by every session on that snapshot.
#[derive(Debug, Default)]
pub struct LazyKeywordIndex {
    index: std::sync::OnceLock<KeywordIndex>,
}

impl LazyKeywordIndex {
    /// An index not built yet.
    pub fn new() -> LazyKeywordIndex {
        LazyKeywordIndex::default()
    }

    /// The index of `skills`, built on the first call (later calls must
    /// pass the same registry's skills: the index belongs to one snapshot).
    pub fn get_or_build<'a>(
        &self,
        skills: impl Iterator<Item = &'a bcode_skill_models::SkillSummary>,
    ) -> &KeywordIndex {
        self.index.get_or_init(|| KeywordIndex::build(skills))
    }
}

/// Activation keywords of a registry, indexed by their first word.
#[derive(Clone, Debug, Default)]
pub struct KeywordIndex {
    skills: Vec<(SkillId, String, bool)>,
    keywords: Vec<Keyword>,
    by_first_word: BTreeMap<String, Vec<usize>>,
}

/// Case-folded words of `text` on Unicode word boundaries.
pub fn words(text: &str) -> Vec<String> {
    text.unicode_words().map(str::to_lowercase).collect()
}

impl KeywordIndex {
    /// Indexes the keywords of `skills`.
    pub fn build<'a>(skills: impl Iterator<Item = &'a SkillSummary>) -> Self {
        let mut index = KeywordIndex::default();
        for skill in skills {
            let slot = index.skills.len();
            index.skills.push((
                skill.manifest.id.clone(),
                skill.source.label.clone(),
                skill.model_visible(),
            ));
            for (order, written) in skill.manifest.activation.keywords.iter().enumerate() {
                let words = words(written);
                let Some(first) = words.first().cloned() else {
                    continue;
                };
                index
                    .by_first_word
                    .entry(first)
                    .or_default()
                    .push(index.keywords.len());
                index.keywords.push(Keyword {
                    words,
                    written: written.clone(),
                    skill: slot,
                    order,
                });
            }
        }
        index
    }

    /// Skills whose keywords occur in `prompt`, best first (score, then id).
    pub fn suggest(&self, prompt: &str) -> Vec<Suggestion> {
        let prompt_words = words(prompt);
        let mut matched: BTreeMap<usize, BTreeSet<(usize, usize)>> = BTreeMap::new();
        for (start, word) in prompt_words.iter().enumerate() {
            let Some(candidates) = self.by_first_word.get(word) else {
                continue;
            };
            for &k in candidates {
                let keyword = &self.keywords[k];
                if prompt_words.get(start..start + keyword.words.len())
                    == Some(keyword.words.as_slice())
                {
                    matched
                        .entry(keyword.skill)
                        .or_default()
                        .insert((keyword.order, k));
                }
            }
        }
        let mut out: Vec<Suggestion> = matched
            .into_iter()
            .map(|(slot, keywords)| {
                let (id, source, model_visible) = self.skills[slot].clone();
                Suggestion {
                    id,
                    source,
                    score: keywords
                        .iter()
                        .map(|&(_, k)| self.keywords[k].words.len())
                        .sum(),
                    matched_keywords: keywords
                        .iter()
                        .map(|&(_, k)| self.keywords[k].written.clone())
                        .collect(),
                    model_visible,
                }
            })
            .collect();
        out.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_unicode_and_case_folded() {
        assert_eq!(
            words("Fix the RUST build, naïve Straße: node.js!"),
            ["fix", "the", "rust", "build", "naïve", "straße", "node.js"]
        );
    }
}
