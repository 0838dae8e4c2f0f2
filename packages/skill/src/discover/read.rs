//! Reading instruction files for discovery: just enough to hold the front
//! matter, through `bcode-fs` (non-blocking, `fstat`-checked, bounded), so a
//! FIFO or device can never hang discovery and bodies wait until used; and
//! reading a body later, through its root's confinement.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use bcode_fs::Confinement;
use bcode_skill_models::{SkillSource, SkillSummary, SourceKind};

use crate::discover::sources::SourceRoot;
use crate::parse::front_matter::{self, Split};

/// How much of a file discovery reads first: enough for almost any front
/// matter (a few hundred bytes), so bodies are not read until a skill is
/// used. The read grows while the block is still open.
const PREFIX_BYTES: usize = 2 * 1024;

pub use bcode_fs::ReadError;
use bcode_fs::{DirHandle, open_regular, read_rest};

pub use bcode_fs::read_head;

/// Enough of the file to hold its whole front matter, into `buf` (cleared
/// first; a loader reuses one buffer for all its files, where a fresh 2 KiB
/// allocation per file made the allocator consolidate its free lists each
/// time): a prefix, extended to the whole file (at most `max` bytes) when
/// the block does not close inside the prefix. `root`, when given, is an
/// open folder `path` may lie below, to look it up from. Returns the split
/// of `buf` when deciding how much to read needed one.
pub fn read_front(
    root: Option<&DirHandle>,
    path: &Path,
    max: usize,
    buf: &mut Vec<u8>,
) -> Result<Option<Split>, ReadError> {
    let mut file = open_bounded(root, path, max, buf)?.0;
    let mut want = PREFIX_BYTES.min(max);
    loop {
        let before = buf.len();
        (&mut file)
            .take((want - before) as u64)
            .read_to_end(buf)
            .map_err(ReadError::Io)?;
        if buf.len() < want {
            // The whole file: the parser splits it.
            return Ok(None);
        }
        // The file goes on past what was read: only whole lines count, or a
        // line cut at the end (`---x: 1` cut after its `---`) would read as
        // a delimiter.
        let whole = buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if whole > 0 {
            let split = front_matter::split(&buf[..whole]);
            if !matches!(split, Split::Unterminated { .. }) {
                return Ok(Some(split));
            }
        }
        if want >= max {
            // Still open at the size limit: one more byte tells whether the
            // file grew past the limit since it was measured.
            return read_rest(&mut file, buf, max).map(|()| None);
        }
        want = (want * 4).min(max);
    }
}

/// The whole file, at most `max` bytes, into `buf` (cleared first), opened
/// as [`read_front`] opens it: what a recording discovery reads, as it
/// keeps the digest of every byte.
pub fn read_whole(
    root: Option<&DirHandle>,
    path: &Path,
    max: usize,
    buf: &mut Vec<u8>,
) -> Result<(), ReadError> {
    let (mut file, len) = open_bounded(root, path, max, buf)?;
    buf.reserve(usize::try_from(len).unwrap_or(0));
    read_rest(&mut file, buf, max)
}

/// `path` opened as [`read_front`] and [`read_whole`] open it (below
/// `root` when given, a regular file only), with its length, refused when
/// longer than `max`; `buf` emptied for what is read.
fn open_bounded(
    root: Option<&DirHandle>,
    path: &Path,
    max: usize,
    buf: &mut Vec<u8>,
) -> Result<(std::fs::File, u64), ReadError> {
    buf.clear();
    let (file, len) = match root {
        Some(root) => root.open_regular(path)?,
        None => open_regular(path)?,
    };
    if len > max as u64 {
        return Err(ReadError::TooLarge { len, max });
    }
    Ok((file, len))
}

/// Where the files of `root` may resolve: inside its repository for a
/// repository's root, anywhere but `/proc`, `/sys` and `/dev` otherwise.
pub(crate) fn confinement_of(root: &SourceRoot) -> Confinement {
    match &root.repository {
        Some(repo) => Confinement::within(repo),
        None => Confinement::anywhere_but_system(),
    }
}

