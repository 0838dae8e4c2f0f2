//! Discovery benchmarks: a cold build (a fresh `Discovery`, so every skill
//! file is read and parsed; the OS page cache is warm, as for the Pi peer)
//! and an unchanged rebuild (the same `Discovery` again, answered by its
//! metadata cache) at 100, 1,000 and 10,000 skills; and a disk-cache hit
//! (a fresh `Discovery` with `skills.disk_cache`, as a one-shot render in a
//! new process: the stored registry read back and its stamps re-checked).
//! Then the cold build of 10,000 skills shaped like a public registry
//! (`discovery_registry/cold/10000`, issue 25 item 7: longer files, a
//! `metadata` map in nearly every one, another file in each folder).

// A benchmark may stop loudly when its fixture cannot be built.
#![allow(clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use bcode_benches::{BuildSummary, corpus, registry_corpus, roots_for};
use bcode_prompt_config::SkillsConfig;
use bcode_skill::{Discovery, DiscoveryOptions, DiskCache};
use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};

const SIZES: [usize; 3] = [100, 1_000, 10_000];

fn options() -> DiscoveryOptions {
    DiscoveryOptions::from_config(&SkillsConfig::default())
}

fn discovery(c: &mut Criterion) {
    for n in SIZES {
        let corpus = corpus(n).expect("generate the corpus");
        let roots = corpus.roots();
        let mut warm = Discovery::new(options());
        let registry = warm.build(&roots);
        let cold_stats = warm.last_stats();
        let summary = BuildSummary::of(&registry);
        warm.build(&roots);
        let rebuild_stats = warm.last_stats();
        eprintln!(
            "corpus n{n}: {} at {}\n  skills {}, model-visible {}, diagnostics {}; \
             cold files_read {}, unchanged rebuild files_read {} (cache hits {})",
            corpus.generator.describe(),
            corpus.dir.display(),
            summary.skills,
            summary.model_visible,
            summary.diagnostics,
            cold_stats.files_read,
            rebuild_stats.files_read,
            rebuild_stats.cache_hits,
        );
        // A rebuild that reads files measures the racy-mtime path, not the cache.
        assert_eq!(rebuild_stats.files_read, 0, "unchanged rebuild read files");

        let mut group = c.benchmark_group("discovery");
        if n >= 10_000 {
            group
                .sampling_mode(SamplingMode::Flat)
                .sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(4));
        } else {
            group
                .sample_size(20)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(3));
        }
        group.bench_with_input(BenchmarkId::new("cold", n), &roots, |b, roots| {
            // The registry and the discovery that built it are dropped
            // outside the timed region, after each build (so the next one
            // reuses the memory, as a long-lived process does): freeing
            // 10,000 summaries is not discovery (a session keeps them), and
            // Pi's loader is timed without its garbage collection too.
            b.iter_batched(
                || Discovery::new(options()),
                |mut discovery| {
                    let registry = discovery.build(black_box(roots));
                    (discovery, registry)
                },
                BatchSize::PerIteration,
            );
        });
        group.bench_with_input(
            BenchmarkId::new("unchanged_rebuild", n),
            &roots,
            |b, roots| {
                b.iter(|| black_box(warm.build(black_box(roots))));
            },
        );
        // The disk cache of this corpus, written once untimed; each timed
        // build is a fresh process's first build, answered from the file.
        let cache_dir = tempfile::tempdir().expect("a temporary cache folder");
        let disk = DiskCache::new(cache_dir.path());
        Discovery::new(options())
            .with_disk_cache(disk.clone())
            .build(&roots);
        let mut probe = Discovery::new(options()).with_disk_cache(disk.clone());
        probe.build(&roots);
        assert!(
            probe.last_stats().from_disk_cache,
            "the disk cache did not answer an unchanged tree"
        );
        group.bench_with_input(BenchmarkId::new("disk_cache_hit", n), &roots, |b, roots| {
            b.iter_batched(
                || Discovery::new(options()).with_disk_cache(disk.clone()),
                |mut discovery| {
                    let registry = discovery.build(black_box(roots));
                    (discovery, registry)
                },
                BatchSize::PerIteration,
            );
        });
        group.finish();
    }
}

/// The registry-shaped corpus's size in the criterion bench (the 60,000 of
/// issue 25 are measured whole-process by `scripts/scale.py`).
const REGISTRY_SIZE: usize = 10_000;

fn discovery_registry(c: &mut Criterion) {
    let corpus = match registry_corpus(REGISTRY_SIZE) {
        Ok(corpus) => corpus,
        Err(err) => {
            eprintln!("discovery_registry skipped: {err}");
            return;
        }
    };
    let roots = roots_for(&[corpus.dir.join("primary")]);
    let summary = BuildSummary::of(&Discovery::new(options()).build(&roots));
    eprintln!(
        "corpus registry{REGISTRY_SIZE}: {} at {}\n  skills {}, diagnostics {}",
        corpus.generator.describe(),
        corpus.dir.display(),
        summary.skills,
        summary.diagnostics,
    );
    let mut group = c.benchmark_group("discovery_registry");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group.bench_with_input(
        BenchmarkId::new("cold", REGISTRY_SIZE),
        &roots,
        |b, roots| {
            // Dropped outside the timed region, as in `discovery/cold`.
            b.iter_batched(
                || Discovery::new(options()),
                |mut discovery| {
                    let registry = discovery.build(black_box(roots));
                    (discovery, registry)
                },
                BatchSize::PerIteration,
            );
        },
    );
    group.finish();
}

criterion_group!(benches, discovery, discovery_registry);
criterion_main!(benches);
