//! A working folder inside a repository (issue 25, item 1): `--repo DIR`
//! may name any folder inside a repository. The root is found as git finds
//! it; instructions come from the root and every folder down to the working
//! folder, root first; skills from the repository's roots in the working
//! folder and each folder above it, nearer first; nothing above the root.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::path::Path;

use common::{RENDER_PINNED, Sandbox, git_commit_all, ok, write_files};

/// A monorepo: instructions at the root and in `packages/web`, a root
/// skill, a skill both levels define, a root config, and an `AGENTS.md`
/// above the repository that must never be read.
fn monorepo(sandbox: &Sandbox) {
    let skill = |d: &str| format!("---\ndescription: {d}\n---\nBody: {d}.\n");
    write_files(
        &sandbox.base,
        &[("AGENTS.md", "ABOVE THE ROOT: never read.\n")],
    );
    write_files(
        &sandbox.repo,
        &[
            ("AGENTS.md", "Root rules.\n"),
            ("packages/web/AGENTS.md", "Web rules.\n"),
            ("packages/web/src/main.ts", "export {};\n"),
            (".bcode/skills/shared-skill/SKILL.md", &skill("root shared")),
            (".bcode/skills/web-tool/SKILL.md", &skill("root web tool")),
            (
                "packages/web/.agents/skills/web-tool/SKILL.md",
                &skill("web package web tool"),
            ),
            (
                ".bcode/bcode.toml",
                "[skills.prompt]\ncatalog = \"names_only\"\n",
            ),
        ],
    );
    git_commit_all(&sandbox.repo);
}

fn json_of(sandbox: &Sandbox, work: &Path, args: &[&str]) -> serde_json::Value {
    let out = ok(sandbox.command_in(work).args(args).output().unwrap());
    serde_json::from_str(&out).unwrap()
}

#[test]
fn instructions_come_from_the_root_down_to_the_working_folder() {
    let sandbox = Sandbox::new();
    monorepo(&sandbox);
    let work = sandbox.repo.join("packages/web/src");
    let mut args = RENDER_PINNED.to_vec();
    args.push("--json");
    let json = json_of(&sandbox, &work, &args);
    let ids: Vec<&str> = json["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .filter(|id| id.starts_with("repository_context"))
        .collect();
    assert_eq!(
        ids,
        [
            "repository_context:AGENTS.md",
            "repository_context:packages/web/AGENTS.md"
        ]
    );
    let system = json["system"].as_str().unwrap();
    let root = sandbox.repo.display().to_string();
    let expected = format!(
        "The repository provides these instructions in packages/web/AGENTS.md. Follow them for work in packages/web.\n\n\
         <repository_instructions file=\"packages/web/AGENTS.md\" location=\"{root}/packages/web/AGENTS.md\">\n\
         Web rules.\n</repository_instructions>"
    );
    assert!(system.contains(&expected), "{system}");
    assert!(system.contains("Root rules."));
    assert!(!system.contains("ABOVE THE ROOT"));
    // The root's config applies from below the root: the catalog is names only.
    assert!(!system.contains("<description>"), "{system}");
}

#[test]
fn a_nearer_folders_skill_shadows_the_roots_and_labels_carry_the_folder() {
    let sandbox = Sandbox::new();
    monorepo(&sandbox);
    let work = sandbox.repo.join("packages/web/src");
    let json = json_of(&sandbox, &work, &["skills", "list", "--json"]);
    let skills: Vec<(&str, &str)> = json["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_str().unwrap(), s["source"].as_str().unwrap()))
        .collect();
    assert_eq!(
        skills,
        [
            ("shared-skill", "repo:.bcode/skills"),
            ("web-tool", "repo:packages/web/.agents/skills"),
        ]
    );
    let shadowed: Vec<&str> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "shadowed")
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert_eq!(shadowed.len(), 1, "{shadowed:?}");
    assert!(
        shadowed[0].contains("repo:.bcode/skills")
            && shadowed[0].contains("repo:packages/web/.agents/skills"),
        "{shadowed:?}"
    );

    // From the root, the package's skills are not read.
    let json = json_of(&sandbox, &sandbox.repo, &["skills", "list", "--json"]);
    let sources: Vec<&str> = json["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["repo:.bcode/skills", "repo:.bcode/skills"]);
}

/// A folder in no repository is its own root: nothing above it is read.
#[test]
fn a_folder_in_no_repository_is_its_own_root() {
    let sandbox = Sandbox::new();
    write_files(
        &sandbox.base,
        &[
            ("AGENTS.md", "ABOVE: never read.\n"),
            ("loose/AGENTS.md", "Loose rules.\n"),
        ],
    );
    let mut args = RENDER_PINNED.to_vec();
    args.push("--json");
    let json = json_of(&sandbox, &sandbox.base.join("loose"), &args);
    let system = json["system"].as_str().unwrap();
    assert!(system.contains("Loose rules."));
    assert!(!system.contains("ABOVE"));
}

/// How many times `bcode-prompt` with `args`, run under `strace -f -c`,
/// asked the kernel to look a path up (`readlink`, `stat` and kin); `None`
/// when strace is not installed.
fn path_lookups(sandbox: &Sandbox, work: &Path, args: &[&str]) -> Option<usize> {
    let summary = sandbox.base.join("strace.txt");
    let mut command = std::process::Command::new("strace");
    command
        .args(["-f", "-c", "-o"])
        .arg(&summary)
        .args([
            "-e",
            "trace=readlink,readlinkat,stat,lstat,newfstatat,statx",
        ])
        .arg(env!("CARGO_BIN_EXE_bcode-prompt"))
        .env_clear()
        .env("HOME", &sandbox.home)
        .env("BCODE_STATE_DIR", &sandbox.state)
        .arg("--repo")
        .arg(work)
        .args(args);
    let out = match command.output() {
        Ok(out) => out,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return None,
        Err(err) => panic!("strace: {err}"),
    };
    common::assert_exit_0(&out);
    // `% time  seconds  usecs/call  calls  [errors]  syscall`, one line a
    // call, then `total`.
    let calls = std::fs::read_to_string(&summary)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let name = *fields.last()?;
            let calls = fields.get(3)?.parse::<usize>().ok()?;
            (name != "total").then_some(calls)
        })
        .sum();
    Some(calls)
}

