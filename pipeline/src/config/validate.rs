//! Turning one layer's raw input (a file's text, or one `KEY=VALUE` from an
//! environment variable or a `--set` flag) into a checked TOML table: syntax
//! errors and invalid values become [`ConfigError`]s with their line, unknown
//! keys become [`ConfigWarning`]s and are dropped. No I/O happens here.

use toml::Value;
use toml::de::{DeTable, DeValue};

use super::error::{ConfigError, ConfigErrorKind};
use super::origin::{ConfigWarning, Origin};
use super::schema::{LeafKind, SHAPE, Shape, closest};

/// One configuration layer after parsing, before merging.
#[derive(Clone, Debug)]
pub(crate) struct Layer {
    pub(crate) origin: Origin,
    pub(crate) table: toml::Table,
    /// The file text, kept so a problem found later can name its line.
    pub(crate) text: Option<String>,
}

impl Layer {
    /// The 1-based line of `key` (dotted) in this layer's file, if any.
    pub(crate) fn line_of(&self, key: &str) -> Option<usize> {
        let text = self.text.as_deref()?;
        let path: Vec<&str> = key.split('.').collect();
        line_of(text, &path)
    }
}

/// Parses a whole TOML file into a layer.
pub(crate) fn parse_file(origin: Origin, text: String) -> Result<Layer, ConfigError> {
    match text.parse::<toml::Table>() {
        Ok(table) => Ok(Layer {
            origin,
            table,
            text: Some(text),
        }),
        Err(error) => {
            let offset = error.span().map_or(0, |span| span.start);
            let (line, column) = line_and_column(&text, offset);
            Err(ConfigError::new(ConfigErrorKind::Syntax {
                origin,
                line,
                column,
                message: error.message().trim_end().to_owned(),
            }))
        }
    }
}

/// Builds the layer of one assignment from an environment variable or a
/// `--set` flag.
///
/// The value is TOML, but read with the target key's type in mind, because
/// plain TOML parsing is a trap for strings (figment has the same one:
/// `BCODE_SYSTEM_PROMPT__TEXT=007` is not a string to a TOML parser, and
/// `--set skills.prompt.catalog=off` is not valid TOML at all):
/// - for string and enum keys the raw text is the value, unless it is a quoted
///   TOML string, which is unquoted (`"off"` and `off` both mean `off`);
/// - for other keys the text is parsed as a TOML value, and text that is not
///   valid TOML is kept as a string, so validation can name the bad value.
pub(crate) fn assignment(origin: Origin, path: &[String], raw: &str) -> Layer {
    let wants_string = matches!(
        SHAPE.find(path),
        Some(Shape::Leaf {
            kind: LeafKind::Str | LeafKind::Enum(_),
            ..
        })
    );
    let parsed = parse_value(raw);
    let value = if wants_string {
        match parsed {
            Some(Value::String(unquoted)) => Value::String(unquoted),
            _ => Value::String(raw.to_owned()),
        }
    } else {
        parsed.unwrap_or_else(|| Value::String(raw.to_owned()))
    };
    let mut value = value;
    for segment in path.iter().rev() {
        let mut table = toml::Table::new();
        table.insert(segment.clone(), value);
        value = Value::Table(table);
    }
    let table = match value {
        Value::Table(table) => table,
        // An empty path cannot reach here (callers reject it); an empty table
        // is the harmless answer if it ever did.
        _ => toml::Table::new(),
    };
    Layer {
        origin,
        table,
        text: None,
    }
}

/// Parses one TOML value, e.g. `true`, `42`, `"text"` or `["a", "b"]`.
fn parse_value(raw: &str) -> Option<Value> {
    raw.trim().parse::<Value>().ok()
}

/// Checks a layer against the config's key tree: unknown keys are removed
/// and reported as warnings; the first invalid value (in key order) is an
/// error.
pub(crate) fn check(
    layer: &mut Layer,
    host_sections: &[String],
    warnings: &mut Vec<ConfigWarning>,
) -> Result<(), ConfigError> {
    let mut table = std::mem::take(&mut layer.table);
    let check = Check {
        layer,
        host_sections,
    };
    let result = check.table(&SHAPE, &mut table, "", warnings);
    layer.table = table;
    result
}

/// The table where host-defined sections have their toggles.
const SECTION_TOGGLES: &str = "system_prompt.sections";

/// One layer's check, with the host's section ids.
struct Check<'a> {
    layer: &'a Layer,
    host_sections: &'a [String],
}

impl Check<'_> {
    fn table(
        &self,
        shape: &Shape,
        table: &mut toml::Table,
        prefix: &str,
        warnings: &mut Vec<ConfigWarning>,
    ) -> Result<(), ConfigError> {
        let layer = self.layer;
        let Shape::Table(known) = shape else {
            return Ok(());
        };
        let mut unknown = Vec::new();
        for (name, value) in table.iter_mut() {
            let key = join(prefix, name);
            let host_toggle = prefix == SECTION_TOGGLES && self.host_sections.contains(name);
            match known.get(name) {
                None if host_toggle => {
                    if !value.is_bool() {
                        return Err(invalid(layer, &key, value, &HOST_TOGGLE, None));
                    }
                }
                None => {
                    let suggestion = closest(name, known.keys().map(String::as_str))
                        .map(|close| join(prefix, close));
                    warnings.push(ConfigWarning {
                        line: layer.line_of(&key),
                        message: format!("unknown key `{key}` (ignored)"),
                        key,
                        origin: layer.origin.clone(),
                        suggestion,
                    });
                    unknown.push(name.clone());
                }
                Some(child @ Shape::Table(_)) => match value {
                    Value::Table(inner) => self.table(child, inner, &key, warnings)?,
                    other => return Err(invalid(layer, &key, other, child, None)),
                },
                Some(leaf @ Shape::Leaf { kind, .. }) => {
                    if let Some(suggestion) = check_leaf(kind, value) {
                        return Err(invalid(layer, &key, value, leaf, suggestion));
                    }
                }
            }
        }
        for name in unknown {
            table.remove(&name);
        }
        Ok(())
    }
}

