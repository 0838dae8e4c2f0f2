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
