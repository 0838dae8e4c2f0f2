//! The `repository_context` stage: `BCODE.md` then `AGENTS.md` of the
//! repository root and then of each folder from the root down to the working
//! folder, each included whole as its own section named by its path from the
//! root (`repository_context:BCODE.md`,
//! `repository_context:packages/web/AGENTS.md`), bounded only when
//! `system_prompt.repository_instructions_max_chars` is set, with the marker
//! naming the file that holds the full text.
//!
//! All of them together are bounded by
//! `system_prompt.repository_instructions_total_max_chars` (a generous
//! default no repository can raise): [`TotalBudget`] decides, the same way
//! here and in the stage, which file the total cuts (with the marker) and
//! which files after it are left out; those are not even read, so memory is
//! bounded by the total (and one file's 8 MiB cap), not by how many links
//! or folders a repository holds. A file reached again through another link
//! (the same device and inode) is placed once.
//!
//! [`gather_instructions`] is the edge that reads the files; the stage renders the
//! [`RepositoryInstructions`] it finds in the inputs.

use std::path::{Path, PathBuf};

use bcode_prompt_config::SystemPromptConfig;

/// The instruction files, in the order they are placed.
pub const INSTRUCTION_FILES: &[&str] = &["BCODE.md", "AGENTS.md"];

/// The template of one instruction file.
pub const INSTRUCTIONS_TEMPLATE: &str = "sections/repo_instructions.j2";

/// The config key of the total bound, as notes name it.
pub const TOTAL_KEY: &str = "system_prompt.repository_instructions_total_max_chars";

/// The instruction files found in a repository.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepositoryInstructions {
    /// Present files, in `INSTRUCTION_FILES` order.
    pub files: Vec<InstructionFile>,
    /// Files that exist but could not be used, with why (shown by
    /// `render --explain`; the other file is still placed), and the files
    /// left out past the total.
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

/// The bounds on instruction text: each file's, and all files' together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstructionLimits {
    /// `system_prompt.repository_instructions_max_chars`: each file's text
    /// (`None`: unbounded).
    pub per_file: Option<usize>,
    /// `system_prompt.repository_instructions_total_max_chars`: all files'
    /// text together.
    pub total: usize,
}

impl InstructionLimits {
    /// The limits `config` sets.
    pub fn from_config(config: &SystemPromptConfig) -> Self {
        InstructionLimits {
            per_file: config.repository_instructions_max_chars,
            total: config.repository_instructions_total_max_chars,
        }
    }
}

impl Default for InstructionLimits {
    fn default() -> Self {
        InstructionLimits::from_config(&SystemPromptConfig::default())
    }
}

/// How much of one file's text the total leaves it, in placing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Share {
    /// All of it, up to its own limit (`repository_instructions_max_chars`).
    Own,
    /// This many characters (the rest of the total, which is below its own
    /// limit): the file is cut with the marker, and the files after it are
    /// left out.
    CutByTotal(usize),
    /// None: an earlier file was cut by the total; this one is left out.
    PastTotal,
}

/// The running account of the total bound over the files in placing order.
/// A file counts its text as the model sees it (cleaned; see
/// `bcode_text::clean_body`), at most its own limit. The first file that
/// does not fit in what is left is cut to it, even when nothing is left (the
/// model then sees the marker alone, so it always learns where the cut is),
/// and every file after it is left out. [`gather_instructions`] and the stage keep the
/// same account, so the files gather leaves unread are the ones the stage
/// leaves out.
#[derive(Clone, Debug)]
pub struct TotalBudget {
    limits: InstructionLimits,
    used: usize,
    cut: bool,
}

impl TotalBudget {
    /// Nothing placed yet.
    pub fn new(limits: InstructionLimits) -> Self {
        TotalBudget {
            limits,
            used: 0,
            cut: false,
        }
    }

    /// Whether the total has cut a file: every later one is left out.
    pub fn is_spent(&self) -> bool {
        self.cut
    }

