//! Invocation arguments in an invoked skill's body: the shell-style split of
//! what the user typed after `/skill <id>`, the front matter's `arguments:`
//! names, and the substitution of `$ARGUMENTS`, `$ARGUMENTS[N]`, `$N`,
//! `$name` and `${SKILL_DIR}` outside fenced and inline code.
//!
//! The rules follow Claude Code where it defines them: an index past the
//! end and `$ARGUMENTS` without arguments are empty; `$N` and `$name` end
//! where a word character would continue them (`$1st`, `$names` stay as
//! written); a `$` that starts no placeholder stays. Beyond Claude Code,
//! `\$` keeps a literal dollar and code is never touched, so a skill can
//! show shell snippets (`echo $1`) as written.

use std::borrow::Cow;
use std::collections::BTreeMap;

use bcode_skill_models::{Diagnostic, DiagnosticCode};
use serde_json::Value;

use crate::parse::yaml::kind_name;

/// The most characters an `arguments:` name may have: names are short
/// words, and the bound keeps each `$` of a body a bounded lookup.
pub const MAX_ARGUMENT_NAME_CHARS: usize = 64;

/// The most bytes substitution inserts into one body. Arguments are the
/// operator's text of any size, and a body may repeat `$ARGUMENTS`
/// thousands of times; past this budget the remaining placeholders stay as
/// written (the `Invocation arguments:` line still carries the arguments).
pub const MAX_INSERTED_BYTES: usize = 1024 * 1024;

/// Arguments split into words, and whether the split could honour quotes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitArguments {
    /// The words, in order.
    pub words: Vec<String>,
    /// `false` when a quote was left open: then the words are the text split
    /// on whitespace alone, quotes kept, so an apostrophe (`don't`) never
    /// makes an invocation fail.
    pub balanced: bool,
}

/// Splits `raw` as a POSIX shell splits words, without expansion or
/// comments: whitespace separates words; `'...'` is literal; inside `"..."`
/// a backslash escapes `"`, `\`, `$` and `` ` ``; outside quotes a backslash
/// escapes a quote, a backslash or whitespace and is kept before anything
/// else (so `C:\src` survives). An unclosed quote falls back to a plain
/// whitespace split ([`SplitArguments::balanced`] is then `false`).
///
/// Written here rather than taken from `shlex`, which treats a word that
/// starts with `#` as a comment (`/skill fix #123` would lose the issue
/// number) and drops every backslash outside quotes.
pub fn split_arguments(raw: &str) -> SplitArguments {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return unbalanced(raw),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return unbalanced(raw),
                        },
                        Some(c) => word.push(c),
                        None => return unbalanced(raw),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.peek() {
                    Some(&next) if matches!(next, '"' | '\'' | '\\') || next.is_whitespace() => {
                        word.push(next);
                        chars.next();
                    }
                    _ => word.push('\\'),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    SplitArguments {
        words,
        balanced: true,
    }
}

fn unbalanced(raw: &str) -> SplitArguments {
    SplitArguments {
        words: raw.split_whitespace().map(str::to_owned).collect(),
        balanced: false,
    }
}

/// Whether `name` may be declared in `arguments:`: `[A-Za-z_][A-Za-z0-9_-]*`,
/// at most [`MAX_ARGUMENT_NAME_CHARS`], and not `ARGUMENTS` (which always
/// means every argument).
pub fn is_argument_name(name: &str) -> bool {
    let mut chars = name.chars();
    let starts = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    starts
        && chars.all(|c| is_word_char(c) || c == '-')
        && name.len() <= MAX_ARGUMENT_NAME_CHARS
        && name != "ARGUMENTS"
}

