//! Cheap checks before any libgit2 call (edge I/O: `stat` and small bounded
//! reads only): find the `.git` entry that discovery will use, the folder
//! holding it (the repository root) and the git folder it names, and refuse
//! the repository when one of the files libgit2 opens on the way to `HEAD`
//! and the status is not a regular file, or is larger than libgit2 should
//! read. libgit2 opens those files with a blocking `open`, so a FIFO at
//! `.git/config` would hold its thread forever; and it reads each of them
//! whole into memory, so a sparse 20 GB `.git/index` would grow the process
//! by 20 GB while the probe's deadline only ends the wait, not the read.
//! The size comes from `stat`, so a huge sparse file is refused at once,
//! and refusing here costs no thread at all.
//!
//! The search mirrors libgit2's (`.git` in the start folder and each parent,
//! following symbolic links, never across a file-system boundary); where the
//! two could disagree, the probe's deadline still holds.

use std::path::{Component, Path, PathBuf};

/// What the checks found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Preflight {
    /// Nothing in the way. `root` is the folder holding the `.git` entry,
    /// when one was found (a bare repository has none).
    Clear {
        /// The repository root: the folder whose `.git` discovery uses.
        root: Option<PathBuf>,
    },
    /// `path` (shown relative to the root when it is below it) is not a
    /// regular file, so the repository is not read.
    Refused {
        /// The offending path, `/` separators.
        path: String,
    },
    /// `path` is larger than `limit` bytes, the most libgit2 is let read
    /// of it, so the repository is not read.
    TooLarge {
        /// The offending path, `/` separators, as for `Refused`.
        path: String,
        /// Its size as `stat` gives it (a sparse file's apparent size).
        len: u64,
        /// The limit it passed.
        limit: u64,
    },
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// The most bytes of a one-line file: the `.git` file, `HEAD`, `commondir`,
/// `gitdir`, a loose ref and `objects/info/alternates` hold a path or an id
/// each (a path is at most 4 KiB on Linux); 64 KiB leaves room for many
/// alternates.
const LINE_FILE_BYTES: u64 = 64 * KIB;

/// The most bytes of a config file (the repository's, `config.worktree`,
/// and every file they include) and of `info/exclude` and
/// `info/attributes`: real ones are a few KiB, and libgit2 keeps a parsed
/// copy several times the size of the text.
const CONFIG_BYTES: u64 = MIB;

/// The most bytes of `packed-refs`: 100,000 refs (a busy hosted
/// repository's pull-request refs) take about 7 MiB.
const PACKED_REFS_BYTES: u64 = 64 * MIB;

/// The most bytes of `shallow` and `info/grafts` (41 bytes per commit id).
const GRAFTS_BYTES: u64 = 16 * MIB;

/// The most bytes of the index. An index entry takes about 100 bytes, so a
/// checkout of 100,000 files has a 10 MiB index and the largest public
/// trees (about half a million files) stay under 60 MiB; 128 MiB leaves
/// twice that. libgit2 reads the index whole, once per status thread, so
/// this cap, times the status split's threads, is the most the index can
/// cost.
const INDEX_BYTES: u64 = 128 * MIB;

/// libgit2 follows `include.path` at most this deep.
const MAX_INCLUDE_DEPTH: usize = 10;

/// The most included config files checked; a config including more is
/// refused as if the last one were too large.
const MAX_INCLUDES: usize = 100;

/// Files libgit2 reads in the git folder of a working tree (`HEAD`, the
/// per-worktree config, the index, the worktree links and the shallow
/// roots), with the most bytes it is let read of each.
const GIT_DIR_FILES: &[(&str, u64)] = &[
    ("HEAD", LINE_FILE_BYTES),
    ("config.worktree", CONFIG_BYTES),
    ("index", INDEX_BYTES),
    ("commondir", LINE_FILE_BYTES),
    ("gitdir", LINE_FILE_BYTES),
    ("shallow", GRAFTS_BYTES),
];

/// Files libgit2 reads in the common git folder (the main repository's
/// `.git`, the same folder outside linked worktrees), with their limits.
const COMMON_DIR_FILES: &[(&str, u64)] = &[
    ("config", CONFIG_BYTES),
    ("packed-refs", PACKED_REFS_BYTES),
    ("objects/info/alternates", LINE_FILE_BYTES),
    ("info/exclude", CONFIG_BYTES),
    ("info/attributes", CONFIG_BYTES),
    ("info/grafts", GRAFTS_BYTES),
];

