//! YAML front matter: parsed with tight budgets (a billion-laughs file or
//! thousands of nested brackets is rejected in well under a millisecond), and
//! the most common real-world mistake, an unquoted `: ` in a value, repaired
//! where the intent is unambiguous.

use serde_json::{Map, Value};

/// Why front matter could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontMatterError {
    pub message: String,
    /// 1-based line within the front matter text.
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// A budget (depth, nodes, aliases, size) was exceeded.
    pub too_complex: bool,
}

/// A line that was repaired in memory, for the warning that says how to fix the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repair {
    /// 1-based line within the front matter text.
    pub line: u32,
    pub key: String,
    pub quoted: String,
}

/// Parses YAML front matter into a mapping. On a syntax error, tries the
/// `: ` repair; `Ok` then carries the repairs that made it parse.
pub fn parse(raw: &str) -> Result<(Map<String, Value>, Vec<Repair>), FrontMatterError> {
    match parse_strict(raw) {
        Ok(map) => Ok((map, Vec::new())),
        Err(err) if err.too_complex => Err(err),
        Err(err) => {
            let Some((repaired, repairs)) = repair_unquoted_colons(raw) else {
                return Err(err);
            };
            match parse_strict(&repaired) {
                Ok(map) => Ok((map, repairs)),
                Err(_) => Err(err),
            }
        }
    }
}

fn options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = 16;
    budget.flow_nesting_limit = 16;
    budget.max_nodes = 10_000;
    budget.max_events = 40_000;
    budget.max_aliases = 16;
    budget.max_anchors = 16;
    budget.max_documents = 1;
    budget.max_total_scalar_bytes = 256 * 1024;
    budget.max_recorded_anchor_events = 1_000;
    budget.max_recorded_anchor_bytes = 64 * 1024;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    // `no`, `0755` and `1_000` stay strings: front matter is mostly prose.
    options.strict_booleans = true;
    options.leading_zero_numbers_as_strings = true;
    options.underscored_numbers_as_strings = true;
    options.with_snippet = false;
    options
}

fn parse_strict(raw: &str) -> Result<Map<String, Value>, FrontMatterError> {
    if raw.trim().is_empty() {
        return Ok(Map::new());
    }
    if let Some(map) = crate::yaml_fast::parse_simple(raw) {
        return Ok(map);
    }
    parse_full(raw)
}

/// The full YAML parser with budgets, bypassing the fast path (which tests
/// hold to this function's results).
pub(crate) fn parse_full(raw: &str) -> Result<Map<String, Value>, FrontMatterError> {
    let value: Value = serde_saphyr::from_str_with_options(raw, options()).map_err(|err| {
        let location = err.location();
        let message = err.to_string();
        let lower = message.to_ascii_lowercase();
        let too_complex = [
            "budget",
            "limit exceeded",
            "recursion",
            "too many",
            "nesting",
        ]
        .iter()
        .any(|needle| lower.contains(needle));
        FrontMatterError {
            message: first_line(&message),
            line: location.map(|l| u32::try_from(l.line()).unwrap_or(u32::MAX)),
            column: location.map(|l| u32::try_from(l.column()).unwrap_or(u32::MAX)),
            too_complex,
        }
    })?;
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(FrontMatterError {
            message: format!(
                "front matter must be a mapping of keys to values, found {}",
                kind_name(&other)
            ),
            line: Some(1),
            column: Some(1),
            too_complex: false,
        }),
    }
}

/// The parser's message without its own position suffix, which counts lines
/// from the start of the front matter rather than the file (the diagnostic
/// carries the file position instead).
fn first_line(message: &str) -> String {
    let line = message.lines().next().unwrap_or(message).trim();
    match line.rfind(" at line ") {
        Some(at) if line[at..].contains(", column ") => line[..at].to_owned(),
        _ => line.to_owned(),
    }
}

