//! Path triggers: the `paths` globs of indexed summaries matched against
//! the repository paths a turn touched, so a skill written for `*.proto`
//! files is suggested (or activated) when the task edits one.
//!
//! Globs are read as the relevant-mode invariants read theirs (globset's
//! defaults: `*` also crosses `/`), relative to the repository root; a
//! leading `/` and a trailing `/` are dropped, and a glob matches a path
//! when it matches the path or one of its folders, so `src/api` covers
//! every file below it. No I/O: touched paths are text the host gives.
//!
//! A repository writes these globs, so each is bounded
//! ([`MAX_GLOB_BYTES`], [`MAX_GLOBS_PER_SKILL`]; parsing reports what it
//! leaves out as `invalid_paths_glob`), and one skill's globs cannot stop
//! another's: globset limits the compiled size of a whole set, so when the
//! set of every skill's globs cannot be built, each skill's globs are
//! compiled as a set of their own.

use std::collections::BTreeMap;

use bcode_skill_models::SkillSummary;
use globset::{Glob, GlobSet, GlobSetBuilder};

/// The longest glob compiled, in bytes as written. Real globs are tens of
/// bytes (`src/**/*.{ts,tsx}`) and a long list of alternatives a few
/// hundred; a glob compiles to an automaton about as large as it is long
/// (up to some 25 ms per KiB in a debug build), and globset refuses a set
/// past its size limit somewhere above 100 KB of `?` or `**/`, so 64
/// globs of this size, a skill's most, still build as one set.
pub const MAX_GLOB_BYTES: usize = 1024;

/// The most `paths` globs one skill has compiled (the first ones written),
/// as many as an invariant keeps by default (`invariants.max_globs_per_file`).
pub const MAX_GLOBS_PER_SKILL: usize = 64;

/// Why a glob is not used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobRefusal {
    /// It is longer than [`MAX_GLOB_BYTES`] (its length in bytes).
    TooLong(usize),
    /// It does not parse (globset's reason).
    Invalid(String),
}

/// Whether `glob` is used: within [`MAX_GLOB_BYTES`] and parsing.
pub fn check_glob(glob: &str) -> Result<Glob, GlobRefusal> {
    if glob.len() > MAX_GLOB_BYTES {
        return Err(GlobRefusal::TooLong(glob.len()));
    }
    Glob::new(pattern(glob)).map_err(|err| GlobRefusal::Invalid(err.kind().to_string()))
}

/// The pattern globset is given for a glob as written.
fn pattern(glob: &str) -> &str {
    let glob = glob.trim();
    let glob = glob.strip_prefix("./").unwrap_or(glob);
    let glob = glob.trim_start_matches('/');
    match glob.strip_suffix('/') {
        Some(folder) if !folder.is_empty() => folder,
        _ => glob,
    }
}

/// A touched path as the globs see it: `/`-separated, relative to the
/// repository root, without `./`; `None` for a path that is absolute or
/// climbs out (`..`), which no repository glob may match.
pub fn normalize(path: &str) -> Option<String> {
    let path = path.replace('\\', "/");
    if path.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// What one skill's globs matched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathMatch {
    /// The globs that matched, as the skill wrote them, in its order.
    pub globs: Vec<String>,
    /// The touched paths they matched, in the order given, each once.
    pub paths: Vec<String>,
}

/// The compiled `paths` globs of one registry snapshot.
#[derive(Clone, Debug, Default)]
pub struct PathTriggers {
    /// One group holding every skill's globs, or, when globset could not
    /// build that set, one group per skill whose own set builds; empty when
    /// no skill has a glob.
    groups: Vec<GlobGroup>,
}

/// Globs compiled as one set.
#[derive(Clone, Debug)]
struct GlobGroup {
    set: GlobSet,
    /// For each glob of `set`, by its index there: the skill's slot in the
    /// keyword index, the glob's position in the skill's list, and the glob
    /// as written.
    owners: Vec<(usize, usize, String)>,
}

impl GlobGroup {
    /// The set of `globs` (`(slot, order, written, compiled)`); `None`
    /// when there is none or globset refuses the set.
    fn build(globs: &[(usize, usize, String, Glob)]) -> Option<GlobGroup> {
        if globs.is_empty() {
            return None;
        }
        let mut builder = GlobSetBuilder::new();
        for (.., compiled) in globs {
            builder.add(compiled.clone());
        }
        let set = builder.build().ok()?;
        let owners = globs
            .iter()
            .map(|(slot, order, written, _)| (*slot, *order, written.clone()))
            .collect();
        Some(GlobGroup { set, owners })
    }
}

