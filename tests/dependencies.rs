//! The dependency policy, checked offline on every test run (issue 41
//! item 5): what `cargo deny check licenses bans sources` would hold,
//! without building cargo-deny (minutes of CI on two cores) or fetching an
//! advisory database. It reads `cargo metadata` for this platform:
//!
//! - **sources**: every package is a workspace member or comes from
//!   crates.io (no git or other-registry dependency can slip in);
//! - **licences**: every dependency's SPDX expression can be satisfied by
//!   licences that sit with the crates' Apache-2.0 ([`ALLOWED`]), or is
//!   the one licence [`ALLOWED_FOR`] names for that crate alone;
//! - **bans**: nothing `../shared/DEPENDENCIES.md` warns against is in the
//!   tree ([`BANNED`]: YAML crates without alias budgets, OpenSSL and
//!   libssh2 behind git2 or an HTTP client), and no crate turns on a
//!   feature named there as a trap ([`BANNED_FEATURES`]).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Licences a dependency may be taken under (SPDX ids; `WITH` exceptions in
/// [`ALLOWED_EXCEPTIONS`]): permissive ones that an Apache-2.0 crate can ship.
const ALLOWED: [&str; 13] = [
    "Apache-2.0",
    "MIT",
    "MIT-0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "ISC",
    "Zlib",
    "0BSD",
    "CC0-1.0",
    "Unlicense",
    "Unicode-3.0",
    "Unicode-DFS-2016",
    "BSL-1.0",
];

/// Licence exceptions that only widen what a licence allows.
const ALLOWED_EXCEPTIONS: [&str; 1] = ["LLVM-exception"];

/// Licences allowed for one crate alone, as (crate, its exact licence
/// expression, why), as cargo-deny's per-crate exceptions: a change of the
/// crate's licence fails the check again.
const ALLOWED_FOR: [(&str, &str, &str); 1] = [(
    "webpki-roots",
    "CDLA-Permissive-2.0",
    "the MCP consumer's `https` roots (Mozilla's CA list, compiled in): CDLA-Permissive-2.0 is \
     a permissive licence for data that asks only that its text go with the data, and the data \
     here is public certificates",
)];

/// Crates that must not be in the tree, each with why.
const BANNED: [(&str, &str); 10] = [
    ("serde_yaml", "deprecated"),
    ("serde_yml", "RUSTSEC-2025-0067"),
    ("noyalib", "RUSTSEC-2025-0068"),
    ("yaml-rust2", "no alias limit: a bomb runs out of memory"),
    ("serde_yaml_ng", "expands quadratic aliases"),
    ("serde_norway", "expands quadratic aliases"),
    (
        "openssl-sys",
        "TLS is rustls or nothing; git2 builds without https",
    ),
    ("openssl", "TLS is rustls or nothing"),
    ("native-tls", "TLS is rustls or nothing"),
    ("libssh2-sys", "git2 builds without ssh"),
];

/// Features that must be off, each as (crate, feature, why).
const BANNED_FEATURES: [(&str, &str, &str); 3] = [
    ("toml", "unbounded", "lifts toml's recursion limit"),
    ("git2", "https", "pulls OpenSSL"),
    ("git2", "ssh", "pulls libssh2"),
];

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = Command::new(rustc).arg("-vV").output().unwrap();
    let host = String::from_utf8(version.stdout)
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("host: ").map(str::to_owned))
        .unwrap();
    let output = Command::new(cargo)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Every package that is not a workspace member: (name version, package).
fn dependencies(meta: &Value) -> BTreeMap<String, &Value> {
    let members: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|id| id.as_str().unwrap())
        .collect();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !members.contains(p["id"].as_str().unwrap()))
        .map(|p| {
            (
                format!(
                    "{} {}",
                    p["name"].as_str().unwrap(),
                    p["version"].as_str().unwrap()
                ),
                p,
            )
        })
        .collect()
}

#[test]
fn every_dependency_comes_from_crates_io() {
    let meta = metadata();
    let elsewhere: Vec<String> = dependencies(&meta)
        .into_iter()
        .filter(|(_, p)| {
            p["source"].as_str() != Some("registry+https://github.com/rust-lang/crates.io-index")
        })
        .map(|(name, p)| format!("{name}: {}", p["source"]))
        .collect();
    assert_eq!(elsewhere, Vec::<String>::new());
}

#[test]
fn every_dependency_has_a_licence_the_crates_can_ship() {
    let meta = metadata();
    let refused: Vec<String> = dependencies(&meta)
        .into_iter()
        .filter(|(_, p)| p["license"].as_str().map(satisfiable) != Some(Ok(true)))
        .filter(|(_, p)| {
            !ALLOWED_FOR.iter().any(|(krate, licence, _)| {
                p["name"].as_str() == Some(krate) && p["license"].as_str() == Some(licence)
            })
        })
        .map(|(name, p)| format!("{name}: {}", p["license"]))
        .collect();
    assert_eq!(refused, Vec::<String>::new(), "allowed: {ALLOWED:?}");
}

#[test]
fn no_banned_crate_or_feature_is_in_the_tree() {
    let meta = metadata();
    let mut found = Vec::new();
    for (name, package) in dependencies(&meta) {
        let crate_name = package["name"].as_str().unwrap();
        if let Some((_, why)) = BANNED.iter().find(|(banned, _)| *banned == crate_name) {
            found.push(format!("{name}: {why}"));
        }
    }
    for node in meta["resolve"]["nodes"].as_array().unwrap() {
        let id = node["id"].as_str().unwrap();
        for feature in node["features"].as_array().unwrap() {
            let feature = feature.as_str().unwrap();
            for (krate, banned, why) in BANNED_FEATURES {
                let named =
                    id.contains(&format!("#{krate}@")) || id.contains(&format!("/{krate}#"));
                if named && feature == banned {
                    found.push(format!("{id} feature {feature}: {why}"));
                }
            }
        }
    }
    assert_eq!(found, Vec::<String>::new());
}

