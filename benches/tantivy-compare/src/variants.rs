//! Scoring variants over the router's own terms and fields, to see which
//! part of tantivy's scoring moves the quality figures: the router's
//! BM25F (one saturation over the weighted fields, one IDF over the whole
//! skill), and per-field BM25 summed over the fields (tantivy's way) with
//! the IDF per field or whole-skill, with the router's `b` per field or
//! tantivy's 0.75 everywhere. A plain in-memory scorer: slow, exact.

use std::collections::HashMap;

use bcode_skill::SkillRegistry;
use bcode_skill::{Normalizer, for_each_term};

use crate::{WEIGHTS, skill_text};

const K1: f32 = 1.2;
/// The router's `b` per field (`search/index.rs`).
const ROUTER_B: [f32; 5] = [0.3, 0.5, 0.3, 0.5, 0.75];

/// How the fields' evidence is put together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scoring {
    /// The router: weighted, normalised counts summed, saturated once.
    Bm25f,
    /// BM25 per field, weighted, summed; `per_field_idf` picks the IDF of
    /// the term in that field (tantivy) or in the whole skill.
    FieldSum { per_field_idf: bool },
}

/// Every skill's term counts by field, and the statistics.
pub struct Variants {
    ids: Vec<String>,
    /// term -> (doc, counts by field)
    postings: HashMap<String, Vec<(u32, [u32; 5])>>,
    lens: Vec<[u32; 5]>,
    avg: [f32; 5],
    /// term -> documents with it in each field.
    field_df: HashMap<String, [u32; 5]>,
}

impl Variants {
    pub fn new(registry: &SkillRegistry) -> Variants {
        let mut normalizer = Normalizer::new();
        let mut ids = Vec::new();
        let mut postings: HashMap<String, Vec<(u32, [u32; 5])>> = HashMap::new();
        let mut field_df: HashMap<String, [u32; 5]> = HashMap::new();
        let mut lens = Vec::new();
        for (doc, skill) in registry.skills().enumerate() {
            let text = skill_text(registry, skill);
            let mut counts: HashMap<String, [u32; 5]> = HashMap::new();
            let mut len = [0u32; 5];
            for (field, value) in text.fields.iter().enumerate() {
                for_each_term(value, &mut normalizer, &mut |term| {
                    counts.entry(term.to_owned()).or_default()[field] += 1;
                    len[field] += 1;
                });
            }
            for (term, tf) in counts {
                let df = field_df.entry(term.clone()).or_default();
                for f in 0..5 {
                    df[f] += u32::from(tf[f] > 0);
                }
                postings.entry(term).or_default().push((doc as u32, tf));
            }
            ids.push(skill.manifest.id.as_str().to_owned());
            lens.push(len);
        }
        let n = lens.len().max(1) as f32;
        let avg =
            std::array::from_fn(|f| (lens.iter().map(|l| l[f] as f32).sum::<f32>() / n).max(1.0));
        Variants {
            ids,
            postings,
            lens,
            avg,
            field_df,
        }
    }

    fn idf(&self, df: u32) -> f32 {
        let n = self.ids.len() as f32;
        let df = df as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The best `limit` ids for `task`; ties to the smaller id.
    pub fn rank(&self, task: &str, limit: usize, scoring: Scoring, b: [f32; 5]) -> Vec<String> {
        let mut normalizer = Normalizer::new();
        let mut order: Vec<String> = Vec::new();
        let mut repeats: HashMap<String, u32> = HashMap::new();
        for_each_term(task, &mut normalizer, &mut |term| {
            let count = repeats.entry(term.to_owned()).or_insert(0);
            if *count == 0 {
                order.push(term.to_owned());
            }
            *count += 1;
        });
        let mut scores = vec![0.0f32; self.ids.len()];
        for term in &order {
            let Some(list) = self.postings.get(term) else {
                continue;
            };
            let boost = 1.0 + (repeats[term] as f32).ln();
            let idf = self.idf(list.len() as u32);
            let df = self.field_df[term];
            for (doc, tf) in list {
                let lens = &self.lens[*doc as usize];
                let norm = |f: usize| 1.0 - b[f] + b[f] * lens[f] as f32 / self.avg[f];
                let score = match scoring {
                    Scoring::Bm25f => {
                        let pseudo: f32 = (0..5).map(|f| WEIGHTS[f] * tf[f] as f32 / norm(f)).sum();
                        idf * pseudo / (pseudo + K1)
                    }
                    Scoring::FieldSum { per_field_idf } => (0..5)
                        .filter(|&f| tf[f] > 0)
                        .map(|f| {
                            let idf = if per_field_idf { self.idf(df[f]) } else { idf };
                            let tf = tf[f] as f32;
                            WEIGHTS[f] * idf * tf / (tf + K1 * norm(f))
                        })
                        .sum(),
                };
                scores[*doc as usize] += boost * score;
            }
        }
        let mut ranked: Vec<(f32, &String)> = scores
            .into_iter()
            .zip(&self.ids)
            .filter(|(s, _)| *s > 0.0)
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        ranked.truncate(limit);
        ranked.into_iter().map(|(_, id)| id.clone()).collect()
    }
}

/// The variants `eval --variants` adds, by label.
pub const VARIANTS: [(&str, Scoring, [f32; 5]); 5] = [
    ("v-bm25f", Scoring::Bm25f, ROUTER_B),
    (
        "v-sum-global-idf",
        Scoring::FieldSum {
            per_field_idf: false,
        },
        ROUTER_B,
    ),
    (
        "v-sum-field-idf",
        Scoring::FieldSum {
            per_field_idf: true,
        },
        ROUTER_B,
    ),
    (
        "v-sum-field-idf-b075",
        Scoring::FieldSum {
            per_field_idf: true,
        },
        [0.75; 5],
    ),
    ("v-bm25f-b075", Scoring::Bm25f, [0.75; 5]),
];
