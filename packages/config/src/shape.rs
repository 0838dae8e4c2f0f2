//! The key tree's types: what each config key may hold. The tree itself,
//! generated from the config types, is in `key_tree`.

/// What a config key may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A table with known keys, sorted by name.
    Table(&'static [(&'static str, Shape)]),
    /// A value; `nullable` marks an `Option` (omitting the key leaves it unset).
    Leaf { kind: LeafKind, nullable: bool },
}

/// The type of a leaf value, as far as validation cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LeafKind {
    Bool,
    UnsignedInt,
    /// No key is a signed integer yet; the generator writes this for one.
    #[allow(dead_code)]
    Int,
    /// A non-negative number, integer or not (`min_score = 2.5`).
    UnsignedNumber,
    Str,
    Enum(&'static [&'static str]),
    StrArray,
    /// A table of strings with any keys (`env = { NAME = "value" }`).
    StrMap,
    /// An array of tables (`[[skills.mcp_servers]]`), each entry of the
    /// given table shape. The array is one value: a layer replaces it
    /// whole, and `config explain` names its origin as one key.
    TableArray(&'static Shape),
}

impl Shape {
    /// The shape of the key `name` in this table, if it is known.
    pub(crate) fn child(&self, name: &str) -> Option<&'static Shape> {
        match self {
            Shape::Table(keys) => keys
                .binary_search_by(|(key, _)| (*key).cmp(name))
                .ok()
                .map(|at| &keys[at].1),
            Shape::Leaf { .. } => None,
        }
    }

    /// The names of this table's keys, sorted (none for a leaf).
    pub(crate) fn key_names(&self) -> impl Iterator<Item = &'static str> {
        let keys: &'static [(&'static str, Shape)] = match self {
            Shape::Table(keys) => keys,
            Shape::Leaf { .. } => &[],
        };
        keys.iter().map(|(name, _)| *name)
    }

    /// The shape at a dotted path given as segments, if the path is known.
    pub(crate) fn find(&self, path: &[String]) -> Option<&Shape> {
        let mut here = self;
        for segment in path {
            here = here.child(segment)?;
        }
        Some(here)
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
                    LeafKind::UnsignedNumber => "a non-negative number".to_owned(),
                    LeafKind::Str => "a string".to_owned(),
                    LeafKind::Enum(allowed) => format!("one of: {}", allowed.join(", ")),
                    LeafKind::StrArray => "an array of strings, e.g. [\"a\", \"b\"]".to_owned(),
                    LeafKind::StrMap => "a table of strings, e.g. { NAME = \"value\" }".to_owned(),
                    LeafKind::TableArray(_) => "an array of tables (`[[key]]` entries)".to_owned(),
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
