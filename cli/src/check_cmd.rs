//! `bcode-prompt check GOLDEN [render options]`: renders the prompt and
//! compares it with a saved golden file (the text `render` prints, or with
//! `--json` its JSON); `--bless` writes the golden instead.
//!
//! A golden carries the facts it was rendered with in a sidecar,
//! `GOLDEN.facts.toml` (a facts file), so a check on another machine pins
//! the same clock, OS, git revision, roots... The first `--bless` writes it:
//! from `--facts` alone when both `--hermetic` and `--facts` are given, else
//! from this machine's facts (as the environment given to the command shows
//! it: none of it with `--hermetic`)
//! (only those of the sections that are on; neutral roots, `/repo` and
//! `/home/user`; no status entry for the files the bless writes) under the
//! config's `[facts]` and `--facts`. Every hint names the whole command line
//! that renders as this check did. Later blesses keep it (under
//! `--facts`); delete it to pin afresh. When the render differs, it is
//! written to `GOLDEN.new` and the report shows the changed lines (with
//! `--json`, also the section-level `diff` report).
//!
//! The sidecar also records the working folder the golden was blessed for,
//! relative to the repository root (`working_folder`, `.` for the root), so
//! a check or a later bless from any folder of the repository renders that
//! folder's prompt; a sidecar without it (written before it existed)
//! renders for the folder the command runs in, as it always did.
//!
//! The golden, the sidecar and `GOLDEN.new` are files of the repository
//! that holds the golden, which may have committed links under their
//! names: they are read only where they resolve inside that repository
//! (`bcode_prompt::files::Confinement::for_path`), so nothing a link leads to outside
//! is quoted in a diff or an error, and written only through
//! `bcode_prompt::files::OutputDir` (a temporary file created `O_EXCL`, renamed over
//! the name), so no write follows a link.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bcode_prompt::facts::{Facts, facts_to_toml, portable};
use bcode_prompt::files::{Confinement, OutputDir};
use bcode_prompt::report::prompt_text;
use bcode_prompt::{Turn, Workspace};

use crate::cli_context::{CliError, ProcessInputs};
use crate::render_cmd::{self, RenderOptions};

/// Options of `check`.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The golden file.
    pub golden: PathBuf,
    /// Write the golden (and its facts) instead of comparing.
    pub bless: bool,
    /// How to render (`json` chooses the golden's format).
    pub render: RenderOptions,
}

/// The most of a golden file read (a 10,000-skill catalog is a few MiB).
const MAX_GOLDEN_BYTES: usize = 256 * 1024 * 1024;
/// Changed lines shown per side before the report says how many more.
const MAX_SHOWN_LINES: usize = 200;
/// Unchanged lines shown around the change.
const CONTEXT_LINES: usize = 3;

/// The facts sidecar of `golden`: `GOLDEN.facts.toml`.
pub fn facts_path(golden: &Path) -> PathBuf {
    with_suffix(golden, ".facts.toml")
}

