//! The `repository_invariants` stage: the catalog of
//! `<repo>/.bcode/invariants/*.md`, one invariant per file (front matter with
//! `id`, `title`, `summary`, optional `keywords` and `paths` globs; body = the
//! full text), in full mode placed complete and untruncated unless
//! `system_prompt.repository_invariants_max_chars` is set, in which case the
//! cut is marked in the text.
//!
//! `[invariants] enabled = false` is the master switch: the render glue then
//! neither calls [`gather_invariants`] nor registers this stage, so nothing is loaded
//! and no invariant metadata appears anywhere (the stage also stays silent
//! should it run without the switch). The section toggle only controls the
//! placement of the complete catalog.
//!
//! Relevant mode: `FocusedInvariantsStage` renders the
//! [`crate::relevant::Decision`] the relevant-mode driver made (the focused
//! selection, the task summary and every step of the decision as notes).
//! [`InvariantSelection`] remains the simpler seam for a host that picks ids
//! itself and wants the full-mode stage to place only those.
//!
//! [`parse_invariants`] is the core (file names and texts in, catalog out); [`gather_invariants`]
//! is the edge that reads the directory. Malformed files are problems shown
//! by `render --explain`, never a failure.
//!
//! Both are bounded like skills ([`InvariantBudget`], from `[invariants]
//! max_files` and `max_globs_per_file`): files past the count budget are not
//! read, globs past the per-file budget are ignored, each with a problem
//! note. Each invariant's `paths` globs are compiled once per version of its
//! file ([`PathGlobs`], keyed by [`bcode_fs::FileStamp`]): [`gather_invariants_with`]
//! reuses the sets of the previous catalog for unchanged files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use bcode_fs::FileStamp;
use bcode_skill::MAX_GLOB_BYTES;
use serde_json::Value;

pub use crate::path_globs::PathGlobs;

/// The catalog template.
pub const INVARIANTS_TEMPLATE: &str = "sections/repo_invariants.j2";
/// The template of one entry.
pub const INVARIANT_ENTRY_TEMPLATE: &str = "sections/repo_invariant_entry.j2";
/// The relevant-mode (focused guidance) template.
pub const FOCUSED_TEMPLATE: &str = "sections/relevant_invariants.j2";
/// Where invariants live, relative to the repository root.
pub const INVARIANTS_DIR: &str = ".bcode/invariants";

/// One repository invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invariant {
    /// The front matter's `id`, trimmed; unique within the catalog.
    pub id: String,
    /// The front matter's `title`, trimmed: a short name for the rule.
    pub title: String,
    /// The front matter's `summary`, trimmed: the rule in a sentence or two.
    pub summary: String,
    /// The front matter's `keywords` (one string or a list), which the
    /// relevant-mode selector matches against the task.
    pub keywords: Vec<String>,
    /// Globs of the paths it applies to (for relevant mode; shown in full
    /// mode), at most [`InvariantBudget::max_globs_per_file`].
    pub paths: Vec<String>,
    /// `paths` compiled, for the file version they were read from.
    pub globs: PathGlobs,
    /// The full text after the front matter.
    pub body: String,
    /// The file, relative to the repository root, `/` separators.
    pub file: String,
}

/// A file under the invariants directory that could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvariantProblem {
    /// The file, relative to the repository root, `/` separators.
    pub file: String,
    /// The 1-based line the problem is at, when the parser knows it.
    pub line: Option<u32>,
    /// What is wrong, ending with what was done about it (`skipped`).
    pub message: String,
}

impl std::fmt::Display for InvariantProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// The loaded catalog: usable invariants sorted by file name, and problems.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InvariantCatalog {
    /// The usable invariants, sorted by file name, ids unique.
    pub invariants: Vec<Invariant>,
    /// Files that were skipped and why, sorted by file name.
    pub problems: Vec<InvariantProblem>,
    /// Absolute path of the directory, `/` separators (for the marker).
    pub directory: String,
}

/// Which invariants to place. Absent means the complete catalog (full mode).
/// A relevant-mode selector (not built yet) would insert `Selected`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvariantSelection {
    /// The complete catalog.
    Full,
    /// Only these ids, in catalog order; unknown ids are ignored.
    Selected(Vec<String>),
}

