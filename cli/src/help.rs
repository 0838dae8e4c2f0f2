//! The `--help` epilogues: exit codes, the environment variables a command
//! reads and, for `render`, the section ids. Built at run time from the
//! tables the program itself uses (the section table, the CI, container and
//! SSH variable lists), so the help cannot drift from what the code reads.

use std::fmt::Write as _;

use bcode_prompt::machine::{CI_VARIABLES, CONTAINER_VARIABLES, SSH_VARIABLES};
use bcode_prompt::sections::{Placement, SectionClass, SectionKind};

/// What a command reads from the environment, from least to most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// Nothing at all (`diff`).
    Nothing,
    /// The configuration and the user's directories (`skills`, `config`).
    Config,
    /// Those and every machine fact a section shows (`render`, `session`).
    Prompt,
}

/// The exit codes of a command other than `diff` and `skills doctor`.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  success
  2  bad arguments, an invalid configuration or an unknown skill";

/// What `skills doctor --profile` checks.
pub const DOCTOR_PROFILES: &str = "\
Profiles (--profile): what another agent's rules reject in each skill file, as
warnings whose code names the rule (portability_name_mismatch, ...); nothing
changes how Bcode loads a skill, and without --profile nothing is added.
  agentskills  the open Agent Skills specification, as `skills-ref validate`
               checks it: name (present, the folder's name, lowercase, hyphens,
               at most 64), description (present, at most 1,024), compatibility
               (at most 500), only its six keys, string metadata values, no
               byte-order mark
  claude       Claude Code: name of lowercase ASCII letters, digits and hyphens,
               at most 64, without `anthropic` or `claude`; description at most
               1,024; no XML tags in either
  codex        the Codex CLI's loader: a SKILL.md with YAML front matter, a
               `name` (at most 64) and a `description` (at most 1,024) string,
               a string `metadata.short-description` (at most 1,024), no
               byte-order mark";

/// The exit codes of `skills doctor`.
pub const DOCTOR_EXIT_CODES: &str = "\
Exit codes:
  0  success (skill diagnostics alone never fail a run)
  1  --strict and at least one error-level diagnostic, or --strict --profile and
     at least one portability finding
  2  bad arguments (an unknown --profile among them) or an invalid configuration";

/// How `diff` bounds its work; the figure is the one it uses.
pub fn diff_budget(steps: u64) -> String {
    format!(
        "Changed sections are diffed line by line, smallest first, within one budget of
{steps} search steps for the whole command (counted, not timed: the same
two files always give the same report); a section past it shows its changed
lines as one block, and says so."
    )
}

/// The exit codes of `diff`, which follow diff(1).
pub const DIFF_EXIT_CODES: &str = "\
Exit codes:
  0  the two renders are identical
  1  they differ
  2  trouble: a file is missing, unreadable or not a `render --json` result";

/// `check`'s exit codes.
pub const CHECK_EXIT_CODES: &str = "\
Exit codes:
  0  the render equals the golden (or --bless wrote it)
  1  they differ: the changed lines are printed and the render written to GOLDEN.new
  2  bad arguments, an invalid configuration, an unknown skill or no golden yet";

/// `config check`'s exit codes.
pub const CONFIG_CHECK_EXIT_CODES: &str = "\
Exit codes:
  0  no error in any layer (warnings allowed)
  1  an error was found (with --strict, an unknown key counts as one)
  2  bad arguments";

/// The environment section of a command's help.
pub fn environment(reads: Reads) -> String {
    let mut out = String::from("Environment:\n");
    if reads == Reads::Nothing {
        out.push_str("  none: the two files are all this command reads\n");
        return out;
    }
    out.push_str(
        "  HOME                  the home directory (user config, user skills, state)
  XDG_CONFIG_HOME       instead of ~/.config: bcode/bcode.toml and bcode/skills/
  XDG_STATE_HOME        instead of ~/.local/state: bcode/ (disk cache, sessions)
  BCODE_STATE_DIR       the state directory itself, over XDG_STATE_HOME and HOME
  BCODE_<TABLE>__<KEY>  a config value, above the files and below --config/--set
                        (e.g. BCODE_SKILLS__PROMPT__CATALOG=off)
  BCODE_TRUST_REPO      1 or true: trust the repository's own config (as --trust-repo)
",
    );
    if reads == Reads::Prompt {
        let _ = write!(
            out,
            "  TZ                    the time zone of current_datetime (unless --timezone)
  SHELL                 the shell name in execution_environment
  LC_ALL, LC_MESSAGES, LANG
                        the locale section, first one set wins
  presence only, never the value (hosting_environment):
    CI:        {}
    container: {}
    SSH:       {}
",
            wrap(CI_VARIABLES, 15),
            wrap(CONTAINER_VARIABLES, 15),
            wrap(SSH_VARIABLES, 15),
        );
    }
    out
}

/// `names` joined with `, `, wrapped to about 80 columns with `indent`
/// spaces before continuation lines.
fn wrap(names: &[&str], indent: usize) -> String {
    let mut out = String::new();
    let mut column = indent;
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push(',');
            column += 1;
            if column + name.len() + 1 > 78 {
                out.push('\n');
                out.push_str(&" ".repeat(indent));
                column = indent;
            } else {
                out.push(' ');
                column += 1;
            }
        }
        out.push_str(name);
        column += name.len();
    }
    out
}

/// The section table of `render --help`: every canonical section id in
/// output order, with its class, where it goes and its toggle.
pub fn section_ids() -> String {
    let mut out = String::from(
        "Section ids (in --explain, --json and diff; the toggle is \
         system_prompt.sections.<id>):\n",
    );
    for kind in SectionKind::ALL {
        let class = match kind.class() {
            SectionClass::Static => "static",
            SectionClass::Session => "session",
            _ => "turn",
        };
        let part = match kind.placement() {
            Placement::System => "system",
            _ => "request-only",
        };
        let toggle = if kind.toggle().is_some() {
            ""
        } else {
            "  (no toggle)"
        };
        let _ = writeln!(out, "  {:<28} {class:<8} {part}{toggle}", kind.name());
    }
    out.push_str(
        "A stage that yields several sections names them <id>:<suffix>, e.g.\n\
         repository_context:AGENTS.md and active_skill:<skill id>.\n",
    );
    out
}

/// The whole epilogue of a command: its extra text (if any), exit codes and
/// environment.
pub fn after(extra: &str, exit_codes: &str, reads: Reads) -> String {
    let mut out = String::new();
    if !extra.is_empty() {
        out.push_str(extra.trim_end());
        out.push_str("\n\n");
    }
    out.push_str(exit_codes);
    out.push_str("\n\n");
    out.push_str(&environment(reads));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_lines_short_and_every_name() {
        let text = wrap(CI_VARIABLES, 15);
        assert!(text.lines().all(|line| line.len() <= 80), "{text}");
        for name in CI_VARIABLES {
            assert!(text.contains(name));
        }
    }
}
