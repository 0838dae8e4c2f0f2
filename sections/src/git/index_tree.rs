//! The tree id the index would be committed as, computed in memory (hashed,
//! never written), so the status can tell without reading a single tree
//! that `HEAD` and the index agree: then comparing them (libgit2 reads every
//! tree of `HEAD` for it, and the safety check of `objects.rs` inflates them
//! all first) is skipped, as `git status` skips it with its cache tree.
//!
//! Only an index git could write as a tree is hashed: one with a conflict,
//! an intent-to-add entry or a mode a tree cannot hold gives `None`, and the
//! caller compares as before. A tree id is a hash of its contents, so a
//! hashed match cannot be a mistake; any slip here could only miss a match.
//! When the index's own cache tree still covers every entry, its root id
//! is taken instead of hashing (a fifth of a steady read of git/git's
//! 4,847 files): git and libgit2 invalidate it on every change of the
//! entries, and git's status trusts it the same way.

use git2::{ObjectType, Oid};

use super::index_file::IndexFile;

/// One index entry as a tree needs it: its path, mode and blob (or commit)
/// id, in index order.
pub(super) struct Entry<'a> {
    pub(super) path: &'a [u8],
    pub(super) mode: u32,
    pub(super) oid: Oid,
}

/// The stage bits of an index entry's flags (non-zero: a conflict).
const STAGE_MASK: u16 = 0x3000;

/// The extended flag git sets on an entry added with `git add -N`.
const INTENT_TO_ADD: u16 = 1 << 13;

/// The entries of `index` as [`Entry`]s, or `None` when git would not write
/// that index as a tree as it stands.
pub(super) fn entries(index: &IndexFile) -> Option<Vec<Entry<'_>>> {
    let mut entries = Vec::with_capacity(index.entries.len());
    for entry in &index.entries {
        if entry.flags & STAGE_MASK != 0 || entry.extended & INTENT_TO_ADD != 0 {
            return None;
        }
        entries.push(Entry {
            path: index.path(entry),
            mode: entry.mode,
            oid: entry.oid,
        });
    }
    Some(entries)
}

/// The tree `index` would be committed as: the one its cache-tree
/// extension names for the root when that covers every entry (git and
/// libgit2 drop it on any change to the entries, and `git status` trusts
/// it the same way to skip comparing `HEAD` with the index), else hashed
/// from the entries; `None` as for [`entries`].
pub(super) fn index_tree_id(index: &IndexFile) -> Option<Oid> {
    let entries = entries(index)?;
    match index.cached_root {
        Some((count, oid)) if count == entries.len() => Some(oid),
        _ => tree_id(&entries),
    }
}

/// The id of the tree `entries` (sorted as the index sorts them) would be
/// written as; `None` when one cannot be written (a mode a tree cannot
/// hold, an empty or absolute path component).
pub(super) fn tree_id(entries: &[Entry]) -> Option<Oid> {
    tree_below(entries, 0)
}

