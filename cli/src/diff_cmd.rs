//! `bcode-prompt diff A.json B.json`: which section broke my prompt cache?
//! Compares two saved `render --json` results: the first differing byte of
//! the system text, the section that owns it, whether it lies before the
//! cache boundary, then every section that changed (line by line, with the
//! `similar` crate's diff; a section only one side has is shown whole) and
//! a summary of the bytes and tokens on each side of the cache boundary.
//!
//! Exit codes follow diff(1): 0 identical, 1 different, 2 trouble.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use crate::cli_context::CliError;
use crate::tokens;

/// The most lines shown for one section (changed lines, or the lines of a
/// section only one side has); the rest are counted.
const MAX_LINES: usize = 200;

/// Unchanged lines shown around each change.
const CONTEXT_LINES: usize = 2;

/// How long one section's line diff may search for the smallest diff
/// before settling for a coarser one (a huge catalog rewritten wholesale).
const DIFF_DEADLINE: Duration = Duration::from_secs(2);

/// One side of the comparison: a saved `render --json` document.
struct Saved {
    system: String,
    request_context: String,
    cache_boundary: usize,
    /// Section id -> (part, byte range) in document order.
    sections: Vec<(String, String, usize, usize)>,
}

/// The largest saved render read. Real ones are a few hundred KiB; the bound
/// only stops `diff a.json /dev/zero` (or a wrong, huge file) from filling
/// memory.
pub const MAX_INPUT_BYTES: usize = 64 * 1024 * 1024;

fn load(path: &Path) -> Result<Saved, CliError> {
    let text = read(path)?;
    parse(path, &text)
}

/// The text of a saved render at `path`.
fn read(path: &Path) -> Result<String, CliError> {
    let bytes = bcode_fs::read_named_bounded(path, MAX_INPUT_BYTES).map_err(|err| {
        let reason = match err {
            bcode_fs::ReadError::TooLarge { .. } => format!(
                "it is larger than {} MiB, far more than any saved `render --json` result",
                MAX_INPUT_BYTES / (1024 * 1024)
            ),
            bcode_fs::ReadError::NotRegular => "it is a directory".to_owned(),
            bcode_fs::ReadError::Io(err) => err.to_string(),
        };
        CliError::Usage(format!("cannot read `{}`: {reason}", path.display()))
    })?;
    String::from_utf8(bytes).map_err(|err| {
        CliError::Usage(format!(
            "`{}` is not a `render --json` result: not UTF-8 ({err})",
            path.display()
        ))
    })
}

/// A saved render's `text`, read from `path` (named in errors).
fn parse(path: &Path, text: &str) -> Result<Saved, CliError> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|err| CliError::Usage(format!("`{}` is not JSON: {err}", path.display())))?;
    let bad = |what: &str| {
        CliError::Usage(format!(
            "`{}` is not a `render --json` result: {what}",
            path.display()
        ))
    };
    let string = |key: &str| {
        doc.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| bad(&format!("no `{key}` string")))
    };
    let system = string("system")?;
    let request_context = string("request_context")?;
    let cache_boundary = doc
        .get("cache_boundary")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("no `cache_boundary` number"))? as usize;
    let mut sections = Vec::new();
    for s in doc
        .get("sections")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no `sections` array"))?
    {
        let id = s
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("a section without `id`"))?;
        let part = s
            .get("placement")
            .and_then(Value::as_str)
            .unwrap_or("system")
            .to_owned();
        let range = s
            .get("range")
            .ok_or_else(|| bad("a section without `range`"))?;
        let start = range
            .get("start")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad("a range without `start`"))? as usize;
        let end = range
            .get("end")
            .and_then(Value::as_u64)
            .ok_or_else(|| bad("a range without `end`"))? as usize;
        sections.push((id.to_owned(), part, start, end));
    }
    Ok(Saved {
        system,
        request_context,
        cache_boundary,
        sections,
    })
}

impl Saved {
    fn part(&self, part: &str) -> &str {
        if part == "system" {
            &self.system
        } else {
            &self.request_context
        }
    }

    fn text_of(&self, id: &str) -> Option<(&str, &str)> {
        self.sections
            .iter()
            .find(|(sid, ..)| sid == id)
            .and_then(|(_, part, start, end)| {
                Some((part.as_str(), self.part(part).get(*start..*end)?))
            })
    }

