//! Confinement of repository roots (issue 12): what a repository's skill
//! roots hold must resolve inside the repository, while the user's own
//! roots may link skill folders from anywhere (the Nix / Home Manager case
//! the spec asks for) except `/proc`, `/sys` and `/dev`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
#![cfg(unix)]

use crate::support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{RootsInput, source_roots};
use bcode_skill_models::SourceEnv;
use support::{build, report, write_tree};

const SKILL: &str = "---\ndescription: a skill\n---\nbody\n";

fn discover(base: &Path) -> String {
    let env = SourceEnv {
        home: Some(base.join("home")),
        ..SourceEnv::default()
    };
    let config = SkillsConfig::default();
    let roots = source_roots(RootsInput {
        repo: &base.join("repo"),
        work: &base.join("repo"),
        env: &env,
        config: &config,
        configured: &[],
        bundled: &[],
        owners: None,
    });
    report(&build(&roots, &config), base)
}

#[test]
fn repository_links_stay_inside_the_repository_and_user_links_may_leave() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    write_tree(
        &base,
        &[
            ("store/nix-skill/SKILL.md", SKILL),
            ("store/outside-skill/SKILL.md", SKILL),
            ("secret.md", "---\ndescription: SECRET\n---\n"),
            ("repo/docs/shared-skill/SKILL.md", SKILL),
            ("repo/.bcode/skills/real-skill/SKILL.md", SKILL),
        ],
    );
    let repo_root = base.join("repo/.bcode/skills");
    // Inside the repository: followed.
    symlink("../../docs/shared-skill", repo_root.join("shared-skill")).unwrap();
    // A skill folder, a skill file and a flat skill linked out of it: refused.
    symlink(
        base.join("store/outside-skill"),
        repo_root.join("outside-skill"),
    )
    .unwrap();
    fs::create_dir_all(repo_root.join("file-skill")).unwrap();
    symlink(
        base.join("secret.md"),
        repo_root.join("file-skill/SKILL.md"),
    )
    .unwrap();
    symlink(base.join("secret.md"), repo_root.join("flat.md")).unwrap();
    // A whole repository root linked out of it: refused.
    symlink(base.join("store"), base.join("repo/skills")).unwrap();
    // The user's own root links a skill folder from a store: loaded.
    let user_root = base.join("home/.config/bcode/skills");
    fs::create_dir_all(&user_root).unwrap();
    symlink(base.join("store/nix-skill"), user_root.join("nix-skill")).unwrap();

    let hint = "a repository's skills must lie inside it; add the target to skills.sources.paths in your user config to use it";
    let escape = |link: &str, target: &str| {
        format!(
            "warning path_escape [ROOT]/{link} `[ROOT]/{link}` leads to `[ROOT]/{target}`, \
             outside the repository `[ROOT]/repo`; it was not followed | {hint}\n"
        )
    };
    let expected = [
        "skill real-skill name=\"real-skill\" <repo:.bcode/skills> [ROOT]/repo/.bcode/skills/real-skill/SKILL.md\n".to_owned(),
        "skill shared-skill name=\"shared-skill\" <repo:.bcode/skills> [ROOT]/repo/.bcode/skills/shared-skill/SKILL.md\n".to_owned(),
        "skill nix-skill name=\"nix-skill\" <user-config:skills> [ROOT]/home/.config/bcode/skills/nix-skill/SKILL.md\n".to_owned(),
    ];
    let got = discover(&base);
    for line in expected.iter().chain(&[
        escape("repo/.bcode/skills/file-skill/SKILL.md", "secret.md"),
        escape("repo/.bcode/skills/flat.md", "secret.md"),
        escape("repo/.bcode/skills/outside-skill", "store/outside-skill"),
        escape("repo/skills", "store"),
    ]) {
        assert!(got.contains(line.as_str()), "missing {line}in\n{got}");
    }
    assert!(!got.contains("outside-skill name"), "{got}");
    assert!(!got.contains("SECRET"), "{got}");
    assert_eq!(got.matches("\nskill ").count() + 1, 3, "{got}");
}

#[cfg(target_os = "linux")]
#[test]
fn no_root_reads_a_skill_file_under_proc() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    for root in ["repo/.bcode/skills", "home/.config/bcode/skills"] {
        let folder = base.join(root).join("env");
        fs::create_dir_all(&folder).unwrap();
        symlink("/proc/self/environ", folder.join("SKILL.md")).unwrap();
    }
    let got = discover(&base);
    assert!(!got.contains("skill env"), "{got}");
    assert_eq!(
        got.matches("under /proc, /sys or /dev; it was not followed")
            .count(),
        2,
        "{got}"
    );
}
