//! The JSON Schema of [`BcodeConfig`] and the key tree derived from it, which
//! validation, value coercion, unknown-key suggestions and `config explain`
//! all share, so that the set of known keys is defined once: by the types.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde_json::Value as Json;

use super::model::BcodeConfig;

/// The JSON Schema (draft 2020-12) of the whole configuration, generated from
/// the config types: descriptions come from their doc comments and defaults
/// from their `Default` implementations.
pub fn json_schema() -> Json {
    schemars::schema_for!(BcodeConfig).to_value()
}

/// What a config key may hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A table with known keys.
    Table(BTreeMap<String, Shape>),
    /// A value; `nullable` marks an `Option` (omitting the key leaves it unset).
    Leaf { kind: LeafKind, nullable: bool },
}

/// The type of a leaf value, as far as validation cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LeafKind {
    Bool,
    UnsignedInt,
    Int,
    Str,
    Enum(Vec<String>),
    StrArray,
    /// A schema construct this module does not understand; the typed
    /// extraction after merging still checks it, so nothing passes unchecked.
    Any,
}

/// The key tree of [`BcodeConfig`], computed once.
pub(crate) static SHAPE: LazyLock<Shape> = LazyLock::new(|| {
    let schema = json_schema();
    let empty = serde_json::Map::new();
    let defs = schema
        .get("$defs")
        .and_then(Json::as_object)
        .unwrap_or(&empty);
    shape_of(&schema, defs, 0)
});

impl Shape {
    /// The shape at a dotted path given as segments, if the path is known.
    pub(crate) fn find(&self, path: &[String]) -> Option<&Shape> {
        let mut here = self;
        for segment in path {
            match here {
                Shape::Table(keys) => here = keys.get(segment)?,
                Shape::Leaf { .. } => return None,
            }
        }
        Some(here)
    }

    /// Every leaf key as a dotted path, sorted.
    pub(crate) fn leaf_keys(&self) -> Vec<String> {
        let mut out = Vec::new();
        collect_leaves(self, "", &mut out);
        out.sort();
        out
    }

    /// The human wording of what this shape accepts, used in error messages.
    pub(crate) fn expected(&self) -> String {
        match self {
            Shape::Table(_) => "a table".to_owned(),
            Shape::Leaf { kind, nullable } => {
                let base = match kind {
                    LeafKind::Bool => "a boolean (true or false)".to_owned(),
                    LeafKind::UnsignedInt => "a non-negative integer".to_owned(),
                    LeafKind::Int => "an integer".to_owned(),
                    LeafKind::Str => "a string".to_owned(),
                    LeafKind::Enum(allowed) => format!("one of: {}", allowed.join(", ")),
                    LeafKind::StrArray => "an array of strings, e.g. [\"a\", \"b\"]".to_owned(),
                    LeafKind::Any => "a valid value".to_owned(),
                };
                if *nullable {
                    format!("{base} (omit the key to leave it unset)")
                } else {
                    base
                }
            }
        }
    }
}

fn collect_leaves(shape: &Shape, prefix: &str, out: &mut Vec<String>) {
    match shape {
        Shape::Leaf { .. } => out.push(prefix.to_owned()),
        Shape::Table(keys) => {
            for (name, child) in keys {
                let key = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}.{name}")
                };
                collect_leaves(child, &key, out);
            }
        }
    }
}

/// Schemas nest a handful of levels; the bound only guards against a
/// self-referencing `$ref` ever appearing in the generated schema.
const MAX_DEPTH: usize = 32;

