//! The routing cache's file format: binary, little-endian, laid out so a
//! query reads only its own terms' postings.
//!
//! 1. A fixed header: magic, format, the file's length, counts, the sum of
//!    every field's length, where each section lies, and a checksum of the
//!    header, key, documents and block index together.
//! 2. The postings, term after term: per posting the document number's
//!    distance from the previous one, a mask of the fields holding the
//!    term and each such field's count, all as LEB128 numbers. First, so a
//!    writer streams them out before it knows where the rest goes.
//! 3. The key (what the index depends on; compared whole).
//! 4. The documents, one record each: id, field lengths, whether its
//!    stamps vouched for it when written, a hash of its instruction file's
//!    path, the folders its file list came from, and a digest of the
//!    stamps of that file and those folders.
//! 5. The block index: for each block of [`BLOCK_TERMS`] terms of the
//!    sorted dictionary, its first term, where it lies and its checksum.
//! 6. The dictionary blocks: per term, its postings' count, offset, length
//!    and checksum.
//!
//! A query reads the header, sections 3 to 5 in one read (a few MB at
//! 60,000 skills), then one block and one postings run per term. Every count is
//! checked against the bytes that hold it before anything is reserved,
//! every offset against the file's length, every run against its
//! checksum: a cut, corrupt or hostile file is refused, never trusted.

use std::io;

use bcode_skill_models::SkillId;

use crate::search::document::FIELDS;

/// The file's first bytes.
pub(super) const MAGIC: [u8; 8] = *b"BCROUTE\0";

/// Bumped whenever what is written changes meaning (the crate version in
/// the key covers changes to analysis and ranking).
pub(super) const FORMAT: u32 = 1;

/// Terms per dictionary block: a query term costs one read of one block.
pub(super) const BLOCK_TERMS: usize = 64;

/// The header's length in bytes.
pub(super) const HEADER_BYTES: usize = 8 + 4 + 4 + 8 + 4 * 3 + 8 * FIELDS + 8 * 10 + 16;

/// A term longer than this is not stored (the analyzer's words are far
/// shorter; see `MAX_WORD_BYTES`).
const MAX_TERM_BYTES: usize = 1024;

/// Folders one document records at most; a skill whose listing visited
/// more is stored but never trusted.
pub(super) const MAX_FOLDERS: usize = 32;

/// One document as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct DocRecord {
    pub id: SkillId,
    pub lens: [u32; FIELDS],
    pub stamps: DocStamps,
}

/// What vouches for one document's entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DocStamps {
    /// No stamp was racy when it was taken, and none failed.
    pub trusted: bool,
    /// A hash of the instruction file's path.
    pub location: u64,
    /// The folders the file list came from, relative to the skill's folder.
    pub folders: Vec<String>,
    /// A digest of the instruction file's stamp and the folders' stamps.
    pub digest: [u8; 16],
}

/// The header, as read.
#[derive(Clone, Debug, Default)]
pub(super) struct Header {
    pub file_len: u64,
    pub docs: u32,
    pub terms: u32,
    pub blocks: u32,
    pub len_sums: [u64; FIELDS],
    pub key: (u64, u64),
    pub docs_at: (u64, u64),
    pub block_index: (u64, u64),
    pub dictionary: (u64, u64),
    pub postings: (u64, u64),
    pub checksum: [u8; 16],
}

/// One entry of the block index.
#[derive(Clone, Debug)]
pub(super) struct BlockEntry {
    pub first: Box<str>,
    /// Offset in the dictionary section, and length.
    pub at: u64,
    pub len: u32,
    pub checksum: [u8; 8],
}

/// One term of a dictionary block.
#[derive(Clone, Debug)]
pub(super) struct TermEntry {
    pub term: Box<str>,
    pub count: u32,
    /// Offset in the postings section, and length.
    pub at: u64,
    pub len: u32,
    pub checksum: [u8; 8],
}

/// Why a file was refused.
pub(super) fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

pub(super) fn checksum8(bytes: &[u8]) -> [u8; 8] {
    let hash = blake3::hash(bytes);
    let mut out = [0u8; 8];
    out.copy_from_slice(&hash.as_bytes()[..8]);
    out
}

