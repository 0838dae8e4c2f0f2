//! The open Agent Skills standard's folders (issue 25, item 2): a
//! repository's `.agents/skills/` (after `.bcode/skills/`, before `skills/`)
//! and the user's `~/.agents/skills/` (after the user config root, before
//! the state root), both switched by `skills.include_agents_skills`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use common::{Sandbox, ok, write};

fn skill(root: &std::path::Path, id: &str, description: &str) {
    write(
        &root.join(id).join("SKILL.md"),
        &format!("---\nname: {id}\ndescription: {description}\n---\nBody.\n"),
    );
}

/// `(id, source, shadowed-by)` of `skills list --json`, and the shadowed
/// diagnostics' messages.
fn listing(sandbox: &Sandbox, extra: &[&str]) -> (Vec<(String, String)>, Vec<String>) {
    let out = ok(sandbox
        .command()
        .args(extra)
        .args(["skills", "list", "--json"])
        .output()
        .unwrap());
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let skills = json["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_owned(),
                s["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let shadowed = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "shadowed")
        .map(|d| d["message"].as_str().unwrap().to_owned())
        .collect();
    (skills, shadowed)
}

#[test]
fn agents_folders_load_in_their_place_in_the_precedence() {
    let sandbox = Sandbox::new();
    let repo = &sandbox.repo;
    skill(
        &repo.join(".bcode/skills"),
        "both-bcode-agents",
        "from .bcode",
    );
    skill(
        &repo.join(".agents/skills"),
        "both-bcode-agents",
        "from .agents",
    );
    skill(
        &repo.join(".agents/skills"),
        "agents-over-skills",
        "from .agents",
    );
    skill(&repo.join("skills"), "agents-over-skills", "from skills/");
    skill(&repo.join(".agents/skills"), "pdf-tools", "only in .agents");
    let home = &sandbox.home;
    skill(
        &home.join(".config/bcode/skills"),
        "config-over-agents",
        "user config",
    );
    skill(
        &home.join(".agents/skills"),
        "config-over-agents",
        "user agents",
    );
    skill(
        &home.join(".agents/skills"),
        "my-agent-skill",
        "user agents only",
    );

    let (skills, shadowed) = listing(&sandbox, &[]);
    assert_eq!(
        skills,
        [
            ("agents-over-skills", "repo:.agents/skills"),
            ("both-bcode-agents", "repo:.bcode/skills"),
            ("config-over-agents", "user-config:skills"),
            ("my-agent-skill", "user:.agents/skills"),
            ("pdf-tools", "repo:.agents/skills"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    assert_eq!(shadowed.len(), 3, "{shadowed:?}");

    // Switched off, neither folder is read.
    let (skills, _) = listing(&sandbox, &["--set", "skills.include_agents_skills=false"]);
    let sources: Vec<&str> = skills.iter().map(|(_, source)| source.as_str()).collect();
    assert_eq!(
        sources,
        ["repo:skills", "repo:.bcode/skills", "user-config:skills"]
    );
}
