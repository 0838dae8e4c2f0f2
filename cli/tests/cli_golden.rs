//! Golden-file prompt testing through the CLI contract: a fixture rendered
//! with pinned facts and `--hermetic` is byte-identical from two checkout
//! paths, under two HOMEs and two process environments; `check` and
//! `--bless` work end to end; `facts` prints a facts file `render` reads.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{binary, git_commit_all, ok, write, write_files};

/// Every fact pinned, with neutral roots.
const FACTS: &str = r#"
now = "2025-06-15T14:30:00Z"
timezone = "Europe/Berlin"
shell = "bash"
locale = "en_US.UTF-8"
runtime_mode = "render"
home = "/home/user"
repo_root = "/src/project"
toolchain = ["rustc: rustc 1.95.0 (pinned)"]

[os]
family = "linux"
version = "Linux (Testix 1.0)"
arch = "x86_64"

[hosting]
ci = false
container = false
ssh = false

[git]
head = "branch"
branch = "main"
commit = "0123456789abcdef0123456789abcdef01234567"
status = [" M BCODE.md", "?? notes.txt"]
"#;

/// A repository fixture: instructions, an invariant, a repository skill and
/// a repository config that turns the toolchain section on.
fn make_fixture(repo: &Path) {
    write_files(
        repo,
        &[
            (
                "BCODE.md",
                "# Fixture\n\nRun `cargo test` before proposing a change.\n",
            ),
            (
                ".bcode/skills/rust-debugging/SKILL.md",
                "---\ndescription: Diagnose Rust build and test failures\n---\nRead the failing test first; files are under scripts/.\n",
            ),
            (
                ".bcode/invariants/01-core.md",
                "---\nid: core-no-io\ntitle: The core does no I/O\nsummary: Parsing takes data.\n---\nReading files happens at the edge.\n",
            ),
            (
                ".bcode/bcode.toml",
                "[system_prompt.sections]\ntoolchain_context = true\n",
            ),
        ],
    );
}

/// A home with a user skill and a user config that would change the prompt.
fn make_busy_home(home: &Path) {
    write_files(
        home,
        &[
            (
                ".config/bcode/skills/review-checklist/SKILL.md",
                "---\ndescription: Review pull requests before approval\n---\nCheck the tests.\n",
            ),
            (
                ".config/bcode/bcode.toml",
                "[system_prompt.sections]\nlocale = false\n\n[skills.prompt]\ncatalog = \"names_only\"\n",
            ),
        ],
    );
}

/// A fixture checkout in a fresh temporary folder: `base` holds `repo`
/// (the fixture) and an empty `home`.
struct Checkout {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    repo: PathBuf,
    home: PathBuf,
}

fn checkout() -> Checkout {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let repo = base.join("repo");
    make_fixture(&repo);
    let home = base.join("home");
    fs::create_dir_all(&home).unwrap();
    Checkout {
        _tmp: tmp,
        base,
        repo,
        home,
    }
}

fn bcode(repo: &Path, home: &Path, env: &[(&str, &str)]) -> Command {
    let mut command = binary();
    command.env("HOME", home).current_dir(repo);
    for (name, value) in env {
        command.env(name, value);
    }
    command
}

