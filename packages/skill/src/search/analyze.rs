//! Text to index terms, the same for a skill's fields and a task: words are
//! cut at anything but letters and digits, identifiers are split
//! (`snake_case`, `camelCase`, `kebab-case`, each also kept joined), file
//! extensions are kept as terms of their own (`.pptx`, `.stl`), runs of
//! CJK characters become overlapping pairs, and English words lose their
//! stop words and meet at one Snowball stem. No I/O.
//!
//! [`for_each_word`] does the cutting; [`Normalizer`] turns a word into its
//! term (or nothing, for a stop word), remembering each answer, since a
//! registry repeats the same few thousand words millions of times.

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;

/// Parts of an identifier longer than this are not words (hashes, base64,
/// minified code) and are left out.
pub const MAX_WORD_BYTES: usize = 40;

/// An identifier of more parts than this is kept in its parts only (the
/// joined form of a long path or sentence-like identifier matches nothing).
const MAX_JOINED_PARTS: usize = 4;

/// The longest extension kept as a term (`.xhtml`, `.ipynb`).
const MAX_EXTENSION_CHARS: usize = 5;

/// Calls `emit` with every word of `text`, lowercased: identifier parts,
/// joined identifiers, extensions with their dot, CJK pairs. Linear in the
/// text; a word is only ever a slice of a reused buffer.
///
/// ASCII runs (nearly all of a registry's text) are cut byte by byte with
/// no allocation; a run holding any other character takes the slower path
/// that decodes it into characters, with the same rules.
pub fn for_each_word(text: &str, emit: &mut dyn FnMut(&str)) {
    let mut buffers = Buffers::default();
    let bytes = text.as_bytes();
    let mut start = None;
    let mut ascii = true;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        let (inside, width) = if byte.is_ascii() {
            (
                byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'),
                1,
            )
        } else {
            // `at` is always at a character's start: it moves by whole
            // characters.
            match text.get(at..).and_then(|rest| rest.chars().next()) {
                Some(c) => (c.is_alphanumeric(), c.len_utf8()),
                None => (false, 1),
            }
        };
        match (inside, start) {
            (true, None) => {
                start = Some(at);
                ascii = width == 1;
            }
            (true, Some(_)) => ascii &= width == 1,
            (false, Some(from)) => {
                if let Some(raw) = text.get(from..at) {
                    split_chunk(raw, ascii, &mut buffers, emit);
                }
                start = None;
            }
            (false, None) => {}
        }
        at += width;
    }
    if let Some(raw) = start.and_then(|from| text.get(from..)) {
        split_chunk(raw, ascii, &mut buffers, emit);
    }
}

/// The buffers one text's words are cut into, reused from run to run.
#[derive(Default)]
struct Buffers {
    /// The run lowercased (ASCII), or the current part (other scripts).
    part: String,
    /// The parts joined, for an identifier of a few parts.
    joined: String,
    /// An extension with its dot.
    extension: String,
    /// The run's characters (other scripts only).
    chars: Vec<char>,
}

/// One run of letters, digits, `_`, `-` and `.`: its extension, its parts
/// and, for an identifier of a few parts, the parts joined.
fn split_chunk(raw: &str, ascii: bool, buffers: &mut Buffers, emit: &mut dyn FnMut(&str)) {
    let trimmed = raw.trim_matches(|c| matches!(c, '_' | '-' | '.'));
    if trimmed.is_empty() {
        return;
    }
    extension(raw, &mut buffers.extension, emit);
    if ascii {
        split_ascii(trimmed, buffers, emit);
    } else {
        split_chars(trimmed, buffers, emit);
    }
}

/// [`split_chunk`]'s parts of an ASCII run: the run is lowercased once and
/// each part is a slice of it, so no part is copied.
fn split_ascii(trimmed: &str, buffers: &mut Buffers, emit: &mut dyn FnMut(&str)) {
    let Buffers {
        part: lower,
        joined,
        ..
    } = buffers;
    lower.clear();
    lower.push_str(trimmed);
    lower.make_ascii_lowercase();
    joined.clear();
    let bytes = trimmed.as_bytes();
    let mut parts = 0usize;
    let mut joinable = true;
    let mut from = 0usize;
    let mut end_part = |from: usize, to: usize, joined: &mut String, parts: &mut usize| {
        if let Some(part) = lower.get(from..to).filter(|part| !part.is_empty()) {
            if part.len() <= MAX_WORD_BYTES {
                emit_part(part, emit);
                joined.push_str(part);
            }
            *parts += 1;
        }
    };
    for (i, &byte) in bytes.iter().enumerate() {
        match byte {
            b'.' | b'_' | b'-' => {
                end_part(from, i, joined, &mut parts);
                // A dotted name (`file.pptx`, `node.js`) is not an
                // identifier whose joined form means anything.
                joinable &= byte != b'.';
                from = i + 1;
            }
            _ if i > from && ascii_camel_boundary(bytes, i) => {
                end_part(from, i, joined, &mut parts);
                from = i;
            }
            _ => {}
        }
    }
    end_part(from, bytes.len(), joined, &mut parts);
    if joinable && (2..=MAX_JOINED_PARTS).contains(&parts) && joined.len() <= MAX_WORD_BYTES {
        emit(joined);
    }
}

