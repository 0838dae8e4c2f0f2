//! Turning one layer's raw input (a file's text, or one `KEY=VALUE` from an
//! environment variable or a `--set` flag) into a checked TOML table: syntax
//! errors and invalid values become [`ConfigError`]s with their line, unknown
//! keys become [`ConfigWarning`]s and are dropped. No I/O happens here.

use bcode_text::closest;
use toml::Value;

use super::error::{ConfigError, ConfigErrorKind};
use super::key_tree::KEY_TREE;
use super::lines::{KeyLines, LineStarts};
use super::origin::{ConfigWarning, ConfigWarningKind, Origin};
use super::shape::{LeafKind, Shape};

/// One configuration layer after parsing, before merging.
#[derive(Clone, Debug)]
pub(crate) struct Layer {
    pub(crate) origin: Origin,
    pub(crate) table: toml::Table,
    /// Where each key of the file is written (empty for a layer without a
    /// file), indexed once so that any number of problems can name lines.
    pub(crate) lines: KeyLines,
}

impl Layer {
    /// The 1-based line of `key` (dotted) in this layer's file, if any.
    pub(crate) fn line_of(&self, key: &str) -> Option<usize> {
        self.lines.line_of(key)
    }
}

/// Parses a whole TOML file into a layer.
pub(crate) fn parse_file(origin: Origin, text: String) -> Result<Layer, ConfigError> {
    match text.parse::<toml::Table>() {
        Ok(table) => Ok(Layer {
            origin,
            table,
            lines: KeyLines::of(&text),
        }),
        Err(error) => {
            let offset = error.span().map_or(0, |span| span.start);
            let (line, column) = LineStarts::of(&text).line_and_column(offset);
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
        KEY_TREE.find(path),
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
        lines: KeyLines::default(),
    }
}

/// Parses one TOML value, e.g. `true`, `42`, `"text"` or `["a", "b"]`.
fn parse_value(raw: &str) -> Option<Value> {
    raw.trim().parse::<Value>().ok()
}

/// Checks a layer against the config's key tree: unknown keys are removed
/// and reported as warnings; every invalid value is removed and reported as
/// an error (in key order), so one bad value hides neither the other errors
/// nor the warnings of the same file.
pub(crate) fn check(layer: &mut Layer, host_sections: &[String], found: &mut Found) {
    let mut table = std::mem::take(&mut layer.table);
    let check = Check {
        layer,
        host_sections,
    };
    check.table(&KEY_TREE, &mut table, "", found);
    layer.table = table;
}

/// What checking found: warnings and errors, in the order met.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub(crate) warnings: Vec<ConfigWarning>,
    pub(crate) errors: Vec<ConfigError>,
}

/// The table where host-defined sections have their toggles.
const SECTION_TOGGLES: &str = "system_prompt.sections";

/// One layer's check, with the host's section ids.
struct Check<'a> {
    layer: &'a Layer,
    host_sections: &'a [String],
}