/// The most of one invariant file that is read (1 MiB); non-regular files
/// are refused without blocking.
const MAX_INVARIANT_FILE_BYTES: usize = 1024 * 1024;

/// How much of the invariants folder is used, like the skills walk's
/// budgets: without them 50 files of 9,000 globs each took 25 s a render.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvariantBudget {
    /// The most files read, in file-name order (`invariants.max_files`).
    pub max_files: usize,
    /// The most `paths` globs kept of one file
    /// (`invariants.max_globs_per_file`).
    pub max_globs_per_file: usize,
}

impl Default for InvariantBudget {
    fn default() -> Self {
        InvariantBudget::from(&bcode_prompt_config::InvariantsConfig::default())
    }
}

impl From<&bcode_prompt_config::InvariantsConfig> for InvariantBudget {
    fn from(config: &bcode_prompt_config::InvariantsConfig) -> Self {
        InvariantBudget {
            max_files: config.max_files,
            max_globs_per_file: config.max_globs_per_file,
        }
    }
}

/// [`gather_invariants_with`] with the default budget and nothing to reuse.
pub fn gather_invariants(repo: &Path) -> InvariantCatalog {
    gather_invariants_with(repo, &InvariantBudget::default(), None)
}

/// Reads `<repo>/.bcode/invariants/*.md` (not recursive, at most
/// `budget.max_files` in file-name order) and parses them, reusing the
/// compiled globs of `previous` for files whose stamp has not changed. A
/// missing directory is an empty catalog.
pub fn gather_invariants_with(
    repo: &Path,
    budget: &InvariantBudget,
    previous: Option<&InvariantCatalog>,
) -> InvariantCatalog {
    let dir = repo.join(".bcode").join("invariants");
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let mut stamps = BTreeMap::new();
    // Every file must resolve inside the repository (checked on the open
    // file); a folder that is itself a link out is refused once, whole.
    let confinement = bcode_fs::Confinement::within(repo);
    if let Some(problem) = escaped_folder(&confinement, &dir) {
        problems.push(problem);
    } else if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut names: Vec<(String, std::path::PathBuf)> = entries
            .flatten()
            .map(|entry| {
                (
                    entry.file_name().to_string_lossy().into_owned(),
                    entry.path(),
                )
            })
            .filter(|(name, _)| name.ends_with(".md"))
            .collect();
        names.sort();
        if names.len() > budget.max_files {
            problems.push(InvariantProblem {
                file: INVARIANTS_DIR.to_owned(),
                line: None,
                message: format!(
                    "{} files; only the first {} by name are read \
                     (invariants.max_files), the other {} skipped",
                    names.len(),
                    budget.max_files,
                    names.len() - budget.max_files
                ),
            });
            names.truncate(budget.max_files);
        }
        for (name, path) in names {
            if !path.is_file() {
                continue;
            }
            let file = format!("{INVARIANTS_DIR}/{name}");
            if let Ok(meta) = std::fs::metadata(&path) {
                stamps.insert(file.clone(), FileStamp::of(&meta));
            }
            match confinement
                .read_bounded(&path, MAX_INVARIANT_FILE_BYTES)
                .map(String::from_utf8)
            {
                Ok(Ok(text)) => files.push((file, text)),
                Ok(Err(_)) => problems.push(InvariantProblem {
                    file,
                    line: None,
                    message: "not valid UTF-8; skipped".into(),
                }),
                Err(err) if err.escape().is_some() => problems.push(InvariantProblem {
                    file,
                    line: None,
                    message: format!("{err}; skipped"),
                }),
                Err(err) => problems.push(InvariantProblem {
                    file,
                    line: None,
                    message: format!("unreadable ({err}); skipped"),
                }),
            }
        }
    }
    let mut catalog = parse_uncompiled(files, budget);
    // Compile each file's globs once per stamp: reuse the previous set.
    let earlier: BTreeMap<&str, &PathGlobs> = previous
        .map(|p| {
            p.invariants
                .iter()
                .map(|i| (i.file.as_str(), &i.globs))
                .collect()
        })
        .unwrap_or_default();
    for inv in &mut catalog.invariants {
        let stamp = stamps.get(&inv.file).copied();
        let before = earlier.get(inv.file.as_str()).copied();
        inv.globs = PathGlobs::compile(&inv.paths, stamp, before);
    }
    catalog.problems.extend(problems);
    catalog.problems.sort_by(|a, b| a.file.cmp(&b.file));
    catalog.directory = crate::instructions::model_path(&dir);
    catalog
}

