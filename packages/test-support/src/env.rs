//! Environment snapshots for tests: the map a host hands the library in
//! place of the process environment.

use std::collections::BTreeMap;

/// The environment map of `pairs` (name, value).
pub fn env_map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}