/// The `arguments:` list of the front matter: names in order and the
/// problems found (without line; the validator adds it). A name that is not
/// valid, or repeats an earlier one, keeps its position as an empty string,
/// so the names after it still stand for the right argument.
pub(crate) fn declared_names(value: Option<Value>) -> (Vec<String>, Vec<Diagnostic>) {
    let mut problems = Vec::new();
    let problem = |message: String, hint: &str| {
        Diagnostic::warning(DiagnosticCode::InvalidField, message)
            .with_field("arguments")
            .with_hint(hint)
    };
    let items = match value {
        None | Some(Value::Null) => return (Vec::new(), problems),
        // Claude Code also takes the names as one space-separated string.
        Some(Value::String(s)) => s.split_whitespace().map(Value::from).collect(),
        Some(Value::Array(items)) => items,
        Some(other) => {
            problems.push(problem(
                format!(
                    "`arguments` must be a list of names, found {}; ignored",
                    kind_name(&other)
                ),
                "write a list, e.g. [issue, branch]",
            ));
            return (Vec::new(), problems);
        }
    };
    let mut names: Vec<String> = Vec::with_capacity(items.len());
    for (position, item) in items.into_iter().enumerate() {
        let name = match item {
            Value::String(name) if is_argument_name(&name) => {
                if names.contains(&name) {
                    problems.push(problem(
                        format!(
                            "`arguments` names `{name}` twice; the first one (argument {}) is used",
                            names.iter().position(|n| n == &name).unwrap_or(0)
                        ),
                        "give each argument its own name",
                    ));
                    String::new()
                } else {
                    name
                }
            }
            Value::String(name) => {
                problems.push(problem(
                    format!("`arguments` name `{}` (argument {position}) is not a valid name; `$` cannot stand for it", bcode_text::clean_line(&name)),
                    "use letters, digits, `_` and `-`, starting with a letter or `_`, at most 64 characters, and not `ARGUMENTS`",
                ));
                String::new()
            }
            other => {
                problems.push(problem(
                    format!(
                        "`arguments` items must be names, found {} (argument {position}); ignored",
                        kind_name(&other)
                    ),
                    "write each name as a string",
                ));
                String::new()
            }
        };
        names.push(name);
    }
    (names, problems)
}

/// What the placeholders of one body stand for.
#[derive(Clone, Copy, Debug)]
pub struct Placeholders<'a> {
    /// `$ARGUMENTS`: every argument, as typed.
    pub all: &'a str,
    /// `$ARGUMENTS[N]`, `$N`: the N-th word.
    pub words: &'a [String],
    /// The front matter's `arguments:` names, by position.
    pub names: &'a [String],
    /// `${SKILL_DIR}`, `${CLAUDE_SKILL_DIR}`: the skill's folder as the
    /// block shows it.
    pub skill_dir: &'a str,
}

/// `body` with its placeholders replaced, outside fenced code blocks
/// (```` ``` ```` or `~~~`, three or more, to a closing fence of the same
/// character at least as long, or the end) and inline code spans (a run of
/// backticks to the next run of the same length within the paragraph).
/// `\$` becomes `$` outside code. Borrowed when nothing changes.
pub fn substitute_arguments<'b>(body: &'b str, values: &Placeholders<'_>) -> Cow<'b, str> {
    if !body.contains('$') {
        return Cow::Borrowed(body);
    }
    let mut names = BTreeMap::new();
    for (position, name) in values.names.iter().enumerate() {
        if !name.is_empty() {
            names.entry(name.as_str()).or_insert(position);
        }
    }
    let mut out = Out {
        text: String::with_capacity(body.len()),
        budget: MAX_INSERTED_BYTES,
        values: *values,
        names,
    };
    let mut fence: Option<(char, usize)> = None;
    let mut prose_start = 0;
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        let start = at;
        at += line.len();
        match fence {
            Some((mark, len)) => {
                if closes_fence(line, mark, len) {
                    fence = None;
                }
                out.text.push_str(line);
                prose_start = at;
            }
            None => {
                if let Some(opened) = opens_fence(line) {
                    out.prose(&body[prose_start..start]);
                    out.text.push_str(line);
                    fence = Some(opened);
                    prose_start = at;
                }
            }
        }
    }
    out.prose(&body[prose_start..]);
    if out.text == body {
        Cow::Borrowed(body)
    } else {
        Cow::Owned(out.text)
    }
}

