//! Keyword suggestion: prompts matched against the activation keywords of
//! indexed summaries (no body is read). Matching is on Unicode word
//! boundaries (UAX #29) and case-folded, so `Rust` matches `rust` but not
//! `trust`, and a multi-word keyword such as `pull request` matches only
//! those words in that order. English word forms meet at one stem on both
//! sides (`panics`, `panicked` and `panicking` match `panic`; `pull
//! requests` matches `pull request`); see [`stem`]. The same index holds
//! the skills' `paths` globs ([`crate::session::path_triggers`]), which the paths a
//! turn touched are matched against.

use std::collections::{BTreeMap, BTreeSet};

use bcode_skill_models::{SkillId, SkillSummary};
use unicode_segmentation::UnicodeSegmentation;

use crate::session::path_triggers::PathTriggers;

/// The score of a skill whose `paths` glob matched a touched path: the
/// author declared those files, which is evidence as strong as a two-word
/// keyword, enough for auto-activation.
pub const PATH_MATCH_SCORE: usize = 2;

/// One skill the prompt points at, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Suggestion {
    /// The suggested skill.
    pub id: SkillId,
    /// The label of the skill's source, as events record it.
    pub source: String,
    /// The keywords that matched, as the skill wrote them, in the skill's order.
    pub matched_keywords: Vec<String>,
    /// The touched paths its `paths` globs matched, in the order touched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub matched_paths: Vec<String>,
    /// Total words of the matched keywords, plus `PATH_MATCH_SCORE` when
    /// a path matched: a two-word keyword is stronger evidence than a
    /// one-word one.
    pub score: usize,
    /// Whether the skill appears in the model-visible catalog; sessions
    /// never auto-activate or suggest a hidden one.
    pub model_visible: bool,
    /// Whether the user may invoke it (`user-invocable`); a skill for the
    /// model only may be auto-activated but is never offered to the user.
    pub user_invocable: bool,
    /// What the relevance index said of the skill, when the index is why it
    /// is offered (`crate::session::relevance`): no keyword or path of the
    /// skill matched (its `score` is then 0), or the index's clear winner is
    /// activated although its keywords alone would not have been enough.
    /// `None` when keywords or paths alone point at it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relevance: Option<bcode_skill_models::RelevanceMatch>,
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
    skills: Vec<IndexedSkill>,
    keywords: Vec<Keyword>,
    by_first_word: BTreeMap<String, Vec<usize>>,
    /// The `paths` globs of the skills that have them ...
    paths: PathTriggers,
    /// ... whose slots in `skills` these are, by their order there.
    path_slots: Vec<usize>,
}

/// What a suggestion says of its skill.
#[derive(Clone, Debug)]
struct IndexedSkill {
    id: SkillId,
    source: String,
    model_visible: bool,
    user_invocable: bool,
}

/// Case-folded words of `text` on Unicode word boundaries.
pub fn words(text: &str) -> Vec<String> {
    text.unicode_words().map(str::to_lowercase).collect()
}

/// The stem a keyword word and a prompt word are compared by: a lowercase
/// ASCII word of five letters or more loses one regular English ending
/// (`-ies` becomes `-y`; `-es` after `s`, `x`, `z`, `ch` or `sh`, `-s` but
/// not `-ss`, `-us` or `-is`; `-ing` and `-ed` (not `-eed`) after three
/// letters or more with a vowel, undoubling the consonant before them and
/// `ck` to `c`). Both sides are stemmed, so a stem never
/// needs to be a word; short words (`bus`, `ci`, `test` itself) and words
/// of other scripts are kept as written, and nothing else is guessed, so a
/// keyword never matches a different word that merely starts the same.
pub fn stem(word: &str) -> String {
    if word.len() < 5 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word.to_owned();
    }
    if let Some(base) = word.strip_suffix("ies") {
        return format!("{base}y");
    }
    for ending in ["ing", "ed"] {
        // `speed` and `bleed` end in `-ed` but are no past tense.
        if ending == "ed" && word.ends_with("eed") {
            continue;
        }
        if let Some(base) = word.strip_suffix(ending)
            && base.len() >= 3
            && base.bytes().any(|b| b"aeiouy".contains(&b))
        {
            return undouble(base);
        }
    }
    if let Some(base) = word.strip_suffix("es")
        && ["s", "x", "z", "ch", "sh"]
            .iter()
            .any(|e| base.ends_with(e))
    {
        return base.to_owned();
    }
    if word.ends_with('s') && !["ss", "us", "is"].iter().any(|e| word.ends_with(e)) {
        return word[..word.len() - 1].to_owned();
    }
    word.to_owned()
}

