//! Goldens that travel (issue 24, item 11; issue 28, items 2 and 3): what
//! `check --bless` and `facts --portable` write carries no path of the
//! machine that wrote it, the facts never describe their own output file,
//! and every hint is a command line that reproduces the same render.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{binary, git_commit_all, lossy, ok, write, write_files};

/// A team repository: instructions, a repository skill, one commit.
fn team_repo(repo: &Path) {
    write_files(
        repo,
        &[
            ("BCODE.md", "# Team\n\nRun `cargo test` first.\n"),
            (
                ".bcode/skills/rust-debugging/SKILL.md",
                "---\ndescription: Diagnose Rust build and test failures\n---\nBody.\n",
            ),
        ],
    );
    git_commit_all(repo);
}

fn bcode(cwd: &Path, home: &Path) -> Command {
    let mut command = binary();
    command
        .env("HOME", home)
        .env("BCODE_STATE_DIR", home.join("state"))
        .current_dir(cwd);
    command
}

/// `check GOLDEN --bless` alone, in a git checkout under a machine path:
/// the golden and its one sidecar name neutral roots, pin nothing of a
/// section that is off (the toolchain), and the git status does not list
/// the files the bless wrote; a check from another checkout path and home
/// passes.
#[test]
fn a_plain_bless_writes_a_golden_with_no_machine_path() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let repo = base.join("alice/src/proj");
    let home = base.join("alice");
    team_repo(&repo);
    let blessed = bcode(&repo, &home)
        .args(["check", "golden/prompt.txt", "--bless"])
        .output()
        .unwrap();
    assert_eq!(blessed.status.code(), Some(0), "{}", lossy(&blessed.stderr));
    let golden = fs::read_to_string(repo.join("golden/prompt.txt")).unwrap();
    let sidecar = fs::read_to_string(repo.join("golden/prompt.txt.facts.toml")).unwrap();
    let machine = base.display().to_string();
    assert!(
        !golden.contains(&machine),
        "machine path in golden:\n{golden}"
    );
    assert!(
        !sidecar.contains(&machine),
        "machine path in facts:\n{sidecar}"
    );
    assert!(sidecar.contains("repo_root = \"/repo\"\n"), "{sidecar}");
    assert!(sidecar.contains("home = \"/home/user\"\n"), "{sidecar}");
    assert!(!sidecar.contains("toolchain"), "{sidecar}");
    assert!(sidecar.contains("status = []\n"), "{sidecar}");
    assert!(golden.contains("location=\"/repo/BCODE.md\""), "{golden}");
    assert_eq!(
        fs::read_dir(repo.join("golden")).unwrap().count(),
        2,
        "one golden and one sidecar"
    );
    // Said after blessing: what to commit and how to check.
    let said = lossy(&blessed.stderr);
    assert!(
        said.contains("commit both, and check with: bcode-prompt check golden/prompt.txt\n"),
        "{said}"
    );

    // Another developer: another checkout path and home, same bytes.
    let other = base.join("bob/work/proj");
    team_repo(&other);
    fs::create_dir_all(other.join("golden")).unwrap();
    for name in ["prompt.txt", "prompt.txt.facts.toml"] {
        fs::copy(
            repo.join("golden").join(name),
            other.join("golden").join(name),
        )
        .unwrap();
    }
    let checked = bcode(&other, &base.join("bob"))
        .args(["check", "golden/prompt.txt"])
        .output()
        .unwrap();
    assert_eq!(checked.status.code(), Some(0), "{checked:?}");
}

/// `facts --portable > prompt-facts.toml` inside the checkout: the facts
/// do not report the file they are being written into, and name neutral
/// roots, so nothing needs editing by hand.
#[test]
fn facts_portable_never_sees_its_own_output() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let repo = base.join("proj");
    team_repo(&repo);
    let out_path = repo.join("prompt-facts.toml");
    let out = fs::File::create(&out_path).unwrap();
    let status = bcode(&repo, &base)
        .args(["facts", "--portable"])
        .stdout(out)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let facts = fs::read_to_string(&out_path).unwrap();
    assert!(facts.contains("status = []\n"), "{facts}");
    assert!(facts.contains("repo_root = \"/repo\"\n"), "{facts}");
    assert!(facts.contains("home = \"/home/user\"\n"), "{facts}");
    assert!(!facts.contains(&base.display().to_string()), "{facts}");

    // Without --portable the roots are this machine's, and the comment
    // says how to get neutral ones instead of asking for a hand edit.
    let machine = ok(bcode(&repo, &base).arg("facts").output().unwrap());
    assert!(machine.contains("facts --portable"), "{machine}");
    assert!(
        machine.contains(&format!("repo_root = \"{}\"", repo.display())),
        "{machine}"
    );
}