impl Check<'_> {
    fn table(&self, shape: &Shape, table: &mut toml::Table, prefix: &str, found: &mut Found) {
        let layer = self.layer;
        if !matches!(shape, Shape::Table(_)) {
            return;
        }
        let mut dropped = Vec::new();
        for (name, value) in table.iter_mut() {
            let key = join(prefix, name);
            let host_toggle = prefix == SECTION_TOGGLES && self.host_sections.contains(name);
            let error = match shape.child(name) {
                None if host_toggle => {
                    (!value.is_bool()).then(|| invalid(layer, &key, value, &HOST_TOGGLE, None))
                }
                None => {
                    let suggestion =
                        closest(name, shape.key_names()).map(|close| join(prefix, close));
                    found.warnings.push(ConfigWarning {
                        kind: ConfigWarningKind::UnknownKey,
                        line: layer.line_of(&key),
                        message: format!("unknown key `{key}` (ignored)"),
                        key,
                        origin: layer.origin.clone(),
                        suggestion,
                    });
                    dropped.push(name.clone());
                    None
                }
                Some(child @ Shape::Table(_)) => match value {
                    Value::Table(inner) => {
                        self.table(child, inner, &key, found);
                        None
                    }
                    other => Some(invalid(layer, &key, other, child, None)),
                },
                Some(
                    leaf @ Shape::Leaf {
                        kind: LeafKind::TableArray(entry),
                        ..
                    },
                ) => match value {
                    Value::Array(items) if items.iter().all(Value::is_table) => {
                        // Each entry is checked like a table of its own:
                        // unknown keys warned about and dropped, bad values
                        // reported (the key names the entry by its index).
                        for (index, item) in items.iter_mut().enumerate() {
                            if let Value::Table(inner) = item {
                                self.table(entry, inner, &format!("{key}[{index}]"), found);
                            }
                        }
                        None
                    }
                    other => Some(invalid(layer, &key, other, leaf, None)),
                },
                Some(leaf @ Shape::Leaf { kind, .. }) => check_leaf(kind, value)
                    .map(|suggestion| invalid(layer, &key, value, leaf, suggestion)),
            };
            if let Some(error) = error {
                found.errors.push(error);
                dropped.push(name.clone());
            }
        }
        for name in dropped {
            table.remove(&name);
        }
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
        (LeafKind::UnsignedNumber, Value::Integer(n)) => *n >= 0,
        (LeafKind::UnsignedNumber, Value::Float(x)) => x.is_finite() && *x >= 0.0,
        (LeafKind::Str, Value::String(_)) => true,
        (LeafKind::Enum(allowed), Value::String(s)) => {
            if allowed.contains(&s.as_str()) {
                true
            } else {
                let suggestion = closest(s, allowed.iter().copied());
                return Some(suggestion.map(str::to_owned));
            }
        }
        (LeafKind::StrArray, Value::Array(items)) => items.iter().all(Value::is_str),
        (LeafKind::StrMap, Value::Table(table)) => table.values().all(Value::is_str),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// 8,000 unknown keys (and a bad value among them) in one file: every
    /// key gets its warning with its line, and the file is indexed once, not
    /// once per warning (which made such a file take 42 s: quadratic).
    #[test]
    fn warnings_never_reparse_their_file() {
        use std::fmt::Write as _;
        let mut text = String::from("[skills]\nenabled = \"yes\"\n");
        for n in 0..8000 {
            writeln!(text, "unknown_{n:04} = {n}").unwrap();
        }
        let before = super::super::lines::PARSES.with(std::cell::Cell::get);
        let origin = Origin::RepoFile {
            path: "/r/.bcode/bcode.toml".into(),
        };
        let mut layer = parse_file(origin, text).unwrap();
        let mut found = Found::default();
        check(&mut layer, &[], &mut found);
        let parses = super::super::lines::PARSES.with(std::cell::Cell::get) - before;
        assert_eq!(parses, 1);
        assert_eq!(found.warnings.len(), 8000);
        let last = found.warnings.last().unwrap();
        assert_eq!(
            (last.key.as_str(), last.line, last.kind),
            (
                "skills.unknown_7999",
                Some(8002),
                ConfigWarningKind::UnknownKey
            )
        );
        // The bad value is an error and did not stop the warnings after it.
        assert_eq!(found.errors.len(), 1);
        assert!(
            found.errors[0]
                .to_string()
                .contains("bcode.toml:2: invalid value for `skills.enabled`")
        );
        assert!(layer.table["skills"].as_table().unwrap().is_empty());
    }

    /// Each `[[skills.mcp_servers]]` entry is checked like a table: an
    /// unknown key is warned about (with a close key) and dropped, a bad
    /// value is an error, and a non-table entry refuses the whole array.
    #[test]
    fn entries_of_an_array_of_tables_are_checked() {
        let origin = Origin::UserFile {
            path: "/u/bcode.toml".into(),
        };
        let text = "[[skills.mcp_servers]]\nname = \"a\"\ncommand = \"b\"\nargz = []\n\
                    [[skills.mcp_servers]]\nname = \"c\"\ncommand = \"d\"\nenv = { A = 1 }\n";
        let mut layer = parse_file(origin.clone(), text.to_owned()).unwrap();
        let mut found = Found::default();
        check(&mut layer, &[], &mut found);
        let warnings: Vec<(&str, Option<&str>)> = found
            .warnings
            .iter()
            .map(|w| (w.key.as_str(), w.suggestion.as_deref()))
            .collect();
        assert_eq!(
            warnings,
            [(
                "skills.mcp_servers[0].argz",
                Some("skills.mcp_servers[0].args")
            )]
        );
        let errors: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].contains("invalid value for `skills.mcp_servers[1].env`"),
            "{errors:?}"
        );
        let kept = toml::Value::Table(layer.table);
        assert_eq!(
            kept["skills"]["mcp_servers"].to_string(),
            "[{ command = \"b\", name = \"a\" }, { command = \"d\", name = \"c\" }]"
        );

        let mut layer = parse_file(origin, "[skills]\nmcp_servers = [1]\n".to_owned()).unwrap();
        let mut found = Found::default();
        check(&mut layer, &[], &mut found);
        assert_eq!(found.errors.len(), 1);
        assert!(
            found.errors[0]
                .to_string()
                .contains("invalid value for `skills.mcp_servers`")
        );
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
