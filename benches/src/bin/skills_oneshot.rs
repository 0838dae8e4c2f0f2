//! One-shot skills run for whole-process comparisons with the Pi peer's
//! `bench.mjs`: one cold discovery of the given roots (configured roots,
//! highest precedence first) and one catalog, then optionally repeated
//! in-process timings. Prints one JSON line on stdout.
//!
//! ```text
//! skills_oneshot [--iterations N] [--warmup K] [--catalog FILE] [--diagnostics FILE] [--only cold|rebuild|format|disk] ROOT...
//! ```
//!
//! With `--iterations 0` (the default) the process does exactly one build
//! and one format, so `/usr/bin/time -v` reports the peak memory one load
//! needs. With `N > 0` it also reports medians of N cold builds (a fresh
//! `Discovery` each), N unchanged rebuilds (one `Discovery` reused) and N
//! catalog formats, after K untimed warm-up rounds (default 3).

// A measuring tool: a bad argument or an unwritable output file ends the
// run with a message, which is what `expect`/`panic` give.
#![allow(clippy::expect_used, clippy::panic)]

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use bcode_benches::{BuildSummary, json_counts, median, peak_rss_kib, roots_for};
use bcode_prompt_config::{SkillsConfig, SkillsPromptConfig};
use bcode_skill::{
    CatalogOptions, Discovery, DiscoveryOptions, DiskCache, Templates, format_catalog,
};

struct Args {
    iterations: usize,
    warmup: usize,
    catalog: Option<PathBuf>,
    diagnostics: Option<PathBuf>,
    /// `cold`, `rebuild` or `format`: time only that step in the loop (for
    /// profiling one phase with `perf`).
    only: Option<String>,
    roots: Vec<PathBuf>,
}

