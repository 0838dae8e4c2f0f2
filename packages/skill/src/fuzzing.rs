//! The front-matter parsers one by one, for the fuzz checks
//! (`fuzz/checks`): the differential check holds the YAML fast path and the
//! recovering parser to the full parser, which are private otherwise. Only
//! built with the `fuzzing` feature; nothing in the product calls it.

use serde_json::{Map, Value};

/// The YAML fast path: `Some` only for the plain subset it reads itself.
pub fn yaml_fast(raw: &str) -> Option<Map<String, Value>> {
    crate::parse::yaml_fast::parse_simple(raw)
}

/// The full YAML parser (serde-saphyr with the front-matter budgets),
/// bypassing the fast path; the error is its message.
pub fn yaml_full(raw: &str) -> Result<Map<String, Value>, String> {
    crate::parse::yaml::parse_full(raw).map_err(|err| err.message)
}

/// YAML front matter as skills read it (fast path, full parser, then
/// recovery); `Ok` carries the mapping and how many repairs made it parse.
pub fn yaml(raw: &str) -> Result<(Map<String, Value>, usize), String> {
    crate::parse::yaml::parse(raw)
        .map(|(map, repairs)| (map, repairs.len()))
        .map_err(|err| err.message)
}

/// TOML front matter (`+++`), converted to the same mapping shape as YAML.
pub fn toml(raw: &str) -> Result<Map<String, Value>, String> {
    crate::parse::toml_front_matter::parse(raw).map_err(|err| err.message)
}

/// Whether TOML front matter is rejected as over the front-matter budget
/// (`front_matter_too_complex`), rather than parsed or rejected as invalid.
pub fn toml_over_budget(raw: &str) -> bool {
    crate::parse::toml_front_matter::parse(raw).is_err_and(|err| err.too_complex)
}

/// The front-matter budget: the most nodes (tables or mappings, arrays,
/// scalars, keys included, the root counted) a file may hold.
pub const MAX_NODES: usize = crate::parse::front_matter::MAX_NODES;

/// The front-matter budget: the deepest nesting of collections, the root
/// table counted as the first level.
pub const MAX_DEPTH: usize = crate::parse::front_matter::MAX_DEPTH;
