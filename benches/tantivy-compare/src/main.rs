//! `tantivy-compare`: tantivy beside the router's index on the same skills
//! (see README.md and `benches/notes/2026-12-05-tantivy.md`).
//!
//! ```text
//! tantivy-compare eval  --skills DIR... --queries FILE... [--k 10] [--variants]
//! tantivy-compare build --engine ours|ours-disk|tantivy --skills DIR [--out DIR]
//!                       [--threads 2] [--heap-mb 100]
//! tantivy-compare query --skills DIR --index DIR [--rounds 10] [--queries FILE --max N]
//! ```
//!
//! `eval` prints Hit@1, MRR@k and Recall@k of the router and of tantivy
//! (both analyses) as `route_eval` does. `build` discovers the roots and
//! builds one engine's index, printing one JSON line (times, bytes on
//! disk); its peak RSS is measured from outside. `query` builds the
//! router's index in memory, opens the tantivy index of `build`, and times
//! warm queries of each in alternating rounds.

// A measuring tool: a bad argument or an unreadable input ends the run
// with a message.
#![allow(clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::time::Instant;

use bcode_skill::DiscoveryOptions;
use bcode_skill::{RoutingCache, index_registry};
use bcode_prompt_config::SkillsConfig;
use tantivy_compare::route_eval::{Bm25, FnRanker, Query, Ranker, Scores, evaluate, read_queries};
use tantivy_compare::variants::{VARIANTS, Variants};
use tantivy_compare::{
    Analysis, Place, SHORT, TantivyIndex, dir_bytes, discover, long_task, roots_for,
};

#[derive(Default)]
struct Args {
    command: String,
    skills: Vec<PathBuf>,
    queries: Vec<PathBuf>,
    k: usize,
    engine: String,
    out: Option<PathBuf>,
    index: Option<PathBuf>,
    threads: usize,
    heap_mb: usize,
    rounds: usize,
    max: usize,
    variants: bool,
}

fn args() -> Args {
    let mut it = std::env::args().skip(1);
    let mut args = Args {
        command: it.next().expect("a command: eval, build or query"),
        k: 10,
        threads: 2,
        heap_mb: 100,
        rounds: 10,
        max: 100,
        ..Args::default()
    };
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--skills" => args.skills.push(value().into()),
            "--queries" => args.queries.push(value().into()),
            "--k" => args.k = value().parse().expect("--k N"),
            "--engine" => args.engine = value(),
            "--out" => args.out = Some(value().into()),
            "--index" => args.index = Some(value().into()),
            "--threads" => args.threads = value().parse().expect("--threads N"),
            "--heap-mb" => args.heap_mb = value().parse().expect("--heap-mb N"),
            "--rounds" => args.rounds = value().parse().expect("--rounds N"),
            "--max" => args.max = value().parse().expect("--max N"),
            "--variants" => args.variants = true,
            _ => panic!("unknown argument {arg}"),
        }
    }
    assert!(!args.skills.is_empty(), "--skills DIR");
    args
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let args = args();
    match args.command.as_str() {
        "eval" => eval(&args),
        "build" => build(&args),
        "query" => query(&args),
        other => panic!("unknown command {other}"),
    }
}

