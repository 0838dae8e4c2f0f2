//! One catalog entry as the spec's data format (`<skill>` with its escaped
//! values), and the description cuts and size arithmetic the budgeted
//! catalog needs to size an entry without writing it.

use std::borrow::Cow;

use bcode_skill_models::SkillSummary;
use bcode_text::{Limit, bound, clean_line, escape_xml_into, model_path};

/// What an entry shows besides id, name and location.
#[derive(Clone, Copy, Debug)]
pub(super) struct EntryShape {
    /// `summary` mode: descriptions (and sources, keywords when asked) are shown.
    pub(super) summary: bool,
    /// `<source>` in summary mode.
    pub(super) sources: bool,
    /// `<keywords>` in summary mode.
    pub(super) keywords: bool,
}

/// Appends one `<skill>` entry; `description` is written only in summary
/// mode (an empty one still writes its element). Every value is cleaned
/// for the model (`bcode_text::clean_line`) and escaped; the description
/// arrives cleaned (`clean_body`: it may hold lines), because the budget
/// measures it before it is written.
pub(super) fn write_entry(
    out: &mut String,
    skill: &SkillSummary,
    description: &str,
    shape: EntryShape,
) {
    let m = &skill.manifest;
    // Each tag is written as one piece (a catalog of 10,000 skills made
    // hundreds of thousands of tiny copies when tags were assembled
    // from `<`, name and `>`).
    push_line(out, "  <skill>\n    <id>", m.id.as_str(), "</id>\n");
    push_line(out, "    <name>", &m.name, "</name>\n");
    if shape.summary {
        push_element(out, DESCRIPTION, description, DESCRIPTION_END);
    }
    push_line(
        out,
        "    <location>",
        &model_path(&skill.location),
        "</location>\n",
    );
    if shape.summary && shape.sources {
        push_line(out, "    <source>", &skill.source.label, "</source>\n");
    }
    if shape.summary && shape.keywords && !m.activation.keywords.is_empty() {
        let keywords = m.activation.keywords.join(", ");
        push_line(out, "    <keywords>", &keywords, "</keywords>\n");
    }
    out.push_str("  </skill>\n");
}

/// `open`, `value` cleaned as one line and escaped, `close`.
fn push_line(out: &mut String, open: &str, value: &str, close: &str) {
    push_element(out, open, &clean_line(value), close);
}

/// `open`, `value` escaped, `close`: one catalog element.
fn push_element(out: &mut String, open: &str, value: &str, close: &str) {
    out.push_str(open);
    escape_xml_into(out, value);
    out.push_str(close);
}

const DESCRIPTION: &str = "    <description>";
const DESCRIPTION_END: &str = "</description>\n";

/// `description` bounded to `max_chars` characters (the marker included) on
/// a grapheme boundary, with `ellipsis` as the marker. A limit smaller than
/// the marker leaves the marker alone: the marker wins over the limit, so a
/// cut is never invisible.
pub(super) fn shorten<'d>(description: &'d str, max_chars: usize, ellipsis: &str) -> Cow<'d, str> {
    let cut = bound(description, Limit::Chars(max_chars), &|_| {
        ellipsis.to_owned()
    });
    match cut.truncation {
        Some(_) if cut.text.is_empty() => Cow::Owned(ellipsis.to_owned()),
        _ => cut.text,
    }
}

/// The UTF-8 length of `value` once XML-escaped (as [`escape_xml_into`]
/// writes it); the escapes are ASCII, so the growth is the same in bytes
/// and in characters.
pub(super) fn escaped_growth(value: &str) -> usize {
    value
        .bytes()
        .map(|b| match b {
            b'&' => 4,
            b'<' | b'>' => 3,
            b'"' | b'\'' => 5,
            _ => 0,
        })
        .sum()
}

