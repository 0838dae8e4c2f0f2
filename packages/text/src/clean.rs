//! Model-visible text hygiene: what a repository wrote (a skill's name,
//! description and body, a branch name, an invariant's title) made safe to
//! place in the prompt, with nothing hidden from the reader and nothing
//! that breaks the XML-style blocks around it.
//!
//! Three kinds of character are treated, everything else is kept byte for
//! byte (so clean text is borrowed unchanged):
//!
//! - *hidden* characters are shown as a visible escape, `\u{1b}`, the form
//!   the CLI's terminal output uses for people: C0 controls other than tab
//!   and line feed (XML 1.0 forbids them even escaped), DEL, C1 controls,
//!   the bidirectional formatting characters (U+061C, U+200E, U+200F,
//!   U+202A to U+202E, U+2066 to U+2069), the zero-width characters (U+200B
//!   to U+200D, U+2060, U+FEFF) and the noncharacters U+FFFE and U+FFFF
//!   (also outside XML 1.0);
//! - *line breaks* (LF, CR, CRLF, NEL U+0085, and the line and paragraph
//!   separators U+2028 and U+2029) end a line: a line feed in a body, a
//!   space in a one-line value (CRLF counts once);
//! - the tab is kept.
//!
//! The zero-width joiner (U+200D) is escaped too, so an emoji sequence it
//! joins shows its parts and the escape: hiding text between visible
//! characters is what it would otherwise allow.
//!
//! The escape is ASCII without XML's special characters, so escaping after
//! cleaning needs nothing more, and sizes measured on cleaned text stay
//! exact through escaping. Clean before cutting or measuring.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` as one line: hidden characters escaped visibly (`\u{1b}`), line
/// breaks turned into a space. For names, ids, paths, labels and other
/// facts the prompt shows on one line or in an attribute.
pub fn clean_line(text: &str) -> Cow<'_, str> {
    clean(text, Mode::Line)
}

/// `text` as a body or a multi-line value: hidden characters escaped
/// visibly (`\u{1b}`), every line break a line feed (CRLF and a lone CR
/// too); tabs and line feeds are the only control characters left.
pub fn clean_body(text: &str) -> Cow<'_, str> {
    clean(text, Mode::Body)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Line,
    Body,
}

/// What cleaning does with one character.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Keep,
    Break,
    Hidden,
}

fn classify(c: char, mode: Mode) -> Class {
    match c {
        '\t' => Class::Keep,
        '\n' if mode == Mode::Body => Class::Keep,
        '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}' => Class::Break,
        c if is_hidden(c) => Class::Hidden,
        _ => Class::Keep,
    }
}

/// Hidden characters (see the module documentation), line breaks aside.
fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2060}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
        | '\u{fffe}'
        | '\u{ffff}')
}

fn clean(text: &str, mode: Mode) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    if !maybe_unclean(bytes, mode) {
        return Cow::Borrowed(text);
    }
    // Only the bytes `maybe_unclean` counts can start a treated character,
    // and each is ASCII or a lead byte, so every one is a character
    // boundary: the text between them is copied as it is (ordinary
    // non-ASCII text such as `—` or `’` costs one decode, not a copy).
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        if !bytewise_unclean(&bytes[at..=at], mode) {
            at += 1;
            continue;
        }
        let Some(c) = text.get(at..).and_then(|rest| rest.chars().next()) else {
            break;
        };
        let class = classify(c, mode);
        let mut next = at + c.len_utf8();
        if class == Class::Keep {
            at = next;
            continue;
        }
        let out = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
        out.push_str(text.get(copied..at).unwrap_or_default());
        match class {
            Class::Break => {
                if c == '\r' && bytes.get(next) == Some(&b'\n') {
                    next += 1;
                }
                out.push(if mode == Mode::Line { ' ' } else { '\n' });
            }
            // Writing to a `String` cannot fail.
            _ => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
        at = next;
        copied = next;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.push_str(text.get(copied..).unwrap_or_default());
            Cow::Owned(out)
        }
    }
}

