//! Grapheme-safe truncation with an explicit, caller-worded, in-band marker.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

/// The unit a bound is expressed in. Configuration keys ending in `_chars`
/// count Unicode scalar values; keys ending in `_bytes` count UTF-8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// At most this many UTF-8 bytes (for `_bytes` configuration keys).
    Bytes(usize),
    /// At most this many Unicode scalar values (for `_chars` configuration
    /// keys); a scalar value is a Rust `char`, not a grapheme cluster.
    Chars(usize),
}

impl Limit {
    /// The size of `text` in this limit's unit.
    pub fn measure(self, text: &str) -> usize {
        match self {
            Limit::Bytes(_) => text.len(),
            Limit::Chars(_) => text.chars().count(),
        }
    }

    /// The number of units allowed.
    pub fn max(self) -> usize {
        match self {
            Limit::Bytes(n) | Limit::Chars(n) => n,
        }
    }
}

/// What a cut removed, so the marker and the section report can say how much
/// was left out and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    /// The limit the text was bounded to, marker included.
    pub limit: Limit,
    /// Byte offset in the original text where the kept prefix ends.
    pub cut_at_byte: usize,
    /// Size of the whole original text in UTF-8 bytes.
    pub original_bytes: usize,
    /// Size of the whole original text in Unicode scalar values.
    pub original_chars: usize,
    /// UTF-8 bytes of the original text left out after the cut (the marker
    /// is not counted).
    pub omitted_bytes: usize,
    /// Unicode scalar values of the original text left out after the cut
    /// (the marker is not counted).
    pub omitted_chars: usize,
}

impl Truncation {
    /// Whether the cut kept nothing of a non-empty original: the limit left
    /// room for the marker alone (or not even for it), so the marker is all
    /// the model sees of this text. An operator should hear about it.
    pub fn kept_nothing(&self) -> bool {
        self.cut_at_byte == 0 && self.original_bytes > 0
    }
}

/// Text after bounding: either the original, untouched, or a prefix of it
/// followed by the marker (the marker alone when the limit is smaller than
/// the marker).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bounded<'a> {
    /// The text to use: borrowed from the input when it already fit, owned
    /// (kept prefix plus rendered marker) when it was cut, and the marker
    /// alone, over the limit, when not even the marker fit.
    pub text: Cow<'a, str>,
    /// What the cut removed, or `None` when the input fit and is returned
    /// untouched.
    pub truncation: Option<Truncation>,
}

/// Bounds `text` to `limit`, cutting on a grapheme boundary and appending the
/// marker that `marker` renders for the cut. The result, marker included,
/// never exceeds the limit, with one exception: every cut is marked, so when
/// even the marker alone does not fit, the marker wins over the limit and is
/// the whole result (nothing of `text` is kept;
/// [`Truncation::kept_nothing`] tells the caller, who should warn).
pub fn bound<'a>(
    text: &'a str,
    limit: Limit,
    marker: &dyn Fn(&Truncation) -> String,
) -> Bounded<'a> {
    bound_at(text, limit, &[], marker)
}

/// Like [`bound`], but prefers to cut at one of `preferred_cuts` (byte offsets,
/// for example the ends of catalog entries): the longest preferred prefix that
/// fits wins, and only when none fits does the cut fall back to the last
/// grapheme boundary that fits. Offsets that are not character boundaries are
/// ignored.
pub fn bound_at<'a>(
    text: &'a str,
    limit: Limit,
    preferred_cuts: &[usize],
    marker: &dyn Fn(&Truncation) -> String,
) -> Bounded<'a> {
    if limit.measure(text) <= limit.max() {
        return Bounded {
            text: Cow::Borrowed(text),
            truncation: None,
        };
    }
    let original_bytes = text.len();
    let original_chars = text.chars().count();
    let describe = |cut: usize| Truncation {
        limit,
        cut_at_byte: cut,
        original_bytes,
        original_chars,
        omitted_bytes: original_bytes - cut,
        omitted_chars: original_chars - text[..cut].chars().count(),
    };

    // The marker's own size depends on the numbers it reports, which depend on
    // the cut. Start from the widest numbers (nothing kept) and shrink the
    // budget until prefix and marker fit together; a handful of rounds settles
    // any marker whose length grows with its numbers.
    let mut budget = limit
        .max()
        .saturating_sub(limit.measure(&marker(&describe(0))));
    for _ in 0..16 {
        let cut = best_cut(text, limit, budget, preferred_cuts);
        let info = describe(cut);
        let rendered = marker(&info);
        let used = limit.measure(&text[..cut]) + limit.measure(&rendered);
        if used <= limit.max() {
            let mut out = String::with_capacity(cut + rendered.len());
            out.push_str(&text[..cut]);
            out.push_str(&rendered);
            return Bounded {
                text: Cow::Owned(out),
                truncation: Some(info),
            };
        }
        if budget == 0 {
            break;
        }
        budget = budget.saturating_sub(used - limit.max());
    }
    // Not even the marker fits: the marker wins over the limit, so the cut
    // is still visible (an empty text would hide that anything was there).
    let info = describe(0);
    Bounded {
        text: Cow::Owned(marker(&info)),
        truncation: Some(info),
    }
}

