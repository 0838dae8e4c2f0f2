//! Escape sequences from repository files on the operator's terminal
//! (issue 24, item 10): `skills catalog`, `skills context`, `render`,
//! `render --explain` and `diff` show them as escapes (`\u{1b}`) when
//! standard output is a terminal, and print the exact prompt bytes on a
//! pipe. The terminal is a real pseudo-terminal: each command runs under
//! util-linux `script`, with its stderr sent to a file.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
#![cfg(unix)]

use crate::common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{Sandbox, text, write};

/// OSC 52 (write the clipboard), then a screen clear and a carriage return.
const EVIL: &str = "\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[2J\r";
/// `EVIL` as the terminal must show it.
const SHOWN: &str = "\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}\\u{1b}[2J\\u{d}";
/// `EVIL` without its carriage return, raw and shown: text cleaned for the
/// model keeps the sequence visible and makes the return a line break.
const EVIL_CORE: &str = "\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[2J";
const SHOWN_CORE: &str = "\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}\\u{1b}[2J";

/// `arg` quoted for `sh`.
fn quote(arg: &OsStr) -> Vec<u8> {
    let mut out = b"'".to_vec();
    for &byte in arg.as_bytes() {
        if byte == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(byte);
        }
    }
    out.push(b'\'');
    out
}

/// What `command` prints on a terminal: it runs with its standard output
/// on a pseudo-terminal (`script -qec`), its stderr in a file, and the
/// terminal's `\r\n` line ends read back as `\n`. Exit status 0 or 1 only.
fn on_terminal(command: &Command) -> String {
    let dir = tempfile::tempdir().unwrap();
    let stderr = dir.path().join("stderr");
    let mut line = b"exec".to_vec();
    for part in std::iter::once(command.get_program()).chain(command.get_args()) {
        line.push(b' ');
        line.extend(quote(part));
    }
    line.extend_from_slice(b" 2>");
    line.extend(quote(stderr.as_os_str()));
    let mut script = Command::new("script");
    script
        .arg("-qec")
        .arg(OsStr::from_bytes(&line))
        .arg("/dev/null")
        .env_clear()
        .stdin(Stdio::null());
    if let Some(path) = std::env::var_os("PATH") {
        script.env("PATH", path);
    }
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            script.env(key, value);
        }
    }
    let out = script
        .output()
        .expect("util-linux `script` runs commands on a pseudo-terminal");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        std::fs::read_to_string(&stderr).unwrap_or_default()
    );
    text(&out.stdout).replace("\r\n", "\n")
}

/// What `command` prints on a pipe, byte for byte.
fn on_pipe(command: &mut Command) -> Vec<u8> {
    let out = command.output().unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    out.stdout
}

/// A repository whose skill, instruction file and invariant file name
/// carry [`EVIL`].
fn hostile_repo() -> Sandbox {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/evil/SKILL.md"),
        &format!(
            "---\ndescription: \"Clip \\e]52;c;cm0gLXJmIH4=\\a\\e[2J\\r board\"\n---\nBody {EVIL} here.\n"
        ),
    );
    write(
        &sandbox.repo.join("AGENTS.md"),
        &format!("Run the tests {EVIL} first.\n"),
    );
    write(
        &sandbox
            .repo
            .join(format!(".bcode/invariants/no{EVIL}panics.md")),
        "---\nid: no-panics\ntitle: No panics\nsummary: Libraries never panic.\n---\nFull text.\n",
    );
    sandbox
}

