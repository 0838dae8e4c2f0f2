//! Estimated model tokens of a text, for `render --explain` and `diff`:
//! counted with OpenAI's `o200k_base` encoding (tiktoken-rs, its data
//! compiled into the binary, so nothing is downloaded). Other models
//! tokenize differently; the count is an estimate of what a section costs,
//! good for comparing sections and renders.
//!
//! Built without the `tokens` feature, every count is `None` and shown as
//! `-`.

/// The encoding the counts are made with, for the column heading.
pub const ENCODING: &str = "o200k_base";

/// The tokens of `text`, or `None` when this build counts no tokens.
pub fn count(text: &str) -> Option<usize> {
    imp::count(text)
}

/// A count for a table cell: the number, or `-`.
pub fn cell(count: Option<usize>) -> String {
    count.map_or_else(|| "-".to_owned(), |n| n.to_string())
}

#[cfg(feature = "tokens")]
mod imp {
    use std::sync::OnceLock;

    use tiktoken_rs::CoreBPE;

    /// Built once per process (it parses the embedded vocabulary).
    fn encoder() -> Option<&'static CoreBPE> {
        static ENCODER: OnceLock<Option<CoreBPE>> = OnceLock::new();
        ENCODER
            .get_or_init(|| tiktoken_rs::o200k_base().ok())
            .as_ref()
    }

    pub fn count(text: &str) -> Option<usize> {
        if text.is_empty() {
            return Some(0);
        }
        Some(encoder()?.encode_ordinary(text).len())
    }
}

#[cfg(not(feature = "tokens"))]
mod imp {
    pub fn count(_text: &str) -> Option<usize> {
        None
    }
}

#[cfg(all(test, feature = "tokens"))]
mod tests {
    use super::*;

    #[test]
    fn counts_with_o200k_base() {
        assert_eq!(count(""), Some(0));
        assert_eq!(count("hello world"), Some(2));
        assert_eq!(cell(count("hello world")), "2");
        assert_eq!(cell(None), "-");
    }
}
