//! `bcode-prompt diff A.json B.json`: which section broke my prompt cache?
//! Compares two saved `render --json` results: the first differing byte of
//! the system text, the section that owns it, whether it lies before the
//! cache boundary, then every section that changed (line by line, with the
//! `similar` crate's diff; a section only one side has is shown whole) and
//! a summary of the bytes and tokens on each side of the cache boundary.
//!
//! The work is linear in the sections (each side's are indexed by id) and
//! the line-by-line diffs share one budget for the whole command, counted
//! in steps of the diff's search rather than in wall time, so the same two
//! files always give the same report: a section the budget no longer
//! covers shows its changed lines as one block, and says so.
//!
//! Exit codes follow diff(1): 0 identical, 1 different, 2 trouble.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;
use similar::{Algorithm, DiffOp, DiffTag, DiffableStr, udiff::UnifiedHunkHeader};

use crate::cli_context::CliError;
use crate::tokens;

/// The most lines shown for one section (changed lines, or the lines of a
/// section only one side has); the rest are counted.
const MAX_LINES: usize = 200;

/// Unchanged lines shown around each change.
const CONTEXT_LINES: usize = 2;

/// The steps of the diff's search (a diagonal of the edit graph visited,
/// or a pair of lines compared) the whole command may spend on
/// line-by-line diffs. A few changed lines in a long section cost about
/// its length times their number; rewriting `n` lines wholesale costs
/// about `2n²`, so 3,500 lines take the whole budget. A search that would
/// pass what is left stops, and that section, and every later one whose
/// diff costs anything, shows its changed lines as one block. This
/// replaces a deadline of 2 s per section, which let 200 rewritten
/// sections run for minutes and made the report depend on the machine's
/// speed.
pub const DIFF_BUDGET: u64 = 25_000_000;