impl PathTriggers {
    /// The globs of `skills`, slot `n` being the `n`-th skill given.
    pub fn build<'a>(skills: impl Iterator<Item = &'a SkillSummary>) -> PathTriggers {
        let mut globs = Vec::new();
        for (slot, skill) in skills.enumerate() {
            let written = skill
                .manifest
                .details()
                .paths()
                .iter()
                .take(MAX_GLOBS_PER_SKILL);
            for (order, glob) in written.enumerate() {
                // Globs were checked at parse time; one that no longer
                // passes (a summary from elsewhere) only cannot match.
                if let Ok(compiled) = check_glob(glob) {
                    globs.push((slot, order, glob.clone(), compiled));
                }
            }
        }
        PathTriggers::compile(&globs)
    }

    /// `globs` (by skill slot, in order) as one set when globset builds it,
    /// else as one set per skill, a skill whose own set fails left out.
    fn compile(globs: &[(usize, usize, String, Glob)]) -> PathTriggers {
        if globs.is_empty() {
            return PathTriggers::default();
        }
        if let Some(shared) = GlobGroup::build(globs) {
            return PathTriggers {
                groups: vec![shared],
            };
        }
        PathTriggers {
            groups: globs
                .chunk_by(|a, b| a.0 == b.0)
                .filter_map(GlobGroup::build)
                .collect(),
        }
    }

    /// Whether any skill has a glob.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The skills (by slot) whose globs match one of `touched` (already
    /// [`normalize`]d), each with what matched.
    pub fn matches(&self, touched: &[String]) -> BTreeMap<usize, PathMatch> {
        let mut found: BTreeMap<usize, (BTreeMap<usize, String>, Vec<String>)> = BTreeMap::new();
        let mut hits = Vec::new();
        for path in touched {
            for candidate in path_and_folders(path) {
                for group in &self.groups {
                    group.set.matches_into(candidate, &mut hits);
                    for &hit in &hits {
                        let Some((slot, order, glob)) = group.owners.get(hit) else {
                            continue;
                        };
                        let (globs, paths) = found.entry(*slot).or_default();
                        globs.entry(*order).or_insert_with(|| glob.clone());
                        if !paths.contains(path) {
                            paths.push(path.clone());
                        }
                    }
                }
            }
        }
        found
            .into_iter()
            .map(|(slot, (globs, paths))| {
                let globs = globs.into_values().collect();
                (slot, PathMatch { globs, paths })
            })
            .collect()
    }
}

