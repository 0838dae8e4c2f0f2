//! The built-in deterministic selector: lexical relevance of each
//! invariant's id, title, summary, keywords and `paths` globs against the
//! task text and touched paths. No model, no clock, no I/O: the same request
//! gives the same answer. Used for `on_timeout = "deterministic"` and by the
//! CLI, which has no model.
//!
//! Scoring, per invariant: a keyword (all of its words present) scores 4,
//! a task word in the id or title 2, in the summary 1, and a touched path
//! (or a path-like word of the task text) matching one of its `paths` globs
//! 5. Invariants scoring under 2 are not selected; the rest are ordered by score,
//! then catalog order, and cut to `max_selected`.

use std::collections::BTreeSet;

use super::SelectionOrigin;
use super::selector::{
    InvariantSelector, InvariantSummary, SelectorAnswer, SelectorFuture, SelectorRequest,
};
use crate::path_globs::PathGlobs;

/// The least score that counts as relevant: one shared word in a summary
/// alone is chance, not relevance.
const MIN_SCORE: usize = 2;

/// Words too common to say anything about relevance.
const STOP_WORDS: &[&str] = &[
    "about", "also", "and", "any", "are", "but", "can", "does", "each", "every", "for", "from",
    "has", "have", "how", "into", "its", "make", "must", "need", "not", "our", "should", "than",
    "that", "the", "them", "then", "there", "these", "they", "this", "those", "use", "was", "what",
    "when", "which", "why", "will", "with", "you", "your",
];

/// The built-in selector as an [`InvariantSelector`] (its future is ready
/// at once).
#[derive(Clone, Copy, Debug, Default)]
pub struct DeterministicSelector;

impl InvariantSelector for DeterministicSelector {
    fn select(&self, request: SelectorRequest) -> SelectorFuture {
        let answer = select_deterministic(&request);
        Box::pin(std::future::ready(Ok(answer)))
    }

    fn origin(&self) -> SelectionOrigin {
        SelectionOrigin::Deterministic
    }
}

/// Scores every invariant of `request` against its task; see the module docs.
pub fn select_deterministic(request: &SelectorRequest) -> SelectorAnswer {
    let task_words = words(&request.task.text);
    let mut paths: Vec<String> = request.task.touched_paths.clone();
    paths.extend(
        request
            .task
            .text
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| "`'\"()[]{},;:".contains(c)))
            .filter(|w| w.contains('/') || has_extension(w))
            .map(|w| w.trim_start_matches("./").to_owned()),
    );
    let mut scored: Vec<(usize, usize, &str)> = request
        .invariants
        .iter()
        .enumerate()
        .map(|(index, inv)| (score(inv, &task_words, &paths), index, inv.id.as_str()))
        .filter(|(score, _, _)| *score >= MIN_SCORE)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    SelectorAnswer {
        ids: scored
            .into_iter()
            .take(request.max_selected)
            .map(|(_, _, id)| id.to_owned())
            .collect(),
        task_summary: task_summary(&request.task.text),
    }
}

fn score(inv: &InvariantSummary, task: &BTreeSet<String>, paths: &[String]) -> usize {
    let hits = |text: &str| words(text).intersection(task).count();
    let keywords = inv
        .keywords
        .iter()
        .filter(|k| {
            let kw = words(k);
            !kw.is_empty() && kw.is_subset(task)
        })
        .count();
    let mut total = 4 * keywords
        + 2 * hits(&inv.id.replace(['-', '_'], " "))
        + 2 * hits(&inv.title)
        + hits(&inv.summary);
    // The catalog's compiled set, unless it was made for other patterns
    // (a host-built request); then compile here.
    let compiled;
    let globs = if inv.globs.compiled_for(&inv.paths) {
        &inv.globs
    } else {
        compiled = PathGlobs::compile(&inv.paths, None, None);
        &compiled
    };
    total += 5 * paths.iter().filter(|p| globs.is_match(p.as_str())).count();
    total
}

/// Lower-case words of three or more letters or digits, stop words removed,
/// a trailing plural `s` dropped so "invariants" meets "invariant".
fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 3 && !STOP_WORDS.contains(&w.as_str()))
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.chars().count() >= 4 && !stem.ends_with('s') => stem.to_owned(),
            _ => w,
        })
        .collect()
}

fn has_extension(word: &str) -> bool {
    word.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    })
}

/// The first line of the task text, trimmed; `None` when it is empty.
fn task_summary(text: &str) -> Option<String> {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(super::selector::bound_summary(first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_drop_stop_words_and_plurals() {
        let got: Vec<String> = words("Fix the Parser errors in src/lib.rs, invariants")
            .into_iter()
            .collect();
        assert_eq!(got, ["error", "fix", "invariant", "lib", "parser", "src"]);
    }
}