/// `deny.toml`, which `.ci/run` hands to cargo-deny, holds the same
/// policy as this file: the same licences, per-crate exceptions and bans.
#[test]
fn cargo_deny_holds_the_same_policy() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("deny.toml")).expect("deny.toml");
    let deny: toml::Value = toml::from_str(&text).expect("deny.toml parses");
    let strings = |value: Option<&toml::Value>, key: &str| -> BTreeSet<String> {
        value
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|item| match item {
                toml::Value::String(s) => Some(s.clone()),
                table => table.get(key)?.as_str().map(str::to_owned),
            })
            .collect()
    };
    let licenses = deny.get("licenses");
    let mut allowed: BTreeSet<String> = ALLOWED.iter().map(|s| (*s).to_owned()).collect();
    allowed.extend(
        ALLOWED_EXCEPTIONS
            .iter()
            .map(|exception| format!("Apache-2.0 WITH {exception}")),
    );
    assert_eq!(strings(licenses.and_then(|l| l.get("allow")), ""), allowed);
    let exceptions: BTreeSet<(String, String)> = licenses
        .and_then(|l| l.get("exceptions"))
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let only = strings(e.get("allow"), "")
                .into_iter()
                .collect::<Vec<_>>()
                .join(" OR ");
            Some((e.get("crate")?.as_str()?.to_owned(), only))
        })
        .collect();
    let ours: BTreeSet<(String, String)> = ALLOWED_FOR
        .iter()
        .map(|(krate, licence, _)| ((*krate).to_owned(), (*licence).to_owned()))
        .collect();
    assert_eq!(exceptions, ours);
    let banned: BTreeSet<String> = BANNED.iter().map(|(name, _)| (*name).to_owned()).collect();
    assert_eq!(
        strings(deny.get("bans").and_then(|b| b.get("deny")), "crate"),
        banned
    );
    let sources = deny.get("sources");
    for key in ["unknown-registry", "unknown-git"] {
        assert_eq!(
            sources
                .and_then(|s| s.get(key))
                .and_then(toml::Value::as_str),
            Some("deny"),
            "{key}"
        );
    }
}

/// The policy's own parser: old `/` lists, `WITH`, brackets, and what an
/// expression it cannot read does.
#[test]
fn licence_expressions_are_read_as_spdx_reads_them() {
    assert_eq!(satisfiable("MIT OR Apache-2.0"), Ok(true));
    assert_eq!(satisfiable("MIT/Apache-2.0"), Ok(true));
    assert_eq!(satisfiable("Apache-2.0 / MIT"), Ok(true));
    assert_eq!(satisfiable("(MIT OR Apache-2.0) AND Unicode-3.0"), Ok(true));
    assert_eq!(satisfiable("Apache-2.0 WITH LLVM-exception"), Ok(true));
    assert_eq!(satisfiable("GPL-3.0-only"), Ok(false));
    assert_eq!(satisfiable("GPL-3.0-only OR MIT"), Ok(true));
    assert_eq!(satisfiable("MIT AND GPL-3.0-only"), Ok(false));
    assert_eq!(
        satisfiable("GPL-2.0 WITH Classpath-exception-2.0"),
        Ok(false)
    );
    assert_eq!(satisfiable("MIT WITH Some-exception"), Ok(false));
    assert_eq!(satisfiable("(MIT OR"), Err("expected a licence".to_owned()));
    assert_eq!(
        satisfiable("MIT)"),
        Err("unexpected ) at the end".to_owned())
    );
}

/// Whether some choice among the `OR`s of `expr` leaves only allowed
/// licences.
fn satisfiable(expr: &str) -> Result<bool, String> {
    let spaced = expr
        .replace('(', " ( ")
        .replace(')', " ) ")
        .replace('/', " OR ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let mut at = 0;
    let value = or_expr(&tokens, &mut at)?;
    match tokens.get(at) {
        None => Ok(value),
        Some(rest) => Err(format!("unexpected {rest} at the end")),
    }
}

fn or_expr(tokens: &[&str], at: &mut usize) -> Result<bool, String> {
    let mut value = and_expr(tokens, at)?;
    while tokens.get(*at) == Some(&"OR") {
        *at += 1;
        value |= and_expr(tokens, at)?;
    }
    Ok(value)
}

fn and_expr(tokens: &[&str], at: &mut usize) -> Result<bool, String> {
    let mut value = with_expr(tokens, at)?;
    while tokens.get(*at) == Some(&"AND") {
        *at += 1;
        value &= with_expr(tokens, at)?;
    }
    Ok(value)
}

fn with_expr(tokens: &[&str], at: &mut usize) -> Result<bool, String> {
    let value = match tokens.get(*at) {
        Some(&"(") => {
            *at += 1;
            let inner = or_expr(tokens, at)?;
            if tokens.get(*at) != Some(&")") {
                return Err("expected )".to_owned());
            }
            *at += 1;
            inner
        }
        Some(id) if !["AND", "OR", "WITH", ")"].contains(id) => {
            *at += 1;
            ALLOWED.contains(&id.trim_end_matches('+'))
        }
        _ => return Err("expected a licence".to_owned()),
    };
    if tokens.get(*at) == Some(&"WITH") {
        let exception = tokens.get(*at + 1).ok_or("expected an exception")?;
        *at += 2;
        return Ok(value && ALLOWED_EXCEPTIONS.contains(exception));
    }
    Ok(value)
}