/// On a pipe the exact bytes: [`EVIL`] raw where the text is not the
/// model's (a hand-edited saved render), or already shown as [`SHOWN_CORE`] where
/// the library cleaned it for the model. On the terminal the same text,
/// every control character but the line feed (and tab) shown as an escape,
/// so no raw one ever reaches it.
fn check(mut command: Command) {
    let piped = on_pipe(&mut command);
    let piped = text(&piped);
    assert!(
        piped.contains(EVIL_CORE) || piped.contains(SHOWN_CORE),
        "{piped}"
    );
    let shown = on_terminal(&command);
    let expected = piped
        .replace('\u{1b}', "\\u{1b}")
        .replace('\u{7}', "\\u{7}")
        .replace('\r', "\\u{d}");
    assert_eq!(shown, expected);
    assert!(shown.contains(SHOWN_CORE), "{shown}");
    assert!(!shown.contains(['\u{1b}', '\u{7}', '\r']), "{shown:?}");
}

#[test]
fn skills_catalog_is_escaped_on_a_terminal_and_exact_on_a_pipe() {
    let sandbox = hostile_repo();
    let mut command = sandbox.command();
    command.args(["skills", "catalog"]);
    // The description is the catalog's; the library cleaned it for the
    // model (the carriage return is a line break in a description).
    let piped = text(&on_pipe(&mut command));
    assert!(
        piped.contains("Clip \\u{1b}]52;c;cm0gLXJmIH4=\\u{7}\\u{1b}[2J\n board"),
        "{piped}"
    );
    let shown = on_terminal(&command);
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
    assert_eq!(
        shown,
        piped
            .replace('\u{1b}', "\\u{1b}")
            .replace('\u{7}', "\\u{7}")
            .replace('\r', "\\u{d}")
    );
}

#[test]
fn skills_context_is_escaped_on_a_terminal_and_exact_on_a_pipe() {
    let sandbox = hostile_repo();
    let mut command = sandbox.command();
    command.args(["skills", "context", "evil"]);
    check(command);
}

#[test]
fn render_is_escaped_on_a_terminal_and_exact_on_a_pipe() {
    let sandbox = hostile_repo();
    let mut command = sandbox.command();
    command.args(common::RENDER_PINNED);
    check(command);
}

/// The table is for reading: the invariant's odd file name is shown
/// escaped in its row, on a terminal and on a pipe alike.
#[test]
fn render_explain_shows_file_names_escaped() {
    let sandbox = hostile_repo();
    let mut command = sandbox.command();
    command.args(common::RENDER_PINNED).arg("--explain");
    let piped = text(&on_pipe(&mut command));
    let shown = on_terminal(&command);
    assert_eq!(shown, piped);
    let row: Vec<&str> = shown
        .lines()
        .filter(|line| line.starts_with("repository_invariants "))
        .collect();
    assert_eq!(row.len(), 1, "{shown}");
    let cells: Vec<&str> = row[0].split_whitespace().collect();
    assert_eq!(
        cells[cells.len() - 1],
        format!(".bcode/invariants/no{SHOWN}panics.md")
    );
    assert!(!shown.contains(['\u{1b}', '\u{7}', '\r']), "{shown:?}");
}

#[test]
fn diff_is_escaped_on_a_terminal_and_exact_on_a_pipe() {
    let sandbox = hostile_repo();
    let save = |path: &Path, prompt: &str| {
        let out = sandbox
            .command()
            .args(common::RENDER_PINNED)
            .args(["--json", "--prompt", prompt])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        std::fs::write(path, out.stdout).unwrap();
    };
    let a = sandbox.base.join("a.json");
    let b = sandbox.base.join("b.json");
    save(&a, "first");
    write(
        &sandbox.repo.join("AGENTS.md"),
        &format!("Run the tests {EVIL} last.\n"),
    );
    save(&b, "second");
    // The renders are cleaned for the model; a saved render edited by hand
    // (or by a hostile tool) may hold raw controls, which `diff` prints.
    let edited = std::fs::read_to_string(&b)
        .unwrap()
        .replace("\\\\u{1b}", "\\u001b")
        .replace("\\\\u{7}", "\\u0007")
        .replace("\\\\u{d}", "\\r");
    std::fs::write(&b, edited).unwrap();
    let mut command = common::binary();
    command.arg("diff").arg(&a).arg(&b);
    check(command);
}
