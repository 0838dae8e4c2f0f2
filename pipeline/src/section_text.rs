//! A section's text: owned, or shared with the value it shows. A session
//! shows its skill catalog (4.8 MB at 10,000 skills) on every turn; shared,
//! it reaches the joined prompt with one copy, the prompt's own, instead of
//! a copy per turn for the section first. A cut of a shared text only
//! shortens the part shown.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Text shared between turns, such as a session's formatted skill catalog.
/// An `Arc<String>`, not an `Arc<str>`: a formatted text moves in without
/// a copy, and a text nobody else holds any more (a one-shot render's
/// catalog, once its inputs are dropped) becomes the joined prompt itself.
pub type SharedText = Arc<String>;

/// The text of a [`crate::Section`]; reads as a `str`.
#[derive(Clone, Default)]
pub struct SectionText(Repr);

#[derive(Clone)]
enum Repr {
    Owned(String),
    /// The first `len` bytes of `owner`'s text.
    Shared {
        owner: SharedText,
        len: usize,
    },
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Owned(String::new())
    }
}

impl SectionText {
    /// The whole text of `owner`, without a copy.
    pub fn shared(owner: SharedText) -> SectionText {
        let len = owner.len();
        SectionText(Repr::Shared { owner, len })
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Owned(text) => text,
            Repr::Shared { owner, len } => owner.get(..*len).unwrap_or_default(),
        }
    }

    /// Keeps the first `len` bytes; a `len` that is not a character
    /// boundary of the text, or not shorter, changes nothing.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.as_str().len() || !self.as_str().is_char_boundary(len) {
            return;
        }
        match &mut self.0 {
            Repr::Owned(text) => text.truncate(len),
            Repr::Shared { len: shown, .. } => *shown = len,
        }
    }

    /// The buffer of an owned text, or of a shared one nobody else holds,
    /// which assembly may grow into the joined prompt; `None` when another
    /// holder shares it (growing it would copy it).
    pub(crate) fn owned_capacity(&self) -> Option<usize> {
        match &self.0 {
            Repr::Owned(text) => Some(text.capacity()),
            Repr::Shared { owner, .. } => (Arc::strong_count(owner) == 1
                && Arc::weak_count(owner) == 0)
                .then(|| owner.capacity()),
        }
    }

    /// Takes the text out as a `String`, leaving it empty: the buffer itself
    /// when owned or no longer shared, else a copy.
    pub(crate) fn take_string(&mut self) -> String {
        match std::mem::take(&mut self.0) {
            Repr::Owned(text) => text,
            Repr::Shared { owner, len } => match Arc::try_unwrap(owner) {
                Ok(mut text) => {
                    text.truncate(len);
                    text
                }
                Err(owner) => owner.get(..len).unwrap_or_default().to_owned(),
            },
        }
    }
}

impl Deref for SectionText {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for SectionText {
    fn from(text: String) -> SectionText {
        SectionText(Repr::Owned(text))
    }
}

impl fmt::Debug for SectionText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SectionText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for SectionText {
    fn eq(&self, other: &SectionText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SectionText {}

impl PartialEq<str> for SectionText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SectionText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{SectionText, SharedText};

    #[test]
    fn a_shared_text_is_read_and_cut_without_a_copy() {
        let owner: SharedText = Arc::new("héllo  ".to_owned());
        let mut text = SectionText::shared(Arc::clone(&owner));
        assert_eq!(text, "héllo  ");
        assert_eq!(text.owned_capacity(), None);
        // Not a character boundary (inside `é`): nothing changes.
        text.truncate(2);
        assert_eq!(text, "héllo  ");
        text.truncate(text.trim_end().len());
        assert_eq!(text, "héllo");
        assert_eq!(&*owner, "héllo  ", "the owner is not changed");
        assert_eq!(text.take_string(), "héllo");
        assert_eq!(text, "");
    }

    #[test]
    fn a_shared_text_nobody_else_holds_gives_its_own_buffer() {
        let mut buffer = String::with_capacity(64);
        buffer.push_str("abc  ");
        let owner: SharedText = Arc::new(buffer);
        let mut text = SectionText::shared(Arc::clone(&owner));
        text.truncate(3);
        assert_eq!(text.owned_capacity(), None, "still shared");
        drop(owner);
        assert_eq!(text.owned_capacity(), Some(64));
        let taken = text.take_string();
        assert_eq!((taken.as_str(), taken.capacity()), ("abc", 64));
    }

    #[test]
    fn an_owned_text_gives_its_own_buffer() {
        let mut buffer = String::with_capacity(64);
        buffer.push_str("abc");
        let mut text = SectionText::from(buffer);
        assert_eq!(text.owned_capacity(), Some(64));
        text.truncate(10);
        assert_eq!(text, "abc");
        let taken = text.take_string();
        assert_eq!((taken.as_str(), taken.capacity()), ("abc", 64));
    }
}
