//! `bcode-prompt check GOLDEN [render options]`: renders the prompt and
//! compares it with a saved golden file (the text `render` prints, or with
//! `--json` its JSON); `--bless` writes the golden instead.
//!
//! A golden carries the facts it was rendered with in a sidecar,
//! `GOLDEN.facts.toml` (a facts file), so a check on another machine pins
//! the same clock, OS, git revision, roots... The first `--bless` writes it:
//! from `--facts` alone with `--hermetic`, else from this machine's facts
//! under the config's `[facts]` and `--facts`. Later blesses keep it (under
//! `--facts`); delete it to pin afresh. When the render differs, it is
//! written to `GOLDEN.new` and the report shows the changed lines (with
//! `--json`, also the section-level `diff` report).

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bcode_prompt::facts::{Facts, facts_to_toml, machine_facts};
use bcode_prompt::testing::prompt_text;
use bcode_prompt::{RealMachine, Turn};

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
    let sidecar = facts_path(&golden);
    let pinned = if sidecar.exists() {
        Some(render_cmd::read_facts(&sidecar)?)
    } else {
        None
    };
    let given = match &options.render.facts {
        Some(path) => render_cmd::read_facts(&inputs.cwd.join(path))?,
        None => Facts::default(),
    };
    let fresh = new_path(&golden);
    if options.bless {
        let base = match pinned {
            Some(facts) => facts,
            None if options.render.hermetic => Facts::default(),
            None => machine_facts(&inputs.repo, &inputs.env, &RealMachine, chrono::Utc::now())
                .overlaid(&configured_facts(inputs)?),
        };
        let facts = base.overlaid(&given);
        let turn = render_cmd::render_turn(&options.render, inputs, facts.clone())?;
        write_file(&golden, &golden_text(&turn, options.render.json)?)?;
        write_file(&sidecar, &sidecar_text(&golden, &facts))?;
        let _ = std::fs::remove_file(&fresh);
        eprintln!(
            "bcode-prompt: blessed {} (facts in {})",
            golden.display(),
            sidecar.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let saved = match bcode_fs::read_bounded(&golden, MAX_GOLDEN_BYTES) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(err) => {
            return Err(CliError::Usage(format!(
                "golden `{}`: {err}; write it with `bcode-prompt check {} --bless`",
                golden.display(),
                options.golden.display()
            )));
        }
    };
    let facts = pinned.unwrap_or_default().overlaid(&given);
    let turn = render_cmd::render_turn(&options.render, inputs, facts)?;
    let rendered = golden_text(&turn, options.render.json)?;
    if rendered == saved {
        let _ = std::fs::remove_file(&fresh);
        eprintln!("bcode-prompt: {} matches", golden.display());
        return Ok(ExitCode::SUCCESS);
    }
    write_file(&fresh, &rendered)?;
    let mut report = format!(
        "{} differs from the prompt rendered now (written to {}):\n",
        golden.display(),
        fresh.display()
    );
    if options.render.json
        && let Ok((sections, _)) = crate::diff_cmd::diff(&golden, &fresh)
    {
        report.push_str(&sections);
    }
    report.push_str(&line_diff(&saved, &rendered));
    let _ = writeln!(
        report,
        "to accept the new prompt: bcode-prompt check {} --bless (with the same options)",
        options.golden.display()
    );
    out.write_all(report.as_bytes()).map_err(CliError::Io)?;
    Ok(ExitCode::from(1))
}

/// The facts the config pins, for a golden blessed without a sidecar. An
/// invalid config exits 2; its warnings are left to the turn's report.
fn configured_facts(inputs: &ProcessInputs) -> Result<Facts, CliError> {
    let loaded = bcode_prompt_pipeline::config::load(&inputs.config_inputs())
        .map_err(|err| CliError::Config(format!("invalid configuration: {err}")))?;
    Ok(loaded.config.facts)
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

fn sidecar_text(golden: &Path, facts: &Facts) -> String {
    let name = golden
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(
        "# The facts `bcode-prompt check {name}` renders with (written by --bless;\n\
         # a later --bless keeps them: delete this file to pin afresh).\n\n{}",
        facts_to_toml(facts)
    )
}

fn write_file(path: &Path, text: &str) -> Result<(), CliError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(CliError::Io)?;
    }
    std::fs::write(path, text)
        .map_err(|err| CliError::Usage(format!("cannot write `{}`: {err}", path.display())))
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
    let _ = writeln!(
        out,
        "@@ line {}: {} line(s) of the golden replaced by {} @@",
        prefix + 1,
        removed.len(),
        added.len()
    );
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
            "@@ line 2: 0 line(s) of the golden replaced by 1 @@\n a\n+b\n"
        );
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
