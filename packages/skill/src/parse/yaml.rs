//! YAML front matter: parsed with tight budgets (a billion-laughs file or
//! thousands of nested brackets is rejected in well under a millisecond), and
//! the common real-world mistakes (text after a block-scalar header, a string
//! value starting with an indicator, an unquoted `: `) repaired, only in a
//! file both parsers rejected and only where the intent is unambiguous.

use serde_json::{Map, Value};

use crate::parse::front_matter::{MAX_DEPTH, MAX_NODES};

/// Why front matter could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontMatterError {
    pub message: String,
    /// 1-based line within the front matter text.
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// A budget (depth, nodes, aliases, size) was exceeded.
    pub too_complex: bool,
    /// Values recovery would have repaired, in a file that is still invalid
    /// after all of them: each is a problem of its own to report, beside
    /// the error that remains (`message`, `line`, `column`).
    pub repairs: Vec<Repair>,
}

/// A value that was repaired in memory, for the warning that says how to fix the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repair {
    /// 1-based line within the front matter text.
    pub line: u32,
    /// 1-based column (in characters) where the value starts.
    pub column: u32,
    /// The key as written on its line (`short-description`).
    pub key: String,
    /// The keys from the top level down to it, joined with `.`
    /// (`metadata.short-description`); `key` for a top-level field.
    pub path: String,
    pub kind: RepairKind,
    /// The value as it was read, written as valid YAML: the one-line fix
    /// for the file (a double-quoted string, or for a flow list the list
    /// with its reserved items double-quoted).
    pub quoted: String,
}

/// Which invalid shape a repaired value had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RepairKind {
    /// `key: Use when: asked`: a plain value holding `: `.
    UnquotedColon,
    /// `key: >- Use when ...`: a block-scalar header (`header`, as written)
    /// followed by text on its own line.
    TextAfterBlockHeader { header: String },
    /// `key: [AUTO] Use when ...`: a value starting with a YAML indicator
    /// character and not valid YAML as written.
    IndicatorStart { indicator: char },
    /// `tags: [next, @supabase/ssr]`: a one-line flow list whose plain items
    /// include one starting with a reserved indicator (`@` or `` ` ``),
    /// which no YAML value may start with; those items are read as text.
    ReservedFlowItem { indicator: char },
}

/// Parses YAML front matter into a mapping. On a syntax error, tries the
/// recoveries of [`recover`]; `Ok` then carries the repairs that made it
/// parse. A file that parses is never repaired, so recovery cannot change
/// its meaning, and costs nothing on the happy path. A file still invalid
/// after every repair fails with the error that remains and, in
/// [`FrontMatterError::repairs`], the repairs it would also need, so one
/// run reports every problem the file has.
pub fn parse(raw: &str) -> Result<(Map<String, Value>, Vec<Repair>), FrontMatterError> {
    match parse_strict(raw) {
        Ok(map) => Ok((map, Vec::new())),
        Err(err) if err.too_complex => Err(err),
        Err(err) => {
            let Some((repaired, repairs)) = recover(raw) else {
                return Err(err);
            };
            match parse_full(&repaired) {
                Ok(map) => Ok((map, repairs)),
                Err(rest) => {
                    // Repairs keep every line where it was, so the error
                    // that remains points into the file as written, unless
                    // it sits on a repaired line (the repair then did not
                    // read the author's intent): the first error stays.
                    let on_repaired = repairs.iter().any(|r| rest.line == Some(r.line));
                    let remaining = if rest.too_complex || on_repaired {
                        err
                    } else {
                        rest
                    };
                    Err(FrontMatterError {
                        repairs,
                        ..remaining
                    })
                }
            }
        }
    }
}

fn options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_DEPTH;
    budget.flow_nesting_limit = MAX_DEPTH;
    budget.max_nodes = MAX_NODES;
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
    if let Some(map) = crate::parse::yaml_fast::parse_simple(raw) {
        return Ok(map);
    }
    parse_full(raw)
}

/// The full YAML parser with budgets, bypassing the fast path (which tests
/// hold to this function's results): the values YAML types, except that
/// `metadata` keeps its scalars as written (see [`metadata_as_written`]).
pub(crate) fn parse_full(raw: &str) -> Result<Map<String, Value>, FrontMatterError> {
    let mut map = parse_typed(raw)?;
    if let Some(metadata) = map.get_mut("metadata") {
        metadata_as_written(raw, metadata);
    }
    Ok(map)
}

/// Every value as YAML types it (`1.10` is the number 1.1, `true` a
/// boolean), `metadata` included: what a YAML-reading validator of another
/// agent sees, which the portability lint needs.
pub(crate) fn parse_typed(raw: &str) -> Result<Map<String, Value>, FrontMatterError> {
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
            repairs: Vec::new(),
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
            repairs: Vec::new(),
        }),
    }
}

/// The mapping as YAML types it after the repairs of [`recover`], for a
/// file the typed parse rejects: the portability lint reports the invalid
/// YAML and still checks every other rule on what the author meant.
pub(crate) fn parse_typed_recovered(raw: &str) -> Option<Map<String, Value>> {
    let (repaired, _) = recover(raw)?;
    parse_typed(&repaired).ok()
}

