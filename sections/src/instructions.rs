//! The `repository_context` stage: `BCODE.md` then `AGENTS.md` of the
//! repository root and then of each folder from the root down to the working
//! folder, each included whole as its own section named by its path from the
//! root (`repository_context:BCODE.md`,
//! `repository_context:packages/web/AGENTS.md`), bounded only when
//! `system_prompt.repository_instructions_max_chars` is set, with the marker
//! naming the file that holds the full text.
//!
//! [`gather`] is the edge that reads the files; the stage renders the
//! [`RepositoryInstructions`] it finds in the inputs.

use std::path::{Path, PathBuf};

/// The instruction files, in the order they are placed.
pub const INSTRUCTION_FILES: &[&str] = &["BCODE.md", "AGENTS.md"];

/// The template of one instruction file.
pub const INSTRUCTIONS_TEMPLATE: &str = "sections/repo_instructions.j2";

/// The instruction files found in a repository.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepositoryInstructions {
    /// Present files, in [`INSTRUCTION_FILES`] order.
    pub files: Vec<InstructionFile>,
    /// Files that exist but could not be used, with why (shown by
    /// `render --explain`; the other file is still placed).
    pub problems: Vec<String>,
}

/// One instruction file's name, location and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstructionFile {
    /// Its path from the repository root, `/`-separated: `BCODE.md`, or
    /// `packages/web/AGENTS.md` for a folder below the root.
    pub name: String,
    /// The folder it is in, from the root (`packages/web`); empty for the
    /// root's own files.
    pub folder: String,
    /// Absolute path with `/` separators, as shown to the model.
    pub path: String,
    /// The file's whole text, unbounded here (a file over the 8 MiB read
    /// cap is a problem instead); the stage bounds it when rendering.
    pub text: String,
}

/// The most of one instruction file that is read (8 MiB).
const MAX_INSTRUCTION_FILE_BYTES: usize = 8 * 1024 * 1024;

/// Reads the instruction files of the repository at `repo` for the working
/// folder `work`: those of the root, then of each folder down to `work`. A
/// missing file is simply absent; an unreadable or non-UTF-8 one is a
/// problem, never an error. Each must resolve inside the repository: a link
/// out of it (or into `/proc`, `/sys` or `/dev`) is a problem naming the link
/// and its target, and the other files are still read.
pub fn gather(repo: &Path, work: &Path) -> RepositoryInstructions {
    let mut out = RepositoryInstructions::default();
    let confinement = bcode_fs::Confinement::within(repo);
    for (path, folder, name) in instruction_files(repo, work) {
        // Untruncated in the prompt by default, but never read without limit
        // or from a FIFO: the read cap is far above any real instructions file.
        match confinement.read_bounded(&path, MAX_INSTRUCTION_FILE_BYTES) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => out.files.push(InstructionFile {
                    name,
                    folder,
                    path: model_path(&path),
                    text,
                }),
                Err(_) => out
                    .problems
                    .push(format!("{name} is not valid UTF-8 and was left out")),
            },
            Err(bcode_fs::ReadError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) if err.escape().is_some() => {
                out.problems.push(format!("{name} was left out: {err}"))
            }
            Err(err) => out
                .problems
                .push(format!("{name} could not be read and was left out: {err}")),
        }
    }
    out
}

/// Every instruction file [`gather`] reads, in order: `(path, folder from
/// the root, path from the root)`.
pub fn instruction_files(repo: &Path, work: &Path) -> Vec<(PathBuf, String, String)> {
    let mut files = Vec::new();
    for folder in bcode_text::folders_down_to(repo, work) {
        let shown = folder
            .strip_prefix(repo)
            .map(|rest| bcode_text::model_path(rest).into_owned())
            .unwrap_or_default();
        for name in INSTRUCTION_FILES {
            let from_root = if shown.is_empty() {
                (*name).to_owned()
            } else {
                format!("{shown}/{name}")
            };
            files.push((folder.join(name), shown.clone(), from_root));
        }
    }
    files
}

/// Paths shown to the model use `/` on every platform (one helper for the
/// whole project, in `bcode-text`).
pub(crate) fn model_path(path: &Path) -> String {
    bcode_text::model_path(path).into_owned()
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_out_of_the_repository_are_problems_and_links_inside_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("docs")).unwrap();
        std::fs::write(dir.path().join("secret.md"), "SECRET").unwrap();
        std::fs::write(repo.join("docs/agents.md"), "Use tabs.").unwrap();
        symlink(dir.path().join("secret.md"), repo.join("BCODE.md")).unwrap();
        symlink("docs/agents.md", repo.join("AGENTS.md")).unwrap();
        let found = gather(&repo, &repo);
        let texts: Vec<&str> = found.files.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, ["Use tabs."]);
        assert_eq!(found.problems.len(), 1);
        let problem = &found.problems[0];
        assert!(problem.starts_with("BCODE.md was left out: `"), "{problem}");
        assert!(problem.contains("secret.md"), "{problem}");
        assert!(!found.problems.iter().any(|p| p.contains("SECRET")));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_instruction_file_linked_into_proc_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        symlink("/proc/self/environ", dir.path().join("AGENTS.md")).unwrap();
        let found = gather(dir.path(), dir.path());
        assert!(found.files.is_empty());
        assert!(
            found.problems[0].contains("under /proc, /sys or /dev"),
            "{:?}",
            found.problems
        );
    }
}
