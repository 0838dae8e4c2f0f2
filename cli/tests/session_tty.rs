//! `session` typed in a real pseudo-terminal (issue 42, item 5): editing
//! keys and history (kept in the state folder, reused by the next
//! session, bounded, never through a link), Tab completion of commands and
//! skill ids, and output fitted to the terminal's width. Piped sessions
//! keep no history and fit nothing (`cli_session.rs` holds their
//! transcripts).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
#![cfg(unix)]

use crate::common;

use bcode_text::columns;
use common::pty::{CTRL_D, CTRL_U, ENTER, Pty, TAB, UP};
use common::{Sandbox, mkfifo, write};
use std::fs;
use std::os::unix::fs::FileTypeExt;

const PROMPT: &str = "bcode> ";

/// A terminal wide enough for every line of these tests.
const WIDE: u16 = 400;

/// A description far wider than a terminal, as monorepo skills have.
const LONG: &str = "Use when a Rust build or test fails: read the first error of cargo's output, then the backtrace, then the failing test's name, and check the toolchain version before changing any code.";

/// A sandbox with the skills `docs` and `rust-debugging` (whose body holds
/// a table wider than a terminal).
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".bcode/skills");
    write(
        &skills.join("docs/SKILL.md"),
        "---\ndescription: Write docs\n---\nDocs body.\n",
    );
    write(
        &skills.join("rust-debugging/SKILL.md"),
        &format!(
            "---\ndescription: {LONG}\n---\n| step | what to read first | what to do about it when it fails again |\n|---|---|---|\nCheck cargo output first.\n"
        ),
    );
    sandbox
}

/// The history file of the sandbox's state folder.
fn history(sandbox: &Sandbox) -> std::path::PathBuf {
    sandbox.state.join("history/session")
}

/// Types `line` and Enter after the prompt; returns what the session
/// printed before its next prompt, without the typed line.
fn run(pty: &mut Pty, line: &str) -> String {
    pty.send(line);
    pty.expect(line);
    pty.send(ENTER);
    let shown = pty.expect(PROMPT);
    shown[..shown.len() - PROMPT.len()]
        .trim_start_matches('\n')
        .to_owned()
}

/// Ends the session with Ctrl-U (the line typed so far is dropped) and
/// Ctrl-D, which must exit 0; returns its stderr.
fn end(mut pty: Pty) -> String {
    pty.send(CTRL_U);
    pty.send(CTRL_D);
    let (code, stderr) = pty.finish();
    assert_eq!(code, Some(0), "{stderr}");
    stderr
}

#[test]
fn up_arrow_recalls_the_last_line_and_the_next_session_has_it() {
    let sandbox = sandbox();
    let mut pty = sandbox.typed_session("one", WIDE, &[]);
    pty.expect(PROMPT);
    let listing = run(&mut pty, "/skills");
    // Up brings the line back on the prompt line; Enter runs it again.
    pty.send(UP);
    pty.expect(&format!("{PROMPT}/skills"));
    pty.send(ENTER);
    assert_eq!(
        pty.expect(PROMPT).trim_start_matches('\n'),
        format!("{listing}{PROMPT}")
    );
    run(&mut pty, "/skill docs");
    // A line typed after a space is not kept.
    assert_eq!(
        run(&mut pty, " /skill off docs"),
        "Deactivated skill `docs`.\n"
    );
    end(pty);
    // The repeat is kept once; the file is the user's alone.
    assert_eq!(
        fs::read_to_string(history(&sandbox)).unwrap(),
        "/skills\n/skill docs\n"
    );
    assert!(!sandbox.repo.join(".bcode/history").exists());

    let mut pty = sandbox.typed_session("two", WIDE, &[]);
    pty.expect(PROMPT);
    pty.send(UP);
    pty.expect(&format!("{PROMPT}/skill docs"));
    pty.send(UP);
    pty.expect(&format!("{PROMPT}/skills"));
    pty.send(ENTER);
    assert_eq!(
        pty.expect(PROMPT).trim_start_matches('\n'),
        format!("{listing}{PROMPT}")
    );
    end(pty);
    assert_eq!(
        fs::read_to_string(history(&sandbox)).unwrap(),
        "/skills\n/skill docs\n/skills\n"
    );
}

#[test]
fn tab_completes_commands_and_skill_ids() {
    let sandbox = sandbox();
    let mut pty = sandbox.typed_session("tab", WIDE, &[]);
    pty.expect(PROMPT);
    // `/ski` completes to `/skill` (common to `/skill` and `/skills`), and
    // `rus` to the one id it starts, followed by a space.
    pty.send("/ski");
    pty.send(TAB);
    pty.expect("/skill");
    pty.send(" rus");
    pty.send(TAB);
    pty.expect("rust-debugging ");
    pty.send(ENTER);
    pty.expect("Loaded skill `rust-debugging` from repo:.bcode/skills");
    pty.expect(PROMPT);
    // Two Tabs list what `/skill ` may be followed by.
    pty.send("/skill ");
    pty.send(TAB);
    pty.send(TAB);
    pty.expect("active          docs            off             rust-debugging");
    end(pty);
}

