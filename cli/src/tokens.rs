//! Model tokens of a text, for `render --explain` and `diff`: counted with
//! OpenAI's `o200k_base` encoding (its vocabulary compiled into the binary
//! as a rank table, so nothing is downloaded or parsed at run time). Other
//! models tokenize differently; the count is an estimate of what a section
//! costs, good for comparing sections and renders.
//!
//! Counting is bounded, whatever the repository holds: a [`Counter`]
//! counts at most [`TEXT_BUDGET`] bytes of one text and [`TOTAL_BUDGET`]
//! bytes in all exactly, and estimates the rest from the bytes per token of
//! what it counted; a pre-token longer than [`PIECE_LIMIT`] bytes (a
//! megabyte of punctuation is one) is merged in pieces of that size. Such
//! a figure is marked as an estimate (`~1234`).
//!
//! Built without the `tokens` feature, every count is `None` and shown as
//! `-`.

/// The encoding the counts are made with, for the column heading.
pub const ENCODING: &str = "o200k_base";

/// The most bytes of one text counted exactly: every prompt of a real
/// repository fits, and counting it takes a few milliseconds.
pub const TEXT_BUDGET: usize = 256 * 1024;

/// The most bytes one [`Counter`] (one report) counts exactly across all
/// its texts, so a render of many huge sections stays as quick.
pub const TOTAL_BUDGET: usize = 1024 * 1024;

/// The longest pre-token merged whole. Merging is `n log n` in its length
/// and needs some 40 bytes per byte; a longer one (no real word is) is
/// merged in pieces of this size, which may count a token or so more per
/// piece than the encoder would.
pub const PIECE_LIMIT: usize = 16 * 1024;

/// The line a report prints under figures marked `~`.
pub fn budget_note() -> String {
    format!(
        "(~: an estimate; each text is counted exactly up to {} KiB, {} KiB in all, a run of \
         characters without a break up to {} KiB at a time, the rest from the bytes per token counted)",
        TEXT_BUDGET / 1024,
        TOTAL_BUDGET / 1024,
        PIECE_LIMIT / 1024
    )
}

/// The tokens of one text, and whether the figure is an estimate (some of
/// the text was beyond the budget, or a pre-token was merged in pieces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    pub tokens: usize,
    pub estimated: bool,
}

impl Count {
    /// The figure as printed: `1234`, or `~1234` for an estimate.
    pub fn shown(self) -> String {
        if self.estimated {
            format!("~{}", self.tokens)
        } else {
            self.tokens.to_string()
        }
    }
}

/// A count for a table cell: the figure, or `-` when this build counts no
/// tokens.
pub fn cell(count: Option<Count>) -> String {
    count.map_or_else(|| "-".to_owned(), Count::shown)
}

/// Whether this build counts tokens at all.
pub const fn enabled() -> bool {
    imp::ENABLED
}

/// Counts the texts of one report within the budgets above.
#[derive(Debug)]
pub struct Counter {
    text_budget: usize,
    remaining: usize,
    counted_bytes: usize,
    counted_tokens: usize,
    estimated: bool,
}

impl Default for Counter {
    fn default() -> Self {
        Self::with_budgets(TEXT_BUDGET, TOTAL_BUDGET)
    }
}

impl Counter {
    pub fn new() -> Self {
        Self::default()
    }

    fn with_budgets(text_budget: usize, total_budget: usize) -> Self {
        Self {
            text_budget,
            remaining: total_budget,
            counted_bytes: 0,
            counted_tokens: 0,
            estimated: false,
        }
    }

    /// Whether any count made so far is an estimate, for the report's note.
    pub fn estimated_any(&self) -> bool {
        self.estimated
    }

    /// The tokens of `text`, or `None` when this build counts no tokens.
    pub fn count(&mut self, text: &str) -> Option<Count> {
        if !imp::ENABLED {
            return None;
        }
        let head = floor_char_boundary(text, self.text_budget.min(self.remaining));
        let (head, rest) = text.split_at(head);
        let (tokens, pieced) = imp::count_exact(head)?;
        self.remaining -= head.len();
        self.counted_bytes += head.len();
        self.counted_tokens += tokens;
        let count = if rest.is_empty() {
            Count {
                tokens,
                estimated: pieced,
            }
        } else {
            // This text's own bytes per token where some of it was counted,
            // else the report's so far, else the usual four bytes a token.
            let (bytes, per) = if !head.is_empty() {
                (head.len(), tokens)
            } else if self.counted_bytes > 0 {
                (self.counted_bytes, self.counted_tokens)
            } else {
                (4, 1)
            };
            let rest_tokens = (rest.len() as u128 * per as u128).div_ceil(bytes as u128);
            Count {
                tokens: tokens.saturating_add(usize::try_from(rest_tokens).unwrap_or(usize::MAX)),
                estimated: true,
            }
        };
        self.estimated |= count.estimated;
        Some(count)
    }
}