/// One side of the comparison: a saved `render --json` document.
struct Saved {
    system: String,
    request_context: String,
    cache_boundary: usize,
    /// Section id -> (part, byte range) in document order.
    sections: Vec<(String, String, usize, usize)>,
    /// Each section id's place in `sections` (the first, when an id
    /// repeats), so finding a section does not scan them all.
    by_id: HashMap<String, usize>,
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
    let bytes = bcode_prompt::files::read_named_bounded(path, MAX_INPUT_BYTES).map_err(|err| {
        let reason = match err {
            bcode_prompt::files::ReadError::TooLarge { .. } => format!(
                "it is larger than {} MiB, far more than any saved `render --json` result",
                MAX_INPUT_BYTES / (1024 * 1024)
            ),
            bcode_prompt::files::ReadError::NotRegular => "it is a directory".to_owned(),
            bcode_prompt::files::ReadError::Io(err) => err.to_string(),
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
    let mut by_id = HashMap::with_capacity(sections.len());
    for (at, (id, ..)) in sections.iter().enumerate() {
        by_id.entry(id.clone()).or_insert(at);
    }
    Ok(Saved {
        system,
        request_context,
        cache_boundary,
        sections,
        by_id,
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

    fn text_of(&self, id: &str) -> Option<&str> {
        let (_, part, start, end) = self.sections.get(*self.by_id.get(id)?)?;
        self.part(part).get(*start..*end)
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
    // The sections both sides have and that differ are diffed line by line
    // under one budget, smallest first (by bytes, then in document order),
    // so one huge rewritten section cannot starve the many small ones.
    let pairs: Vec<(&str, Option<&str>, Option<&str>)> = ids
        .iter()
        .map(|id| (*id, a.text_of(id), b.text_of(id)))
        .collect();
    let mut order: Vec<(usize, usize)> = pairs
        .iter()
        .enumerate()
        .filter_map(|(at, (_, x, y))| match (x, y) {
            (Some(x), Some(y)) if x != y => Some((x.len() + y.len(), at)),
            _ => None,
        })
        .collect();
    order.sort_unstable();
    let mut budget = DIFF_BUDGET;
    let mut diffs: BTreeMap<usize, SectionDiff> = BTreeMap::new();
    for (_, at) in order {
        if let (_, Some(x), Some(y)) = pairs[at] {
            diffs.insert(at, line_diff(x, y, &mut budget));
        }
    }
    let mut changes = String::new();
    let mut coarse = 0;
    for (at, (id, x, y)) in pairs.iter().enumerate() {
        match (x, y) {
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) => {
                let Some(diff) = diffs.remove(&at) else {
                    continue;
                };
                let how = if diff.detailed {
                    ""
                } else {
                    coarse += 1;
                    "; past the diff budget, its changed lines shown as one block"
                };
                let _ = writeln!(
                    changes,
                    "== {id} (changed: {} -> {} bytes{how})",
                    x.len(),
                    y.len()
                );
                changes.push_str(&diff.text);
            }
            (Some(x), None) => {
                let _ = writeln!(changes, "== {id} (only in A, {} bytes)", x.len());
                changes.push_str(&whole(x, '-'));
            }
            (None, Some(y)) => {
                let _ = writeln!(changes, "== {id} (only in B, {} bytes)", y.len());
                changes.push_str(&whole(y, '+'));
            }
            (None, None) => {}
        }
    }
    if coarse > 0 {
        let _ = writeln!(
            changes,
            "\n{coarse} changed section(s) shown as one block: the line-by-line diffs share one \
             budget of {DIFF_BUDGET} search steps, smallest section first"
        );
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

/// One changed section's report: its hunks, and whether they are the
/// line-by-line diff or one block (the budget did not cover it).
struct SectionDiff {
    text: String,
    detailed: bool,
}

/// The two texts' changed lines with a little context, as unified-diff
/// hunks (`@@ -line,count +line,count @@`, then ` `, `-` and `+` lines): a
/// changed line reads as one `-` and one `+`, not as the whole rest of the
/// section. At most [`MAX_LINES`] changed lines are shown.
///
/// The search for the smallest diff is first run as a dry run counting its
/// steps, stopped once it would spend more than `budget` holds; only a
/// search that fits is run for real (by `similar`, whose divide-and-conquer
/// form of the same search costs a small multiple of the dry run's steps)
/// and taken from `budget`. One that does not fit empties `budget`, and the
/// section shows everything between its first and last changed line as one
/// block, removed then added.
fn line_diff<'a>(a: &'a str, b: &'a str, budget: &mut u64) -> SectionDiff {
    let old = a.tokenize_lines();
    let new = b.tokenize_lines();
    // Lines as numbers, equal lines the same number: each comparison of
    // the search is then one integer comparison, however long the lines.
    let mut numbers: HashMap<&str, u32> = HashMap::new();
    let mut number = |lines: &[&'a str]| -> Vec<u32> {
        lines
            .iter()
            .map(|line| {
                let next = u32::try_from(numbers.len()).unwrap_or(u32::MAX);
                *numbers.entry(line).or_insert(next)
            })
            .collect()
    };
    let old_ids = number(&old);
    let new_ids = number(&new);
    let (ops, detailed) = match search_steps(&old_ids, &new_ids, *budget) {
        Some(steps) => {
            *budget -= steps;
            let ops = similar::capture_diff_slices(Algorithm::Myers, &old_ids, &new_ids);
            (ops, true)
        }
        None => {
            *budget = 0;
            (one_block(&old_ids, &new_ids), false)
        }
    };
    SectionDiff {
        text: hunks(ops, &old, &new),
        detailed,
    }
}

/// The steps Myers' greedy search for the shortest edit script between
/// `a` and `b` takes (one per diagonal visited and per pair of lines
/// compared), after their common first and last lines, which cost nothing
/// here as in `similar`; `None` as soon as they pass `limit`. The search
/// is `O((N + M) D)` for `D` differing lines, so this is what a diff of two
/// unrelated texts would spend and what the budget bounds.
fn search_steps(a: &[u32], b: &[u32], limit: u64) -> Option<u64> {
    let prefix = common_prefix(a, b);
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let suffix = common_suffix(a, b);
    let (a, b) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    if a.is_empty() || b.is_empty() {
        return Some(0);
    }
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = n + m;
    // `furthest[k + offset]`: how far along `a` the furthest path on
    // diagonal `k` (x - y = k) reaches.
    let offset = max + 1;
    let mut furthest = vec![0isize; 2 * offset as usize + 1];
    let at = |k: isize| (k + offset) as usize;
    let mut steps: u64 = 0;
    for d in 0..=max {
        for k in (-d..=d).step_by(2) {
            steps += 1;
            let mut x = if k == -d || (k != d && furthest[at(k - 1)] < furthest[at(k + 1)]) {
                furthest[at(k + 1)]
            } else {
                furthest[at(k - 1)] + 1
            };
            let mut y = x - k;
            while x < n && y < m && y >= 0 && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
                steps += 1;
            }
            furthest[at(k)] = x;
            if steps > limit {
                return None;
            }
            if x >= n && y >= m {
                return Some(steps);
            }
        }
    }
    Some(steps)
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn common_suffix(a: &[u32], b: &[u32]) -> usize {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// The edit a section past the budget is shown as: its common first and
/// last lines kept, everything between removed and added.
fn one_block(a: &[u32], b: &[u32]) -> Vec<DiffOp> {
    let prefix = common_prefix(a, b);
    let suffix = common_suffix(&a[prefix..], &b[prefix..]);
    let (old_end, new_end) = (a.len() - suffix, b.len() - suffix);
    let mut ops = Vec::new();
    if prefix > 0 {
        ops.push(DiffOp::Equal {
            old_index: 0,
            new_index: 0,
            len: prefix,
        });
    }
    if old_end > prefix {
        ops.push(DiffOp::Delete {
            old_index: prefix,
            old_len: old_end - prefix,
            new_index: prefix,
        });
    }
    if new_end > prefix {
        ops.push(DiffOp::Insert {
            old_index: old_end,
            new_index: prefix,
            new_len: new_end - prefix,
        });
    }
    if suffix > 0 {
        ops.push(DiffOp::Equal {
            old_index: old_end,
            new_index: new_end,
            len: suffix,
        });
    }
    ops
}

/// `ops` over the lines `old` and `new` as unified-diff hunks with
/// [`CONTEXT_LINES`] of context, at most [`MAX_LINES`] changed lines shown
/// and the rest counted.
fn hunks(ops: Vec<DiffOp>, old: &[&str], new: &[&str]) -> String {
    let mut out = String::new();
    let mut shown = 0;
    let mut hidden = 0;
    for hunk in similar::group_diff_ops(ops, CONTEXT_LINES) {
        if hunk.is_empty() {
            continue;
        }
        let changed = |op: &DiffOp| {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            match tag {
                DiffTag::Equal => 0,
                DiffTag::Delete => old_range.len(),
                DiffTag::Insert => new_range.len(),
                DiffTag::Replace => old_range.len() + new_range.len(),
            }
        };
        if shown >= MAX_LINES {
            hidden += hunk.iter().map(changed).sum::<usize>();
            continue;
        }
        let _ = writeln!(out, "{}", UnifiedHunkHeader::new(&hunk));
        for op in &hunk {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            let lines = match tag {
                DiffTag::Equal => vec![(' ', &old[old_range])],
                DiffTag::Delete => vec![('-', &old[old_range])],
                DiffTag::Insert => vec![('+', &new[new_range])],
                DiffTag::Replace => vec![('-', &old[old_range]), ('+', &new[new_range])],
            };
            for (sign, lines) in lines {
                for line in lines {
                    if sign != ' ' {
                        if shown >= MAX_LINES {
                            hidden += 1;
                            continue;
                        }
                        shown += 1;
                    }
                    push_line(&mut out, sign, line.strip_suffix('\n').unwrap_or(line));
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The report of one section, as similar's own unified diff prints it
    /// (sign and line without a space between), and the budget left.
    fn as_similar_prints(a: &str, b: &str, budget: u64) -> (String, bool, u64) {
        let mut left = budget;
        let diff = line_diff(a, b, &mut left);
        let text: String = diff
            .text
            .lines()
            .map(|line| match line.char_indices().nth(1) {
                Some((at, ' ')) if !line.starts_with("@@") => {
                    format!("{}{}\n", &line[..at], &line[at + 1..])
                }
                _ => format!("{line}\n"),
            })
            .collect();
        (text, diff.detailed, left)
    }

    #[test]
    fn a_diff_within_the_budget_is_similars_unified_diff() {
        let numbered = |n: usize, changed: &[usize]| -> String {
            (0..n)
                .map(|i| {
                    if changed.contains(&i) {
                        format!("line {i} changed\n")
                    } else {
                        format!("line {i}\n")
                    }
                })
                .collect()
        };
        for (a, b) in [
            (numbered(12, &[]), numbered(12, &[2, 9])),
            (numbered(300, &[]), numbered(290, &[5, 150, 151, 152])),
            ("a\nb\nc\n".to_owned(), "c\nb\na\n".to_owned()),
            (String::new(), "new\n".to_owned()),
        ] {
            let expected = similar::TextDiff::from_lines(&a, &b)
                .unified_diff()
                .context_radius(CONTEXT_LINES)
                .missing_newline_hint(false)
                .to_string();
            let (text, detailed, left) = as_similar_prints(&a, &b, DIFF_BUDGET);
            assert!(detailed);
            assert!(left < DIFF_BUDGET || a.is_empty(), "{a:?} -> {b:?}");
            assert_eq!(text, expected, "{a:?} -> {b:?}");
        }
    }

    #[test]
    fn search_steps_are_counted_and_stop_at_the_limit() {
        // Common first and last lines are free; one line for another is
        // five steps (two diagonals at d = 1, three at d = 2, the last
        // ending the search).
        assert_eq!(search_steps(&[1, 2, 3], &[1, 2, 3], 0), Some(0));
        assert_eq!(search_steps(&[1, 2, 3], &[1, 3], 0), Some(0));
        assert_eq!(search_steps(&[1, 2, 3], &[1, 4, 3], 5), Some(5));
        assert_eq!(search_steps(&[1, 2, 3], &[1, 4, 3], 4), None);
        // Two unrelated texts of n lines cost about (2n)^2 / 2: d + 1
        // diagonals for each d below 2n, then half of the last round's,
        // up to the diagonal that ends the search.
        let a: Vec<u32> = (0..1000).collect();
        let b: Vec<u32> = (1000..2000).collect();
        let steps = search_steps(&a, &b, u64::MAX).unwrap();
        assert_eq!(steps, (0..2000u64).map(|d| d + 1).sum::<u64>() + 1001);
        assert_eq!(search_steps(&a, &b, steps - 1), None);
    }

    #[test]
    fn a_section_past_the_budget_is_one_block_and_empties_it() {
        let a = "keep\nold 1\nsame\nold 2\nend\n";
        let b = "keep\nnew 1\nsame\nnew 2\nend\n";
        let (detailed_text, detailed, left) = as_similar_prints(a, b, DIFF_BUDGET);
        assert!(detailed);
        let spent = DIFF_BUDGET - left;
        assert_eq!(
            as_similar_prints(a, b, spent),
            (detailed_text, true, 0),
            "exactly enough budget is enough"
        );
        assert_eq!(
            as_similar_prints(a, b, spent - 1),
            (
                "@@ -1,5 +1,5 @@\n keep\n-old 1\n-same\n-old 2\n+new 1\n+same\n+new 2\n end\n"
                    .to_owned(),
                false,
                0
            )
        );
    }
}
