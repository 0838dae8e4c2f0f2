//! Keeps `config-schema/` in step with the config types: the checked-in JSON
//! Schema must equal `json_schema()`, the key tree the validator reads
//! (`src/key_tree.rs`) must be the one derived from it, and the
//! documented example must set every key and load without warnings.
//!
//! After changing a config type, regenerate the schema with
//! `BCODE_UPDATE_SCHEMA=1 cargo test -p bcode-prompt-config`
//! and review the diff; the example is written by hand, so add new keys to
//! `config-schema/bcode.example.toml` with a comment.

// Helpers outside `#[test]` functions are test code too; clippy's
// allow-*-in-tests settings only cover `#[test]` items and `cfg(test)`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use bcode_prompt_config::{ConfigInputs, Origin, json_schema, load};
use serde_json::{Map, Value as Json};

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../config-schema")
}

/// Fails unless the file at `path` holds `expected`; with
/// `BCODE_UPDATE_SCHEMA=1` writes it first.
fn check_current(path: &Path, expected: &str) {
    // Reading this one switch is the usual update-snapshot pattern; the
    // config under test never sees the process environment.
    if std::env::var_os("BCODE_UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(path, expected).unwrap();
    }
    let actual = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        actual == expected,
        "{} is stale; regenerate it with BCODE_UPDATE_SCHEMA=1 cargo test -p bcode-prompt-config",
        path.display()
    );
}

#[test]
fn checked_in_schema_is_current() {
    let expected = format!(
        "{}\n",
        serde_json::to_string_pretty(&json_schema()).unwrap()
    );
    check_current(&schema_dir().join("bcode.schema.json"), &expected);
}

#[test]
fn checked_in_key_tree_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/key_tree.rs");
    check_current(&path, &key_tree_source(&json_schema()));
}

const HEADER: &str = "\
//! The key tree of the config: every key of `BcodeConfig` and what it may
//! hold. Generated from `json_schema()` by the test
//! `checked_in_key_tree_is_current` in `packages/config/tests/schema.rs`; do not edit. After
//! changing a config type: `BCODE_UPDATE_SCHEMA=1 cargo test -p bcode-prompt-config`.

use super::shape::{LeafKind, Shape};

/// The key tree of `BcodeConfig`, tables sorted by key.
#[rustfmt::skip]
pub(crate) static KEY_TREE: Shape = ";

/// The Rust source of `key_tree.rs` for `schema`.
fn key_tree_source(schema: &Json) -> String {
    let empty = Map::new();
    let defs = schema
        .get("$defs")
        .and_then(Json::as_object)
        .unwrap_or(&empty);
    let mut out = HEADER.to_owned();
    let mut leaves = Vec::new();
    shape_source(schema, defs, "", 0, &mut out, &mut leaves);
    leaves.sort();
    out.push_str(";\n\n/// Every leaf key of [`KEY_TREE`] as a dotted path, sorted.\n");
    out.push_str("#[rustfmt::skip]\npub(crate) static LEAF_KEYS: &[&str] = &[\n");
    for key in leaves {
        let _ = writeln!(out, "    {key:?},");
    }
    out.push_str("];\n");
    out
}

/// Schemas nest a handful of levels; the bound only guards against a
/// self-referencing `$ref` ever appearing in the generated schema.
const MAX_DEPTH: usize = 32;

/// Appends the source of the shape of `node`, the schema of `key`
/// (`depth` is its nesting in the key tree, which sets the indentation),
/// and the leaf keys in it to `leaves`.
/// A construct the validator does not understand fails the test, naming
/// the key: `shape.rs` and this function must learn it first.
fn shape_source(
    node: &Json,
    defs: &Map<String, Json>,
    key: &str,
    depth: usize,
    out: &mut String,
    leaves: &mut Vec<String>,
) {
    let node = resolve(node, defs).unwrap_or_else(|| panic!("{key}: a dangling or looping $ref"));
    if let Some(props) = node.get("properties").and_then(Json::as_object) {
        let sorted: BTreeMap<&String, &Json> = props.iter().collect();
        let indent = "    ".repeat(depth + 1);
        out.push_str("Shape::Table(&[\n");
        for (name, child) in sorted {
            let _ = write!(out, "{indent}({name:?}, ");
            let child_key = if key.is_empty() {
                name.clone()
            } else {
                format!("{key}.{name}")
            };
            shape_source(child, defs, &child_key, depth + 1, out, leaves);
            out.push_str("),\n");
        }
        let _ = write!(out, "{}])", "    ".repeat(depth));
        return;
    }
    // An array of tables: one leaf key, whose entries have a table shape.
    if let Some(entry) = node
        .get("items")
        .and_then(|items| resolve(items, defs))
        .filter(|items| items.get("properties").is_some())
    {
        out.push_str("Shape::Leaf { kind: LeafKind::TableArray(&");
        shape_source(
            entry,
            defs,
            &format!("{key}[]"),
            depth,
            out,
            &mut Vec::new(),
        );
        out.push_str("), nullable: false }");
        leaves.push(key.to_owned());
        return;
    }
    let Some((kind, nullable)) = leaf_kind(node) else {
        panic!("{key}: a schema the key tree does not understand: {node}");
    };
    let _ = write!(out, "Shape::Leaf {{ kind: {kind}, nullable: {nullable} }}");
    leaves.push(key.to_owned());
}