/// [`camel_boundary`] for ASCII bytes: the same rule, where only ASCII
/// letters have a case.
fn ascii_camel_boundary(bytes: &[u8], i: usize) -> bool {
    let (Some(&before), Some(&c)) = (bytes.get(i.wrapping_sub(1)), bytes.get(i)) else {
        return false;
    };
    if !c.is_ascii_uppercase() {
        return false;
    }
    if before.is_ascii_lowercase() {
        return true;
    }
    before.is_ascii_uppercase() && bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase)
}

/// [`split_chunk`]'s parts of a run holding other scripts, character by
/// character.
fn split_chars(trimmed: &str, buffers: &mut Buffers, emit: &mut dyn FnMut(&str)) {
    let Buffers {
        part,
        joined,
        chars,
        ..
    } = buffers;
    chars.clear();
    chars.extend(trimmed.chars());
    let chars = &*chars;
    let mut parts = 0usize;
    let mut joinable = true;
    joined.clear();
    part.clear();
    for (i, &c) in chars.iter().enumerate() {
        if c == '.' {
            flush(part, joined, &mut parts, emit);
            joinable = false;
            continue;
        }
        if c == '_' || c == '-' {
            flush(part, joined, &mut parts, emit);
            continue;
        }
        if is_cjk(c) {
            flush(part, joined, &mut parts, emit);
            joinable = false;
            cjk_pair(chars, i, part, emit);
            continue;
        }
        if i > 0 && camel_boundary(chars, i) {
            flush(part, joined, &mut parts, emit);
        }
        part.extend(c.to_lowercase());
    }
    flush(part, joined, &mut parts, emit);
    if joinable && (2..=MAX_JOINED_PARTS).contains(&parts) && joined.len() <= MAX_WORD_BYTES {
        emit(joined);
    }
}

/// Ends the identifier part in `part`: emitted as a word, added to the
/// joined form, counted.
fn flush(part: &mut String, joined: &mut String, parts: &mut usize, emit: &mut dyn FnMut(&str)) {
    if part.is_empty() {
        return;
    }
    if part.len() <= MAX_WORD_BYTES {
        emit_part(part, emit);
        joined.push_str(part);
    }
    *parts += 1;
    part.clear();
}

/// A part is a word unless it is a single ASCII character (`a`, `s` of
/// `it's`, `x` of `1x`), which says nothing on its own.
fn emit_part(part: &str, emit: &mut dyn FnMut(&str)) {
    if part.len() == 1 && part.is_ascii() {
        return;
    }
    emit(part);
}

/// `.ext` of a file name in `raw` (`report.pptx`, `*.stl` seen as `.stl`):
/// one to five ASCII letters or digits, at least one a letter, after a name
/// of two characters or more or after nothing (so `e.g` is not `.g`).
fn extension(raw: &str, term: &mut String, emit: &mut dyn FnMut(&str)) {
    // Byte by byte: a run is a few bytes long, and `.` is ASCII, so each
    // cut is at a character's boundary. (`rfind` and `trim_end_matches`
    // cost more to set up than to run on a word; this is on every word.)
    let bytes = raw.as_bytes();
    let end = bytes
        .iter()
        .rposition(|&b| b != b'.')
        .map_or(0, |at| at + 1);
    let Some(dot) = bytes[..end].iter().rposition(|&b| b == b'.') else {
        return;
    };
    let (Some(base), Some(ext)) = (raw.get(..dot), raw.get(dot + 1..end)) else {
        return;
    };
    let base = base.trim_start_matches(['.', '_', '-']);
    if ext.is_empty()
        || ext.len() > MAX_EXTENSION_CHARS
        || !ext.bytes().all(|b| b.is_ascii_alphanumeric())
        || !ext.bytes().any(|b| b.is_ascii_alphabetic())
        || (!base.is_empty() && base.chars().count() < 2)
    {
        return;
    }
    term.clear();
    term.push('.');
    term.push_str(ext);
    term.make_ascii_lowercase();
    emit(term);
}

