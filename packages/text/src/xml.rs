//! XML escaping of values placed inside the catalog and skill context blocks.

use std::borrow::Cow;

/// Escapes `&`, `<`, `>`, `"` and `'`, the five characters that can end or
/// forge an XML element or attribute. Borrowed when nothing needed escaping,
/// which is the common case and keeps catalog formatting allocation-light.
pub fn escape_xml(value: &str) -> Cow<'_, str> {
    let Some(first) = first_special(value.as_bytes()) else {
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

/// Appends `value` to `out`, escaped as [`escape_xml`] does, without an
/// intermediate allocation: runs of ordinary bytes are copied at once.
#[inline]
pub fn escape_xml_into(out: &mut String, value: &str) {
    let bytes = value.as_bytes();
    let mut start = 0;
    while let Some(offset) = first_special(&bytes[start..]) {
        let at = start + offset;
        out.push_str(&value[start..at]);
        out.push_str(match bytes[at] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            _ => "&apos;",
        });
        start = at + 1;
    }
    out.push_str(&value[start..]);
}

/// The offset of the first `&`, `<`, `>`, `"` or `'` in `bytes`. Tests 32
/// bytes per step with a branch-free fold that the compiler turns into
/// vector compares (safe Rust, no intrinsics): catalogs escape megabytes of
/// mostly ordinary text, and the scan was the largest cost of formatting.
#[inline]
fn first_special(bytes: &[u8]) -> Option<usize> {
    let len = bytes.len();
    if len < BLOCK {
        // Short values (ids, names, source labels) are settled by two
        // overlapping half or quarter blocks; only a value with a special
        // byte, or under 8 bytes, is searched byte by byte.
        let clean = if len >= 16 {
            !has_special::<16>(&bytes[..16]) && !has_special::<16>(&bytes[len - 16..])
        } else if len >= 8 {
            !has_special::<8>(&bytes[..8]) && !has_special::<8>(&bytes[len - 8..])
        } else {
            false
        };
        if clean {
            return None;
        }
        return bytes.iter().position(|&b| is_special(b));
    }
    let mut base = 0;
    while let Some(block) = bytes.get(base..base + BLOCK) {
        if has_special::<BLOCK>(block) {
            return block.iter().position(|&b| is_special(b)).map(|i| base + i);
        }
        base += BLOCK;
    }
    // The tail is tested as the last whole block, overlapping bytes already
    // found ordinary, so the first hit in it lies in the tail (copying the
    // tail into a padded block cost a `memcpy` call per value).
    if base < bytes.len() {
        let start = bytes.len() - BLOCK;
        let block = &bytes[start..];
        if has_special::<BLOCK>(block) {
            return block.iter().position(|&b| is_special(b)).map(|i| start + i);
        }
    }
    None
}

const BLOCK: usize = 32;

/// Whether any of the first `N` bytes is special. A fixed trip count and a
/// byte accumulator are what the vectoriser needs; a `bool` fold stays
/// scalar.
#[inline(always)]
fn has_special<const N: usize>(block: &[u8]) -> bool {
    let mut hits = 0u8;
    for &b in &block[..N] {
        hits |= u8::from(is_special(b));
    }
    hits != 0
}

#[inline(always)]
fn is_special(b: u8) -> bool {
    (b == b'&') | (b == b'<') | (b == b'>') | (b == b'"') | (b == b'\'')
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
    fn escaping_into_a_buffer_matches_escape_xml() {
        let long = "x".repeat(37) + "&" + &"y".repeat(9) + "'\"" + &"é".repeat(11) + ">";
        for value in [
            "",
            "plain",
            "a & b < c > d \" e ' f",
            "&&",
            "ünï<code>",
            "12345678<",
            "1234567&",
            long.as_str(),
        ] {
            let mut out = String::from("prefix:");
            escape_xml_into(&mut out, value);
            assert_eq!(out, format!("prefix:{}", escape_xml(value)));
        }
    }

    #[test]
    fn finds_specials_at_every_offset_around_the_block_size() {
        for len in 0..=2 * BLOCK + 3 {
            assert_eq!(first_special(&vec![b'a'; len]), None, "len {len}");
            for at in 0..len {
                for special in *b"&<>\"'" {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = special;
                    // A second special later must not be reported first.
                    if at + 1 < len {
                        bytes[len - 1] = b'<';
                    }
                    assert_eq!(first_special(&bytes), Some(at), "len {len} at {at}");
                }
            }
        }
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

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn buffered_escaping_equals_the_simple_definition(value in "(\\PC|[&<>\"'])*") {
            let mut out = String::new();
            escape_xml_into(&mut out, &value);
            let expected: String = value.chars().map(|c| match c {
                '&' => "&amp;".to_owned(),
                '<' => "&lt;".to_owned(),
                '>' => "&gt;".to_owned(),
                '"' => "&quot;".to_owned(),
                '\'' => "&apos;".to_owned(),
                c => c.to_string(),
            }).collect();
            prop_assert_eq!(out, expected);
        }
    }
}