/// Config files whose includes are followed.
const CONFIG_FILES: &[&str] = &["config", "config.worktree"];

/// Runs the checks for a probe starting at `start`.
pub(super) fn check(start: &Path) -> Preflight {
    let (root, git_dir) = match find_git_dir(start) {
        Found::Nothing => return Preflight::Clear { root: None },
        Found::GitFileTooLarge { len } => {
            return Preflight::TooLarge {
                path: ".git".to_owned(),
                len,
                limit: LINE_FILE_BYTES,
            };
        }
        Found::GitDir { root, git_dir } => (root, git_dir),
    };
    let common = common_dir(&git_dir);
    let mut paths: Vec<(PathBuf, u64)> = GIT_DIR_FILES
        .iter()
        .map(|(f, limit)| (git_dir.join(f), *limit))
        .collect();
    paths.extend(
        COMMON_DIR_FILES
            .iter()
            .map(|(f, limit)| (common.join(f), *limit)),
    );
    // The branch `HEAD` names: its loose ref, per worktree or shared.
    if let Some(reference) = head_ref(&git_dir) {
        paths.push((git_dir.join(&reference), LINE_FILE_BYTES));
        paths.push((common.join(&reference), LINE_FILE_BYTES));
    }
    if let Some(refused) = first_refused(&paths, &root) {
        return refused;
    }
    // Checked after the files above, so an include is only read from a
    // config that passed them.
    let configs = [common.join(CONFIG_FILES[0]), git_dir.join(CONFIG_FILES[1])];
    let includes = included_configs(&configs);
    if let Some(refused) = first_refused(&includes, &root) {
        return refused;
    }
    Preflight::Clear { root: Some(root) }
}

/// The first of `paths` that is not a regular file or is larger than its
/// limit, as the refusal to report.
fn first_refused(paths: &[(PathBuf, u64)], root: &Path) -> Option<Preflight> {
    for (path, limit) in paths {
        // `stat` follows links as libgit2's `open` does; it never blocks
        // on a FIFO, and gives a sparse file's size without reading it. A
        // missing file is libgit2's business.
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        if !meta.is_file() {
            return Some(Preflight::Refused {
                path: shown(path, root),
            });
        }
        if meta.len() > *limit {
            return Some(Preflight::TooLarge {
                path: shown(path, root),
                len: meta.len(),
                limit: *limit,
            });
        }
    }
    None
}