/// The problem of an invariants folder that resolves outside the repository
/// (or into a system folder); `None` when it is inside, or missing.
fn escaped_folder(confinement: &bcode_fs::Confinement, dir: &Path) -> Option<InvariantProblem> {
    let real = std::fs::canonicalize(dir).ok()?;
    let escape = confinement.check(dir, &real).err()?;
    Some(InvariantProblem {
        file: INVARIANTS_DIR.to_owned(),
        line: None,
        message: format!("{escape}; no invariant was read"),
    })
}

/// `parse_invariants_with` with the default budget.
pub fn parse_invariants(files: Vec<(String, String)>) -> InvariantCatalog {
    parse_invariants_with(files, &InvariantBudget::default())
}

/// Parses `(file, text)` pairs into a catalog, sorted by file name. Files
/// with unusable front matter, a missing required field or a duplicate id
/// become problems (the first file by name keeps a duplicated id); `paths`
/// beyond `budget.max_globs_per_file`, and each longer than
/// [`MAX_GLOB_BYTES`], are dropped with a problem note.
pub fn parse_invariants_with(
    files: Vec<(String, String)>,
    budget: &InvariantBudget,
) -> InvariantCatalog {
    let mut catalog = parse_uncompiled(files, budget);
    for inv in &mut catalog.invariants {
        inv.globs = PathGlobs::compile(&inv.paths, None, None);
    }
    catalog
}

/// [`parse_invariants_with`] leaving the globs uncompiled, for the caller to compile
/// (or reuse) once.
fn parse_uncompiled(
    mut files: Vec<(String, String)>,
    budget: &InvariantBudget,
) -> InvariantCatalog {
    files.sort();
    let mut catalog = InvariantCatalog::default();
    let mut ids = BTreeSet::new();
    for (file, text) in files {
        let problem = |line: Option<u32>, message: String| InvariantProblem {
            file: file.clone(),
            line,
            message,
        };
        let document = match bcode_skill::parse_document(&text) {
            Ok(document) => document,
            Err(err) => {
                let message = format!("malformed front matter: {}; skipped", err.message);
                catalog.problems.push(problem(err.line, message));
                continue;
            }
        };
        if !document.has_front_matter {
            let message = "no front matter (needs id, title and summary); skipped".to_owned();
            catalog.problems.push(problem(Some(1), message));
            continue;
        }
        let text_field = |name: &str| match document.fields.get(name) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            _ => None,
        };
        let missing: Vec<&str> = ["id", "title", "summary"]
            .into_iter()
            .filter(|name| text_field(name).is_none())
            .collect();
        let (Some(id), Some(title), Some(summary)) =
            (text_field("id"), text_field("title"), text_field("summary"))
        else {
            let message = format!("missing or empty {}; skipped", missing.join(", "));
            catalog.problems.push(problem(Some(1), message));
            continue;
        };
        if !ids.insert(id.clone()) {
            let message = format!("duplicate id `{id}`; skipped");
            catalog.problems.push(problem(Some(1), message));
            continue;
        }
        let mut paths = string_list(document.fields.get("paths"));
        if paths.len() > budget.max_globs_per_file {
            let message = format!(
                "{} path globs; only the first {} are used (invariants.max_globs_per_file)",
                paths.len(),
                budget.max_globs_per_file
            );
            catalog.problems.push(problem(None, message));
            paths.truncate(budget.max_globs_per_file);
        }
        // A glob is bounded as a skill's is: a longer one is left out, with
        // a note, and the invariant's other globs still apply.
        let mut n = 0;
        paths.retain(|glob| {
            n += 1;
            let fits = glob.len() <= MAX_GLOB_BYTES;
            if !fits {
                let message = format!(
                    "path glob {n} is {} bytes; a glob longer than {MAX_GLOB_BYTES} bytes is ignored",
                    glob.len()
                );
                catalog.problems.push(problem(None, message));
            }
            fits
        });
        catalog.invariants.push(Invariant {
            id,
            title,
            summary,
            keywords: string_list(document.fields.get("keywords")),
            paths,
            globs: PathGlobs::default(),
            body: document.body.trim().to_owned(),
            file,
        });
    }
    catalog
}