pub(super) fn checksum16(parts: &[&[u8]]) -> [u8; 16] {
    let mut hasher = blake3::Hasher::new();
    for part in parts {
        hasher.update(part);
    }
    let mut out = [0u8; 16];
    out.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    out
}

/// Appends a LEB128 number.
pub(super) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn put_str(out: &mut Vec<u8>, text: &str) {
    put_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

/// A cursor over bytes read from the file: every read is checked.
pub(super) struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, at: 0 }
    }

    pub fn is_done(&self) -> bool {
        self.at == self.bytes.len()
    }

    /// How many bytes were read so far.
    pub fn position(&self) -> usize {
        self.at
    }

    /// The bytes read since `start` (a [`Cursor::position`]).
    pub fn since(&self, start: usize) -> &'a [u8] {
        self.bytes.get(start..self.at).unwrap_or(&[])
    }

    pub fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| bad("cut short"))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    pub fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn u32(&mut self) -> io::Result<u32> {
        let mut raw = [0u8; 4];
        raw.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(raw))
    }

    pub fn u64(&mut self) -> io::Result<u64> {
        let mut raw = [0u8; 8];
        raw.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(raw))
    }

    pub fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut raw = [0u8; N];
        raw.copy_from_slice(self.take(N)?);
        Ok(raw)
    }

    pub fn varint(&mut self) -> io::Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            let part = u64::from(byte & 0x7f);
            if shift == 63 && part > 1 {
                return Err(bad("a number overflows"));
            }
            value |= part << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(bad("a number overflows"))
    }

    pub fn varint_u32(&mut self) -> io::Result<u32> {
        u32::try_from(self.varint()?).map_err(|_| bad("a number out of range"))
    }

    pub fn str(&mut self, max: usize) -> io::Result<&'a str> {
        let len = self.varint()?;
        if len > max as u64 {
            return Err(bad("a string too long"));
        }
        std::str::from_utf8(self.take(len as usize)?).map_err(|_| bad("a string not UTF-8"))
    }
}

pub(super) fn write_header(header: &Header) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&header.file_len.to_le_bytes());
    for count in [header.docs, header.terms, header.blocks] {
        out.extend_from_slice(&count.to_le_bytes());
    }
    for sum in header.len_sums {
        out.extend_from_slice(&sum.to_le_bytes());
    }
    for (at, len) in [
        header.key,
        header.docs_at,
        header.block_index,
        header.dictionary,
        header.postings,
    ] {
        out.extend_from_slice(&at.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
    }
    out.extend_from_slice(&header.checksum);
    out
}

/// The header, or why not: another magic or format is refused here,
/// before anything else is read.
pub(super) fn read_header(bytes: &[u8]) -> io::Result<Header> {
    let mut cursor = Cursor::new(bytes);
    if cursor.array::<8>()? != MAGIC {
        return Err(bad("not a routing cache file"));
    }
    let format = cursor.u32()?;
    if format != FORMAT {
        return Err(bad(&format!(
            "format {format}, this version reads {FORMAT}"
        )));
    }
    cursor.u32()?;
    let mut header = Header {
        file_len: cursor.u64()?,
        docs: cursor.u32()?,
        terms: cursor.u32()?,
        blocks: cursor.u32()?,
        ..Header::default()
    };
    for sum in &mut header.len_sums {
        *sum = cursor.u64()?;
    }
    for section in [
        &mut header.key,
        &mut header.docs_at,
        &mut header.block_index,
        &mut header.dictionary,
        &mut header.postings,
    ] {
        *section = (cursor.u64()?, cursor.u64()?);
    }
    header.checksum = cursor.array()?;
    // Sections follow one another from the header to the end of the file.
    let mut expected = HEADER_BYTES as u64;
    for (at, len) in [
        header.postings,
        header.key,
        header.docs_at,
        header.block_index,
        header.dictionary,
    ] {
        if at != expected {
            return Err(bad("sections out of place"));
        }
        expected = at
            .checked_add(len)
            .ok_or_else(|| bad("a section too long"))?;
    }
    if expected != header.file_len {
        return Err(bad("sections do not fill the file"));
    }
    if u64::from(header.blocks) != (u64::from(header.terms)).div_ceil(BLOCK_TERMS as u64) {
        return Err(bad("block count does not match the terms"));
    }
    Ok(header)
}