/// The tree of `entries`, all of whose paths share their first `skip`
/// bytes (the folder's path and its `/`).
fn tree_below(entries: &[Entry], skip: usize) -> Option<Oid> {
    // (name, mode text, id, is a folder) in index order, folders once.
    let mut items: Vec<(&[u8], &'static str, Oid, bool)> = Vec::new();
    let mut at = 0;
    while let Some(entry) = entries.get(at) {
        let rest = entry.path.get(skip..)?;
        match rest.iter().position(|&b| b == b'/') {
            Some(slash) => {
                let name = rest.get(..slash)?;
                if name.is_empty() {
                    return None;
                }
                // Paths below one folder are contiguous in index order: they
                // share the prefix `name/`.
                let prefix_len = skip + slash + 1;
                let end = at
                    + entries[at..]
                        .iter()
                        .take_while(|e| {
                            e.path.len() > prefix_len
                                && e.path.get(skip..prefix_len) == rest.get(..=slash)
                        })
                        .count();
                if end == at {
                    return None;
                }
                let oid = tree_below(entries.get(at..end)?, prefix_len)?;
                items.push((name, "40000", oid, true));
                at = end;
            }
            None => {
                if rest.is_empty() {
                    return None;
                }
                let mode = match entry.mode {
                    0o100644 => "100644",
                    0o100755 => "100755",
                    0o120000 => "120000",
                    0o160000 => "160000",
                    _ => return None,
                };
                items.push((rest, mode, entry.oid, false));
                at += 1;
            }
        }
    }
    // Git orders a tree's entries by name, a folder's name compared as if
    // it ended in `/`.
    items.sort_by(|a, b| sort_key(a.0, a.3).cmp(sort_key(b.0, b.3)));
    let mut body = Vec::with_capacity(items.len() * 40);
    for (name, mode, oid, _) in items {
        body.extend_from_slice(mode.as_bytes());
        body.push(b' ');
        body.extend_from_slice(name);
        body.push(0);
        body.extend_from_slice(oid.as_bytes());
    }
    Oid::hash_object(ObjectType::Tree, &body).ok()
}

fn sort_key(name: &[u8], folder: bool) -> impl Iterator<Item = u8> + '_ {
    name.iter().copied().chain(folder.then_some(b'/'))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::path::Path;

    /// Commits a tree of awkward names (a file and a folder sorting apart
    /// only by the `/`, an executable, a link) and checks the hash matches
    /// what git wrote.
    #[test]
    fn the_index_hashes_to_the_tree_git_writes() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        for path in ["a-b", "a.c", "a/b", "a/c/d", "a0", "z", "sub/x.txt"] {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, path).unwrap();
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let exe = dir.path().join("z");
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::os::unix::fs::symlink("a/b", dir.path().join("link")).unwrap();
        }
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        let written = index.write_tree().unwrap();
        let hashed = |repo: &git2::Repository| {
            let bytes = std::fs::read(repo.path().join("index")).unwrap();
            let file = crate::git::index_file::parse(bytes).unwrap();
            tree_id(&entries(&file).unwrap())
        };
        assert_eq!(hashed(&repo), Some(written));
        // One blob more changes the id.
        std::fs::write(dir.path().join("sub/y.txt"), "y").unwrap();
        index.add_path(Path::new("sub/y.txt")).unwrap();
        index.write().unwrap();
        assert_ne!(hashed(&repo), Some(written));
        assert_eq!(hashed(&repo), Some(index.write_tree().unwrap()));
        // The cache tree libgit2 writes after reading a tree names the same
        // tree, and is dropped by an added entry.
        let commit_tree = repo.find_tree(written).unwrap();
        index.read_tree(&commit_tree).unwrap();
        index.write().unwrap();
        let cached = |repo: &git2::Repository| {
            let bytes = std::fs::read(repo.path().join("index")).unwrap();
            let file = crate::git::index_file::parse(bytes).unwrap();
            (file.cached_root.map(|(_, oid)| oid), index_tree_id(&file))
        };
        assert_eq!(cached(&repo), (Some(written), Some(written)));
        index.add_path(Path::new("sub/y.txt")).unwrap();
        index.write().unwrap();
        let grown = index.write_tree().unwrap();
        index.read_tree(&repo.find_tree(grown).unwrap()).unwrap();
        index.write().unwrap();
        assert_eq!(cached(&repo), (Some(grown), Some(grown)));
        std::fs::write(dir.path().join("sub/w.txt"), "w").unwrap();
        index.add_path(Path::new("sub/w.txt")).unwrap();
        index.write().unwrap();
        let (root, id) = cached(&repo);
        assert_eq!(root, None);
        assert_eq!(id, Some(index.write_tree().unwrap()));
        // The empty index is the empty tree.
        assert_eq!(
            tree_id(&[]),
            Some(Oid::from_str("4b825dc642cb6eb9a060e54bf8d69288fbee4904").unwrap())
        );
    }
}
