//! Keyword suggestion: prompts matched against the activation keywords of
//! indexed summaries (no body is read). Matching is on Unicode word
//! boundaries (UAX #29) and case-folded, so `Rust` matches `rust` but not
//! `trust`, and a multi-word keyword such as `pull request` matches only
//! those words in that order. English word forms meet at one stem on both
//! sides (`panics`, `panicked` and `panicking` match `panic`; `pull
//! requests` matches `pull request`); see [`stem`].

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
        for skill in skills {
            let slot = index.skills.len();
            index.skills.push((
                skill.manifest.id.clone(),
                skill.source.label.clone(),
                skill.model_visible(),
            ));
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
        index
    }

    /// Skills whose keywords occur in `prompt`, best first (score, then id).
    pub fn suggest(&self, prompt: &str) -> Vec<Suggestion> {
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