pub(crate) fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Quotes single-line plain values of top-level keys that contain `: ` (or end
/// with `:`), the mistake behind most invalid skill files in the wild, e.g.
/// `description: Use when: the user asks`. Only lines whose meaning is
/// unambiguous are touched: a top-level `key: value` whose value is a plain
/// scalar and is not continued on the next line. `None` when nothing applies.
fn repair_unquoted_colons(raw: &str) -> Option<(String, Vec<Repair>)> {
    let lines: Vec<&str> = raw.split_inclusive('\n').collect();
    let mut out = String::with_capacity(raw.len() + 16);
    let mut repairs = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let continued = lines
            .get(index + 1)
            .is_some_and(|next| next.starts_with([' ', '\t']) && !next.trim().is_empty());
        match repairable(line) {
            Some((key, value)) if !continued => {
                let quoted = format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""));
                out.push_str(key);
                out.push_str(": ");
                out.push_str(&quoted);
                out.push_str(if line.ends_with("\r\n") {
                    "\r\n"
                } else if line.ends_with('\n') {
                    "\n"
                } else {
                    ""
                });
                repairs.push(Repair {
                    line: u32::try_from(index + 1).unwrap_or(u32::MAX),
                    key: key.to_owned(),
                    quoted,
                });
            }
            _ => out.push_str(line),
        }
    }
    (!repairs.is_empty()).then_some((out, repairs))
}

/// `(key, value)` when `line` is `key: plain value` with a `: ` (or a final
/// `:`) inside the value.
fn repairable(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_end_matches(['\n', '\r']);
    let colon = line.find(": ")?;
    let key = &line[..colon];
    if !crate::yaml_fast::is_plain_key(key) {
        return None;
    }
    let value = line[colon + 2..].trim();
    const SPECIAL_STARTS: [char; 13] = [
        '\'', '"', '|', '>', '[', '{', '&', '*', '!', '%', '@', '`', '#',
    ];
    // A block-sequence dash or an indicator means the value is not a plain scalar.
    let special = value.starts_with(SPECIAL_STARTS) || value.starts_with("- ") || value == "-";
    let plain = !value.is_empty() && !special;
    let has_colon = value.contains(": ") || value.ends_with(':');
    (plain && has_colon && !value.contains(" #")).then_some((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(raw: &str) -> (Value, Vec<Repair>) {
        let (map, repairs) = parse(raw).unwrap();
        (Value::Object(map), repairs)
    }

    #[test]
    fn parses_the_spec_example() {
        let raw = "id: rust-debugging\nname: Rust Debugging\nversion: 0.1.0\nactivation:\n  keywords:\n    - rust\n    - cargo\n";
        assert_eq!(
            ok(raw),
            (
                json!({"id": "rust-debugging", "name": "Rust Debugging", "version": "0.1.0",
                       "activation": {"keywords": ["rust", "cargo"]}}),
                vec![]
            )
        );
    }

    #[test]
    fn keeps_yaml_11_lookalikes_as_strings() {
        assert_eq!(
            ok("a: no\nb: 0755\nc: 1_000\nd: true\n").0,
            json!({"a": "no", "b": "0755", "c": "1_000", "d": true})
        );
    }

    #[test]
    fn repairs_an_unquoted_colon() {
        let (value, repairs) = ok("name: x\ndescription: Use when: the user asks \"why\"\n");
        assert_eq!(
            value,
            json!({"name": "x", "description": "Use when: the user asks \"why\""})
        );
        assert_eq!(
            repairs,
            vec![Repair {
                line: 2,
                key: "description".into(),
                quoted: r#""Use when: the user asks \"why\"""#.into()
            }]
        );
    }

    #[test]
    fn does_not_repair_ambiguous_lines() {
        // Continued on the next line: the intent is not clear, so report instead.
        let err = parse("description: a: b\n  more text\n").unwrap_err();
        assert!(!err.too_complex);
        assert!(err.line.is_some());
    }

    #[test]
    fn rejects_non_mappings_and_reports_position() {
        let err = parse("- a\n- b\n").unwrap_err();
        assert_eq!(
            err.message,
            "front matter must be a mapping of keys to values, found a list"
        );
        let err = parse("name: \"unclosed\n").unwrap_err();
        assert_eq!(
            (err.message.as_str(), err.line),
            ("unclosed quote", Some(1))
        );
    }

    #[test]
    fn rejects_alias_bombs_and_deep_nesting_quickly() {
        let mut bomb = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for (name, prev) in ["b", "c", "d", "e", "f", "g", "h", "i"]
            .iter()
            .zip(["a", "b", "c", "d", "e", "f", "g", "h"])
        {
            bomb.push_str(&format!(
                "{name}: &{name} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n",
                p = prev
            ));
        }
        let err = parse(&bomb).unwrap_err();
        assert!(err.too_complex, "{err:?}");
        let deep = format!("a: {}{}\n", "[".repeat(20_000), "]".repeat(20_000));
        let err = parse(&deep).unwrap_err();
        assert!(err.too_complex, "{err:?}");
    }
}
