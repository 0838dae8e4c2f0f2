//! `SkillId`: the validated identifier a skill is known by everywhere.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The longest id accepted, in bytes (ids are ASCII). Matches the Agent Skills
/// `name` limit so ids inferred from portable skills always fit.
pub const MAX_SKILL_ID_LEN: usize = 64;

/// A skill id: 1 to 64 lowercase ASCII letters, digits and hyphens, starting
/// with a letter or digit and not ending with a hyphen. The character set
/// rules out path separators, `..`, whitespace and markup, so an id is safe in
/// a file name, an XML attribute and a slash command.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SkillId(String);

/// Why a string is not a valid skill id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidSkillId {
    /// The string is empty.
    #[error("the id is empty")]
    Empty,
    /// The string is longer than [`MAX_SKILL_ID_LEN`].
    #[error("the id is {len} bytes long; the limit is {MAX_SKILL_ID_LEN}")]
    TooLong {
        /// Length of the string in bytes.
        len: usize,
    },
    /// The string holds a character outside `a-z`, `0-9` and `-`.
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
    /// Validates `raw` as an id.
    pub fn parse(raw: &str) -> Result<Self, InvalidSkillId> {
        check(raw)?;
        Ok(SkillId(raw.to_owned()))
    }

    /// Whether `raw` is a valid id, without making one (`TryFrom<String>`
    /// then takes the string without copying it).
    pub fn check(raw: &str) -> Result<(), InvalidSkillId> {
        check(raw)
    }

    /// A valid id close to `raw` (lowercased, runs of other characters turned
    /// into one hyphen, trimmed to the length cap), offered in diagnostic hints.
    /// `None` when nothing usable remains.
    pub fn suggest(raw: &str) -> Option<SkillId> {
        let mut out = String::new();
        for c in raw.chars().flat_map(char::to_lowercase) {
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
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

    /// The id as a string slice, as written in front matter and commands.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SkillId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Validates an owned id without copying it.
impl TryFrom<String> for SkillId {
    type Error = InvalidSkillId;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        check(&value)?;
        Ok(SkillId(value))
    }
}

/// The id rules: lowercase ASCII letters, digits and inner hyphens, at most
/// [`MAX_SKILL_ID_LEN`] bytes.
fn check(raw: &str) -> Result<(), InvalidSkillId> {
    if raw.is_empty() {
        return Err(InvalidSkillId::Empty);
    }
    if let Some(found) = raw
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(InvalidSkillId::BadCharacter { found });
    }
    if raw.len() > MAX_SKILL_ID_LEN {
        return Err(InvalidSkillId::TooLong { len: raw.len() });
    }
    if raw.starts_with('-') || raw.ends_with('-') {
        return Err(InvalidSkillId::BadEdge);
    }
    Ok(())
}

impl From<SkillId> for String {
    fn from(id: SkillId) -> String {
        id.0
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
            ("é", Err(InvalidSkillId::BadCharacter { found: 'é' })),
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
        let long = "a".repeat(65);
        assert_eq!(
            SkillId::parse(&long),
            Err(InvalidSkillId::TooLong { len: 65 })
        );
        assert!(SkillId::parse(&"a".repeat(64)).is_ok());
    }

    #[test]
    fn suggestions_are_valid_ids() {
        let s = |raw: &str| SkillId::suggest(raw).map(|id| id.0);
        assert_eq!(s("My_Skill"), Some("my-skill".into()));
        assert_eq!(s("  PDF Tools!! "), Some("pdf-tools".into()));
        assert_eq!(s("___"), None);
        assert_eq!(s(&"ab-".repeat(40)).map(|x| x.len() <= 64), Some(true));
    }
}
