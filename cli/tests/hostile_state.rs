//! The state folder (issue 24, items 3 and 4): `BCODE_STATE_DIR` may name a
//! folder another account prepared (a CI runner, a shared machine). A
//! folder that is not the user's, or that others may write to, is refused
//! (render goes on without the disk cache and says why; a session refuses
//! to start), links planted in it are never written through, and an
//! `events.jsonl` that is not a regular file, or is huge, cannot stop a
//! session from starting or finishing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
#![cfg(target_os = "linux")] // chown, FIFOs, /dev/zero and sparse files are Linux facts here

use crate::common;

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::{Sandbox, mkfifo, text, write};

/// The generous bound on any of these commands: a hostile state file must
/// never make one wait for it (each used to run for ever, or for minutes).
const DEADLINE: Duration = Duration::from_secs(20);

fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/alpha/SKILL.md"),
        "---\ndescription: First skill\n---\nBody.\n",
    );
    sandbox
}

/// [`sandbox`] with its skill tree aged past the racy window, so a render
/// trusts its stamps and writes the disk cache (where the state folder
/// allows it). The wait is for the change time, which cannot be set back.
fn aged_sandbox() -> Sandbox {
    let sandbox = sandbox().short_racy_window();
    common::age(&sandbox.repo);
    common::past_racy_window();
    sandbox
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs `args` in the sandbox with `stdin` as input, killing it past the
/// deadline (then the test fails, showing what it printed).
fn run_bounded(sandbox: &Sandbox, args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = sandbox
        .command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let script = stdin.to_vec();
    // A refused session exits before reading: a broken pipe is expected.
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&script);
    });
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > DEADLINE {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "`{}` still ran after {DEADLINE:?}\nstdout:\n{}\nstderr:\n{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    writer.join().unwrap();
    child.wait_with_output().unwrap()
}

fn render(sandbox: &Sandbox) -> Output {
    run_bounded(
        sandbox,
        &[
            "render",
            "--now",
            "2026-11-29T12:00:00Z",
            "--timezone",
            "UTC",
        ],
        b"",
    )
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// What a refused session prints.
fn refused_session(out: &Output, log: &Path, reason: &str) {
    assert_eq!(
        (out.status.code(), text(&out.stdout), text(&out.stderr)),
        (
            Some(2),
            String::new(),
            format!(
                "bcode-prompt: cannot open the event log `{0}`: event log `{0}` refused: {reason}\n",
                log.display()
            )
        )
    );
}

/// The default state folder render keeps its disk cache in works as before.
#[test]
fn a_private_state_folder_keeps_the_disk_cache() {
    let sandbox = aged_sandbox();
    let out = render(&sandbox);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (Some(0), String::new())
    );
    let cache = names(&sandbox.state.join("cache/skills"));
    assert_eq!(cache.len(), 1, "{cache:?}");
    assert!(cache[0].starts_with("discovery-") && cache[0].ends_with(".json"));
    let mode = fs::metadata(&sandbox.state).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
}

/// A state folder anyone may write to: render still renders, without the
/// disk cache, and says why; a session refuses to start.
#[test]
fn a_state_folder_writable_by_others_is_not_used() {
    let sandbox = aged_sandbox();
    fs::create_dir(&sandbox.state).unwrap();
    chmod(&sandbox.state, 0o777);
    let out = render(&sandbox);
    let refusal = format!(
        "the state folder `{0}` is writable by other users (mode 777): they could plant links \
         in it; run `chmod go-w {0}` or use a folder of your own",
        sandbox.state.display()
    );
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(0),
            format!("bcode-prompt: warning: {refusal}; the skill disk cache is not used\n")
        )
    );
    assert!(text(&out.stdout).contains("alpha"));
    assert_eq!(names(&sandbox.state), Vec::<String>::new());

    let out = run_bounded(&sandbox, &["session", "--id", "s"], b"/quit\n");
    assert_eq!(
        (out.status.code(), text(&out.stdout), text(&out.stderr)),
        (
            Some(2),
            String::new(),
            format!("bcode-prompt: cannot keep a session log: {refusal}\n")
        )
    );
    assert_eq!(names(&sandbox.state), Vec::<String>::new());
}

/// A state folder another user owns (only root can make one in a test).
#[test]
fn a_state_folder_of_another_user_is_not_used() {
    if !fs::metadata("/proc/self").is_ok_and(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid() == 0
    }) {
        eprintln!("skipped: only root can give a folder to another user");
        return;
    }
    let sandbox = sandbox();
    fs::create_dir(&sandbox.state).unwrap();
    chmod(&sandbox.state, 0o755);
    std::os::unix::fs::chown(&sandbox.state, Some(4242), Some(4242)).unwrap();
    let refusal = format!(
        "the state folder `{}` belongs to uid 4242, not to this user (uid 0): another user \
         could plant links in it; point BCODE_STATE_DIR or XDG_STATE_HOME at a folder of your own",
        sandbox.state.display()
    );
    let out = render(&sandbox);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(0),
            format!("bcode-prompt: warning: {refusal}; the skill disk cache is not used\n")
        )
    );
    assert_eq!(names(&sandbox.state), Vec::<String>::new());
    let out = run_bounded(&sandbox, &["session", "--id", "s"], b"/quit\n");
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(2),
            format!("bcode-prompt: cannot keep a session log: {refusal}\n")
        )
    );
}