/// The largest char boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    (0..=at)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

#[cfg(feature = "tokens")]
mod table;

#[cfg(feature = "tokens")]
mod imp {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    use std::sync::{Mutex, OnceLock};

    use regex_automata::hybrid::dfa::{Cache, DFA};
    use regex_automata::nfa::thompson;
    use regex_automata::{Anchored, Input};

    use super::{PIECE_LIMIT, table};

    pub const ENABLED: bool = true;

    /// The rank table `build.rs` wrote (layout in `table.rs`).
    static BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_bytes.bin"));
    static OFFSETS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_offsets.bin"));
    static SLOTS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_slots.bin"));

    /// `o200k_base`'s pre-token pattern with its one look-ahead,
    /// `\s+(?!\S)`, replaced by `\s+$|\s+\s`: a whitespace run at the end,
    /// or one of two or more characters of which [`count_exact`] gives the
    /// last back (it belongs to the word after it). Leftmost-first
    /// alternation picks the same match as tiktoken's backtracking engine.
    const PATTERN: &str = concat!(
        r"(?:[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"|\p{N}{1,3}",
        r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"|\s*[\r\n]+",
        r"|\s+$",
        r"|\s+\s",
        r"|\s+)",
    );

    /// The pre-token automaton and its cache of states, built once per
    /// process when the first text is counted (a few milliseconds: a
    /// forward automaton without captures is all an anchored search for
    /// the end of a match needs).
    fn pre_tokens() -> Option<&'static (DFA, Mutex<Cache>)> {
        static AUTOMATON: OnceLock<Option<(DFA, Mutex<Cache>)>> = OnceLock::new();
        AUTOMATON
            .get_or_init(|| {
                let dfa = DFA::builder()
                    .thompson(thompson::Config::new().which_captures(thompson::WhichCaptures::None))
                    .build(PATTERN)
                    .ok()?;
                let cache = Mutex::new(dfa.create_cache());
                Some((dfa, cache))
            })
            .as_ref()
    }

    fn u32_at(data: &[u8], index: usize) -> Option<u32> {
        let bytes = data.get(index.checked_mul(4)?..index.checked_mul(4)?.checked_add(4)?)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    }

    fn token(rank: u32) -> Option<&'static [u8]> {
        let rank = usize::try_from(rank).ok()?;
        let start = usize::try_from(u32_at(OFFSETS, rank)?).ok()?;
        let end = usize::try_from(u32_at(OFFSETS, rank + 1)?).ok()?;
        BYTES.get(start..end)
    }

    /// The rank of the token spelled `bytes`, if there is one.
    pub fn rank(bytes: &[u8]) -> Option<u32> {
        let mut slot = table::slot_of(bytes);
        // The table is at most half full, so an empty slot ends every probe
        // long before this bound.
        for _ in 0..table::SLOTS {
            let entry = u32_at(SLOTS, slot)?;
            if entry == 0 {
                return None;
            }
            if token(entry - 1)? == bytes {
                return Some(entry - 1);
            }
            slot = (slot + 1) & (table::SLOTS - 1);
        }
        None
    }

    /// The tokens of `text` and whether a pre-token was merged in pieces;
    /// `None` if the pattern would not compile (it does; no panic either
    /// way).
    pub fn count_exact(text: &str) -> Option<(usize, bool)> {
        if text.is_empty() {
            return Some((0, false));
        }
        let (dfa, cache) = pre_tokens()?;
        let mut cache = cache.lock().ok()?;
        let mut tokens = 0;
        let mut pieced = false;
        let mut at = 0;
        while at < text.len() {
            // A match starts wherever the last one ended (every character
            // starts some alternative), so the search is anchored there and
            // only its end is looked for. The lazy automaton gives up on
            // nothing here (no Unicode word boundary, no cache-clear limit);
            // should it, or find no match, the rest counts as one piece.
            let start = at;
            let input = Input::new(text).range(at..).anchored(Anchored::Yes);
            let mut end = match dfa.try_search_fwd(&mut cache, &input) {
                Ok(Some(found)) if found.offset() > at => found.offset(),
                _ => text.len(),
            };
            let piece = &text[start..end];
            if end < text.len() && gives_back_last(piece) {
                end -= piece.chars().next_back().map_or(0, char::len_utf8);
            }
            tokens += piece_tokens(&text.as_bytes()[start..end], &mut pieced);
            at = end;
        }
        Some((tokens, pieced))
    }

    /// Whether `piece` is a `\s+\s` match: two or more whitespace
    /// characters without a line break (a run with one is `\s*[\r\n]+`'s),
    /// not at the end of the text. `\s+(?!\S)` would have stopped one
    /// character short of the word that follows.
    fn gives_back_last(piece: &str) -> bool {
        piece.chars().nth(1).is_some()
            && piece
                .chars()
                .all(|c| c.is_whitespace() && c != '\r' && c != '\n')
    }

    /// The tokens of one pre-token.
    fn piece_tokens(piece: &[u8], pieced: &mut bool) -> usize {
        if piece.is_empty() {
            return 0;
        }
        if rank(piece).is_some() {
            return 1;
        }
        if piece.len() > PIECE_LIMIT {
            *pieced = true;
            return piece.chunks(PIECE_LIMIT).map(merge).sum();
        }
        merge(piece)
    }

    /// The number of tokens byte-pair merging makes of `piece`: the
    /// adjacent pair of lowest rank (the leftmost of equals) is merged
    /// until no adjacent pair is a token, as tiktoken does.
    fn merge(piece: &[u8]) -> usize {
        match piece.len() {
            0 => 0,
            1 => 1,
            2..100 => merge_short(piece),
            _ => merge_long(piece),
        }
    }

    fn pair_rank(piece: &[u8], start: usize, end: usize) -> u32 {
        piece.get(start..end).and_then(rank).unwrap_or(u32::MAX)
    }

    /// Quadratic, and the quickest for the short pieces nearly all text
    /// is made of.
    fn merge_short(piece: &[u8]) -> usize {
        // (start of a part, rank of it merged with the next part).
        let mut parts: Vec<(usize, u32)> = (0..piece.len() - 1)
            .map(|i| (i, pair_rank(piece, i, i + 2)))
            .collect();
        parts.push((piece.len() - 1, u32::MAX));
        parts.push((piece.len(), u32::MAX));
        loop {
            let mut best = (u32::MAX, 0);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < best.0 {
                    best = (rank, i);
                }
            }
            if best.0 == u32::MAX {
                break;
            }
            let i = best.1;
            parts.remove(i + 1);
            let rank_at = |parts: &[(usize, u32)], i: usize| match parts.get(i + 2) {
                Some(&(end, _)) => pair_rank(piece, parts[i].0, end),
                None => u32::MAX,
            };
            if i > 0 {
                parts[i - 1].1 = rank_at(&parts, i - 1);
            }
            parts[i].1 = rank_at(&parts, i);
        }
        parts.len() - 1
    }

    /// `n log n` with a heap of candidate merges, for long pieces.
    fn merge_long(piece: &[u8]) -> usize {
        let n = piece.len();
        // Indexed by the start of a part: where it ends, where the part
        // before it starts, and the rank of its pair with the next part.
        let mut end: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut pair: Vec<u32> = (0..n).map(|i| pair_rank(piece, i, i + 2)).collect();
        let mut heap: BinaryHeap<_> = pair
            .iter()
            .enumerate()
            .filter(|&(_, &rank)| rank != u32::MAX)
            .map(|(i, &rank)| Reverse((rank, i)))
            .collect();
        let mut parts = n;
        while let Some(Reverse((rank, start))) = heap.pop() {
            // A candidate whose pair has changed since it was pushed.
            if pair[start] != rank {
                continue;
            }
            let right = end[start];
            let right_end = end[right];
            end[start] = right_end;
            pair[right] = u32::MAX;
            parts -= 1;
            if right_end < n {
                prev[right_end] = start;
                pair[start] = pair_rank(piece, start, end[right_end]);
                if pair[start] != u32::MAX {
                    heap.push(Reverse((pair[start], start)));
                }
            } else {
                pair[start] = u32::MAX;
            }
            if start > 0 {
                let before = prev[start];
                pair[before] = pair_rank(piece, before, right_end);
                if pair[before] != u32::MAX {
                    heap.push(Reverse((pair[before], before)));
                }
            }
        }
        parts
    }
}

