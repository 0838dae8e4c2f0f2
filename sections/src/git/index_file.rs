//! The index file read as bytes (format versions 2 to 4): each entry's
//! stat data, id, flags, path and where it starts, so its stat fields can be
//! patched in a private copy (see `racy.rs`). Anything this reader does not
//! know (a split index, a short or trailing byte) gives `None`, and the
//! callers leave the index to libgit2 alone.

use std::ops::Range;

use git2::Oid;

/// Where an entry's modification seconds start, from the entry's start.
pub(super) const MTIME_AT: usize = 8;
/// Where an entry's file size starts, from the entry's start.
pub(super) const SIZE_AT: usize = 36;
/// A gitlink's mode: an index entry naming a commit of another repository.
pub(super) const GITLINK: u32 = 0o160_000;
/// The trailing checksum's length (SHA-1).
pub(super) const CHECKSUM_BYTES: usize = 20;

/// One entry of the index.
pub(super) struct RawEntry {
    /// Where the entry starts in the file.
    pub(super) at: usize,
    pub(super) ctime: (u32, u32),
    pub(super) mtime: (u32, u32),
    pub(super) ino: u32,
    pub(super) mode: u32,
    pub(super) uid: u32,
    pub(super) gid: u32,
    pub(super) size: u32,
    pub(super) oid: Oid,
    pub(super) flags: u16,
    pub(super) extended: u16,
    path: Range<usize>,
}

/// A parsed index: its bytes, entries and paths.
pub(super) struct IndexFile {
    pub(super) bytes: Vec<u8>,
    pub(super) entries: Vec<RawEntry>,
    paths: Vec<u8>,
    /// The root of the cache-tree extension (`TREE`), when it is valid:
    /// how many entries it covers and the tree they are written as.
    pub(super) cached_root: Option<(usize, Oid)>,
}

impl IndexFile {
    /// The path of `entry`, as bytes.
    pub(super) fn path(&self, entry: &RawEntry) -> &[u8] {
        self.paths.get(entry.path.clone()).unwrap_or_default()
    }
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    let b = bytes.get(at..at + 2)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}

/// Parses `bytes` as an index file; `None` for anything unusual.
pub(super) fn parse(bytes: Vec<u8>) -> Option<IndexFile> {
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(&bytes, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(&bytes, 8)? as usize;
    let end = bytes.len().checked_sub(CHECKSUM_BYTES)?;
    // Each entry takes at least 62 bytes, so a lying count stops here.
    if count > end / 62 {
        return None;
    }
    let mut entries = Vec::with_capacity(count);
    let mut paths: Vec<u8> = Vec::new();
    let mut previous: Range<usize> = 0..0;
    let mut at = 12;
    for _ in 0..count {
        let field = |n: usize| be32(&bytes, at + 4 * n);
        let flags = be16(&bytes, at + 60)?;
        let (extended, head) = if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            (be16(&bytes, at + 62)?, 64)
        } else {
            (0, 62)
        };
        let oid = Oid::from_bytes(bytes.get(at + 40..at + 60)?).ok()?;
        let start = at + head;
        let next;
        let path;
        if version < 4 {
            let nul = start + bytes.get(start..end)?.iter().position(|&b| b == 0)?;
            let name = bytes.get(start..nul)?;
            path = paths.len()..paths.len() + name.len();
            paths.extend_from_slice(name);
            // Padded with NULs to a multiple of eight bytes.
            next = at + ((head + name.len() + 8) & !7);
        } else {
            // How many bytes of the previous path to drop, as git encodes
            // it, then the rest of this path.
            let mut pos = start;
            let mut byte = *bytes.get(pos)?;
            pos += 1;
            let mut strip = u64::from(byte & 0x7f);
            while byte & 0x80 != 0 {
                byte = *bytes.get(pos)?;
                pos += 1;
                strip = strip
                    .checked_add(1)?
                    .checked_mul(128)?
                    .checked_add(u64::from(byte & 0x7f))?;
            }
            let keep = previous.len().checked_sub(usize::try_from(strip).ok()?)?;
            let nul = pos + bytes.get(pos..end)?.iter().position(|&b| b == 0)?;
            let suffix = bytes.get(pos..nul)?;
            let begin = paths.len();
            paths.extend_from_within(previous.start..previous.start + keep);
            paths.extend_from_slice(suffix);
            path = begin..paths.len();
            next = nul + 1;
        }
        previous = path.clone();
        entries.push(RawEntry {
            at,
            ctime: (field(0)?, field(1)?),
            mtime: (field(2)?, field(3)?),
            ino: field(5)?,
            mode: field(6)?,
            uid: field(7)?,
            gid: field(8)?,
            size: field(9)?,
            oid,
            flags,
            extended,
            path,
        });
        at = next;
        if at > end {
            return None;
        }
    }
    // Extensions: a split index keeps entries in another file.
    let mut cached_root = None;
    while at < end {
        let signature = bytes.get(at..at + 4)?;
        if signature == b"link" {
            return None;
        }
        let size = be32(&bytes, at + 4)? as usize;
        let body = at.checked_add(8)?;
        at = body.checked_add(size)?;
        if signature == b"TREE" {
            cached_root = bytes.get(body..at.min(end)).and_then(tree_root);
        }
    }
    (at == end).then_some(IndexFile {
        bytes,
        entries,
        paths,
        cached_root,
    })
}

/// The root node of a cache-tree extension's body: its path (empty for
/// the root), NUL, the entries it covers in decimal (`-1`: invalid), a
/// space, its subtree count, a newline, then its tree id.
fn tree_root(body: &[u8]) -> Option<(usize, Oid)> {
    let rest = body.strip_prefix(b"\0")?;
    let space = rest.iter().position(|&b| b == b' ')?;
    let count = std::str::from_utf8(rest.get(..space)?).ok()?;
    // Digits only: `-1` (invalidated) and anything odd give nothing.
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let count: usize = count.parse().ok()?;
    let newline = space + rest.get(space..)?.iter().position(|&b| b == b'\n')?;
    let id = rest.get(newline + 1..newline + 21)?;
    Some((count, Oid::from_bytes(id).ok()?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// An index git2 writes, in each version, reads back with the same
    /// entries as git2 reads; a byte cut off makes it unreadable.
    #[test]
    fn entries_match_libgit2s_in_every_version() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        for path in ["a.txt", "dir/b.txt", "dir/sub/c.txt", "dir/sub/cc.txt", "z"] {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, path).unwrap();
        }
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        for version in [2, 3, 4] {
            index.set_version(version).unwrap();
            index.write().unwrap();
            let bytes = std::fs::read(repo.path().join("index")).unwrap();
            let parsed = parse(bytes.clone()).unwrap();
            let got: Vec<(Vec<u8>, Oid, u32, u32, u32)> = parsed
                .entries
                .iter()
                .map(|e| (parsed.path(e).to_vec(), e.oid, e.mode, e.size, e.mtime.0))
                .collect();
            let want: Vec<(Vec<u8>, Oid, u32, u32, u32)> = index
                .iter()
                .map(|e| (e.path, e.id, e.mode, e.file_size, e.mtime.seconds() as u32))
                .collect();
            assert_eq!(got, want, "version {version}");
            assert!(parse(bytes[..bytes.len() - 1].to_vec()).is_none());
        }
    }
}
