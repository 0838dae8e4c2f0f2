//! What crates.io and a user of the published crates see (issue 42): every
//! workspace crate names the repository and its documentation; every
//! published one has the whole metadata, a README of its own whose snippet
//! a user copies (a version dependency, never `path =`), and path
//! dependencies that carry a version; the CLI is published; the license the
//! crates declare is at the root in full.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use toml::{Table, Value};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn manifest(path: &Path) -> Table {
    toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `key` of `[package]`, resolved through `key.workspace = true`.
fn field(package: &Table, workspace: &Table, key: &str) -> Option<Value> {
    match package.get(key) {
        Some(Value::Table(t)) if t.get("workspace") == Some(&Value::Boolean(true)) => {
            workspace.get(key).cloned()
        }
        other => other.cloned(),
    }
}

/// Each member's folder, `[package]` and its name.
fn members() -> Vec<(PathBuf, Table, String)> {
    let root_manifest = manifest(&root().join("Cargo.toml"));
    root_manifest["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let dir = root().join(m.as_str().unwrap());
            let package = manifest(&dir.join("Cargo.toml"))["package"]
                .as_table()
                .unwrap()
                .clone();
            let name = package["name"].as_str().unwrap().to_owned();
            (dir, package, name)
        })
        .collect()
}

#[test]
fn every_crate_has_the_metadata_crates_io_shows() {
    let root_manifest = manifest(&root().join("Cargo.toml"));
    let workspace = root_manifest["workspace"]["package"].as_table().unwrap();
    let mut published = Vec::new();
    let mut problems = Vec::new();
    for (dir, package, name) in members() {
        let get = |key: &str| field(&package, workspace, key);
        let text = |key: &str| get(key).and_then(|v| v.as_str().map(str::to_owned));
        for key in ["repository", "homepage", "documentation", "license"] {
            if text(key).is_none_or(|v| v.is_empty()) {
                problems.push(format!("{name}: no `{key}`"));
            }
        }
        if text("repository").as_deref() != Some("https://github.com/bcode-dev/bcode") {
            problems.push(format!("{name}: another repository URL"));
        }
        if get("publish") != Some(Value::Boolean(true)) {
            continue;
        }
        published.push(name.clone());
        for key in ["description", "keywords", "categories"] {
            if get(key).is_none() {
                problems.push(format!("{name}: no `{key}`"));
            }
        }
        // Its own README, not the workspace's manual.
        match text("readme") {
            Some(readme) if readme == "README.md" => {
                let readme = std::fs::read_to_string(dir.join(&readme)).unwrap_or_default();
                let install = if name == "bcode-prompt-cli" {
                    format!("cargo install --locked {name}")
                } else {
                    format!("{name} = \"0.1\"")
                };
                if !readme.contains(&install) {
                    problems.push(format!("{name}: the README does not show `{install}`"));
                }
                if readme.contains("path =") || readme.contains("../") {
                    problems.push(format!("{name}: the README points into a clone"));
                }
                if readme.lines().count() > 80 {
                    problems.push(format!("{name}: the README is not short"));
                }
            }
            other => problems.push(format!("{name}: readme is {other:?}, not its README.md")),
        }
    }
    assert_eq!(problems, Vec::<String>::new());
    assert_eq!(
        published,
        [
            "bcode-text",
            "bcode-fs",
            "bcode-skill-models",
            "bcode-prompt-config",
            "bcode-templates",
            "bcode-skill",
            "bcode-skill-mcp",
            "bcode-prompt-pipeline",
            "bcode-prompt-sections",
            "bcode-prompt",
            "bcode-prompt-cli",
        ]
    );
}