/// Replaces the scalars of a `metadata` mapping (or list) that YAML typed
/// as numbers, booleans or null by the text the author wrote (`1.10` stays
/// `"1.10"`, not the number 1.1): the open specification maps metadata
/// strings to strings, and a user's data must not change on the way in.
/// Strings, quoted or not, are already their text. Only a `metadata` holding
/// such a scalar pays for the second parse, which reads the source position
/// of every node under the same budget as the first; a value written as
/// nothing (`key:`) stays null.
fn metadata_as_written(raw: &str, metadata: &mut Value) {
    if !matches!(metadata, Value::Object(_) | Value::Array(_)) || !has_typed_scalar(metadata) {
        return;
    }
    #[derive(serde::Deserialize)]
    struct Top {
        metadata: Option<serde_saphyr::Spanned<Node>>,
    }
    // The first parse accepted the same text under the same options, so
    // this one fails only if the two disagree; the typed values then stay.
    if let Ok(Top {
        metadata: Some(node),
    }) = serde_saphyr::from_str_with_options::<Top>(raw, options())
    {
        *metadata = node.value.written(raw, &node.defined);
    }
}

/// Whether `value` holds, at any depth, a scalar that is not a string.
pub(crate) fn has_typed_scalar(value: &Value) -> bool {
    match value {
        Value::String(_) => false,
        Value::Array(items) => items.iter().any(has_typed_scalar),
        Value::Object(map) => map.values().any(has_typed_scalar),
        Value::Null | Value::Bool(_) | Value::Number(_) => true,
    }
}

/// One YAML node with the source position of each child, for
/// [`metadata_as_written`].
enum Node {
    Map(Vec<(String, serde_saphyr::Spanned<Node>)>),
    Seq(Vec<serde_saphyr::Spanned<Node>>),
    Scalar(Value),
}

