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
pub fn for_each_word(text: &str, emit: &mut dyn FnMut(&str)) {
    let mut chunk = String::new();
    let mut lower = String::new();
    let mut start = None;
    for (at, c) in text.char_indices() {
        let inside = c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
        match (inside, start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                split_chunk(&text[from..at], &mut chunk, &mut lower, emit);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        split_chunk(&text[from..], &mut chunk, &mut lower, emit);
    }
}

/// One run of letters, digits, `_`, `-` and `.`: its extension, its parts
/// and, for an identifier of a few parts, the parts joined.
fn split_chunk(raw: &str, part: &mut String, joined: &mut String, emit: &mut dyn FnMut(&str)) {
    let trimmed = raw.trim_matches(|c| matches!(c, '_' | '-' | '.'));
    if trimmed.is_empty() {
        return;
    }
    extension(raw, emit);
    let chars: Vec<char> = trimmed.chars().collect();
    let mut parts = 0usize;
    let mut joinable = true;
    joined.clear();
    part.clear();
    for (i, &c) in chars.iter().enumerate() {
        if c == '.' {
            flush(part, joined, &mut parts, emit);
            // A dotted name (`file.pptx`, `node.js`) is not an identifier
            // whose joined form means anything.
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
            cjk_pair(&chars, i, part, emit);
            continue;
        }
        if i > 0 && camel_boundary(&chars, i) {
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
fn extension(raw: &str, emit: &mut dyn FnMut(&str)) {
    let raw = raw.trim_end_matches('.');
    let Some(dot) = raw.rfind('.') else { return };
    let (base, ext) = (&raw[..dot], &raw[dot + 1..]);
    let base = base.trim_start_matches(['.', '_', '-']);
    if ext.is_empty()
        || ext.len() > MAX_EXTENSION_CHARS
        || !ext.bytes().all(|b| b.is_ascii_alphanumeric())
        || !ext.bytes().any(|b| b.is_ascii_alphabetic())
        || (!base.is_empty() && base.chars().count() < 2)
    {
        return;
    }
    let mut term = String::with_capacity(ext.len() + 1);
    term.push('.');
    term.extend(ext.chars().map(|c| c.to_ascii_lowercase()));
    emit(&term);
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
/// else kept as written. Remembers each word's answer.
pub struct Normalizer {
    stemmer: Stemmer,
    seen: FxHashMap<Box<str>, Option<Box<str>>>,
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
/// distinct words) answers are computed each time instead.
const MAX_REMEMBERED: usize = 1 << 20;

impl Normalizer {
    /// A normalizer with nothing remembered.
    pub fn new() -> Self {
        Normalizer {
            stemmer: Stemmer::create(Algorithm::English),
            seen: FxHashMap::default(),
        }
    }

    /// The term of `word` (a lowercase word of [`for_each_word`]), or `None`
    /// for a stop word.
    pub fn term(&mut self, word: &str) -> Option<&str> {
        if !self.seen.contains_key(word) {
            let term = self.compute(word);
            if self.seen.len() >= MAX_REMEMBERED {
                self.seen.clear();
            }
            self.seen.insert(word.into(), term);
        }
        self.seen.get(word).and_then(|t| t.as_deref())
    }

    fn compute(&self, word: &str) -> Option<Box<str>> {
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

    #[test]
    fn overlong_parts_are_not_words() {
        let hash = "a".repeat(MAX_WORD_BYTES + 1);
        assert_eq!(words(&format!("{hash} ok")), ["ok"]);
    }
}
