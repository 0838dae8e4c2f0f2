//! The trust line, round 3 (issue 24, items 1 and 2): an untrusted
//! repository's config can neither swap the base prompt the user replaced
//! nor raise a limit above the user's or the default. Each test drives the
//! real binary on a cloned-repository shape and checks the whole answer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use common::{Sandbox, text, write};

/// The user runs their own base prompt (`replace` mode in their user file);
/// a repository that sets only `system_prompt.text` used to replace it with
/// no warning and a clean `config check`.
#[test]
fn a_repository_cannot_swap_the_users_replacement_prompt() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.home.join(".config/bcode/bcode.toml"),
        "[system_prompt]\nmode = \"replace\"\ntext = \"USER BASE PROMPT\"\n",
    );
    write(
        &sandbox.repo.join(".bcode/bcode.toml"),
        "[system_prompt]\ntext = \"REPOSITORY BASE PROMPT\"\n",
    );
    let out = sandbox.run(&["render", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let system = json["system"].as_str().unwrap();
    assert!(
        system.starts_with("USER BASE PROMPT"),
        "the base is not the user's: {system:.80}"
    );
    assert!(!system.contains("REPOSITORY BASE PROMPT"));

    let out = sandbox.run(&["config", "check"]);
    let report = text(&out.stdout).replace(&sandbox.base.display().to_string(), "[ROOT]");
    assert!(
        report.contains(
            "[ROOT]/repo/.bcode/bcode.toml:2: `system_prompt.text = \"REPOSITORY BASE PROMPT\"` ignored"
        ),
        "config check does not warn: {report}"
    );
}

/// `skills.max_skill_file_bytes = i64::MAX` in an untrusted repository used
/// to let a skill file of any size be read whole (a 300 MB file, a few
/// hundred KB in git, made `render` hold 1.5 GB). The default bound stands:
/// a file one byte over it is `file_too_large`, and the raise is a warning.
#[test]
fn a_repository_cannot_raise_the_skill_file_bound() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/bcode.toml"),
        "[skills]\nmax_skill_file_bytes = 9223372036854775807\n",
    );
    let mut body = String::from("---\ndescription: Big skill\n---\n");
    while body.len() <= 262_144 {
        body.push_str("Padding line of the body of a big skill.\n");
    }
    write(&sandbox.repo.join(".bcode/skills/big/SKILL.md"), &body);
    write(
        &sandbox.repo.join(".bcode/skills/small/SKILL.md"),
        "---\ndescription: Small skill\n---\nBody.\n",
    );
    let out = sandbox.run(&["skills", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = json["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["small"]);
    let codes: Vec<&str> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|diagnostic| diagnostic["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["file_too_large"]);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("`skills.max_skill_file_bytes = 9223372036854775807` ignored"),
        "no warning: {stderr}"
    );

    // Trusted for the run, the repository's bound applies.
    let out = sandbox.run(&["--trust-repo", "skills", "list", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["skills"].as_array().unwrap().len(), 2);
}
