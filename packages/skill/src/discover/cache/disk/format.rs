//! The disk cache's file format: JSON lines, none of them long. In order:
//!
//! 1. the header: format, key, every source once, the root reports, and
//!    how many diagnostics and skills follow;
//! 2. one line per diagnostic;
//! 3. the walk snapshot without its bulk, with the size of each root's
//!    bulk (its probes' numbers and their paths);
//! 4. that bulk, root by root, in pieces of at most [`PIECE_WORDS`]
//!    numbers and then [`PIECE_BYTES`] bytes of paths;
//! 5. one line per skill, naming its source by index into the header's.
//!
//! Every line is parsed from a slice, which serde_json does about twice as
//! fast as from a reader (criterion `disk_cache_hit/10000`: 95.6 ms with
//! the single-document file streamed, 48.0 ms read whole), while only one
//! short line is held at a time. The single-document format read files up
//! to 16 MB whole and streamed larger ones, so a 60,000-skill tree (a
//! 36 MB file) paid about a quarter more per skill than a 10,000-skill
//! one; and one long line (the snapshot is 6.7 MB there) left the
//! allocator holding 3 MB more at a render's peak once freed. serde_json
//! writes no raw newline inside a value, so a line is always one value.
//!
//! At 60,000 skills the first format (every summary with its own copy of
//! its source, read whole into memory, then into a vector of summaries,
//! then into shared ones) peaked at 144 MB of heap to read a 62.5 MB file:
//! the file, the vector and the copies of the sources at once.

use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bcode_skill_models::{Diagnostic, SkillLayout, SkillManifest, SkillSource, SkillSummary};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::discover::registry::RootReport;
use crate::discover::snapshot::{StoredBulk, StoredSnapshot};

/// Bumped whenever what is written changes meaning, and whenever parsing
/// does (a stored outcome is the old parser's): 7 accepts ids in any
/// script's lowercase letters, kept in NFKC form; 8 warns of the open
/// specification's id and `compatibility` limits; 9 reads `paths`,
/// `user-invocable`, `argument-hint` and `when_to_use` (kept as unknown
/// fields before); 10 reads the `arguments:` names into the manifest; 11
/// keeps `metadata` scalars as written (`1.10` is the string "1.10") and
/// recovers and reports unquoted `: ` at any depth.
pub(super) const FORMAT: u32 = 11;

/// A line longer than this is not read. Lines are short (one skill, one
/// diagnostic, one piece of bulk); the longest that can grow is the
/// snapshot's, with about 200 bytes per folder link the walk followed.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// Numbers per line of a snapshot's bulk (each at most 20 digits).
const PIECE_WORDS: usize = 4096;

/// Bytes of paths per line of a snapshot's bulk (before JSON escaping).
const PIECE_BYTES: usize = 64 * 1024;

/// The file, as read.
pub(super) struct Stored {
    pub snapshot: StoredSnapshot,
    /// Every summary, sharing one source per root.
    pub skills: Vec<Arc<SkillSummary>>,
    pub diagnostics: Vec<Diagnostic>,
    pub reports: Vec<RootReport>,
}

/// The first line, as written: borrowed from the registry (cloning 10,000
/// summaries to write them doubled the memory of a render).
#[derive(Serialize)]
struct HeaderRef<'a> {
    format: u32,
    key: &'a str,
    sources: Vec<&'a SkillSource>,
    reports: &'a [RootReport],
    diagnostics: usize,
    skills: usize,
}

/// The first line, as read.
#[derive(Deserialize)]
struct Header {
    format: u32,
    key: String,
    sources: Vec<Arc<SkillSource>>,
    reports: Vec<RootReport>,
    diagnostics: usize,
    skills: usize,
}

/// The snapshot's line: without its bulk, and that bulk's size, root by
/// root (numbers, bytes of paths).
#[derive(Serialize, Deserialize)]
struct SnapshotHead {
    snapshot: StoredSnapshot,
    bulk: Vec<(usize, usize)>,
}

/// One summary as written: its source by index into the header's.
#[derive(Serialize)]
struct SkillRef<'a> {
    source: usize,
    layout: SkillLayout,
    location: &'a Path,
    /// Only where it is not `location`'s folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    directory: Option<&'a Path>,
    body_offset: usize,
    manifest: &'a SkillManifest,
}