/// The README's CI line with the golden missing: the hint repeats every
/// flag that shapes the render, so following it blesses the same render.
#[test]
fn the_missing_golden_hint_repeats_the_flags_that_shape_the_render() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    team_repo(&base.join("tests/prompt-fixture"));
    let args = [
        "--repo",
        "tests/prompt-fixture",
        "--set",
        "skills.prompt.catalog=\"names_only\"",
        "check",
        "tests/prompt.golden",
        "--hermetic",
        "--now",
        "2026-11-29T12:00:00Z",
        "--timezone",
        "UTC",
    ];
    let missing = bcode(&base, &base).args(args).output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
    let hint = "bcode-prompt --repo tests/prompt-fixture --set 'skills.prompt.catalog=\"names_only\"' \
                check tests/prompt.golden --now 2026-11-29T12:00:00Z --timezone UTC --hermetic --bless";
    let stderr = lossy(&missing.stderr);
    assert!(
        stderr.contains(&format!("write it with `{hint}`")),
        "{stderr}"
    );

    // Following the hint word for word blesses the fixture, not the
    // enclosing folder; the same check then passes.
    let words = [
        "--repo",
        "tests/prompt-fixture",
        "--set",
        "skills.prompt.catalog=\"names_only\"",
        "check",
        "tests/prompt.golden",
        "--now",
        "2026-11-29T12:00:00Z",
        "--timezone",
        "UTC",
        "--hermetic",
        "--bless",
    ];
    ok(bcode(&base, &base).args(words).output().unwrap());
    let golden = fs::read_to_string(base.join("tests/prompt.golden")).unwrap();
    assert!(golden.contains("Run `cargo test` first."), "{golden}");
    assert!(!golden.contains(&base.display().to_string()), "{golden}");
    let passed = bcode(&base, &base).args(args).output().unwrap();
    assert_eq!(passed.status.code(), Some(0), "{passed:?}");
}

/// The README's golden steps: `--hermetic --bless` the first time pins
/// this machine's facts (as a hermetic run sees them: no environment) with
/// neutral roots, so the same `--hermetic` check passes anywhere and the
/// golden still shows the git revision and the OS.
#[test]
fn a_hermetic_first_bless_pins_the_machine_as_a_hermetic_run_sees_it() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let repo = base.join("proj");
    team_repo(&repo);
    ok(bcode(&repo, &base)
        .args(["check", "prompt.golden", "--hermetic", "--bless"])
        .output()
        .unwrap());
    let sidecar = fs::read_to_string(repo.join("prompt.golden.facts.toml")).unwrap();
    for key in ["repo_root = \"/repo\"", "[git]", "[os]", "status = []"] {
        assert!(sidecar.contains(key), "missing {key:?}:\n{sidecar}");
    }
    let golden = fs::read_to_string(repo.join("prompt.golden")).unwrap();
    assert!(golden.contains("Git revision"), "{golden}");
    assert!(!golden.contains(&base.display().to_string()), "{golden}");
    let checked = bcode(&repo, &base.join("elsewhere"))
        .env("LANG", "de_DE.UTF-8")
        .args(["check", "prompt.golden", "--hermetic"])
        .output()
        .unwrap();
    assert_eq!(checked.status.code(), Some(0), "{checked:?}");
}

/// A repository that wants its golden workflow to reach outside it (issue
/// 38, items 1 to 3): links committed under the names `check` writes and
/// reads beside a golden.
struct Planted {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    home: PathBuf,
}

/// A team repository in `proj/` and a home beside it holding the user's
/// files a hostile repository would aim at.
fn planted() -> Planted {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let (repo, home) = (base.join("proj"), base.join("home"));
    team_repo(&repo);
    write_files(
        &home,
        &[
            (".bashrc", "alias ll='ls -l'\n"),
            ("notes.txt", "my notes\n"),
            (".env", "OPENAI_API_KEY=sk-hunter2-secret\n"),
        ],
    );
    fs::create_dir_all(home.join(".ssh")).unwrap();
    Planted {
        _tmp: tmp,
        repo,
        home,
    }
}

