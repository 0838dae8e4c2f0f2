//! Whole-render benchmarks (issue 4): `render` with the real machine probes
//! on a repository of 100 skills, 10 invariants, `AGENTS.md` and a 10,000-file
//! git working tree with a few hundred status entries — with every default
//! section, with the three git sections off, and, as the yardstick, a plain
//! `git status --porcelain` subprocess on the same tree.

// A benchmark may stop loudly when its fixture cannot be built.
#![allow(clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::process::{Command, Stdio};
use std::time::Duration;

use bcode_benches::{RenderRepo, render_repo};
use bcode_prompt::{PromptError, PromptSession, RuntimeMode, SessionOptions, Turn, TurnInput};
use criterion::{Criterion, criterion_group, criterion_main};

/// The tree and corpus sizes the issue names.
const FILES: usize = 10_000;
const SKILLS: usize = 100;

/// `--set` flags that turn off every section that reads git.
const GIT_OFF: [&str; 3] = [
    "system_prompt.sections.git_revision=false",
    "system_prompt.sections.worktree_context=false",
    "system_prompt.sections.dynamic_repository_context=false",
];

/// What the CLI would ask for with `bcode-prompt --repo REPO render`, with
/// a private empty `HOME` and a fixed clock.
#[derive(Clone, Debug)]
struct RenderRequest {
    repo: std::path::PathBuf,
    env: BTreeMap<String, String>,
    set: Vec<String>,
    now: chrono::DateTime<chrono::Utc>,
}

fn request(repo: &RenderRepo, set: &[&str]) -> RenderRequest {
    let env = BTreeMap::from([
        ("HOME".to_owned(), repo.home.display().to_string()),
        ("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned()),
        ("SHELL".to_owned(), "/bin/bash".to_owned()),
        ("LANG".to_owned(), "C.UTF-8".to_owned()),
    ]);
    RenderRequest {
        repo: repo.root.clone(),
        env,
        // The corpus as a configured root: a repository's own skill folder
        // may not link out of the repository.
        set: std::iter::once(format!(
            "skills.sources.paths=[{:?}]",
            repo.skills.dir.join("primary").display().to_string()
        ))
        .chain(set.iter().map(|s| (*s).to_owned()))
        .collect(),
        now: chrono::DateTime::parse_from_rfc3339("2026-11-29T19:30:00Z")
            .expect("a fixed timestamp")
            .with_timezone(&chrono::Utc),
    }
}

/// One whole render, as `bcode-prompt render` does it: a session opened
/// for the repository and its first, settled turn.
fn render(request: &RenderRequest) -> Result<Turn, PromptError> {
    let mut options = SessionOptions::new(&request.repo)
        .cwd(&request.repo)
        .env(request.env.clone())
        .runtime_mode(RuntimeMode::Render)
        .single_turn(true);
    for assignment in &request.set {
        options = options.set(assignment);
    }
    let mut session = PromptSession::open_blocking(options)?;
    session.next_turn_blocking(
        TurnInput::new("fix the failing test")
            .now(request.now)
            .settle(),
    )
}

/// Prints what one render produced, so a reader can see the work measured
/// (and that the status was read, not cut off by its deadline).
fn describe(label: &str, request: &RenderRequest) {
    let rendered = render(request).expect("the fixture renders");
    let prompt = &rendered.prompt;
    eprintln!(
        "{label}: system {} bytes, request context {} bytes, {} skill diagnostics",
        prompt.system.len(),
        prompt.request_context.len(),
        rendered.diagnostics.len()
    );
    for s in &prompt.sections {
        let notes = if s.notes.is_empty() {
            String::new()
        } else {
            format!("  notes: {}", s.notes.join(" | "))
        };
        eprintln!("  {:<34} {:>7} bytes{notes}", s.id, s.bytes);
    }
    for o in &prompt.omitted {
        eprintln!("  omitted {:<26} {:?}", o.id, o.reason);
    }
    if prompt.request_context.contains("timed out") || prompt.system.contains("timed out") {
        panic!("{label}: the git status hit its deadline; the figure would be meaningless");
    }
}

fn git_status(repo: &RenderRepo) -> usize {
    let output = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&repo.root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stderr(Stdio::null())
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git status failed");
    output.stdout.len()
}

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
    describe("defaults", &defaults);
    describe("git sections off", &git_off);

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
        b.iter(|| black_box(git_status(black_box(&repo))));
    });
    group.finish();
}

criterion_group!(benches, full_render);
criterion_main!(benches);