#[test]
fn hermetic_render_with_facts_is_the_same_everywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let facts = base.join("facts.toml");
    write(&facts, FACTS);

    // Checkout one: a bare folder, an empty home, a plain environment.
    let repo_a = base.join("a/repo");
    make_fixture(&repo_a);
    let home_a = base.join("home-a");
    fs::create_dir_all(&home_a).unwrap();
    let env_a = [
        ("LANG", "en_US.UTF-8"),
        ("TZ", "UTC"),
        ("SHELL", "/bin/bash"),
    ];

    // Checkout two: deeper, nested inside the team's own git repository
    // (whose HEAD would otherwise be the revision) as a repository of its
    // own (the nearest `.git` is its root, as for git), a home with user
    // skills and a user config, and every variable a probe reads set
    // differently.
    let team = base.join("elsewhere/team-repo");
    let repo_b = team.join("tests/fixtures/prompt");
    make_fixture(&repo_b);
    write(&team.join("README.md"), "team\n");
    git_commit_all(&team);
    git2::Repository::init(&repo_b).unwrap();
    let home_b = base.join("users/other/home");
    make_busy_home(&home_b);
    let env_b = [
        ("LANG", "de_DE.UTF-8"),
        ("LC_ALL", "fr_FR.UTF-8"),
        ("TZ", "Asia/Tokyo"),
        ("SHELL", "/usr/bin/zsh"),
        ("CI", "true"),
        ("SSH_CONNECTION", "10.0.0.1 22 10.0.0.2 22"),
        ("USER", "other"),
        ("XDG_CONFIG_HOME", ""),
    ];

    let render = |repo: &Path, home: &Path, env: &[(&str, &str)], extra: &[&str]| {
        ok(bcode(repo, home, env)
            // The fixture's own config turns the toolchain section on, a
            // key an untrusted repository may not set.
            .args(["--trust-repo", "render", "--hermetic", "--facts"])
            .arg(&facts)
            .args(["--skill", "rust-debugging"])
            .args(extra)
            .output()
            .unwrap())
    };
    let a = render(&repo_a, &home_a, &env_a, &[]);
    let b = render(&repo_b, &home_b, &env_b, &[]);
    assert_eq!(a, b, "the hermetic renders differ");
    // The same for the JSON document (sources, notes and all).
    let a_json = render(&repo_a, &home_a, &env_a, &["--json"]);
    let b_json = render(&repo_b, &home_b, &env_b, &["--json"]);
    assert_eq!(a_json, b_json, "the hermetic JSON renders differ");

    // What was pinned is what the model reads; no checkout path leaks.
    for needle in [
        r#"location="/src/project/BCODE.md""#,
        "<location>/src/project/.bcode/skills/rust-debugging/SKILL.md</location>",
        r#"location="/src/project/.bcode/skills/rust-debugging/SKILL.md">"#,
        "References are relative to /src/project/.bcode/skills/rust-debugging.",
        "rooted at /src/project.",
        "branch main at 0123456 (0123456789abcdef0123456789abcdef01234567)",
        "Sunday 2025-06-15 16:30:00 CEST",
        "shell bash",
        "Locale: en_US.UTF-8.",
        "rustc: rustc 1.95.0 (pinned)",
        "no CI, container or SSH session detected",
    ] {
        assert!(a.contains(needle), "missing {needle:?} in:\n{a}");
    }
    let base_text = base.display().to_string();
    assert!(!a.contains(&base_text), "a checkout path leaked:\n{a}");
    assert!(
        !a_json.contains(&base_text),
        "a checkout path leaked into JSON"
    );
    assert!(!a.contains("review-checklist"), "a user skill leaked");

    // Without --hermetic the second machine's home and environment show:
    // the test above would fail if the flag did nothing.
    let leaky = ok(bcode(&repo_b, &home_b, &env_b)
        .args(["render", "--facts"])
        .arg(&facts)
        .output()
        .unwrap());
    assert!(leaky.contains("review-checklist"), "{leaky}");
}

