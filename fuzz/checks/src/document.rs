//! Target `document`: the input is a whole file (front matter and body),
//! read as a skill under each candidate name and as an invariant document.

use bcode_skill::parse_document;

use crate::skill_file;

/// Properties: see [`skill_file::check`] for the skill side. As a document
/// (what invariants use), parsing never panics and answers the same twice;
/// a parsed document's body is the end of the file, and a document without
/// front matter has no fields.
pub fn check(data: &[u8]) {
    skill_file::check(data);
    let text = String::from_utf8_lossy(data);
    let parsed = parse_document(&text);
    assert_eq!(parsed, parse_document(&text), "not deterministic");
    match parsed {
        Ok(document) => {
            assert!(text.ends_with(&document.body), "{document:?}");
            if !document.has_front_matter {
                assert!(document.fields.is_empty(), "{document:?}");
            }
        }
        Err(err) => {
            assert!(!err.message.is_empty(), "{err:?}");
            if let Some(line) = err.line {
                let lines = text.split(['\n', '\r']).count();
                let line = usize::try_from(line).unwrap_or(usize::MAX);
                assert!(
                    (1..=lines).contains(&line),
                    "line {line} of {lines}: {err:?}"
                );
            }
        }
    }
}
