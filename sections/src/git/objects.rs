//! A check of `HEAD`'s own loose objects (its commit and that commit's root
//! tree) before the status scan reads them: a loose object cut short (what
//! a crash during `git commit` leaves) makes libgit2 spin forever inflating
//! it, on a worker thread that cannot be stopped. Inflating them here first,
//! bounded, turns that into a note. Packed objects, and loose objects below
//! the root tree, are left to libgit2.

use std::io::Read;
use std::path::{Path, PathBuf};

use flate2::read::ZlibDecoder;

/// The most of one loose object read or inflated here; a commit or a root
/// tree beyond it is left to libgit2.
const MAX_OBJECT_BYTES: u64 = 16 * 1024 * 1024;

/// Why `HEAD`'s commit or root tree cannot be read, when one of them is a
/// damaged loose object; `None` when both are whole, packed, or absent.
pub(super) fn damaged_head_objects(objects: &Path, commit: &str) -> Option<String> {
    let body = match inflate(objects, commit) {
        Loose::Whole(body) => body,
        Loose::Absent => return None,
        Loose::Damaged(why) => return Some(format!("the HEAD commit object {commit} {why}")),
    };
    let tree = std::str::from_utf8(&body)
        .ok()?
        .lines()
        .next()?
        .strip_prefix("tree ")?
        .trim()
        .to_owned();
    match inflate(objects, &tree) {
        Loose::Damaged(why) => Some(format!("the HEAD tree object {tree} {why}")),
        Loose::Whole(_) | Loose::Absent => None,
    }
}

enum Loose {
    /// Inflated in full, its header's length matching: the body.
    Whole(Vec<u8>),
    /// No loose file for it (packed, or not there at all).
    Absent,
    /// What is wrong with it.
    Damaged(String),
}

fn loose_path(objects: &Path, id: &str) -> Option<PathBuf> {
    let (dir, file) = (id.get(..2)?, id.get(2..)?);
    let valid = id.len() >= 40 && id.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then(|| objects.join(dir).join(file))
}

fn inflate(objects: &Path, id: &str) -> Loose {
    let Some(path) = loose_path(objects, id) else {
        return Loose::Absent;
    };
    let Ok(compressed) = bcode_fs::read_bounded(&path, MAX_OBJECT_BYTES as usize) else {
        // Missing (packed), too large or unreadable: libgit2 decides.
        return Loose::Absent;
    };
    let mut inflated = Vec::new();
    let mut decoder = ZlibDecoder::new(compressed.as_slice()).take(MAX_OBJECT_BYTES);
    if let Err(err) = decoder.read_to_end(&mut inflated) {
        return Loose::Damaged(format!("cannot be inflated ({err})"));
    }
    let Some(nul) = inflated.iter().position(|&b| b == 0) else {
        return Loose::Damaged("has no header".to_owned());
    };
    let header = String::from_utf8_lossy(&inflated[..nul]).into_owned();
    let declared = header
        .split_once(' ')
        .and_then(|(_, len)| len.parse::<usize>().ok());
    let body = inflated.split_off(nul + 1);
    match declared {
        Some(len) if len == body.len() => Loose::Whole(body),
        Some(len) => Loose::Damaged(format!(
            "is cut short: {} of its {len} bytes are there",
            body.len()
        )),
        None => Loose::Damaged(format!("has an unreadable header `{header}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write_object(objects: &Path, id: &str, kind: &str, body: &[u8], cut: usize) {
        let mut raw = format!("{kind} {}\0", body.len()).into_bytes();
        raw.extend_from_slice(body);
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(&raw).unwrap();
        let mut compressed = encoder.finish().unwrap();
        compressed.truncate(compressed.len().saturating_sub(cut));
        let path = loose_path(objects, id).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, compressed).unwrap();
    }

    const COMMIT: &str = "1111111111111111111111111111111111111111";
    const TREE: &str = "2222222222222222222222222222222222222222";

    #[test]
    fn whole_objects_pass_and_cut_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path();
        let commit = format!("tree {TREE}\nauthor a <a> 0 +0000\n\nmessage\n");
        write_object(objects, COMMIT, "commit", commit.as_bytes(), 0);
        write_object(objects, TREE, "tree", b"", 0);
        assert_eq!(damaged_head_objects(objects, COMMIT), None);

        write_object(objects, TREE, "tree", &[7; 300], 20);
        let why = damaged_head_objects(objects, COMMIT).unwrap();
        assert!(
            why.starts_with(&format!("the HEAD tree object {TREE}")),
            "{why}"
        );

        write_object(objects, COMMIT, "commit", commit.as_bytes(), 10);
        let why = damaged_head_objects(objects, COMMIT).unwrap();
        assert!(
            why.starts_with(&format!("the HEAD commit object {COMMIT}")),
            "{why}"
        );
    }

    #[test]
    fn packed_or_missing_objects_are_left_to_libgit2() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(damaged_head_objects(dir.path(), COMMIT), None);
        assert_eq!(damaged_head_objects(dir.path(), "not-an-id"), None);
    }
}
