//! The discovery cache that survives the process: the last registry built
//! from a set of roots, with the walk snapshot that vouches for it, in one
//! file under the state directory. A fresh process (a one-shot `render`)
//! checks the snapshot's stamps (one `statx` per file, no read) and, when
//! nothing changed, takes the registry from the file instead of reading
//! and parsing every skill again.
//!
//! The file is only ever a shortcut: it is keyed by everything the build
//! depends on (format, crate version, options, roots), it is used only when
//! every stamp answers as recorded and every summary lies under the root it
//! claims (the file is not trusted to say where skills are: a location
//! elsewhere would make a render read any file as a skill body), and
//! anything wrong with it (missing, unreadable, oversized, malformed,
//! another key) means an ordinary walk.
//! Writes go to a temporary file renamed into place, so a reader never sees
//! half a file; at most [`MAX_FILES`] files are kept.
//!
//! The folder is state (`bcode_fs::StateDir`): used only when it belongs to
//! the user and nobody else may write to it, the temporary file has a random
//! name and is created `O_EXCL`, and a cache file is opened without following
//! links, so a link planted in a shared state folder is neither written
//! through nor read.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use bcode_fs::StateDir;
use bcode_skill_models::{SkillLayout, SkillSummary};

mod format;

use format::{Contents, FORMAT};

use crate::discover::read::RootConfinements;
use crate::discover::registry::{DiscoveryOptions, RootReport, SkillRegistry};
use crate::discover::snapshot::WalkSnapshot;
use crate::discover::sources::SourceRoot;
use crate::provider::ProviderSet;

/// Files larger than this are not read (nor written).
const MAX_BYTES: usize = 64 * 1024 * 1024;

/// Cache files kept in the folder; the least recently written go first.
const MAX_FILES: usize = 32;

/// Where a discovery keeps its cache file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    /// A cache in `dir` (created mode 0700 on first write; for Bcode,
    /// `<state dir>/cache/skills`). A folder that is not the user's, or that
    /// others may write to, is not used (see the module docs).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        DiskCache { dir: dir.into() }
    }

    fn file(name: &str) -> String {
        format!("discovery-{name}.json")
    }

    /// The registry and snapshot stored for these options and roots, if any.
    pub(crate) fn load(
        &self,
        options: &DiscoveryOptions,
        roots: &[SourceRoot],
    ) -> Option<(SkillRegistry, WalkSnapshot)> {
        let key = key(options, roots);
        let dir = StateDir::existing(&self.dir).ok()?;
        let (file, len) = dir.open_file(&Self::file(&name(&key))).ok()?;
        if len > MAX_BYTES as u64 {
            return None;
        }
        let reader = std::io::BufReader::with_capacity(
            256 * 1024,
            std::io::Read::take(file, MAX_BYTES as u64),
        );
        let stored = format::read(reader, &key)?;
        let snapshot = WalkSnapshot::from_stored(stored.snapshot, roots)?;
        if !reports_fit(&stored.reports, roots, &snapshot)
            || !stored
                .skills
                .iter()
                .all(|skill| summary_fits(skill, roots, &snapshot))
        {
            return None;
        }
        let registry = SkillRegistry::new(
            stored.skills,
            stored.diagnostics,
            stored.reports,
            options,
            ProviderSet::default(),
            RootConfinements::of(roots),
        );
        Some((registry, snapshot))
    }

    /// Stores `registry` and `snapshot` for these options and roots. Best
    /// effort: a cache that cannot be written is simply not there next time.
    pub(crate) fn store(
        &self,
        options: &DiscoveryOptions,
        roots: &[SourceRoot],
        registry: &SkillRegistry,
        snapshot: &WalkSnapshot,
    ) -> bool {
        let Some(snapshot) = snapshot.to_stored() else {
            return false;
        };
        let key = key(options, roots);
        let Ok(dir) = StateDir::open(&self.dir) else {
            return false;
        };
        // Streamed to the file, never held whole in memory. A path that is
        // not UTF-8 cannot be written as JSON: then there is no entry.
        let mut contents = Some(Contents {
            key: &key,
            snapshot,
            skills: || registry.skills(),
            diagnostics: registry.diagnostics(),
            reports: registry.roots(),
        });
        // A random temporary name, renamed over the entry (see the module docs).
        let written = dir.replace(&Self::file(&name(&key)), &mut |file| {
            let contents = contents
                .take()
                .ok_or_else(|| std::io::Error::other("written twice"))?;
            let mut out = std::io::BufWriter::with_capacity(256 * 1024, &mut *file);
            format::write(&mut out, contents)?;
            out.flush()?;
            drop(out);
            if file.metadata()?.len() > MAX_BYTES as u64 {
                return Err(std::io::Error::other("larger than the cache limit"));
            }
            Ok(())
        });
        if written.is_err() {
            return false;
        }
        self.prune();
        true
    }

    /// Keeps the [`MAX_FILES`] most recently written cache files, and
    /// removes temporary files a process left behind (older than an hour).
    fn prune(&self) {
        if let Ok(dir) = StateDir::existing(&self.dir) {
            dir.prune("discovery-", ".json", MAX_FILES);
        }
    }
}