#[test]
fn hermetic_render_leaves_out_what_is_not_pinned() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = fs::canonicalize(tmp.path()).unwrap().join("repo");
    make_fixture(&repo);
    let home = repo.parent().unwrap().join("home");
    make_busy_home(&home);
    let out = ok(bcode(&repo, &home, &[("LANG", "de_DE.UTF-8"), ("CI", "1")])
        .args(["render", "--hermetic", "--json"])
        .output()
        .unwrap());
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let omitted: Vec<&str> = json["omitted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    for id in [
        "current_datetime",
        "execution_environment",
        "hosting_environment",
        "locale",
        "worktree_context",
        "git_revision",
        "dynamic_repository_context",
        "toolchain_context",
    ] {
        assert!(omitted.contains(&id), "{id} not omitted: {omitted:?}");
    }
    let system = json["system"].as_str().unwrap();
    assert!(system.contains(r#"location="./BCODE.md""#), "{system}");
    assert!(!system.contains("review-checklist"));
}

#[test]
fn check_bless_and_fail_end_to_end() {
    let Checkout {
        _tmp,
        base,
        repo,
        home,
    } = checkout();
    let facts = base.join("facts.toml");
    write(&facts, FACTS);
    let golden = repo.join("golden/prompt.txt");
    let check = |extra: &[&str]| {
        bcode(&repo, &home, &[])
            .args(["check", "golden/prompt.txt", "--hermetic"])
            .args(extra)
            .output()
            .unwrap()
    };

    // No golden yet: a usage error that says how to write one.
    let missing = check(&[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--bless"));

    // Bless: the golden is exactly what `render` prints, and its facts sit
    // beside it.
    ok(check(&["--bless", "--facts", facts.to_str().unwrap()]));
    let rendered = ok(bcode(&repo, &home, &[])
        .args(["render", "--hermetic", "--facts"])
        .arg(&facts)
        .output()
        .unwrap());
    assert_eq!(fs::read_to_string(&golden).unwrap(), rendered);
    let sidecar = fs::read_to_string(repo.join("golden/prompt.txt.facts.toml")).unwrap();
    assert!(
        sidecar.contains("repo_root = \"/src/project\""),
        "{sidecar}"
    );

    // Check passes, with the facts taken from the sidecar alone.
    let passed = check(&[]);
    assert_eq!(passed.status.code(), Some(0), "{passed:?}");

    // Change the fixture: exit 1, a readable report of the changed line.
    write(
        &repo.join("BCODE.md"),
        "# Fixture\n\nRun `cargo nextest run` before proposing a change.\n",
    );
    let failed = check(&[]);
    assert_eq!(failed.status.code(), Some(1));
    let report = String::from_utf8(failed.stdout).unwrap();
    assert!(
        report.contains("-Run `cargo test` before proposing a change.")
            && report.contains("+Run `cargo nextest run` before proposing a change.")
            && report.contains("@@ line "),
        "{report}"
    );
    assert!(repo.join("golden/prompt.txt.new").exists());

    // Bless again: the check passes and the stale `.new` is gone.
    ok(check(&["--bless"]));
    assert_eq!(check(&[]).status.code(), Some(0));
    assert!(!repo.join("golden/prompt.txt.new").exists());
    assert!(
        fs::read_to_string(&golden)
            .unwrap()
            .contains("cargo nextest run")
    );

    // The golden travels: another checkout path and home check against the
    // same golden and facts.
    let moved = base.join("moved/deeper/repo");
    make_fixture(&moved);
    write(
        &moved.join("BCODE.md"),
        "# Fixture\n\nRun `cargo nextest run` before proposing a change.\n",
    );
    fs::create_dir_all(moved.join("golden")).unwrap();
    for name in ["prompt.txt", "prompt.txt.facts.toml"] {
        fs::copy(
            repo.join("golden").join(name),
            moved.join("golden").join(name),
        )
        .unwrap();
    }
    let other_home = base.join("other-home");
    make_busy_home(&other_home);
    let travelled = bcode(&moved, &other_home, &[("LANG", "C"), ("CI", "true")])
        .args(["check", "golden/prompt.txt", "--hermetic"])
        .output()
        .unwrap();
    assert_eq!(travelled.status.code(), Some(0), "{travelled:?}");
}

#[test]
fn json_golden_reports_the_section_that_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let repo = base.join("repo");
    make_fixture(&repo);
    let facts = base.join("facts.toml");
    write(&facts, FACTS);
    let check = |extra: &[&str]| {
        bcode(&repo, &base, &[])
            .args(["check", "prompt.json", "--json", "--hermetic", "--facts"])
            .arg(&facts)
            .args(extra)
            .output()
            .unwrap()
    };
    ok(check(&["--bless"]));
    assert_eq!(check(&[]).status.code(), Some(0));
    let failed = check(&["--timezone", "America/New_York"]);
    assert_eq!(failed.status.code(), Some(1));
    let report = String::from_utf8(failed.stdout).unwrap();
    assert!(report.contains("current_datetime"), "{report}");
}

#[test]
fn facts_prints_a_facts_file_that_render_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let repo = base.join("repo");
    make_fixture(&repo);
    git_commit_all(&repo);
    let printed = ok(
        bcode(&repo, &base, &[("SHELL", "/bin/zsh"), ("LANG", "C.UTF-8")])
            .arg("facts")
            .output()
            .unwrap(),
    );
    for key in [
        "now = ",
        "timezone = ",
        "shell = \"zsh\"",
        "locale = \"C.UTF-8\"",
        "repo_root = ",
        "[os]",
        "[hosting]",
        "[git]",
        "head = \"branch\"",
        "commit = ",
    ] {
        assert!(printed.contains(key), "missing {key:?} in:\n{printed}");
    }
    let facts = base.join("facts.toml");
    write(&facts, &printed);
    // Rendered hermetically with these facts, the prompt shows them.
    let out = ok(bcode(&repo, &base, &[])
        .args(["render", "--hermetic", "--facts"])
        .arg(&facts)
        .output()
        .unwrap());
    assert!(out.contains("shell zsh"), "{out}");
    assert!(out.contains("Locale: C.UTF-8."), "{out}");

    // A misspelt key is an error, not a silently unpinned fact.
    write(&facts, "shel = \"bash\"\n");
    let bad = bcode(&repo, &base, &[])
        .args(["render", "--facts"])
        .arg(&facts)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("shel"));
}