/// The confinement of each root a build searched, by the source its skills
/// carry (kind, ordinal and label, as the disk cache matches them): the one
/// the walk applied, so a body is read under the same rule as its entry was
/// found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RootConfinements(Arc<Vec<(SourceKind, usize, String, Confinement)>>);

impl RootConfinements {
    /// The confinements of `roots` (each repository canonicalised once).
    pub(crate) fn of(roots: &[SourceRoot]) -> Self {
        let mut within: Vec<(&std::path::Path, Confinement)> = Vec::new();
        let entries = roots
            .iter()
            .map(|root| {
                let confinement = match &root.repository {
                    Some(repo) => match within.iter().find(|(r, _)| r == repo) {
                        Some((_, confinement)) => confinement.clone(),
                        None => {
                            let confinement = confinement_of(root);
                            within.push((repo, confinement.clone()));
                            confinement
                        }
                    },
                    None => confinement_of(root),
                };
                let source = &root.source;
                (
                    source.kind,
                    source.ordinal,
                    source.label.clone(),
                    confinement,
                )
            })
            .collect();
        RootConfinements(Arc::new(entries))
    }

    /// The confinement of the root at `index` of the roots it was made of.
    pub(crate) fn at(&self, index: usize) -> Option<Confinement> {
        self.0
            .get(index)
            .map(|(.., confinement)| confinement.clone())
    }

    /// Where the files of `source`'s skills may resolve. A source of no root
    /// searched (none a build produces) stays inside its own root: the
    /// strictest reading.
    pub(crate) fn of_source(&self, source: &SkillSource) -> Confinement {
        let found = self.0.iter().find(|(kind, ordinal, label, _)| {
            *kind == source.kind && *ordinal == source.ordinal && *label == source.label
        });
        match (found, &source.root) {
            (Some((.., confinement)), _) => confinement.clone(),
            (None, Some(root)) => Confinement::within(root),
            (None, None) => Confinement::anywhere_but_system(),
        }
    }

    /// `skill`'s whole instruction file, at most `max` bytes, read through
    /// its root's confinement: a link swapped in since the walk checked the
    /// entry is refused (`ReadError::escape`) if it leads where the walk
    /// would have refused it.
    pub(crate) fn read_body(&self, skill: &SkillSummary, max: usize) -> Result<Vec<u8>, ReadError> {
        self.of_source(&skill.source)
            .read_bounded(&skill.location, max)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// What discovery decides about a file's front matter from its prefix.
    fn split_as_discovery_reads(path: &Path) -> Split {
        let mut buf = Vec::new();
        let split = read_front(None, path, 1 << 20, &mut buf).unwrap();
        split.unwrap_or_else(|| front_matter::split(&buf))
    }

    #[test]
    fn a_line_cut_at_the_end_of_the_prefix_is_not_a_delimiter() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        // A line starting with `---` placed across (and right after) the end
        // of the first read and of the grown one.
        for boundary in [PREFIX_BYTES, PREFIX_BYTES * 4] {
            for start in boundary - 6..=boundary + 1 {
                let mut text = String::from("---\ndescription: d\n");
                while text.len() < start {
                    let room = start - text.len();
                    text.push_str(&format!("{}\n", "k".repeat(room.clamp(1, 60) - 1)));
                }
                text.truncate(start);
                if !text.ends_with('\n') {
                    text.pop();
                    text.push('\n');
                }
                text.push_str("---x: 1\ny: 2\n---\nbody\n");
                std::fs::write(&path, &text).unwrap();
                assert_eq!(
                    split_as_discovery_reads(&path),
                    front_matter::split(text.as_bytes()),
                    "line at {} (boundary {boundary})",
                    text.find("---x").unwrap()
                );
            }
        }
    }

    #[test]
    fn short_empty_and_unterminated_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("SKILL.md");
        for text in ["", "---\n", "---\ndescription: d\n---", "no front matter"] {
            std::fs::write(&path, text).unwrap();
            assert_eq!(
                split_as_discovery_reads(&path),
                front_matter::split(text.as_bytes()),
                "{text:?}"
            );
        }
        let long = format!("---\n{}", "k: v\n".repeat(3000));
        std::fs::write(&path, &long).unwrap();
        assert!(matches!(
            split_as_discovery_reads(&path),
            Split::Unterminated { .. }
        ));
    }
}