/// Where a differing render is written: `GOLDEN.new`.
pub fn new_path(golden: &Path) -> PathBuf {
    with_suffix(golden, ".new")
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

pub fn run(
    options: &CheckOptions,
    inputs: &ProcessInputs,
    out: &mut dyn Write,
) -> Result<ExitCode, CliError> {
    let golden = inputs.cwd.join(&options.golden);
    if golden.file_name().is_none() {
        return Err(CliError::Usage(format!(
            "golden `{}` names no file",
            options.golden.display()
        )));
    }
    // Everything beside the golden is the files of the repository holding
    // it: read only where it resolves inside that repository (so nothing it
    // links to outside is quoted in a diff or an error), written only
    // without following links.
    let confinement = Confinement::for_path(&golden);
    let sidecar = facts_path(&golden);
    let pinned = read_sidecar(&sidecar, &confinement)?;
    let given = match &options.render.facts {
        Some(path) => render_cmd::read_facts(&inputs.cwd.join(path))?,
        None => Facts::default(),
    };
    let (pinned, recorded) = match pinned {
        Some((facts, folder)) => (Some(facts), folder),
        None => (None, None),
    };
    // The workspace finds the repository root. It is opened here when the
    // sidecar names the working folder to render for (below that root),
    // or when the facts are captured (the config says which); the session
    // renders in it, so the config is loaded once.
    let hermetic = options.render.hermetic;
    let mut workspace = None;
    let blessed_for = match &recorded {
        Some(folder) => {
            let here = open_workspace(inputs, hermetic)?;
            let there = blessed_folder(options, inputs, here.repo(), folder)?;
            workspace = Some(if there.work == inputs.work {
                here
            } else {
                open_workspace(&there, hermetic)?
            });
            Some(there)
        }
        None => None,
    };
    let inputs = blessed_for.as_ref().unwrap_or(inputs);
    let fresh = new_path(&golden);
    if options.bless {
        let first = pinned.is_none();
        let base = match pinned {
            Some(facts) => facts,
            // A team's own facts file, hermetic: only what it pins.
            None if options.render.hermetic && options.render.facts.is_some() => Facts::default(),
            None => {
                let own = [golden.clone(), sidecar.clone(), fresh.clone()];
                let opened = match workspace.take() {
                    Some(opened) => opened,
                    None => open_workspace(inputs, hermetic)?,
                };
                let facts = captured_facts(inputs, &opened, &own);
                workspace = Some(opened);
                facts
            }
        };
        let facts = base.overlaid(&given);
        let (turn, root) =
            render_cmd::render_turn(&options.render, inputs, facts.clone(), workspace)?;
        let dir = output_dir(&golden, &confinement)?;
        write_file(&dir, &golden, &golden_text(&turn, options.render.json)?)?;
        let folder = working_folder(inputs, &root);
        write_file(
            &dir,
            &sidecar,
            &sidecar_text(&golden, folder.as_deref(), &facts),
        )?;
        remove_file(&dir, &fresh);
        eprintln!(
            "bcode-prompt: blessed {} (facts in {}); commit both, and check with: {}",
            golden.display(),
            sidecar.display(),
            command_line(options, inputs, false)
        );
        if let (true, Some(given)) = (first, &options.render.facts) {
            eprintln!(
                "bcode-prompt: {} now holds the facts of {} too; the check needs only the sidecar",
                sidecar.display(),
                given.display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let saved = match confinement.read_bounded(&golden, MAX_GOLDEN_BYTES) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(err) => {
            return Err(CliError::Usage(format!(
                "golden `{}`: {err}; write it with `{}`",
                golden.display(),
                command_line(options, inputs, true)
            )));
        }
    };
    let facts = pinned.unwrap_or_default().overlaid(&given);
    let (turn, _) = render_cmd::render_turn(&options.render, inputs, facts, workspace)?;
    let rendered = golden_text(&turn, options.render.json)?;
    if rendered == saved {
        if let Ok(dir) = output_dir(&golden, &confinement) {
            remove_file(&dir, &fresh);
        }
        eprintln!("bcode-prompt: {} matches", golden.display());
        return Ok(ExitCode::SUCCESS);
    }
    write_file(&output_dir(&golden, &confinement)?, &fresh, &rendered)?;
    let mut report = format!(
        "{} differs from the prompt rendered now (written to {}):\n",
        golden.display(),
        fresh.display()
    );
    if options.render.json
        && let Ok((sections, _)) =
            crate::diff_cmd::diff_texts((&golden, &saved), (&fresh, &rendered))
    {
        report.push_str(&sections);
    }
    report.push_str(&line_diff(&saved, &rendered));
    let _ = writeln!(
        report,
        "to accept the new prompt: {}",
        command_line(options, inputs, true)
    );
    out.write_all(report.as_bytes()).map_err(CliError::Io)?;
    Ok(ExitCode::from(1))
}

/// The sidecar's facts and the working folder it records; `None` when
/// there is no sidecar (a link to nothing counts as none: the bless
/// replaces it). Read as the golden is, inside `confinement`.
fn read_sidecar(
    sidecar: &Path,
    confinement: &Confinement,
) -> Result<Option<(Facts, Option<String>)>, CliError> {
    match confinement.read_bounded(sidecar, render_cmd::MAX_FACTS_BYTES) {
        Ok(bytes) => render_cmd::parse_facts_file(sidecar, bytes).map(Some),
        Err(bcode_prompt::files::ReadError::Io(err))
            if err.kind() == std::io::ErrorKind::NotFound =>
        {
            Ok(None)
        }
        Err(err) => Err(render_cmd::facts_error(sidecar, &err)),
    }
}

/// `inputs` rendering for `recorded`, the working folder the sidecar says
/// the golden was blessed for (relative to the repository root), below
/// the root the command found; so a check from any folder of the
/// repository renders the same prompt. Refused, saying exactly why, when
/// that folder is not one of the repository's, or when `--repo` names
/// another folder.
fn blessed_folder(
    options: &CheckOptions,
    inputs: &ProcessInputs,
    root: &Path,
    recorded: &str,
) -> Result<ProcessInputs, CliError> {
    let golden = options.golden.display();
    let sidecar = facts_path(&options.golden);
    let blessed = format!(
        "{golden} was blessed for the working folder `{recorded}` (`{}` in {})",
        render_cmd::WORKING_FOLDER_KEY,
        sidecar.display()
    );
    let not_a_folder = |reason: String| {
        CliError::Usage(format!(
            "{blessed}, which is not a folder of the repository `{}`: {reason}",
            root.display()
        ))
    };
    let parts = folder_parts(recorded).ok_or_else(|| {
        not_a_folder("write it relative to the root, `/`-separated, `.` for the root".to_owned())
    })?;
    let wanted: PathBuf = parts
        .iter()
        .fold(root.to_path_buf(), |path, part| path.join(part));
    let real = std::fs::canonicalize(&wanted).map_err(|err| not_a_folder(err.to_string()))?;
    if !real.starts_with(root) {
        return Err(not_a_folder(format!(
            "it leads to `{}`, outside the repository",
            real.display()
        )));
    }
    if !real.is_dir() {
        return Err(not_a_folder("it is not a folder".to_owned()));
    }
    if real != inputs.work {
        if inputs.flags.repo.is_some() {
            let named =
                working_folder(inputs, root).unwrap_or_else(|| inputs.work.display().to_string());
            return Err(CliError::Usage(format!(
                "{blessed}, but --repo names `{named}`; leave --repo out to check it from any \
                 folder of the repository, or delete {} to bless afresh for `{named}`",
                sidecar.display()
            )));
        }
        eprintln!(
            "bcode-prompt: {golden} is rendered for `{recorded}`, the working folder it was blessed for"
        );
    }
    Ok(ProcessInputs {
        work: real,
        ..inputs.clone()
    })
}

/// The components of a recorded working folder: `.` is the root itself;
/// otherwise plain names separated by `/`. `None` for anything else (an
/// absolute path, `..`, an empty component, a backslash).
fn folder_parts(recorded: &str) -> Option<Vec<&str>> {
    if recorded == "." {
        return Some(Vec::new());
    }
    recorded
        .split('/')
        .map(|part| {
            let plain = !part.is_empty() && part != "." && part != ".." && !part.contains('\\');
            plain.then_some(part)
        })
        .collect()
}

/// The working folder of `inputs` relative to the repository root, as the
/// sidecar records it (`.` for the root); `None` when it cannot be written
/// so (a name that is not UTF-8): the sidecar then records none, and the
/// check renders for the folder it runs in, as before.
fn working_folder(inputs: &ProcessInputs, root: &Path) -> Option<String> {
    let relative = inputs.work.strip_prefix(root).ok()?;
    let parts = relative
        .components()
        .map(|part| part.as_os_str().to_str())
        .collect::<Option<Vec<_>>>()?;
    Some(if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    })
}

/// The facts a first bless pins when it is not hermetic: this machine's,
/// probed for the sections the config turns on, with neutral roots and
/// without the git status of the files the bless writes (`own`), under the
/// facts the config of `workspace` pins.
fn captured_facts(inputs: &ProcessInputs, workspace: &Workspace, own: &[PathBuf]) -> Facts {
    let config = &workspace.config().config;
    let probed = crate::facts_cmd::this_machine(
        inputs,
        workspace.repo(),
        &config.system_prompt.sections,
        own,
    );
    portable(probed).overlaid(&config.facts)
}

/// The workspace `inputs` open, as the render's session opens it. An
/// invalid config exits 2; its warnings are left to the turn's report.
fn open_workspace(inputs: &ProcessInputs, hermetic: bool) -> Result<Workspace, CliError> {
    Workspace::open(&inputs.options().hermetic(hermetic))
        .map_err(|err| render_cmd::prompt_error(&err))
}

/// The command line that renders as this check did (every flag that shapes
/// the render, as given), with `--bless` when `bless`: hints say this, so
/// copying one reproduces the same render.
fn command_line(options: &CheckOptions, inputs: &ProcessInputs, bless: bool) -> String {
    let flags = &inputs.flags;
    let render = &options.render;
    let mut args: Vec<String> = vec!["bcode-prompt".to_owned()];
    let mut pair = |flag: &str, value: String| {
        args.push(flag.to_owned());
        args.push(value);
    };
    let shown = |path: &Path| path.display().to_string();
    if let Some(repo) = &flags.repo {
        pair("--repo", shown(repo));
    }
    for file in &flags.config_files {
        pair("--config", shown(file));
    }
    for set in &flags.set {
        pair("--set", set.clone());
    }
    pair("check", shown(&options.golden));
    if let Some(facts) = &render.facts {
        pair("--facts", shown(facts));
    }
    if let Some(now) = &render.now {
        pair("--now", now.clone());
    }
    if let Some(zone) = &render.timezone {
        pair("--timezone", zone.clone());
    }
    if let Some(prompt) = &render.prompt {
        pair("--prompt", prompt.clone());
    }
    for skill in &render.skills {
        pair("--skill", skill.clone());
    }
    let switches = [
        (flags.trust_repo, "--trust-repo"),
        (render.hermetic, "--hermetic"),
        (render.json, "--json"),
        (bless, "--bless"),
    ];
    for (on, switch) in switches {
        if on {
            args.push(switch.to_owned());
        }
    }
    args.iter()
        .map(|arg| shell_word(arg))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `arg` as one POSIX shell word: as it is when it holds only characters
/// no shell treats specially, else single-quoted.
fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// The golden's content: what `render` prints, as text or JSON.
fn golden_text(turn: &Turn, json: bool) -> Result<String, CliError> {
    if json {
        let mut text =
            serde_json::to_string_pretty(&turn.prompt).map_err(|err| CliError::Io(err.into()))?;
        text.push('\n');
        Ok(text)
    } else {
        Ok(prompt_text(&turn.prompt))
    }
}

fn sidecar_text(golden: &Path, folder: Option<&str>, facts: &Facts) -> String {
    let name = golden
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut text = format!(
        "# The facts `bcode-prompt check {name}` renders with (written by --bless;\n\
         # a later --bless keeps them: delete this file to pin afresh).\n\n"
    );
    if let Some(folder) = folder {
        let mut key = toml::Table::new();
        key.insert(
            render_cmd::WORKING_FOLDER_KEY.to_owned(),
            toml::Value::String(folder.to_owned()),
        );
        text.push_str(
            "# The folder, below the repository root, whose prompt the golden holds:\n\
             # `check` renders for it from any folder of the repository.\n",
        );
        text.push_str(&toml::to_string(&key).unwrap_or_default());
        text.push('\n');
    }
    text.push_str(&facts_to_toml(facts));
    text
}

/// The folder of `golden`, created when missing, for writing beside it
/// (see [`OutputDir`]): refused when it lies outside `confinement`.
fn output_dir(golden: &Path, confinement: &Confinement) -> Result<OutputDir, CliError> {
    let folder = golden.parent().unwrap_or(golden);
    OutputDir::create(folder, confinement).map_err(|err| {
        CliError::Usage(format!("cannot write beside `{}`: {err}", golden.display()))
    })
}

/// Replaces `path` (a file of `dir`) with `text`, never through a link.
fn write_file(dir: &OutputDir, path: &Path, text: &str) -> Result<(), CliError> {
    let name = path.file_name().unwrap_or_default();
    dir.replace(name, text.as_bytes())
        .map_err(|err| CliError::Usage(format!("cannot write `{}`: {err}", path.display())))
}

/// Removes a stale `path` (a file of `dir`); a link is removed, not its
/// target. Nothing to report when it fails: the file is stale either way.
fn remove_file(dir: &OutputDir, path: &Path) {
    let _ = dir.remove(path.file_name().unwrap_or_default());
}

/// The changed lines between `old` and `new`: the one block between their
/// common first and last lines, with a few unchanged lines around it, `-`
/// for the golden's lines and `+` for the new render's.
pub fn line_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let removed = &a[prefix..a.len() - suffix];
    let added = &b[prefix..b.len() - suffix];
    let start = prefix.saturating_sub(CONTEXT_LINES);
    let mut out = String::new();
    let _ = match (removed.len(), added.len()) {
        (0, added) => writeln!(
            out,
            "@@ after line {prefix} of the golden: {added} line(s) added @@"
        ),
        (removed, 0) => writeln!(
            out,
            "@@ line {}: {removed} line(s) of the golden removed @@",
            prefix + 1
        ),
        (removed, added) => writeln!(
            out,
            "@@ line {}: {removed} line(s) of the golden replaced by {added} @@",
            prefix + 1
        ),
    };
    let line = |out: &mut String, mark: char, text: &str| {
        let text = text.strip_suffix('\n').unwrap_or(text);
        let _ = writeln!(out, "{mark}{}", crate::terminal::printable(text));
    };
    for text in &a[start..prefix] {
        line(&mut out, ' ', text);
    }
    for (mark, lines) in [('-', removed), ('+', added)] {
        for text in lines.iter().take(MAX_SHOWN_LINES) {
            line(&mut out, mark, text);
        }
        if lines.len() > MAX_SHOWN_LINES {
            let _ = writeln!(out, "{mark}... {} more", lines.len() - MAX_SHOWN_LINES);
        }
    }
    let end = (a.len() - suffix + CONTEXT_LINES).min(a.len());
    for text in &a[a.len() - suffix..end] {
        line(&mut out, ' ', text);
    }
    if !old.ends_with('\n') || !new.ends_with('\n') {
        out.push_str("(a side does not end with a newline)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_diff_shows_the_changed_block_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\n";
        let new = "a\nb\nc\nD\ne\nf\ng\n";
        assert_eq!(
            line_diff(old, new),
            "@@ line 4: 1 line(s) of the golden replaced by 1 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n"
        );
        assert_eq!(
            line_diff("a\n", "a\nb\n"),
            "@@ after line 1 of the golden: 1 line(s) added @@\n a\n+b\n"
        );
        assert_eq!(
            line_diff("a\nb\nc\n", "a\nc\n"),
            "@@ line 2: 1 line(s) of the golden removed @@\n a\n-b\n c\n"
        );
    }

    #[test]
    fn shell_words_quote_what_a_shell_would_split() {
        assert_eq!(shell_word("tests/prompt.golden"), "tests/prompt.golden");
        assert_eq!(
            shell_word("skills.prompt.catalog=\"off\""),
            "'skills.prompt.catalog=\"off\"'"
        );
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn sidecar_sits_beside_the_golden() {
        assert_eq!(
            facts_path(Path::new("goldens/prompt.txt")),
            Path::new("goldens/prompt.txt.facts.toml")
        );
        assert_eq!(
            new_path(Path::new("prompt.json")),
            Path::new("prompt.json.new")
        );
    }
}
