//! The routing quality evaluation (issue 39): a query file of
//! (task -> right skills) pairs, rankers that order skills for a task, the
//! plain BM25 baseline the skill router is compared with, and the scores
//! Hit@1, MRR@k and Recall@k.
//!
//! The baseline is deliberately the simplest strong retriever: the whole
//! `SKILL.md` text as one bag of words (lowercased, split on every character
//! that is not alphanumeric), Okapi BM25 with k1 = 1.2 and b = 0.75, no
//! stemming, no stop words, no fields. The IDF is the non-negative form
//! `ln(1 + (N - df + 0.5) / (df + 0.5))` (Lucene's), so a term in more than
//! half the documents still counts a little instead of counting against.
//! Every token of the query counts, repeats included, as in the usual
//! `rank_bm25` formulation: a long task text that names a thing five times
//! leans on it five times.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io;
use std::path::Path;

/// One evaluation query: the task text and the names of the skills that
/// are right for it (usually one; MetaTool's multi-tool queries have two).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    pub id: String,
    pub query: String,
    pub expected: Vec<String>,
}

/// Reads a query file: one JSON object a line,
/// `{"id": "...", "query": "...", "expected": ["name", ...]}`. Blank lines
/// are skipped; a malformed line is an error naming its line number.
pub fn read_queries(path: &Path) -> io::Result<Vec<Query>> {
    let text = std::fs::read_to_string(path)?;
    parse_queries(&text).map_err(|message| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {message}", path.display()),
        )
    })
}

/// [`read_queries`] on text already read.
pub fn parse_queries(text: &str) -> Result<Vec<Query>, String> {
    let mut queries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |what: &str| format!("line {}: {what}", index + 1);
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| bad(&e.to_string()))?;
        let field = |name: &str| {
            value
                .get(name)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| bad(&format!("`{name}` is not a string")))
        };
        let expected = value
            .get("expected")
            .and_then(serde_json::Value::as_array)
            .ok_or_else(|| bad("`expected` is not a list"))?
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .filter(|names| !names.is_empty())
            .ok_or_else(|| bad("`expected` must be a non-empty list of names"))?;
        queries.push(Query {
            id: field("id")?,
            query: field("query")?,
            expected,
        });
    }
    Ok(queries)
}

/// Something that orders skills for a task: the baseline here, the skill
/// router once it exists. `rank` returns at most `limit` skill names, best
/// first.
pub trait Ranker {
    /// The label printed in the results.
    fn label(&self) -> &str;
    fn rank(&self, query: &str, limit: usize) -> Vec<String>;
}

/// A [`Ranker`] from a closure, so plugging in another ranking function is
/// one line: `FnRanker::new("router", |q, k| registry.rank(q, k))`.
pub struct FnRanker<F> {
    label: String,
    rank: F,
}

impl<F: Fn(&str, usize) -> Vec<String>> FnRanker<F> {
    pub fn new(label: &str, rank: F) -> Self {
        FnRanker {
            label: label.to_owned(),
            rank,
        }
    }
}

impl<F> fmt::Debug for FnRanker<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnRanker")
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

impl<F: Fn(&str, usize) -> Vec<String>> Ranker for FnRanker<F> {
    fn label(&self) -> &str {
        &self.label
    }

    fn rank(&self, query: &str, limit: usize) -> Vec<String> {
        (self.rank)(query, limit)
    }
}

/// The baseline's tokens: the text lowercased, split on every character
/// that is not alphanumeric (Unicode's notion), empty pieces dropped.
pub fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
}

/// Okapi BM25 over whole documents (see the module documentation).
#[derive(Debug)]
pub struct Bm25 {
    label: String,
    names: Vec<String>,
    lengths: Vec<f64>,
    average_length: f64,
    /// Term -> (document, term frequency), documents in ascending order.
    postings: HashMap<String, Vec<(u32, u32)>>,
    k1: f64,
    b: f64,
}

impl Bm25 {
    /// The usual constants of the baseline.
    pub const K1: f64 = 1.2;
    pub const B: f64 = 0.75;

    /// Indexes `(name, text)` documents. Names should be unique; a repeated
    /// name is indexed twice and may be returned twice.
    pub fn new(label: &str, documents: &[(String, String)]) -> Self {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(documents.len());
        for (doc, (_, text)) in documents.iter().enumerate() {
            let mut counts: HashMap<String, u32> = HashMap::new();
            let mut length = 0u64;
            for token in tokens(text) {
                *counts.entry(token).or_default() += 1;
                length += 1;
            }
            lengths.push(length as f64);
            let doc = u32::try_from(doc).unwrap_or(u32::MAX);
            for (term, tf) in counts {
                postings.entry(term).or_default().push((doc, tf));
            }
        }
        let average_length = if lengths.is_empty() {
            0.0
        } else {
            lengths.iter().sum::<f64>() / lengths.len() as f64
        };
        Bm25 {
            label: label.to_owned(),
            names: documents.iter().map(|(name, _)| name.clone()).collect(),
            lengths,
            average_length,
            postings,
            k1: Self::K1,
            b: Self::B,
        }
    }

