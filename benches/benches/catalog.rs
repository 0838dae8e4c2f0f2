//! Catalog benchmarks: formatting the model-visible catalog of 100, 1,000
//! and 10,000 discovered skills, whole and within a 32 KiB
//! `skills.prompt.max_bytes` (descriptions shortened, skills left out), and
//! the context block of one skill (which reads that skill's body from disk).

// A benchmark may stop loudly when its fixture cannot be built.
#![allow(clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use bcode_benches::corpus;
use bcode_prompt_config::{SkillsConfig, SkillsPromptConfig};
use bcode_skill::{CatalogOptions, Discovery, DiscoveryOptions, Templates, format_catalog};
use bcode_skill_models::SkillContextRequest;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const SIZES: [usize; 3] = [100, 1_000, 10_000];

/// The `skills.prompt.max_bytes` of the budgeted case.
const BUDGET: usize = 32 * 1024;

fn catalog(c: &mut Criterion) {
    let templates = Templates::builtin();
    let prompt = SkillsPromptConfig::default();
    let options = CatalogOptions {
        prompt: &prompt,
        user_skills_enabled: true,
    };
    let budgeted_prompt = SkillsPromptConfig {
        max_bytes: Some(BUDGET),
        ..SkillsPromptConfig::default()
    };
    let budgeted = CatalogOptions {
        prompt: &budgeted_prompt,
        ..options
    };
    let mut group = c.benchmark_group("catalog");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut context_case = None;
    for n in SIZES {
        let corpus = corpus(n).expect("generate the corpus");
        let registry = Discovery::new(DiscoveryOptions::from_config(&SkillsConfig::default()))
            .build(&corpus.roots());
        let text = format_catalog(registry.skills(), options, &templates)
            .expect("format the catalog")
            .text;
        let within = format_catalog(registry.skills(), budgeted, &templates)
            .expect("format the budgeted catalog");
        eprintln!(
            "corpus n{n}: {}; catalog of {} skills, {} bytes; within {BUDGET}: {} listed, \
             descriptions at {:?} characters, {} bytes",
            corpus.generator.describe(),
            registry.len(),
            text.len(),
            within.listed,
            within.description_chars,
            within.text.len()
        );
        group.throughput(Throughput::Elements(registry.len() as u64));
        group.bench_with_input(BenchmarkId::new("format", n), &registry, |b, registry| {
            b.iter(|| {
                black_box(format_catalog(
                    black_box(registry).skills(),
                    options,
                    &templates,
                ))
            });
        });
        group.bench_with_input(
            BenchmarkId::new("format_budget_32k", n),
            &registry,
            |b, registry| {
                b.iter(|| {
                    black_box(format_catalog(
                        black_box(registry).skills(),
                        budgeted,
                        &templates,
                    ))
                });
            },
        );
        if n == 1_000 {
            context_case = Some(registry);
        }
    }
    group.finish();

    // The context block of one ordinary skill: the first model-visible one
    // whose body loads (some corpus skills are deliberately broken).
    let registry = context_case.expect("the n1000 registry");
    let request = registry
        .skills()
        .filter(|s| s.model_visible())
        .map(|s| SkillContextRequest {
            id: s.manifest.id.clone(),
            arguments: vec!["--dry-run".to_owned()],
            raw_arguments: None,
            substitute_arguments: true,
            max_bytes: None,
            preview_max_chars: SkillsConfig::default().preview_max_chars,
        })
        .find(|r| registry.context(r, &templates).is_ok())
        .expect("a skill whose context block renders");
    let mut group = c.benchmark_group("context");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("one_skill", |b| {
        b.iter(|| black_box(registry.context(black_box(&request), &templates)));
    });
    group.finish();
}

criterion_group!(benches, catalog);
criterion_main!(benches);