/// `node` with `$ref`s followed, or `None` for a dangling or looping one.
fn resolve<'a>(mut node: &'a Json, defs: &'a Map<String, Json>) -> Option<&'a Json> {
    for _ in 0..MAX_DEPTH {
        let Some(target) = node.get("$ref").and_then(Json::as_str) else {
            return Some(node);
        };
        node = defs.get(target.trim_start_matches("#/$defs/"))?;
    }
    None
}

/// The source of a leaf's `LeafKind` and whether it is nullable, or
/// `None` for a construct the validator does not understand.
fn leaf_kind(node: &Json) -> Option<(String, bool)> {
    let strings = |values: &[Json]| -> Vec<String> {
        values
            .iter()
            .filter_map(Json::as_str)
            .map(|v| format!("{v:?}"))
            .collect()
    };
    if let Some(variants) = node.get("oneOf").and_then(Json::as_array) {
        let mut allowed = Vec::new();
        for variant in variants {
            if let Some(value) = variant.get("const").and_then(Json::as_str) {
                allowed.push(format!("{value:?}"));
            } else if let Some(values) = variant.get("enum").and_then(Json::as_array) {
                allowed.extend(strings(values));
            } else {
                return None;
            }
        }
        return Some((format!("LeafKind::Enum(&[{}])", allowed.join(", ")), false));
    }
    if let Some(values) = node.get("enum").and_then(Json::as_array) {
        return Some((
            format!("LeafKind::Enum(&[{}])", strings(values).join(", ")),
            false,
        ));
    }
    let (ty, nullable) = match node.get("type")? {
        Json::String(ty) => (ty.as_str(), false),
        Json::Array(types) => {
            let named: Vec<&str> = types.iter().filter_map(Json::as_str).collect();
            let ty = *named.iter().find(|ty| **ty != "null")?;
            (ty, named.contains(&"null"))
        }
        _ => return None,
    };
    let kind = match ty {
        "boolean" => "LeafKind::Bool",
        "integer" => {
            let minimum = node.get("minimum").and_then(Json::as_f64);
            if minimum.is_some_and(|min| min >= 0.0) {
                "LeafKind::UnsignedInt"
            } else {
                "LeafKind::Int"
            }
        }
        "number" => {
            let minimum = node.get("minimum").and_then(Json::as_f64);
            if minimum.is_some_and(|min| min >= 0.0) {
                "LeafKind::UnsignedNumber"
            } else {
                return None;
            }
        }
        "string" => "LeafKind::Str",
        "object" => {
            let values = node
                .get("additionalProperties")
                .and_then(|values| values.get("type"));
            if values.and_then(Json::as_str) == Some("string") {
                "LeafKind::StrMap"
            } else {
                return None;
            }
        }
        "array" => {
            let item = node.get("items").and_then(|items| items.get("type"));
            if item.and_then(Json::as_str) == Some("string") {
                "LeafKind::StrArray"
            } else {
                return None;
            }
        }
        _ => return None,
    };
    Some((kind.to_owned(), nullable))
}

#[test]
fn example_sets_every_key_and_loads_without_warnings() {
    let example = schema_dir().join("bcode.example.toml");
    let root = tempfile::tempdir().unwrap();
    let inputs = ConfigInputs {
        repo: root.path().to_path_buf(),
        cwd: root.path().to_path_buf(),
        env: BTreeMap::new(),
        config_files: vec![example.clone()],
        set: Vec::new(),
        host_sections: Vec::new(),
        trust_repo: false,
    };
    let loaded = match load(&inputs) {
        Ok(loaded) => loaded,
        Err(error) => panic!("the example does not load:\n{error}"),
    };
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings, Vec::<String>::new());
    // Every leaf of the schema is set by the example file, not by a default.
    let from_elsewhere: Vec<String> = loaded
        .explain()
        .into_iter()
        .filter(|line| {
            line.origin
                != Origin::ConfigFile {
                    path: example.clone(),
                }
        })
        .map(|line| format!("{} = {}  # {}", line.key, line.value, line.origin))
        .collect();
    assert_eq!(from_elsewhere, Vec::<String>::new());
}
