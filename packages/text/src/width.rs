//! Text fitted to a number of terminal columns: measured by display width
//! (`unicode-width`: a CJK ideograph or an emoji takes two columns, a
//! combining mark none), cut only between grapheme clusters, and every cut
//! marked, as every other cut in Bcode is.
//!
//! This is for the operator's terminal, not for the model: the model's text
//! is bounded in bytes or characters ([`crate::bound`]), which a terminal's
//! width says nothing about.

use std::borrow::Cow;

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// The columns `text` takes on a terminal (for one line: a line feed or a
/// control character counts as nothing, so callers show those escaped
/// first).
pub fn columns(text: &str) -> usize {
    text.graphemes(true).map(grapheme_columns).sum()
}

/// The columns one grapheme cluster takes. An emoji sequence joined by
/// zero width joiners is one glyph: measured as a whole, `unicode-width`
/// says two columns, not the sum of its parts.
fn grapheme_columns(grapheme: &str) -> usize {
    grapheme.width()
}

/// `text` cut to at most `max` columns: unchanged (borrowed) when it fits,
/// else its longest prefix of whole grapheme clusters that leaves room for
/// `marker`, followed by `marker`. When even `marker` does not fit, the
/// marker alone is returned (every cut stays visible).
pub fn fit_columns<'a>(text: &'a str, max: usize, marker: &str) -> Cow<'a, str> {
    if columns(text) <= max {
        return Cow::Borrowed(text);
    }
    let budget = max.saturating_sub(columns(marker));
    let cut = prefix_within(text, budget);
    let mut out = String::with_capacity(cut + marker.len());
    out.push_str(&text[..cut]);
    out.push_str(marker);
    Cow::Owned(out)
}

/// The byte length of the longest prefix of whole grapheme clusters of
/// `text` that takes at most `budget` columns.
fn prefix_within(text: &str, budget: usize) -> usize {
    let mut used = 0;
    let mut cut = 0;
    for (start, grapheme) in text.grapheme_indices(true) {
        let width = grapheme_columns(grapheme);
        if used + width > budget {
            break;
        }
        used += width;
        cut = start + grapheme.len();
    }
    cut
}

/// How [`wrap_columns`] lays out a long text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wrap<'a> {
    /// The width of every line, indent included.
    pub max: usize,
    /// Put before each line after the first.
    pub indent: &'a str,
    /// At most this many lines; the last one ends with `marker` when text
    /// was left over.
    pub max_lines: usize,
    /// Ends the last line when the text did not fit in `max_lines`.
    pub marker: &'a str,
}

/// `text` (one line) broken into lines of at most `wrap.max` columns, at
/// spaces where a word fits, inside a word (between grapheme clusters)
/// where none does; lines after the first start with `wrap.indent`. At most
/// `wrap.max_lines` lines (at least one): when text is left over, the last
/// line is cut with `wrap.marker` (see [`fit_columns`]). An indent that
/// leaves no room for a wide character is left out. Every line fits when
/// `wrap.max` is at least 2 (one wide character).
pub fn wrap_columns(text: &str, wrap: Wrap<'_>) -> Vec<String> {
    // The indent must leave room for a wide character, or a line after the
    // first could hold nothing and still overflow.
    let indent = if columns(wrap.indent) + 2 <= wrap.max {
        wrap.indent
    } else {
        ""
    };
    let max_lines = wrap.max_lines.max(1);
    let mut lines = Vec::new();
    let mut rest = text;
    loop {
        let lead = if lines.is_empty() { "" } else { indent };
        let room = wrap.max.saturating_sub(columns(lead));
        if lines.len() + 1 == max_lines || columns(rest) <= room {
            let last = fit_columns(rest, room, wrap.marker);
            lines.push(format!("{lead}{last}"));
            return lines;
        }
        let cut = break_at(rest, room);
        lines.push(format!("{lead}{}", rest[..cut].trim_end()));
        rest = rest[cut..].trim_start();
        if rest.is_empty() {
            return lines;
        }
    }
}