impl Node {
    /// The JSON value with every typed scalar replaced by its source text.
    /// `at` is where the node is defined (an alias reads its anchor's text).
    fn written(self, raw: &str, at: &serde_saphyr::Location) -> Value {
        match self {
            Node::Map(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(key, node)| (key, node.value.written(raw, &node.defined)))
                    .collect(),
            ),
            Node::Seq(items) => Value::Array(
                items
                    .into_iter()
                    .map(|node| node.value.written(raw, &node.defined))
                    .collect(),
            ),
            Node::Scalar(Value::String(text)) => Value::String(text),
            Node::Scalar(typed) => {
                let span = at.span();
                let text = span
                    .byte_offset()
                    .zip(span.byte_len())
                    .and_then(|(at, len)| {
                        let start = usize::try_from(at).ok()?;
                        raw.get(start..start.checked_add(usize::try_from(len).ok()?)?)
                    });
                match text {
                    Some("") => Value::Null,
                    // A quoted scalar with a type tag (`!!int "5"`): its
                    // span holds the quotes, its value is the text.
                    Some(text) if !text.starts_with(['"', '\'', '!']) => {
                        Value::String(text.to_owned())
                    }
                    _ => match typed {
                        Value::Null => Value::Null,
                        other => Value::String(other.to_string()),
                    },
                }
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for Node {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Node;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a YAML node")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
                Ok(Node::Scalar(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
                Ok(Node::Scalar(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
                Ok(Node::Scalar(Value::from(v)))
            }
            fn visit_i128<E>(self, v: i128) -> Result<Node, E> {
                Ok(Node::Scalar(Value::String(v.to_string())))
            }
            fn visit_u128<E>(self, v: u128) -> Result<Node, E> {
                Ok(Node::Scalar(Value::String(v.to_string())))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
                Ok(Node::Scalar(Value::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Node, E> {
                Ok(Node::Scalar(Value::String(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Node, E> {
                Ok(Node::Scalar(Value::String(v)))
            }
            fn visit_unit<E>(self) -> Result<Node, E> {
                Ok(Node::Scalar(Value::Null))
            }
            fn visit_none<E>(self) -> Result<Node, E> {
                Ok(Node::Scalar(Value::Null))
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                serde::Deserialize::deserialize(d)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Node::Seq(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Node::Map(entries))
            }
        }
        deserializer.deserialize_any(Visit)
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

/// Top-level fields whose value is a string by the spec (or, for
/// `argument-hint`, by the agent formats skills are shared with). Only these
/// are recovered from an indicator start or a block-scalar header with
/// text: for them the author's intent, text, is clear.
const STRING_FIELDS: &[&str] = &[
    "id",
    "name",
    "description",
    "version",
    "license",
    "compatibility",
    "model",
    "thinking_effort",
    "argument-hint",
];

/// Characters that, first in a value, make YAML read something other than a
/// plain string (or reject it): flow collections, alias, anchor, tag, block
/// sequence, block scalars, directive and the reserved `@` and `` ` ``.
const INDICATORS: [char; 11] = ['[', '{', '*', '-', '@', '`', '!', '&', '|', '>', '%'];

/// Rewrites, in memory, values that make the front matter invalid YAML but
/// whose intent is clear, each as a double-quoted string:
///
/// - a plain one-line value holding `: ` (`description: Use when: asked`),
///   at any depth of block mappings (`metadata:` / `  short-description:
///   What's included: builds`);
/// - a top-level block-scalar header followed by text on its line
///   (`description: >- Use when ...`), read with its more-indented
///   continuation lines as the block scalar the author meant;
/// - a top-level string field's value starting with an indicator character
///   that is not valid YAML as written (`description: [AUTO] Use when ...`),
///   read as plain text (with any more-indented continuation lines folded in).
///
/// A value that is valid YAML on its own (a list, say) is never rewritten:
/// if the field rejects its type, that stays an error. Lines inside a block
/// scalar, a quoted value running over several lines, a list or any other
/// value's continuation are not keys and are left alone. A repaired value
/// keeps its line: lines it consumed become blank ones, so every position
/// in the result is the position in `raw`. `None` when nothing applies.
/// The caller keeps the result only if the whole text then parses.
fn recover(raw: &str) -> Option<(String, Vec<Repair>)> {
    // A lone CR is a line break to YAML but not to the line logic below;
    // such rare files keep their error rather than risk a wrong reading.
    if has_lone_cr(raw) {
        return None;
    }
    let lines: Vec<&str> = raw.split_inclusive('\n').collect();
    let mut out = String::with_capacity(raw.len() + 16);
    let mut repairs = Vec::new();
    let mut shape = Shape::default();
    let mut index = 0;
    while let Some(line) = lines.get(index) {
        let Some(indent) = shape.key_line(line) else {
            out.push_str(line);
            index += 1;
            continue;
        };
        let top_level = shape.levels.len() == 1;
        let (continued_to, fix) = match recover_line(&lines, index, indent, top_level) {
            Some(found) => found,
            None => {
                shape.after_key_line(line, indent);
                out.push_str(line);
                index += 1;
                continue;
            }
        };
        let (key, column, kind, value) = fix;
        // A repaired flow list is already the YAML to write; every other
        // repair reads as one string.
        let quoted = match kind {
            RepairKind::ReservedFlowItem { .. } => value,
            _ => double_quoted(&value),
        };
        out.push_str(&line[..indent]);
        out.push_str(key);
        out.push_str(": ");
        out.push_str(&quoted);
        let last = lines.get(continued_to).copied().unwrap_or(line);
        let ending = line_ending(last);
        out.push_str(ending);
        for _ in index..continued_to {
            out.push_str(ending);
        }
        let mut path: Vec<&str> = shape.levels.iter().filter_map(|l| l.key).collect();
        path.push(key);
        repairs.push(Repair {
            line: u32::try_from(index + 1).unwrap_or(u32::MAX),
            column,
            key: key.to_owned(),
            path: path.join("."),
            kind,
            quoted,
        });
        // The value is now one quoted line: what follows is a sibling or
        // an outer key, or (more indented) not a key.
        shape.skip_above = Some(indent);
        index = continued_to + 1;
    }
    (!repairs.is_empty()).then_some((out, repairs))
}

/// Where [`recover`] is in the block structure: which lines are keys of a
/// block mapping (and of which parent keys), and which continue a value.
#[derive(Default)]
struct Shape<'a> {
    /// The open block mappings, outermost first: the indentation of their
    /// keys and the key they are the value of (`None` at the top).
    levels: Vec<Level<'a>>,
    /// A key written with no value on its line (at this indentation): a
    /// more-indented line below opens its nested mapping.
    pending: Option<(usize, &'a str)>,
    /// Lines indented more than this continue the last value (a block
    /// scalar, a list, a plain or flow value over several lines).
    skip_above: Option<usize>,
    /// A quoted value is open across lines (its quote character).
    open_quote: Option<char>,
}

struct Level<'a> {
    indent: usize,
    key: Option<&'a str>,
}

impl<'a> Shape<'a> {
    /// The indentation of `line` if it is a key line of a block mapping, as
    /// far as a line-by-line reading can tell; `None` for every other line
    /// (blank, comment, list item, continuation), after noting what it
    /// means for the lines below.
    fn key_line(&mut self, line: &'a str) -> Option<usize> {
        if self.levels.is_empty() {
            self.levels.push(Level {
                indent: 0,
                key: None,
            });
        }
        let text = line.trim_end_matches(['\n', '\r']);
        if let Some(quote) = self.open_quote {
            if closing_quote(text, quote).is_some() {
                self.open_quote = None;
                self.skip_above = Some(self.levels.last().map_or(0, |l| l.indent));
            }
            return None;
        }
        let body = text.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') {
            return None;
        }
        let indent = text.len() - body.len();
        if self.skip_above.is_some_and(|above| indent > above) {
            return None;
        }
        self.skip_above = None;
        match self.pending.take() {
            Some((parent, key)) if indent > parent => self.levels.push(Level {
                indent,
                key: Some(key),
            }),
            _ => {
                while self.levels.len() > 1 && self.levels.last().is_some_and(|l| l.indent > indent)
                {
                    self.levels.pop();
                }
            }
        }
        // A tab in the indentation, a list item, or a line at no level's
        // indentation: not a key, and nothing below it (more indented) is.
        if body.starts_with(['\t', '-']) || self.levels.last().is_none_or(|l| l.indent != indent) {
            self.skip_above = Some(indent);
            return None;
        }
        Some(indent)
    }

    /// Notes what a key line left as it was (not repaired) opens.
    fn after_key_line(&mut self, line: &'a str, indent: usize) {
        let text = line.trim_end_matches(['\n', '\r']);
        let body = &text[indent..];
        let Some((key, value)) = split_key_value(body) else {
            self.skip_above = Some(indent);
            return;
        };
        let value = value.trim();
        if value.is_empty() || value.starts_with('#') {
            if crate::parse::yaml_fast::is_plain_key(key) {
                self.pending = Some((indent, key));
            } else {
                self.skip_above = Some(indent);
            }
            return;
        }
        if let Some(quote) = value.chars().next().filter(|c| matches!(c, '"' | '\''))
            && closing_quote(&value[1..], quote).is_none()
        {
            self.open_quote = Some(quote);
            return;
        }
        self.skip_above = Some(indent);
    }
}

/// `(key, value)` of a `key: value` or `key:` line (the key ends at the
/// first `:` followed by a space or the line's end).
fn split_key_value(body: &str) -> Option<(&str, &str)> {
    let at = body
        .match_indices(':')
        .map(|(at, _)| at)
        .find(|&at| body[at + 1..].is_empty() || body[at + 1..].starts_with([' ', '\t']))?;
    Some((&body[..at], &body[at + 1..]))
}

/// The offset in `text` of the quote that closes a value opened with
/// `quote` before `text` began: `"` not escaped by `\\`, or `'` not doubled.
fn closing_quote(text: &str, quote: char) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        match (quote, b) {
            ('"', b'\\') => at += 2,
            ('"', b'"') => return Some(at),
            ('\'', b'\'') if bytes.get(at + 1) == Some(&b'\'') => at += 2,
            ('\'', b'\'') => return Some(at),
            _ => at += 1,
        }
    }
    None
}

/// What replaces one value: its key, the value's column, the shape and the
/// text read (for a flow list, the list as valid YAML).
type LineFix<'a> = (&'a str, u32, RepairKind, String);

/// The recovery for the value on `lines[index]`, a key line indented by
/// `indent` spaces, if one applies, with the index of the last line the
/// value spans. Only the `: ` repair applies below the top level: the
/// others need to know the field holds text.
fn recover_line<'a>(
    lines: &[&'a str],
    index: usize,
    indent: usize,
    top_level: bool,
) -> Option<(usize, LineFix<'a>)> {
    let line = lines.get(index)?.trim_end_matches(['\n', '\r']);
    let body = line.get(indent..)?;
    let colon = body.find(": ")?;
    let key = &body[..colon];
    if !crate::parse::yaml_fast::is_plain_key(key) {
        return None;
    }
    let after = &body[colon + 2..];
    let value = after.trim();
    if value.is_empty() {
        return None;
    }
    let column = u32::try_from(
        line[..line.len() - after.trim_start().len()]
            .chars()
            .count()
            + 1,
    )
    .unwrap_or(u32::MAX);
    // The more-indented (or blank) lines that continue this value in YAML,
    // which indents with spaces only.
    let mut last = index;
    for (at, next) in lines.iter().enumerate().skip(index + 1) {
        if next.trim().is_empty() {
            continue;
        }
        if next.len() - next.trim_start_matches(' ').len() <= indent {
            break;
        }
        last = at;
    }
    let continuation = lines.get(index + 1..=last).unwrap_or_default();
    let string_field = top_level && STRING_FIELDS.contains(&key);

    if string_field && let Some((header, text)) = block_header_with_text(value) {
        let literal = header.starts_with('|');
        let mut read = String::from(text);
        read.push_str(&block_continuation(continuation, literal));
        // Clip and keep chomping end the text with one line break; strip
        // chomping (`-`) ends it without.
        if !header.ends_with('-') {
            read.push('\n');
        }
        let kind = RepairKind::TextAfterBlockHeader {
            header: header.to_owned(),
        };
        return Some((last, (key, column, kind, read)));
    }

    // A comment or text? ` #` is a comment to YAML; leave such lines alone.
    let commented = |text: &str| text.contains(" #") || text.contains("\t#");
    if let Some(indicator) = value.chars().next().filter(|c| INDICATORS.contains(c))
        && string_field
        && !commented(value)
        && continuation.iter().all(|l| !commented(l))
    {
        // Valid YAML as written (a list, an anchored string, a block
        // scalar) keeps its meaning, even a type the field rejects.
        let mut alone = format!("{key}: {value}\n");
        alone.extend(
            continuation
                .iter()
                .map(|l| l.trim_end_matches(['\n', '\r']))
                .flat_map(|l| [l, "\n"]),
        );
        if parse_full(&alone).is_ok() {
            return None;
        }
        let mut read = String::from(value);
        read.push_str(&plain_continuation(continuation));
        let kind = RepairKind::IndicatorStart { indicator };
        return Some((last, (key, column, kind, read)));
    }

    if last == index
        && !commented(value)
        && let Some((indicator, list)) = reserved_flow_items(value)
        && parse_full(&format!("{key}: {value}\n")).is_err()
        && parse_full(&format!("{key}: {list}\n")).is_ok()
    {
        return Some((
            index,
            (
                key,
                column,
                RepairKind::ReservedFlowItem { indicator },
                list,
            ),
        ));
    }

    let has_colon = value.contains(": ") || value.ends_with(':');
    let starts_plain = !value.starts_with(['\'', '"', '#']) && !value.starts_with(INDICATORS);
    // Continued on the next line, the value's extent is not clear.
    (has_colon && starts_plain && !commented(value) && last == index).then(|| {
        (
            index,
            (key, column, RepairKind::UnquotedColon, value.to_owned()),
        )
    })
}

/// Reserved indicators: no YAML value may start with one, so an item that
/// does is text whatever else it holds.
const RESERVED: [char; 2] = ['@', '`'];

/// For a one-line flow list of plain items (`[next,@supabase/ssr]`: no
/// nested collection, no quote) with an item starting with a reserved
/// indicator, that indicator and the list with such items double-quoted
/// (`[next, "@supabase/ssr"]`). A trailing comma is allowed, as in YAML;
/// an empty item is not.
fn reserved_flow_items(value: &str) -> Option<(char, String)> {
    let inner = value.strip_prefix('[')?.strip_suffix(']')?;
    if inner.contains(['[', ']', '{', '}', '"', '\'']) {
        return None;
    }
    let mut items: Vec<&str> = inner.split(',').map(str::trim).collect();
    if items.len() > 1 && items.last().is_some_and(|last| last.is_empty()) {
        items.pop();
    }
    if items.iter().any(|item| item.is_empty()) {
        return None;
    }
    let indicator = items
        .iter()
        .find_map(|item| item.chars().next().filter(|c| RESERVED.contains(c)))?;
    let written: Vec<String> = items
        .iter()
        .map(|item| {
            if item.starts_with(RESERVED) {
                double_quoted(item)
            } else {
                (*item).to_owned()
            }
        })
        .collect();
    Some((indicator, format!("[{}]", written.join(", "))))
}

/// `(header, text)` when `value` is a block-scalar header (`|` or `>`, with
/// an optional `-` or `+`) followed by white space and text that is not a
/// comment.
fn block_header_with_text(value: &str) -> Option<(&str, &str)> {
    if !value.starts_with(['|', '>']) {
        return None;
    }
    let header_len = if value[1..].starts_with(['-', '+']) {
        2
    } else {
        1
    };
    let (header, rest) = value.split_at(header_len);
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let text = rest.trim_start();
    (!text.is_empty() && !text.starts_with('#')).then_some((header, text))
}

/// The continuation lines of a block scalar as YAML would read them under a
/// header (their common indentation removed), each preceded by the break
/// that joins it to the text before: a line break for a literal (`|`)
/// scalar; for a folded (`>`) one a space between lines, a line break per
/// blank line.
fn block_continuation(lines: &[&str], literal: bool) -> String {
    let body: Vec<&str> = lines
        .iter()
        .map(|l| l.trim_end_matches(['\n', '\r']))
        .collect();
    let indent = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    let texts = body.into_iter().map(|line| {
        if line.trim().is_empty() {
            ""
        } else {
            line.get(indent..).unwrap_or(line).trim_end()
        }
    });
    join_continuation(texts, literal)
}

/// Continuation lines of a plain scalar, folded as YAML folds them: a space
/// between lines, a line break per blank line.
fn plain_continuation(lines: &[&str]) -> String {
    join_continuation(lines.iter().map(|line| line.trim()), false)
}

/// Joins continuation texts (`""` for a blank line), each preceded by the
/// break YAML puts before it: a line break per line for a literal scalar;
/// folded, a space between lines and a line break per blank line.
fn join_continuation<'a>(texts: impl Iterator<Item = &'a str>, literal: bool) -> String {
    let mut out = String::new();
    let mut blanks = 0;
    for text in texts {
        if text.is_empty() {
            blanks += 1;
            continue;
        }
        if literal {
            out.push_str(&"\n".repeat(blanks + 1));
        } else if blanks == 0 {
            out.push(' ');
        } else {
            out.push_str(&"\n".repeat(blanks));
        }
        blanks = 0;
        out.push_str(text);
    }
    out
}

/// `text` as a YAML double-quoted scalar that reads back as exactly `text`.
fn double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn line_ending(line: &str) -> &'static str {
    if line.ends_with("\r\n") {
        "\r\n"
    } else if line.ends_with('\n') {
        "\n"
    } else {
        ""
    }
}

/// Whether `raw` holds a CR not followed by an LF.
fn has_lone_cr(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    bytes
        .iter()
        .enumerate()
        .any(|(at, &b)| b == b'\r' && bytes.get(at + 1) != Some(&b'\n'))
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
                column: 14,
                key: "description".into(),
                path: "description".into(),
                kind: RepairKind::UnquotedColon,
                quoted: r#""Use when: the user asks \"why\"""#.into()
            }]
        );
    }

    /// One recovered value: the parsed mapping and the (line, column, kind)
    /// of each repair.
    fn check_recovered(raw: &str, expected: Value, repairs: &[(u32, u32, RepairKind)]) {
        assert!(
            parse_full(raw).is_err(),
            "valid YAML is never repaired: {raw:?}"
        );
        let (value, found) = ok(raw);
        let found: Vec<_> = found
            .into_iter()
            .map(|r| (r.line, r.column, r.kind))
            .collect();
        assert_eq!((value, found.as_slice()), (expected, repairs), "{raw:?}");
    }

    #[test]
    fn recovers_text_after_a_block_scalar_header() {
        let block = |header: &str| RepairKind::TextAfterBlockHeader {
            header: header.into(),
        };
        check_recovered(
            "name: x\ndescription: | Use when asked\n  to do it\n\n    indented\nversion: 1.0.0\n",
            json!({"name": "x", "description": "Use when asked\nto do it\n\n  indented\n", "version": "1.0.0"}),
            &[(2, 14, block("|"))],
        );
        check_recovered(
            "description: >- Use when asked\n  to fold\n  these\n",
            json!({"description": "Use when asked to fold these"}),
            &[(1, 14, block(">-"))],
        );
        check_recovered(
            "description: >  Use when asked\r\nname: x\r\n",
            json!({"description": "Use when asked\n", "name": "x"}),
            &[(1, 14, block(">"))],
        );
        check_recovered(
            "description: |+\tUse \"when\" \\ # not a comment\n",
            json!({"description": "Use \"when\" \\ # not a comment\n"}),
            &[(1, 14, block("|+"))],
        );
    }

    #[test]
    fn recovers_values_starting_with_an_indicator() {
        let start = |indicator| RepairKind::IndicatorStart { indicator };
        for (value, indicator) in [
            ("[AUTO-INVOKE] MUST be invoked first", '['),
            ("**This applies to every file**", '*'),
            ("- Define a schema", '-'),
            ("{program.description} Use when asked", '{'),
            ("@react-three/drei helper", '@'),
            ("`macro` is a helper", '`'),
            ("![](logo.png) Draws logos", '!'),
            ("&amp; entities, decoded: yes", '&'),
            ("%TAG is a directive", '%'),
            ("|pipes| in text", '|'),
            (">5 stars", '>'),
        ] {
            check_recovered(
                &format!("name: x\ndescription: {value}\n"),
                json!({"name": "x", "description": value}),
                &[(2, 14, start(indicator))],
            );
        }
        // More-indented lines continue the text, as for any plain value.
        check_recovered(
            "description: [AUTO] Use when\n  asked: now\n\n  twice\nname: x\n",
            json!({"description": "[AUTO] Use when asked: now\ntwice", "name": "x"}),
            &[(1, 14, start('['))],
        );
        // Every repair in one file, the `: ` one included.
        check_recovered(
            "name: [x] y\ndescription: > a\nversion: @1\nlicense: MIT: yes\n",
            json!({"name": "[x] y", "description": "a\n", "version": "@1", "license": "MIT: yes"}),
            &[
                (1, 7, start('[')),
                (
                    2,
                    14,
                    RepairKind::TextAfterBlockHeader { header: ">".into() },
                ),
                (3, 10, start('@')),
                (4, 10, RepairKind::UnquotedColon),
            ],
        );
    }

    #[test]
    fn recovers_reserved_items_of_a_flow_list() {
        let item = |indicator| RepairKind::ReservedFlowItem { indicator };
        // Any field, at any depth: the list stays a list, the item text.
        check_recovered(
            "name: x\ntags: [next,@supabase/ssr]\ndescription: Kept.\n",
            json!({"name": "x", "tags": ["next", "@supabase/ssr"], "description": "Kept."}),
            &[(2, 7, item('@'))],
        );
        check_recovered(
            "metadata:\n  tags: [ `a`, b , @c/d, ]\n",
            json!({"metadata": {"tags": ["`a`", "b", "@c/d"]}}),
            &[(2, 9, item('`'))],
        );
        let (_, repairs) = ok("tags: [next,@supabase/ssr]\n");
        assert_eq!(repairs[0].quoted, r#"[next, "@supabase/ssr"]"#);
        // Not a plain one-line list of plain items: left as the error it is.
        for raw in [
            "tags: [a, @b\n  , c]\n",
            "tags: [a, [@b]]\n",
            "tags: [a, \"@b]\n",
            "tags: [a,, @b]\n",
            "tags: [a, @b] # note\n",
            "tags: [a, *b]\n",
        ] {
            assert!(parse(raw).is_err(), "{raw:?}: {:?}", parse(raw));
        }
    }

    #[test]
    fn leaves_errors_whose_intent_is_not_clear() {
        for raw in [
            // Valid YAML of another type stays what it is; the file's other
            // error is not hidden by rewriting it.
            "description: [a, b]\nbroken: \"x\n",
            "description: &anchor text\nbroken: \"x\n",
            "description: *alias\nbroken: \"x\n",
            // Not a string field.
            "metadata: [x] y\n",
            "keywords: - a\n",
            // A comment, or text?
            "description: [x] y # note\n",
            "description: [x] y\n  more # note\n",
            // The rest still does not parse.
            "description: [AUTO] x\n\tbad: tab\n",
            "description: | x\nname: \"unclosed\n",
            // Indented: not a top-level field.
            "metadata:\n  description: [x] y\n",
            // A lone CR.
            "description: [x] y\rname: z\r",
        ] {
            assert!(parse(raw).is_err(), "{raw:?}: {:?}", parse(raw));
        }
        // A valid list stays a list (the validator then rejects it).
        assert_eq!(
            ok("description: [a, b]\nname: a: b\n").0,
            json!({"description": ["a", "b"], "name": "a: b"})
        );
    }

    #[test]
    fn metadata_scalars_are_kept_as_written() {
        let written = json!({"version": "1.10", "flag": "true", "hex": "0x10", "exp": "1e3",
                             "tilde": "~", "nil": "null", "quoted": "1.10", "empty": null});
        for raw in [
            "metadata: {version: 1.10, flag: true, hex: 0x10, exp: 1e3, tilde: ~, nil: null, quoted: \"1.10\", empty: }\n",
            "metadata:\n  version: 1.10\n  flag: true\n  hex: 0x10 \n  exp: 1e3 # a comment\n  tilde: ~\n  nil: null\n  quoted: '1.10'\n  empty:\n",
        ] {
            assert_eq!(ok(raw).0, json!({ "metadata": written }), "{raw:?}");
        }
        // Nested maps and lists keep their shape; an alias reads its
        // anchor's text; other fields keep YAML's typing.
        assert_eq!(
            ok("version: 1.10\nhidden: true\nmetadata:\n  a: &v 2.50\n  b: *v\n  deep: {list: [1.0, false, x], map: {n: -7}}\n  é: 1.\n").0,
            json!({"version": 1.1, "hidden": true, "metadata": {"a": "2.50", "b": "2.50",
                   "deep": {"list": ["1.0", "false", "x"], "map": {"n": "-7"}}, "é": "1."}})
        );
        // What another agent's YAML reader sees stays available for the
        // portability lint.
        assert_eq!(
            Value::Object(parse_typed("metadata: {version: 1.10}\n").unwrap()),
            json!({"metadata": {"version": 1.1}})
        );
        // A repaired file keeps its metadata as written too.
        assert_eq!(
            ok("description: Use when: asked\nmetadata:\n  version: 1.10\n").0,
            json!({"description": "Use when: asked", "metadata": {"version": "1.10"}})
        );
    }

    #[test]
    fn recovers_an_unquoted_colon_at_any_depth() {
        let (value, repairs) = ok(
            "name: x\nmetadata:\n  short-description: What's included: builds\n  deeper:\n    note: a: b\n  after: y\nlast: z: w\n",
        );
        assert_eq!(
            value,
            json!({"name": "x", "metadata": {"short-description": "What's included: builds",
                   "deeper": {"note": "a: b"}, "after": "y"}, "last": "z: w"})
        );
        let found: Vec<_> = repairs
            .iter()
            .map(|r| (r.line, r.column, r.path.as_str(), r.quoted.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    3,
                    22,
                    "metadata.short-description",
                    "\"What's included: builds\""
                ),
                (5, 11, "metadata.deeper.note", "\"a: b\""),
                (7, 7, "last", "\"z: w\""),
            ]
        );
    }

    #[test]
    fn lines_inside_other_values_are_not_repaired() {
        // Each file is invalid for its last line alone; the line that looks
        // like a nested key belongs to a block scalar, a quoted value, a
        // list or a plain value's continuation and must stay as written.
        for raw in [
            "description: |\n  key: a: b\nbroken: \"x\n",
            "description: \"first\n  key: a: b\"\nbroken: \"x\n",
            "items:\n  - key: a: b\nbroken: \"x\n",
            "description: plain\n  key: a: b\n",
        ] {
            let err = parse(raw).unwrap_err();
            assert_eq!(err.repairs, vec![], "{raw:?}");
        }
    }

    #[test]
    fn a_file_still_invalid_reports_every_repair_and_the_error() {
        let err = parse("name: a: b\nmetadata:\n  note: c: d\nbroken: \"x\n").unwrap_err();
        let found: Vec<_> = err
            .repairs
            .iter()
            .map(|r| (r.line, r.column, r.path.as_str()))
            .collect();
        assert_eq!(
            (
                found.as_slice(),
                err.message.as_str(),
                err.line,
                err.too_complex
            ),
            (
                &[(1, 7, "name"), (3, 9, "metadata.note")][..],
                "unclosed quote",
                Some(4),
                false
            )
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
        // Under `metadata`, whose typed scalars trigger a second parse, the
        // bomb is rejected by the first.
        let nested: String = bomb.lines().map(|l| format!("  {l}\n")).collect();
        let err = parse(&format!("metadata:\n{nested}")).unwrap_err();
        assert!(err.too_complex, "{err:?}");
        // Aliases within the budget read their anchor's text.
        assert_eq!(
            ok("metadata:\n  a: &x 1.50\n  b: [*x, *x]\n").0,
            json!({"metadata": {"a": "1.50", "b": ["1.50", "1.50"]}})
        );
        let deep = format!("a: {}{}\n", "[".repeat(20_000), "]".repeat(20_000));
        let err = parse(&deep).unwrap_err();
        assert!(err.too_complex, "{err:?}");
    }
}

/// Whether [`parse`] reads `raw` exactly as the full parser does whenever
/// the full parser accepts it (recovery must never change the meaning of a
/// valid file), and otherwise either fails or says what it repaired.
#[cfg(test)]
pub(crate) fn recovery_agrees(raw: &str) -> Result<(), String> {
    match (parse_full(raw), parse(raw)) {
        (Ok(full), Ok((map, repairs))) if full == map && repairs.is_empty() => Ok(()),
        (Err(_), Err(_)) => Ok(()),
        (Err(_), Ok((_, repairs))) if !repairs.is_empty() => Ok(()),
        (full, ours) => Err(format!(
            "full parser {full:?} but parse {ours:?} for {raw:?}"
        )),
    }
}

#[cfg(test)]
mod differential {
    use super::recovery_agrees;
    use proptest::prelude::*;

    fn key() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            Just("description"),
            Just("name"),
            Just("version"),
            Just("argument-hint"),
            Just("metadata"),
            Just("keywords"),
            Just("other"),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        "[A-Za-z][A-Za-z0-9 .,()/#:'\"-]{0,16}"
    }

    /// Values of the shapes recovery looks at, valid and invalid alike.
    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            text(),
            text().prop_map(|t| format!("\"{}\"", t.replace(['"', '\\'], ""))),
            (
                prop_oneof![Just("|"), Just("|-"), Just(">"), Just(">-"), Just(">+")],
                text()
            )
                .prop_map(|(h, t)| format!("{h} {t}")),
            prop_oneof![Just("|"), Just(">-"), Just("| # c")].prop_map(str::to_owned),
            (
                prop_oneof![
                    Just("["),
                    Just("{"),
                    Just("*"),
                    Just("**"),
                    Just("- "),
                    Just("-"),
                    Just("@"),
                    Just("`"),
                    Just("!"),
                    Just("![]("),
                    Just("&"),
                    Just("&a "),
                    Just("%"),
                    Just("|"),
                    Just(">"),
                ],
                text()
            )
                .prop_map(|(i, t)| format!("{i}{t}")),
            text().prop_map(|t| format!("[{t}]")),
            text().prop_map(|t| format!("[{t},@{t}]")),
            text().prop_map(|t| format!("[`{t}`, {t}, ]")),
            text().prop_map(|t| format!("[{t}] {t}")),
            text().prop_map(|t| format!("{{x: {t}}}")),
            Just("[a, b]".to_owned()),
            Just("&a x".to_owned()),
            Just("*a".to_owned()),
            Just("!!str x".to_owned()),
        ]
    }

