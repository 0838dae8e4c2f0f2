//! Issue 4's two render ratios measured in pairs: each round times one whole
//! render with every default section, one with the git sections off and
//! one `git status --porcelain` subprocess, back to back on the render
//! bench's fixture, and the ratios are taken per round, so a VM whose speed
//! drifts over a run (this one moves by ±30% within minutes, which three
//! criterion groups run one after the other cannot tell from a change)
//! slows both sides of a ratio alike. Prints one JSON line on stdout.
//!
//! ```text
//! render_ratio [--rounds N]
//! ```
//!
//! N rounds (default 200) follow 10 untimed ones. The figures are the
//! medians of the per-round ratios, with their quartiles, and the median
//! times.

// A measuring tool: a bad argument or a fixture that cannot be built ends
// the run with a message, which is what `expect`/`panic` give.
#![allow(clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Instant;

use bcode_benches::render::{
    FILES, GIT_OFF, RenderRequest, SKILLS, describe, git_status, render, request,
};
use bcode_benches::{RenderRepo, median, render_repo, rounds_value};

const WARMUP: usize = 10;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut rounds = 200;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => {
                rounds = rounds_value(args.next()).expect("--rounds takes a positive number");
            }
            other => panic!("unknown argument {other}; usage: render_ratio [--rounds N]"),
        }
    }
    let repo = render_repo(FILES, SKILLS).expect("the render fixture");
    let defaults = request(&repo, &[]);
    let git_off = request(&repo, &GIT_OFF);
    describe("defaults", &defaults).expect("the fixture renders");
    describe("git sections off", &git_off).expect("the fixture renders");

    let mut full = Vec::with_capacity(rounds);
    let mut off = Vec::with_capacity(rounds);
    let mut git = Vec::with_capacity(rounds);
    for round in 0..WARMUP + rounds {
        let times = [
            time_render(&defaults),
            time_render(&git_off),
            time_git(&repo),
        ];
        if round >= WARMUP {
            full.push(times[0]);
            off.push(times[1]);
            git.push(times[2]);
        }
    }
    let mut full_ratio: Vec<f64> = full.iter().zip(&git).map(|(f, g)| f / g).collect();
    let mut off_ratio: Vec<f64> = off.iter().zip(&git).map(|(o, g)| o / g).collect();
    let (full_q1, full_q3) = quartiles(&mut full_ratio);
    let (off_q1, off_q3) = quartiles(&mut off_ratio);
    println!(
        "{{\"rounds\":{rounds},\"full_ms\":{:.3},\"git_off_ms\":{:.3},\"git_status_ms\":{:.3},\
         \"full_over_git\":{:.3},\"full_over_git_q1_q3\":[{full_q1:.3},{full_q3:.3}],\
         \"git_off_over_git\":{:.4},\"git_off_over_git_q1_q3\":[{off_q1:.4},{off_q3:.4}]}}",
        median(&mut full),
        median(&mut off),
        median(&mut git),
        median(&mut full_ratio),
        median(&mut off_ratio),
    );
}

/// Milliseconds of one render.
fn time_render(request: &RenderRequest) -> f64 {
    let start = Instant::now();
    black_box(render(request).expect("renders"));
    start.elapsed().as_secs_f64() * 1000.0
}

/// Milliseconds of one `git status --porcelain`.
fn time_git(repo: &RenderRepo) -> f64 {
    let start = Instant::now();
    black_box(git_status(repo).expect("git status runs"));
    start.elapsed().as_secs_f64() * 1000.0
}

/// The first and third quartiles of `samples` (sorted in place).
fn quartiles(samples: &mut [f64]) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let index = ((samples.len() - 1) as f64 * q).round() as usize;
        samples.get(index).copied().unwrap_or(0.0)
    };
    (at(0.25), at(0.75))
}
