//! Confinement (issue 12, item 2): every file a repository supplies
//! (instruction files, invariants, template overrides, skills under its
//! roots, its config) must resolve inside the repository, never under
//! `/proc`, `/sys` or `/dev`. A refused link is reported with the link and
//! its target, and the rest still loads. Each test drives the real binary
//! on a hostile checkout and checks that no byte from outside reaches the
//! output.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
#![cfg(unix)] // symlinks and /proc are Unix facts

use crate::common;

use std::os::unix::fs::symlink;
use std::process::Output;

use common::{RENDER_PINNED, Sandbox, lossy, write};

/// Text that lives outside the repository and must never be printed.
const SECRET: &str = "OUTSIDE-THE-CHECKOUT-7f3a";

fn render(sandbox: &Sandbox, extra: &[&str]) -> Output {
    sandbox
        .command()
        .args(RENDER_PINNED)
        .args(extra)
        .output()
        .unwrap()
}

/// Runs `render` and `render --explain`; both must succeed. Returns the
/// prompt text, the section table and everything written to stderr.
fn render_both(sandbox: &Sandbox) -> (String, String, String) {
    let plain = render(sandbox, &[]);
    let explained = render(sandbox, &["--explain"]);
    for out in [&plain, &explained] {
        assert_eq!(out.status.code(), Some(0), "{}", lossy(&out.stderr));
    }
    (
        lossy(&plain.stdout),
        lossy(&explained.stdout),
        lossy(&plain.stderr) + &lossy(&explained.stderr),
    )
}

/// A file outside the repository holding [`SECRET`].
fn secret_file(sandbox: &Sandbox, name: &str, text: &str) -> std::path::PathBuf {
    let path = sandbox.base.join("outside").join(name);
    write(&path, &text.replace("SECRET", SECRET));
    path
}

fn assert_no_secret(all: &[&str]) {
    for out in all {
        assert!(!out.contains(SECRET), "a secret leaked:\n{out}");
    }
}

/// `AGENTS.md -> /proc/self/environ` used to place the agent's whole
/// environment (API keys) in the system text.
#[cfg(target_os = "linux")]
#[test]
fn agents_md_linked_to_the_process_environment_is_never_read() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(&sandbox.repo).unwrap();
    write(&sandbox.repo.join("BCODE.md"), "Use tabs.\n");
    symlink("/proc/self/environ", sandbox.repo.join("AGENTS.md")).unwrap();
    let plain = sandbox
        .command()
        .env("API_KEY", SECRET)
        .args(["render", "--explain"])
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(0), "{}", lossy(&plain.stderr));
    let (system, table, stderr) = render_both(&sandbox);
    let explained = lossy(&plain.stdout);
    assert_no_secret(&[&system, &table, &stderr, &explained]);
    assert!(system.contains("Use tabs."), "{system}");
    assert!(!system.contains("HOME="), "{system}");
    let link = sandbox.repo.join("AGENTS.md");
    assert!(
        explained.contains(&format!(
            "AGENTS.md was left out: `{}` resolves to `/proc/",
            link.display()
        )),
        "{explained}"
    );
    assert!(
        explained.contains("under /proc, /sys or /dev"),
        "{explained}"
    );
}

/// `BCODE.md` linked to a file outside the checkout: left out with a note
/// naming the link and its target; `AGENTS.md` linked inside still loads.
#[test]
fn instruction_files_stay_inside_the_repository() {
    let sandbox = Sandbox::new();
    let outside = secret_file(&sandbox, "notes.md", "SECRET\n");
    write(
        &sandbox.repo.join("docs/agents.md"),
        "Run the tests first.\n",
    );
    symlink(&outside, sandbox.repo.join("BCODE.md")).unwrap();
    symlink("docs/agents.md", sandbox.repo.join("AGENTS.md")).unwrap();
    let (system, table, stderr) = render_both(&sandbox);
    assert_no_secret(&[&system, &table, &stderr]);
    assert!(system.contains("Run the tests first."), "{system}");
    let note = format!(
        "BCODE.md was left out: `{}` resolves to `{}`, outside `{}`",
        sandbox.repo.join("BCODE.md").display(),
        outside.display(),
        sandbox.repo.display()
    );
    assert!(table.contains(&note), "{table}");
}

/// An invariant file linked out of the checkout is a problem naming the
/// link and its target; the other invariants are placed.
#[test]
fn invariant_files_stay_inside_the_repository() {
    let sandbox = Sandbox::new();
    let outside = secret_file(
        &sandbox,
        "rule.md",
        "---\nid: leak\ntitle: Leak\nsummary: SECRET\n---\nSECRET\n",
    );
    let invariants = sandbox.repo.join(".bcode/invariants");
    write(
        &invariants.join("tabs.md"),
        "---\nid: tabs\ntitle: Tabs\nsummary: Indent with tabs.\n---\nAlways tabs.\n",
    );
    symlink(&outside, invariants.join("leak.md")).unwrap();
    let (system, table, stderr) = render_both(&sandbox);
    assert_no_secret(&[&system, &table, &stderr]);
    assert!(system.contains("Indent with tabs."), "{system}");
    let problem = format!(
        ".bcode/invariants/leak.md: `{}` resolves to `{}`, outside `{}`; skipped",
        invariants.join("leak.md").display(),
        outside.display(),
        sandbox.repo.display()
    );
    assert!(table.contains(&problem), "{table}");
}