    /// The number of documents indexed.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Every document with a positive score, best first; ties go to the
    /// smaller name, so the order is the same on every run.
    pub fn scores(&self, query: &str) -> Vec<(String, f64)> {
        let mut query_terms: BTreeMap<String, u32> = BTreeMap::new();
        for token in tokens(query) {
            *query_terms.entry(token).or_default() += 1;
        }
        let n = self.names.len() as f64;
        let mut totals = vec![0.0f64; self.names.len()];
        for (term, repeats) in &query_terms {
            let Some(list) = self.postings.get(term) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let doc = doc as usize;
                let tf = f64::from(tf);
                let norm = if self.average_length > 0.0 {
                    1.0 - self.b + self.b * self.lengths[doc] / self.average_length
                } else {
                    1.0
                };
                totals[doc] +=
                    f64::from(*repeats) * idf * tf * (self.k1 + 1.0) / (tf + self.k1 * norm);
            }
        }
        let mut ranked: Vec<(String, f64)> = totals
            .into_iter()
            .enumerate()
            .filter(|(_, score)| *score > 0.0)
            .map(|(doc, score)| (self.names[doc].clone(), score))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        ranked
    }
}

impl Ranker for Bm25 {
    fn label(&self) -> &str {
        &self.label
    }

    fn rank(&self, query: &str, limit: usize) -> Vec<String> {
        let mut ranked = self.scores(query);
        ranked.truncate(limit);
        ranked.into_iter().map(|(name, _)| name).collect()
    }
}

/// One query's result under one ranker.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub id: String,
    /// The first `k` names the ranker returned.
    pub top: Vec<String>,
    /// 1-based rank of the first expected skill within the top k.
    pub first_hit: Option<usize>,
    /// Expected skills found within the top k.
    pub found: usize,
    pub expected: usize,
}

impl Outcome {
    /// Scores `ranked` (best first) against `expected`, looking at the
    /// first `k` names. A name returned twice counts once.
    pub fn of(id: &str, ranked: &[String], expected: &[String], k: usize) -> Self {
        let top: Vec<String> = ranked.iter().take(k).cloned().collect();
        let first_hit = top
            .iter()
            .position(|name| expected.contains(name))
            .map(|i| i + 1);
        let found = expected
            .iter()
            .enumerate()
            .filter(|(i, name)| !expected[..*i].contains(name) && top.contains(name))
            .count();
        let mut distinct = expected.to_vec();
        distinct.sort();
        distinct.dedup();
        Outcome {
            id: id.to_owned(),
            top,
            first_hit,
            found,
            expected: distinct.len(),
        }
    }
}

/// The scores of one ranker on one query file.
#[derive(Clone, Debug, PartialEq)]
pub struct Scores {
    pub queries: usize,
    pub k: usize,
    /// Share of queries whose first result is one of the expected skills.
    pub hit_at_1: f64,
    /// Mean over queries of 1 / (rank of the first expected skill), 0 when
    /// none is in the top k.
    pub mrr: f64,
    /// Mean over queries of (expected skills in the top k) / (expected
    /// skills).
    pub recall: f64,
}

impl Scores {
    pub fn of(outcomes: &[Outcome], k: usize) -> Self {
        let n = outcomes.len();
        let mean = |f: &dyn Fn(&Outcome) -> f64| {
            if n == 0 {
                0.0
            } else {
                outcomes.iter().map(f).sum::<f64>() / n as f64
            }
        };
        Scores {
            queries: n,
            k,
            hit_at_1: mean(&|o| f64::from(u8::from(o.first_hit == Some(1)))),
            mrr: mean(&|o| o.first_hit.map_or(0.0, |r| 1.0 / r as f64)),
            recall: mean(&|o| {
                if o.expected == 0 {
                    0.0
                } else {
                    o.found as f64 / o.expected as f64
                }
            }),
        }
    }
}

