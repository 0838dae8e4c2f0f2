//! `bcode-prompt facts [--portable]`: this machine's facts (clock, zone, OS,
//! shell, locale, hosting, git, toolchain, home and repository roots) as a
//! facts file, the starting point of a team's pinned facts for golden files.
//! The file the output is redirected into is not part of the git status it
//! reports, and `--portable` pins neutral roots in place of this machine's.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bcode_prompt::facts::{
    Facts, PORTABLE_HOME, PORTABLE_REPO_ROOT, facts_to_toml, machine_facts, portable,
    without_own_files,
};
use bcode_prompt::machine::RealMachine;

use bcode_prompt::config::SectionToggles;

use crate::cli_context::{CliContext, CliError, ProcessInputs};

/// Prints the facts of this machine for the repository of `context`.
pub fn run(
    context: &CliContext,
    portable_roots: bool,
    out: &mut dyn Write,
) -> Result<ExitCode, CliError> {
    // `facts > prompt-facts.toml`: the shell creates the file before this
    // runs, and it would otherwise show as `?? prompt-facts.toml`, a tree
    // with uncommitted changes in every golden rendered with these facts.
    let own: Vec<PathBuf> = redirected_stdout().into_iter().collect();
    let facts = this_machine(
        &context.inputs,
        context.workspace.repo(),
        &context.workspace.config().config.system_prompt.sections,
        &own,
    );
    let (facts, header) = if portable_roots {
        (portable(facts), portable_header())
    } else {
        (facts, MACHINE_HEADER.to_owned())
    };
    write!(out, "{header}\n{}", facts_to_toml(&facts)).map_err(CliError::Io)?;
    Ok(ExitCode::SUCCESS)
}

/// The comment a facts file with this machine's roots starts with.
const MACHINE_HEADER: &str = "\
# Machine facts for `bcode-prompt render --facts FILE` (or a [facts] table in
# a config file). Every key is optional: a key pins its fact; with --hermetic,
# a fact that is not pinned is not probed and its section is left out.
# repo_root and home are this machine's: `bcode-prompt facts --portable`
# pins neutral ones, so a rendered prompt shows no checkout path.
";

fn portable_header() -> String {
    format!(
        "# Machine facts for `bcode-prompt render --facts FILE` (or a [facts] table in\n\
         # a config file). Every key is optional: a key pins its fact; with --hermetic,\n\
         # a fact that is not pinned is not probed and its section is left out.\n\
         # The roots are neutral ({PORTABLE_REPO_ROOT}, {PORTABLE_HOME}): the prompt shows\n\
         # no path of this machine.\n"
    )
}

/// The regular file standard output is redirected into, if any (Linux
/// names it in `/proc/self/fd/1`; elsewhere nothing is known).
fn redirected_stdout() -> Option<PathBuf> {
    let path = std::fs::read_link("/proc/self/fd/1").ok()?;
    std::fs::metadata(&path)
        .ok()
        .filter(std::fs::Metadata::is_file)?;
    Some(path)
}

/// This machine's facts for the sections that are on, without the git
/// status of the files in `own` (those a command writes while it captures
/// them): what `facts` prints and what a first `check --bless` pins.
pub fn this_machine(
    inputs: &ProcessInputs,
    root: &Path,
    sections: &SectionToggles,
    own: &[PathBuf],
) -> Facts {
    let facts = machine_facts(
        root,
        &inputs.env,
        &RealMachine,
        chrono::Utc::now(),
        sections,
    );
    without_own(facts, root, own)
}

/// `facts` without the git status entries of the files in `own` (absolute
/// paths; those outside `repo` are no concern of its status).
fn without_own(facts: Facts, repo: &Path, own: &[PathBuf]) -> Facts {
    let relative: Vec<String> = own
        .iter()
        .filter_map(|path| {
            let path = std::fs::canonicalize(path)
                .ok()
                .or_else(|| canonical_parent(path))?;
            let rest = path.strip_prefix(repo).ok()?;
            Some(bcode_prompt::text::model_path(rest).into_owned())
        })
        .collect();
    let holds_only_own = |folder: &str| {
        let prefix = folder.trim_end_matches('/');
        only_own(&repo.join(prefix), prefix, &relative, 0)
    };
    without_own_files(facts, &relative, &holds_only_own)
}

/// A path that does not exist yet, under its canonical folder.
fn canonical_parent(path: &Path) -> Option<PathBuf> {
    let parent = std::fs::canonicalize(path.parent()?).ok()?;
    Some(parent.join(path.file_name()?))
}

/// Whether every file below `folder` (shown as `shown`) is one of `own`;
/// a deep or unreadable folder is not.
fn only_own(folder: &Path, shown: &str, own: &[String], depth: usize) -> bool {
    const MAX_DEPTH: usize = 8;
    let Ok(entries) = std::fs::read_dir(folder) else {
        return false;
    };
    if depth > MAX_DEPTH {
        return false;
    }
    entries.into_iter().all(|entry| {
        let Ok(entry) = entry else { return false };
        let name = entry.file_name();
        let shown = format!("{shown}/{}", name.to_string_lossy());
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => only_own(&entry.path(), &shown, own, depth + 1),
            Ok(_) => own.contains(&shown),
            Err(_) => false,
        }
    })
}