fn is_regular_file(path: &Path) -> bool {
    fs::symlink_metadata(path).unwrap().file_type().is_file()
}

/// Item 1: `tests/prompt.golden.new` committed as a link to `~/.bashrc`
/// beside a golden that does not match. The check writes the new render
/// in the link's place, not into `.bashrc`; `--bless` replaces a golden
/// that links out rather than writing through it, and removes the stale
/// `.new` link without touching its target.
#[test]
fn check_never_writes_through_a_committed_link() {
    let Planted {
        _tmp, repo, home, ..
    } = planted();
    let golden = repo.join("tests/prompt.golden");
    let fresh = repo.join("tests/prompt.golden.new");
    write(&golden, "not the prompt\n");
    symlink(home.join(".bashrc"), &fresh).unwrap();
    let check = |extra: &[&str]| {
        bcode(&repo, &home)
            .args(["check", "tests/prompt.golden", "--hermetic"])
            .args(extra)
            .output()
            .unwrap()
    };
    let failed = check(&[]);
    assert_eq!(failed.status.code(), Some(1), "{failed:?}");
    assert_eq!(
        fs::read_to_string(home.join(".bashrc")).unwrap(),
        "alias ll='ls -l'\n"
    );
    assert!(is_regular_file(&fresh));
    assert!(
        fs::read_to_string(&fresh)
            .unwrap()
            .contains("Run `cargo test` first.")
    );

    // The golden itself a link out, and `.new` a link again: the bless
    // writes neither target.
    fs::remove_file(&golden).unwrap();
    symlink(home.join("notes.txt"), &golden).unwrap();
    fs::remove_file(&fresh).unwrap();
    symlink(home.join(".bashrc"), &fresh).unwrap();
    let blessed = check(&["--bless"]);
    assert_eq!(blessed.status.code(), Some(0), "{blessed:?}");
    assert_eq!(
        fs::read_to_string(home.join("notes.txt")).unwrap(),
        "my notes\n"
    );
    assert_eq!(
        fs::read_to_string(home.join(".bashrc")).unwrap(),
        "alias ll='ls -l'\n"
    );
    assert!(is_regular_file(&golden));
    assert!(
        fs::symlink_metadata(&fresh).is_err(),
        "the stale .new stays"
    );
    assert_eq!(check(&[]).status.code(), Some(0));
    // Only the golden, its sidecar: no temporary file left behind.
    let mut names: Vec<String> = fs::read_dir(repo.join("tests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["prompt.golden", "prompt.golden.facts.toml"]);
}

/// Item 2: the facts sidecar committed as a dangling link to
/// `~/.ssh/authorized_keys`. `--bless` writes the sidecar in the link's
/// place; the link's target is never created.
#[test]
fn bless_never_creates_a_file_through_a_dangling_link() {
    let Planted {
        _tmp, repo, home, ..
    } = planted();
    let keys = home.join(".ssh/authorized_keys");
    let sidecar = repo.join("prompt.golden.facts.toml");
    symlink(&keys, &sidecar).unwrap();
    let blessed = bcode(&repo, &home)
        .args(["check", "prompt.golden", "--hermetic", "--bless"])
        .output()
        .unwrap();
    assert_eq!(blessed.status.code(), Some(0), "{blessed:?}");
    assert!(fs::symlink_metadata(&keys).is_err(), "authorized_keys made");
    assert!(is_regular_file(&sidecar));
    assert!(
        fs::read_to_string(&sidecar)
            .unwrap()
            .contains("repo_root = \"/repo\"\n")
    );

    // A folder beside the golden that links out of the repository: nothing
    // is written there at all.
    symlink(home.join(".ssh"), repo.join("goldens")).unwrap();
    let refused = bcode(&repo, &home)
        .args(["check", "goldens/prompt.golden", "--hermetic", "--bless"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let stderr = lossy(&refused.stderr);
    assert!(stderr.contains("outside"), "{stderr}");
    assert_eq!(fs::read_dir(home.join(".ssh")).unwrap().count(), 0);
}

/// Item 3: the sidecar, the golden and a `--facts` file the repository
/// names, each committed as a link to `~/.env`. Each is refused naming
/// where it leads, and no line of the secret reaches the output.
#[test]
fn nothing_read_through_a_link_out_of_the_repository_is_quoted() {
    let Planted {
        _tmp, repo, home, ..
    } = planted();
    let secret = "hunter2";
    let env = home.join(".env");
    let run = |args: &[&str]| {
        let out = bcode(&repo, &home).args(args).output().unwrap();
        let (stdout, stderr) = (lossy(&out.stdout), lossy(&out.stderr));
        assert!(!stdout.contains(secret), "quoted on stdout:\n{stdout}");
        assert!(!stderr.contains(secret), "quoted on stderr:\n{stderr}");
        (out.status.code(), stderr)
    };
    let outside = format!("resolves to `{}`, outside", env.display());

    // The sidecar.
    write(&repo.join("prompt.golden"), "x\n");
    symlink(&env, repo.join("prompt.golden.facts.toml")).unwrap();
    let (code, stderr) = run(&["check", "prompt.golden", "--hermetic"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains(&outside), "{stderr}");

    // The golden.
    fs::remove_file(repo.join("prompt.golden.facts.toml")).unwrap();
    fs::remove_file(repo.join("prompt.golden")).unwrap();
    symlink(&env, repo.join("prompt.golden")).unwrap();
    let (code, stderr) = run(&["check", "prompt.golden", "--hermetic"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains(&outside), "{stderr}");

    // A facts file the repository's instructions name.
    symlink(&env, repo.join("ci-facts.toml")).unwrap();
    for command in ["check", "render"] {
        let args: &[&str] = match command {
            "check" => &["check", "other.golden", "--facts", "ci-facts.toml"],
            _ => &["render", "--facts", "ci-facts.toml"],
        };
        let (code, stderr) = run(args);
        assert_eq!(code, Some(2), "{command}");
        assert!(stderr.contains(&outside), "{command}: {stderr}");
    }
    // The user's own facts file, outside every repository, is read as
    // before, and its errors quoted.
    let (code, stderr) = run(&["render", "--facts", "../home/notes.txt"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("my notes"), "{stderr}");
}

/// A repository with instructions of its own in `sub/` (and a folder below
/// it), committed.
fn nested_repo(repo: &Path) {
    write_files(
        repo,
        &[
            ("BCODE.md", "# Team\n\nRun `cargo test` first.\n"),
            ("sub/AGENTS.md", "Sub rule.\n"),
            ("sub/deeper/README.md", "deeper\n"),
        ],
    );
    git_commit_all(repo);
}

/// Item 17: a golden blessed from one folder of a repository renders the
/// same prompt when checked from any other (the sidecar records the
/// working folder relative to the root), a hint followed from elsewhere
/// re-blesses that same prompt, and a check that cannot render it says
/// exactly why.
#[test]
fn a_golden_checks_the_same_from_every_folder_of_its_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let repo = base.join("proj");
    nested_repo(&repo);
    let run = |cwd: &str, args: &[&str]| {
        bcode(&repo.join(cwd), &base)
            .args(args)
            .arg("--hermetic")
            .output()
            .unwrap()
    };
    // Blessed at the root: the sidecar says so, and every folder agrees.
    ok(run(".", &["check", "tests/root.golden", "--bless"]));
    for (cwd, golden) in [
        ("sub", "../tests/root.golden"),
        ("sub/deeper", "../../tests/root.golden"),
    ] {
        let checked = run(cwd, &["check", golden]);
        assert_eq!(checked.status.code(), Some(0), "{cwd}: {checked:?}");
        let said = lossy(&checked.stderr);
        assert!(
            said.contains("rendered for `.`, the working folder it was blessed for"),
            "{said}"
        );
    }
    let sidecar = fs::read_to_string(repo.join("tests/root.golden.facts.toml")).unwrap();
    assert!(sidecar.contains("\nworking_folder = \".\"\n"), "{sidecar}");

    // Blessed for `sub` (from the root, through `--repo`): checked from the
    // root and from below `sub` alike.
    ok(run(
        ".",
        &["--repo", "sub", "check", "tests/sub.golden", "--bless"],
    ));
    let sidecar = fs::read_to_string(repo.join("tests/sub.golden.facts.toml")).unwrap();
    assert!(
        sidecar.contains("\nworking_folder = \"sub\"\n"),
        "{sidecar}"
    );
    assert!(
        fs::read_to_string(repo.join("tests/sub.golden"))
            .unwrap()
            .contains("Sub rule.")
    );
    for (cwd, golden) in [
        (".", "tests/sub.golden"),
        ("sub/deeper", "../../tests/sub.golden"),
    ] {
        let checked = run(cwd, &["check", golden]);
        assert_eq!(checked.status.code(), Some(0), "{cwd}: {checked:?}");
    }
    // `--repo` naming the folder it was blessed for, from elsewhere: fine.
    let checked = run(
        "sub/deeper",
        &["--repo", "..", "check", "../../tests/sub.golden"],
    );
    assert_eq!(checked.status.code(), Some(0), "{checked:?}");

    // A change, checked from the root: the hint, followed there, re-blesses
    // the prompt of `sub`, not of the root.
    write(&repo.join("sub/AGENTS.md"), "Sub rule, revised.\n");
    let failed = run(".", &["check", "tests/sub.golden"]);
    assert_eq!(failed.status.code(), Some(1), "{failed:?}");
    let report = lossy(&failed.stdout);
    assert!(report.contains("+Sub rule, revised."), "{report}");
    let hint = "to accept the new prompt: bcode-prompt check tests/sub.golden --hermetic --bless\n";
    assert!(report.ends_with(hint), "{report}");
    ok(run(".", &["check", "tests/sub.golden", "--bless"]));
    let golden = fs::read_to_string(repo.join("tests/sub.golden")).unwrap();
    assert!(golden.contains("Sub rule, revised."), "{golden}");
    assert!(
        fs::read_to_string(repo.join("tests/sub.golden.facts.toml"))
            .unwrap()
            .contains("\nworking_folder = \"sub\"\n")
    );

    // `--repo` naming another folder than the one it was blessed for.
    let refused = run(".", &["--repo", "sub/deeper", "check", "tests/sub.golden"]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert_eq!(
        lossy(&refused.stderr),
        "bcode-prompt: tests/sub.golden was blessed for the working folder `sub` \
             (`working_folder` in tests/sub.golden.facts.toml), but --repo names `sub/deeper`; \
             leave --repo out to check it from any folder of the repository, or delete \
             tests/sub.golden.facts.toml to bless afresh for `sub/deeper`\n"
    );

    // The folder it was blessed for is gone.
    fs::rename(repo.join("sub"), repo.join("moved")).unwrap();
    let gone = run(".", &["check", "tests/sub.golden"]);
    assert_eq!(gone.status.code(), Some(2), "{gone:?}");
    assert_eq!(
        lossy(&gone.stderr),
        format!(
            "bcode-prompt: tests/sub.golden was blessed for the working folder `sub` \
             (`working_folder` in tests/sub.golden.facts.toml), which is not a folder \
             of the repository `{0}`: No such file or directory (os error 2)\n",
            repo.display()
        )
    );
}

/// A sidecar written before the working folder was recorded keeps today's
/// behaviour: the check renders for the folder it runs in.
#[test]
fn an_old_sidecar_without_a_working_folder_checks_as_before() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let repo = base.join("proj");
    nested_repo(&repo);
    let check = |cwd: &Path, golden: &str, extra: &[&str]| {
        bcode(cwd, &base)
            .args(["check", golden, "--hermetic"])
            .args(extra)
            .output()
            .unwrap()
    };
    ok(check(&repo, "prompt.golden", &["--bless"]));
    let path = repo.join("prompt.golden.facts.toml");
    let sidecar = fs::read_to_string(&path).unwrap();
    let old: String = sidecar
        .split_inclusive('\n')
        .filter(|line| !line.starts_with("working_folder = ") && !line.starts_with("# The folder"))
        .collect();
    assert_ne!(old, sidecar);
    write(&path, &old);
    assert_eq!(check(&repo, "prompt.golden", &[]).status.code(), Some(0));
    let from_sub = check(&repo.join("sub"), "../prompt.golden", &[]);
    assert_eq!(from_sub.status.code(), Some(1), "{from_sub:?}");
    assert!(lossy(&from_sub.stdout).contains("+Sub rule."));
}
