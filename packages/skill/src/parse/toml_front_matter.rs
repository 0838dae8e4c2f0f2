//! TOML front matter (`+++`), converted to the same JSON-shaped mapping as
//! YAML so one validator serves both syntaxes, under the same budget as
//! YAML's: at most [`MAX_NODES`] nodes and [`MAX_DEPTH`] levels of nesting.

use serde::Deserialize;
use serde_json::{Map, Value};
use toml::de::{DeTable, DeValue};

use crate::parse::front_matter::{MAX_DEPTH, MAX_NODES};
use crate::parse::yaml::FrontMatterError;

/// Parses TOML front matter. The document is parsed once into spanned
/// values and measured against the budget before anything is built from
/// it, so a file of 25,000 short keys is one linear parse and a
/// `too_complex` error, not 25,000 fields for the validator to report.
/// The `toml` crate also bounds its own recursion (its `unbounded` feature
/// stays off), so deep nesting is an error, not a crash.
pub fn parse(raw: &str) -> Result<Map<String, Value>, FrontMatterError> {
    let document = DeTable::parse(raw).map_err(|err| error(raw, &err))?;
    let mut budget = Budget {
        nodes: 1,
        offsets: None,
    };
    if let Err(mut over) = budget.table(document.get_ref(), 1) {
        if let Limit::Nodes = over.why {
            over.at = first_node_over_budget(document.get_ref());
        }
        let (line, column) = line_column(raw, over.at);
        return Err(FrontMatterError {
            message: over.why.message(),
            line: Some(line),
            column: Some(column),
            too_complex: true,
            repairs: Vec::new(),
        });
    }
    let metadata = document
        .get_ref()
        .iter()
        .find(|(key, _)| key.get_ref() == "metadata")
        .map(|(_, value)| written(raw, value))
        .filter(|value| matches!(value, Value::Object(_) | Value::Array(_)));
    let table = toml::Table::deserialize(toml::de::Deserializer::from(document))
        .map_err(|err| error(raw, &err))?;
    let mut map: Map<String, Value> = table.into_iter().map(|(k, v)| (k, convert(v))).collect();
    if let (Some(metadata), Some(slot)) = (metadata, map.get_mut("metadata")) {
        *slot = metadata;
    }
    Ok(map)
}

/// A value with every number, boolean and date-time as the text written in
/// the file (`1.10` stays `"1.10"`, `0x10` stays `"0x10"`), for `metadata`,
/// whose values the open specification makes strings and whose data must
/// not change on the way in, exactly as in YAML.
fn written(raw: &str, value: &toml::Spanned<DeValue<'_>>) -> Value {
    match value.get_ref() {
        DeValue::String(text) => Value::String(text.to_string()),
        DeValue::Table(table) => Value::Object(
            table
                .iter()
                .map(|(key, value)| (key.get_ref().to_string(), written(raw, value)))
                .collect(),
        ),
        DeValue::Array(items) => {
            Value::Array(items.iter().map(|item| written(raw, item)).collect())
        }
        DeValue::Integer(_) | DeValue::Float(_) | DeValue::Boolean(_) | DeValue::Datetime(_) => {
            let text = raw.get(value.span()).map(str::trim);
            Value::String(text.unwrap_or_default().to_owned())
        }
    }
}

fn error(raw: &str, err: &toml::de::Error) -> FrontMatterError {
    let (line, column) = err.span().map(|span| line_column(raw, span.start)).unzip();
    FrontMatterError {
        message: err.message().trim().to_owned(),
        line,
        column,
        too_complex: err.message().contains("recursion"),
        repairs: Vec::new(),
    }
}

/// The offset of the node that is one too many in file order: the table
/// is sorted by key, so the count that ran out stopped at a key's place in
/// that order, not at the line where the file went over. Only a file over
/// the budget pays for this second, linear walk.
fn first_node_over_budget(table: &DeTable<'_>) -> usize {
    let mut budget = Budget {
        nodes: 0,
        offsets: Some(vec![0]),
    };
    // Without a node limit only depth can stop the walk, and the first walk
    // found the nodes limit first, so this walk visits every node.
    let _ = budget.table(table, 1);
    let mut offsets = budget.offsets.unwrap_or_default();
    if offsets.len() <= MAX_NODES {
        return 0;
    }
    *offsets.select_nth_unstable(MAX_NODES).1
}

/// Counts nodes as serde-saphyr's YAML budget does (every table, array and
/// scalar, keys included; the root table is the first) and stops at the
/// first one over the budget; or, with `offsets`, records where each node
/// starts instead of counting.
struct Budget {
    nodes: usize,
    offsets: Option<Vec<usize>>,
}

