//! XML escaping of values placed inside the catalog and skill context blocks.

use std::borrow::Cow;

/// Escapes `&`, `<`, `>`, `"` and `'`, the five characters that can end or
/// forge an XML element or attribute. Borrowed when nothing needed escaping,
/// which is the common case and keeps catalog formatting allocation-light.
pub fn escape_xml(value: &str) -> Cow<'_, str> {
    let first = value
        .bytes()
        .position(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\''));
    let Some(first) = first else {
        return Cow::Borrowed(value);
    };
    let mut out = String::with_capacity(value.len() + 16);
    out.push_str(&value[..first]);
    for ch in value[first..].chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            other => out.push(other),
        }
    }
    Cow::Owned(out)
}

/// Makes every closing tag `</name` (ASCII case-insensitive) inert by escaping
/// its `<`, so free text such as a skill body cannot end the block it is
/// placed in. Everything else is left byte for byte, because bodies are
/// markdown whose code samples must stay readable.
pub fn neutralize_closing_tag<'a>(text: &'a str, name: &str) -> Cow<'a, str> {
    let needle_len = 2 + name.len();
    let bytes = text.as_bytes();
    let is_closing_at = |i: usize| {
        bytes.len() >= i + needle_len
            && bytes[i] == b'<'
            && bytes[i + 1] == b'/'
            && bytes[i + 2..i + needle_len].eq_ignore_ascii_case(name.as_bytes())
    };
    if !(0..bytes.len()).any(is_closing_at) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut last = 0;
    for i in 0..bytes.len() {
        if is_closing_at(i) {
            out.push_str(&text[last..i]);
            out.push_str("&lt;");
            last = i + 1;
        }
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_all_five_and_borrows_clean_text() {
        assert_eq!(
            escape_xml(r#"a & b < c > d " e ' f"#),
            "a &amp; b &lt; c &gt; d &quot; e &apos; f"
        );
        assert!(matches!(escape_xml("plain ünïcode"), Cow::Borrowed(_)));
    }

    #[test]
    fn neutralizes_only_the_named_closing_tag() {
        assert_eq!(
            neutralize_closing_tag("x </skill> y </SKILL > </skills-x> <b>", "skill"),
            "x &lt;/skill> y &lt;/SKILL > &lt;/skills-x> <b>"
        );
        assert!(matches!(
            neutralize_closing_tag("no tags </other>", "skill"),
            Cow::Borrowed(_)
        ));
    }
}