/// One summary as read.
#[derive(Deserialize)]
struct StoredSkill {
    source: usize,
    layout: SkillLayout,
    location: PathBuf,
    #[serde(default)]
    directory: Option<PathBuf>,
    body_offset: usize,
    manifest: SkillManifest,
}

/// What one file holds for writing.
pub(super) struct Contents<'a, F> {
    pub key: &'a str,
    pub snapshot: StoredSnapshot,
    /// The skills, in order; called twice (the sources and count go first).
    pub skills: F,
    pub diagnostics: &'a [Diagnostic],
    pub reports: &'a [RootReport],
}

/// Writes `contents` as the file's lines. A path that is not UTF-8 cannot
/// be written as JSON: an error, so that there is no entry.
pub(super) fn write<'a, F, I>(out: &mut impl Write, contents: Contents<'a, F>) -> io::Result<()>
where
    F: Fn() -> I,
    I: Iterator<Item = &'a SkillSummary>,
{
    let mut sources: Vec<&'a SkillSource> = Vec::new();
    let mut count = 0;
    for skill in (contents.skills)() {
        count += 1;
        if !sources.iter().any(|s| **s == *skill.source) {
            sources.push(&skill.source);
        }
    }
    let header = HeaderRef {
        format: FORMAT,
        key: contents.key,
        sources: sources.clone(),
        reports: contents.reports,
        diagnostics: contents.diagnostics.len(),
        skills: count,
    };
    line(out, &header)?;
    for diagnostic in contents.diagnostics {
        line(out, diagnostic)?;
    }
    let mut snapshot = contents.snapshot;
    let bulk = snapshot.take_bulk();
    let head = SnapshotHead {
        snapshot,
        bulk: bulk
            .iter()
            .map(|(words, paths)| (words.len(), paths.len()))
            .collect(),
    };
    line(out, &head)?;
    for (words, paths) in &bulk {
        write_bulk(out, words, paths)?;
    }
    for skill in (contents.skills)() {
        let source = sources
            .iter()
            .position(|s| **s == *skill.source)
            .unwrap_or_default();
        let stored = SkillRef {
            source,
            layout: skill.layout,
            location: &skill.location,
            directory: skill.directory_override.as_deref(),
            body_offset: skill.body_offset,
            manifest: &skill.manifest,
        };
        line(out, &stored)?;
    }
    Ok(())
}

/// One root's bulk, in the pieces [`read_bulk`] reads.
fn write_bulk(out: &mut impl Write, words: &[u64], paths: &str) -> io::Result<()> {
    for piece in words.chunks(PIECE_WORDS) {
        line(out, &piece)?;
    }
    for piece in pieces(paths, PIECE_BYTES) {
        line(out, &piece)?;
    }
    Ok(())
}