/// Where to end a line of at most `room` columns taken from the start of
/// `text` (which does not fit whole): after the last space that fits, else
/// after as many grapheme clusters as fit (at least one, so a line always
/// moves on, even when `room` is smaller than a wide character).
fn break_at(text: &str, room: usize) -> usize {
    let fits = prefix_within(text, room);
    // A space right after what fits ends the line there, the word whole.
    if text[fits..].starts_with(' ') {
        return fits;
    }
    match text[..fits].rfind(' ') {
        Some(space) if !text[..space].trim().is_empty() => space,
        _ if fits > 0 => fits,
        _ => text.graphemes(true).next().map_or(text.len(), str::len),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_wide_and_zero_width_characters() {
        assert_eq!(columns("abc"), 3);
        assert_eq!(columns("日本"), 4);
        assert_eq!(columns("e\u{301}"), 1);
        assert_eq!(columns("👩\u{200d}👧"), 2);
        assert_eq!(columns(""), 0);
    }

    #[test]
    fn a_fitting_text_is_borrowed() {
        assert!(matches!(fit_columns("abc", 3, "…"), Cow::Borrowed("abc")));
    }

    #[test]
    fn a_cut_keeps_whole_graphemes_and_the_marker() {
        assert_eq!(fit_columns("abcdef", 4, "…"), "abc…");
        // A wide character that would straddle the limit is left out whole.
        assert_eq!(fit_columns("ab日本語", 5, "…"), "ab日…");
        assert_eq!(fit_columns("ab日本語", 4, "…"), "ab…");
        // A combining accent stays with its letter.
        assert_eq!(
            fit_columns("e\u{301}e\u{301}e\u{301}", 3, "…"),
            "e\u{301}e\u{301}e\u{301}"
        );
        assert_eq!(
            fit_columns("e\u{301}e\u{301}e\u{301}x", 3, "…"),
            "e\u{301}e\u{301}…"
        );
        assert_eq!(
            fit_columns("👩\u{200d}👧👩\u{200d}👧", 3, "…"),
            "👩\u{200d}👧…"
        );
    }

    #[test]
    fn the_marker_wins_over_a_limit_too_small_for_it() {
        assert_eq!(fit_columns("abcdef", 0, "…"), "…");
        assert_eq!(fit_columns("abcdef", 2, "[cut]"), "[cut]");
    }

    fn wrap(text: &str, max: usize, max_lines: usize) -> Vec<String> {
        wrap_columns(
            text,
            Wrap {
                max,
                indent: "  ",
                max_lines,
                marker: "…",
            },
        )
    }

    #[test]
    fn wrapping_breaks_at_spaces_and_indents_the_rest() {
        assert_eq!(wrap("short", 10, 3), ["short"]);
        assert_eq!(
            wrap("one two three four five", 10, 5),
            ["one two", "  three", "  four", "  five"]
        );
        // A word longer than a line is broken inside.
        assert_eq!(
            wrap("abcdefghijkl mn", 6, 5),
            ["abcdef", "  ghij", "  kl", "  mn"]
        );
        // Wide characters count two columns.
        assert_eq!(wrap("日本語 日本語", 7, 5), ["日本語", "  日本", "  語"]);
    }

    #[test]
    fn wrapping_stops_at_the_line_limit_with_a_marker() {
        assert_eq!(
            wrap("one two three four five six", 10, 2),
            ["one two", "  three f…"]
        );
        assert_eq!(wrap("one two three", 5, 1), ["one …"]);
    }

    #[test]
    fn every_wrapped_line_fits() {
        let text = "Use when writing or reviewing Storybook stories 日本語 for React components, e\u{301}tc.";
        for max in 1..40 {
            for line in wrap(text, max, 100) {
                assert!(columns(&line) <= max.max(2), "{max}: {line:?}");
            }
            let all = wrap(text, max, 100).join(" ");
            assert_eq!(
                all.split_whitespace().collect::<String>(),
                text.split_whitespace().collect::<String>(),
                "{max}: nothing lost"
            );
        }
    }
}