    /// The section whose range holds `offset` in `part`, or the one it follows.
    fn owner(&self, part: &str, offset: usize) -> String {
        let in_part = self.sections.iter().filter(|(_, p, ..)| p == part);
        if let Some((id, ..)) = in_part
            .clone()
            .find(|(_, _, start, end)| (*start..*end).contains(&offset))
        {
            return format!("section `{id}`");
        }
        let mut before = in_part.filter(|(_, _, _, end)| *end <= offset);
        match before.next_back() {
            Some((id, ..)) => format!("the separator after section `{id}`"),
            None => "the start of the text".into(),
        }
    }
}

fn first_difference(a: &str, b: &str) -> Option<usize> {
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    (common < a.len() || common < b.len()).then_some(common)
}

/// Compares the two files; returns the report and whether they differ.
pub fn diff(a_path: &Path, b_path: &Path) -> Result<(String, bool), CliError> {
    compare(&load(a_path)?, &load(b_path)?)
}

/// [`diff`] of two saved renders already read: `(path, text)` each, the
/// path only naming it in errors (`check` compares what it read and
/// rendered, never reading a path twice).
pub fn diff_texts(a: (&Path, &str), b: (&Path, &str)) -> Result<(String, bool), CliError> {
    compare(&parse(a.0, a.1)?, &parse(b.0, b.1)?)
}

fn compare(a: &Saved, b: &Saved) -> Result<(String, bool), CliError> {
    let mut out = String::new();
    let mut differs = false;
    match first_difference(&a.system, &b.system) {
        Some(offset) => {
            differs = true;
            let before = offset < a.cache_boundary.min(b.cache_boundary);
            let _ = writeln!(
                out,
                "system text: first difference at byte {offset}, in {} (A) / {} (B)",
                a.owner("system", offset),
                b.owner("system", offset)
            );
            if before {
                let _ = writeln!(
                    out,
                    "  before the cache boundary (A: {}, B: {}): the cached prefix is broken from here on",
                    a.cache_boundary, b.cache_boundary
                );
            } else {
                let _ = writeln!(
                    out,
                    "  after the cache boundary (A: {}, B: {}): the cached prefix is intact",
                    a.cache_boundary, b.cache_boundary
                );
            }
        }
        None => {
            let _ = writeln!(
                out,
                "system text: identical ({} bytes, cache boundary A: {}, B: {})",
                a.system.len(),
                a.cache_boundary,
                b.cache_boundary
            );
        }
    }
    match first_difference(&a.request_context, &b.request_context) {
        Some(offset) => {
            differs = true;
            let _ = writeln!(
                out,
                "request-only context: first difference at byte {offset}, in {} (A) / {} (B)",
                a.owner("request_context", offset),
                b.owner("request_context", offset)
            );
        }
        None => {
            let _ = writeln!(out, "request-only context: identical");
        }
    }
    // Every section id of either side, once, in order of first appearance.
    let mut seen = BTreeSet::new();
    let ids: Vec<&str> = a
        .sections
        .iter()
        .chain(&b.sections)
        .map(|(id, ..)| id.as_str())
        .filter(|id| seen.insert(*id))
        .collect();
    let mut changes = String::new();
    for id in ids {
        match (a.text_of(id), b.text_of(id)) {
            (Some((_, x)), Some((_, y))) if x == y => {}
            (Some((_, x)), Some((_, y))) => {
                let _ = writeln!(
                    changes,
                    "== {id} (changed: {} -> {} bytes)",
                    x.len(),
                    y.len()
                );
                changes.push_str(&line_diff(x, y));
            }
            (Some((_, x)), None) => {
                let _ = writeln!(changes, "== {id} (only in A, {} bytes)", x.len());
                changes.push_str(&whole(x, '-'));
            }
            (None, Some((_, y))) => {
                let _ = writeln!(changes, "== {id} (only in B, {} bytes)", y.len());
                changes.push_str(&whole(y, '+'));
            }
            (None, None) => {}
        }
    }
    if !changes.is_empty() {
        differs = true;
        let _ = writeln!(out, "\nchanged sections:");
        out.push_str(&changes);
    }
    if differs {
        let _ = writeln!(out, "\n{}", summary(a, b));
    }
    Ok((out, differs))
}