/// `panick` → `panic`, `debugg` → `debug`, `runn` → `run`.
fn undouble(base: &str) -> String {
    let bytes = base.as_bytes();
    match bytes {
        [.., b'c', b'k'] => base[..base.len() - 1].to_owned(),
        [.., a, b] if a == b && !b"aeioulsz".contains(a) => base[..base.len() - 1].to_owned(),
        _ => base.to_owned(),
    }
}

/// [`words`] of `text`, each [`stem`]med.
fn stems(text: &str) -> Vec<String> {
    words(text).iter().map(|w| stem(w)).collect()
}

impl KeywordIndex {
    /// Indexes the keywords of `skills`.
    pub fn build<'a>(skills: impl Iterator<Item = &'a SkillSummary>) -> Self {
        let mut index = KeywordIndex::default();
        let mut with_paths = Vec::new();
        for skill in skills {
            let slot = index.skills.len();
            index.skills.push(IndexedSkill {
                id: skill.manifest.id.clone(),
                source: skill.source.label.clone(),
                model_visible: skill.model_visible(),
                user_invocable: skill.manifest.user_invocable(),
            });
            if !skill.manifest.details().paths().is_empty() {
                with_paths.push((slot, skill));
            }
            for (order, written) in skill.manifest.activation.keywords.iter().enumerate() {
                let words = stems(written);
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
        let slots: Vec<usize> = with_paths.iter().map(|(slot, _)| *slot).collect();
        index.paths = PathTriggers::build(with_paths.into_iter().map(|(_, skill)| skill));
        index.path_slots = slots;
        index
    }

    /// Skills whose keywords occur in `prompt`, best first (score, then id).
    pub fn suggest(&self, prompt: &str) -> Vec<Suggestion> {
        self.suggest_turn(prompt, &[])
    }

    /// Skills whose keywords occur in `prompt` or whose `paths` globs match
    /// one of `touched` (repository paths, already normalised by
    /// `crate::session::path_triggers::normalize`), best first (score, then id).
    pub fn suggest_turn(&self, prompt: &str, touched: &[String]) -> Vec<Suggestion> {
        let mut out: BTreeMap<usize, Suggestion> =
            self.suggest_keywords(prompt).into_iter().collect();
        if !touched.is_empty() && !self.paths.is_empty() {
            for (local, found) in self.paths.matches(touched) {
                let Some(&slot) = self.path_slots.get(local) else {
                    continue;
                };
                let suggestion = out.entry(slot).or_insert_with(|| self.empty(slot));
                suggestion.matched_paths = found.paths;
                suggestion.score += PATH_MATCH_SCORE;
            }
        }
        let mut out: Vec<Suggestion> = out.into_values().collect();
        out.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        out
    }

    /// A suggestion of the skill in `slot` with nothing matched yet.
    fn empty(&self, slot: usize) -> Suggestion {
        let skill = &self.skills[slot];
        Suggestion {
            id: skill.id.clone(),
            source: skill.source.clone(),
            matched_keywords: Vec::new(),
            matched_paths: Vec::new(),
            score: 0,
            model_visible: skill.model_visible,
            user_invocable: skill.user_invocable,
            relevance: None,
        }
    }

    /// The skills whose keywords occur in `prompt`, by slot.
    fn suggest_keywords(&self, prompt: &str) -> Vec<(usize, Suggestion)> {
        let prompt_words = stems(prompt);
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
        matched
            .into_iter()
            .map(|(slot, keywords)| {
                let mut suggestion = self.empty(slot);
                suggestion.score = keywords
                    .iter()
                    .map(|&(_, k)| self.keywords[k].words.len())
                    .sum();
                suggestion.matched_keywords = keywords
                    .iter()
                    .map(|&(_, k)| self.keywords[k].written.clone())
                    .collect();
                (slot, suggestion)
            })
            .collect()
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

    #[test]
    fn word_forms_meet_at_one_stem() {
        for (forms, stem_of_all) in [
            (&["panic", "panics", "panicked", "panicking"][..], "panic"),
            (&["test", "tests", "tested", "testing"], "test"),
            (&["debug", "debugging", "debugged"], "debug"),
            (&["request", "requests"], "request"),
            (&["dependency", "dependencies"], "dependency"),
            (&["patch", "patches", "patched"], "patch"),
            (&["build", "builds", "building"], "build"),
            (&["fail", "fails", "failed", "failing"], "fail"),
        ] {
            for form in forms {
                assert_eq!(stem(&stem(form)), stem(stem_of_all), "{form}");
                assert_eq!(stem(form), stem(stem_of_all), "{form}");
            }
        }
        // Kept as written: short words, -ss/-us/-is, other scripts, and
        // words whose ending is no suffix.
        for word in [
            "bus", "ci", "class", "status", "analysis", "straße", "rust", "trust", "bring",
            "string", "speed",
        ] {
            assert_eq!(stem(word), word);
        }
    }
}
