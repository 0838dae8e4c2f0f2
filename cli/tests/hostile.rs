//! The trust line (issue 12): a cloned repository, a broken `.git`, odd
//! bytes or a hostile input can never leak, hang, crash or steer the host.
//! Each test drives the real binary with one hostile input found through
//! the CLI and checks the whole answer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
#![cfg(unix)] // non-UTF-8 names, FIFOs and /dev/zero are Unix facts

use crate::common;

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::os::unix::ffi::OsStrExt;
use std::process::Stdio;

use common::{Sandbox, age, mkfifo, text, wait_or_kill, write};
use serde_json::{Value, json};

/// `PWD` as a shell sets it after `cd` into a Latin-1 named checkout: the
/// environment snapshot skips it instead of panicking.
#[test]
fn a_non_utf8_environment_variable_does_not_crash() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/alpha/SKILL.md"),
        "---\ndescription: First skill\n---\nBody.\n",
    );
    let out = sandbox
        .command()
        .env("PWD", OsStr::from_bytes(b"/src/caf\xe9"))
        .env("TZ", OsStr::from_bytes(b"Europe/Z\xfcrich"))
        .args(["skills", "list"])
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), text(&out.stdout), text(&out.stderr)),
        (
            Some(0),
            "alpha  [repo:.bcode/skills]\n    First skill\n".to_owned(),
            "bcode-prompt: warning: environment variable TZ is not UTF-8 (Europe/Z\u{fffd}rich); it is ignored\n\
             bcode-prompt: 1 skill; no problems in skill files\n"
                .to_owned()
        )
    );
}