/// Whether a new identifier part starts at `chars[i]`: a capital after a
/// lowercase letter (`camelCase`), or the last capital of a run followed by
/// a lowercase letter (`HTTPServer` is `http`, `server`). Letters and
/// digits stay together (`utf8`, `python3`).
fn camel_boundary(chars: &[char], i: usize) -> bool {
    let (Some(&before), Some(&c)) = (chars.get(i.wrapping_sub(1)), chars.get(i)) else {
        return false;
    };
    if !c.is_uppercase() {
        return false;
    }
    if before.is_lowercase() {
        return true;
    }
    before.is_uppercase() && chars.get(i + 1).is_some_and(|next| next.is_lowercase())
}

/// Ideographs, kana and hangul: scripts written without spaces, where a
/// word is best approximated by overlapping pairs of characters.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // hiragana, katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // hangul syllables
        | 0xF900..=0xFAFF) // CJK compatibility ideographs
}

/// The pair starting at `chars[i]` when the next character is CJK too; a
/// lone CJK character between others is its own word.
fn cjk_pair(chars: &[char], i: usize, buf: &mut String, emit: &mut dyn FnMut(&str)) {
    buf.clear();
    buf.push(chars[i]);
    match chars.get(i + 1) {
        Some(&next) if is_cjk(next) => {
            buf.push(next);
            emit(buf);
        }
        _ => {
            let after_cjk = i > 0 && chars.get(i - 1).is_some_and(|&p| is_cjk(p));
            if !after_cjk {
                emit(buf);
            }
        }
    }
    buf.clear();
}

/// Words to terms: stop words dropped, English words stemmed, everything
/// else kept as written. Remembers each word's answer, so each distinct
/// word is stemmed once.
pub struct Normalizer {
    stemmer: Stemmer,
    /// Each word remembered, by its number in `terms`: one hash of the
    /// word answers a word seen before.
    seen: FxHashMap<Box<str>, u32>,
    terms: Vec<Option<Box<str>>>,
    /// How many times what was remembered was forgotten: a word's number
    /// means something only with the count it was given under.
    forgotten: u64,
    /// Words remembered at most ([`MAX_REMEMBERED`]; tests lower it).
    max_words: usize,
}

impl std::fmt::Debug for Normalizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Normalizer")
            .field("words", &self.seen.len())
            .finish()
    }
}

impl Default for Normalizer {
    fn default() -> Self {
        Normalizer::new()
    }
}

/// Words remembered at most; past this (a hostile tree of a million
/// distinct words) what was remembered is forgotten and remembering starts
/// again, so memory stays bounded and a word costs at most one stemming
/// more.
pub(crate) const MAX_REMEMBERED: usize = 1 << 20;

impl Normalizer {
    /// A normalizer with nothing remembered.
    pub fn new() -> Self {
        Normalizer {
            stemmer: Stemmer::create(Algorithm::English),
            seen: FxHashMap::default(),
            terms: Vec::new(),
            forgotten: 0,
            max_words: MAX_REMEMBERED,
        }
    }

    /// A normalizer that remembers at most `words` words, so tests see it
    /// forget.
    #[cfg(test)]
    pub(crate) fn remembering_at_most(words: usize) -> Self {
        Normalizer {
            max_words: words,
            ..Normalizer::new()
        }
    }

    /// The term of `word` (a lowercase word of [`for_each_word`]), or `None`
    /// for a stop word.
    pub fn term(&mut self, word: &str) -> Option<&str> {
        let (number, _) = self.number(word);
        self.term_of(number)
    }

    /// The number `word` is remembered by (remembered now if it was not),
    /// and how many times what was remembered had been forgotten then: the
    /// number means `word` while that count holds.
    pub(crate) fn number(&mut self, word: &str) -> (u32, u64) {
        let at = match self.seen.get(word) {
            Some(&at) => at,
            None => {
                if self.seen.len() >= self.max_words {
                    self.seen.clear();
                    self.terms.clear();
                    self.forgotten += 1;
                }
                let at = self.terms.len() as u32;
                self.terms.push(self.compute(word));
                self.seen.insert(word.into(), at);
                at
            }
        };
        (at, self.forgotten)
    }

    /// The term of the word remembered by `number` ([`Normalizer::number`]),
    /// or `None` for a stop word.
    pub(crate) fn term_of(&self, number: u32) -> Option<&str> {
        self.terms.get(number as usize).and_then(|t| t.as_deref())
    }