#[test]
fn a_first_bless_pins_this_machines_facts_for_later_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let repo = base.join("repo");
    make_fixture(&repo);
    git_commit_all(&repo);
    let home = base.join("home");
    fs::create_dir_all(&home).unwrap();
    let check = |env: &[(&str, &str)], extra: &[&str]| {
        bcode(&repo, &home, env)
            .args(["check", "prompt.txt"])
            .args(extra)
            .output()
            .unwrap()
    };
    // Not hermetic, no facts given: the clock, locale, shell, git revision
    // and the rest of this machine are pinned in the sidecar.
    ok(check(
        &[("LANG", "en_US.UTF-8"), ("SHELL", "/bin/bash")],
        &["--bless"],
    ));
    let sidecar = fs::read_to_string(repo.join("prompt.txt.facts.toml")).unwrap();
    assert!(
        sidecar.contains("locale = \"en_US.UTF-8\"") && sidecar.contains("[git]"),
        "{sidecar}"
    );
    // The pinned clock moved years back (a later bless keeps the sidecar),
    // so the real clock of the next check differs without waiting for it.
    let moved: String = sidecar
        .lines()
        .map(|line| {
            if line.starts_with("now = ") {
                "now = \"2020-06-15T12:00:00Z\"\n".to_owned()
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    assert_ne!(moved, sidecar, "the sidecar pins the clock: {sidecar}");
    write(&repo.join("prompt.txt.facts.toml"), &moved);
    ok(check(
        &[("LANG", "en_US.UTF-8"), ("SHELL", "/bin/bash")],
        &["--bless"],
    ));
    let golden = fs::read_to_string(repo.join("prompt.txt")).unwrap();
    assert!(golden.contains(" 2020-06-1"), "{golden}");
    // Later, a changed working tree, another locale and shell, a new clock
    // reading: the check still renders what was blessed.
    write(&repo.join("notes.txt"), "later\n");
    let later = check(&[("LANG", "de_DE.UTF-8"), ("SHELL", "/bin/zsh")], &[]);
    assert_eq!(later.status.code(), Some(0), "{later:?}");
}

/// `check --bless` without a sidecar or `--hermetic` pins this machine's
/// facts overlaid with those the config pins, and the config's warnings are
/// reported once (by the render's session).
#[test]
fn bless_pins_the_facts_the_config_sets() {
    let Checkout {
        _tmp, repo, home, ..
    } = checkout();
    let out = bcode(&repo, &home, &[])
        .args([
            "--set",
            "facts.locale=xx_YY.UTF-8",
            "--set",
            "skills.enabeld=false",
        ])
        .args(["check", "golden/prompt.txt", "--bless"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stderr.matches("unknown key `skills.enabeld`").count(),
        1,
        "{stderr}"
    );
    let sidecar = fs::read_to_string(repo.join("golden/prompt.txt.facts.toml")).unwrap();
    assert!(sidecar.contains("locale = \"xx_YY.UTF-8\""), "{sidecar}");
    let golden = fs::read_to_string(repo.join("golden/prompt.txt")).unwrap();
    assert!(golden.contains("xx_YY.UTF-8"), "{golden}");
}