/// Where the budget ran out (a byte offset) and which limit it was.
struct Over {
    at: usize,
    why: Limit,
}

enum Limit {
    Nodes,
    Depth,
}

impl Limit {
    fn message(&self) -> String {
        match self {
            Limit::Nodes => format!(
                "it has more than {MAX_NODES} keys, values, tables and arrays (the front-matter budget)"
            ),
            Limit::Depth => format!(
                "it nests tables and arrays more than {MAX_DEPTH} levels deep (the front-matter budget)"
            ),
        }
    }
}

impl Budget {
    fn count(&mut self, at: usize) -> Result<(), Over> {
        if let Some(offsets) = &mut self.offsets {
            offsets.push(at);
            return Ok(());
        }
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(Over {
                at,
                why: Limit::Nodes,
            });
        }
        Ok(())
    }

    /// A table at nesting `depth` (the root table is depth 1).
    fn table(&mut self, table: &DeTable<'_>, depth: usize) -> Result<(), Over> {
        for (key, value) in table {
            self.count(key.span().start)?;
            self.value(value.get_ref(), value.span().start, depth)?;
        }
        Ok(())
    }

    /// A value inside a collection at nesting `depth`.
    fn value(&mut self, value: &DeValue<'_>, at: usize, depth: usize) -> Result<(), Over> {
        self.count(at)?;
        let nested = depth + 1;
        match value {
            DeValue::Table(_) | DeValue::Array(_) if nested > MAX_DEPTH => Err(Over {
                at,
                why: Limit::Depth,
            }),
            DeValue::Table(table) => self.table(table, nested),
            DeValue::Array(items) => items
                .iter()
                .try_for_each(|item| self.value(item.get_ref(), item.span().start, nested)),
            _ => Ok(()),
        }
    }
}

fn convert(value: toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.into_iter().map(convert).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.into_iter().map(|(k, v)| (k, convert(v))).collect())
        }
    }
}

/// 1-based line and character column of byte `offset` in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_tables_and_reports_errors_with_position() {
        let map = parse("id = \"a\"\n[activation]\nkeywords = [\"x\"]\n").unwrap();
        assert_eq!(
            Value::Object(map),
            json!({"id": "a", "activation": {"keywords": ["x"]}})
        );
        let err = parse("id = \"a\"\nname = \n").unwrap_err();
        assert_eq!((err.line, err.column.is_some()), (Some(2), true));
    }

    #[test]
    fn metadata_keeps_the_text_written() {
        let map = parse(
            "version = 1.10\n[metadata]\nflag = true\nversion = 1.10\nhex = 0x1_0\nwhen = 1979-05-27\nquoted = \"1.10\"\nlist = [1.0, { n = -7 }]\n",
        )
        .unwrap();
        assert_eq!(
            Value::Object(map),
            json!({"version": 1.1, "metadata": {"flag": "true", "version": "1.10", "hex": "0x1_0",
                   "when": "1979-05-27", "quoted": "1.10", "list": ["1.0", {"n": "-7"}]}})
        );
        let map = parse("metadata = { version = 2.50 }\n").unwrap();
        assert_eq!(Value::Object(map), json!({"metadata": {"version": "2.50"}}));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("a = {}{}\n", "[".repeat(20_000), "]".repeat(20_000));
        assert!(parse(&deep).is_err());
    }

    /// The root table, then a key and a value per line: 4,999 pairs are
    /// 9,999 nodes and parse, 5,000 are one too many, as in YAML.
    #[test]
    fn the_node_budget_counts_like_yaml() {
        let keys = |n: usize| (0..n).map(|i| format!("k{i} = 1\n")).collect::<String>();
        assert_eq!(parse(&keys(4_999)).unwrap().len(), 4_999);
        assert_eq!(
            parse(&keys(5_000)).unwrap_err(),
            FrontMatterError {
                message: "it has more than 10000 keys, values, tables and arrays (the front-matter budget)".into(),
                line: Some(5_000),
                column: Some(9),
                too_complex: true,
                repairs: Vec::new(),
            }
        );
    }

    /// Sixteen levels, the root table included, parse; seventeen do not.
    #[test]
    fn the_depth_budget_counts_like_yaml() {
        let nested = |levels: usize| format!("a = {}{}\n", "[".repeat(levels), "]".repeat(levels));
        assert!(parse(&nested(15)).is_ok());
        assert_eq!(
            parse(&nested(16)).unwrap_err(),
            FrontMatterError {
                message:
                    "it nests tables and arrays more than 16 levels deep (the front-matter budget)"
                        .into(),
                line: Some(1),
                column: Some(20),
                too_complex: true,
                repairs: Vec::new(),
            }
        );
    }
}
