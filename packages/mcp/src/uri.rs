//! `skill://<id>/<path>` URIs: written for every served file, and read back
//! from requests, where anything that could name a file outside a skill's
//! folder is refused (`..`, `.`, empty segments, an encoded `/` or `\`,
//! NUL, bad percent-escapes), whether percent-encoded or not.

/// The scheme of every served resource.
pub const SCHEME: &str = "skill://";

/// The name every skill's instruction file is served under.
pub const SKILL_MD: &str = "SKILL.md";

/// The URI of the file at `path` (relative, `/`-separated) of skill `id`.
pub fn file_uri(id: &str, path: &str) -> String {
    let mut uri = String::with_capacity(SCHEME.len() + id.len() + path.len() + 1);
    uri.push_str(SCHEME);
    encode_into(&mut uri, id, false);
    uri.push('/');
    encode_into(&mut uri, path, true);
    uri
}

/// The URI of skill `id`'s `SKILL.md`.
pub fn skill_uri(id: &str) -> String {
    file_uri(id, SKILL_MD)
}

/// Percent-encodes `text` into `out`: unreserved characters (and `/` when
/// `slashes` is set) as they are, every other byte as `%XX`.
fn encode_into(out: &mut String, text: &str, slashes: bool) {
    for byte in text.bytes() {
        let plain = byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'.' | b'_' | b'~')
            || (slashes && byte == b'/');
        if plain {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(hex(byte >> 4));
            out.push(hex(byte & 0xf));
        }
    }
}

fn hex(nibble: u8) -> char {
    char::from(if nibble < 10 {
        b'0' + nibble
    } else {
        b'A' + nibble - 10
    })
}

/// Why a requested URI names no served file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    /// Another scheme.
    #[error("not a {SCHEME} URI")]
    NotSkill,
    /// A `?` or `#`.
    #[error("a query or fragment names no file")]
    QueryOrFragment,
    /// Only a skill, no file.
    #[error("no file path after the skill")]
    NoPath,
    /// A `%` without two hex digits.
    #[error("a bad percent-escape")]
    BadEscape,
    /// A segment decodes to bytes that are not UTF-8.
    #[error("a segment that is not UTF-8")]
    NotUtf8,
    /// A segment, decoded, that could climb or hide a separator.
    #[error("the path segment {0:?} may not be served")]
    Segment(String),
    /// A listed skill's URI that does not end in `/SKILL.md`.
    #[cfg(feature = "client")]
    #[error("it does not end in /{SKILL_MD}")]
    NotSkillMd,
}

/// A requested URI taken apart: the skill id and the file's path inside the
/// skill's folder (segments decoded, joined with `/`).
pub fn parse(uri: &str) -> Result<(String, String), UriError> {
    let rest = uri.strip_prefix(SCHEME).ok_or(UriError::NotSkill)?;
    if rest.contains(['?', '#']) {
        return Err(UriError::QueryOrFragment);
    }
    let (id, path) = rest.split_once('/').ok_or(UriError::NoPath)?;
    let id = segment(id)?;
    let segments = path
        .split('/')
        .map(segment)
        .collect::<Result<Vec<_>, _>>()?;
    Ok((id, segments.join("/")))
}

/// One decoded path segment, refused when it could climb or hide a separator.
fn segment(encoded: &str) -> Result<String, UriError> {
    let bytes = encoded.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte == b'%' {
            let high = bytes.get(at + 1).and_then(|b| char::from(*b).to_digit(16));
            let low = bytes.get(at + 2).and_then(|b| char::from(*b).to_digit(16));
            let (Some(high), Some(low)) = (high, low) else {
                return Err(UriError::BadEscape);
            };
            decoded.push(u8::try_from(high * 16 + low).unwrap_or(0));
            at += 3;
        } else {
            decoded.push(byte);
            at += 1;
        }
    }
    let text = String::from_utf8(decoded).map_err(|_| UriError::NotUtf8)?;
    if matches!(text.as_str(), "" | "." | "..") || text.contains(['/', '\\', '\0']) {
        return Err(UriError::Segment(text));
    }
    Ok(text)
}

/// The skill path of a listed `SKILL.md` URI as decoded segments:
/// `skill://acme/git-workflow/SKILL.md` gives `["acme", "git-workflow"]`.
/// Refused as [`parse`] refuses, and when the URI does not end in
/// `/SKILL.md`.
#[cfg(feature = "client")]
pub(crate) fn skill_path(uri: &str) -> Result<Vec<String>, UriError> {
    let (first, path) = parse(uri)?;
    // `parse` refuses a decoded `/`, so splitting the joined path again
    // gives back its segments.
    let mut segments: Vec<String> = std::iter::once(first)
        .chain(path.split('/').map(str::to_owned))
        .collect();
    if segments.pop().as_deref() != Some(SKILL_MD) {
        return Err(UriError::NotSkillMd);
    }
    Ok(segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "client")]
    #[test]
    fn a_skill_path_is_its_decoded_segments() {
        assert_eq!(
            skill_path("skill://acme/git-workflow/SKILL.md"),
            Ok(vec!["acme".to_owned(), "git-workflow".to_owned()])
        );
        assert_eq!(
            skill_path("skill://%E6%8A%80/a%2Db/pdf/SKILL.md"),
            Ok(vec!["技".to_owned(), "a-b".to_owned(), "pdf".to_owned()])
        );
        assert_eq!(
            skill_path("skill://pdf/README.md"),
            Err(UriError::NotSkillMd)
        );
        assert_eq!(
            UriError::NotSkillMd.to_string(),
            "it does not end in /SKILL.md"
        );
        assert!(skill_path("file:///pdf/SKILL.md").is_err());
        assert!(skill_path("skill://a/../pdf/SKILL.md").is_err());
    }

    #[test]
    fn uris_round_trip_and_encode_what_is_not_plain() {
        assert_eq!(skill_uri("pdf-tools"), "skill://pdf-tools/SKILL.md");
        assert_eq!(
            file_uri("навык", "refs/a b.md"),
            "skill://%D0%BD%D0%B0%D0%B2%D1%8B%D0%BA/refs/a%20b.md"
        );
        for (id, path) in [
            ("навык", "refs/a b.md"),
            ("a", "SKILL.md"),
            ("技能", "x/%y"),
        ] {
            assert_eq!(
                parse(&file_uri(id, path)),
                Ok((id.to_owned(), path.to_owned()))
            );
        }
    }

    #[test]
    fn uris_that_could_leave_a_folder_are_refused() {
        for uri in [
            "skill://a/../b/SKILL.md",
            "skill://a/%2E%2E/b/SKILL.md",
            "skill://a/refs/%2e%2e/%2e%2e/etc/passwd",
            "skill://a/refs%2F..%2F..%2Fx",
            "skill://a/refs%5C..%5Cx",
            "skill://a//SKILL.md",
            "skill://a/./SKILL.md",
            "skill://../SKILL.md",
            "skill://a/SKILL.md%00",
            "skill://a/SKILL.md?x=1",
            "skill://a/%zz",
            "skill://a/%C3",
            "skill://a",
            "file:///etc/passwd",
        ] {
            assert!(parse(uri).is_err(), "{uri}");
        }
    }
}