/// A template override the repository's config points at, linked out of
/// the checkout, is ignored with a warning; the other override applies.
#[test]
fn template_overrides_from_the_repository_stay_inside_it() {
    let sandbox = Sandbox::new();
    let outside = secret_file(&sandbox, "base.j2", "SECRET");
    let templates = sandbox.repo.join(".bcode/templates");
    write(
        &sandbox.repo.join(".bcode/bcode.toml"),
        "[system_prompt]\ntemplates_dir = \"templates\"\n",
    );
    write(&templates.join("truncation_marker.j2"), "[cut]");
    symlink(&outside, templates.join("base.j2")).unwrap();
    let (system, table, stderr) = render_both(&sandbox);
    assert_no_secret(&[&system, &table, &stderr]);
    let warning = format!(
        "bcode-prompt: warning: template override {} is ignored: it resolves to {}, outside {}",
        templates.join("base.j2").display(),
        outside.display(),
        sandbox.repo.display()
    );
    assert!(stderr.contains(&warning), "{stderr}");
}

/// The same link to a skill folder outside: refused under a repository
/// root, loaded under the user's own root (the Nix / Home Manager case).
#[test]
fn a_skill_folder_linked_out_of_a_repository_root_is_refused_but_a_user_root_may_link() {
    let sandbox = Sandbox::new();
    let store = sandbox.base.join("store");
    write(
        &store.join("outside/SKILL.md"),
        "---\ndescription: SECRET\n---\nSECRET\n"
            .replace("SECRET", SECRET)
            .as_str(),
    );
    write(
        &store.join("nix-skill/SKILL.md"),
        "---\ndescription: From the store\n---\nBody.\n",
    );
    write(
        &sandbox.repo.join(".bcode/skills/local/SKILL.md"),
        "---\ndescription: Local skill\n---\nBody.\n",
    );
    let repo_link = sandbox.repo.join(".bcode/skills/outside");
    symlink(store.join("outside"), &repo_link).unwrap();
    let user_root = sandbox.home.join(".config/bcode/skills");
    std::fs::create_dir_all(&user_root).unwrap();
    symlink(store.join("nix-skill"), user_root.join("nix-skill")).unwrap();

    let list = sandbox.command().args(["skills", "list"]).output().unwrap();
    assert_eq!(list.status.code(), Some(0), "{}", lossy(&list.stderr));
    let list = lossy(&list.stdout);
    assert_eq!(
        list,
        "local  [repo:.bcode/skills]\n    Local skill\nnix-skill  [user-config:skills]\n    From the store\n"
    );
    let doctor = sandbox
        .command()
        .args(["skills", "doctor"])
        .output()
        .unwrap();
    let doctor = lossy(&doctor.stdout) + &lossy(&doctor.stderr);
    assert_no_secret(&[&doctor]);
    let warning = format!(
        "`{}` leads to `{}`, outside the repository `{}`; it was not followed",
        repo_link.display(),
        store.join("outside").display(),
        sandbox.repo.display()
    );
    assert!(doctor.contains(&warning), "{doctor}");
    let (system, table, stderr) = render_both(&sandbox);
    assert_no_secret(&[&system, &table, &stderr]);
}

/// `.bcode/bcode.toml` linked out of the checkout is refused, naming the
/// link and its target (as an unreadable repository config always is).
#[test]
fn the_repository_config_stays_inside_the_repository() {
    let sandbox = Sandbox::new();
    let outside = secret_file(
        &sandbox,
        "bcode.toml",
        "# SECRET\n[skills]\nenabled = false\n",
    );
    std::fs::create_dir_all(sandbox.repo.join(".bcode")).unwrap();
    let link = sandbox.repo.join(".bcode/bcode.toml");
    symlink(&outside, &link).unwrap();
    let out = render(&sandbox, &[]);
    let stderr = lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert_no_secret(&[&lossy(&out.stdout), &stderr]);
    assert!(
        stderr.contains(&format!(
            "`{}` resolves to `{}`, outside `{}`",
            link.display(),
            outside.display(),
            sandbox.repo.display()
        )),
        "{stderr}"
    );
}

/// Links that stay inside the repository keep working everywhere.
#[test]
fn links_inside_the_repository_still_work() {
    let sandbox = Sandbox::new();
    let repo = &sandbox.repo;
    write(&repo.join("shared/agents.md"), "Shared instructions.\n");
    write(
        &repo.join("shared/invariant.md"),
        "---\nid: tabs\ntitle: Tabs\nsummary: Indent with tabs.\n---\n",
    );
    write(
        &repo.join("shared/skill/SKILL.md"),
        "---\nid: shared\ndescription: A shared skill\n---\nBody.\n",
    );
    write(&repo.join("shared/suffix.j2"), "Linked suffix.");
    write(
        &repo.join("shared/bcode.toml"),
        "[system_prompt]\ntemplates_dir = \"templates\"\n",
    );
    std::fs::create_dir_all(repo.join(".bcode/invariants")).unwrap();
    std::fs::create_dir_all(repo.join(".bcode/skills")).unwrap();
    std::fs::create_dir_all(repo.join(".bcode/templates/sections")).unwrap();
    let link = |target: &str, at: &str| symlink(target, repo.join(at)).unwrap();
    link("shared/agents.md", "AGENTS.md");
    link("../../shared/invariant.md", ".bcode/invariants/tabs.md");
    link("../../shared/skill", ".bcode/skills/shared");
    // (Not `base.j2`: an untrusted repository may not replace that one.)
    link(
        "../../../shared/suffix.j2",
        ".bcode/templates/sections/agent_suffix.j2",
    );
    link("../shared/bcode.toml", ".bcode/bcode.toml");
    let (system, _, stderr) = render_both(&sandbox);
    assert!(stderr.is_empty(), "{stderr}");
    assert!(system.contains("Linked suffix."), "{system}");
    for expected in [
        "Shared instructions.",
        "Indent with tabs.",
        "A shared skill",
    ] {
        assert!(system.contains(expected), "{expected} in {system}");
    }
}
