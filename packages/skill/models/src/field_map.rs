//! Free-form front-matter fields kept as written: `metadata` and the
//! fields Bcode does not know.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// Fields sorted by key in one vector, each key once. A `BTreeMap` would
/// allocate a node of eleven slots (over 600 bytes) for even one entry, and
/// a third of real skills carry `metadata`: at 60,000 skills that was
/// 13 MB of the registry. The keys registries repeat in nearly every file
/// (`COMMON_KEYS`) are not copied per skill.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldMap(Vec<(Key, Value)>);

/// A field's key in 16 bytes: a common key by reference, any other boxed.
/// A `Cow<'static, str>` was 24 bytes, and a registry holds about four
/// keys a skill (8 bytes each of some 240,000 entries at 61,000 skills).
/// `pub` only because the iterators' types name it; the module is private,
/// so no other crate can.
#[derive(Clone, Debug)]
pub enum Key {
    /// One of `COMMON_KEYS`, shared.
    Common(&'static &'static str),
    /// Any other key, the text written.
    Own(Box<str>),
}

// The common variant fits beside the box's non-null pointer: no tag word.
const _: () = assert!(std::mem::size_of::<Key>() == 16);

impl std::ops::Deref for Key {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Key::Common(key) => key,
            Key::Own(key) => key,
        }
    }
}

impl PartialEq for Key {
    /// By text, however it is kept.
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl From<Key> for String {
    fn from(key: Key) -> String {
        match key {
            Key::Common(key) => (*key).to_owned(),
            Key::Own(key) => key.into_string(),
        }
    }
}

/// `metadata` keys common in public registries, sorted: one of these is
/// kept as a `'static` string rather than a copy per skill (at 60,000
/// skills with `author`, `version` and `tags`, 180,000 allocations).
const COMMON_KEYS: &[&str] = &[
    "author",
    "category",
    "homepage",
    "license",
    "repository",
    "source",
    "tags",
    "version",
];

/// `key`, shared when it is a common one.
fn interned(key: String) -> Key {
    match COMMON_KEYS.binary_search(&key.as_str()) {
        Ok(at) => COMMON_KEYS
            .get(at)
            .map_or_else(|| Key::Own(key.into_boxed_str()), Key::Common),
        Err(_) => Key::Own(key.into_boxed_str()),
    }
}

impl FieldMap {
    /// No fields.
    pub const fn new() -> Self {
        FieldMap(Vec::new())
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        let at = self.position(key).ok()?;
        self.0.get(at).map(|(_, value)| value)
    }

    /// Sets `key` to `value`, returning the value it replaced.
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        match self.position(&key) {
            Ok(at) => self
                .0
                .get_mut(at)
                .map(|(_, old)| std::mem::replace(old, value)),
            Err(at) => {
                self.0.insert(at, (interned(key), value));
                None
            }
        }
    }

    /// How many fields there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The fields in key order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> {
        self.0.iter().map(|(key, value)| (&**key, value))
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| (**k).cmp(key))
    }
}

impl FromIterator<(String, Value)> for FieldMap {
    /// Like a map: a key given twice keeps its last value.
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(fields: I) -> Self {
        let mut fields: Vec<(String, Value)> = fields.into_iter().collect();
        // Stable, so of equal keys the last given is the last here.
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        let mut kept: Vec<(Key, Value)> = Vec::with_capacity(fields.len());
        for (key, value) in fields {
            match kept.last_mut() {
                Some(last) if *last.0 == *key => last.1 = value,
                _ => kept.push((interned(key), value)),
            }
        }
        FieldMap(kept)
    }
}

impl<'a> IntoIterator for &'a FieldMap {
    type Item = (&'a str, &'a Value);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Key, Value)>,
        fn(&'a (Key, Value)) -> (&'a str, &'a Value),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(key, value)| (&**key, value))
    }
}

impl IntoIterator for FieldMap {
    type Item = (String, Value);
    type IntoIter =
        std::iter::Map<std::vec::IntoIter<(Key, Value)>, fn((Key, Value)) -> (String, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0
            .into_iter()
            .map(|(key, value)| (String::from(key), value))
    }
}

impl Serialize for FieldMap {
    /// As a map, in key order (as the `BTreeMap` it replaces).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for FieldMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::<String, Value>::deserialize(deserializer)?;
        Ok(map.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn pairs(map: &FieldMap) -> Vec<(String, Value)> {
        map.iter().map(|(k, v)| (k.to_owned(), v.clone())).collect()
    }

    #[test]
    fn reads_and_writes_like_the_btree_map_it_replaces() {
        let given = [
            ("b", json!(1)),
            ("a", json!("x")),
            ("c", json!([1, 2])),
            ("a", json!("last")),
        ];
        let ours: FieldMap = given
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        let theirs: BTreeMap<String, Value> = given
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        let expected: Vec<(String, Value)> = theirs.clone().into_iter().collect();
        assert_eq!(pairs(&ours), expected);
        assert_eq!(ours.len(), 3);
        assert_eq!(ours.get("a"), Some(&json!("last")));
        assert_eq!(ours.get("z"), None);
        assert_eq!(
            serde_json::to_string(&ours).unwrap(),
            serde_json::to_string(&theirs).unwrap()
        );
        let back: FieldMap = serde_json::from_str(&serde_json::to_string(&ours).unwrap()).unwrap();
        assert_eq!(back, ours);

        let mut inserted = FieldMap::new();
        assert!(inserted.is_empty());
        for (k, v) in &given {
            inserted.insert((*k).to_owned(), v.clone());
        }
        assert_eq!(inserted, ours);
        assert_eq!(inserted.insert("b".into(), json!(2)), Some(json!(1)));
    }

    #[test]
    fn common_keys_are_shared_and_read_as_written() {
        assert!(COMMON_KEYS.windows(2).all(|w| w[0] < w[1]), "sorted");
        let map: FieldMap = [
            ("version", json!("1.0")),
            ("author", json!("a")),
            ("zeta", json!(1)),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
        let kinds: Vec<(&str, bool)> = map
            .0
            .iter()
            .map(|(k, _)| (&**k, matches!(k, Key::Common(_))))
            .collect();
        assert_eq!(
            kinds,
            [("author", true), ("version", true), ("zeta", false)]
        );
        let owned: Vec<(String, Value)> = map.clone().into_iter().collect();
        assert_eq!(owned, pairs(&map));
        assert_eq!(map.get("version"), Some(&json!("1.0")));
    }
}