/// Whether `bytes` may hold a character cleaning changes: a control byte
/// (tab, and in a body the line feed, aside), DEL, or the lead byte of a
/// two- or three-byte sequence in whose range a treated character lies
/// (`C2` for U+0080 to U+009F, `D8` for U+061C, `E2` for U+2000 to U+2FFF,
/// `EF` for U+F000 to U+FFFF). Most values are printable ASCII: eight bytes
/// at a time are settled by one word test (no byte below a space or above
/// `~`), and only a word that fails it is looked at byte by byte. A catalog
/// of 10,000 skills scans megabytes here on every format.
fn maybe_unclean(bytes: &[u8], mode: Mode) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        // Some byte below 0x20, or above 0x7e (the bit hacks `hasless` and
        // `hasmore`, exact as a yes or no for these bounds).
        let below_space = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
        // `hasmore(x, 0x7e)` adds `127 - 0x7e`, one, to every byte.
        let above_tilde = (x.wrapping_add(ONES) | x) & HIGH;
        if below_space | above_tilde != 0 && bytewise_unclean(chunk, mode) {
            return true;
        }
    }
    bytewise_unclean(words.remainder(), mode)
}

/// [`maybe_unclean`] one byte at a time: a branch-free fold the compiler
/// vectorises.
fn bytewise_unclean(bytes: &[u8], mode: Mode) -> bool {
    let newline_ok = mode == Mode::Body;
    let mut hits = 0u8;
    for &b in bytes {
        let control = (b < 0x20) & (b != b'\t') & !(newline_ok & (b == b'\n'));
        hits |=
            u8::from(control | (b == 0x7f) | (b == 0xc2) | (b == 0xd8) | (b == 0xe2) | (b == 0xef));
    }
    hits != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, line: &str, body: &str) {
        assert_eq!(clean_line(input), line, "clean_line({input:?})");
        assert_eq!(clean_body(input), body, "clean_body({input:?})");
    }

    #[test]
    fn clean_text_is_borrowed_unchanged() {
        for text in [
            "",
            "plain",
            "tab\tkept",
            "Café — “quoted” … ✓",
            "👍🏽 e\u{301}",
        ] {
            assert!(matches!(clean_line(text), Cow::Borrowed(_)), "{text:?}");
            assert!(matches!(clean_body(text), Cow::Borrowed(_)), "{text:?}");
        }
        assert!(matches!(clean_body("a\nb\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn hidden_characters_are_escaped_visibly() {
        check("a\u{0}b", "a\\u{0}b", "a\\u{0}b");
        check(
            "\u{1b}[2J\u{8}\u{7f}",
            "\\u{1b}[2J\\u{8}\\u{7f}",
            "\\u{1b}[2J\\u{8}\\u{7f}",
        );
        check("\u{9b}31m", "\\u{9b}31m", "\\u{9b}31m");
        check(
            "abc\u{202e}fed\u{2066}\u{200f}\u{61c}",
            "abc\\u{202e}fed\\u{2066}\\u{200f}\\u{61c}",
            "abc\\u{202e}fed\\u{2066}\\u{200f}\\u{61c}",
        );
        check(
            "zero\u{200b}width\u{200d}\u{2060}\u{feff}",
            "zero\\u{200b}width\\u{200d}\\u{2060}\\u{feff}",
            "zero\\u{200b}width\\u{200d}\\u{2060}\\u{feff}",
        );
        check(
            "\u{fffe}\u{ffff}",
            "\\u{fffe}\\u{ffff}",
            "\\u{fffe}\\u{ffff}",
        );
    }

    #[test]
    fn line_breaks_end_a_line_or_become_a_space() {
        check("a\nb", "a b", "a\nb");
        check("a\r\nb\rc", "a b c", "a\nb\nc");
        check("a\u{2028}b\u{2029}c\u{85}d", "a b c d", "a\nb\nc\nd");
        check("a\r\r\n\n", "a   ", "a\n\n\n");
        check("\tx\t", "\tx\t", "\tx\t");
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Text rich in what cleaning treats, mixed with ordinary text.
    fn text() -> impl Strategy<Value = String> {
        "([\\x00-\\x1f\\x7f-\\u{9f}\\u{61c}\\u{200b}-\\u{200f}\\u{2028}-\\u{202e}\\u{2060}-\\u{2069}\\u{feff}\\u{fffe}\\u{ffff}]|[a-z <&>\\\\{}]|é|—|\\PC){0,40}"
    }

    fn forbidden_in_body(c: char) -> bool {
        classify(c, Mode::Body) != Class::Keep
    }

    /// The word test never settles a word the byte test would flag: every
    /// byte value, at every position of a word and of the remainder.
    #[test]
    fn the_word_test_agrees_with_the_byte_test() {
        for mode in [Mode::Line, Mode::Body] {
            for at in 0..19 {
                for byte in 0..=u8::MAX {
                    let mut bytes = vec![b'a'; 19];
                    bytes[at] = byte;
                    assert_eq!(
                        maybe_unclean(&bytes, mode),
                        bytewise_unclean(&bytes, mode),
                        "byte {byte:#x} at {at}"
                    );
                }
            }
        }
    }

    proptest! {
        /// Nothing hidden survives; a line has no break, a body only LF.
        #[test]
        fn cleaned_text_holds_no_forbidden_character(text in text()) {
            let line = clean_line(&text);
            prop_assert!(
                !line.chars().any(|c| c != '\t'
                    && (c.is_control() || is_hidden(c) || matches!(c, '\u{2028}' | '\u{2029}'))),
                "{:?}", line
            );
            let body = clean_body(&text);
            prop_assert!(!body.chars().any(forbidden_in_body), "{:?}", body);
            prop_assert!(!body.contains('\r'));
        }

        /// Cleaning twice changes nothing more, and text that needs no
        /// cleaning comes back borrowed.
        #[test]
        fn cleaning_is_idempotent(text in text()) {
            let line = clean_line(&text);
            prop_assert_eq!(clean_line(&line), line.clone());
            prop_assert!(matches!(clean_line(&line), Cow::Borrowed(_)));
            let body = clean_body(&text);
            prop_assert_eq!(clean_body(&body), body.clone());
            prop_assert!(matches!(clean_body(&body), Cow::Borrowed(_)));
        }

        /// The byte pre-check never misses a character cleaning changes.
        #[test]
        fn the_fast_check_never_misses(text in text()) {
            for mode in [Mode::Line, Mode::Body] {
                let changes = text.chars().any(|c| classify(c, mode) != Class::Keep);
                prop_assert!(!changes || maybe_unclean(text.as_bytes(), mode));
            }
        }

        /// Text without hidden characters loses nothing: a line is the
        /// text with each break a space, a body the text with each break
        /// a line feed (breaks apart, so no CR and LF make one CRLF).
        #[test]
        fn only_breaks_change_in_ordinary_text(
            parts in proptest::collection::vec(("[a-z\t é—]{1,6}", prop_oneof![
                Just("\n"), Just("\r\n"), Just("\r"), Just("\u{85}"), Just("\u{2028}"), Just("\u{2029}"),
            ]), 0..8),
        ) {
            let text: String = parts.iter().map(|(t, b)| format!("{t}{b}")).collect();
            let line: String = parts.iter().map(|(t, _)| format!("{t} ")).collect();
            let body: String = parts.iter().map(|(t, _)| format!("{t}\n")).collect();
            prop_assert_eq!(clean_line(&text), line);
            prop_assert_eq!(clean_body(&text), body);
        }
    }
}
