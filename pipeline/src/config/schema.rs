//! The JSON Schema of [`BcodeConfig`] and the key tree derived from it, which
//! validation, value coercion, unknown-key suggestions and `config explain`
//! all share, so that the set of known keys is defined once: by the types.
//!
//! The key tree is derived from the schema by a test and checked in as
//! static data (`key_tree.rs`), so a process does not build the schema to
//! learn its keys: generating and walking it took 1.15 M of the 5.93 M
//! instructions of a small repository's `render` (callgrind). After changing
//! a config type, regenerate both the checked-in schema and the key tree with
//! `BCODE_UPDATE_SCHEMA=1 cargo test -p bcode-prompt-pipeline`.

use serde_json::Value as Json;

use super::model::BcodeConfig;

/// The JSON Schema (draft 2020-12) of the whole configuration, generated from
/// the config types: descriptions come from their doc comments and defaults
/// from their `Default` implementations.
pub fn json_schema() -> Json {
    schemars::schema_for!(BcodeConfig).to_value()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fmt::Write as _;

    use serde_json::Map;

    use super::*;
    use crate::config::key_tree::{KEY_TREE, LEAF_KEYS};
    use crate::config::shape::{LeafKind, Shape};

    #[test]
    fn the_checked_in_key_tree_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config/key_tree.rs");
        let expected = key_tree_source(&json_schema());
        // The usual update-snapshot switch, as for the checked-in schema.
        if std::env::var_os("BCODE_UPDATE_SCHEMA").is_some_and(|v| v == "1") {
            std::fs::write(&path, &expected).unwrap();
        }
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            actual == expected,
            "{} is stale; regenerate it with BCODE_UPDATE_SCHEMA=1 cargo test -p bcode-prompt-pipeline",
            path.display()
        );
    }

    const HEADER: &str = "\
//! The key tree of the config: every key of `BcodeConfig` and what it may
//! hold. Generated from `json_schema()` by the test
//! `schema::tests::the_checked_in_key_tree_is_current`; do not edit. After
//! changing a config type: `BCODE_UPDATE_SCHEMA=1 cargo test -p bcode-prompt-pipeline`.

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
        let node =
            resolve(node, defs).unwrap_or_else(|| panic!("{key}: a dangling or looping $ref"));
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
            "string" => "LeafKind::Str",
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
    fn shape_knows_enums_limits_and_arrays() {
        let path = |key: &str| key.split('.').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            KEY_TREE.find(&path("skills.prompt.catalog")),
            Some(&Shape::Leaf {
                kind: LeafKind::Enum(&["off", "names_only", "summary"]),
                nullable: false
            })
        );
        assert_eq!(
            KEY_TREE.find(&path("skills.prompt.max_bytes")),
            Some(&Shape::Leaf {
                kind: LeafKind::UnsignedInt,
                nullable: true
            })
        );
        assert_eq!(
            KEY_TREE.find(&path("skills.sources.paths")),
            Some(&Shape::Leaf {
                kind: LeafKind::StrArray,
                nullable: false
            })
        );
        assert_eq!(
            KEY_TREE.find(&path("system_prompt.templates_dir")),
            Some(&Shape::Leaf {
                kind: LeafKind::Str,
                nullable: true
            })
        );
        assert_eq!(KEY_TREE.find(&path("skills.no_such_key")), None);
        assert_eq!(KEY_TREE.find(&path("skills.enabled.deeper")), None);
    }

    #[test]
    fn the_tree_holds_every_key_of_the_defaults() {
        let defaults = toml::Value::try_from(super::BcodeConfig::default()).unwrap();
        let mut written = Vec::new();
        fn leaves(value: &toml::Value, prefix: &str, out: &mut Vec<String>) {
            match value {
                toml::Value::Table(table) => {
                    for (name, child) in table {
                        let key = if prefix.is_empty() {
                            name.clone()
                        } else {
                            format!("{prefix}.{name}")
                        };
                        leaves(child, &key, out);
                    }
                }
                _ => out.push(prefix.to_owned()),
            }
        }
        leaves(&defaults, "", &mut written);
        for key in &written {
            assert!(
                LEAF_KEYS.contains(&key.as_str()),
                "{key} is a default the key tree does not know"
            );
        }
        assert!(LEAF_KEYS.len() > 50, "only {} keys", LEAF_KEYS.len());
    }

    #[test]
    fn the_leaf_keys_are_the_leaves_of_the_tree() {
        fn collect(shape: &Shape, prefix: &str, out: &mut Vec<String>) {
            match shape {
                Shape::Leaf { .. } => out.push(prefix.to_owned()),
                Shape::Table(keys) => {
                    for (name, child) in *keys {
                        let key = if prefix.is_empty() {
                            (*name).to_owned()
                        } else {
                            format!("{prefix}.{name}")
                        };
                        collect(child, &key, out);
                    }
                }
            }
        }
        let mut leaves = Vec::new();
        collect(&KEY_TREE, "", &mut leaves);
        leaves.sort();
        assert_eq!(leaves, LEAF_KEYS);
    }

    #[test]
    fn every_table_is_sorted_for_the_binary_search() {
        fn check(shape: &Shape, at: &str) {
            if let Shape::Table(keys) = shape {
                assert!(
                    keys.windows(2).all(|w| w[0].0 < w[1].0),
                    "{at} is not sorted"
                );
                for (name, child) in *keys {
                    check(child, name);
                }
            }
        }
        check(&KEY_TREE, "the root");
    }
}