/// The disk cache's folder replaced by a link to a folder of the victim's
/// choosing: the cache used to be written there. Now the link is refused
/// and the victim's folder stays empty.
#[test]
fn a_link_planted_as_the_cache_folder_is_not_followed() {
    let sandbox = aged_sandbox();
    let victim = sandbox.base.join("victim");
    fs::create_dir_all(&victim).unwrap();
    fs::create_dir_all(sandbox.state.join("cache")).unwrap();
    symlink(&victim, sandbox.state.join("cache/skills")).unwrap();
    let out = render(&sandbox);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(0),
            format!(
                "bcode-prompt: warning: `{}` in the state folder is a symbolic link; links there \
                 are never followed; the skill disk cache is not used\n",
                sandbox.state.join("cache/skills").display()
            )
        )
    );
    assert_eq!(names(&victim), Vec::<String>::new());
}

/// `events.jsonl` planted as a link to a file the user can write: the
/// session used to append its events to it.
#[test]
fn a_link_planted_as_the_event_log_is_refused() {
    let sandbox = sandbox();
    let victim = sandbox.base.join("victim.txt");
    fs::write(&victim, "precious\n").unwrap();
    let folder = sandbox.state.join("sessions/s");
    fs::create_dir_all(&folder).unwrap();
    let log = folder.join("events.jsonl");
    symlink(&victim, &log).unwrap();
    let out = run_bounded(
        &sandbox,
        &["session", "--id", "s"],
        b"/skill alpha\n/quit\n",
    );
    refused_session(
        &out,
        &log,
        "it is a symbolic link; an event log is never opened through one",
    );
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
}

/// `events.jsonl` as a FIFO, or a link to `/dev/zero` or `/dev/full`: the
/// session scanned it for the last sequence number and never started.
#[test]
fn special_files_as_the_event_log_are_refused_at_once() {
    for (id, special) in [
        ("fifo", None),
        ("zero", Some("/dev/zero")),
        ("full", Some("/dev/full")),
    ] {
        let sandbox = sandbox();
        let folder = sandbox.state.join("sessions").join(id);
        fs::create_dir_all(&folder).unwrap();
        let log = folder.join("events.jsonl");
        let reason = match special {
            Some(device) => {
                symlink(device, &log).unwrap();
                "it is a symbolic link; an event log is never opened through one"
            }
            None => {
                mkfifo(&log);
                "it is not a regular file"
            }
        };
        let out = run_bounded(&sandbox, &["session", "--id", id], b"/quit\n");
        refused_session(&out, &log, reason);
    }
}

/// A 20 GB sparse `events.jsonl`: the session read it whole before doing
/// anything. A hole with no newline is refused from its last bytes; one
/// that ends in a record is continued from it, at once.
#[test]
fn a_huge_sparse_event_log_costs_only_its_end() {
    const SIZE: u64 = 20 * 1024 * 1024 * 1024;
    let sandbox = sandbox();
    let folder = sandbox.state.join("sessions/hole");
    fs::create_dir_all(&folder).unwrap();
    let log = folder.join("events.jsonl");
    fs::File::create(&log).unwrap().set_len(SIZE).unwrap();
    let out = run_bounded(&sandbox, &["session", "--id", "hole"], b"/quit\n");
    refused_session(
        &out,
        &log,
        &format!(
            "its last line is longer than {} bytes, the longest record",
            bcode_skill::MAX_RECORD_BYTES
        ),
    );

    // The same hole, then one intact record: numbering goes on after it.
    let record = "\n{\"seq\":41,\"at\":\"2026-01-01T00:00:00.000Z\",\"event\":\"SkillDeactivated\",\"id\":\"alpha\",\"reason\":\"explicit\"}\n";
    {
        use std::io::Write;
        let mut file = fs::OpenOptions::new().append(true).open(&log).unwrap();
        file.write_all(record.as_bytes()).unwrap();
    }
    let out = run_bounded(
        &sandbox,
        &["session", "--id", "hole"],
        b"/skill alpha\n/quit\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let end = {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = fs::File::open(&log).unwrap();
        let len = file.seek(SeekFrom::End(0)).unwrap();
        file.seek(SeekFrom::Start(SIZE + record.len() as u64))
            .unwrap();
        let mut tail = String::new();
        file.read_to_string(&mut tail).unwrap();
        assert_eq!(len, SIZE + (record.len() + tail.len()) as u64);
        tail
    };
    let seqs: Vec<u64> = end
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, [42, 43]);
}
