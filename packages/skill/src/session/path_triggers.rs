//! Path triggers: the `paths` globs of indexed summaries matched against
//! the repository paths a turn touched, so a skill written for `*.proto`
//! files is suggested (or activated) when the task edits one.
//!
//! Globs are read as the relevant-mode invariants read theirs (globset's
//! defaults: `*` also crosses `/`), relative to the repository root; a
//! leading `/` and a trailing `/` are dropped, and a glob matches a path
//! when it matches the path or one of its folders, so `src/api` covers
//! every file below it. No I/O: touched paths are text the host gives.

use std::collections::BTreeMap;

use bcode_skill_models::SkillSummary;
use globset::{Glob, GlobSet, GlobSetBuilder};

/// Whether `glob` parses; the reason when it does not.
pub fn check_glob(glob: &str) -> Result<(), String> {
    Glob::new(pattern(glob))
        .map(drop)
        .map_err(|err| err.kind().to_string())
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
    /// Every glob of every skill, one set; `None` when no skill has one.
    set: Option<GlobSet>,
    /// For each glob of `set`, by its index there: the skill's slot in the
    /// keyword index, the glob's position in the skill's list, and the glob
    /// as written.
    owners: Vec<(usize, usize, String)>,
}

impl PathTriggers {
    /// The globs of `skills`, slot `n` being the `n`-th skill given.
    pub fn build<'a>(skills: impl Iterator<Item = &'a SkillSummary>) -> PathTriggers {
        let mut builder = GlobSetBuilder::new();
        let mut owners = Vec::new();
        for (slot, skill) in skills.enumerate() {
            let Some(details) = skill.manifest.details.as_deref() else {
                continue;
            };
            for (order, glob) in details.paths.iter().enumerate() {
                // Globs were checked at parse time; one that no longer
                // parses (a summary from elsewhere) only cannot match.
                if let Ok(compiled) = Glob::new(pattern(glob)) {
                    builder.add(compiled);
                    owners.push((slot, order, glob.clone()));
                }
            }
        }
        if owners.is_empty() {
            return PathTriggers::default();
        }
        match builder.build() {
            Ok(set) => PathTriggers {
                set: Some(set),
                owners,
            },
            Err(_) => PathTriggers::default(),
        }
    }

    /// Whether any skill has a glob.
    pub fn is_empty(&self) -> bool {
        self.set.is_none()
    }

    /// The skills (by slot) whose globs match one of `touched` (already
    /// [`normalize`]d), each with what matched.
    pub fn matches(&self, touched: &[String]) -> BTreeMap<usize, PathMatch> {
        let mut found: BTreeMap<usize, (BTreeMap<usize, String>, Vec<String>)> = BTreeMap::new();
        let Some(set) = &self.set else {
            return BTreeMap::new();
        };
        let mut hits = Vec::new();
        for path in touched {
            for candidate in path_and_folders(path) {
                set.matches_into(candidate, &mut hits);
                for &hit in &hits {
                    let Some((slot, order, glob)) = self.owners.get(hit) else {
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
        assert!(check_glob("src/[").is_err());
        assert!(check_glob("src/{a,b}/*.rs").is_ok());
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
                    location: std::path::PathBuf::from("/r/s/SKILL.md"),
                    directory_override: None,
                    body_offset: 0,
                }
            })
            .collect();
        PathTriggers::build(skills.iter())
    }
}