/// Runs every query through `ranker`, asking for `k` names each.
pub fn evaluate(ranker: &dyn Ranker, queries: &[Query], k: usize) -> Vec<Outcome> {
    queries
        .iter()
        .map(|q| Outcome::of(&q.id, &ranker.rank(&q.query, k), &q.expected, k))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect()
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn tokens_lowercase_and_split_on_non_alphanumerics() {
        let got: Vec<String> = tokens("PDF-to_text: Größe, v2.0!").collect();
        assert_eq!(got, names(&["pdf", "to", "text", "größe", "v2", "0"]));
    }

    #[test]
    fn bm25_matches_hand_computed_scores() {
        // Two documents of lengths 2 and 4 (average 3); "apple" is in one
        // document (df 1), "pie" in both (df 2). N = 2.
        let index = Bm25::new(
            "bm25",
            &docs(&[("a", "apple pie"), ("b", "pie pie pie crust")]),
        );
        let idf = |df: f64| (1.0 + (2.0 - df + 0.5) / (df + 0.5)).ln();
        let term = |tf: f64, len: f64| tf * 2.2 / (tf + 1.2 * (1.0 - 0.75 + 0.75 * len / 3.0));
        let a = idf(1.0) * term(1.0, 2.0) + idf(2.0) * term(1.0, 2.0);
        let b = idf(2.0) * term(3.0, 4.0);
        let got = index.scores("Apple PIE");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, "a");
        assert!((got[0].1 - a).abs() < 1e-12, "{} vs {a}", got[0].1);
        assert_eq!(got[1].0, "b");
        assert!((got[1].1 - b).abs() < 1e-12, "{} vs {b}", got[1].1);
    }

    #[test]
    fn repeated_query_terms_count_again() {
        let index = Bm25::new("bm25", &docs(&[("a", "apple"), ("b", "pear")]));
        let once = index.scores("apple")[0].1;
        let twice = index.scores("apple apple")[0].1;
        assert!((twice - 2.0 * once).abs() < 1e-12);
    }

    #[test]
    fn ties_go_to_the_smaller_name_and_zero_scores_are_left_out() {
        let index = Bm25::new(
            "bm25",
            &docs(&[("zeta", "shared"), ("alpha", "shared"), ("none", "other")]),
        );
        assert_eq!(index.rank("shared", 10), names(&["alpha", "zeta"]));
        assert_eq!(index.rank("shared", 1), names(&["alpha"]));
        assert_eq!(index.rank("absent words", 10), Vec::<String>::new());
    }

    #[test]
    fn outcome_and_scores_follow_the_definitions() {
        let k = 3;
        let outcomes = vec![
            // Hit at 1, the only expected skill.
            Outcome::of("q1", &names(&["x", "y", "z"]), &names(&["x"]), k),
            // First expected at rank 2; one of two expected found.
            Outcome::of("q2", &names(&["y", "x", "z"]), &names(&["x", "w"]), k),
            // Expected only at rank 4, outside the top 3: a miss.
            Outcome::of("q3", &names(&["a", "b", "c", "x"]), &names(&["x"]), k),
        ];
        assert_eq!(
            outcomes[1],
            Outcome {
                id: "q2".to_owned(),
                top: names(&["y", "x", "z"]),
                first_hit: Some(2),
                found: 1,
                expected: 2,
            }
        );
        assert_eq!(outcomes[2].first_hit, None);
        let scores = Scores::of(&outcomes, k);
        assert_eq!(
            scores,
            Scores {
                queries: 3,
                k: 3,
                hit_at_1: 1.0 / 3.0,
                mrr: (1.0 + 0.5 + 0.0) / 3.0,
                recall: (1.0 + 0.5 + 0.0) / 3.0,
            }
        );
    }

    #[test]
    fn query_files_parse_and_report_bad_lines() {
        let text = "{\"id\":\"a\",\"query\":\"make a pdf\",\"expected\":[\"pdf\"]}\n\n\
                    {\"id\":\"b\",\"query\":\"two\",\"expected\":[\"x\",\"y\"]}\n";
        assert_eq!(
            parse_queries(text),
            Ok(vec![
                Query {
                    id: "a".to_owned(),
                    query: "make a pdf".to_owned(),
                    expected: names(&["pdf"]),
                },
                Query {
                    id: "b".to_owned(),
                    query: "two".to_owned(),
                    expected: names(&["x", "y"]),
                },
            ])
        );
        assert_eq!(
            parse_queries("{\"id\":\"a\",\"query\":\"q\",\"expected\":[]}"),
            Err("line 1: `expected` must be a non-empty list of names".to_owned())
        );
    }

    #[test]
    fn fn_ranker_passes_query_and_limit_through() {
        let ranker = FnRanker::new("fixed", |q: &str, k: usize| vec![format!("{q}:{k}")]);
        assert_eq!(ranker.label(), "fixed");
        assert_eq!(ranker.rank("task", 7), names(&["task:7"]));
    }
}