fn line(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

/// Reads a file written by [`write`] for `key`. `None` when it is another
/// format or key (known from its first line, before the rest is read),
/// malformed, cut short or longer than its header says.
pub(super) fn read(mut input: impl BufRead, key: &str) -> Option<Stored> {
    let mut buffer = Vec::with_capacity(4096);
    let header: Header = next_line(&mut input, &mut buffer)?;
    if header.format != FORMAT || header.key != key {
        return None;
    }
    // A count from the file reserves a bounded amount at most (here and in
    // `read_bulk`); one beyond what follows ends in a short read.
    let mut diagnostics = Vec::with_capacity(header.diagnostics.min(1 << 12));
    for _ in 0..header.diagnostics {
        diagnostics.push(next_line(&mut input, &mut buffer)?);
    }
    let SnapshotHead { mut snapshot, bulk } = next_line(&mut input, &mut buffer)?;
    let bulk = bulk
        .into_iter()
        .map(|(words, bytes)| read_bulk(&mut input, &mut buffer, words, bytes))
        .collect::<Option<Vec<_>>>()?;
    snapshot.put_bulk(bulk)?;
    let mut skills = Vec::with_capacity(header.skills.min(1 << 16));
    for _ in 0..header.skills {
        let stored: StoredSkill = next_line(&mut input, &mut buffer)?;
        skills.push(shared(stored, &header.sources)?);
    }
    if !input.fill_buf().ok()?.is_empty() {
        return None;
    }
    Some(Stored {
        snapshot,
        skills,
        diagnostics,
        reports: header.reports,
    })
}

/// One root's bulk: pieces of numbers until there are `words`, then pieces
/// of paths until there are `bytes`.
fn read_bulk(
    input: &mut impl BufRead,
    buffer: &mut Vec<u8>,
    words: usize,
    bytes: usize,
) -> Option<StoredBulk> {
    let mut numbers: Vec<u64> = Vec::with_capacity(words.min(1 << 20));
    while numbers.len() < words {
        let piece: Vec<u64> = next_line(input, buffer)?;
        if piece.is_empty() {
            return None;
        }
        numbers.extend(piece);
    }
    let mut paths = String::with_capacity(bytes.min(1 << 24));
    while paths.len() < bytes {
        let piece: String = next_line(input, buffer)?;
        if piece.is_empty() {
            return None;
        }
        paths.push_str(&piece);
    }
    (numbers.len() == words && paths.len() == bytes).then_some((numbers, paths))
}

/// `text` in pieces of at most `max` bytes (at least one character each),
/// cut between characters.
fn pieces(text: &str, max: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = max.min(rest.len());
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        if end == 0 {
            end = rest.chars().next().map_or(rest.len(), char::len_utf8);
        }
        let (piece, after) = rest.split_at(end);
        rest = after;
        Some(piece)
    })
}

/// The next line, which must end in a newline, parsed from a slice (its
/// UTF-8 checked once, in one pass, instead of string by string as
/// `serde_json::from_slice` does).
fn next_line<T: DeserializeOwned>(input: &mut impl BufRead, buffer: &mut Vec<u8>) -> Option<T> {
    buffer.clear();
    io::Read::take(&mut *input, MAX_LINE as u64 + 1)
        .read_until(b'\n', buffer)
        .ok()?;
    if buffer.pop() != Some(b'\n') {
        return None;
    }
    serde_json::from_str(std::str::from_utf8(buffer).ok()?).ok()
}

/// The shared summary of a stored skill, with the one copy of its source.
fn shared(stored: StoredSkill, sources: &[Arc<SkillSource>]) -> Option<Arc<SkillSummary>> {
    let source = sources.get(stored.source)?;
    Some(Arc::new(SkillSummary {
        manifest: stored.manifest,
        source: Arc::clone(source),
        layout: stored.layout,
        directory_override: stored.directory.and_then(|directory| {
            bcode_skill_models::directory_override(&stored.location, directory)
        }),
        location: stored.location.into(),
        body_offset: stored.body_offset,
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn pieces_are_cut_between_characters_and_join_up_again() {
        let text = "aé€😀".repeat(50);
        for max in [1, 2, 3, 5, 64, 10_000] {
            let cut: Vec<&str> = pieces(&text, max).collect();
            assert_eq!(cut.concat(), text, "max {max}");
            for piece in &cut {
                // A character longer than `max` is a piece of its own.
                assert!(
                    piece.len() <= max || piece.chars().count() == 1,
                    "max {max}: {piece:?}"
                );
            }
        }
        assert_eq!(pieces("", 8).count(), 0);
    }

    #[test]
    fn a_bulk_of_many_pieces_reads_back_whole() {
        let words: Vec<u64> = (0..PIECE_WORDS as u64 * 2 + 7).map(|n| n * 7919).collect();
        let paths = "skill-é/SKILL.md".repeat(PIECE_BYTES / 8);
        let mut file = Vec::new();
        write_bulk(&mut file, &words, &paths).unwrap();
        let lines = file.iter().filter(|b| **b == b'\n').count();
        assert!(
            lines >= 5,
            "{lines} lines: the bulk was not cut into pieces"
        );
        let mut input = io::Cursor::new(&file);
        let (read_words, read_paths) =
            read_bulk(&mut input, &mut Vec::new(), words.len(), paths.len()).unwrap();
        assert_eq!(read_words, words);
        assert_eq!(read_paths, paths);
        // A size the pieces do not add up to is not taken.
        let mut input = io::Cursor::new(&file);
        assert!(read_bulk(&mut input, &mut Vec::new(), words.len() - 1, paths.len()).is_none());
    }
}