fn args() -> Args {
    let mut args = Args {
        iterations: 0,
        warmup: 3,
        catalog: None,
        diagnostics: None,
        only: None,
        roots: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--iterations" | "-n" => args.iterations = value().parse().expect("--iterations N"),
            "--warmup" => args.warmup = value().parse().expect("--warmup K"),
            "--catalog" => args.catalog = Some(value().into()),
            "--diagnostics" => args.diagnostics = Some(value().into()),
            "--only" => args.only = Some(value()),
            _ if arg.starts_with('-') => panic!("unknown option {arg}"),
            _ => args.roots.push(arg.into()),
        }
    }
    if args.roots.is_empty() {
        panic!(
            "usage: skills_oneshot [--iterations N] [--warmup K] [--catalog FILE] [--diagnostics FILE] ROOT..."
        );
    }
    args
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let process_start = Instant::now();
    let args = args();
    let roots = roots_for(&args.roots);
    let options = DiscoveryOptions::from_config(&SkillsConfig::default());
    let prompt = SkillsPromptConfig::default();
    let catalog_options = CatalogOptions {
        prompt: &prompt,
        user_skills_enabled: true,
    };

    // The cold run: templates are compiled inside the timed region, as Pi's
    // first call pays for its JIT.
    let t0 = Instant::now();
    let mut discovery = Discovery::new(options.clone());
    let registry = discovery.build(&roots);
    let cold_load_ms = ms(t0);
    let cold_stats = discovery.last_stats();
    let t1 = Instant::now();
    let templates = Templates::builtin();
    let catalog = format_catalog(registry.skills(), catalog_options, &templates)
        .expect("the embedded catalog template renders");
    let cold_format_ms = ms(t1);
    let rss_after_cold_kib = peak_rss_kib();

    if let Some(path) = &args.catalog {
        std::fs::write(path, &catalog.text).expect("write the catalog");
    }
    if let Some(path) = &args.diagnostics {
        let mut out = String::new();
        for d in registry.diagnostics() {
            let path = d
                .path
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{}",
                d.severity,
                d.code.as_str(),
                path,
                d.message().replace('\n', " ")
            );
        }
        std::fs::write(path, out).expect("write the diagnostics");
    }

    let mut cold = Vec::new();
    let mut rebuild = Vec::new();
    let mut format = Vec::new();
    let mut rebuild_files_read = None;
    let mut disk = Vec::new();
    // `--only disk`: a fresh discovery answered from the disk cache each
    // round (a one-shot render's path), the cache written once, untimed.
    let disk_only = args.only.as_deref() == Some("disk");
    let disk_dir = std::env::temp_dir().join(format!("bcode-oneshot-disk-{}", std::process::id()));
    if disk_only && args.iterations > 0 {
        Discovery::new(options.clone())
            .with_disk_cache(DiskCache::new(&disk_dir))
            .build(&roots);
    }
    if args.iterations > 0 {
        let run = |step: &str| args.only.as_deref().is_none_or(|only| only == step);
        for round in 0..args.warmup + args.iterations {
            let timed = round >= args.warmup;
            if run("cold") {
                let t = Instant::now();
                let mut fresh = Discovery::new(options.clone());
                std::hint::black_box(fresh.build(&roots));
                if timed {
                    cold.push(ms(t));
                }
            }
            if run("rebuild") {
                let t = Instant::now();
                std::hint::black_box(discovery.build(&roots));
                if timed {
                    rebuild.push(ms(t));
                }
                rebuild_files_read = Some(discovery.last_stats().files_read);
            }
            if disk_only {
                let t = Instant::now();
                let mut fresh =
                    Discovery::new(options.clone()).with_disk_cache(DiskCache::new(&disk_dir));
                std::hint::black_box(fresh.build(&roots));
                if timed {
                    disk.push(ms(t));
                }
                assert!(
                    fresh.last_stats().from_disk_cache,
                    "the disk cache did not answer"
                );
            }
            if run("format") {
                let t = Instant::now();
                let text = format_catalog(registry.skills(), catalog_options, &templates)
                    .expect("the embedded catalog template renders")
                    .text;
                if timed {
                    format.push(ms(t));
                }
                assert_eq!(
                    text, catalog.text,
                    "round {round}: catalog differs from the first one"
                );
            }
        }
    }

    let _ = std::fs::remove_dir_all(&disk_dir);
    let summary = BuildSummary::of(&registry);
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let opt = |x: Option<f64>| x.map_or_else(|| "null".to_owned(), |x| r3(x).to_string());
    let timed = |v: &mut Vec<f64>| (!v.is_empty()).then(|| median(v));
    let mb = |kib: Option<u64>| opt(kib.map(|k| k as f64 / 1024.0));
    println!(
        "{{\"skills\":{},\"diagnostics\":{},\"cold_load_ms\":{},\"cold_format_ms\":{},\
         \"catalog_bytes\":{},\"catalog_skills\":{},\"diagnostics_by_severity\":{},\
         \"diagnostics_by_code\":{},\"cold_files_read\":{},\"load_ms_median\":{},\
         \"rebuild_ms_median\":{},\"format_ms_median\":{},\"disk_ms_median\":{},\"rebuild_files_read\":{},\
         \"iterations\":{},\"warmup\":{},\"max_rss_mb_after_cold\":{},\"max_rss_mb\":{},\
         \"process_ms\":{}}}",
        summary.skills,
        summary.diagnostics,
        r3(cold_load_ms),
        r3(cold_format_ms),
        catalog.text.len(),
        catalog.listed,
        json_counts(&summary.by_severity),
        json_counts(&summary.by_code),
        cold_stats.files_read,
        opt(timed(&mut cold)),
        opt(timed(&mut rebuild)),
        opt(timed(&mut format)),
        opt(timed(&mut disk)),
        rebuild_files_read.map_or_else(|| "null".to_owned(), |n| n.to_string()),
        args.iterations,
        args.warmup,
        mb(rss_after_cold_kib),
        mb(peak_rss_kib()),
        r3(ms(process_start)),
    );
}