    /// The share of the next file, whose cleaned text has `chars`
    /// characters, and that file counted.
    pub fn take(&mut self, chars: usize) -> Share {
        if self.cut {
            return Share::PastTotal;
        }
        let own = self.limits.per_file.unwrap_or(usize::MAX);
        let left = self.limits.total.saturating_sub(self.used);
        if chars > left && left < own {
            self.cut = true;
            self.used = self.limits.total;
            return Share::CutByTotal(left);
        }
        self.used = self.used.saturating_add(chars.min(own));
        Share::Own
    }
}

/// Reads the instruction files of the repository at `repo` for the working
/// folder `work`: those of the root, then of each folder down to `work`. A
/// missing file is simply absent; an unreadable or non-UTF-8 one is a
/// problem, never an error. Each must resolve inside the repository: a link
/// out of it (or into `/proc`, `/sys` or `/dev`) is a problem naming the link
/// and its target, and the other files are still read. A file that is one
/// already read (the same device and inode, through a link) is a problem
/// naming that one; files past `limits.total` (see `TotalBudget`) are
/// problems too, and are not read.
///
/// A file in a folder above `work` is read only when `owners` takes both
/// the folder and the file for the user's (see `bcode_fs::Ownership`);
/// otherwise it is a problem naming the owner. The working folder's own
/// files are the user's choice.
pub fn gather_instructions(
    repo: &Path,
    work: &Path,
    limits: &InstructionLimits,
    owners: &bcode_fs::Ownership,
) -> RepositoryInstructions {
    let mut out = RepositoryInstructions::default();
    let confinement = bcode_fs::Confinement::within(repo);
    let work = bcode_text::lexical(work);
    // The last folder above `work` checked, and what the check said.
    let mut checked: Option<(PathBuf, Result<(), bcode_fs::NotOwned>)> = None;
    let mut budget = TotalBudget::new(*limits);
    // Each file read so far, by identity, with its name.
    let mut seen: Vec<(Identity, String)> = Vec::new();
    for (path, folder, name) in instruction_files(repo, &work) {
        if budget.is_spent() {
            // Not read; only a file that exists is worth a note, and one
            // already placed is named as such (its `stat` says so).
            let identity = std::fs::metadata(&path)
                .ok()
                .and_then(|meta| bcode_fs::FileStamp::of(&meta).identity());
            if let Some(first) = first_seen(&seen, identity) {
                out.problems.push(same_file(&name, first));
            } else if std::fs::symlink_metadata(&path).is_ok() {
                out.problems.push(format!(
                    "{name} was left out: the instructions before it fill {TOTAL_KEY} ({} characters)",
                    limits.total
                ));
            }
            continue;
        }
        // A folder above the working folder, and a file in it, must be the
        // user's (checked on the opened file, before a byte is read).
        let above = path.parent().filter(|folder| *folder != work);
        let owner_check = |meta: &std::fs::Metadata| -> Result<(), bcode_fs::NotOwned> {
            let Some(folder) = above else {
                return Ok(());
            };
            let folder_check = match &checked {
                Some((known, result)) if known == folder => result.clone(),
                _ => {
                    let result = owners.check(folder);
                    checked = Some((folder.to_path_buf(), result.clone()));
                    result
                }
            };
            folder_check?;
            owners.check_metadata(&path, meta)
        };
        // Untruncated in the prompt by default, but never read without limit
        // or from a FIFO: the read cap is far above any real instructions file.
        match read(&confinement, &path, owner_check) {
            Ok(Read::Foreign(refused)) => out.problems.push(format!(
                "{name} was left out: {refused}, and it is above the working folder; \
                 if you trust it, add it to `trust.safe_directories` in your user config"
            )),
            Ok(Read::Text(identity, bytes)) => {
                if let Some(first) = first_seen(&seen, identity) {
                    out.problems.push(same_file(&name, first));
                    continue;
                }
                match String::from_utf8(bytes) {
                    Ok(text) => {
                        budget.take(bcode_text::clean_body(&text).chars().count());
                        if let Some(identity) = identity {
                            seen.push((identity, name.clone()));
                        }
                        out.files.push(InstructionFile {
                            name,
                            folder,
                            path: model_path(&path),
                            text,
                        });
                    }
                    Err(_) => out
                        .problems
                        .push(format!("{name} is not valid UTF-8 and was left out")),
                }
            }
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

/// A file's device and inode.
type Identity = (u64, u64);

/// The name of the file read before with this identity, if any.
fn first_seen(seen: &[(Identity, String)], identity: Option<Identity>) -> Option<&str> {
    let identity = identity?;
    seen.iter()
        .find(|(known, _)| *known == identity)
        .map(|(_, name)| name.as_str())
}

fn same_file(name: &str, first: &str) -> String {
    format!("{name} is the same file as {first} (a link to it) and was left out")
}

/// What reading one instruction file gave.
enum Read {
    /// Its identity (device and inode) and its bytes.
    Text(Option<Identity>, Vec<u8>),
    /// Not read: the file or its folder is another user's.
    Foreign(bcode_fs::NotOwned),
}

/// One instruction file through `confinement`, at most
/// [`MAX_INSTRUCTION_FILE_BYTES`], read only when `owner_check` passes the
/// opened file's metadata.
fn read(
    confinement: &bcode_fs::Confinement,
    path: &Path,
    owner_check: impl FnOnce(&std::fs::Metadata) -> Result<(), bcode_fs::NotOwned>,
) -> Result<Read, bcode_fs::ReadError> {
    let (mut file, len) = confinement.open_regular(path)?;
    let meta = file.metadata().map_err(bcode_fs::ReadError::Io)?;
    if let Err(refused) = owner_check(&meta) {
        return Ok(Read::Foreign(refused));
    }
    if len > MAX_INSTRUCTION_FILE_BYTES as u64 {
        return Err(bcode_fs::ReadError::TooLarge {
            len,
            max: MAX_INSTRUCTION_FILE_BYTES,
        });
    }
    let identity = bcode_fs::FileStamp::of(&meta).identity();
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    bcode_fs::read_rest(&mut file, &mut bytes, MAX_INSTRUCTION_FILE_BYTES)?;
    Ok(Read::Text(identity, bytes))
}

/// Every instruction file [`gather_instructions`] reads, in order: `(path, folder from
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

    /// This process's own folders count.
    fn mine() -> bcode_fs::Ownership {
        bcode_fs::Ownership::of_process(false, &[])
    }

    #[test]
    fn links_out_of_the_repository_are_problems_and_links_inside_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("docs")).unwrap();
        std::fs::write(dir.path().join("secret.md"), "SECRET").unwrap();
        std::fs::write(repo.join("docs/agents.md"), "Use tabs.").unwrap();
        symlink(dir.path().join("secret.md"), repo.join("BCODE.md")).unwrap();
        symlink("docs/agents.md", repo.join("AGENTS.md")).unwrap();
        let found = gather_instructions(&repo, &repo, &InstructionLimits::default(), &mine());
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
        let found = gather_instructions(
            dir.path(),
            dir.path(),
            &InstructionLimits::default(),
            &mine(),
        );
        assert!(found.files.is_empty());
        assert!(
            found.problems[0].contains("under /proc, /sys or /dev"),
            "{:?}",
            found.problems
        );
    }

    /// The same file through a symbolic link and through a hard link in
    /// the folders below is placed once; each other path is a note naming
    /// the first.
    #[test]
    fn a_file_reached_again_through_a_link_is_placed_once() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        std::fs::create_dir_all(repo.join("a/b")).unwrap();
        std::fs::write(repo.join("AGENTS.md"), "Root rules.").unwrap();
        symlink("../AGENTS.md", repo.join("a/BCODE.md")).unwrap();
        std::fs::hard_link(repo.join("AGENTS.md"), repo.join("a/b/AGENTS.md")).unwrap();
        std::fs::write(repo.join("a/b/BCODE.md"), "B rules.").unwrap();
        let found = gather_instructions(
            repo,
            &repo.join("a/b"),
            &InstructionLimits::default(),
            &mine(),
        );
        let names: Vec<(&str, &str)> = found
            .files
            .iter()
            .map(|f| (f.name.as_str(), f.text.as_str()))
            .collect();
        assert_eq!(
            names,
            [("AGENTS.md", "Root rules."), ("a/b/BCODE.md", "B rules.")]
        );
        assert_eq!(
            found.problems,
            [
                "a/BCODE.md is the same file as AGENTS.md (a link to it) and was left out",
                "a/b/AGENTS.md is the same file as AGENTS.md (a link to it) and was left out",
            ]
        );
    }

    /// Past the total, files are not read: the one that crosses it is read
    /// whole (the stage cuts it), the ones after are notes.
    #[test]
    fn files_past_the_total_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        std::fs::create_dir_all(repo.join("a/b")).unwrap();
        std::fs::write(repo.join("BCODE.md"), "0123456789").unwrap();
        std::fs::write(repo.join("AGENTS.md"), "abcdefghij").unwrap();
        std::fs::write(repo.join("a/AGENTS.md"), "klmnopqrst").unwrap();
        std::fs::write(repo.join("a/b/AGENTS.md"), "uvwxyz").unwrap();
        let limits = InstructionLimits {
            per_file: None,
            total: 15,
        };
        let found = gather_instructions(repo, &repo.join("a/b"), &limits, &mine());
        let names: Vec<&str> = found.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["BCODE.md", "AGENTS.md"]);
        assert_eq!(
            found.problems,
            [
                "a/AGENTS.md was left out: the instructions before it fill \
                 system_prompt.repository_instructions_total_max_chars (15 characters)",
                "a/b/AGENTS.md was left out: the instructions before it fill \
                 system_prompt.repository_instructions_total_max_chars (15 characters)",
            ]
        );
    }

    /// The account of the total: a file counts at most its own limit; the
    /// first that does not fit in what is left is cut to it (to nothing, when
    /// the one before filled the total exactly), and every later one is out.
    #[test]
    fn the_total_cuts_the_first_file_that_does_not_fit() {
        let shares = |per_file, total, sizes: &[usize]| {
            let mut budget = TotalBudget::new(InstructionLimits { per_file, total });
            sizes.iter().map(|&n| budget.take(n)).collect::<Vec<_>>()
        };
        use Share::{CutByTotal, Own, PastTotal};
        assert_eq!(
            shares(None, 100, &[40, 60, 0, 1, 5]),
            [Own, Own, Own, CutByTotal(0), PastTotal]
        );
        assert_eq!(
            shares(None, 100, &[40, 70, 5]),
            [Own, CutByTotal(60), PastTotal]
        );
        // Each file counts at most its own limit, which cuts it first.
        assert_eq!(
            shares(Some(30), 100, &[500, 500, 500, 500]),
            [Own, Own, Own, CutByTotal(10)]
        );
        assert_eq!(
            shares(Some(30), 90, &[500, 500, 500, 500]),
            [Own, Own, Own, CutByTotal(0)]
        );
        // What is left is not below the file's own limit: that limit cuts.
        assert_eq!(shares(Some(30), 100, &[60, 50]), [Own, Own]);
    }

    /// Seen as another user: files in the folders above the working folder
    /// are left out, naming the owner; the working folder's own are read;
    /// a trusted folder (and what is below it) counts.
    #[test]
    fn files_above_the_working_folder_that_another_user_owns_are_left_out() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let repo = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(repo.join("a/b")).unwrap();
        for file in ["AGENTS.md", "a/AGENTS.md", "a/b/AGENTS.md"] {
            std::fs::write(repo.join(file), file).unwrap();
        }
        let me = std::fs::metadata(&repo).unwrap().uid();
        let other = me.wrapping_add(4242);
        let work = repo.join("a/b");
        let limits = InstructionLimits::default();
        let found = gather_instructions(
            &repo,
            &work,
            &limits,
            &bcode_fs::Ownership::of_user(other, false, &[]),
        );
        let names: Vec<&str> = found.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a/b/AGENTS.md"]);
        let refused = |name: &str, folder: &Path| {
            format!(
                "{name} was left out: `{}` belongs to uid {me}, not to this user (uid {other}), \
                 and it is above the working folder; if you trust it, add it to \
                 `trust.safe_directories` in your user config",
                folder.display()
            )
        };
        assert_eq!(
            found.problems,
            [
                refused("AGENTS.md", &repo),
                refused("a/AGENTS.md", &repo.join("a"))
            ]
        );
        let trusted = bcode_fs::Ownership::of_user(other, false, std::slice::from_ref(&repo));
        let found = gather_instructions(&repo, &work, &limits, &trusted);
        assert_eq!(found.files.len(), 3);
        assert_eq!(found.problems, Vec::<String>::new());
    }
}
