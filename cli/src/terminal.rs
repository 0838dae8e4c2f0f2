//! Text from skills and repositories made safe to print on a terminal.
//!
//! A skill's name, description, body, a diagnostic's source excerpt or a
//! folder name are written by whoever wrote the repository. Printed raw, an
//! escape sequence in them is obeyed by the operator's terminal: OSC 52
//! writes the clipboard, OSC 0 sets the window title, `ESC [2J` clears the
//! screen, `\r` overwrites what was printed before and bidi overrides
//! reorder what is shown. Human output therefore shows every such character
//! as a visible escape (`\u{1b}`); JSON output needs none of this, because
//! JSON strings escape control characters themselves and stay exact.
//!
//! Output that *is* the prompt (`render`, `skills catalog`, `skills
//! context`) or quotes it line by line (`diff`) is escaped only on a
//! terminal ([`on_stdout`]): piped or redirected, it stays byte for byte
//! what the model receives.
//!
//! Output meant for reading in a session is fitted to the terminal's width
//! ([`Fit`]); on a pipe it stays whole.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};

/// Whether standard output is a terminal.
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// `text` as written to standard output by a command whose output is the
/// prompt itself: escaped like [`printable`] when standard output is a
/// terminal, unchanged (byte-exact) on a pipe or in a file.
pub fn on_stdout(text: &str) -> Cow<'_, str> {
    if stdout_is_terminal() {
        printable(text)
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` with every control character shown as `\u{..}`, except the line
/// feed and tab that multi-line layout needs. Borrows when nothing changes,
/// which is the common case.
pub fn printable(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t')
}

/// Like [`printable`], for a value printed on one line (an id, a path, a
/// source line): line feeds and tabs are shown as escapes too.
pub fn printable_line(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

fn escape(text: &str, keep: fn(char) -> bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| is_control(c) && !keep(c);
    let Some(first) = text.find(unsafe_char) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if unsafe_char(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The width assumed when a terminal does not tell its own (a pseudo-
/// terminal nobody sized reports 0) and `COLUMNS` does not either: the
/// width terminals open with.
pub const DEFAULT_COLUMNS: usize = 80;

/// The narrowest width output is fitted to: narrower, a wrapped listing
/// would be a column of fragments.
pub const MIN_COLUMNS: usize = 20;

/// The width of the terminal on standard output: `None` when standard
/// output is not a terminal (output then stays whole, for a pipe or a
/// file); else the terminal's own width, or `columns` (the `COLUMNS`
/// variable) when the terminal tells none, or [`DEFAULT_COLUMNS`]. Never
/// below [`MIN_COLUMNS`].
pub fn stdout_columns(columns: Option<&str>) -> Option<usize> {
    if !stdout_is_terminal() {
        return None;
    }
    let told = terminal_columns()
        .filter(|&n| n > 0)
        .or_else(|| columns.and_then(|c| c.trim().parse::<usize>().ok()))
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_COLUMNS);
    Some(told.max(MIN_COLUMNS))
}

#[cfg(unix)]
fn terminal_columns() -> Option<usize> {
    rustix::termios::tcgetwinsize(std::io::stdout())
        .ok()
        .map(|size| usize::from(size.ws_col))
}

#[cfg(not(unix))]
fn terminal_columns() -> Option<usize> {
    None
}

/// How lines of a session are fitted to the terminal: `None` columns
/// writes them whole (standard output is not a terminal). Lines are given
/// already made [`printable_line`], so what is measured is what is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fit {
    /// The width to fit to.
    pub columns: Option<usize>,
}

/// The mark at the end of a line cut at the terminal's width.
pub const CUT_MARKER: &str = "…";

impl Fit {
    /// `text` (one line) wrapped at the width, the lines after the first
    /// starting with `indent`, at most `max_lines` of them, the last one
    /// cut with [`CUT_MARKER`] when text is left over.
    pub fn wrap(
        self,
        out: &mut dyn Write,
        text: &str,
        indent: &str,
        max_lines: usize,
    ) -> std::io::Result<()> {
        let Some(max) = self.columns else {
            return writeln!(out, "{text}");
        };
        let wrap = bcode_prompt::text::Wrap {
            max,
            indent,
            max_lines,
            marker: CUT_MARKER,
        };
        for line in bcode_prompt::text::wrap_columns(text, wrap) {
            writeln!(out, "{line}")?;
        }
        Ok(())
    }

    /// `text` (one line) cut at the width with [`CUT_MARKER`]: for rows
    /// that must stay one line each (a table's, a preview's).
    pub fn cut(self, out: &mut dyn Write, text: &str) -> std::io::Result<()> {
        match self.columns {
            Some(max) => writeln!(
                out,
                "{}",
                bcode_prompt::text::fit_columns(text, max, CUT_MARKER)
            ),
            None => writeln!(out, "{text}"),
        }
    }
}

/// C0 controls (ESC, BEL, CR, ...), DEL, C1 controls (the 8-bit CSI and OSC
/// that some terminals still obey), the bidirectional formatting
/// characters that make a terminal show text in another order than it is,
/// and the invisible ones that hide a character between two others (zero
/// width space, word joiner and invisible operators, the byte order mark).
/// The zero width joiner and non-joiner are kept: emoji sequences and
/// Indic and Persian script need them, and they hide nothing.
fn is_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{61c}'
                | '\u{200b}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: &str, expected_line: &str) {
        assert_eq!(printable(input), expected, "printable({input:?})");
        assert_eq!(
            printable_line(input),
            expected_line,
            "printable_line({input:?})"
        );
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        assert!(matches!(
            printable("Rust failures: café ✓"),
            Cow::Borrowed("Rust failures: café ✓")
        ));
        assert!(matches!(printable_line("a b"), Cow::Borrowed("a b")));
    }

    #[test]
    fn escape_sequences_are_made_visible() {
        // OSC 52 (clipboard write), OSC 0 (window title), screen clear.
        check(
            "\u{1b}]52;c;cm0gLXJmIH4=\u{7}",
            "\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}",
            "\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}",
        );
        check(
            "x\u{1b}]0;pwned\u{1b}\\y",
            "x\\u{1b}]0;pwned\\u{1b}\\y",
            "x\\u{1b}]0;pwned\\u{1b}\\y",
        );
        check(
            "\u{1b}[2J\u{1b}[H",
            "\\u{1b}[2J\\u{1b}[H",
            "\\u{1b}[2J\\u{1b}[H",
        );
        check("ok\rfake", "ok\\u{d}fake", "ok\\u{d}fake");
        check("\u{9b}31m\u{7f}", "\\u{9b}31m\\u{7f}", "\\u{9b}31m\\u{7f}");
        check("abc\u{202e}fed", "abc\\u{202e}fed", "abc\\u{202e}fed");
        check(
            "r\u{200b}m \u{61c}\u{2060}\u{feff}",
            "r\\u{200b}m \\u{61c}\\u{2060}\\u{feff}",
            "r\\u{200b}m \\u{61c}\\u{2060}\\u{feff}",
        );
        // Joiners are part of the text they join.
        check(
            "👩\u{200d}👧 می\u{200c}خواهم",
            "👩\u{200d}👧 می\u{200c}خواهم",
            "👩\u{200d}👧 می\u{200c}خواهم",
        );
    }

    fn fitted(columns: Option<usize>, write: impl Fn(Fit, &mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        write(Fit { columns }, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lines_are_fitted_only_to_a_known_width() {
        let text = "  storybook [repo:.agents/skills]: Use when writing Storybook stories";
        assert_eq!(
            fitted(None, |fit, out| fit.wrap(out, text, "    ", 3).unwrap()),
            format!("{text}\n")
        );
        assert_eq!(
            fitted(Some(30), |fit, out| fit.wrap(out, text, "    ", 3).unwrap()),
            "  storybook\n    [repo:.agents/skills]: Use\n    when writing Storybook st…\n"
        );
        assert_eq!(
            fitted(Some(30), |fit, out| fit
                .cut(out, "│ | a | b | c | d | e | f | g | h |")
                .unwrap()),
            "│ | a | b | c | d | e | f | g…\n"
        );
        assert_eq!(
            fitted(None, |fit, out| fit.cut(out, "a b").unwrap()),
            "a b\n"
        );
    }

    #[test]
    fn layout_characters_are_kept_only_by_printable() {
        check("a\n\tb", "a\n\tb", "a\\u{a}\\u{9}b");
    }
}
