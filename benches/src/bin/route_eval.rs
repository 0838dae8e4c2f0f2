//! Scores skill rankers on (task -> right skill) query files: discovers the
//! given skill roots the normal way, ranks every query with each ranker and
//! prints Hit@1, MRR@k and Recall@k per query file and ranker.
//!
//! ```text
//! route_eval --skills DIR [--skills DIR ...] --queries FILE [--queries FILE ...]
//!            [--k 10] [--json] [--dump DIR]
//! ```
//!
//! The data comes from `benches/eval/` (convert, then materialise; see its
//! README). Today the only ranker is the plain BM25 baseline over whole
//! `SKILL.md` files; the skill router joins it at the marked place in
//! `main`. `--dump DIR` writes each query's top k, one JSON line a query,
//! to `DIR/<query file stem>.<ranker>.jsonl`, for reading the failures.

// A measuring tool: a bad argument or an unreadable input ends the run with
// a message, which is what `expect`/`panic` give.
#![allow(clippy::expect_used, clippy::panic)]

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use bcode_benches::roots_for;
use bcode_benches::route_eval::{
    Bm25, FnRanker, Outcome, Query, Ranker, Scores, evaluate, read_queries,
};
use bcode_prompt_config::SkillsConfig;
use bcode_skill::{Discovery, DiscoveryOptions};
use bcode_skill_models::Severity;

struct Args {
    skills: Vec<PathBuf>,
    queries: Vec<PathBuf>,
    k: usize,
    json: bool,
    dump: Option<PathBuf>,
}

const USAGE: &str = "usage: route_eval --skills DIR [--skills DIR ...] --queries FILE [--queries FILE ...] [--k 10] [--json] [--dump DIR]";

fn args() -> Args {
    let mut args = Args {
        skills: Vec::new(),
        queries: Vec::new(),
        k: 10,
        json: false,
        dump: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--skills" => args.skills.push(value().into()),
            "--queries" => args.queries.push(value().into()),
            "--k" => args.k = value().parse().expect("--k N"),
            "--json" => args.json = true,
            "--dump" => args.dump = Some(value().into()),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => panic!("unknown argument {arg}\n{USAGE}"),
        }
    }
    assert!(
        !args.skills.is_empty() && !args.queries.is_empty() && args.k > 0,
        "{USAGE}"
    );
    args
}

fn main() {
    let args = args();

    // Discovery as the product does it, so every ranker sees the same
    // skills the router will: those that parse, first root winning a
    // repeated id.
    let start = Instant::now();
    let options = DiscoveryOptions::from_config(&SkillsConfig::default());
    let registry = Discovery::new(options).build(&roots_for(&args.skills));
    let errors = registry
        .diagnostics()
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    eprintln!(
        "discovered {} skills ({} diagnostics, {errors} errors) in {:.0} ms",
        registry.skills().count(),
        registry.diagnostics().len(),
        start.elapsed().as_secs_f64() * 1e3
    );
    for d in registry
        .diagnostics()
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .take(10)
    {
        eprintln!(
            "  {} {}: {}",
            d.code.as_str(),
            d.path
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            d.message()
        );
    }

    // The baseline reads each skill's whole instruction file: front matter
    // and body, as one text.
    let start = Instant::now();
    let documents: Vec<(String, String)> = registry
        .skills()
        .map(|s| {
            let bytes = std::fs::read(&s.location)
                .unwrap_or_else(|e| panic!("read {}: {e}", s.location.display()));
            (
                s.manifest.id.as_str().to_owned(),
                String::from_utf8_lossy(&bytes).into_owned(),
            )
        })
        .collect();
    let baseline = Bm25::new("bm25-whole-file", &documents);
    eprintln!(
        "indexed {} files for the baseline in {:.0} ms",
        baseline.len(),
        start.elapsed().as_secs_f64() * 1e3
    );

    // The router: the relevance index of `bcode-skill`, built over the
    // same registry (bodies and file names read as the product reads them).
    let start = Instant::now();
    let index = bcode_skill::index_registry(&registry, None);
    eprintln!(
        "built the relevance index of {} skills in {:.0} ms",
        index.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
    let router = FnRanker::new("router", |query: &str, limit: usize| {
        index
            .search(query, limit)
            .into_iter()
            .map(|hit| hit.id.as_str().to_owned())
            .collect()
    });
    let rankers: Vec<Box<dyn Ranker + '_>> = vec![Box::new(baseline), Box::new(router)];

    let known: std::collections::BTreeSet<&str> =
        registry.skills().map(|s| s.manifest.id.as_str()).collect();

    if !args.json {
        println!(
            "| queries | n | ranker | Hit@1 | MRR@{k} | Recall@{k} | ms/query |",
            k = args.k
        );
        println!("|---|---:|---|---:|---:|---:|---:|");
    }
    for path in &args.queries {
        let queries: Vec<Query> =
            read_queries(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let unknown = queries
            .iter()
            .filter(|q| q.expected.iter().any(|name| !known.contains(name.as_str())))
            .count();
        if unknown > 0 {
            // Scored as they are (a skill that is not there cannot be
            // found): a conversion or discovery problem, not a ranking one.
            eprintln!(
                "warning: {unknown} queries of {} expect a skill the registry does not hold",
                path.display()
            );
        }
        let stem = path
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        let set = path
            .parent()
            .and_then(|p| p.file_name())
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        let label = if set.is_empty() {
            stem.clone()
        } else {
            format!("{set}/{stem}")
        };
        for ranker in &rankers {
            let start = Instant::now();
            let outcomes = evaluate(ranker.as_ref(), &queries, args.k);
            let ms_per_query = start.elapsed().as_secs_f64() * 1e3 / queries.len().max(1) as f64;
            let scores = Scores::of(&outcomes, args.k);
            if args.json {
                println!(
                    "{{\"queries\":{},\"n\":{},\"ranker\":{},\"k\":{},\"hit_at_1\":{:.4},\"mrr\":{:.4},\"recall\":{:.4},\"ms_per_query\":{:.3}}}",
                    serde_json::Value::from(label.as_str()),
                    scores.queries,
                    serde_json::Value::from(ranker.label()),
                    scores.k,
                    scores.hit_at_1,
                    scores.mrr,
                    scores.recall,
                    ms_per_query
                );
            } else {
                println!(
                    "| {label} | {} | {} | {:.3} | {:.3} | {:.3} | {:.2} |",
                    scores.queries,
                    ranker.label(),
                    scores.hit_at_1,
                    scores.mrr,
                    scores.recall,
                    ms_per_query
                );
            }
            if let Some(dir) = &args.dump {
                dump(
                    dir,
                    &format!("{stem}.{}", ranker.label()),
                    &queries,
                    &outcomes,
                );
            }
        }
    }
}

/// Writes one JSON line a query: id, expected, the top k and the first
/// hit's rank.
fn dump(dir: &std::path::Path, name: &str, queries: &[Query], outcomes: &[Outcome]) {
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    let mut out = String::new();
    for (query, outcome) in queries.iter().zip(outcomes) {
        let line = serde_json::json!({
            "id": outcome.id,
            "expected": query.expected,
            "first_hit": outcome.first_hit,
            "top": outcome.top,
        });
        let _ = writeln!(out, "{line}");
    }
    let path = dir.join(format!("{name}.jsonl"));
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}