/// A skill folder with a Latin-1 name: discovery skips it with a
/// diagnostic, and `skills list --json` used to panic serialising that
/// diagnostic's path. Paths that are not UTF-8 are given lossily with their
/// exact bytes beside them; UTF-8 paths have no `_bytes` field.
#[test]
fn list_json_gives_non_utf8_paths_lossily_with_their_bytes() {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".bcode/skills");
    let folder = skills.join(OsStr::from_bytes(b"caf\xe9"));
    write(
        &folder.join("SKILL.md"),
        "---\nid: cafe\ndescription: Latin-1 folder\n---\nBody.\n",
    );
    write(
        &skills.join("alpha/SKILL.md"),
        "---\ndescription: First skill\n---\nBody.\n",
    );
    let out = sandbox.run(&["skills", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let skills = doc["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0]["id"], "alpha");
    assert_eq!(
        (
            skills[0].get("location_bytes"),
            skills[0].get("directory_bytes")
        ),
        (None, None)
    );
    let diagnostics = doc["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    let d = &diagnostics[0];
    assert_eq!(
        (&d["code"], &d["path"], &d["path_bytes"]),
        (
            &json!("unreadable"),
            &json!(folder.to_string_lossy()),
            &json!(folder.as_os_str().as_bytes())
        )
    );
    assert!(d["path"].as_str().unwrap().ends_with("/caf\u{fffd}"));
}

/// A repository checked out under a Latin-1 name: `skills show --json` used
/// to panic on the skill's location.
#[test]
fn show_json_in_a_non_utf8_repository() {
    let sandbox = Sandbox::new();
    let repo = sandbox.base.join(OsStr::from_bytes(b"r\xe9po"));
    let folder = repo.join(".bcode/skills/alpha");
    write(
        &folder.join("SKILL.md"),
        "---\ndescription: First skill\n---\nBody.\n",
    );
    let out = sandbox
        .command_in(&repo)
        .args(["skills", "show", "alpha", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let location = folder.join("SKILL.md");
    let skill = &doc["skill"];
    assert_eq!(
        (&skill["id"], &skill["location"], &skill["location_bytes"]),
        (
            &json!("alpha"),
            &json!(location.to_string_lossy()),
            &json!(location.as_os_str().as_bytes())
        )
    );
    assert_eq!(doc["diagnostics"], json!([]));
}

/// Runs `session --id <id>` with `script` on stdin; returns the exit code
/// and stderr.
fn session(sandbox: &Sandbox, id: &str, script: &[u8]) -> (Option<i32>, String) {
    let out = sandbox.run_session(id, &[], script);
    (out.status.code(), text(&out.stderr))
}

/// A `/skill` with more than a megabyte of arguments: the record of its
/// activation was over the sink's `MAX_RECORD_BYTES` and was lost. The event
/// now keeps a bounded preview and says how much was given.
#[test]
fn an_activation_with_huge_arguments_is_still_logged() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/alpha/SKILL.md"),
        "---\ndescription: First skill\n---\nBody.\n",
    );
    // Under the session's line bound (1 MiB), yet over the log's record
    // bound once JSON writes each control character as six bytes.
    let argument = "\u{1}".repeat(200_000);
    let (code, stderr) = session(
        &sandbox,
        "big",
        format!("/skill alpha {argument}\n/quit\n").as_bytes(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr, "");
    let log = bcode_skill::read_events(&sandbox.state.join("sessions/big/events.jsonl")).unwrap();
    assert_eq!(log.problems, []);
    let events: Vec<Value> = log
        .events
        .iter()
        .map(|r| serde_json::to_value(&r.event).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["SkillActivated", "SkillContextLoaded"]);
    // The default `skills.preview_max_chars` (2000) less one for the
    // argument itself, the marker included.
    let kept = 1973;
    assert_eq!(
        events[0],
        json!({
            "event": "SkillActivated",
            "id": "alpha",
            "source": "repo:.bcode/skills",
            "arguments": [format!("{}… [{} more characters]", &argument[..kept], argument.len() - kept)],
            "arguments_truncated": true,
            "arguments_bytes": argument.len(),
            "reason": "explicit",
        })
    );
}

/// Two sessions with one id used to write interleaved records with the
/// same sequence numbers. The second now stops at once, exit 2, naming the
/// log and the likely cause.
#[test]
fn a_second_session_with_the_same_id_is_refused() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(&sandbox.repo).unwrap();
    let mut first = sandbox
        .command()
        .args(["session", "--id", "twice"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The banner is printed after the event log is open (and locked).
    let mut banner = String::new();
    BufReader::new(first.stdout.take().unwrap())
        .read_line(&mut banner)
        .unwrap();
    assert!(banner.starts_with("Skill session twice"), "{banner}");
    let (code, stderr) = session(&sandbox, "twice", b"/skills\n");
    let log = sandbox.state.join("sessions/twice/events.jsonl");
    let log = log.display();
    assert_eq!(
        (code, stderr),
        (
            Some(2),
            format!(
                "bcode-prompt: cannot open the event log `{log}`: event log `{log}` is in use by another writer (is a session with the same id still running?)\n"
            )
        )
    );
    drop(first.stdin.take());
    assert_eq!(first.wait().unwrap().code(), Some(0));
    // Once the first has ended, the id is free again.
    assert_eq!(session(&sandbox, "twice", b"/quit\n").0, Some(0));
}

/// A skill name holding the body placeholder the block used to be split on
/// (`\0body\0`, a valid YAML escape): the body moved into the `name`
/// attribute. Now the block is composed without in-band sentinels (and
/// the NUL is shown as `\u{0}`, issue 24).
#[test]
fn a_name_holding_the_old_body_placeholder_stays_in_its_attribute() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/alpha/SKILL.md"),
        "---\nname: \"a\\0body\\0b\"\ndescription: First skill\n---\nThe body.\n",
    );
    let out = sandbox.run(&["skills", "context", "alpha"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let root = sandbox.repo.join(".bcode/skills").display().to_string();
    assert_eq!(
        text(&out.stdout),
        format!(
            "<skill id=\"alpha\" name=\"a\\u{{0}}body\\u{{0}}b\" location=\"{root}/alpha/SKILL.md\">\nReferences are relative to {root}/alpha.\nSource label: repo:.bcode/skills\n\nThe body.\n</skill>\n"
        )
    );
}

/// `skills.max_context_bytes` below the block's frame used to give an
/// empty block with no marker. The marker now wins over the content: open
/// tag, marker, close tag.
#[test]
fn a_context_limit_below_the_frame_still_gives_a_marked_block() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/alpha/SKILL.md"),
        "---\ndescription: First skill\n---\nThe body.\n",
    );
    let out = sandbox.run(&[
        "--set",
        "skills.max_context_bytes=20",
        "skills",
        "context",
        "alpha",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let location = sandbox.repo.join(".bcode/skills/alpha/SKILL.md");
    let location = location.display();
    assert_eq!(
        text(&out.stdout),
        format!(
            "<skill id=\"alpha\" name=\"alpha\" location=\"{location}\">\n[… skill body truncated: 9 more bytes not shown (skills.max_context_bytes = 20). Read the full file at {location}]\n</skill>\n"
        )
    );
}

/// A skill whose name and description carry terminal escape sequences:
/// OSC 0 (window title), OSC 52 (clipboard write), `ESC [2J` (clear).
fn escape_fixture() -> Sandbox {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/evil/SKILL.md"),
        "---\nname: \"\\e]0;pwned\\a\"\ndescription: \"Clip \\e]52;c;cm0gLXJmIH4=\\a board \\e[2J\"\nmetadata:\n  \"k\\e[1m\": \"v\\e[1m\"\n---\nBody.\n",
    );
    // A raw ESC in a broken front-matter line: `doctor` quotes the line.
    write(
        &sandbox.repo.join(".bcode/skills/broken/SKILL.md"),
        "---\ndescription: \"\u{1b}[2Jwiped\n---\n",
    );
    sandbox
}

fn assert_no_control_bytes(output: &[u8]) {
    let found: Vec<u8> = output
        .iter()
        .copied()
        .filter(|b| b.is_ascii_control() && !matches!(b, b'\n' | b'\t'))
        .collect();
    assert_eq!(found, b"", "{}", String::from_utf8_lossy(output));
}

/// Escape sequences in a skill's text reached the terminal raw through
/// `skills list`, `show` and `doctor`; they are now shown, not obeyed.
#[test]
fn human_output_shows_escape_sequences_instead_of_obeying_them() {
    let sandbox = escape_fixture();
    let list = sandbox.run(&["skills", "list"]);
    assert_eq!(list.status.code(), Some(0));
    assert_no_control_bytes(&list.stdout);
    assert_no_control_bytes(&list.stderr);
    assert_eq!(
        text(&list.stdout),
        "evil  [repo:.bcode/skills]\n    Clip \\u{1b}]52;c;cm0gLXJmIH4=\\u{7} board \\u{1b}[2J\n"
    );

    let show = sandbox.run(&["skills", "show", "evil"]);
    assert_eq!(show.status.code(), Some(0));
    assert_no_control_bytes(&show.stdout);
    assert_no_control_bytes(&show.stderr);
    let shown = text(&show.stdout);
    let lines: Vec<&str> = shown
        .lines()
        .filter(|l| {
            l.starts_with("name:") || l.starts_with("description:") || l.starts_with("metadata.")
        })
        .collect();
    assert_eq!(
        lines,
        [
            "name:           \\u{1b}]0;pwned\\u{7}",
            "description:    Clip \\u{1b}]52;c;cm0gLXJmIH4=\\u{7} board \\u{1b}[2J",
            "metadata.k\\u{1b}[1m: \"v\\u001b[1m\"",
        ]
    );

    let doctor = sandbox.run(&["skills", "doctor"]);
    assert_eq!(doctor.status.code(), Some(0));
    assert_no_control_bytes(&doctor.stdout);
    assert_no_control_bytes(&doctor.stderr);
    let report = text(&doctor.stdout);
    let excerpt: Vec<&str> = report.lines().filter(|l| l.starts_with("2 | ")).collect();
    assert_eq!(excerpt, ["2 | description: \"\\u{1b}[2Jwiped"]);
}

/// JSON output stays exact: the escape sequences are data there, escaped by
/// JSON itself.
#[test]
fn json_output_keeps_skill_text_exact() {
    let sandbox = escape_fixture();
    let out = sandbox.run(&["skills", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&doc["skills"][0]["name"], &doc["skills"][0]["description"]),
        (
            &json!("\u{1b}]0;pwned\u{7}"),
            &json!("Clip \u{1b}]52;c;cm0gLXJmIH4=\u{7} board \u{1b}[2J")
        )
    );
    assert_no_control_bytes(&out.stdout);
}

/// `diff A /dev/zero` read without limit until memory ran out. Inputs are
/// now read up to 64 MiB, with an exit 2 naming the file. The address-space
/// cap keeps a regression from taking the machine down with it.
#[test]
fn diff_refuses_an_endless_input() {
    let sandbox = Sandbox::new();
    let saved = sandbox.base.join("a.json");
    std::fs::write(
        &saved,
        r#"{"system": "", "request_context": "", "cache_boundary": 0, "sections": []}"#,
    )
    .unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2000000 && exec \"$0\" diff \"$1\" /dev/zero")
        .arg(env!("CARGO_BIN_EXE_bcode-prompt"))
        .arg(&saved)
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), text(&out.stdout), text(&out.stderr)),
        (
            Some(2),
            String::new(),
            "bcode-prompt: cannot read `/dev/zero`: it is larger than 64 MiB, far more than any saved `render --json` result\n".to_owned()
        )
    );
}

