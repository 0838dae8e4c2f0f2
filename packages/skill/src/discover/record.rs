//! What a recording discovery ([`crate::Discovery::recording_instructions`])
//! keeps of each instruction file it read, for a host that would otherwise
//! read the file again (the MCP server's entries: the front matter as
//! written, the `sha256:` digest): the stamp the walk took before the read,
//! the digest of the bytes read, and the front-matter fields as compact JSON
//! text (text, not a parsed tree: tens of thousands are held at once).
//!
//! A file is recorded only when its stamp vouched when the build began
//! (`bcode_fs::vouches`) and the read returned as many bytes as the stamp
//! says: a later stamp equal to the recorded one then means the same bytes.

use std::sync::Arc;

use bcode_fs::FileStamp;
use bcode_skill_models::SkillSummary;
use sha2::{Digest, Sha256};

/// One instruction file as a recording discovery read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstructionRecord {
    stamp: FileStamp,
    digest: [u8; 32],
    fields: Box<str>,
}

impl InstructionRecord {
    /// The record of `bytes`, read after `stamp` was taken, whose front
    /// matter's fields are `fields` (a JSON object's text).
    pub(crate) fn new(stamp: FileStamp, bytes: &[u8], fields: Box<str>) -> Self {
        InstructionRecord {
            stamp,
            digest: Sha256::digest(bytes).into(),
            fields,
        }
    }

    /// The file's stamp, taken before it was read (its `len` is the
    /// number of bytes read).
    pub fn stamp(&self) -> &FileStamp {
        &self.stamp
    }

    /// The digest of the bytes read, as SEP-2640 writes it:
    /// `sha256:<64 lowercase hex digits>`.
    pub fn digest(&self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = String::with_capacity(7 + 64);
        text.push_str("sha256:");
        for byte in self.digest {
            text.push(char::from(HEX[usize::from(byte >> 4)]));
            text.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
        text
    }

    /// The front matter's fields as written (what
    /// [`crate::parse_document`] gives as `fields`), as compact JSON
    /// object text.
    pub fn fields(&self) -> &str {
        &self.fields
    }
}

/// The records of one build, each with the summary made from the same
/// read: only skills of the registry the build returned (a skill another
/// root's shadowed, or one disabled, is left out), sorted by id.
#[derive(Clone, Debug, Default)]
pub struct InstructionRecords(Vec<(Arc<SkillSummary>, InstructionRecord)>);

impl InstructionRecords {
    /// The records of `found` whose summary is the very one `keep` says
    /// the registry holds, sorted by id.
    pub(crate) fn new(
        mut found: Vec<(Arc<SkillSummary>, InstructionRecord)>,
        keep: impl Fn(&Arc<SkillSummary>) -> bool,
    ) -> Self {
        found.retain(|(summary, _)| keep(summary));
        found.sort_by(|a, b| a.0.manifest.id.cmp(&b.0.manifest.id));
        found.shrink_to_fit();
        InstructionRecords(found)
    }

    /// How many files are recorded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl IntoIterator for InstructionRecords {
    type Item = (Arc<SkillSummary>, InstructionRecord);
    type IntoIter = std::vec::IntoIter<(Arc<SkillSummary>, InstructionRecord)>;

    /// Each record with its summary (compare summaries with `Arc::ptr_eq`:
    /// a record belongs to the very summary its read made), by id.
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_written_as_sep_2640_writes_it() {
        let stamp = FileStamp {
            len: 3,
            modified: (0, 0),
            changed: (0, 0),
            dev: 0,
            ino: 0,
        };
        let record = InstructionRecord::new(stamp, b"abc", "{}".into());
        assert_eq!(
            record.digest(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
