//! The repository trust model through the CLI: an untrusted repository's
//! config cannot add skills from outside the repository (one warning names
//! the key and how to trust), `config explain` says what was ignored and
//! why, and `--trust-repo`, `BCODE_TRUST_REPO=1` or the user's
//! `trust.repositories` apply the repository's config in full.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::process::{Command, Output};

use common::{Sandbox, text, write};

/// A repository whose config points `skills.sources.paths` at a folder
/// outside it holding the skill `outsider`, and at its own `team-skills`
/// holding `insider`; it also turns on auto-activation.
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    let skill = |dir: &str, id: &str| {
        write(
            &sandbox.base.join(dir).join(id).join("SKILL.md"),
            &format!("---\ndescription: {id} skill\n---\nBody.\n"),
        );
    };
    skill("elsewhere", "outsider");
    skill("repo/team-skills", "insider");
    write(
        &sandbox.repo.join(".bcode/bcode.toml"),
        &format!(
            "[skills]\nauto_activate = \"on\"\n\n[skills.sources]\npaths = [\"../team-skills\", \"{}\"]\n",
            sandbox.base.join("elsewhere").display()
        ),
    );
    sandbox
}

/// The skill ids `skills list --json` lists, and the whole output.
fn skill_ids(command: &mut Command) -> (Vec<String>, Output) {
    let out = command.args(["skills", "list", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids = doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["id"].as_str().unwrap().to_owned())
        .collect();
    (ids, out)
}

#[test]
fn an_untrusted_repository_cannot_add_skills_from_outside_it() {
    let sandbox = sandbox();
    let (ids, out) = skill_ids(&mut sandbox.command());
    assert_eq!(ids, ["insider"]);
    let config = sandbox.repo.join(".bcode/bcode.toml");
    let repo = sandbox.repo.display();
    assert_eq!(
        text(&out.stderr),
        format!(
            "bcode-prompt: warning: repo file {config}:5: `skills.sources.paths = [\"{outside}\"]` ignored: \
             it would read skills from outside the repository; the repository is not trusted; to trust it, \
             add \"{repo}\" to `trust.repositories` in your user config, set BCODE_TRUST_REPO=1 or pass --trust-repo\n\
             bcode-prompt: warning: repo file {config}:2: `skills.auto_activate = \"on\"` ignored: \
             it lets keyword matches activate skills without the user asking; the repository is not trusted; \
             to trust it, add \"{repo}\" to `trust.repositories` in your user config, set BCODE_TRUST_REPO=1 \
             or pass --trust-repo\n",
            config = config.display(),
            outside = sandbox.base.join("elsewhere").display(),
        )
    );
}

#[test]
fn each_way_of_trusting_applies_the_repository_config() {
    let sandbox = sandbox();
    let trusted = |command: &mut Command| {
        let (ids, out) = skill_ids(command);
        assert_eq!(ids, ["insider", "outsider"]);
        assert_eq!(text(&out.stderr), "");
    };
    trusted(sandbox.command().arg("--trust-repo"));
    trusted(sandbox.command().env("BCODE_TRUST_REPO", "1"));
    write(
        &sandbox.home.join(".config/bcode/bcode.toml"),
        &format!("[trust]\nrepositories = [\"{}\"]\n", sandbox.repo.display()),
    );
    trusted(&mut sandbox.command());
}

#[test]
fn config_explain_shows_what_was_ignored_and_why() {
    let sandbox = sandbox();
    let out = sandbox
        .command()
        .args(["config", "explain", "skills.auto_activate"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "skills.auto_activate = \"suggest\"  # default\n\
             skills.auto_activate = \"on\"  # ignored, repo file {}:2: it lets keyword matches \
             activate skills without the user asking (the repository is not trusted)\n",
            sandbox.repo.join(".bcode/bcode.toml").display()
        )
    );
    let out = sandbox
        .command()
        .args(["--trust-repo", "config", "explain", "skills.auto_activate"])
        .output()
        .unwrap();
    assert_eq!(
        text(&out.stdout),
        format!(
            "skills.auto_activate = \"on\"  # repo file {}:2\n",
            sandbox.repo.join(".bcode/bcode.toml").display()
        )
    );
}

#[test]
fn config_check_names_the_trust_of_the_repository() {
    let sandbox = sandbox();
    let out = sandbox
        .command()
        .args(["config", "check"])
        .output()
        .unwrap();
    // Ignored values are warnings, not errors, even with --strict.
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(
        stdout.ends_with("1 layer checked: 0 errors, 2 warnings; the repository is not trusted\n"),
        "{stdout}"
    );
    let out = sandbox
        .command()
        .args(["--trust-repo", "config", "check", "--strict"])
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (
            Some(0),
            "1 layer checked: 0 errors, 0 warnings; the repository is trusted (--trust-repo or the host)\n"
                .to_owned()
        )
    );
}
