//! The cache of files fetched from MCP servers: one file per server and
//! URI in a private folder below the state folder, used only while its
//! bytes still match the listing's size and digest (SEP-2640: "a cached
//! file is valid while its digest matches the entry").

use std::io::{Read, Write};
use std::path::PathBuf;

use bcode_fs::StateDir;
use rmcp::model::{SkillResource, sha256_digest};

/// Fetched files, kept in one folder (`<state dir>/cache/mcp` as the host
/// wires it). Every failure (a refused folder, a missing or stale file, a
/// full disk) means "not cached": the file is fetched again.
#[derive(Clone, Debug)]
pub(crate) struct FileCache {
    dir: PathBuf,
}

impl FileCache {
    pub(crate) fn new(dir: PathBuf) -> FileCache {
        FileCache { dir }
    }

    /// The cached bytes of `resource` from `server`, when they still match
    /// its listing entry.
    pub(crate) fn get(&self, server: &str, resource: &SkillResource) -> Option<Vec<u8>> {
        let dir = StateDir::existing(&self.dir).ok()?;
        let (file, len) = dir.open_file(&file_name(server, &resource.uri)).ok()?;
        if len != resource.size {
            return None;
        }
        let mut bytes = Vec::new();
        file.take(resource.size.saturating_add(1))
            .read_to_end(&mut bytes)
            .ok()?;
        resource.verify(&bytes).ok()?;
        Some(bytes)
    }

    /// Keeps `bytes` (already checked against `resource`) for later runs.
    pub(crate) fn put(&self, server: &str, resource: &SkillResource, bytes: &[u8]) {
        let Ok(dir) = StateDir::open(&self.dir) else {
            return;
        };
        let _ = dir.replace(&file_name(server, &resource.uri), &mut |file| {
            file.write_all(bytes)
        });
    }
}

/// The cache file of one server's URI: a digest of both, so any URI makes a
/// safe file name and two servers never share a file.
fn file_name(server: &str, uri: &str) -> String {
    let key = sha256_digest(format!("{server}\n{uri}").as_bytes());
    key.trim_start_matches("sha256:").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_file_is_used_only_while_it_matches_its_entry() {
        let root = tempfile::tempdir().unwrap();
        let cache = FileCache::new(root.path().join("mcp"));
        let uri = "skill://pdf/SKILL.md";
        let old = SkillResource::from_bytes(uri, b"old body");
        assert_eq!(cache.get("a", &old), None);
        cache.put("a", &old, b"old body");
        assert_eq!(cache.get("a", &old), Some(b"old body".to_vec()));
        // Another server's file of the same URI is another file.
        assert_eq!(cache.get("b", &old), None);
        // The listing moved on: the cached bytes are not used.
        let new = SkillResource::from_bytes(uri, b"new body");
        assert_eq!(cache.get("a", &new), None);
        let same_size = SkillResource::from_bytes(uri, b"odd body");
        assert_eq!(cache.get("a", &same_size), None);
    }
}