#[test]
fn path_dependencies_carry_versions() {
    let root_manifest = manifest(&root().join("Cargo.toml"));
    let deps = root_manifest["workspace"]["dependencies"]
        .as_table()
        .unwrap();
    let unversioned: Vec<&String> = deps
        .iter()
        .filter(|(_, d)| d.get("path").is_some() && d.get("version").is_none())
        .map(|(name, _)| name)
        .collect();
    assert_eq!(unversioned, Vec::<&String>::new());
    // Members name one another through the workspace table only.
    let mut direct = Vec::new();
    for (dir, _, name) in members() {
        let whole = manifest(&dir.join("Cargo.toml"));
        for section in ["dependencies", "build-dependencies"] {
            for (dep, spec) in whole
                .get(section)
                .and_then(Value::as_table)
                .into_iter()
                .flatten()
            {
                if spec.get("path").is_some() && spec.get("version").is_none() {
                    direct.push(format!("{name}: {dep}"));
                }
            }
        }
    }
    assert_eq!(direct, Vec::<String>::new());
}

#[test]
fn the_license_the_crates_declare_is_at_the_root() {
    let license = std::fs::read_to_string(root().join("LICENSE")).unwrap();
    let head: Vec<&str> = license
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    assert_eq!(
        head,
        [
            "Apache License",
            "Version 2.0, January 2004",
            "http://www.apache.org/licenses/"
        ]
    );
    // The full text: the terms through to the appendix.
    assert!(license.contains("END OF TERMS AND CONDITIONS"));
    assert!(license.contains("APPENDIX: How to apply the Apache License to your work."));
    let workspace = manifest(&root().join("Cargo.toml"));
    assert_eq!(
        workspace["workspace"]["package"]["license"].as_str(),
        Some("Apache-2.0")
    );
}

/// Every place a member names `bcode-test-support`, as `member: table`
/// (`dependencies`, `dev-dependencies`, `target.'cfg(..)'.dev-dependencies`,
/// ...) with its spec.
fn test_support_uses() -> Vec<(String, String, Value)> {
    let mut uses = Vec::new();
    for (dir, _, name) in members() {
        let whole = manifest(&dir.join("Cargo.toml"));
        let mut tables: Vec<(String, &Table)> = Vec::new();
        for (key, value) in &whole {
            if key == "target" {
                for (cfg, inner) in value.as_table().into_iter().flatten() {
                    for (key, value) in inner.as_table().into_iter().flatten() {
                        if let Some(table) = value.as_table() {
                            tables.push((format!("target.'{cfg}'.{key}"), table));
                        }
                    }
                }
            } else if key.ends_with("dependencies")
                && let Some(table) = value.as_table()
            {
                tables.push((key.clone(), table));
            }
        }
        for (table, deps) in tables {
            if let Some(spec) = deps.get("bcode-test-support") {
                uses.push((name.clone(), table, spec.clone()));
            }
        }
    }
    uses
}

/// The tests' shared helpers are never shipped: `bcode-test-support` is
/// not published, and every crate names it as a dev-dependency by `path`
/// alone, which `cargo publish` strips from the published manifest (with a
/// `version` it would have to be on crates.io).
#[test]
fn the_test_support_crate_is_only_a_path_dev_dependency() {
    let (_, package, _) = members()
        .into_iter()
        .find(|(_, _, name)| name == "bcode-test-support")
        .unwrap();
    assert_eq!(package.get("publish"), Some(&Value::Boolean(false)));
    let root_manifest = manifest(&root().join("Cargo.toml"));
    assert_eq!(
        root_manifest["workspace"]["dependencies"].get("bcode-test-support"),
        None,
        "named through the workspace table it would need a version"
    );
    let uses = test_support_uses();
    let wrong: Vec<String> = uses
        .iter()
        .filter(|(_, table, spec)| {
            !table.ends_with("dev-dependencies")
                || spec.get("path").is_none()
                || spec.get("version").is_some()
        })
        .map(|(name, table, spec)| format!("{name}: [{table}] {spec}"))
        .collect();
    assert_eq!(wrong, Vec::<String>::new());
    // The scan sees the uses there are (it would pass finding none).
    let cli = uses.iter().find(|(name, _, _)| name == "bcode-prompt-cli");
    assert_eq!(
        cli.map(|(_, table, _)| table.as_str()),
        Some("dev-dependencies")
    );
}
