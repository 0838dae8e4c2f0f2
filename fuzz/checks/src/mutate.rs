//! A small deterministic mutator: from the seeds, a fixed number of inputs
//! changed the way a coverage-guided fuzzer changes them (bit flips,
//! special bytes, tokens of the formats, cuts, copies, splices, other line
//! endings), driven by a seeded generator so every run tries the same
//! inputs. It stands in for libFuzzer in `cargo test`, without coverage
//! guidance: it keeps the checks exercised on inputs no seed holds.

/// Bytes that mean something to YAML, TOML, the front-matter splitter or a
/// UTF-8 decoder.
const SPECIAL_BYTES: &[u8] = b"\0\t\n\r :-#\"'\\[]{}|>&*!%@`=,.+~\x1b\x7f\x80\xc3\xef\xff";

/// Tokens of the formats under test, inserted whole.
const TOKENS: &[&[u8]] = &[
    b"---\n",
    b"+++\n",
    b"\n---\n",
    b"...\n",
    b"\r",
    b"\r\n",
    "\u{feff}".as_bytes(),
    b": ",
    b"- ",
    b"? ",
    b"\n  ",
    b"\n    - ",
    b"|\n",
    b">-\n",
    b"| ",
    b"&a ",
    b"*a",
    b"<<: *a\n",
    b"!!str ",
    b"!!binary ",
    b"%YAML 1.2\n",
    b"description: ",
    b"id: ",
    b"name: ",
    b"version: ",
    b"metadata:\n  ",
    b"activation:\n  keywords: [",
    b"[a, [b, {c: d}]]",
    b"\"\\0body\\0\"",
    b"\"\\e]52;c;eA==\\a\"",
    b" = ",
    b"[skills]\n",
    b"[skills.prompt]\n",
    b"[system_prompt.sections]\n",
    b"[[a.b]]\n",
    b"\"\"\"",
    b"'''",
    b"inf",
    b"nan",
    b"1e999",
    b"-0x7fffffffffffffff",
    b"18446744073709551616",
    b"1979-05-27T07:32:00Z",
    b"~",
    b"null",
    b"true",
    "</skill>".as_bytes(),
    "<skill id=\"x\">".as_bytes(),
    "\u{200b}".as_bytes(),
    "e\u{301}".as_bytes(),
    b"\xf0\x9f\x98",
];

/// Mutants never grow past this, so a run stays bounded in time.
const MAX_LEN: usize = 64 * 1024;

/// `count` mutants of `seeds` (none when `seeds` is empty), the same for
/// the same arguments on every run.
pub fn mutants(seeds: &[Vec<u8>], count: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = SplitMix64(seed);
    if seeds.is_empty() {
        return Vec::new();
    }
    (0..count)
        .map(|_| {
            let mut input = seeds[rng.below(seeds.len())].clone();
            for _ in 0..=rng.below(4) {
                mutate(&mut input, seeds, &mut rng);
            }
            input.truncate(MAX_LEN);
            input
        })
        .collect()
}

fn mutate(input: &mut Vec<u8>, seeds: &[Vec<u8>], rng: &mut SplitMix64) {
    let at = rng.below(input.len() + 1);
    match rng.below(9) {
        0 if at < input.len() => input[at] ^= 1 << rng.below(8),
        1 if at < input.len() => input[at] = SPECIAL_BYTES[rng.below(SPECIAL_BYTES.len())],
        2 => {
            let token = TOKENS[rng.below(TOKENS.len())];
            input.splice(at..at, token.iter().copied());
        }
        3 => {
            let end = (at + 1 + rng.below(16)).min(input.len());
            input.drain(at.min(end)..end);
        }
        4 => {
            let end = (at + 1 + rng.below(64)).min(input.len());
            let copy = input[at.min(end)..end].to_vec();
            let to = rng.below(input.len() + 1);
            input.splice(to..to, copy);
        }
        5 => {
            // A splice: this input's head, another seed's tail.
            let other = &seeds[rng.below(seeds.len())];
            let from = rng.below(other.len() + 1);
            input.truncate(at);
            input.extend_from_slice(&other[from..]);
        }
        6 => {
            // Another line ending for every LF, as files edited on other
            // systems have.
            let ending: &[u8] = if rng.below(2) == 0 { b"\r\n" } else { b"\r" };
            let mut changed = Vec::with_capacity(input.len());
            for &byte in input.iter() {
                if byte == b'\n' {
                    changed.extend_from_slice(ending);
                } else {
                    changed.push(byte);
                }
            }
            *input = changed;
        }
        7 => input.truncate(at),
        _ => {
            // A run of one byte: deep nesting, long lines, long indents.
            let byte = SPECIAL_BYTES[rng.below(SPECIAL_BYTES.len())];
            let run = 1 + rng.below(512);
            input.splice(at..at, std::iter::repeat_n(byte, run));
        }
    }
}

/// SplitMix64: tiny, seedable and good enough to pick mutations.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`0` when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::mutants;

    #[test]
    fn the_same_seed_gives_the_same_mutants() {
        let seeds = vec![b"---\ndescription: x\n---\n".to_vec(), b"a = 1\n".to_vec()];
        let first = mutants(&seeds, 200, 7);
        assert_eq!(first, mutants(&seeds, 200, 7));
        assert_ne!(first, mutants(&seeds, 200, 8));
        assert!(first.iter().any(|m| !seeds.contains(m)));
        assert!(mutants(&[], 10, 7).is_empty());
    }
}
