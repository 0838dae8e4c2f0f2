//! `SkillId`: the validated identifier a skill is known by everywhere.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// The longest id accepted, in characters. Matches the Agent Skills `name`
/// limit so ids inferred from portable skills always fit.
pub const MAX_SKILL_ID_LEN: usize = 64;

/// A skill id, as the open Agent Skills specification defines a name: 1 to
/// 64 characters, each a lowercase letter of any script, a letter without
/// case (CJK), a digit or a hyphen, starting with a letter or digit and not
/// ending with a hyphen. An id is kept in NFKC form, so a folder name and a
/// `name` (or a typed `/skill` argument) that are NFKC-equal are one id. The
/// character set rules out path separators, `..`, whitespace, controls and
/// markup, so an id is safe in a file name, an XML attribute and a slash
/// command.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SkillId(Arc<str>);

/// What separates the namespace from the name in a namespaced id
/// (`<server>:<skill name>` for the skills an MCP server publishes).
pub const NAMESPACE_SEPARATOR: char = ':';

/// Why a string is not a valid skill id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidSkillId {
    /// The string is empty.
    #[error("the id is empty")]
    Empty,
    /// The string is longer than [`MAX_SKILL_ID_LEN`].
    #[error("the id is {len} characters long; the limit is {MAX_SKILL_ID_LEN}")]
    TooLong {
        /// Length of the string in characters (after NFKC).
        len: usize,
    },
    /// The string holds a character that is not a lowercase letter, a
    /// letter without case, a digit or `-`.
    #[error("the id contains {found:?}; only lowercase letters, digits and hyphens are allowed")]
    BadCharacter {
        /// The first character that is not allowed.
        found: char,
    },
    /// The string starts or ends with a hyphen.
    #[error("the id must start with a letter or digit and must not end with a hyphen")]
    BadEdge,
}

impl SkillId {
    /// Validates `raw` (in NFKC form) as an id.
    pub fn parse(raw: &str) -> Result<Self, InvalidSkillId> {
        let normal = nfkc(raw);
        check(&normal)?;
        Ok(SkillId(Arc::from(normal.as_ref())))
    }

    /// Whether `raw` is a valid id, without making one (`TryFrom<String>`
    /// then takes the string without copying it when it is in NFKC form).
    pub fn check(raw: &str) -> Result<(), InvalidSkillId> {
        check(&nfkc(raw))
    }

    /// A valid id close to `raw` (lowercased, runs of other characters turned
    /// into one hyphen, trimmed to the length cap), offered in diagnostic hints.
    /// `None` when nothing usable remains.
    pub fn suggest(raw: &str) -> Option<SkillId> {
        let mut out = String::new();
        for c in nfkc(raw).chars().flat_map(char::to_lowercase) {
            if c != '-' && allowed(c) {
                out.push(c);
            } else if !out.ends_with('-') {
                out.push('-');
            }
        }
        let trimmed: String = out
            .trim_matches('-')
            .chars()
            .take(MAX_SKILL_ID_LEN)
            .collect();
        SkillId::parse(trimmed.trim_end_matches('-')).ok()
    }

    /// The id of a skill another program publishes, namespaced by where it
    /// comes from: `<namespace>:<name>`, both halves valid ids. SEP-2640
    /// forbids a skill from an MCP server silently shadowing one of another
    /// origin, so the server's name is part of the id. Front matter can
    /// never write such an id ([`SkillId::parse`] refuses the `:`); only a
    /// provider makes one.
    pub fn namespaced(namespace: &str, name: &str) -> Result<Self, InvalidSkillId> {
        let namespace = SkillId::parse(namespace)?;
        let name = SkillId::parse(name)?;
        Ok(SkillId(Arc::from(format!(
            "{}{NAMESPACE_SEPARATOR}{}",
            namespace.0, name.0
        ))))
    }

    /// An id as a user or a stored record names one: a plain id (as
    /// [`SkillId::parse`]) or a namespaced one (as [`SkillId::namespaced`]),
    /// so `/skill server:name` finds a skill an MCP server published.
    pub fn parse_reference(raw: &str) -> Result<Self, InvalidSkillId> {
        match raw.split_once(NAMESPACE_SEPARATOR) {
            Some((namespace, name)) => SkillId::namespaced(namespace, name),
            None => SkillId::parse(raw),
        }
    }

