//! Canonical paths of many roots that share their folders, each folder
//! resolved once. Discovery canonicalises every source root, and the
//! repository's roots lie in each folder from the root down to the working
//! folder: `std::fs::canonicalize` asks the kernel for every component of
//! every root again (`realpath` is one `readlink` per component), so a
//! working folder a few hundred levels deep cost hundreds of thousands of
//! calls, each walking a path as long as the depth. [`Canonicalizer`]
//! remembers the folders it resolved and looks up only the components it
//! has not seen: one `lstat` each.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// `std::fs::canonicalize` for many paths in one pass over the filesystem
/// (one walk's roots): a folder already resolved is not resolved again.
/// Links are resolved by `std::fs::canonicalize` itself, so the answers
/// are the same; only failures are not remembered (a missing folder may
/// appear). Keep one for one walk or one check, not longer: a folder
/// replaced by a link afterwards is not seen.
#[derive(Debug)]
pub struct Canonicalizer {
    /// The folders (and files) resolved so far, as a tree of components
    /// from `/`: node 0 is `/` itself.
    nodes: Vec<Node>,
    /// Filesystem calls made so far (tests count them).
    calls: usize,
}

#[derive(Debug)]
struct Node {
    /// Where this path really is.
    real: PathBuf,
    children: HashMap<OsString, usize>,
}

impl Default for Canonicalizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Canonicalizer {
    /// Knows nothing yet.
    pub fn new() -> Self {
        Canonicalizer {
            nodes: vec![Node {
                real: PathBuf::from("/"),
                children: HashMap::new(),
            }],
            calls: 0,
        }
    }

    /// What `std::fs::canonicalize(path)` answers, asking the filesystem
    /// only about components not resolved before. A relative path, or one
    /// with `..` or `.` in it, is handed to `std::fs::canonicalize` whole
    /// (after a link, `..` is the link target's parent, so the memory of
    /// plain names does not apply).
    pub fn canonicalize(&mut self, path: &Path) -> io::Result<PathBuf> {
        let mut components = path.components();
        if !cfg!(unix) || components.next() != Some(Component::RootDir) {
            return self.whole(path);
        }
        let names: Option<Vec<&std::ffi::OsStr>> = components
            .map(|component| match component {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect();
        let Some(names) = names else {
            return self.whole(path);
        };
        let mut at = 0;
        for name in names {
            let known = self
                .nodes
                .get(at)
                .and_then(|node| node.children.get(name).copied());
            at = match known {
                Some(child) => child,
                None => self.resolve(at, name)?,
            };
        }
        self.nodes
            .get(at)
            .map(|node| node.real.clone())
            .ok_or_else(|| io::Error::other("canonical path lost"))
    }

    /// Filesystem calls made so far: one per component first resolved (and
    /// the calls `std::fs::canonicalize` makes for a link or a path it was
    /// handed whole, counted as one).
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// Resolves `name` in the folder of node `parent` and remembers it.
    fn resolve(&mut self, parent: usize, name: &std::ffi::OsStr) -> io::Result<usize> {
        let Some(node) = self.nodes.get(parent) else {
            return Err(io::Error::other("canonical path lost"));
        };
        let candidate = node.real.join(name);
        self.calls += 1;
        let meta = std::fs::symlink_metadata(&candidate)?;
        // The parent is canonical: a name in it that is not a link is
        // canonical too. A link is left to `realpath`, once.
        let real = if meta.file_type().is_symlink() {
            self.calls += 1;
            std::fs::canonicalize(&candidate)?
        } else {
            candidate
        };
        let child = self.nodes.len();
        self.nodes.push(Node {
            real,
            children: HashMap::new(),
        });
        if let Some(node) = self.nodes.get_mut(parent) {
            node.children.insert(name.to_os_string(), child);
        }
        Ok(child)
    }

    fn whole(&mut self, path: &Path) -> io::Result<PathBuf> {
        self.calls += 1;
        std::fs::canonicalize(path)
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::symlink;

    /// Every answer is `std::fs::canonicalize`'s, links, files, missing
    /// paths and `..` included.
    #[test]
    fn answers_as_std_does() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path();
        std::fs::create_dir_all(base.join("a/b/c")).unwrap();
        std::fs::create_dir_all(base.join("x/y")).unwrap();
        std::fs::write(base.join("a/file"), "").unwrap();
        symlink(base.join("x"), base.join("a/b/to-x")).unwrap();
        symlink("../..", base.join("a/b/c/up")).unwrap();
        symlink("nowhere", base.join("a/dangling")).unwrap();
        let mut paths = Canonicalizer::new();
        for rel in [
            "a/b/c",
            "a/b",
            "a/b/to-x/y",
            "a/b/to-x",
            "a/b/c/up/b/c",
            "a/file",
            "a/file/below",
            "a/missing/deeper",
            "a/dangling",
            "a/b/../b/c",
            "a/./b",
        ] {
            let path = base.join(rel);
            let mine = paths.canonicalize(&path).map_err(|e| e.kind());
            let theirs = std::fs::canonicalize(&path).map_err(|e| e.kind());
            assert_eq!(mine, theirs, "{rel}");
        }
        assert_eq!(
            paths
                .canonicalize(Path::new("relative"))
                .map_err(|e| e.kind()),
            std::fs::canonicalize("relative").map_err(|e| e.kind())
        );
    }

    /// The folders of a deep path are resolved once: the roots in every
    /// folder on the way cost one call per new component, not one per
    /// component of each.
    #[test]
    fn shared_folders_are_resolved_once() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let depth = 50;
        let mut deep = base.clone();
        for _ in 0..depth {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        let mut paths = Canonicalizer::new();
        assert_eq!(paths.canonicalize(&base).unwrap(), base);
        let before = paths.calls();
        let mut folder = base.clone();
        for _ in 0..depth {
            folder.push("d");
            assert_eq!(paths.canonicalize(&folder).unwrap(), folder);
            for root in [".bcode/skills", ".agents/skills", "skills"] {
                assert!(paths.canonicalize(&folder.join(root)).is_err());
            }
        }
        // One call per folder, and one per root's missing first component.
        assert_eq!(paths.calls() - before, depth * 4);
    }
}
