//! Every fuzz target's check over every seed, then over a bounded,
//! deterministic mutation run of those seeds: the fuzz targets cannot run
//! on stable Rust, so this is what keeps their properties compiled and
//! true in `cargo test --workspace`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use bcode_fuzz_checks::mutate::mutants;
use bcode_fuzz_checks::seeds::{Seed, generated, seeds};
use bcode_fuzz_checks::{TARGETS, Target};

/// Mutated inputs per target: a few seconds each in a debug build.
const MUTANTS: usize = 2_000;

/// Fewer for `config`: each input is written to files and loaded four times.
const CONFIG_MUTANTS: usize = 1_000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn target(name: &str) -> Target {
    *TARGETS.iter().find(|t| t.name == name).unwrap()
}

/// Runs `target`'s check on `input`, naming `what` if it fails.
fn run(target: Target, what: &str, input: &[u8]) {
    if let Err(cause) = catch_unwind(AssertUnwindSafe(|| (target.check)(input))) {
        let message = cause
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| cause.downcast_ref::<&str>().copied())
            .unwrap_or("(no message)");
        panic!(
            "target {}: {what} failed its check: {message}\ninput: {:?}",
            target.name,
            String::from_utf8_lossy(input)
        );
    }
}

fn replay_seeds(name: &str) -> Vec<Seed> {
    let target = target(name);
    let seeds = seeds(&root(), name);
    let committed = root().join("fuzz/seeds").join(name);
    assert!(
        seeds.iter().any(|s| s.path.starts_with(&committed)),
        "no committed seed in {}",
        committed.display()
    );
    for seed in seeds.iter().chain(&generated(name)) {
        run(target, &seed.path.display().to_string(), &seed.bytes);
    }
    seeds
}

/// Replays the seeds (generated ones too), then `MUTANTS` mutants of them
/// (of the read ones) (seeded by the
/// target's position, so each target sees its own run).
fn replay(name: &str) {
    let seeds = replay_seeds(name);
    let bytes: Vec<Vec<u8>> = seeds.into_iter().map(|s| s.bytes).collect();
    let position = TARGETS.iter().position(|t| t.name == name).unwrap();
    let target = target(name);
    let count = if name == "config" {
        CONFIG_MUTANTS
    } else {
        MUTANTS
    };
    for (i, input) in mutants(&bytes, count, 0x5eed + position as u64)
        .iter()
        .enumerate()
    {
        run(target, &format!("mutant {i}"), input);
    }
}

#[test]
fn front_matter_yaml() {
    replay("front_matter_yaml");
}

#[test]
fn front_matter_toml() {
    replay("front_matter_toml");
}

/// The generated flood is over the budget, and `seed.sh` writes the same
/// bytes (its awk line is held to [`toml_flood`] here).
#[test]
fn the_toml_flood_seed_is_over_the_budget_and_matches_seed_sh() {
    use bcode_fuzz_checks::seeds::toml_flood;
    let flood = toml_flood(25_000);
    assert!(bcode_skill::fuzzing::toml_over_budget(&flood));
    assert!(flood.len() < 256 * 1024, "{}", flood.len());
    let script = std::fs::read_to_string(root().join("fuzz/seed.sh")).unwrap();
    assert!(
        script.contains(
            r#"awk 'BEGIN { print "description = \"d\""; for (i = 0; i < 25000; i++) printf "k%x=1\n", i }'"#
        ),
        "seed.sh no longer writes the flood seed as toml_flood does"
    );
}

#[test]
fn document() {
    replay("document");
}

#[test]
fn config() {
    replay("config");
}

#[test]
fn yaml_differential() {
    replay("yaml_differential");
}

/// Every target has a fuzz target file and a test above; a new one needs
/// both.
#[test]
fn every_target_has_a_fuzz_target_file() {
    for target in TARGETS {
        let file = root()
            .join("fuzz/fuzz_targets")
            .join(format!("{}.rs", target.name));
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains(&format!("{}::check", target.name)),
            "{}",
            file.display()
        );
    }
}
