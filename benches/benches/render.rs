//! Whole-render benchmarks (issue 4): `render` with the real machine probes
//! on a repository of 100 skills, 10 invariants, `AGENTS.md` and a 10,000-file
//! git working tree with a few hundred status entries — with every default
//! section, with the three git sections off, and, as the yardstick, a plain
//! `git status --porcelain` subprocess on the same tree.

// A benchmark may stop loudly when its fixture cannot be built.
#![allow(clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use bcode_benches::render::{FILES, GIT_OFF, SKILLS, describe, git_status, render, request};
use bcode_benches::render_repo;
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

criterion_group!(benches, full_render);
criterion_main!(benches);