    /// The namespace of a namespaced id (`None` for a plain one).
    pub fn namespace(&self) -> Option<&str> {
        self.0
            .split_once(NAMESPACE_SEPARATOR)
            .map(|(namespace, _)| namespace)
    }

    /// The id as a string slice, as written in front matter and commands.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id's text, shared rather than copied (a diagnostic about the
    /// skill keeps it: 57,000 copies were 2.6 MB of a registry's load).
    pub(crate) fn shared(&self) -> Arc<str> {
        Arc::clone(&self.0)
    }
}

impl fmt::Display for SkillId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Validates an owned id, without copying it when it is in NFKC form. A
/// namespaced id is accepted too (as [`SkillId::parse_reference`]), so
/// records holding one (events, sessions) read back; callers reading front
/// matter check with [`SkillId::check`] first, which refuses it.
impl TryFrom<String> for SkillId {
    type Error = InvalidSkillId;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        if value.contains(NAMESPACE_SEPARATOR) {
            return SkillId::parse_reference(&value);
        }
        let value = match nfkc(&value) {
            Cow::Borrowed(_) => value,
            Cow::Owned(normal) => normal,
        };
        check(&value)?;
        Ok(SkillId(Arc::from(value)))
    }
}

/// `raw` in NFKC form, borrowed when it already is (every ASCII string is).
fn nfkc(raw: &str) -> Cow<'_, str> {
    if raw.is_ascii() || is_nfkc_quick(raw.chars()) == IsNormalized::Yes {
        Cow::Borrowed(raw)
    } else {
        Cow::Owned(raw.nfkc().collect())
    }
}

/// A character an id may hold: a hyphen, a digit, or a letter that is its
/// own lowercase (lowercase letters of any script, and letters without case
/// such as CJK ideographs).
fn allowed(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    }
    c.is_alphanumeric() && c.to_lowercase().eq(std::iter::once(c))
}

/// The id rules on an NFKC string: allowed characters, inner hyphens, at
/// most [`MAX_SKILL_ID_LEN`] characters.
fn check(raw: &str) -> Result<(), InvalidSkillId> {
    if raw.is_empty() {
        return Err(InvalidSkillId::Empty);
    }
    if let Some(found) = raw.chars().find(|c| !allowed(*c)) {
        return Err(InvalidSkillId::BadCharacter { found });
    }
    let len = raw.chars().count();
    if len > MAX_SKILL_ID_LEN {
        return Err(InvalidSkillId::TooLong { len });
    }
    if raw.starts_with('-') || raw.ends_with('-') {
        return Err(InvalidSkillId::BadEdge);
    }
    Ok(())
}

