//! A fast path for the plain YAML front matter most skills use: top-level
//! `key: value` lines with plain or quoted strings, block or flow lists of
//! strings, and one level of nested mappings of those (`activation:` /
//! `keywords:`, `metadata:`). Anything else (numbers, booleans and null,
//! escapes, block scalars, anchors, tags, comments after values, continued
//! lines, duplicate keys) returns `None` and the full parser decides. Under
//! `metadata`, whose scalars are kept as written, a plain number, boolean or
//! null is read here too, as its text.
//!
//! Parsing front matter was two thirds of a cold discovery, and this subset
//! covers almost every real file; a differential test holds it to the full
//! parser's results on every file it accepts.

use serde_json::{Map, Value};

use crate::parse::front_matter::MAX_NODES;

/// The parsed mapping, or `None` when the text is outside the subset.
pub fn parse_simple(raw: &str) -> Option<Map<String, Value>> {
    // YAML trims only spaces and tabs and rejects most control characters;
    // Rust's `trim` knows all of Unicode's spaces. Text with a tab, a
    // control character or a non-ASCII space is the full parser's.
    let unusual = |c: char| {
        c == '\t'
            || (c.is_control() && c != '\n' && c != '\r')
            || (c.is_whitespace() && !c.is_ascii())
    };
    // Bytes first: pure ASCII without tabs or control characters (nearly
    // every file) is settled by a branch-free fold the compiler vectorises;
    // only text with a candidate byte is decoded char by char.
    // The same pass notes any CR (bit 1).
    let suspect = |b: u8| (b < 0x20 && b != b'\n' && b != b'\r') | (b >= 0x7f);
    let flags = raw.bytes().fold(0u8, |acc, b| {
        acc | u8::from(suspect(b)) | (u8::from(b == b'\r') << 1)
    });
    if flags & 1 != 0 && raw.chars().any(unusual) {
        return None;
    }
    let content = |l: &&str| {
        let t = l.trim_start();
        !(t.is_empty() || t.starts_with('#'))
    };
    // Sized for a typical front matter at once (a filtered iterator would
    // start at four and grow).
    let mut lines: Vec<&str> = Vec::with_capacity(32);
    if flags & 2 == 0 {
        lines.extend(raw.split('\n').filter(content));
    } else {
        // YAML breaks lines at LF, CRLF and a lone CR alike. CRLF files
        // split at LF and drop the CR; a CR left inside a line is a lone one.
        let mut lone_cr = false;
        lines.extend(
            raw.split('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l))
                .filter(|l| {
                    lone_cr |= l.contains('\r');
                    content(l)
                }),
        );
        if lone_cr {
            // Splitting at either byte turns a CRLF into a line and an
            // empty one, and empty lines carry no meaning in this subset,
            // so all three read as YAML reads them. Only the rare file with
            // a lone CR pays for the two-byte split.
            lines.clear();
            lines.extend(raw.split(['\n', '\r']).filter(content));
        }
    }
    let mut pos = 0;
    let map = mapping(&lines, &mut pos, 0, 0, false)?;
    if pos != lines.len() {
        return None;
    }
    // The full parser's node budget holds here too: a file over it is the
    // full parser's to reject. Every node of this subset takes at least a
    // byte of text, so only a file that long can be over it.
    if raw.len() >= MAX_NODES && nodes(&map) > MAX_NODES {
        return None;
    }
    Some(map)
}

/// Nodes as the full parser's budget counts them: the mapping itself, then
/// every key and value, and every item of a list.
fn nodes(map: &Map<String, Value>) -> usize {
    fn value(v: &Value) -> usize {
        match v {
            Value::Array(items) => 1 + items.iter().map(value).sum::<usize>(),
            Value::Object(map) => nodes(map),
            _ => 1,
        }
    }
    1 + map.values().map(|v| 1 + value(v)).sum::<usize>()
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A block mapping whose keys sit at exactly `indent` spaces. `written`:
/// inside `metadata`, where every scalar is kept as its text.
fn mapping(
    lines: &[&str],
    pos: &mut usize,
    indent: usize,
    depth: usize,
    written: bool,
) -> Option<Map<String, Value>> {
    let mut map = Map::new();
    while let Some(line) = lines.get(*pos) {
        let here = indent_of(line);
        if here < indent {
            break;
        }
        if here > indent {
            return None;
        }
        let (key, rest) = split_key(&line[indent..])?;
        if map.contains_key(key) {
            return None;
        }
        *pos += 1;
        let written = written || (depth == 0 && key == "metadata");
        let value = if rest.is_empty() {
            block_value(lines, pos, indent, depth, written)?
        } else {
            // A value on the key's line may not continue on the next one.
            if lines.get(*pos).is_some_and(|next| indent_of(next) > indent) {
                return None;
            }
            inline_value(rest, written && depth > 0)?
        };
        map.insert(key.to_owned(), value);
    }
    Some(map)
}

/// What follows `key:` on the lines below: a list, a nested mapping, or null.
fn block_value(
    lines: &[&str],
    pos: &mut usize,
    parent: usize,
    depth: usize,
    written: bool,
) -> Option<Value> {
    let Some(next) = lines.get(*pos) else {
        return Some(Value::Null);
    };
    let indent = indent_of(next);
    if indent <= parent {
        return Some(Value::Null);
    }
    let body = &next[indent..];
    if body == "-" || body.starts_with("- ") {
        let mut items = Vec::new();
        while let Some(line) = lines.get(*pos) {
            let here = indent_of(line);
            if here < indent {
                break;
            }
            let item = line[here..].strip_prefix("- ").filter(|_| here == indent)?;
            items.push(inline_value(item.trim_start(), written).filter(Value::is_string)?);
            *pos += 1;
            if lines.get(*pos).is_some_and(|n| indent_of(n) > indent) {
                return None;
            }
        }
        return Some(Value::Array(items));
    }
    if depth >= 1 {
        return None;
    }
    mapping(lines, pos, indent, depth + 1, written).map(Value::Object)
}

/// A key YAML reads as itself without quoting: an ASCII letter or `_`, then
/// letters, digits, `_`, `-` or `.`. Shared with the `: ` repair in `yaml.rs`.
pub(crate) fn is_plain_key(key: &str) -> bool {
    key.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// `key: rest` with a plain ASCII key; `rest` is empty for a block value.
fn split_key(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(':')?;
    let key = &line[..colon];
    if !is_plain_key(key) {
        return None;
    }
    let rest = &line[colon + 1..];
    if rest.is_empty() {
        return Some((key, ""));
    }
    // `key:value` without a space is one plain scalar in YAML, not a pair.
    let rest = rest.strip_prefix(' ')?.trim();
    Some((key, rest))
}

/// A value written on one line: a quoted or plain string, or a flow list
/// of them. `written`: plain scalars are kept as their text.
fn inline_value(text: &str, written: bool) -> Option<Value> {
    let text = text.trim_end();
    if let Some(inner) = text.strip_prefix('[') {
        return flow_list(inner.strip_suffix(']')?, written).map(Value::Array);
    }
    if let Some(inner) = text.strip_prefix('"') {
        let inner = inner.strip_suffix('"')?;
        return (!inner.contains(['"', '\\'])).then(|| Value::String(inner.to_owned()));
    }
    if let Some(inner) = text.strip_prefix('\'') {
        let inner = inner.strip_suffix('\'')?;
        // Inside single quotes only `''` is special; a lone quote ends it.
        if inner.replace("''", "").contains('\'') {
            return None;
        }
        return Some(Value::String(inner.replace("''", "'")));
    }
    // The two booleans every YAML reads alike (`disable-model-invocation:
    // true` is how hidden skills are written); `True`, `yes` and the rest
    // stay with the full parser.
    match text {
        "true" if !written => return Some(Value::Bool(true)),
        "false" if !written => return Some(Value::Bool(false)),
        _ => {}
    }
    plain(text, written)
}

/// The items of a flow list (`[a, "b", 'c']`, without the brackets): plain
/// or quoted strings separated by commas. Quoted items may hold commas and
/// brackets; anything nested, escaped or trailing is left to the full parser.
fn flow_list(inner: &str, written: bool) -> Option<Vec<Value>> {
    let mut items = Vec::new();
    let mut rest = inner.trim();
    if rest.is_empty() {
        return Some(items);
    }
    loop {
        let (item, after) = if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"')?;
            let body = &quoted[..end];
            if body.contains('\\') {
                return None;
            }
            (Value::String(body.to_owned()), &quoted[end + 1..])
        } else if let Some(quoted) = rest.strip_prefix('\'') {
            // The closing quote is the first one not doubled.
            let bytes = quoted.as_bytes();
            let mut at = 0;
            let end = loop {
                let next = at + quoted[at..].find('\'')?;
                if bytes.get(next + 1) == Some(&b'\'') {
                    at = next + 2;
                } else {
                    break next;
                }
            };
            let body = quoted[..end].replace("''", "'");
            (Value::String(body), &quoted[end + 1..])
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            let text = rest[..end].trim();
            if text.contains(['[', ']', '{', '}', '"', '\'', '#']) {
                return None;
            }
            (plain(text, written)?, &rest[end..])
        };
        items.push(item);
        let after = after.trim_start_matches(' ');
        if after.is_empty() {
            return Some(items);
        }
        rest = after.strip_prefix(',')?.trim_start_matches(' ');
        if rest.is_empty() {
            return None;
        }
    }
}

/// A plain scalar that YAML can only read as a string; or, `written`, any
/// plain scalar without an indicator, as its text (`1.10`, `true`, `~`).
fn plain(text: &str, written: bool) -> Option<Value> {
    let mut chars = text.chars();
    let first = chars.next()?;
    // Letters only: digits, signs and dots could be numbers, and every
    // indicator character changes the meaning. Kept as text, a number is
    // as good as a word; `-` is an indicator unless a digit or dot follows.
    let starts_number = || {
        first.is_ascii_digit()
            || matches!(first, '+' | '~')
            || (matches!(first, '-' | '.')
                && chars
                    .clone()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || (first == '-' && c == '.')))
    };
    if !(first.is_alphabetic() || (written && starts_number())) {
        return None;
    }
    // `: ` (a nested mapping) or ` #` (a comment) anywhere, or a trailing
    // `:`. One branch-free pass over byte pairs, which the compiler
    // vectorises: descriptions are most of the front matter's bytes, and
    // three substring searches over each were a visible share of parsing.
    let bytes = text.as_bytes();
    let breaks = bytes
        .iter()
        .zip(bytes.iter().skip(1))
        .fold(false, |hit, (&a, &b)| {
            hit | ((a == b':') & (b == b' ')) | ((a == b' ') & (b == b'#'))
        });
    if breaks || text.ends_with(':') {
        return None;
    }
    const SPECIAL: [&str; 12] = [
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "nan", "inf", "~",
    ];
    if !written && text.len() <= 5 && SPECIAL.iter().any(|s| text.eq_ignore_ascii_case(s)) {
        return None;
    }
    Some(Value::String(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(raw: &str, expected: Option<Value>) {
        assert_eq!(parse_simple(raw).map(Value::Object), expected, "{raw:?}");
    }

    /// 4,999 keys and values and the mapping are 9,999 nodes; one more key
    /// is over the full parser's budget, so the fast path leaves it there.
    #[test]
    fn a_file_over_the_node_budget_is_the_full_parsers() {
        let keys = |n: usize| (0..n).map(|i| format!("k{i}: v\n")).collect::<String>();
        assert_eq!(parse_simple(&keys(4_999)).map(|m| m.len()), Some(4_999));
        assert_eq!(parse_simple(&keys(5_000)), None);
        let long_lists = format!("a: [{}]\n", vec!["x"; 10_000].join(", "));
        assert_eq!(parse_simple(&long_lists), None);
        let parsed = crate::parse::yaml::parse_full(&keys(5_000)).unwrap_err();
        assert!(parsed.too_complex, "{parsed:?}");
    }

    #[test]
    fn reads_flow_lists_of_quoted_strings() {
        check(
            "paths: [\"src/p00/**\", 'it''s, here', plain]\nempty: []\n",
            Some(json!({"paths": ["src/p00/**", "it's, here", "plain"], "empty": []})),
        );
        // Escapes, a trailing comma and nesting are the full parser's.
        check("a: [\"x\\\"y\"]\n", None);
        check("a: [x, ]\n", None);
        check("a: [[x]]\n", None);
        // Non-ASCII spaces and control characters, inside or around items.
        check("a: [\u{a0}\"x\"]\n", None);
        check("a: [x\u{3000}]\n", None);
        check("a: [\"x\u{7}\"]\n", None);
        check("a: x\u{a0}\n", None);
    }

    #[test]
    fn accepts_the_common_subset() {
        check(
            "name: rust-debugging\ndescription: \"Diagnose Rust: compiler, clippy\"\nlicense: 'It''s MIT'\nactivation:\n  keywords:\n    - rust\n    - cargo\npermissions:\n  tools: [filesystem.read, shell.run]\nmetadata:\n  author: someone\n# a comment\nempty:\n",
            Some(json!({
                "name": "rust-debugging",
                "description": "Diagnose Rust: compiler, clippy",
                "license": "It's MIT",
                "activation": {"keywords": ["rust", "cargo"]},
                "permissions": {"tools": ["filesystem.read", "shell.run"]},
                "metadata": {"author": "someone"},
                "empty": null,
            })),
        );
        check(
            "hidden: true\nshown: false\n",
            Some(json!({"hidden": true, "shown": false})),
        );
        // Under `metadata` every plain scalar is its text.
        check(
            "metadata:\n  version: 1.10\n  flag: true\n  nil: ~\n  list: [1.0, -7, x]\n  items:\n    - .5\n    - +1\n",
            Some(
                json!({"metadata": {"version": "1.10", "flag": "true", "nil": "~",
                        "list": ["1.0", "-7", "x"], "items": [".5", "+1"]}}),
            ),
        );
        // Elsewhere a number is still the full parser's.
        check("other:\n  version: 1.10\n", None);
        check("metadata: 1.10\n", None);
    }

    #[test]
    fn leaves_everything_else_to_the_full_parser() {
        for raw in [
            "version: 0.1.0\n",
            "hidden: True\n",
            "hidden: yes\n",
            "tags: [true]\n",
            "name: null\n",
            "description: Use when: asked\n",
            "description: text # comment\n",
            "description: >-\n  folded\n",
            "description: first\n  continued\n",
            "a: &x value\n",
            "a: \"esc\\\"aped\"\n",
            "a: 1\na: 2\n",
            "a:\n\t- b\n",
            "keywords:\n- same-indent list\n",
            "a:\n  b:\n    c:\n      d: deep\n",
            "\"quoted key\": v\n",
            "a:b\n",
            "- a list\n",
        ] {
            assert_eq!(parse_simple(raw), None, "{raw:?}");
        }
    }
}

#[cfg(test)]
mod differential {
    use super::*;
    use proptest::prelude::*;

    /// The fast path must agree with the full parser wherever it answers.
    fn agrees(raw: &str) -> Result<(), String> {
        match parse_simple(raw) {
            None => Ok(()),
            Some(fast) => match crate::parse::yaml::parse_full(raw) {
                Ok(full) if full == fast => Ok(()),
                other => Err(format!(
                    "fast path {fast:?} but full parser {other:?} for {raw:?}"
                )),
            },
        }
    }

    /// YAML reads a lone CR as a line break, like LF and CRLF; the fast
    /// path once kept it inside the value (issue 12).
    #[test]
    fn a_lone_carriage_return_is_a_line_break() {
        for raw in [
            "a: x\r  y\n",
            "a: x\rb: y\r",
            "a: x\r\nb: y\r\n",
            "a:\r  - x\r  - y\r",
            "a: x\r",
            "a: [x,\ry]\n",
            "a: 'x\ry'\n",
            "a: \"x\ry\"\n",
        ] {
            assert_eq!(agrees(raw), Ok(()), "{raw:?}");
        }
    }

    fn word() -> impl Strategy<Value = String> {
        // A CR inside a word is a lone CR: a line break to YAML.
        "[A-Za-zé][A-Za-z0-9 ._/()<>&%@!,:#'\u{a0}\u{3000}\u{7}\r-]{0,24}"
    }

    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            word(),
            word().prop_map(|w| format!("\"{}\"", w.replace('"', ""))),
            word().prop_map(|w| format!("'{}'", w.replace('\'', "''"))),
            Just("true".to_owned()),
            Just("false".to_owned()),
            Just("True".to_owned()),
            Just("no".to_owned()),
            Just("0.1.0".to_owned()),
            Just("- x".to_owned()),
            Just("1.10".to_owned()),
            Just("-7".to_owned()),
            Just("-x".to_owned()),
            Just(".5".to_owned()),
            Just("+1".to_owned()),
            Just("~".to_owned()),
            Just("null".to_owned()),
            Just("0x10".to_owned()),
            Just("1e3".to_owned()),
        ]
    }

    fn document() -> impl Strategy<Value = String> {
        let entry = prop_oneof![
            ("[a-z][a-z_-]{0,8}", scalar()).prop_map(|(k, v)| format!("{k}: {v}\n")),
            (
                "[a-z][a-z_-]{0,8}",
                proptest::collection::vec(scalar(), 0..4)
            )
                .prop_map(|(k, items)| format!(
                    "{k}:\n{}",
                    items
                        .iter()
                        .map(|i| format!("  - {i}\n"))
                        .collect::<String>()
                )),
            ("[a-z][a-z_-]{0,8}", proptest::collection::vec(word(), 0..3))
                .prop_map(|(k, items)| format!("{k}: [{}]\n", items.join(", "))),
            (
                "[a-z][a-z_-]{0,8}",
                proptest::collection::vec(scalar(), 0..4),
                "[ ]{0,2}"
            )
                .prop_map(|(k, items, space)| format!(
                    "{k}: [{}]\n",
                    items.join(&format!("{space},{space}"))
                )),
            ("[a-z][a-z_-]{0,8}", "[a-z][a-z_-]{0,8}", scalar())
                .prop_map(|(k, n, v)| format!("{k}:\n  {n}: {v}\n")),
            // `metadata`, whose scalars are kept as written on both paths.
            (
                "[a-z][a-z_-]{0,8}",
                scalar(),
                proptest::collection::vec(scalar(), 0..3)
            )
                .prop_map(|(n, v, items)| format!(
                    "metadata:\n  {n}: {v}\n  list: [{}]\n  block:\n{}",
                    items.join(", "),
                    items
                        .iter()
                        .map(|i| format!("    - {i}\n"))
                        .collect::<String>()
                )),
        ];
        // Each entry ends its lines with LF, CRLF or a lone CR, mixed within
        // a document as files edited on several systems are.
        let ending = prop_oneof![Just("\n"), Just("\r\n"), Just("\r")];
        proptest::collection::vec((entry, ending), 0..6).prop_map(|entries| {
            entries
                .iter()
                .map(|(entry, ending)| entry.replace('\n', ending))
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn generated_front_matter(raw in document()) {
            prop_assert_eq!(agrees(&raw), Ok(()));
        }
    }

    /// Every front matter of the real-world corpus, and of any directory
    /// named by `BCODE_DIFF_CORPUS` (for example a generated 10,000-skill
    /// corpus), parses the same on both paths, and recovery leaves every
    /// one the full parser accepts as it reads it.
    #[test]
    fn real_front_matter() {
        let corpus =
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
        // A bare clone has no shared folder beside it: say so and pass,
        // unless the run requires the corpus (`.ci/run` does).
        if !corpus.is_dir() && std::env::var_os("BCODE_REQUIRE_SHARED").is_none() {
            // Written to the real stderr, past the test harness's capture, so
            // a plain `cargo test` shows what was skipped and why.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!(
                    "skipped: {} is missing (the shared folder is not beside this clone; \
                 BCODE_REQUIRE_SHARED=1 makes that an error)\n",
                    corpus.display()
                )
                .as_bytes(),
            );
            return;
        }
        let mut roots = vec![corpus];
        if let Ok(extra) = std::env::var("BCODE_DIFF_CORPUS") {
            roots.push(extra.into());
        }
        let mut checked = 0;
        let mut stack = roots;
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    stack.push(path);
                } else if kind.is_file() && path.extension().is_some_and(|e| e == "md") {
                    let Ok(text) = std::fs::read_to_string(&path) else {
                        continue;
                    };
                    if let crate::parse::front_matter::Split::Block {
                        raw,
                        syntax: crate::parse::front_matter::Syntax::Yaml,
                        ..
                    } = crate::parse::front_matter::split(text.as_bytes())
                    {
                        assert_eq!(agrees(&text[raw.clone()]), Ok(()), "{}", path.display());
                        assert_eq!(
                            crate::parse::yaml::recovery_agrees(&text[raw]),
                            Ok(()),
                            "{}",
                            path.display()
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(
            checked >= 12,
            "only {checked} front matters checked: this test reads the real-world corpus in \
             ../shared/corpus, which must sit beside the clone (see the README)"
        );
    }
}