/// The shape of a host section's toggle.
const HOST_TOGGLE: Shape = Shape::Leaf {
    kind: LeafKind::Bool,
    nullable: false,
};

/// `None` when the value fits; otherwise `Some(suggestion)`, where the
/// suggestion is a close allowed enum value, if any.
fn check_leaf(kind: &LeafKind, value: &Value) -> Option<Option<String>> {
    let fits = match (kind, value) {
        (LeafKind::Bool, Value::Boolean(_)) => true,
        (LeafKind::UnsignedInt, Value::Integer(n)) => *n >= 0,
        (LeafKind::Int, Value::Integer(_)) => true,
        (LeafKind::Str, Value::String(_)) => true,
        (LeafKind::Enum(allowed), Value::String(s)) => {
            if allowed.contains(s) {
                true
            } else {
                let suggestion = closest(s, allowed.iter().map(String::as_str));
                return Some(suggestion.map(str::to_owned));
            }
        }
        (LeafKind::StrArray, Value::Array(items)) => items.iter().all(Value::is_str),
        (LeafKind::Any, _) => true,
        _ => false,
    };
    if fits { None } else { Some(None) }
}

fn invalid(
    layer: &Layer,
    key: &str,
    value: &Value,
    shape: &Shape,
    suggestion: Option<String>,
) -> ConfigError {
    ConfigError::new(ConfigErrorKind::InvalidValue {
        key: key.to_owned(),
        value: value.to_string(),
        expected: shape.expected(),
        suggestion,
        origin: layer.origin.clone(),
        line: layer.line_of(key),
    })
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

/// The 1-based line where `path` is written in `text`: the line of its last
/// key segment, whether written as a dotted key, inside a `[table]` or in an
/// inline table. figment's own errors carry no position, hence this.
fn line_of(text: &str, path: &[&str]) -> Option<usize> {
    let document = DeTable::parse(text).ok()?;
    let mut table = document.get_ref();
    let mut offset = None;
    for (index, segment) in path.iter().enumerate() {
        let (key, value) = table.iter().find(|(key, _)| key.get_ref() == segment)?;
        offset = Some(key.span().start);
        match value.get_ref() {
            DeValue::Table(inner) => table = inner,
            _ if index + 1 < path.len() => return None,
            _ => {}
        }
    }
    offset.map(|offset| line_and_column(text, offset).0)
}

/// 1-based line and column (in chars) of a byte offset.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_of_finds_keys_in_every_table_form() {
        let text = "# comment\n[skills]\nenabled = true\n\n[skills.prompt]\ncatalog = \"x\"\n\
                    [system_prompt]\nsections.user_authority = false\nx = { y = 1 }\n";
        assert_eq!(line_of(text, &["skills", "enabled"]), Some(3));
        assert_eq!(line_of(text, &["skills", "prompt", "catalog"]), Some(6));
        assert_eq!(
            line_of(text, &["system_prompt", "sections", "user_authority"]),
            Some(8)
        );
        assert_eq!(line_of(text, &["system_prompt", "x", "y"]), Some(9));
        assert_eq!(line_of(text, &["skills", "missing"]), None);
    }

    #[test]
    fn line_and_column_are_one_based() {
        assert_eq!(line_and_column("ab\ncd", 0), (1, 1));
        assert_eq!(line_and_column("ab\ncd", 4), (2, 2));
    }

    #[test]
    fn assignment_coerces_by_target_type() {
        let path = |key: &str| key.split('.').map(str::to_owned).collect::<Vec<_>>();
        let value_of = |key: &str, raw: &str| {
            let layer = assignment(Origin::Default, &path(key), raw);
            let mut value = Value::Table(layer.table);
            for segment in path(key) {
                value = value.get(&segment).cloned().unwrap();
            }
            value
        };
        assert_eq!(
            value_of("system_prompt.text", "007"),
            Value::String("007".into())
        );
        assert_eq!(
            value_of("system_prompt.text", "\"a b\""),
            Value::String("a b".into())
        );
        assert_eq!(
            value_of("skills.prompt.catalog", "off"),
            Value::String("off".into())
        );
        assert_eq!(value_of("skills.enabled", "false"), Value::Boolean(false));
        assert_eq!(
            value_of("skills.prompt.max_bytes", "12"),
            Value::Integer(12)
        );
        assert_eq!(
            value_of("skills.enabled", "maybe"),
            Value::String("maybe".into())
        );
        assert_eq!(
            value_of("skills.sources.paths", "[\"a\", \"b\"]"),
            Value::Array(vec![Value::String("a".into()), Value::String("b".into())])
        );
    }
}