/// A working folder 400 levels deep in a repository (issue 38, item 10):
/// the four skill roots of every folder on the way were each canonicalised
/// whole, one `readlink` per component (329,237 calls for one render, each
/// walking a path as long as the depth: 2.9 s at depth 400, over a minute
/// at 1,900). Now each folder is looked up once: linear in the depth.
#[test]
fn a_deep_working_folder_costs_path_lookups_linear_in_its_depth() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    write_files(&sandbox.repo, &[("AGENTS.md", "Root rules.\n")]);
    let depth = 400;
    let work = (0..depth).fold(sandbox.repo.clone(), |path, _| path.join("d"));
    std::fs::create_dir_all(&work).unwrap();
    let Some(lookups) = path_lookups(&sandbox, &work, &RENDER_PINNED) else {
        eprintln!("skipped: strace is not installed");
        return;
    };
    assert!(
        lookups <= 16 * depth,
        "{lookups} path lookups at depth {depth}"
    );
}

/// A working folder whose path is a few bytes short of `PATH_MAX`: the
/// skill roots in it are longer than the kernel takes a path. They are
/// roots that cannot be read (a warning each), not a crash; the rest of
/// the render is there.
#[test]
fn roots_longer_than_path_max_are_warnings() {
    let sandbox = Sandbox::new();
    write_files(&sandbox.repo, &[("AGENTS.md", "Root rules.\n")]);
    let mut work = sandbox.repo.clone();
    while work.as_os_str().len() < 4000 {
        work.push("x".repeat(200));
    }
    work.push("y".repeat(4085 - work.as_os_str().len()));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    // Made relative to the working folder: the whole path is too long.
    let made = std::process::Command::new("sh")
        .current_dir(&work)
        .args([
            "-c",
            "mkdir -p .claude/skills/deep && printf -- '---\\ndescription: d\\n---\\n' > .claude/skills/deep/SKILL.md",
        ])
        .status()
        .unwrap();
    assert!(made.success());
    let json = json_of(&sandbox, &work, &["skills", "list", "--json"]);
    let unreadable: Vec<&str> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "unreadable")
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    let root = format!("{}/.claude/skills", work.display());
    assert_eq!(unreadable, [root.as_str()]);
    let mut args = RENDER_PINNED.to_vec();
    args.push("--json");
    let json = json_of(&sandbox, &work, &args);
    assert!(json["system"].as_str().unwrap().contains("Root rules."));
}