pub(super) fn write_doc(out: &mut Vec<u8>, doc: &DocRecord) {
    put_str(out, doc.id.as_str());
    for len in doc.lens {
        put_varint(out, u64::from(len));
    }
    out.push(u8::from(doc.stamps.trusted));
    out.extend_from_slice(&doc.stamps.location.to_le_bytes());
    put_varint(out, doc.stamps.folders.len() as u64);
    for folder in &doc.stamps.folders {
        put_str(out, folder);
    }
    out.extend_from_slice(&doc.stamps.digest);
}

/// One stored document, borrowed from the documents section as read:
/// a query's index needs the ids and lengths of only the documents its
/// terms name, so records are not copied out whole.
#[derive(Clone, Copy, Debug)]
pub(super) struct DocView<'a> {
    pub id: &'a str,
    pub lens: [u32; FIELDS],
    pub trusted: bool,
    pub location: u64,
    /// The folders' strings as stored, `folder_count` of them.
    folders: &'a [u8],
    folder_count: usize,
    pub digest: [u8; 16],
}

impl<'a> DocView<'a> {
    /// The folders its file list came from (checked when read).
    pub fn folders(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        let mut cursor = Cursor::new(self.folders);
        (0..self.folder_count).map_while(move |_| cursor.str(MAX_FOLDER_BYTES).ok())
    }

    /// Its stamps, owned.
    pub fn stamps(&self) -> DocStamps {
        DocStamps {
            trusted: self.trusted,
            location: self.location,
            folders: self.folders().map(str::to_owned).collect(),
            digest: self.digest,
        }
    }
}

/// A folder's name longer than this is refused.
const MAX_FOLDER_BYTES: usize = 4096;

pub(super) fn read_doc<'a>(cursor: &mut Cursor<'a>) -> io::Result<DocView<'a>> {
    read_doc_with(cursor, true)
}

/// [`read_doc`] of a record [`read_doc`] has already checked (the same
/// bytes, held in memory): its id is not checked again (at 60,000 skills a
/// warm search reads each record three times more, and the id check was
/// half of a read).
pub(super) fn read_checked_doc<'a>(cursor: &mut Cursor<'a>) -> io::Result<DocView<'a>> {
    read_doc_with(cursor, false)
}

fn read_doc_with<'a>(cursor: &mut Cursor<'a>, check_id: bool) -> io::Result<DocView<'a>> {
    let id = cursor.str(MAX_TERM_BYTES)?;
    if check_id {
        SkillId::check(id).map_err(|_| bad("a bad skill id"))?;
    }
    let mut lens = [0u32; FIELDS];
    for len in &mut lens {
        *len = cursor.varint_u32()?;
    }
    let trusted = match cursor.u8()? {
        0 => false,
        1 => true,
        _ => return Err(bad("a bad flag")),
    };
    let location = cursor.u64()?;
    let folder_count = cursor.varint()?;
    if folder_count > MAX_FOLDERS as u64 {
        return Err(bad("too many folders"));
    }
    let start = cursor.position();
    for _ in 0..folder_count {
        cursor.str(MAX_FOLDER_BYTES)?;
    }
    let folders = cursor.since(start);
    Ok(DocView {
        id,
        lens,
        trusted,
        location,
        folders,
        folder_count: folder_count as usize,
        digest: cursor.array()?,
    })
}

pub(super) fn write_block_entry(out: &mut Vec<u8>, entry: &BlockEntry) {
    put_str(out, &entry.first);
    out.extend_from_slice(&entry.at.to_le_bytes());
    out.extend_from_slice(&entry.len.to_le_bytes());
    out.extend_from_slice(&entry.checksum);
}

pub(super) fn read_block_entry(cursor: &mut Cursor<'_>) -> io::Result<BlockEntry> {
    Ok(BlockEntry {
        first: cursor.str(MAX_TERM_BYTES)?.into(),
        at: cursor.u64()?,
        len: cursor.u32()?,
        checksum: cursor.array()?,
    })
}