    /// The term of `word` without remembering it: for a caller that
    /// remembers words its own way (the index builder keeps each word's
    /// term number instead).
    pub(crate) fn compute(&self, word: &str) -> Option<Box<str>> {
        if is_stop_word(word) {
            return None;
        }
        // Only plain English words are stemmed: a word with digits, an
        // extension or another script is a name, kept as written.
        if word.len() > 2 && word.bytes().all(|b| b.is_ascii_lowercase()) {
            return Some(self.stemmer.stem(word).into());
        }
        Some(word.into())
    }
}

/// Calls `emit` with every term of `text`: [`for_each_word`], then
/// [`Normalizer::term`].
pub fn for_each_term(text: &str, normalizer: &mut Normalizer, emit: &mut dyn FnMut(&str)) {
    for_each_word(text, &mut |word| {
        if let Some(term) = normalizer.term(word) {
            emit(term);
        }
    });
}

/// The English stop words: function words that carry no topic. Sorted, for
/// a binary search.
const STOP_WORDS: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "either",
    "etc",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "however",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "might",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "within",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_word(text, &mut |w| out.push(w.to_owned()));
        out
    }

    fn terms(text: &str) -> Vec<String> {
        let mut normalizer = Normalizer::new();
        let mut out = Vec::new();
        for_each_term(text, &mut normalizer, &mut |t| out.push(t.to_owned()));
        out
    }

    #[test]
    fn stop_words_are_sorted_for_the_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn identifiers_split_and_keep_their_joined_form() {
        assert_eq!(words("snake_case"), ["snake", "case", "snakecase"]);
        assert_eq!(words("camelCase"), ["camel", "case", "camelcase"]);
        assert_eq!(words("kebab-case"), ["kebab", "case", "kebabcase"]);
        assert_eq!(words("HTTPServer"), ["http", "server", "httpserver"]);
        assert_eq!(words("utf8 python3"), ["utf8", "python3"]);
        // Letters alone are not words, but joined they are one.
        assert_eq!(words("e-mail a-b-c"), ["mail", "email", "abc"]);
        // A long identifier is kept in parts only.
        assert_eq!(
            words("one-two-three-four-five"),
            ["one", "two", "three", "four", "five"]
        );
    }

    #[test]
    fn extensions_are_terms_of_their_own() {
        assert_eq!(words("report.pptx"), [".pptx", "report", "pptx"]);
        assert_eq!(words("*.stl files"), [".stl", "stl", "files"]);
        assert_eq!(words("node.js."), [".js", "node", "js"]);
        // Not extensions: an abbreviation, a version, a sentence's end.
        assert_eq!(words("e.g. v1.2 done."), ["v1", "done"]);
    }

    #[test]
    fn cjk_runs_become_pairs() {
        assert_eq!(words("技能报告"), ["技能", "能报", "报告"]);
        assert_eq!(words("x 技 y"), ["技"]);
    }

    #[test]
    fn terms_drop_stop_words_and_meet_at_one_stem() {
        assert_eq!(
            terms("Write the Storybook stories for these components"),
            ["write", "storybook", "stori", "compon"]
        );
        assert_eq!(terms("testing tests tested"), ["test", "test", "test"]);
        // Words of other scripts and words with digits are kept as written.
        assert_eq!(terms("отчёты h264"), ["отчёты", "h264"]);
    }

    /// The words of `text` cut the slower way, character by character,
    /// for every run: what the ASCII path must agree with.
    fn words_by_characters(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut buffers = Buffers::default();
        let mut emit = |w: &str| out.push(w.to_owned());
        let mut start = None;
        for (at, c) in text.char_indices() {
            let inside = c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
            match (inside, start) {
                (true, None) => start = Some(at),
                (false, Some(from)) => {
                    split_chunk(&text[from..at], false, &mut buffers, &mut emit);
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(from) = start {
            split_chunk(&text[from..], false, &mut buffers, &mut emit);
        }
        out
    }

    #[test]
    fn ascii_runs_cut_as_characters_do() {
        for text in [
            "HTTPServer getURLForID my_snake-kebab.case x.pptx .bashrc a-b-c",
            "__init__ --flag ..hidden. v1.2.3 e.g. IOError ABCdef A1b2C3",
            "one-two-three-four-five snake_CASE_Mixed file.tar.gz ...",
            "mixé café-Bar naïveCase 技能report report技能 Ünïcode_x",
        ] {
            assert_eq!(words(text), words_by_characters(text), "{text}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_cuts_as_characters_do(text in "[a-cA-C0-9_.\\- éÉ技能,/]{0,24}") {
            proptest::prop_assert_eq!(words(&text), words_by_characters(&text));
        }
    }

    #[test]
    fn overlong_parts_are_not_words() {
        let hash = "a".repeat(MAX_WORD_BYTES + 1);
        assert_eq!(words(&format!("{hash} ok")), ["ok"]);
    }
}