    fn continuation() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            text().prop_map(|t| format!("  {t}\n")),
            text().prop_map(|t| format!("  {t}\n\n    {t}\n")),
            text().prop_map(|t| format!("  - {t}\n")),
            text().prop_map(|t| format!("\t{t}\n")),
            text().prop_map(|t| format!("  k: {t}\n")),
        ]
    }

    fn nested_key() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            Just("short-description"),
            Just("version"),
            Just("author"),
            Just("description"),
        ]
    }

    /// Indents every line of `text` by `by` more spaces.
    fn indented(text: &str, by: usize) -> String {
        text.split_inclusive('\n')
            .map(|line| format!("{}{line}", " ".repeat(by)))
            .collect()
    }

    fn document() -> impl Strategy<Value = String> {
        let top = (key(), value(), continuation()).prop_map(|(k, v, c)| format!("{k}: {v}\n{c}"));
        // Keys one and two levels down, and lines that look like keys but
        // sit inside a block scalar, a quoted value or a list.
        let entry = prop_oneof![
            3 => top,
            2 => (key(), nested_key(), value(), continuation())
                .prop_map(|(k, n, v, c)| format!("{k}:\n  {n}: {v}\n{}", indented(&c, 2))),
            1 => (key(), nested_key(), nested_key(), value())
                .prop_map(|(k, n, m, v)| format!("{k}:\n  {n}:\n    {m}: {v}\n  {m}: {v}\n")),
            1 => (key(), nested_key(), text(), text())
                .prop_map(|(k, n, a, b)| format!("{k}: |\n  {n}: {a}: {b}\n")),
            1 => (key(), nested_key(), text())
                .prop_map(|(k, n, a)| format!("{k}: \"{}\n  {n}: {}\"\n", a.replace(['"', '\\'], ""), a.replace(['"', '\\'], ""))),
            1 => (key(), nested_key(), text())
                .prop_map(|(k, n, a)| format!("{k}:\n  - {n}: {a}\n  - {a}\n")),
        ];
        let ending = prop_oneof![Just("\n"), Just("\r\n")];
        (proptest::collection::vec(entry, 0..5), ending)
            .prop_map(|(entries, ending)| entries.concat().replace('\n', ending))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn recovery_never_changes_a_valid_file(raw in document()) {
            prop_assert_eq!(recovery_agrees(&raw), Ok(()));
        }
    }
}