/// `[A-Za-z0-9_]`: a character that continues `$N`, `$ARGUMENTS` or `$name`.
fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The fence character and length when `line` opens a fenced code block.
/// Any indentation counts: a fence nested in a list item is indented, and
/// a line indented four spaces is code anyway.
fn opens_fence(line: &str) -> Option<(char, usize)> {
    let trimmed = line.trim_start_matches([' ', '\t']);
    let mark = trimmed.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = trimmed.chars().take_while(|&c| c == mark).count();
    // A backtick fence's info string has no backtick (else it is inline
    // code on one line).
    let info = &trimmed[len..];
    (len >= 3 && !(mark == '`' && info.contains('`'))).then_some((mark, len))
}

fn closes_fence(line: &str, mark: char, len: usize) -> bool {
    let trimmed = line.trim_matches([' ', '\t', '\r', '\n']);
    trimmed.chars().all(|c| c == mark) && trimmed.chars().count() >= len
}

/// The substituted text being built, and what may still be inserted.
struct Out<'a> {
    text: String,
    budget: usize,
    values: Placeholders<'a>,
    names: BTreeMap<&'a str, usize>,
}

impl<'a> Out<'a> {
    /// Text outside fences: one paragraph (up to a blank line) at a time,
    /// since a code span never crosses one.
    fn prose(&mut self, text: &str) {
        let mut start = 0;
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            at += line.len();
            if line.trim().is_empty() {
                self.paragraph(&text[start..at]);
                start = at;
            }
        }
        self.paragraph(&text[start..]);
    }

    /// One paragraph: inline code spans verbatim, the rest substituted.
    fn paragraph(&mut self, text: &str) {
        if !text.contains('`') {
            self.plain(text);
            return;
        }
        // Every run of backticks, then for each the next run of the same
        // length, found from the end in one pass so that a paragraph of
        // many unmatched runs costs linear time.
        let bytes = text.as_bytes();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'`' {
                let len = bytes[i..].iter().take_while(|&&b| b == b'`').count();
                runs.push((i, len));
                i += len;
            } else {
                i += 1;
            }
        }
        let mut next_same = vec![None; runs.len()];
        let mut last_of_len: BTreeMap<usize, usize> = BTreeMap::new();
        for (index, &(_, len)) in runs.iter().enumerate().rev() {
            next_same[index] = last_of_len.insert(len, index);
        }
        let mut emitted = 0;
        let mut index = 0;
        while index < runs.len() {
            let (start, _) = runs[index];
            match next_same[index] {
                Some(close) => {
                    let (close_start, close_len) = runs[close];
                    let end = close_start + close_len;
                    self.plain(&text[emitted..start]);
                    self.text.push_str(&text[start..end]);
                    emitted = end;
                    index = close + 1;
                }
                // An unmatched run is literal backticks, part of the prose.
                None => index += 1,
            }
        }
        self.plain(&text[emitted..]);
    }

    /// Text with no code in it: placeholders and `\$` replaced.
    fn plain(&mut self, text: &str) {
        let mut emitted = 0;
        let mut search = 0;
        while let Some(found) = text[search..].find('$') {
            let dollar = search + found;
            search = dollar + 1;
            if text[..dollar].ends_with('\\') {
                self.text.push_str(&text[emitted..dollar - 1]);
                self.text.push('$');
                emitted = dollar + 1;
                continue;
            }
            let Some((len, value)) = self.placeholder(&text[dollar + 1..]) else {
                continue;
            };
            if value.len() > self.budget {
                continue;
            }
            self.budget -= value.len();
            self.text.push_str(&text[emitted..dollar]);
            self.text.push_str(value);
            emitted = dollar + 1 + len;
            search = emitted;
        }
        self.text.push_str(&text[emitted..]);
    }

    /// The placeholder `rest` (the text after a `$`) starts with: its length
    /// and its value.
    fn placeholder(&self, rest: &str) -> Option<(usize, &'a str)> {
        let values = self.values;
        let word = |n: &str| {
            n.parse::<usize>()
                .ok()
                .and_then(|n| values.words.get(n))
                .map_or("", String::as_str)
        };
        for spelling in ["{SKILL_DIR}", "{CLAUDE_SKILL_DIR}"] {
            if rest.starts_with(spelling) {
                return Some((spelling.len(), values.skill_dir));
            }
        }
        if let Some(after) = rest.strip_prefix("ARGUMENTS") {
            if let Some(index) = after.strip_prefix('[') {
                let digits = index.bytes().take_while(u8::is_ascii_digit).count();
                if digits > 0 && index[digits..].starts_with(']') {
                    return Some(("ARGUMENTS[".len() + digits + 1, word(&index[..digits])));
                }
            }
            if !after.starts_with(is_word_char) {
                return Some(("ARGUMENTS".len(), values.all));
            }
        }
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            return (!rest[digits..].starts_with(is_word_char))
                .then(|| (digits, word(&rest[..digits])));
        }
        self.name(rest)
    }

    /// The longest declared name `rest` starts with that no word character
    /// or `[` continues (`-` may: `$file-based` is `$file` then `-based`).
    fn name(&self, rest: &str) -> Option<(usize, &'a str)> {
        if self.names.is_empty() || !rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        {
            return None;
        }
        let run = rest
            .bytes()
            .take(MAX_ARGUMENT_NAME_CHARS + 1)
            .take_while(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            .count();
        (1..=run.min(MAX_ARGUMENT_NAME_CHARS))
            .rev()
            .find_map(|len| {
                let ends = !rest[len..].starts_with(|c: char| is_word_char(c) || c == '[');
                let position = *self.names.get(&rest[..len])?;
                ends.then(|| {
                    (
                        len,
                        self.values.words.get(position).map_or("", String::as_str),
                    )
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_shell_style_and_never_fails() {
        let check = |raw: &str, words: &[&str], balanced: bool| {
            assert_eq!(
                split_arguments(raw),
                SplitArguments {
                    words: words.iter().map(|w| (*w).to_owned()).collect(),
                    balanced
                },
                "{raw:?}"
            );
        };
        check("", &[], true);
        check("  a  b\tc ", &["a", "b", "c"], true);
        check(
            r#"diagnose "cargo test" failure"#,
            &["diagnose", "cargo test", "failure"],
            true,
        );
        check("'a b' c", &["a b", "c"], true);
        check(r#""say \"hi\"" '\n'"#, &[r#"say "hi""#, r"\n"], true);
        check(r"C:\src\x a\ b", &[r"C:\src\x", "a b"], true);
        check(r#"fix #123 "" x"#, &["fix", "#123", "", "x"], true);
        check("don't panic", &["don't", "panic"], false);
        check(r#"say "hi"#, &["say", "\"hi"], false);
        check("naïve 技能 \u{a0}x", &["naïve", "技能", "x"], true);
    }

    #[test]
    fn names_are_checked_and_keep_their_positions() {
        let (names, problems) = declared_names(Some(serde_json::json!([
            "issue",
            "bad name",
            3,
            "issue",
            "ARGUMENTS",
            "branch-name"
        ])));
        assert_eq!(names, ["issue", "", "", "", "", "branch-name"]);
        let messages: Vec<String> = problems.iter().map(|d| d.message().into_owned()).collect();
        assert_eq!(
            messages,
            [
                "`arguments` name `bad name` (argument 1) is not a valid name; `$` cannot stand for it",
                "`arguments` items must be names, found a number (argument 2); ignored",
                "`arguments` names `issue` twice; the first one (argument 0) is used",
                "`arguments` name `ARGUMENTS` (argument 4) is not a valid name; `$` cannot stand for it",
            ]
        );
        let (names, problems) = declared_names(Some(serde_json::json!("issue  branch")));
        assert_eq!(
            (names, problems.len()),
            (vec!["issue".into(), "branch".into()], 0)
        );
        let (names, problems) = declared_names(Some(serde_json::json!({"a": 1})));
        assert_eq!(names, Vec::<String>::new());
        assert_eq!(
            problems[0].message(),
            "`arguments` must be a list of names, found a mapping; ignored"
        );
    }
}
