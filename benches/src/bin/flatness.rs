//! Issue 14's "nothing quadratic: time per skill flat within 25% at 1k,
//! 10k and 60k skills", measured in rounds: each round times a cold build,
//! an unchanged rebuild and a catalog format of every given root one after
//! the other, so a VM whose speed drifts over a run (±25% between minutes on
//! this one, as large as the target) slows every size alike. Prints one
//! JSON line on stdout.
//!
//! ```text
//! flatness [--rounds N] ROOT...
//! ```
//!
//! N rounds (default 15) follow one untimed round. Each root is one
//! configured skill root (e.g. `flat1000/primary`); the per-skill figures
//! are medians over the rounds. Two spreads (highest per-skill time over the
//! lowest) are given: of those medians, the estimate of a real difference
//! between sizes; and the median of the per-round spreads with their range,
//! biased upwards (the highest of three noisy values over the lowest is
//! above 1 even when nothing differs). Memory per skill needs a process per
//! size (peak RSS): `skills_oneshot` gives it.
//!
//! Read its rebuild and format figures at 1,000 skills with care: each is a
//! sub-millisecond step that starts after the other sizes ran, with cold
//! caches, and reads 20-30% high for that reason (run alone, both are flat
//! or lower at 1,000; see
//! `benches/notes/2026-12-01-1913-issue-14-flatness-paired.md`). Issue
//! 14's figure is of whole processes, paired by round: `scripts/scale.py`.

// A measuring tool: a bad argument ends the run with a message, which is
// what `expect`/`panic` give.
#![allow(clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use bcode_benches::{median, roots_for, rounds_value};
use bcode_prompt_config::{SkillsConfig, SkillsPromptConfig};
use bcode_skill::{CatalogOptions, Discovery, DiscoveryOptions, Templates, format_catalog};

/// The steps timed for every root, in the order each round runs them.
const STEPS: [&str; 3] = ["cold", "rebuild", "format"];

fn main() {
    let mut rounds = 15;
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => {
                rounds = rounds_value(args.next()).expect("--rounds takes a positive number");
            }
            _ if arg.starts_with('-') => panic!("unknown option {arg}"),
            _ => paths.push(PathBuf::from(arg)),
        }
    }
    assert!(
        paths.len() >= 2,
        "usage: flatness [--rounds N] ROOT ROOT..."
    );

    let options = DiscoveryOptions::from_config(&SkillsConfig::default());
    let prompt = SkillsPromptConfig::default();
    let catalog_options = CatalogOptions {
        prompt: &prompt,
        user_skills_enabled: true,
    };
    let templates = Templates::builtin();
    // Per root: its roots, the discovery kept for the unchanged rebuilds
    // (built once here) and its skill count.
    let mut sizes: Vec<_> = paths
        .iter()
        .map(|path| {
            let roots = roots_for(std::slice::from_ref(path));
            let mut kept = Discovery::new(options.clone());
            let skills = kept.build(&roots).skills().count();
            assert!(skills > 0, "{} holds no skill", path.display());
            (roots, kept, skills)
        })
        .collect();

    // per_skill[step][root]: µs per skill, one entry per timed round.
    let mut per_skill = vec![vec![Vec::new(); sizes.len()]; STEPS.len()];
    for round in 0..=rounds {
        for (at, (roots, kept, skills)) in sizes.iter_mut().enumerate() {
            let per = |start: Instant| start.elapsed().as_secs_f64() * 1e6 / *skills as f64;
            let t = Instant::now();
            black_box(Discovery::new(options.clone()).build(roots));
            let cold = per(t);
            let t = Instant::now();
            let registry = kept.build(roots);
            let rebuild = per(t);
            assert!(
                kept.last_stats().confirmed_by_stamps,
                "the rebuild of {} walked: the tree is changing or too fresh",
                roots[0].path.display()
            );
            let t = Instant::now();
            black_box(
                format_catalog(registry.skills(), catalog_options, &templates)
                    .expect("the embedded catalog template renders"),
            );
            let format = per(t);
            if round > 0 {
                for (step, value) in [cold, rebuild, format].into_iter().enumerate() {
                    per_skill[step][at].push(value);
                }
            }
        }
    }

    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let mut fields = vec![
        format!("\"rounds\":{rounds}"),
        format!(
            "\"skills\":[{}]",
            sizes
                .iter()
                .map(|(_, _, n)| n.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
    ];
    for (step, name) in STEPS.iter().enumerate() {
        let mut spreads: Vec<f64> = (0..rounds)
            .map(|round| {
                let values = per_skill[step].iter().map(|root| root[round]);
                let max = values.clone().fold(f64::MIN, f64::max);
                let min = values.fold(f64::MAX, f64::min);
                max / min
            })
            .collect();
        let medians: Vec<f64> = per_skill[step]
            .iter_mut()
            .map(|root| median(root))
            .collect();
        let of_medians = medians.iter().copied().fold(f64::MIN, f64::max)
            / medians.iter().copied().fold(f64::MAX, f64::min);
        let spread = median(&mut spreads);
        let medians: Vec<String> = medians.iter().map(|m| r3(*m).to_string()).collect();
        fields.push(format!("\"{name}_us_per_skill\":[{}]", medians.join(",")));
        fields.push(format!("\"{name}_spread_of_medians\":{}", r3(of_medians)));
        fields.push(format!(
            "\"{name}_spread\":{},\"{name}_spread_range\":[{},{}]",
            r3(spread),
            r3(spreads[0]),
            r3(spreads[spreads.len() - 1])
        ));
    }
    println!("{{{}}}", fields.join(","));
}