#[cfg(not(feature = "tokens"))]
mod imp {
    pub const ENABLED: bool = false;

    pub fn count_exact(_text: &str) -> Option<(usize, bool)> {
        None
    }
}

#[cfg(all(test, feature = "tokens"))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// tiktoken-rs's count, the reference.
    fn reference(text: &str) -> usize {
        tiktoken_rs::o200k_base_singleton()
            .encode_ordinary(text)
            .len()
    }

    fn exact(text: &str) -> usize {
        let count = Counter::new().count(text).unwrap();
        assert!(!count.estimated, "{text:?}");
        count.tokens
    }

    #[test]
    fn counts_with_o200k_base() {
        let mut counter = Counter::new();
        assert_eq!(
            counter.count(""),
            Some(Count {
                tokens: 0,
                estimated: false
            })
        );
        assert_eq!(cell(counter.count("hello world")), "2");
        assert_eq!(cell(None), "-");
        assert!(!counter.estimated_any());
    }

    /// The same counts as tiktoken on the texts a prompt is made of and on
    /// the corners of the pre-token pattern (whitespace before a word, at
    /// the end, with line breaks; contractions; cases; numbers; marks).
    #[test]
    fn counts_equal_tiktoken() {
        let mut samples: Vec<String> = [
            include_str!("../../README.md"),
            include_str!("../../ARCHITECTURE.md"),
            include_str!("main.rs"),
            "hello world",
            "  two spaces before\tand\t\ttabs   \n\n   \r\n x",
            "trailing spaces   ",
            "\u{a0}\u{a0}nbsp\u{3000}ideographic space",
            "It's they'RE we'Ve I'm you'll he'd DON'T",
            "CamelCaseWords HTTPServer iPhone ÉCOLE Straße",
            "1234567 3.14159 ١٢٣٤ 六七八",
            "naïve cafe\u{301} e\u{301}\u{302} क्षत्रिय",
            "日本語のテキストと中文混合",
            "emoji 👩‍👩‍👧 🇩🇪 ✓✓✓",
            "path/to/file.rs:12:5 https://example.com/a?b=c&d=e",
            "----------------------------------------------------------------------------------------------------------",
            "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((()",
            "\n\n\n",
            " ",
            "\u{1b}[31mred\u{1b}[0m\u{7}",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        // Pseudo-random mixes of the characters the pattern treats apart.
        let alphabet: Vec<char> = " \t\n\r\u{a0}aZéÉ'sS1٣.,;!?-/_\u{301}日👍x"
            .chars()
            .collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for len in [5, 17, 64, 150, 600] {
            for _ in 0..40 {
                let text: String = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        alphabet[(state % alphabet.len() as u64) as usize]
                    })
                    .collect();
                samples.push(text);
            }
        }
        for text in &samples {
            let shown: String = text.chars().take(80).collect();
            assert_eq!(exact(text), reference(text), "{shown:?}...");
        }
    }

    #[test]
    fn beyond_the_budget_the_rest_is_estimated_and_marked() {
        let text = " word".repeat(1000);
        assert_eq!(reference(&text), 1000);
        // 5,000 bytes, 1,000 tokens: the first 1,000 bytes are counted (200
        // tokens), the other 4,000 estimated at the same ratio.
        let mut counter = Counter::with_budgets(1000, 1500);
        assert_eq!(
            counter.count(&text),
            Some(Count {
                tokens: 1000,
                estimated: true
            })
        );
        assert!(counter.estimated_any());
        // 500 bytes of the report's budget left: counted, the rest estimated.
        assert_eq!(counter.count(&text).unwrap().shown(), "~1000");
        // None left: all estimated from the report's ratio so far.
        assert_eq!(
            counter.count("word word "),
            Some(Count {
                tokens: 2,
                estimated: true
            })
        );
        // Within the budget: exact again, and no figure is marked.
        let mut counter = Counter::with_budgets(1000, 1500);
        assert_eq!(cell(counter.count(&text[..995])), "199");
    }

    /// A pre-token of a megabyte (punctuation, which tiktoken merges in
    /// seconds) is merged in pieces: a bounded, marked estimate near the
    /// exact count.
    #[test]
    fn a_huge_pre_token_is_merged_in_pieces() {
        let text = "!@#$%^&*".repeat(8 * 1024);
        let count = Counter::with_budgets(usize::MAX, usize::MAX)
            .count(&text)
            .unwrap();
        assert!(count.estimated);
        let reference = reference(&text);
        assert!(
            count.tokens >= reference && count.tokens <= reference + text.len() / PIECE_LIMIT,
            "{} vs {reference}",
            count.tokens
        );
    }

    #[test]
    fn budgets_cut_at_character_boundaries() {
        assert_eq!(floor_char_boundary("aé", 2), 1);
        assert_eq!(floor_char_boundary("aé", 3), 3);
        assert_eq!(floor_char_boundary("aé", 9), 3);
        let mut counter = Counter::with_budgets(2, 2);
        assert_eq!(counter.count("éé").unwrap().shown(), "~2");
    }
}