/// Whether the stored root reports describe `roots` as the snapshot
/// resolved them (the reports are shown to users as the roots searched).
fn reports_fit(reports: &[RootReport], roots: &[SourceRoot], snapshot: &WalkSnapshot) -> bool {
    reports.len() == roots.len()
        && reports
            .iter()
            .zip(roots)
            .enumerate()
            .all(|(i, (report, root))| {
                report.label == root.source.label
                    && report.path == root.path
                    && report.canonical.as_deref() == snapshot.root_bounds(i).map(|(c, _)| c)
            })
}

/// Whether a stored summary is one the walk of `roots` could have produced:
/// a folder or flat skill of one of those roots (same source), with its
/// file and folder below that root's canonical path as the snapshot
/// recorded it. A re-check of the snapshot then vouches for the root.
fn summary_fits(skill: &SkillSummary, roots: &[SourceRoot], snapshot: &WalkSnapshot) -> bool {
    if skill.layout == SkillLayout::Provided || skill.source.provider.is_some() {
        return false;
    }
    let claimed = roots.iter().position(|root| {
        root.source.kind == skill.source.kind
            && root.source.ordinal == skill.source.ordinal
            && root.source.label == skill.source.label
    });
    let Some((canonical, base)) = claimed.and_then(|i| snapshot.root_bounds(i)) else {
        return false;
    };
    skill.source.root.as_deref() == Some(canonical)
        && inside(&skill.location, canonical)
        && inside(skill.directory(), base)
}

/// Whether `path` is `root` or below it, with no `.` or `..` component
/// after it. Compared as bytes: this runs for every stored summary (10,000
/// in a large tree), where `Path::starts_with` walks components.
fn inside(path: &Path, root: &Path) -> bool {
    let is_separator = |b: &u8| std::path::is_separator(char::from(*b));
    let root = root.as_os_str().as_encoded_bytes();
    let Some(rest) = path.as_os_str().as_encoded_bytes().strip_prefix(root) else {
        return false;
    };
    let rest = match rest.split_first() {
        None => return true,
        Some((first, after)) if is_separator(first) => after,
        Some(_) if root.last().is_some_and(is_separator) => rest,
        Some(_) => return false,
    };
    rest.split(is_separator)
        .all(|part| part != b".." && part != b".")
}

/// Everything a stored build depends on: the format, this crate's version
/// (summaries may be parsed differently by another), the options and the
/// roots. Stored whole and compared exactly; only the file name is a hash.
fn key(options: &DiscoveryOptions, roots: &[SourceRoot]) -> String {
    format!(
        "{FORMAT}|{}|{options:?}|{roots:?}",
        env!("CARGO_PKG_VERSION")
    )
}

fn name(key: &str) -> String {
    let mut hasher = rustc_hash::FxHasher::default();
    key.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::fs;
    use std::time::{Duration, SystemTime};

    #[test]
    fn inside_means_below_the_root_without_climbing_out() {
        let root = Path::new("/r/skills");
        for (path, expected) in [
            ("/r/skills", true),
            ("/r/skills/a/SKILL.md", true),
            ("/r/skills-other/a/SKILL.md", false),
            ("/r/skills/../etc/passwd", false),
            ("/r/skills/a/./SKILL.md", false),
            ("/r/skills/a/..", false),
            ("/etc/passwd", false),
            ("/r/skillsa", false),
        ] {
            assert_eq!(inside(Path::new(path), root), expected, "{path}");
        }
        assert!(inside(Path::new("/x/a.md"), Path::new("/")));
    }

    #[test]
    fn pruning_keeps_the_newest_entries_and_drops_stale_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::new(dir.path());
        let now = SystemTime::now();
        for i in 0..MAX_FILES + 5 {
            let path = dir.path().join(format!("discovery-{i:016x}.json"));
            fs::write(&path, "{}").unwrap();
            let age = Duration::from_secs(60 * (MAX_FILES + 5 - i) as u64);
            fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(now - age)
                .unwrap();
        }
        let stale = dir.path().join(".discovery-x.1.tmp");
        let fresh = dir.path().join(".discovery-y.2.tmp");
        for path in [&stale, &fresh] {
            fs::write(path, "").unwrap();
        }
        fs::File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(now - Duration::from_secs(7200))
            .unwrap();
        cache.prune();
        let kept: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json"))
            .collect();
        assert_eq!(kept.len(), MAX_FILES);
        // The oldest five went.
        for i in 0..5 {
            assert!(!kept.contains(&format!("discovery-{i:016x}.json")));
        }
        assert!(!stale.exists());
        assert!(fresh.exists(), "another process may still be writing it");
    }
}