/// A list of strings, or one string as a one-item list; anything else is
/// empty (these fields are hints, so a wrong type does not drop the file).
fn string_list(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(all(test, unix))]
mod confinement_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::symlink;

    const RULE: &str = "---\nid: tabs\ntitle: Tabs\nsummary: Use tabs.\n---\nBody\n";

    #[test]
    fn invariant_files_linked_out_of_the_repository_are_problems() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let invariants = repo.join(INVARIANTS_DIR);
        std::fs::create_dir_all(&invariants).unwrap();
        std::fs::create_dir_all(repo.join("docs")).unwrap();
        std::fs::write(
            dir.path().join("secret.md"),
            "---\nid: secret\ntitle: S\nsummary: SECRET\n---\n",
        )
        .unwrap();
        std::fs::write(repo.join("docs/tabs.md"), RULE).unwrap();
        symlink(dir.path().join("secret.md"), invariants.join("a.md")).unwrap();
        symlink("../../docs/tabs.md", invariants.join("b.md")).unwrap();
        let catalog = gather_invariants(&repo);
        let ids: Vec<&str> = catalog.invariants.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["tabs"]);
        assert_eq!(catalog.problems.len(), 1);
        let problem = catalog.problems[0].to_string();
        assert!(
            problem.starts_with(".bcode/invariants/a.md: `"),
            "{problem}"
        );
        assert!(problem.contains("secret.md"), "{problem}");
        assert!(problem.ends_with("; skipped"), "{problem}");
    }

    #[test]
    fn an_invariants_folder_linked_out_of_the_repository_is_refused_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (repo, elsewhere) = (dir.path().join("repo"), dir.path().join("elsewhere"));
        std::fs::create_dir_all(repo.join(".bcode")).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("tabs.md"), RULE).unwrap();
        symlink(&elsewhere, repo.join(INVARIANTS_DIR)).unwrap();
        let catalog = gather_invariants(&repo);
        assert!(catalog.invariants.is_empty());
        assert_eq!(catalog.problems.len(), 1);
        assert_eq!(catalog.problems[0].file, INVARIANTS_DIR);
        assert!(
            catalog.problems[0].message.contains("elsewhere"),
            "{:?}",
            catalog.problems
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(f, t)| ((*f).to_owned(), (*t).to_owned()))
            .collect()
    }

    #[test]
    fn parses_sorts_and_reports_problems() {
        let catalog = parse_invariants(files(&[
            (
                "b.md",
                "---\nid: b\ntitle: B\nsummary: sb\npaths: [\"src/**\"]\n---\nBody B\n",
            ),
            (
                "a.md",
                "---\nid: a\ntitle: A\nsummary: sa\nkeywords: k\n---\n\nBody A\n",
            ),
            ("c.md", "no front matter"),
            ("d.md", "---\nid: a\ntitle: D\nsummary: sd\n---\n"),
            ("e.md", "---\nid: e\n---\n"),
            ("f.md", "---\nid: [\n---\n"),
        ]));
        let ids: Vec<&str> = catalog.invariants.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(catalog.invariants[0].keywords, ["k"]);
        assert_eq!(catalog.invariants[0].body, "Body A");
        assert_eq!(catalog.invariants[1].paths, ["src/**"]);
        let problems: Vec<String> = catalog.problems.iter().map(|p| p.file.clone()).collect();
        assert_eq!(problems, ["c.md", "d.md", "e.md", "f.md"]);
        assert_eq!(
            catalog.problems[2].message,
            "missing or empty title, summary; skipped"
        );
    }
}
