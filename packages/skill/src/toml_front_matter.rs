//! TOML front matter (`+++`), converted to the same JSON-shaped mapping as
//! YAML so one validator serves both syntaxes.

use serde_json::{Map, Value};

use crate::yaml::FrontMatterError;

/// Parses TOML front matter. The `toml` crate bounds its own recursion (its
/// `unbounded` feature stays off), so deep nesting is an error, not a crash.
pub fn parse(raw: &str) -> Result<Map<String, Value>, FrontMatterError> {
    let table: toml::Table = toml::from_str(raw).map_err(|err| {
        let (line, column) = err.span().map(|span| line_column(raw, span.start)).unzip();
        FrontMatterError {
            message: err.message().trim().to_owned(),
            line,
            column,
            too_complex: err.message().contains("recursion"),
        }
    })?;
    Ok(table.into_iter().map(|(k, v)| (k, convert(v))).collect())
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
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("a = {}{}\n", "[".repeat(20_000), "]".repeat(20_000));
        assert!(parse(&deep).is_err());
    }
}
