//! Routing benchmarks (issue 39 item 7): a query against the relevance
//! index of a warm session (built once, as a session keeps it) at 1,000
//! and 10,000 discovered skills, for a short task and a long one; and
//! building the whole index, and a one-query index, over the same
//! registry. Then the same two queries at 60,000 skills of the
//! registry-shaped corpus (`search_registry/query_*/60000`), whose index is
//! built once outside the measured loop (building it is measured by the
//! cold runs of `notes/2026-12-03-routing-speed.md`, not here).

// A benchmark may stop loudly when its fixture cannot be built.
#![allow(clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use bcode_benches::{corpus, registry_corpus};
use bcode_prompt_config::SkillsConfig;
use bcode_skill::index_registry;
use bcode_skill::{Discovery, DiscoveryOptions};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

const SIZES: [usize; 2] = [1_000, 10_000];

/// The registry-shaped corpus the warm-query target names.
const REGISTRY: usize = 60_000;

/// A short task, as a user types one.
const SHORT: &str = "convert the quarterly report pdf into a spreadsheet and chart it";

/// A long task: an issue with a pasted log (about 6 KB).
fn long_task() -> String {
    let mut task = String::from(
        "The deployment pipeline fails after the kubernetes upgrade; the helm chart \
         renders but the migration job cannot reach postgres. Find out why and fix the \
         terraform module that provisions the database.\n",
    );
    for i in 0..60 {
        task.push_str(&format!(
            "2026-12-03T10:{i:02}:00Z ERROR migrate: connection refused (postgres:5432) \
             retry {i} of 60 in job db-migrate-{i}\n"
        ));
    }
    task
}

fn search(c: &mut Criterion) {
    let long = long_task();
    let mut group = c.benchmark_group("search");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for n in SIZES {
        let corpus = corpus(n).expect("generate the corpus");
        let registry = Discovery::new(DiscoveryOptions::from_config(&SkillsConfig::default()))
            .build(&corpus.roots());
        let index = index_registry(&registry, None);
        eprintln!("corpus n{n}: {} skills indexed", index.len());
        group.bench_with_input(BenchmarkId::new("query_short", n), &n, |b, _| {
            b.iter(|| black_box(index.search(black_box(SHORT), 10)));
        });
        group.bench_with_input(BenchmarkId::new("query_long", n), &n, |b, _| {
            b.iter(|| black_box(index.search(black_box(&long), 10)));
        });
        group.sample_size(10);
        group.bench_with_input(BenchmarkId::new("build_whole", n), &n, |b, _| {
            b.iter(|| black_box(index_registry(&registry, None).len()));
        });
        group.bench_with_input(BenchmarkId::new("build_for_query", n), &n, |b, _| {
            b.iter(|| black_box(index_registry(&registry, Some(SHORT)).len()));
        });
        group.sample_size(30);
    }
    group.finish();
}

fn search_registry(c: &mut Criterion) {
    let corpus = match registry_corpus(REGISTRY) {
        Ok(corpus) => corpus,
        Err(err) => {
            eprintln!("search_registry skipped: {err}");
            return;
        }
    };
    let long = long_task();
    let registry = Discovery::new(DiscoveryOptions::from_config(&SkillsConfig::default()))
        .build(&corpus.roots());
    let index = index_registry(&registry, None);
    eprintln!("corpus registry{REGISTRY}: {} skills indexed", index.len());
    let mut group = c.benchmark_group("search_registry");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.bench_with_input(
        BenchmarkId::new("query_short", REGISTRY),
        &REGISTRY,
        |b, _| {
            b.iter(|| black_box(index.search(black_box(SHORT), 10)));
        },
    );
    group.bench_with_input(
        BenchmarkId::new("query_long", REGISTRY),
        &REGISTRY,
        |b, _| {
            b.iter(|| black_box(index.search(black_box(&long), 10)));
        },
    );
    group.finish();
}

criterion_group!(benches, search, search_registry);
criterion_main!(benches);
