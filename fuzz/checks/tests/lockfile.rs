//! `fuzz/` is its own workspace with its own `Cargo.lock`, which nothing in
//! `cargo test --workspace` resolves: when a library crate gains a
//! dependency, that lock goes stale silently and `cargo fuzz` re-resolves
//! on the next run, possibly to other versions than the ones tested here.
//! This keeps it current: the fuzz lock holds no version the workspace's
//! lock does not, and every dependency a workspace crate in it always
//! builds with.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A lock's packages: name → versions, and the names of the packages
/// built from a path (no `source`).
struct Lock {
    versions: BTreeMap<String, BTreeSet<String>>,
    local: BTreeSet<String>,
}

fn read_lock(path: &Path) -> Lock {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: toml::Table = text.parse().unwrap();
    let mut lock = Lock {
        versions: BTreeMap::new(),
        local: BTreeSet::new(),
    };
    for package in value["package"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap().to_owned();
        let version = package["version"].as_str().unwrap().to_owned();
        if package.get("source").is_none() {
            lock.local.insert(name.clone());
        }
        lock.versions.entry(name).or_default().insert(version);
    }
    lock
}

/// The workspace members' manifests: package name → the names of the
/// packages it always depends on to build (`[dependencies]`,
/// `[build-dependencies]` and their `[target.*]` forms, not optional ones;
/// a renamed dependency by its `package`).
fn build_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let workspace: toml::Table = text.parse().unwrap();
    let mut out = BTreeMap::new();
    for member in workspace["workspace"]["members"].as_array().unwrap() {
        let path = root().join(member.as_str().unwrap()).join("Cargo.toml");
        let manifest: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        let mut tables = vec![&manifest];
        if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
            tables.extend(targets.values().filter_map(toml::Value::as_table));
        }
        let mut names = BTreeSet::new();
        for table in tables {
            for kind in ["dependencies", "build-dependencies"] {
                let Some(deps) = table.get(kind).and_then(toml::Value::as_table) else {
                    continue;
                };
                for (key, spec) in deps {
                    if spec.get("optional").and_then(toml::Value::as_bool) == Some(true) {
                        continue;
                    }
                    let renamed = spec.get("package").and_then(toml::Value::as_str);
                    names.insert(renamed.unwrap_or(key).to_owned());
                }
            }
        }
        let name = manifest["package"]["name"].as_str().unwrap().to_owned();
        out.insert(name, names);
    }
    out
}

#[test]
fn the_fuzz_lock_resolves_what_the_workspace_lock_does() {
    let workspace = read_lock(&root().join("Cargo.lock"));
    let fuzz = read_lock(&root().join("fuzz/Cargo.lock"));
    let manifests = build_dependencies();

    let mut problems = Vec::new();
    // Every package the fuzz lock holds is at a version the workspace holds.
    for (name, versions) in &fuzz.versions {
        let Some(ours) = workspace.versions.get(name) else {
            continue; // libfuzzer-sys and what only it needs
        };
        for version in versions.difference(ours) {
            problems.push(format!("{name} {version} (the workspace has {ours:?})"));
        }
    }
    // Every workspace crate in the fuzz build has each dependency it always
    // builds with there: the case a new dependency of a library crate hits.
    let mut checked = 0;
    for name in &fuzz.local {
        let Some(dependencies) = manifests.get(name) else {
            continue; // bcode-fuzz itself
        };
        checked += 1;
        for dependency in dependencies {
            if !fuzz.versions.contains_key(dependency) {
                problems.push(format!("{dependency} (a dependency of {name}) is missing"));
            }
        }
    }
    assert!(
        checked >= 4,
        "only {checked} workspace crates in fuzz/Cargo.lock"
    );
    assert!(
        problems.is_empty(),
        "fuzz/Cargo.lock is stale: {problems:?}; run `cargo metadata --format-version 1 \
         --manifest-path fuzz/Cargo.toml > /dev/null` and commit fuzz/Cargo.lock"
    );
}
