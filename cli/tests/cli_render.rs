//! `render` and `diff` as an operator runs them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{RENDER_PINNED, Sandbox, age, binary, succeed, succeed_stdout, write};

/// `bcode-prompt --repo <repo>` in Berlin time.
fn berlin(sandbox: &Sandbox) -> Command {
    let mut command = sandbox.command();
    command.env("TZ", "Europe/Berlin");
    command
}

/// A sandbox whose repository has the `alpha` skill and an `AGENTS.md`.
fn setup() -> Sandbox {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/alpha/SKILL.md"),
        "---\ndescription: Alpha skill\n---\nAlpha body\n",
    );
    write(
        &sandbox.repo.join("AGENTS.md"),
        "Run the tests before you finish.\n",
    );
    sandbox
}

#[test]
fn render_prints_system_then_divider_then_request_context() {
    let sandbox = setup();
    let repo = &sandbox.repo;
    let text = succeed_stdout(berlin(&sandbox).args([
        "render",
        "--now",
        "2026-07-01T10:00:00Z",
        "--skill",
        "alpha",
    ]));
    let (system, request) = text.split_once("\n===== request-only context (sent with this request, not part of the cached system prompt) =====\n\n").unwrap();
    assert!(
        system.starts_with("You are Bcode, a coding agent"),
        "{system}"
    );
    assert!(
        system.contains("Run the tests before you finish.") && system.contains("<id>alpha</id>")
    );
    assert!(request.contains("Current local date and time: Wednesday 2026-07-01 12:00:00 CEST (UTC+02:00, Europe/Berlin)."), "{request}");
    assert!(request.contains(&format!(
        "<skill id=\"alpha\" name=\"alpha\" location=\"{}\">",
        repo.join(".bcode/skills/alpha/SKILL.md").display()
    )));
    assert!(
        request.contains("Git: the working directory is not inside a git repository."),
        "{request}"
    );
}

#[test]
fn render_errors_exit_2() {
    let sandbox = setup();
    for (args, message) in [
        (vec!["render", "--skill", "alpah"], "did you mean `alpha`?"),
        (
            vec!["render", "--now", "yesterday"],
            "--now \"yesterday\" is not an RFC 3339 timestamp",
        ),
        (
            vec!["render", "--timezone", "Mars/Olympus"],
            "--timezone \"Mars/Olympus\" is not an IANA time zone name",
        ),
        (
            vec!["--set", "system_prompt.mode=replace", "render"],
            "system_prompt.text",
        ),
    ] {
        let out = berlin(&sandbox).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn diff_names_the_section_that_breaks_the_cache() {
    let sandbox = setup();
    let save = |name: &str, args: &[&str]| {
        let out = succeed(berlin(&sandbox).args(["render", "--json"]).args(args));
        let path = sandbox.base.join(name);
        fs::write(&path, &out.stdout).unwrap();
        path
    };
    let a = save("a.json", &["--now", "2026-07-01T10:00:00Z"]);
    let b = save("b.json", &["--now", "2026-07-01T11:00:00Z"]);
    let c = save(
        "c.json",
        &[
            "--now",
            "2026-07-01T10:00:00Z",
            "--set",
            "skills.prompt.include_keywords=true",
            "--set",
            "system_prompt.sections.user_authority=false",
        ],
    );

    let diff = |x: &Path, y: &Path| {
        let out = binary().arg("diff").arg(x).arg(y).output().unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    let (code, report) = diff(&a, &a);
    assert_eq!(code, Some(0));
    assert!(report.starts_with("system text: identical"), "{report}");

    // A clock change touches only the request-only context.
    let (code, report) = diff(&a, &b);
    assert_eq!(code, Some(1));
    assert!(report.starts_with("system text: identical"), "{report}");
    assert!(report.contains("request-only context: first difference at byte 51, in section `current_datetime` (A) / section `current_datetime` (B)"), "{report}");
    assert!(
        report.contains("== current_datetime (changed: "),
        "{report}"
    );

    // Turning user_authority off changes the system text before the boundary.
    let (code, report) = diff(&a, &c);
    assert_eq!(code, Some(1));
    let first = report.lines().next().unwrap();
    assert!(
        first.starts_with("system text: first difference at byte "),
        "{report}"
    );
    assert!(report.contains("before the cache boundary"), "{report}");
    assert!(
        report.contains("== user_authority (only in A, "),
        "{report}"
    );

    let out = binary()
        .arg("diff")
        .arg(&a)
        .arg(sandbox.base.join("missing.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_second_render_is_answered_by_the_disk_cache_with_the_same_bytes() {
    let sandbox = Sandbox::new().short_racy_window();
    for id in ["alpha", "beta"] {
        write(
            &sandbox.repo.join(format!(".bcode/skills/{id}/SKILL.md")),
            &format!("---\ndescription: The {id} skill.\n---\nBody.\n"),
        );
    }
    age(&sandbox.repo);
    // Setting mtimes back does not age the files (their ctime is now): wait
    // out the (shortened) racy window, or the render rightly trusts no stamp.
    common::past_racy_window();
    let render = |extra: &[&str]| succeed(sandbox.command().args(RENDER_PINNED).args(extra)).stdout;
    let first = render(&[]);
    let cache = sandbox.state.join("cache/skills");
    let files: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
    assert_eq!(files.len(), 1, "one cache entry for one set of roots");
    let second = render(&[]);
    assert_eq!(first, second);
    assert!(String::from_utf8_lossy(&second).contains("The beta skill."));

    // Switched off, nothing more is written and the bytes are the same.
    std::fs::remove_dir_all(&cache).unwrap();
    let off = render(&["--set", "skills.disk_cache=false"]);
    assert_eq!(first, off);
    assert!(!cache.exists());
}

/// `render --session DIR` keeps the relevant-mode focus between renders; a
/// relative DIR is taken from the working directory, like every path on the
/// command line (it used to resolve against the repository).
#[test]
fn render_session_folder_is_relative_to_the_working_directory() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/invariants/parser.md"),
        "---\nid: parser-rules\ntitle: Parser rules\nsummary: No allocation per token\nkeywords: [parser]\n---\nKeep it allocation-free.\n",
    );
    let render = |prompt: &str| {
        succeed_stdout(
            sandbox
                .command()
                .current_dir(&sandbox.base)
                .args(["--set", "invariants.mode=\"relevant\""])
                .args([
                    "render",
                    "--explain",
                    "--prompt",
                    prompt,
                    "--session",
                    "work/focus",
                ]),
        )
    };
    let first = render("fix the parser");
    assert!(
        first.contains("repository_invariants: session sidecar: saved focus #2 [parser-rules] for the next prompt"),
        "{first}"
    );
    let sidecar = bcode_prompt_sections::sidecar_path(&sandbox.base.join("work/focus"));
    assert!(sidecar.is_file(), "{}", sidecar.display());
    assert!(!sandbox.repo.join("work").exists());
    let second = render("and again");
    assert!(
        second.contains("repository_invariants: recovered focus #2 from the session sidecar"),
        "{second}"
    );
}