/// The end of the longest prefix that measures at most `budget`: a preferred
/// cut when one fits, else the last whole grapheme cluster that fits.
fn best_cut(text: &str, limit: Limit, budget: usize, preferred_cuts: &[usize]) -> usize {
    if let Some(cut) = best_preferred_cut(text, limit, budget, preferred_cuts) {
        return cut;
    }
    let mut cut = 0;
    let mut used = 0;
    for (start, grapheme) in text.grapheme_indices(true) {
        let size = match limit {
            Limit::Bytes(_) => grapheme.len(),
            Limit::Chars(_) => grapheme.chars().count(),
        };
        if used + size > budget {
            break;
        }
        used += size;
        cut = start + grapheme.len();
    }
    cut
}

/// The largest preferred cut whose prefix measures at most `budget`, in one
/// pass over the text however many cuts there are (a 10,000-line git status
/// offers 10,000 cuts).
fn best_preferred_cut(
    text: &str,
    limit: Limit,
    budget: usize,
    preferred_cuts: &[usize],
) -> Option<usize> {
    let mut cuts: Vec<usize> = preferred_cuts
        .iter()
        .copied()
        .filter(|&cut| cut <= text.len() && text.is_char_boundary(cut))
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    match limit {
        // A prefix's size in bytes is its end offset.
        Limit::Bytes(_) => cuts
            .partition_point(|&cut| cut <= budget)
            .checked_sub(1)
            .map(|i| cuts[i]),
        Limit::Chars(_) => {
            let mut best = None;
            let (mut at, mut chars) = (0, 0);
            for cut in cuts {
                chars += text[at..cut].chars().count();
                at = cut;
                if chars > budget {
                    break;
                }
                best = Some(cut);
            }
            best
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn marker(t: &Truncation) -> String {
        format!("[cut {} bytes]", t.omitted_bytes)
    }

    fn check(text: &str, limit: Limit, expected: &str) {
        let out = bound(text, limit, &marker);
        assert_eq!(out.text, expected);
        assert!(limit.measure(&out.text) <= limit.max());
    }

    #[test]
    fn untouched_when_it_fits() {
        let out = bound("hello", Limit::Bytes(5), &marker);
        assert_eq!(
            out,
            Bounded {
                text: Cow::Borrowed("hello"),
                truncation: None
            }
        );
    }

    #[test]
    fn cuts_ascii_and_reports_what_was_omitted() {
        let out = bound("abcdefghijklmnopqrstuvwxyz", Limit::Bytes(20), &marker);
        assert_eq!(out.text, "abcdef[cut 20 bytes]");
        assert_eq!(
            out.truncation,
            Some(Truncation {
                limit: Limit::Bytes(20),
                cut_at_byte: 6,
                original_bytes: 26,
                original_chars: 26,
                omitted_bytes: 20,
                omitted_chars: 20,
            })
        );
    }

    #[test]
    fn never_splits_emoji_or_combining_sequences() {
        // A family emoji (ZWJ sequence, 25 bytes) and an e with two combining marks.
        let family = "👨‍👩‍👧‍👦";
        let text = format!("ab{family}cd");
        check(&text, Limit::Bytes(2 + 14 + 10), "ab[cut 27 bytes]");
        // e + two combining marks is one grapheme of 3 chars and 5 bytes.
        let combining = format!("e\u{301}\u{323}{}", "x".repeat(20));
        check(&combining, Limit::Chars(2 + 14), "[cut 25 bytes]");
        check(
            &combining,
            Limit::Chars(3 + 14),
            "e\u{301}\u{323}[cut 20 bytes]",
        );
    }

    #[test]
    fn counts_chars_not_bytes_for_char_limits() {
        check(
            "ééééééééééééééééééééé",
            Limit::Chars(18),
            "éééé[cut 34 bytes]",
        );
    }

    #[test]
    fn prefers_the_given_cut_points() {
        let text = "entry-one\nentry-two\nentry-three\nentry-four\n";
        let out = bound_at(text, Limit::Bytes(36), &[10, 20, 32, 43], &marker);
        assert_eq!(out.text, "entry-one\nentry-two\n[cut 23 bytes]");
        // When no preferred cut fits, fall back to graphemes.
        let out = bound_at(text, Limit::Bytes(18), &[10, 20], &marker);
        assert_eq!(out.text, "entr[cut 39 bytes]");
    }

    #[test]
    fn the_marker_wins_when_even_it_does_not_fit() {
        for max in [0, 5, 13] {
            let out = bound("abcdefghijklmnopqrstuvwxyz", Limit::Bytes(max), &marker);
            assert_eq!(out.text, "[cut 26 bytes]");
            let truncation = out.truncation.unwrap();
            assert_eq!(truncation.omitted_bytes, 26);
            assert!(truncation.kept_nothing());
        }
        // One byte more and the marker fits on its own, still keeping nothing.
        let out = bound("abcdefghijklmnopqrstuvwxyz", Limit::Bytes(14), &marker);
        assert_eq!(out.text, "[cut 26 bytes]");
        assert!(out.truncation.unwrap().kept_nothing());
        let out = bound("abcdefghijklmnopqrstuvwxyz", Limit::Bytes(15), &marker);
        assert_eq!(out.text, "a[cut 25 bytes]");
        assert!(!out.truncation.unwrap().kept_nothing());
    }

    proptest! {
        #[test]
        fn the_preferred_cut_search_matches_its_definition(
            text in "(\\PC|\n|é){0,60}",
            cuts in proptest::collection::vec(0usize..80, 0..12),
            budget in 0usize..70,
            chars in any::<bool>(),
        ) {
            let limit = if chars { Limit::Chars(budget) } else { Limit::Bytes(budget) };
            let naive = cuts
                .iter()
                .copied()
                .filter(|&c| c <= text.len() && text.is_char_boundary(c))
                .filter(|&c| limit.measure(&text[..c]) <= budget)
                .max();
            prop_assert_eq!(best_preferred_cut(&text, limit, budget, &cuts), naive);
        }
    }

    proptest! {
        #[test]
        fn any_text_any_limit_is_a_bounded_prefix_plus_marker(
            text in "\\PC{0,80}|(\\PC|\u{301}|\u{200d}|👩){0,60}",
            max in 0usize..120,
            chars in any::<bool>(),
        ) {
            let limit = if chars { Limit::Chars(max) } else { Limit::Bytes(max) };
            let out = bound(&text, limit, &marker);
            match &out.truncation {
                None => {
                    prop_assert!(limit.measure(&out.text) <= max);
                    prop_assert_eq!(out.text.as_ref(), text.as_str());
                }
                Some(t) => {
                    let kept = &text[..t.cut_at_byte];
                    prop_assert!(out.text.starts_with(kept));
                    // Every cut is marked; only a marker longer than the
                    // limit on its own goes over it, and then it is alone.
                    prop_assert_eq!(&out.text[kept.len()..], marker(t));
                    let fits = limit.measure(&out.text) <= max;
                    prop_assert!(fits || (kept.is_empty() && limit.measure(&marker(t)) > max));
                    // The cut is a grapheme boundary of the original.
                    let boundary = t.cut_at_byte == 0
                        || t.cut_at_byte == text.len()
                        || text.grapheme_indices(true).any(|(i, _)| i == t.cut_at_byte);
                    prop_assert!(boundary);
                }
            }
        }
    }
}