/// The two texts' changed lines with a little context, as unified-diff
/// hunks (`@@ -line,count +line,count @@`, then ` `, `-` and `+` lines): a
/// changed line reads as one `-` and one `+`, not as the whole rest of the
/// section. At most [`MAX_LINES`] changed lines are shown.
fn line_diff(a: &str, b: &str) -> String {
    let diff = TextDiff::configure()
        .deadline(Instant::now() + DIFF_DEADLINE)
        .diff_lines(a, b);
    let mut out = String::new();
    let mut shown = 0;
    let mut hidden = 0;
    for hunk in diff
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .iter_hunks()
    {
        if shown >= MAX_LINES {
            hidden += hunk
                .iter_changes()
                .filter(|c| c.tag() != ChangeTag::Equal)
                .count();
            continue;
        }
        let _ = writeln!(out, "{}", hunk.header());
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                ChangeTag::Equal => ' ',
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
            };
            if sign != ' ' {
                if shown >= MAX_LINES {
                    hidden += 1;
                    continue;
                }
                shown += 1;
            }
            let line = change.value();
            push_line(&mut out, sign, line.strip_suffix('\n').unwrap_or(line));
        }
    }
    if hidden > 0 {
        let _ = writeln!(out, "… {hidden} more changed lines");
    }
    out
}

/// `sign`, a space and `line`; an empty line is the sign alone, so no
/// line of the report ends in a space.
fn push_line(out: &mut String, sign: char, line: &str) {
    out.push(sign);
    if !line.is_empty() {
        out.push(' ');
        out.push_str(line);
    }
    out.push('\n');
}

/// Every line of a section only one side has, marked `sign`.
fn whole(text: &str, sign: char) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = text.lines().collect();
    for line in lines.iter().take(MAX_LINES) {
        push_line(&mut out, sign, line);
    }
    if lines.len() > MAX_LINES {
        let _ = writeln!(out, "{sign} … {} more lines", lines.len() - MAX_LINES);
    }
    out
}

/// Bytes and estimated tokens on each side of the cache boundary, A then
/// B, and how much of the cached prefix the two share (what a cache filled
/// by A still serves to B).
fn summary(a: &Saved, b: &Saved) -> String {
    fn cached(s: &Saved) -> &str {
        s.system.get(..s.cache_boundary).unwrap_or(&s.system)
    }
    let uncached = |s: &Saved| {
        let mut text = s.system.get(s.cache_boundary..).unwrap_or("").to_owned();
        text.push_str(&s.request_context);
        text
    };
    let (a_cached, b_cached) = (cached(a), cached(b));
    let shared = a_cached
        .bytes()
        .zip(b_cached.bytes())
        .take_while(|(x, y)| x == y)
        .count();
    let mut counter = tokens::Counter::new();
    let before = moved(a_cached, b_cached, &mut counter);
    let after = moved(&uncached(a), &uncached(b), &mut counter);
    let mut summary = format!(
        "summary: before the cache boundary {before}; {shared} bytes of it shared (still cached); \
         after it (uncached system text and request-only context) {after}"
    );
    if counter.estimated_any() {
        summary.push('\n');
        summary.push_str(&tokens::budget_note());
    }
    summary
}

/// `A -> B bytes (±n), A -> B tokens (±n)`; an estimated figure (and a
/// difference with one) reads `~n`.
fn moved(a: &str, b: &str, counter: &mut tokens::Counter) -> String {
    let signed = |a: usize, b: usize| {
        if b >= a {
            format!("+{}", b - a)
        } else {
            format!("-{}", a - b)
        }
    };
    let mut text = format!(
        "{} -> {} bytes ({})",
        a.len(),
        b.len(),
        signed(a.len(), b.len())
    );
    match (counter.count(a), counter.count(b)) {
        (Some(x), Some(y)) => {
            let about = if x.estimated || y.estimated { "~" } else { "" };
            let _ = write!(
                text,
                ", {} -> {} tokens ({about}{})",
                x.shown(),
                y.shown(),
                signed(x.tokens, y.tokens)
            );
        }
        _ => text.push_str(", tokens not counted in this build"),
    }
    text
}