fn shape_of(node: &Json, defs: &serde_json::Map<String, Json>, depth: usize) -> Shape {
    let any = Shape::Leaf {
        kind: LeafKind::Any,
        nullable: false,
    };
    if depth > MAX_DEPTH {
        return any;
    }
    if let Some(target) = node.get("$ref").and_then(Json::as_str) {
        let name = target.trim_start_matches("#/$defs/");
        return match defs.get(name) {
            Some(def) => shape_of(def, defs, depth + 1),
            None => any,
        };
    }
    if let Some(props) = node.get("properties").and_then(Json::as_object) {
        let keys = props
            .iter()
            .map(|(name, child)| (name.clone(), shape_of(child, defs, depth + 1)))
            .collect();
        return Shape::Table(keys);
    }
    if let Some(variants) = node.get("oneOf").and_then(Json::as_array) {
        let mut allowed = Vec::new();
        for variant in variants {
            if let Some(value) = variant.get("const").and_then(Json::as_str) {
                allowed.push(value.to_owned());
            } else if let Some(values) = variant.get("enum").and_then(Json::as_array) {
                allowed.extend(values.iter().filter_map(Json::as_str).map(str::to_owned));
            } else {
                return any;
            }
        }
        return Shape::Leaf {
            kind: LeafKind::Enum(allowed),
            nullable: false,
        };
    }
    if let Some(values) = node.get("enum").and_then(Json::as_array) {
        let allowed = values.iter().filter_map(Json::as_str).map(str::to_owned);
        return Shape::Leaf {
            kind: LeafKind::Enum(allowed.collect()),
            nullable: false,
        };
    }
    let (ty, nullable) = match node.get("type") {
        Some(Json::String(ty)) => (ty.as_str(), false),
        Some(Json::Array(types)) => {
            let named: Vec<&str> = types.iter().filter_map(Json::as_str).collect();
            let nullable = named.contains(&"null");
            match named.iter().find(|ty| **ty != "null") {
                Some(ty) => (*ty, nullable),
                None => return any,
            }
        }
        _ => return any,
    };
    let kind = match ty {
        "boolean" => LeafKind::Bool,
        "integer" => {
            let minimum = node.get("minimum").and_then(Json::as_f64);
            if minimum.is_some_and(|min| min >= 0.0) {
                LeafKind::UnsignedInt
            } else {
                LeafKind::Int
            }
        }
        "string" => LeafKind::Str,
        "array" => {
            let item = node.get("items").and_then(|items| items.get("type"));
            if item.and_then(Json::as_str) == Some("string") {
                LeafKind::StrArray
            } else {
                LeafKind::Any
            }
        }
        _ => LeafKind::Any,
    };
    Shape::Leaf { kind, nullable }
}

pub(crate) use bcode_text::closest;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_needs_a_plausible_typo() {
        let allowed = ["off", "names_only", "summary"];
        assert_eq!(closest("sumary", allowed), Some("summary"));
        assert_eq!(closest("nmes_only", allowed), Some("names_only"));
        assert_eq!(closest("verbose", allowed), None);
    }

    #[test]
    fn shape_knows_enums_limits_and_arrays() {
        let path = |key: &str| key.split('.').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            SHAPE.find(&path("skills.prompt.catalog")),
            Some(&Shape::Leaf {
                kind: LeafKind::Enum(vec!["off".into(), "names_only".into(), "summary".into()]),
                nullable: false
            })
        );
        assert_eq!(
            SHAPE.find(&path("skills.prompt.max_bytes")),
            Some(&Shape::Leaf {
                kind: LeafKind::UnsignedInt,
                nullable: true
            })
        );
        assert_eq!(
            SHAPE.find(&path("skills.sources.paths")),
            Some(&Shape::Leaf {
                kind: LeafKind::StrArray,
                nullable: false
            })
        );
        assert_eq!(
            SHAPE.find(&path("system_prompt.templates_dir")),
            Some(&Shape::Leaf {
                kind: LeafKind::Str,
                nullable: true
            })
        );
    }

    #[test]
    fn no_leaf_falls_back_to_any() {
        let keys = SHAPE.leaf_keys();
        for key in &keys {
            let path: Vec<String> = key.split('.').map(str::to_owned).collect();
            assert!(
                !matches!(
                    SHAPE.find(&path),
                    Some(Shape::Leaf {
                        kind: LeafKind::Any,
                        ..
                    })
                ),
                "{key} has a schema shape the validator does not understand"
            );
        }
    }
}
