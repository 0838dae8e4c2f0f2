//! The JSON Schema of [`BcodeConfig`] and the key tree derived from it, which
//! validation, value coercion, unknown-key suggestions and `config explain`
//! all share, so that the set of known keys is defined once: by the types.
//!
//! The key tree is derived from the schema by a test
//! (`packages/config/tests/schema.rs`) and checked in as static data
//! (`key_tree.rs`), so a process does not build the schema to
//! learn its keys: generating and walking it took 1.15 M of the 5.93 M
//! instructions of a small repository's `render` (callgrind). After changing
//! a config type, regenerate both the checked-in schema and the key tree with
//! `BCODE_UPDATE_SCHEMA=1 cargo test -p bcode-prompt-config`.

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
    use super::*;
    use crate::key_tree::{KEY_TREE, LEAF_KEYS};
    use crate::shape::{LeafKind, Shape};

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
        let defaults = toml::Value::try_from(BcodeConfig::default()).unwrap();
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