/// `path`, then each folder above it (`a/b/c`, `a/b`, `a`).
fn path_and_folders(path: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(path), |p| p.rsplit_once('/').map(|(folder, _)| folder))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_paths_are_made_relative_and_climbing_ones_refused() {
        for (given, expected) in [
            ("src/main.rs", Some("src/main.rs")),
            ("./src//main.rs", Some("src/main.rs")),
            ("src\\win.rs", Some("src/win.rs")),
            ("src/./a.rs", Some("src/a.rs")),
            ("/etc/passwd", None),
            ("../outside.rs", None),
            ("src/../../x", None),
            ("", None),
            (".", None),
        ] {
            assert_eq!(normalize(given).as_deref(), expected, "{given}");
        }
    }

    #[test]
    fn a_glob_matches_a_path_or_a_folder_above_it() {
        for (glob, path, matches) in [
            ("*.rs", "src/deep/main.rs", true),
            ("src/**/*.rs", "src/a/b.rs", true),
            ("src/**/*.rs", "docs/a.rs", false),
            ("src/api", "src/api/handler.ts", true),
            ("src/api/", "src/api/handler.ts", true),
            ("/src/api", "src/api/handler.ts", true),
            ("./docs/*.md", "docs/intro.md", true),
            ("src/api", "src/apis/x.ts", false),
            ("**/*.proto", "proto/v1/a.proto", true),
            ("Cargo.toml", "Cargo.toml", true),
        ] {
            let triggers = triggers_of(&[&[glob]]);
            assert_eq!(
                !triggers.matches(&[path.to_owned()]).is_empty(),
                matches,
                "{glob} on {path}"
            );
        }
        assert!(matches!(check_glob("src/["), Err(GlobRefusal::Invalid(_))));
        assert!(check_glob("src/{a,b}/*.rs").is_ok());
        assert!(check_glob(&"?".repeat(MAX_GLOB_BYTES)).is_ok());
        assert_eq!(
            check_glob(&"?".repeat(MAX_GLOB_BYTES + 1)).err(),
            Some(GlobRefusal::TooLong(MAX_GLOB_BYTES + 1))
        );
    }

    #[test]
    fn matches_name_each_glob_and_path_once_in_order() {
        let triggers = triggers_of(&[&["*.md", "docs/**"], &[], &["*.rs"]]);
        assert!(!triggers.is_empty());
        let touched: Vec<String> = ["docs/a.md", "src/x.rs", "docs/a.md", "README.md"]
            .map(str::to_owned)
            .into();
        let found = triggers.matches(&touched);
        assert_eq!(
            found,
            BTreeMap::from([
                (
                    0,
                    PathMatch {
                        globs: vec!["*.md".into(), "docs/**".into()],
                        paths: vec!["docs/a.md".into(), "README.md".into()],
                    }
                ),
                (
                    2,
                    PathMatch {
                        globs: vec!["*.rs".into()],
                        paths: vec!["src/x.rs".into()],
                    }
                ),
            ])
        );
        assert!(triggers_of(&[&[]]).is_empty());
    }

    /// A skill at both bounds, globs of the costliest kind per byte (`?`),
    /// still builds as one set: the fallback below never costs a skill
    /// whose globs are within the bounds.
    #[test]
    fn a_skill_at_the_bounds_builds_as_one_set() {
        let globs: Vec<String> = (0..MAX_GLOBS_PER_SKILL)
            .map(|n| format!("{}{n:02}", "?".repeat(MAX_GLOB_BYTES - 2)))
            .collect();
        let globs: Vec<&str> = globs.iter().map(String::as_str).collect();
        let triggers = triggers_of(&[&globs]);
        assert_eq!(triggers.groups.len(), 1);
        let path = format!("{}07", "a".repeat(MAX_GLOB_BYTES - 2));
        assert_eq!(
            triggers.matches(std::slice::from_ref(&path)),
            BTreeMap::from([(
                0,
                PathMatch {
                    globs: vec![globs[7].to_owned()],
                    paths: vec![path.clone()],
                }
            )])
        );
    }

    /// Issue 38, item 14: globset refuses a whole set past its size limit,
    /// so one skill's huge glob (here past the bounds, as a summary from
    /// elsewhere could hold) stopped every skill's globs. The set falls
    /// back to one per skill, and only the skill whose own set fails loses
    /// its globs.
    #[test]
    fn a_set_globset_refuses_costs_only_the_skill_that_broke_it() {
        let huge = "?".repeat(200_000);
        let glob = |slot: usize, written: &str| {
            let compiled = Glob::new(written).unwrap_or_else(|_| unreachable!());
            (slot, 0, written.to_owned(), compiled)
        };
        let triggers =
            PathTriggers::compile(&[glob(0, "*.md"), glob(1, &huge), glob(2, "**/*.proto")]);
        assert_eq!(triggers.groups.len(), 2, "skill 1's own set is refused");
        let touched: Vec<String> = ["api/a.proto", "README.md"].map(str::to_owned).into();
        assert_eq!(
            triggers.matches(&touched),
            BTreeMap::from([
                (
                    0,
                    PathMatch {
                        globs: vec!["*.md".into()],
                        paths: vec!["README.md".into()],
                    }
                ),
                (
                    2,
                    PathMatch {
                        globs: vec!["**/*.proto".into()],
                        paths: vec!["api/a.proto".into()],
                    }
                ),
            ])
        );
    }

    fn triggers_of(globs: &[&[&str]]) -> PathTriggers {
        let skills: Vec<SkillSummary> = globs
            .iter()
            .enumerate()
            .map(|(n, globs)| {
                let id = bcode_skill_models::SkillId::parse(&format!("s{n}"))
                    .unwrap_or_else(|_| unreachable!());
                let manifest = bcode_skill_models::SkillManifest::new(id).with_details(
                    bcode_skill_models::SkillDetails {
                        paths: globs.iter().map(|g| (*g).to_owned()).collect(),
                        ..Default::default()
                    },
                );
                SkillSummary {
                    manifest,
                    source: std::sync::Arc::new(bcode_skill_models::SkillSource {
                        kind: bcode_skill_models::SourceKind::Config,
                        label: "config:t".into(),
                        ordinal: 0,
                        root: None,
                        provider: None,
                    }),
                    layout: bcode_skill_models::SkillLayout::Folder,
                    location: std::path::Path::new("/r/s/SKILL.md").into(),
                    directory_override: None,
                    body_offset: 0,
                }
            })
            .collect();
        PathTriggers::build(skills.iter())
    }
}
