//! Whole-render benchmarks (issue 4): `render` with the real machine probes
//! on a repository of 100 skills, 10 invariants, `AGENTS.md` and a 10,000-file
//! git working tree with a few hundred status entries — with every default
//! section, with the three git sections off, and, as the yardstick, a plain
//! `git status --porcelain` subprocess on the same tree. Then (issue 25
//! item 7) a repository with 10,000 registry-shaped skills in its root's
//! `.agents/skills`, rendered from the root and from `a/b/c`, with the disk
//! cache warm and off (`render_nested/*`).

// A benchmark may stop loudly when its fixture cannot be built.
#![allow(clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use bcode_benches::render::{
    FILES, GIT_OFF, SKILLS, describe, git_status, nested_request, render, request,
};
use bcode_benches::{nested_repo, render_repo};
use criterion::{Criterion, criterion_group, criterion_main};

fn full_render(c: &mut Criterion) {
    let repo = render_repo(FILES, SKILLS).expect("the render fixture");
    eprintln!(
        "fixture {}: {} tracked files, {} status lines, skills from {} ({})",
        repo.root.display(),
        repo.tracked_files,
        repo.status_lines,
        repo.skills.dir.display(),
        repo.skills.generator.describe()
    );
    let defaults = request(&repo, &[]);
    let git_off = request(&repo, &GIT_OFF);
    describe("defaults", &defaults).expect("the fixture renders");
    describe("git sections off", &git_off).expect("the fixture renders");

    let mut group = c.benchmark_group("render");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("full_defaults", |b| {
        b.iter(|| black_box(render(black_box(&defaults)).expect("renders")));
    });
    group.bench_function("git_sections_off", |b| {
        b.iter(|| black_box(render(black_box(&git_off)).expect("renders")));
    });
    group.bench_function("git_status_porcelain", |b| {
        b.iter(|| black_box(git_status(black_box(&repo)).expect("git status runs")));
    });
    group.finish();
}

/// The skills at the nested fixture's root.
const NESTED_ROOT_SKILLS: usize = 10_000;

fn nested_render(c: &mut Criterion) {
    let repo = nested_repo(NESTED_ROOT_SKILLS).expect("the nested fixture");
    eprintln!(
        "fixture {}: {NESTED_ROOT_SKILLS} skills in .agents/skills ({}), working folder {}",
        repo.root.display(),
        repo.generator,
        repo.work.display()
    );
    let cases = [
        ("root_warm", nested_request(&repo.root, &repo.home, &[])),
        ("a_b_c_warm", nested_request(&repo.work, &repo.home, &[])),
        (
            "root_nocache",
            nested_request(&repo.root, &repo.home, &["skills.disk_cache=false"]),
        ),
        (
            "a_b_c_nocache",
            nested_request(&repo.work, &repo.home, &["skills.disk_cache=false"]),
        ),
    ];
    // The first render of each writes its disk cache, so `*_warm` measure hits.
    for (name, request) in &cases {
        describe(name, request).expect("the nested fixture renders");
    }
    let mut group = c.benchmark_group("render_nested");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for (name, request) in &cases {
        group.bench_function(*name, |b| {
            b.iter(|| black_box(render(black_box(request)).expect("renders")));
        });
    }
    group.finish();
}

criterion_group!(benches, full_render, nested_render);
criterion_main!(benches);