/// Every file the configs in `configs` include (`include.path` and
/// `includeIf.*.path`, whatever the condition), followed as deep as libgit2
/// does, with the config limit. An include that is not a regular file or is
/// too large is listed but not read; [`first_refused`] then refuses it.
fn included_configs(configs: &[PathBuf]) -> Vec<(PathBuf, u64)> {
    let mut found: Vec<(PathBuf, u64)> = Vec::new();
    let mut level: Vec<PathBuf> = configs.to_vec();
    for _ in 0..MAX_INCLUDE_DEPTH {
        let mut next = Vec::new();
        for config in &level {
            let Some(text) = read_small(config, CONFIG_BYTES) else {
                continue;
            };
            let dir = config.parent().unwrap_or(Path::new(""));
            for include in include_paths(&text) {
                let Some(path) = resolve_include(dir, &include) else {
                    continue;
                };
                if found.len() >= MAX_INCLUDES {
                    // Too many to check: refuse through an impossible limit.
                    found.push((path, 0));
                    return found;
                }
                found.push((path.clone(), CONFIG_BYTES));
                next.push(path);
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    found
}

/// The `path` values of the `[include]` and `[includeIf "..."]` sections
/// of a config text, unquoted. A plain reading of git's syntax: a value
/// written with escapes or continued over lines may be missed, and then
/// the probe's deadline is what still holds.
fn include_paths(text: &str) -> Vec<String> {
    let mut in_include = false;
    let mut paths = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            let name = header
                .split(|c: char| c == ']' || c == '"' || c.is_whitespace() || c == '.')
                .next()
                .unwrap_or("");
            in_include =
                name.eq_ignore_ascii_case("include") || name.eq_ignore_ascii_case("includeif");
            continue;
        }
        if !in_include {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !key.trim().eq_ignore_ascii_case("path") {
            continue;
        }
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        if !value.is_empty() {
            paths.push(value.to_owned());
        }
    }
    paths
}

/// Where libgit2 looks for an included config: relative to the including
/// file's folder, or absolute. A `~/` path names the user's own files, not
/// the repository's, and is left alone.
fn resolve_include(dir: &Path, include: &str) -> Option<PathBuf> {
    if include.starts_with('~') {
        return None;
    }
    Some(dir.join(include))
}

/// What [`find_git_dir`] found.
enum Found {
    /// No `.git` at or above the start folder.
    Nothing,
    /// The nearest `.git` is a file larger than libgit2 should read.
    GitFileTooLarge { len: u64 },
    /// The folder holding the `.git` entry and the git folder it names.
    GitDir { root: PathBuf, git_dir: PathBuf },
}

/// The nearest folder at or above `start` holding a `.git` folder or
/// `.git` file (`gitdir: ...`), with the git folder it names.
fn find_git_dir(start: &Path) -> Found {
    // libgit2 searches from the real path: a relative or linked start
    // folder must reach the same parents.
    let Ok(start) = std::fs::canonicalize(start) else {
        return Found::Nothing;
    };
    let first_device = device(&start);
    for folder in start.ancestors() {
        if device(folder) != first_device {
            return Found::Nothing;
        }
        let dot_git = folder.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            return Found::GitDir {
                root: folder.to_path_buf(),
                git_dir: dot_git,
            };
        }
        if meta.is_file() {
            // libgit2 reads the `.git` file whole.
            if meta.len() > LINE_FILE_BYTES {
                return Found::GitFileTooLarge { len: meta.len() };
            }
            let Some(target) = read_small(&dot_git, LINE_FILE_BYTES) else {
                return Found::Nothing;
            };
            let Some(target) = target.strip_prefix("gitdir:") else {
                return Found::Nothing;
            };
            return Found::GitDir {
                root: folder.to_path_buf(),
                git_dir: folder.join(target.trim()),
            };
        }
        // Anything else (a FIFO, a socket) libgit2 passes over as well.
    }
    Found::Nothing
}

/// The common git folder: what `commondir` names, else the git folder.
fn common_dir(git_dir: &Path) -> PathBuf {
    let path = git_dir.join("commondir");
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => match read_small(&path, LINE_FILE_BYTES) {
            Some(common) if !common.trim().is_empty() => git_dir.join(common.trim()),
            _ => git_dir.to_path_buf(),
        },
        _ => git_dir.to_path_buf(),
    }
}

/// The reference a symbolic `HEAD` names (`refs/heads/main`), when it is a
/// plain relative path inside the git folder.
fn head_ref(git_dir: &Path) -> Option<PathBuf> {
    let head = read_small(&git_dir.join("HEAD"), LINE_FILE_BYTES)?;
    let name = head.strip_prefix("ref:")?.trim();
    let path = PathBuf::from(name);
    path.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then_some(path)
}

/// A small file's text, through `bcode-fs` (non-blocking, regular files
/// only, at most `max` bytes); `None` when it cannot be read as UTF-8.
fn read_small(path: &Path, max: u64) -> Option<String> {
    let bytes = bcode_fs::read_bounded(path, usize::try_from(max).ok()?).ok()?;
    String::from_utf8(bytes).ok()
}

/// `path` relative to `root` when below it, with `/` separators.
fn shown(path: &Path, root: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    super::status::display(relative)
}

#[cfg(unix)]
fn device(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|meta| meta.dev())
}

#[cfg(not(unix))]
fn device(_path: &Path) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_paths_are_read_from_include_sections_only() {
        let text = "[core]\n\tpath = not-this\n[include]\n\tpath = a.config\n\
                    [includeIf \"gitdir:~/src/\"]\n\tPath = \"b c.config\"\n\
                    [Include]\npath=/abs/d.config\n[user]\n\tpath = nor-this\n";
        assert_eq!(
            include_paths(text),
            ["a.config", "b c.config", "/abs/d.config"]
        );
        assert_eq!(resolve_include(Path::new("g"), "~/x"), None);
        assert_eq!(
            resolve_include(Path::new("g"), "a.config"),
            Some(PathBuf::from("g/a.config"))
        );
    }
}