/// `session` printed skill text raw (listing, previews, suggestions,
/// `/render`); every such character is now shown as an escape.
#[test]
fn a_session_shows_escape_sequences_instead_of_obeying_them() {
    let sandbox = escape_fixture();
    write(
        &sandbox.repo.join(".bcode/skills/noisy/SKILL.md"),
        "---\ndescription: \"Noisy \\e[2J\"\nactivation:\n  keywords: [noisy]\n---\nBody \u{1b}]52;c;eA==\u{7} here.\n",
    );
    let out = sandbox.run_session(
        "escapes",
        &[],
        b"/skills\nnoisy things\n/skill noisy \x1b[2J\n/render\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_no_control_bytes(&out.stdout);
    assert_no_control_bytes(&out.stderr);
    let transcript = text(&out.stdout);
    assert!(
        transcript.contains("  noisy [repo:.bcode/skills]: Noisy \\u{1b}[2J\n"),
        "{transcript}"
    );
    assert!(
        transcript.contains("│ Body \\u{1b}]52;c;eA==\\u{7} here.\n"),
        "{transcript}"
    );
    assert!(
        transcript.contains("> /skill noisy \\u{1b}[2J\n"),
        "{transcript}"
    );
}

/// One non-UTF-8 line on stdin ended a piped session with a wrong message,
/// and lines had no length bound; each is now an error for that line only.
#[test]
fn a_bad_input_line_costs_only_itself() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/docs/SKILL.md"),
        "---\ndescription: Write docs\n---\nDocs body.\n",
    );
    let mut script = b"/skill \xff\xfe docs\n".to_vec();
    script.extend(std::iter::repeat_n(b'a', 2 * 1024 * 1024));
    script.extend_from_slice(b"\n/skill docs\n");
    let out = sandbox.run_session("lines", &[], &script);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let transcript = text(&out.stdout);
    let lines: Vec<&str> = transcript.lines().skip(1).collect();
    assert_eq!(
        lines[..3],
        [
            "error: input line 1 is not UTF-8 (invalid byte after 7 bytes); it was skipped",
            "error: input line 2 is 2097152 bytes, over the 1048576-byte limit; it was skipped",
            "> /skill docs",
        ],
        "{transcript}"
    );
    assert!(transcript.contains("Loaded skill `docs`"), "{transcript}");
}

