//! Free-form front-matter fields kept as written: `metadata` and the
//! fields Bcode does not know.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// Fields sorted by key in one vector, each key once. A `BTreeMap` would
/// allocate a node of eleven slots (over 600 bytes) for even one entry, and
/// a third of real skills carry `metadata`: at 60,000 skills that was
/// 13 MB of the registry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldMap(Vec<(String, Value)>);

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
                self.0.insert(at, (key, value));
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
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&String, &Value)> {
        self.0.iter().map(|(key, value)| (key, value))
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }
}

impl FromIterator<(String, Value)> for FieldMap {
    /// Like a map: a key given twice keeps its last value.
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(fields: I) -> Self {
        let mut fields: Vec<(String, Value)> = fields.into_iter().collect();
        // Stable, so of equal keys the last given is the last here.
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        let mut kept: Vec<(String, Value)> = Vec::with_capacity(fields.len());
        for field in fields {
            match kept.last_mut() {
                Some(last) if last.0 == field.0 => *last = field,
                _ => kept.push(field),
            }
        }
        FieldMap(kept)
    }
}

impl<'a> IntoIterator for &'a FieldMap {
    type Item = (&'a String, &'a Value);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, Value)>,
        fn(&'a (String, Value)) -> (&'a String, &'a Value),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(key, value)| (key, value))
    }
}

impl IntoIterator for FieldMap {
    type Item = (String, Value);
    type IntoIter = std::vec::IntoIter<(String, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
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
        map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
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
}
