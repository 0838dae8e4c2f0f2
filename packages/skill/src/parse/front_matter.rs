//! Splitting a skill file into front matter and body: `---` (YAML) or `+++`
//! (TOML) delimiters, a UTF-8 byte-order mark and CRLF line endings accepted.
//! Works on bytes so discovery can split a file without validating (or even
//! reading) the body.

/// The most nodes (mappings, lists and scalars, keys included) front matter
/// may hold, in YAML and TOML alike.
pub(crate) const MAX_NODES: usize = 10_000;

/// The deepest nesting of mappings and lists front matter may have, in YAML
/// and TOML alike.
pub(crate) const MAX_DEPTH: usize = 16;

/// The syntax of a front-matter block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    Yaml,
    Toml,
}

/// Where the parts of a skill file are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Split {
    /// No front matter: the whole file (after any BOM) is the body.
    None { body_offset: usize },
    /// A complete block. `raw` is the byte range of the text between the
    /// delimiter lines; `first_line` is the 1-based file line `raw` starts on.
    Block {
        syntax: Syntax,
        raw: std::ops::Range<usize>,
        first_line: u32,
        body_offset: usize,
    },
    /// An opening delimiter with no closing one in `bytes`.
    Unterminated { syntax: Syntax },
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Splits `bytes` (a whole file, or a prefix of one).
pub fn split(bytes: &[u8]) -> Split {
    let start = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    let mut lines = Lines { bytes, pos: start };
    let Some((first, _)) = lines.next() else {
        return Split::None { body_offset: start };
    };
    let syntax = match trim_line(&bytes[first.clone()]) {
        b"---" => Syntax::Yaml,
        b"+++" => Syntax::Toml,
        _ => return Split::None { body_offset: start },
    };
    let raw_start = lines.pos;
    for (range, next) in lines {
        let line = trim_line(&bytes[range.clone()]);
        let closes = match syntax {
            Syntax::Yaml => line == b"---" || line == b"...",
            Syntax::Toml => line == b"+++",
        };
        if closes {
            return Split::Block {
                syntax,
                raw: raw_start..range.start,
                first_line: 2,
                body_offset: next,
            };
        }
    }
    Split::Unterminated { syntax }
}

/// The end of a line without its `\r` and trailing spaces or tabs.
fn trim_line(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    &line[..end]
}

/// Iterates `(line range without '\n', offset after the '\n')`.
struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Iterator for Lines<'_> {
    type Item = (std::ops::Range<usize>, usize);
    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let rest = &self.bytes[self.pos..];
        let (len, next) = match find_newline(rest) {
            Some(i) => (i, self.pos + i + 1),
            None => (rest.len(), self.bytes.len()),
        };
        let range = self.pos..self.pos + len;
        self.pos = next;
        Some((range, next))
    }
}

/// The offset of the first `\n`, eight bytes per step as one `u64`: XOR
/// with a word of newlines turns the newline into a zero byte, and the
/// classic zero-byte test marks it (a false mark can only sit above a true
/// one, so the lowest mark is exact). A byte-at-a-time search was most of
/// the time spent splitting files.
fn find_newline(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const NEWLINES: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    let mut words = bytes.chunks_exact(8);
    let mut base = 0;
    for word in &mut words {
        let mut le = [0u8; 8];
        le.copy_from_slice(word);
        let x = u64::from_le_bytes(le) ^ NEWLINES;
        let marks = x.wrapping_sub(ONES) & !x & HIGHS;
        if marks != 0 {
            return Some(base + (marks.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| base + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(text: &str) -> (Syntax, String, usize) {
        match split(text.as_bytes()) {
            Split::Block {
                syntax,
                raw,
                body_offset,
                ..
            } => (syntax, text[raw].to_owned(), body_offset),
            other => panic!("expected a block, got {other:?}"),
        }
    }

    #[test]
    fn yaml_toml_bom_and_crlf() {
        assert_eq!(
            block("---\nid: a\n---\nbody"),
            (Syntax::Yaml, "id: a\n".into(), 14)
        );
        assert_eq!(
            block("+++\nid = 'a'\n+++\nbody"),
            (Syntax::Toml, "id = 'a'\n".into(), 17)
        );
        assert_eq!(
            block("\u{feff}---\r\nid: a\r\n---\r\nbody"),
            (Syntax::Yaml, "id: a\r\n".into(), 20)
        );
        assert_eq!(block("---  \nid: a\n...\nbody").1, "id: a\n");
        assert_eq!(block("---\n---\n"), (Syntax::Yaml, String::new(), 8));
    }

    #[test]
    fn newlines_are_found_at_every_offset() {
        for len in 0..40 {
            for at in 0..len {
                let mut bytes = vec![b'x'; len];
                bytes[at] = b'\n';
                assert_eq!(find_newline(&bytes), Some(at), "len {len}, at {at}");
                if at + 1 < len {
                    bytes[len - 1] = b'\n';
                    assert_eq!(find_newline(&bytes), Some(at));
                }
            }
            assert_eq!(find_newline(&vec![b'x'; len]), None);
        }
    }

    #[test]
    fn newline_search_equals_a_naive_one_near_lookalike_bytes() {
        // Bytes one bit or one borrow away from b'\n' are where a word-wise
        // zero test could go wrong.
        let alphabet = [b'\n', 0x0b, 0x09, 0x8a, 0x00, 0x01, 0xff, b'a'];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..5000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|i| alphabet[((seed >> (i % 60)) as usize + i * 7) % alphabet.len()])
                .collect();
            let naive = bytes.iter().position(|&b| b == b'\n');
            assert_eq!(find_newline(&bytes), naive, "{bytes:?}");
        }
    }

    #[test]
    fn none_and_unterminated() {
        assert_eq!(split(b"# Title\n---\n"), Split::None { body_offset: 0 });
        assert_eq!(split(b""), Split::None { body_offset: 0 });
        assert_eq!(
            split(b"\xEF\xBB\xBF# Title"),
            Split::None { body_offset: 3 }
        );
        assert_eq!(
            split(b"---\nid: a\n"),
            Split::Unterminated {
                syntax: Syntax::Yaml
            }
        );
        assert_eq!(
            split(b"+++\nid = 1\n---\n"),
            Split::Unterminated {
                syntax: Syntax::Toml
            }
        );
    }
}