/// Every line of `shown` fits in `width` columns; returns its lines.
fn fitted(shown: &str, width: usize) -> Vec<String> {
    let lines: Vec<String> = shown.lines().map(str::to_owned).collect();
    for line in &lines {
        assert!(
            columns(line) <= width,
            "{line:?} is wider than {width}: {shown}"
        );
    }
    lines
}

#[test]
fn output_fits_a_60_column_terminal() {
    let sandbox = sandbox();
    let mut pty = sandbox.typed_session("narrow", 60, &[]);
    pty.expect(PROMPT);
    let listing = run(&mut pty, "/skills");
    assert_eq!(
        fitted(&listing, 60),
        [
            "  docs [repo:.bcode/skills]: Write docs",
            "  rust-debugging [repo:.bcode/skills]: Use when a Rust build",
            "      or test fails: read the first error of cargo's output,",
            "      then the backtrace, then the failing test's name, and…",
        ]
    );
    let loaded = run(&mut pty, "/skill rust-debugging");
    let lines = fitted(&loaded, 60);
    let preview = lines.iter().position(|l| l.starts_with('┌')).unwrap();
    assert_eq!(
        lines[preview..],
        [
            "┌ skill context: rust-debugging",
            "│ | step | what to read first | what to do about it when it…",
            "│ |---|---|---|",
            "│ Check cargo output first.",
            "└",
        ],
        "{loaded}"
    );
    // The help too: a command's description wraps under its column.
    let help = run(&mut pty, "/help");
    let lines = fitted(&help, 60);
    let touched = lines
        .iter()
        .position(|l| l.starts_with("  /touched"))
        .unwrap();
    assert_eq!(
        lines[touched..touched + 3],
        [
            "  /touched <path>...       note paths the task touched:",
            "                           skills whose `paths` match are",
            "                           suggested",
        ],
        "{help}"
    );
    end(pty);
}

#[test]
fn a_terminal_without_a_width_uses_columns_or_80() {
    let sandbox = sandbox();
    for (env, width) in [(&[("COLUMNS", "40")][..], 40), (&[][..], 80)] {
        let mut pty = sandbox.typed_session("unsized", 0, env);
        pty.expect(PROMPT);
        let listing = run(&mut pty, "/skills");
        let lines = fitted(&listing, width);
        assert_eq!(lines.len(), 4, "{listing}");
        // Wrapped at that width, not at a narrower one.
        assert!(columns(&lines[2]) > width - 12, "{listing}");
        end(pty);
    }
}

#[test]
fn history_is_bounded_and_read_from_its_tail() {
    let sandbox = sandbox();
    let old: String = (1..=1500).map(|n| format!("/skill line-{n}\n")).collect();
    write(&history(&sandbox), &old);
    let mut pty = sandbox.typed_session("bounded", WIDE, &[]);
    pty.expect(PROMPT);
    pty.send(UP);
    pty.expect(&format!("{PROMPT}/skill line-1500"));
    end(pty);
    let kept: String = (501..=1500).map(|n| format!("/skill line-{n}\n")).collect();
    assert_eq!(fs::read_to_string(history(&sandbox)).unwrap(), kept);
}

/// A link or a FIFO where the history belongs is refused with a warning:
/// the session runs without a history file, and nothing is written
/// through the link.
#[test]
fn history_is_never_kept_through_a_link_or_in_a_fifo() {
    let sandbox = sandbox();
    let elsewhere = sandbox.base.join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::create_dir_all(&sandbox.state).unwrap();
    std::os::unix::fs::symlink(&elsewhere, sandbox.state.join("history")).unwrap();
    let mut pty = sandbox.typed_session("linked", WIDE, &[]);
    pty.expect(PROMPT);
    run(&mut pty, "/skill docs");
    // History still works within the session.
    pty.send(UP);
    pty.expect(&format!("{PROMPT}/skill docs"));
    let stderr = end(pty);
    assert!(
        stderr.contains("bcode-prompt: warning: session history not kept: "),
        "{stderr}"
    );
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);

    let sandbox = self::sandbox();
    fs::create_dir_all(sandbox.state.join("history")).unwrap();
    let fifo = history(&sandbox);
    mkfifo(&fifo);
    let mut pty = sandbox.typed_session("fifo", WIDE, &[]);
    pty.expect(PROMPT);
    run(&mut pty, "/skill docs");
    let stderr = end(pty);
    assert!(
        stderr.contains("bcode-prompt: warning: session history not kept: "),
        "{stderr}"
    );
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

/// Piped, the session edits nothing and keeps no history.
#[test]
fn a_piped_session_keeps_no_history() {
    let sandbox = sandbox();
    let out = sandbox.run_session("piped", &[], b"/skills\n/skill docs\n");
    common::assert_exit_0(&out);
    assert!(!sandbox.state.join("history").exists());
}
