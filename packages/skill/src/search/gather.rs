//! The edge of the relevance index: reads what the index needs of each
//! skill of a registry (the body, through the registry's own confined and
//! bounded read, and the names of a folder skill's other files) on worker
//! threads, each indexing every so many runs of skills into an index of its
//! own, then joins their indexes.
//!
//! Provided skills (an MCP server's) are indexed by what their summary
//! says: their bodies are fetched only when a skill is loaded, never to
//! rank it.

use std::path::Path;

use bcode_fs::FileKind;
use bcode_skill_models::{SkillLayout, SkillSummary};

use crate::discover::registry::SkillRegistry;
use crate::search::document::SkillText;
use crate::search::index::{IndexBuilder, SkillIndex};

/// Names of a skill's other files listed at most: a folder of thousands of
/// assets says no more about the skill than its first few dozen.
pub const MAX_FILES_LISTED: usize = 64;

/// How deep below the skill's folder its files are listed
/// (`references/forms/FORM.md` is two folders down).
const MAX_FILE_DEPTH: usize = 2;

/// Skills a worker takes at once: worker `w` of `n` takes runs `w`,
/// `w + n`, ..., so the split is the same on every run (an index's
/// document numbers depend only on the registry and the number of
/// workers) and a run of large files is shared out.
const BATCH: usize = 256;

/// An index of every skill of `registry`, or, with `query`, only as much
/// of one as answers that query (see [`SkillIndex::for_query`]).
pub fn index_registry(registry: &SkillRegistry, query: Option<&str>) -> SkillIndex {
    let skills: Vec<&SkillSummary> = registry.skills().collect();
    let fresh = || match query {
        Some(query) => SkillIndex::for_query(query),
        None => SkillIndex::new(),
    };
    let batches: Vec<&[&SkillSummary]> = skills.chunks(BATCH).collect();
    let threads = bcode_fs::worker_threads().min(batches.len()).max(1);
    // Each worker builds one index over all its runs, so what it learnt of
    // each word (its stem, its term number) serves it to the end.
    let build = |worker: usize| {
        let mut index = fresh();
        let mut builder = IndexBuilder::new(&mut index);
        for batch in batches.iter().skip(worker).step_by(threads) {
            for skill in *batch {
                add(&mut builder, registry, skill);
            }
        }
        index
    };
    if threads == 1 {
        return build(0);
    }
    let parts: Vec<SkillIndex> = std::thread::scope(|scope| {
        let workers: Vec<_> = (1..threads)
            .map(|worker| scope.spawn(move || build(worker)))
            .collect();
        // This thread is a worker too.
        let mut parts = vec![build(0)];
        parts.extend(
            workers
                .into_iter()
                .map(|worker| worker.join().unwrap_or_default()),
        );
        parts
    });
    let mut parts = parts.into_iter();
    let mut whole = parts.next().unwrap_or_default();
    for part in parts {
        whole.append(part);
    }
    whole
}

/// Indexes one skill: its body when it is read from disk (an unreadable
/// one is indexed without; the registry's diagnostics already say why).
fn add(builder: &mut IndexBuilder<'_>, registry: &SkillRegistry, skill: &SkillSummary) {
    let (body, files) = match skill.layout {
        SkillLayout::Provided => (None, Vec::new()),
        SkillLayout::Flat => (registry.body(skill).ok(), Vec::new()),
        _ => (registry.body(skill).ok(), other_files(skill)),
    };
    let text = SkillText::with_body(skill, body, &files);
    builder.insert(skill.manifest.id.clone(), &text);
}

/// The paths of a folder skill's other files, relative to its folder,
/// files before folders, each by name: at most `MAX_FILES_LISTED`, `MAX_FILE_DEPTH` folders down,
/// hidden entries and links to folders not followed.
pub fn other_files(skill: &SkillSummary) -> Vec<String> {
    other_files_and_folders(skill).0
}

/// [`other_files`], and the folders it listed, relative to the skill's
/// folder (`""` for the folder itself, then `scripts/`...): a name added
/// or removed in one of them moves its stamp, which is how the routing
/// cache knows the listing still holds.
pub(crate) fn other_files_and_folders(skill: &SkillSummary) -> (Vec<String>, Vec<String>) {
    let mut out = Vec::new();
    let mut listed = Vec::new();
    list_into(
        skill.directory(),
        "",
        0,
        &skill.location,
        &mut out,
        &mut listed,
    );
    (out, listed)
}

/// Entries of one folder looked at most, before sorting picks the first
/// names: a folder of a million files costs a bounded listing.
const MAX_ENTRIES_READ: usize = 4096;

fn list_into(
    dir: &Path,
    prefix: &str,
    depth: usize,
    instruction: &Path,
    out: &mut Vec<String>,
    listed: &mut Vec<String>,
) {
    listed.push(prefix.to_owned());
    let mut files = Vec::new();
    let mut folders = Vec::new();
    let mut read = 0usize;
    let _ = bcode_fs::for_each_entry(dir, &mut |entry| {
        read += 1;
        if let Ok(entry) = entry
            && let Ok(name) = entry.name
            && !name.starts_with('.')
        {
            match entry.kind {
                FileKind::Dir => folders.push(name),
                _ if depth == 0 && dir.join(&name) == instruction => {}
                _ => files.push(name),
            }
        }
        read < MAX_ENTRIES_READ
    });
    // Sorted before anything is cut, so the names kept do not depend on
    // the order the file system lists them in.
    files.sort();
    for name in files {
        if out.len() >= MAX_FILES_LISTED {
            return;
        }
        out.push(format!("{prefix}{name}"));
    }
    if depth >= MAX_FILE_DEPTH {
        return;
    }
    folders.sort();
    for folder in folders {
        if out.len() >= MAX_FILES_LISTED {
            return;
        }
        list_into(
            &dir.join(&folder),
            &format!("{prefix}{folder}/"),
            depth + 1,
            instruction,
            out,
            listed,
        );
    }
}

/// Brings `index`, built over `before`, up to `after`: a skill whose
/// summary is the very one `before` had (discovery shares unchanged
/// summaries between builds) keeps its entry; every other skill of `after`
/// is indexed again alone, and skills gone are removed. Returns how many
/// were indexed again.
pub fn refresh_index(
    index: &mut SkillIndex,
    before: &SkillRegistry,
    after: &SkillRegistry,
) -> usize {
    let kept: std::collections::BTreeMap<&str, &std::sync::Arc<SkillSummary>> = before
        .shared_skills()
        .map(|s| (s.manifest.id.as_str(), s))
        .collect();
    let gone: Vec<_> = before
        .skills()
        .filter(|s| after.get(s.manifest.id.as_str()).is_none())
        .map(|s| s.manifest.id.clone())
        .collect();
    for id in &gone {
        index.remove(id);
    }
    let mut builder = IndexBuilder::new(index);
    let mut again = 0;
    for skill in after.shared_skills() {
        let unchanged = kept
            .get(skill.manifest.id.as_str())
            .is_some_and(|old| std::sync::Arc::ptr_eq(old, skill));
        if !unchanged || !builder.index().contains(&skill.manifest.id) {
            add(&mut builder, after, skill);
            again += 1;
        }
    }
    again
}
