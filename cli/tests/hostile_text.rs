//! Issue 24, item 9, through the real binary: a skill whose name,
//! description and body hold C0 controls, a bidi override, a zero-width
//! space and a line separator, in a repository on a branch whose name
//! holds a line separator (legal for git), with an untracked file named
//! likewise. The rendered prompt shows each hidden character as `\u{..}`,
//! keeps the git revision fact and each status entry on one line, and
//! holds no character the model must not see raw.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::path::Path;

use bcode_test_support::commit_all;
use common::{Sandbox, succeed_stdout, write};
use git2::{Repository, RepositoryInitOptions};

const BRANCH: &str = "feat\u{2028}forged-line\u{202e}x";

const SKILL: &str = "---
name: \"Evil\\0Name\\e[31m\\b\\x7f\\u202eRLO\\u200bZW\\u2028LS\"
description: \"Use when\\u2028forging\\0 lines\\e]0;t\\x07\"
---
Body\0 with NUL, \x1b[2J ESC, \x08 BS, \x7f DEL, \u{202e} RLO, \u{200b} ZWSP,\u{2028} LS.
";

/// A repository on `branch` with one commit of `a.txt`.
fn committed(dir: &Path, branch: &str) -> String {
    let mut opts = RepositoryInitOptions::new();
    opts.initial_head(branch);
    let repo = Repository::init_opts(dir, &opts).unwrap();
    write(&dir.join("a.txt"), "a\n");
    commit_all(&repo, "first").to_string()
}

/// Any character the model must not see raw.
fn forbidden(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n')
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{61c}' | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}' | '\u{2060}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

#[test]
fn render_shows_hostile_text_cleaned_and_one_line_facts_on_one_line() {
    let sandbox = Sandbox::new();
    let commit = committed(&sandbox.repo, BRANCH);
    write(&sandbox.repo.join(".bcode/skills/alpha/SKILL.md"), SKILL);
    write(&sandbox.repo.join("notes\u{2028}x.txt"), "n\n");
    let out = succeed_stdout(sandbox.command().args([
        "render",
        "--now",
        "2026-07-01T10:00:00Z",
        "--skill",
        "alpha",
    ]));
    assert!(!out.chars().any(forbidden), "{out}");
    let repo = sandbox.repo.display().to_string();
    let name = "Evil\\u{0}Name\\u{1b}[31m\\u{8}\\u{7f}\\u{202e}RLO\\u{200b}ZW LS";
    assert_eq!(
        between(&out, "<available_skills>\n", "</available_skills>"),
        format!(
            "<available_skills>
  <skill>
    <id>alpha</id>
    <name>{name}</name>
    <description>Use when
forging\\u{{0}} lines\\u{{1b}}]0;t\\u{{7}}</description>
    <location>{repo}/.bcode/skills/alpha/SKILL.md</location>
    <source>repo:.bcode/skills</source>
  </skill>
</available_skills>"
        )
    );
    assert_eq!(
        between(&out, "<skill id=\"alpha\"", "</skill>"),
        format!(
            "<skill id=\"alpha\" name=\"{name}\" location=\"{repo}/.bcode/skills/alpha/SKILL.md\">
References are relative to {repo}/.bcode/skills/alpha.
Source label: repo:.bcode/skills

Body\\u{{0}} with NUL, \\u{{1b}}[2J ESC, \\u{{8}} BS, \\u{{7f}} DEL, \\u{{202e}} RLO, \\u{{200b}} ZWSP,
 LS.
</skill>"
        )
    );
    // The revision is one line (a blank line follows it), and so is each
    // status entry.
    let commit_short = &commit[..7];
    assert_eq!(
        between(&out, "Git revision:", "\n\n"),
        format!(
            "Git revision: branch feat forged-line\\u{{202e}}x at {commit_short} ({commit}); the working tree has uncommitted changes.\n\n"
        )
    );
    assert_eq!(
        between(&out, "Git status", "\n\n"),
        "Git status (short format: XY path, ?? = untracked):\n?? .bcode/\n?? notes x.txt\n\n"
    );
}

/// The text of `haystack` from the first `start` to the end of the first
/// `end` after it.
fn between<'a>(haystack: &'a str, start: &str, end: &str) -> &'a str {
    let from = haystack
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in {haystack}"));
    let to = haystack[from..]
        .find(end)
        .unwrap_or_else(|| panic!("no {end:?} after {start:?} in {haystack}"));
    &haystack[from..from + to + end.len()]
}

/// The same for the repository's other text: an invariant's id, title,
/// summary, keywords and body, and an instruction file in a folder whose
/// name holds a line separator.
#[test]
fn render_shows_invariants_and_instructions_cleaned() {
    let sandbox = Sandbox::new();
    committed(&sandbox.repo, "main");
    write(
        &sandbox.repo.join(".bcode/invariants/01-x.md"),
        "---\nid: no-io\ntitle: \"No\\u2028I/O\\e[2J\"\nsummary: \"Core\\u202edoes none\\0\"\nkeywords: [\"i\\u2029o\"]\n---\nBody\u{7f} line\r\nnext\u{200b}\n",
    );
    write(
        &sandbox.repo.join("pkg\u{2028}web/AGENTS.md"),
        "Run\u{1b}[31m tests\u{2028}always.\r\n",
    );
    // Invariants are the root's; instructions are read from the root down
    // to the working folder.
    let work = sandbox.repo.join("pkg\u{2028}web");
    let out = [&sandbox.repo, &work]
        .map(|folder| {
            succeed_stdout(sandbox.command_in(folder).args([
                "render",
                "--now",
                "2026-07-01T10:00:00Z",
            ]))
        })
        .concat();
    assert!(!out.chars().any(forbidden), "{out}");
    let repo = sandbox.repo.display().to_string();
    assert_eq!(
        between(&out, "<invariant ", "</invariant>"),
        "<invariant id=\"no-io\" title=\"No I/O\\u{1b}[2J\" file=\".bcode/invariants/01-x.md\">
Summary: Core\\u{202e}does none\\u{0}
Keywords: i o

Body\\u{7f} line
next\\u{200b}
</invariant>"
    );
    assert_eq!(
        between(
            &out,
            "<repository_instructions",
            "</repository_instructions>"
        ),
        format!(
            "<repository_instructions file=\"pkg web/AGENTS.md\" location=\"{repo}/pkg web/AGENTS.md\">
Run\\u{{1b}}[31m tests
always.
</repository_instructions>"
        )
    );
}