impl From<SkillId> for String {
    fn from(id: SkillId) -> String {
        id.0.as_ref().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_and_rejects() {
        let cases: &[(&str, Result<(), InvalidSkillId>)] = &[
            ("rust-debugging", Ok(())),
            ("a", Ok(())),
            ("pdf2", Ok(())),
            ("0day", Ok(())),
            ("double--hyphen", Ok(())),
            ("", Err(InvalidSkillId::Empty)),
            ("Rust", Err(InvalidSkillId::BadCharacter { found: 'R' })),
            ("my_skill", Err(InvalidSkillId::BadCharacter { found: '_' })),
            ("../etc", Err(InvalidSkillId::BadCharacter { found: '.' })),
            ("a/b", Err(InvalidSkillId::BadCharacter { found: '/' })),
            ("a\\b", Err(InvalidSkillId::BadCharacter { found: '\\' })),
            ("-lead", Err(InvalidSkillId::BadEdge)),
            ("trail-", Err(InvalidSkillId::BadEdge)),
            ("é", Ok(())),
            ("навык", Ok(())),
            ("技能", Ok(())),
            ("πdf-εργαλεία", Ok(())),
            ("Навык", Err(InvalidSkillId::BadCharacter { found: 'Н' })),
            ("ǅemal", Err(InvalidSkillId::BadCharacter { found: 'D' })), // NFKC: "Dž"
            (
                "a\u{200b}b",
                Err(InvalidSkillId::BadCharacter { found: '\u{200b}' }),
            ),
            ("a b", Err(InvalidSkillId::BadCharacter { found: ' ' })),
            (
                "a\u{0}",
                Err(InvalidSkillId::BadCharacter { found: '\u{0}' }),
            ),
        ];
        for (raw, expected) in cases {
            assert_eq!(&SkillId::parse(raw).map(|_| ()), expected, "{raw:?}");
            assert_eq!(&SkillId::check(raw), expected, "{raw:?}");
            let owned = SkillId::try_from((*raw).to_owned());
            assert_eq!(&owned.as_ref().map(|_| ()).map_err(Clone::clone), expected);
            if let Ok(id) = owned {
                assert_eq!(id.as_str(), *raw);
            }
        }
        // 64 characters, not bytes: 64 Cyrillic letters are 128 bytes.
        assert!(SkillId::parse(&"я".repeat(64)).is_ok());
        assert_eq!(
            SkillId::parse(&"я".repeat(65)),
            Err(InvalidSkillId::TooLong { len: 65 })
        );
        let long = "a".repeat(65);
        assert_eq!(
            SkillId::parse(&long),
            Err(InvalidSkillId::TooLong { len: 65 })
        );
        assert!(SkillId::parse(&"a".repeat(64)).is_ok());
    }

    /// NFKC-equal spellings are one id, kept in NFKC form: a ligature, a
    /// full-width digit, a decomposed `é` (as macOS file names hold it).
    #[test]
    fn nfkc_equal_spellings_are_one_id() {
        for (written, id) in [
            ("\u{fb01}le-tools", "file-tools"),
            ("pdf\u{ff12}", "pdf2"),
            ("cafe\u{301}", "caf\u{e9}"),
        ] {
            assert_eq!(SkillId::parse(written).unwrap().as_str(), id);
            assert_eq!(SkillId::try_from(written.to_owned()).unwrap().as_str(), id);
            assert_eq!(SkillId::check(written), Ok(()));
        }
    }

    /// A namespaced id is made only from two valid halves, is found again
    /// from its text, and front matter's grammar still refuses the `:`.
    #[test]
    fn namespaced_ids() {
        let id = SkillId::namespaced("other", "pdf-tools").unwrap();
        assert_eq!(id.as_str(), "other:pdf-tools");
        assert_eq!(id.namespace(), Some("other"));
        assert_eq!(SkillId::parse("pdf").unwrap().namespace(), None);
        assert_eq!(SkillId::parse_reference("other:pdf-tools"), Ok(id.clone()));
        assert_eq!(SkillId::try_from("other:pdf-tools".to_owned()), Ok(id));
        assert_eq!(SkillId::parse_reference("plain"), SkillId::parse("plain"));
        assert_eq!(
            SkillId::parse("other:pdf-tools"),
            Err(InvalidSkillId::BadCharacter { found: ':' })
        );
        assert_eq!(
            SkillId::check("other:pdf-tools"),
            Err(InvalidSkillId::BadCharacter { found: ':' })
        );
        for bad in ["a:b:c", ":b", "a:", "A:b", "a:B c", "a/b:c"] {
            assert!(SkillId::parse_reference(bad).is_err(), "{bad}");
        }
        assert_eq!(
            SkillId::namespaced("Server", "x"),
            Err(InvalidSkillId::BadCharacter { found: 'S' })
        );
    }

    #[test]
    fn suggestions_are_valid_ids() {
        let s = |raw: &str| SkillId::suggest(raw).map(String::from);
        assert_eq!(s("My_Skill"), Some("my-skill".into()));
        assert_eq!(s("  PDF Tools!! "), Some("pdf-tools".into()));
        assert_eq!(s("___"), None);
        assert_eq!(s("Мой Навык"), Some("мой-навык".into()));
        assert_eq!(s(&"ab-".repeat(40)).map(|x| x.len() <= 64), Some(true));
    }
}
