//! The one bounding helper every stage uses: `bcode_text::bound_at` with the
//! in-band marker rendered from `truncation_marker.j2`, so the model is told
//! how much was cut and where the full text lives.
//!
//! Limits are `Option`s because the spec leaves most context untruncated by
//! default; `None` returns the text unchanged without rendering anything.
//!
//! Every cut is marked. A limit smaller than the marker itself keeps nothing
//! of the text and yields the marker alone, over the limit: the marker wins
//! over content, so the model is never handed an empty body that looks
//! whole. [`SectionTruncation::kept_nothing`] lets the caller warn.

use std::cell::RefCell;

use bcode_text::{Limit, Truncation};
use minijinja::context;

use serde::Serialize;

use bcode_templates::{TemplateError, Templates};

/// A cut made by the bounds helper, with where the full text can be found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SectionTruncation {
    /// Offsets in this truncation refer to the text that was bounded (the
    /// stage's input), not to the section or the prompt.
    #[serde(flatten)]
    pub truncation: bcode_text::Truncation,
    /// The file path or command the marker points the model at for the
    /// whole text; `None` when the stage knows of no such place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_text_at: Option<String>,
}

impl SectionTruncation {
    /// Whether the limit kept nothing of the text: the model sees only the
    /// marker (see the module docs).
    pub fn kept_nothing(&self) -> bool {
        self.truncation.kept_nothing()
    }
}

/// The marker template's name.
pub const MARKER_TEMPLATE: &str = "truncation_marker.j2";

/// Text after bounding: the original, or a prefix followed by the marker,
/// never exceeding the limit (marker included) unless the marker alone is
/// longer than the limit, when it is the whole text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BoundedText {
    /// The text to place in the section: the input unchanged, or the kept
    /// prefix with the rendered marker appended.
    pub text: String,
    /// The cut that was made, or `None` when the text fit (or no limit was
    /// set).
    pub truncation: Option<SectionTruncation>,
}

/// Bounds `text` to `limit`, cutting on a grapheme boundary (preferring
/// `preferred_cuts`, byte offsets) and appending the rendered marker.
/// `full_text_at` is shown in the marker: a file path or a command that
/// prints the whole text. Fails only when the marker template fails.
pub fn bound_text(
    templates: &Templates,
    text: &str,
    limit: Option<Limit>,
    preferred_cuts: &[usize],
    full_text_at: Option<&str>,
) -> Result<BoundedText, TemplateError> {
    let Some(limit) = limit else {
        return Ok(BoundedText {
            text: text.to_owned(),
            truncation: None,
        });
    };
    // `bound_at` takes an infallible marker function; keep the first template
    // error aside and report it after the call instead of printing a broken
    // marker.
    let failure: RefCell<Option<TemplateError>> = RefCell::new(None);
    let marker = |t: &Truncation| match render_marker(templates, t, full_text_at) {
        Ok(marker) => marker,
        Err(err) => {
            failure.borrow_mut().get_or_insert(err);
            String::new()
        }
    };
    let bounded = bcode_text::bound_at(text, limit, preferred_cuts, &marker);
    if let Some(err) = failure.into_inner() {
        return Err(err);
    }
    Ok(BoundedText {
        text: bounded.text.into_owned(),
        truncation: bounded.truncation.map(|truncation| SectionTruncation {
            truncation,
            full_text_at: full_text_at.map(str::to_owned),
        }),
    })
}

/// Preferred cut points at the end of every line (before its `\n`), for
/// line-oriented text such as git status: the kept part then ends with a
/// whole line and the marker starts on the next one.
pub fn line_ends(text: &str) -> Vec<usize> {
    text.match_indices('\n').map(|(at, _)| at).collect()
}

fn render_marker(
    templates: &Templates,
    t: &Truncation,
    full_text_at: Option<&str>,
) -> Result<String, TemplateError> {
    let (unit, omitted, original) = match t.limit {
        Limit::Chars(_) => ("chars", t.omitted_chars, t.original_chars),
        Limit::Bytes(_) => ("bytes", t.omitted_bytes, t.original_bytes),
    };
    templates.render(
        MARKER_TEMPLATE,
        context! {
            unit,
            limit => t.limit.max(),
            omitted,
            original,
            omitted_bytes => t.omitted_bytes,
            original_bytes => t.original_bytes,
            cut_at_byte => t.cut_at_byte,
            full_text_at,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, limit: Option<Limit>, hint: Option<&str>, expected: &str) {
        let templates = Templates::builtin();
        let out = bound_text(&templates, text, limit, &line_ends(text), hint).unwrap();
        assert_eq!(out.text, expected);
        if let Some(limit) = limit {
            let marker_alone = out.truncation.as_ref().is_some_and(|t| t.kept_nothing());
            assert!(marker_alone || limit.measure(&out.text) <= limit.max());
        }
    }

    #[test]
    fn line_ends_are_before_each_newline() {
        assert_eq!(line_ends("ab\ncd\n\ne"), [2, 5, 6]);
    }

    #[test]
    fn unlimited_is_untouched() {
        check(&"x".repeat(10_000)[..], None, None, &"x".repeat(10_000));
    }

    #[test]
    fn marker_says_how_much_and_where() {
        let text = "line one\nline two\nline three\nline four\nline five\n".repeat(3);
        check(
            &text,
            Some(Limit::Chars(80)),
            Some("git status"),
            "line one\n[truncated: 139 of 147 characters omitted; full text: git status]",
        );
        check(
            &text,
            Some(Limit::Bytes(60)),
            None,
            "line one\nline two\n[truncated: 130 of 147 bytes omitted]",
        );
    }

    #[test]
    fn a_limit_smaller_than_the_marker_keeps_the_marker() {
        for max in [0, 1, 17] {
            check(
                "line one\nline two\n",
                Some(Limit::Chars(max)),
                Some("BCODE.md"),
                "\n[truncated: 18 of 18 characters omitted; full text: BCODE.md]",
            );
        }
    }
}