pub(super) fn write_term_entry(out: &mut Vec<u8>, entry: &TermEntry) {
    put_str(out, &entry.term);
    out.extend_from_slice(&entry.count.to_le_bytes());
    out.extend_from_slice(&entry.at.to_le_bytes());
    out.extend_from_slice(&entry.len.to_le_bytes());
    out.extend_from_slice(&entry.checksum);
}

pub(super) fn read_term_entry(cursor: &mut Cursor<'_>) -> io::Result<TermEntry> {
    Ok(TermEntry {
        term: cursor.str(MAX_TERM_BYTES)?.into(),
        count: cursor.u32()?,
        at: cursor.u64()?,
        len: cursor.u32()?,
        checksum: cursor.array()?,
    })
}

/// Appends one term's postings (document numbers increasing).
pub(super) fn write_postings(out: &mut Vec<u8>, postings: &[(u32, [u32; FIELDS])]) {
    let mut last: Option<u32> = None;
    for (doc, tf) in postings {
        let gap = match last {
            Some(last) => doc - last,
            None => *doc,
        };
        last = Some(*doc);
        put_varint(out, u64::from(gap));
        let mut mask = 0u8;
        for (field, count) in tf.iter().enumerate() {
            if *count > 0 {
                mask |= 1 << field;
            }
        }
        out.push(mask);
        for count in tf.iter().filter(|count| **count > 0) {
            put_varint(out, u64::from(*count));
        }
    }
}

/// One term's postings: exactly `count` of them in `bytes`, each document
/// below `docs` and after the one before, each with at least one field.
pub(super) fn read_postings(
    bytes: &[u8],
    count: u32,
    docs: u32,
) -> io::Result<Vec<(u32, [u32; FIELDS])>> {
    let mut cursor = Cursor::new(bytes);
    // Each posting takes at least two bytes: a count beyond that is a lie.
    if u64::from(count) > bytes.len() as u64 / 2 {
        return Err(bad("more postings than bytes"));
    }
    let mut out = Vec::with_capacity(count as usize);
    let mut last: Option<u32> = None;
    for _ in 0..count {
        let gap = cursor.varint_u32()?;
        let doc = match last {
            None => gap,
            Some(_) if gap == 0 => return Err(bad("postings out of order")),
            Some(last) => last
                .checked_add(gap)
                .ok_or_else(|| bad("a document out of range"))?,
        };
        if doc >= docs {
            return Err(bad("a document out of range"));
        }
        last = Some(doc);
        let mask = cursor.u8()?;
        if mask == 0 || mask >= 1 << FIELDS {
            return Err(bad("a bad field mask"));
        }
        let mut tf = [0u32; FIELDS];
        for (field, slot) in tf.iter_mut().enumerate() {
            if mask & (1 << field) != 0 {
                *slot = cursor.varint_u32()?;
                if *slot == 0 {
                    return Err(bad("a zero count"));
                }
            }
        }
        out.push((doc, tf));
    }
    if !cursor.is_done() {
        return Err(bad("postings run long"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn numbers_read_back_and_overlong_ones_are_refused() {
        let mut out = Vec::new();
        for value in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            out.clear();
            put_varint(&mut out, value);
            assert_eq!(Cursor::new(&out).varint().unwrap(), value);
        }
        assert!(Cursor::new(&[0xff; 11]).varint().is_err());
        assert!(Cursor::new(&[0x80]).varint().is_err());
    }

    #[test]
    fn postings_read_back_and_lies_are_refused() {
        let postings = vec![
            (0, [1, 0, 0, 0, 3]),
            (7, [0, 0, 0, 0, 300]),
            (9, [0, 2, 0, 1, 0]),
        ];
        let mut out = Vec::new();
        write_postings(&mut out, &postings);
        assert_eq!(read_postings(&out, 3, 10).unwrap(), postings);
        // A document past the end, a count the bytes cannot hold, one
        // posting too few.
        assert!(read_postings(&out, 3, 9).is_err());
        assert!(read_postings(&out, u32::MAX, 10).is_err());
        assert!(read_postings(&out, 2, 10).is_err());
        // Out of order (a zero gap after the first).
        let mut twice = Vec::new();
        write_postings(&mut twice, &[(1, [1, 0, 0, 0, 0])]);
        twice.extend_from_slice(&[0, 1, 1]);
        assert!(read_postings(&twice, 2, 10).is_err());
    }
}
