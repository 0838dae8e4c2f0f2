//! How a file path is written for the model: `/` separators on every
//! platform (and only the platform's separator is replaced, so a Unix file
//! name that contains `\` stays intact). [`PathDisplay`] shows paths under
//! a few roots under other names (pinned roots, for golden files).

use std::borrow::Cow;
use std::path::{Component, MAIN_SEPARATOR, Path, PathBuf};

/// `path` as text for the model. Borrowed (no allocation) for the usual
/// UTF-8 path on a `/` platform; invalid UTF-8 becomes U+FFFD.
pub fn model_path(path: &Path) -> Cow<'_, str> {
    // `to_str` validates in one fast pass; the lossy form is only for
    // the rare path that is not UTF-8.
    let text = path
        .to_str()
        .map_or_else(|| path.to_string_lossy(), Cow::Borrowed);
    if MAIN_SEPARATOR == '/' {
        text
    } else {
        Cow::Owned(text.replace(MAIN_SEPARATOR, "/"))
    }
}

/// Shows paths under a few roots under other names: a checkout at
/// `/home/ci/build/proj` shown as `/src/proj`, so what the model reads does
/// not depend on where the files are. With no roots it is [`model_path`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathDisplay {
    /// `(real root, shown root)`, longest real root first.
    roots: Vec<(PathBuf, String)>,
}

impl PathDisplay {
    /// Shows paths as they are.
    pub fn new() -> PathDisplay {
        PathDisplay::default()
    }

    /// Also shows paths under `real` under `shown` instead (the most
    /// specific root wins when roots nest).
    pub fn with_root(mut self, real: impl Into<PathBuf>, shown: impl Into<String>) -> PathDisplay {
        let real = real.into();
        let shown = shown.into();
        if !self.roots.iter().any(|(r, _)| *r == real) {
            self.roots.push((real, shown));
            self.roots
                .sort_by_key(|(r, _)| std::cmp::Reverse(r.components().count()));
        }
        self
    }

    /// Whether every path is shown as it is.
    pub fn is_identity(&self) -> bool {
        self.roots.is_empty()
    }

    /// `path` under its shown root, or as it is; never the real root's
    /// name when one matches.
    pub fn path(&self, path: &Path) -> PathBuf {
        for (real, shown) in &self.roots {
            if let Ok(rest) = path.strip_prefix(real) {
                // Joining an empty rest would add a trailing separator.
                return if rest.as_os_str().is_empty() {
                    PathBuf::from(shown)
                } else {
                    Path::new(shown).join(rest)
                };
            }
        }
        path.to_path_buf()
    }

    /// [`PathDisplay::path`] as text for the model ([`model_path`]).
    pub fn show<'a>(&self, path: &'a Path) -> Cow<'a, str> {
        if self.roots.iter().any(|(real, _)| path.starts_with(real)) {
            Cow::Owned(model_path(&self.path(path)).into_owned())
        } else {
            model_path(path)
        }
    }
}

/// `path` with `.` dropped and `..` applied to the component before it,
/// without touching the filesystem (a symlink is taken as named): the
/// answer to "is this written path inside that folder?" before anything is
/// opened. `..` of the root is the root; a relative path keeps the `..`
/// that lead above its start.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                Some(Component::ParentDir | Component::CurDir) | None => out.push(component),
            },
            other => out.push(other),
        }
    }
    out
}

/// The folders from `root` down to `work`, root first; only `root` when
/// `work` is not below it.
pub fn folders_down_to(root: &Path, work: &Path) -> Vec<PathBuf> {
    let work = lexical(work);
    let root = lexical(root);
    let Ok(rest) = work.strip_prefix(&root) else {
        return vec![root];
    };
    let mut folders = vec![root.clone()];
    let mut here = root.clone();
    for part in rest.components() {
        here.push(part);
        folders.push(here.clone());
    }
    folders
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_run_from_the_root_down() {
        assert_eq!(
            folders_down_to(Path::new("/r"), Path::new("/r/a/b")),
            [
                PathBuf::from("/r"),
                PathBuf::from("/r/a"),
                PathBuf::from("/r/a/b")
            ]
        );
        assert_eq!(
            folders_down_to(Path::new("/r"), Path::new("/r")),
            [PathBuf::from("/r")]
        );
        assert_eq!(
            folders_down_to(Path::new("/r"), Path::new("/elsewhere")),
            [PathBuf::from("/r")]
        );
    }

    #[test]
    fn lexical_applies_dot_dot_without_leaving_the_root() {
        let cases = [
            ("/r/.bcode/../x/./y", "/r/x/y"),
            ("/r/../../etc", "/etc"),
            ("/..", "/"),
            ("/repo/.bcode/../../elsewhere", "/elsewhere"),
            ("a/../..", ".."),
            ("../../x", "../../x"),
            ("./a/./b/..", "a"),
        ];
        for (path, expected) in cases {
            assert_eq!(lexical(Path::new(path)), PathBuf::from(expected), "{path}");
        }
    }

    #[test]
    fn display_maps_the_most_specific_root() {
        let display = PathDisplay::new()
            .with_root("/home/ci", "/home/user")
            .with_root("/home/ci/build/proj", "/src/proj");
        assert_eq!(
            display.show(Path::new("/home/ci/build/proj/BCODE.md")),
            "/src/proj/BCODE.md"
        );
        assert_eq!(display.show(Path::new("/home/ci/build/proj")), "/src/proj");
        assert_eq!(display.show(Path::new("/home/ci/.x")), "/home/user/.x");
        // A sibling that only shares a text prefix is not under the root.
        assert_eq!(
            display.show(Path::new("/home/ci/build/project/a")),
            "/home/user/build/project/a"
        );
        assert_eq!(display.show(Path::new("/etc/x")), "/etc/x");
        assert!(PathDisplay::new().is_identity());
    }

    #[test]
    fn keeps_unix_paths_as_they_are() {
        assert_eq!(
            model_path(Path::new("/repo/skills/a\\b.md")),
            "/repo/skills/a\\b.md"
        );
        assert!(matches!(model_path(Path::new("/x/y")), Cow::Borrowed(_)));
    }
}