fn eval(args: &Args) {
    let registry = discover(&roots_for(&args.skills));
    // route_eval's baseline: each whole SKILL.md as one bag of words.
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
    let index = index_registry(&registry, None);
    let router = FnRanker::new("router", |q: &str, k: usize| {
        index
            .search(q, k)
            .into_iter()
            .map(|hit| hit.id.as_str().to_owned())
            .collect()
    });
    let heap = 50_000_000;
    let plain = TantivyIndex::build(&registry, Place::Ram, Analysis::Tantivy, 1, heap)
        .expect("tantivy index");
    let plain_searcher = plain.searcher();
    let tantivy = FnRanker::new("tantivy", |q: &str, k: usize| {
        plain.search(&plain_searcher, q, k)
    });
    let ours = TantivyIndex::build(&registry, Place::Ram, Analysis::Router, 1, heap)
        .expect("tantivy index");
    let ours_searcher = ours.searcher();
    let tantivy_router_terms = FnRanker::new("tantivy-router-terms", |q: &str, k: usize| {
        ours.search(&ours_searcher, q, k)
    });
    let mut rankers: Vec<&dyn Ranker> = vec![&baseline, &router, &tantivy, &tantivy_router_terms];
    let variants = args.variants.then(|| Variants::new(&registry));
    let variant_rankers: Vec<_> = variants
        .iter()
        .flat_map(|v| {
            VARIANTS.iter().map(move |(label, scoring, b)| {
                FnRanker::new(label, move |q: &str, k: usize| v.rank(q, k, *scoring, *b))
            })
        })
        .collect();
    rankers.extend(variant_rankers.iter().map(|r| r as &dyn Ranker));
    println!(
        "| queries | n | ranker | Hit@1 | MRR@{k} | Recall@{k} | ms/query |",
        k = args.k
    );
    println!("|---|---:|---|---:|---:|---:|---:|");
    for path in &args.queries {
        let queries: Vec<Query> =
            read_queries(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let label = format!(
            "{}/{}",
            path.parent()
                .and_then(|p| p.file_name())
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        for ranker in &rankers {
            let start = Instant::now();
            let outcomes = evaluate(*ranker, &queries, args.k);
            let per = ms(start) / queries.len().max(1) as f64;
            let s = Scores::of(&outcomes, args.k);
            println!(
                "| {label} | {} | {} | {:.3} | {:.3} | {:.3} | {per:.2} |",
                s.queries,
                ranker.label(),
                s.hit_at_1,
                s.mrr,
                s.recall
            );
        }
    }
}

fn build(args: &Args) {
    let roots = roots_for(&args.skills);
    let start = Instant::now();
    let registry = discover(&roots);
    let discover_ms = ms(start);
    let start = Instant::now();
    let (bytes, segments) = match args.engine.as_str() {
        "ours" => {
            let index = index_registry(&registry, None);
            assert_eq!(index.len(), registry.len());
            (0, 0)
        }
        "ours-disk" => {
            let out = args.out.as_ref().expect("--out DIR");
            let options = DiscoveryOptions::from_config(&SkillsConfig::default());
            let cache = RoutingCache::new(out, &options, &roots);
            let (hits, stats) = cache.search(&registry, SHORT, 10);
            assert!(stats.written && !hits.is_empty(), "{stats:?}");
            (dir_bytes(out), 1)
        }
        "tantivy" => {
            let out = args.out.as_ref().expect("--out DIR");
            std::fs::create_dir_all(out).expect("create --out");
            let index = TantivyIndex::build(
                &registry,
                Place::Dir(out),
                Analysis::Tantivy,
                args.threads,
                args.heap_mb * 1_000_000,
            )
            .expect("tantivy index");
            (dir_bytes(out), index.segments())
        }
        other => panic!("unknown engine {other}"),
    };
    println!(
        "{{\"engine\":\"{}\",\"skills\":{},\"discover_ms\":{discover_ms:.0},\"build_ms\":{:.0},\"bytes\":{bytes},\"segments\":{segments}}}",
        args.engine,
        registry.len(),
        ms(start)
    );
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

fn query(args: &Args) {
    let registry = discover(&roots_for(&args.skills));
    let ours = index_registry(&registry, None);
    let dir = args.index.as_ref().expect("--index DIR (of `build`)");
    let theirs = TantivyIndex::open(dir, Analysis::Tantivy).expect("open the tantivy index");
    let searcher = theirs.searcher();
    let long = long_task();
    let mut groups: Vec<(String, Vec<String>)> = vec![
        ("short".to_owned(), vec![SHORT.to_owned()]),
        ("long".to_owned(), vec![long]),
    ];
    for path in &args.queries {
        let queries = read_queries(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let name = path
            .parent()
            .and_then(|p| p.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        groups.push((
            name,
            queries
                .into_iter()
                .take(args.max)
                .map(|q| q.query)
                .collect(),
        ));
    }
    // Warm both: every task once.
    for (_, tasks) in &groups {
        for task in tasks {
            std::hint::black_box(ours.search(task, 10));
            std::hint::black_box(theirs.search(&searcher, task, 10));
        }
    }
    for (name, tasks) in &groups {
        let mut times = [Vec::new(), Vec::new()];
        // Short groups (one task) are repeated so a round lasts a while.
        let repeat = (200 / tasks.len()).max(1);
        for _ in 0..args.rounds {
            for (engine, slot) in times.iter_mut().enumerate() {
                let start = Instant::now();
                for _ in 0..repeat {
                    for task in tasks {
                        if engine == 0 {
                            std::hint::black_box(ours.search(task, 10));
                        } else {
                            std::hint::black_box(theirs.search(&searcher, task, 10));
                        }
                    }
                }
                slot.push(ms(start) / (repeat * tasks.len()) as f64);
            }
        }
        let ratios: Vec<f64> = times[1].iter().zip(&times[0]).map(|(t, o)| t / o).collect();
        println!(
            "{{\"group\":\"{name}\",\"tasks\":{},\"ours_ms\":{:.3},\"tantivy_ms\":{:.3},\"tantivy_over_ours\":{:.2},\"ours_all\":{:?},\"tantivy_all\":{:?}}}",
            tasks.len(),
            median(times[0].clone()),
            median(times[1].clone()),
            median(ratios),
            times[0]
                .iter()
                .map(|t| (t * 1000.0).round() / 1000.0)
                .collect::<Vec<_>>(),
            times[1]
                .iter()
                .map(|t| (t * 1000.0).round() / 1000.0)
                .collect::<Vec<_>>(),
        );
    }
}