/// The YAML fast path kept a lone CR inside a value (`x\r  y`) where YAML,
/// and serde-saphyr, read a line break and fold it to a space.
#[test]
fn a_lone_carriage_return_in_front_matter_is_a_line_break() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/alpha/SKILL.md"),
        "---\ndescription: first\r  second\nname: Alpha\r\n---\nBody.\n",
    );
    let out = sandbox.run(&["skills", "show", "alpha", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&doc["skill"]["description"], &doc["skill"]["name"]),
        (&json!("first second"), &json!("Alpha"))
    );
}

/// After an edit between turns, `/skill` paired the front matter that
/// discovery had read (the old name) with the body read now (the new
/// text). The block now comes from one read of the file. Through this CLI
/// every input line is a turn whose refresh also sees the edit, so this
/// test holds the end-to-end result; the one that fails without the
/// one-read load is `a_skill_edited_after_discovery_is_shown_as_one_version`
/// in `packages/skill/tests/hostile.rs`, where a registry can be older than
/// its files.
#[test]
fn a_skill_edited_between_turns_is_loaded_as_one_version() {
    let sandbox = Sandbox::new();
    let file = sandbox.repo.join(".bcode/skills/alpha/SKILL.md");
    write(
        &file,
        "---\nname: Old name\ndescription: First skill\n---\nOld body.\n",
    );
    let mut session = sandbox.live_session("edit");
    session.send("first prompt");
    session.read_until("(prompt noted");
    // Between turns, before any prompt refreshes the registry.
    std::fs::write(
        &file,
        "---\nname: New name\ndescription: First skill\n---\nNew body.\n",
    )
    .unwrap();
    session.send("/skill alpha");
    session.send("/render");
    let mut render = session.read_until("<skill id=\"alpha\"");
    render.push_str(&session.read_until("</skill>"));
    assert_eq!(session.finish(), Some(0));
    let block = render
        .rsplit_once("<skill id=\"alpha\"")
        .map(|(_, block)| block)
        .unwrap();
    assert!(
        block.starts_with(" name=\"New name\"") && block.contains("\nNew body.\n</skill>"),
        "{render}"
    );
}