/// A description measured once, so its escaped size under any length cap
/// is cheap to ask again and again while the budget is searched.
#[derive(Clone, Debug)]
pub(super) struct MeasuredDescription<'d> {
    /// The text (after `max_description_chars`, when set).
    pub(super) text: Cow<'d, str>,
    /// Its length in characters, unescaped: the unit of the cap.
    pub(super) chars: usize,
    /// Its escaped length in bytes.
    pub(super) escaped_bytes: usize,
    /// Its escaped length in characters.
    pub(super) escaped_chars: usize,
    /// ASCII with no carriage return: every character is its own grapheme
    /// cluster, so a cut is a byte offset and needs no segmentation.
    plain_ascii: bool,
}

impl<'d> MeasuredDescription<'d> {
    /// Measures `text`.
    pub(super) fn new(text: Cow<'d, str>) -> MeasuredDescription<'d> {
        let growth = escaped_growth(&text);
        let plain_ascii = text.is_ascii() && !text.contains('\r');
        let chars = if plain_ascii {
            text.len()
        } else {
            text.chars().count()
        };
        MeasuredDescription {
            escaped_bytes: text.len() + growth,
            escaped_chars: chars + growth,
            chars,
            plain_ascii,
            text,
        }
    }

    /// The escaped byte length of the description under a cap of
    /// `max_chars` (what [`shorten`] then escaping would write).
    pub(super) fn escaped_bytes_at(&self, max_chars: usize, ellipsis: &Ellipsis) -> usize {
        if self.chars <= max_chars {
            return self.escaped_bytes;
        }
        if max_chars < ellipsis.chars {
            return ellipsis.escaped_bytes;
        }
        if self.plain_ascii {
            // One byte per character and per grapheme: `bound` keeps
            // exactly the first `max_chars - marker` bytes.
            let kept = &self.text[..max_chars - ellipsis.chars];
            return kept.len() + escaped_growth(kept) + ellipsis.escaped_bytes;
        }
        let cut = shorten(&self.text, max_chars, &ellipsis.text);
        cut.len() + escaped_growth(&cut)
    }
}

/// The description marker (`skills/description_truncated.j2`), measured.
#[derive(Clone, Debug)]
pub(super) struct Ellipsis {
    /// The marker text.
    pub(super) text: String,
    /// Its length in characters.
    pub(super) chars: usize,
    /// Its escaped length in bytes.
    pub(super) escaped_bytes: usize,
}

impl Ellipsis {
    /// Measures `text`.
    pub(super) fn new(text: String) -> Ellipsis {
        Ellipsis {
            chars: text.chars().count(),
            escaped_bytes: text.len() + escaped_growth(&text),
            text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn escaped(text: &str) -> String {
        let mut out = String::new();
        escape_xml_into(&mut out, text);
        out
    }

    #[test]
    fn a_cap_below_the_marker_leaves_the_marker() {
        assert_eq!(shorten("abcdef", 0, "…"), "…");
        assert_eq!(shorten("abcdef", 1, "…"), "…");
        assert_eq!(shorten("abcdef", 3, "…"), "ab…");
        assert_eq!(shorten("abcdef", 1, "[cut]"), "[cut]");
        assert_eq!(shorten("abc", 3, "…"), "abc");
    }

    proptest! {
        /// The arithmetic and the real cut agree, for plain ASCII (the
        /// fast path), escapes, CRLF and multi-byte text alike.
        #[test]
        fn escaped_size_at_a_cap_is_what_is_written(
            text in "([a-z <>&\"' ]|\r\n|é|e\u{301}|👍🏽){0,40}",
            cap in 0usize..50,
            marker in prop_oneof![Just("…"), Just("..."), Just("[&more]")],
        ) {
            let ellipsis = Ellipsis::new(marker.to_owned());
            let measured = MeasuredDescription::new(Cow::Borrowed(&text));
            let written = escaped(&shorten(&text, cap, marker));
            prop_assert_eq!(measured.escaped_bytes_at(cap, &ellipsis), written.len());
            prop_assert_eq!(measured.escaped_bytes, escaped(&text).len());
            prop_assert_eq!(measured.escaped_chars, escaped(&text).chars().count());
        }
    }
}