/// Renders with `invariants.mode = "relevant"` and `--session <base>/focus`;
/// returns the exit code and the `--explain` output. A watchdog kills a
/// render that blocks, so a regression fails instead of hanging the suite.
fn relevant_render(sandbox: &Sandbox, prompt: &str) -> (Option<i32>, String) {
    let child = sandbox
        .command()
        .args(["--set", "invariants.mode=\"relevant\""])
        .args(["render", "--explain", "--prompt", prompt, "--session"])
        .arg(sandbox.base.join("focus"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_or_kill(child, std::time::Duration::from_secs(60));
    (
        out.status.code(),
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

fn invariant_fixture() -> Sandbox {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/invariants/parser.md"),
        "---\nid: parser-rules\ntitle: Parser rules\nsummary: No allocation per token\nkeywords: [parser]\n---\nKeep it allocation-free.\n",
    );
    sandbox
}

/// A FIFO as the relevant-mode sidecar blocked `render --session` for
/// ever (the sidecar was opened directly, and the open waits for a
/// writer). It is now an unreadable sidecar, reported and ignored.
#[test]
fn a_fifo_as_the_session_sidecar_does_not_block_a_render() {
    let sandbox = invariant_fixture();
    let focus = sandbox.base.join("focus");
    std::fs::create_dir_all(&focus).unwrap();
    let sidecar = bcode_prompt_sections::sidecar_path(&focus);
    mkfifo(&sidecar);
    let (code, output) = relevant_render(&sandbox, "fix the parser");
    assert_eq!(code, Some(0), "{output}");
    assert!(
        output.contains("repository_invariants: session sidecar: sidecar is unreadable (not a regular file (a FIFO, socket, device or directory)); ignored\n"),
        "{output}"
    );
    // The render went on and saved its own focus in the FIFO's place.
    assert!(
        output.contains("session sidecar: saved focus #2 [parser-rules] for the next prompt"),
        "{output}"
    );
    assert!(sidecar.is_file());
}

/// A stored generation of `u64::MAX` was accepted; the driver only adopts
/// newer generations, so that stale focus was saved again on every
/// render. It is now refused with a note, and the render starts afresh.
#[test]
fn an_impossible_sidecar_generation_is_refused() {
    let sandbox = invariant_fixture();
    let (code, first) = relevant_render(&sandbox, "fix the parser");
    assert_eq!(code, Some(0), "{first}");
    let sidecar = bcode_prompt_sections::sidecar_path(&sandbox.base.join("focus"));
    let mut stored: Value = serde_json::from_slice(&std::fs::read(&sidecar).unwrap()).unwrap();
    stored["generation"] = json!(u64::MAX);
    std::fs::write(&sidecar, serde_json::to_vec(&stored).unwrap()).unwrap();
    let (code, second) = relevant_render(&sandbox, "fix the parser again");
    assert_eq!(code, Some(0), "{second}");
    assert!(
        second.contains(&format!(
            "sidecar generation {} is beyond any real session",
            u64::MAX
        )),
        "{second}"
    );
    let saved: Value = serde_json::from_slice(&std::fs::read(&sidecar).unwrap()).unwrap();
    assert!(
        saved["generation"].as_u64().unwrap() < u64::from(u32::MAX),
        "{saved}"
    );
}

/// Rewrites the `alpha` entry of every disk-cache file with `tamper`. A
/// file is JSON lines: the header (with the count of skills) first, one
/// line per skill last.
fn tamper_disk_cache(sandbox: &Sandbox, tamper: &dyn Fn(&mut Value)) {
    let cache = sandbox.state.join("cache/skills");
    for entry in std::fs::read_dir(&cache).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let skills = lines[0]["skills"].as_u64().unwrap() as usize;
        let first_skill = lines.len() - skills;
        for skill in &mut lines[first_skill..] {
            if skill["manifest"]["id"] == "alpha" {
                tamper(skill);
            }
        }
        let mut out = String::new();
        for line in &lines {
            out.push_str(&serde_json::to_string(line).unwrap());
            out.push('\n');
        }
        std::fs::write(&path, out).unwrap();
    }
}

/// The disk cache was trusted to say where each skill is: a tampered
/// `location` made a later command read any file as the skill's body. A
/// stored summary is now used only when it lies under the root it claims.
#[test]
fn a_tampered_disk_cache_location_is_not_trusted() {
    let sandbox = Sandbox::new().short_racy_window();
    write(
        &sandbox.repo.join(".bcode/skills/alpha/SKILL.md"),
        "---\ndescription: First skill\n---\nThe real body.\n",
    );
    let secret = sandbox.base.join("secret/SKILL.md");
    write(
        &secret,
        "---\ndescription: First skill\n---\nA SECRET from outside the repository.\n",
    );
    age(&sandbox.base);
    common::past_racy_window();
    // `render` writes the disk cache (`skills.disk_cache`, on by default).
    let first = sandbox.run(&["render"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));

    // The cache answers later renders: a description changed in it shows.
    tamper_disk_cache(&sandbox, &|skill| {
        skill["manifest"]["description"] = json!("Tampered");
    });
    let second = sandbox.run(&["render"]);
    assert!(
        text(&second.stdout).contains("Tampered"),
        "{}",
        text(&second.stdout)
    );

    tamper_disk_cache(&sandbox, &|skill| {
        skill["location"] = json!(secret.display().to_string());
        skill["directory"] = json!(secret.parent().unwrap().display().to_string());
    });
    let out = sandbox.run(&["render", "--skill", "alpha"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let prompt = text(&out.stdout);
    assert!(prompt.contains("The real body."), "{prompt}");
    assert!(!prompt.contains("SECRET"), "{prompt}");
    assert!(!prompt.contains("Tampered"), "{prompt}");
}

/// An operator template that loops for ever (nested `range(100000)`) or
/// grows without bound (`"x" * 100000000` in a loop) used to hang the
/// render or take gigabytes; fuel and an output cap now end it with an
/// error naming the template.
#[test]
fn a_runaway_template_override_ends_with_an_error() {
    for (source, failure) in [
        (
            "{% for a in range(100000) %}{% for b in range(100000) %}{{ b }}{% endfor %}{% endfor %}",
            " at line 1: engine ran out of fuel",
        ),
        (
            "{% for a in range(100000) %}{{ \"x\" * 100000000 }}{% endfor %}",
            ": the output exceeds the limit of 67108864 bytes",
        ),
    ] {
        let sandbox = Sandbox::new();
        std::fs::create_dir_all(&sandbox.repo).unwrap();
        let ops = sandbox.base.join("ops");
        write(&ops.join("sections/agent_suffix.j2"), source);
        let setting = format!(
            "system_prompt.templates_dir={}",
            serde_json::to_string(&ops.display().to_string()).unwrap()
        );
        let child = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 4000000 && exec \"$@\"")
            .arg("sh")
            .arg(env!("CARGO_BIN_EXE_bcode-prompt"))
            .args(["--repo"])
            .arg(&sandbox.repo)
            .args(["--set", &setting, "render"])
            .env_clear()
            .env("HOME", &sandbox.home)
            .env("BCODE_STATE_DIR", &sandbox.state)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = wait_or_kill(child, std::time::Duration::from_secs(120));
        let file = ops.join("sections/agent_suffix.j2");
        assert_eq!(
            (out.status.code(), text(&out.stderr)),
            (
                Some(2),
                format!(
                    "bcode-prompt: cannot assemble the prompt: section `agent_suffix` failed: template `sections/agent_suffix.j2` overridden by {} failed to render{failure}\n",
                    file.display()
                )
            )
        );
    }
}

/// `bcode-prompt --repo work` with `args`, its address space capped at
/// `kib` KiB and its time at two minutes, stdout to a file (a prompt that
/// ran away must not fill the test's own memory). Returns the exit code,
/// stdout (`None` when over 4 MiB: only its size then) and stderr.
fn capped(
    sandbox: &Sandbox,
    work: &std::path::Path,
    args: &[&str],
    kib: u64,
) -> (Option<i32>, u64, Option<String>, String) {
    let stdout = sandbox.base.join("stdout.txt");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v \"$1\" && shift && exec timeout 120 \"$@\"")
        .arg("sh")
        .arg(kib.to_string())
        .arg(env!("CARGO_BIN_EXE_bcode-prompt"))
        .arg("--repo")
        .arg(work)
        .args(args)
        .env_clear()
        .env("HOME", &sandbox.home)
        .env("BCODE_STATE_DIR", &sandbox.state)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .output()
        .unwrap();
    let size = std::fs::metadata(&stdout).unwrap().len();
    let shown = (size <= 4 << 20).then(|| std::fs::read_to_string(&stdout).unwrap());
    (out.status.code(), size, shown, text(&out.stderr))
}

/// The issue's case (issue 38, item 11): one 8 MiB file linked as
/// `BCODE.md` and `AGENTS.md` in each of 40 nested folders made a 671 MB
/// prompt and took 2 GB. The same file through another link is placed once,
/// and all instructions together are bounded (by default 1 Mi characters),
/// cut with the marker: the render stays small, under a 1 GB address space.
#[test]
fn one_big_file_linked_as_every_instruction_file_is_placed_once_and_cut() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    let rules = sandbox.repo.join("rules.md");
    std::fs::write(&rules, "Rule.\n".repeat((8 << 20) / 6)).unwrap();
    let mut folder = sandbox.repo.clone();
    for level in 0..40 {
        if level > 0 {
            folder.push("d");
        }
        std::fs::create_dir_all(&folder).unwrap();
        for name in ["BCODE.md", "AGENTS.md"] {
            std::os::unix::fs::symlink(&rules, folder.join(name)).unwrap();
        }
    }
    let (code, size, shown, stderr) = capped(&sandbox, &folder, &["render", "--json"], 1 << 20);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    assert!(size < 3 << 20, "{size} bytes");
    let json: Value = serde_json::from_str(&shown.unwrap()).unwrap();
    let sections: Vec<&Value> = json["sections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["id"].as_str().unwrap().starts_with("repository_context"))
        .collect();
    let ids: Vec<&str> = sections.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["repository_context:BCODE.md"]);
    let notes: Vec<&str> = sections[0]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(notes.len(), 80, "{notes:?}");
    assert_eq!(
        notes[..3],
        [
            "cut by system_prompt.repository_instructions_total_max_chars",
            "AGENTS.md is the same file as BCODE.md (a link to it) and was left out",
            "d/BCODE.md is the same file as BCODE.md (a link to it) and was left out",
        ]
    );
    let len = 8 * 1024 * 1024 / 6 * 6;
    assert_eq!(
        sections[0]["truncations"],
        json!([{
            "cut_at_byte": 1_048_483,
            "full_text_at": format!("{}/BCODE.md", sandbox.repo.display()),
            "limit": {"chars": 1 << 20},
            "omitted_bytes": len - 1_048_483,
            "omitted_chars": len - 1_048_483,
            "original_bytes": len,
            "original_chars": len,
        }])
    );
    let system = json["system"].as_str().unwrap();
    assert_eq!(system.matches("[truncated: ").count(), 1);
}

/// Distinct instruction files together past
/// `system_prompt.repository_instructions_total_max_chars` (issue 38, item
/// 11): the file that crosses the total is cut with the marker, the one
/// after it is left out (unread), and the notes say why.
#[test]
fn instructions_past_the_total_are_cut_then_left_out() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    let body = |c: &str| format!("{}\n", c.repeat(999));
    for (path, c) in [
        ("BCODE.md", "r"),
        ("packages/AGENTS.md", "p"),
        ("packages/web/AGENTS.md", "w"),
    ] {
        write(&sandbox.repo.join(path), &body(c));
    }
    let work = sandbox.repo.join("packages/web");
    let (code, _, shown, stderr) = capped(
        &sandbox,
        &work,
        &[
            "--set",
            "system_prompt.repository_instructions_total_max_chars=1500",
            "render",
            "--json",
        ],
        4 << 20,
    );
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    let json: Value = serde_json::from_str(&shown.unwrap()).unwrap();
    let sections: Vec<(&str, &Value, &Value)> = json["sections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["id"].as_str().unwrap().starts_with("repository_context"))
        .map(|s| (s["id"].as_str().unwrap(), &s["notes"], &s["truncations"]))
        .collect();
    let agents = format!("{}/packages/AGENTS.md", sandbox.repo.display());
    // The kept prefix and its marker fit in the 500 characters left.
    let marker = |omitted: usize| {
        format!("\n[truncated: {omitted} of 1000 characters omitted; full text: {agents}]")
    };
    let cut = sections[1].2[0]["cut_at_byte"].as_u64().unwrap() as usize;
    assert!(cut > 300 && cut + marker(1000 - cut).len() <= 500, "{cut}");
    assert!(json["system"].as_str().unwrap().contains(&format!(
        "{}{}\n</repository_instructions>",
        "p".repeat(cut),
        marker(1000 - cut)
    )));
    assert_eq!(
        sections,
        [
            (
                "repository_context:BCODE.md",
                &json!([
                    "packages/web/AGENTS.md was left out: the instructions before it fill \
                     system_prompt.repository_instructions_total_max_chars (1500 characters)"
                ]),
                &json!([])
            ),
            (
                "repository_context:packages/AGENTS.md",
                &json!(["cut by system_prompt.repository_instructions_total_max_chars"]),
                &json!([{
                    "cut_at_byte": cut,
                    "full_text_at": agents,
                    "limit": {"chars": 500},
                    "omitted_bytes": 1000 - cut,
                    "omitted_chars": 1000 - cut,
                    "original_bytes": 1000,
                    "original_chars": 1000,
                }])
            ),
        ]
    );
}
