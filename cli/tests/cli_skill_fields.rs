//! The fields other agents' skills carry (issue 25, item 6): `paths` globs
//! matched against touched paths (`render --touched`, the session's
//! `/touched`), `user-invocable: false`, `argument-hint`, `when_to_use` and
//! `allowed-tools` (advisory only).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::process::Output;

use common::{Sandbox, ok, text, write_files};

/// A repository with one skill per field.
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    write_files(
        &sandbox.repo.join(".bcode/skills"),
        &[
            (
                "proto-helper/SKILL.md",
                "---\ndescription: Protocol buffer conventions\npaths:\n  - \"**/*.proto\"\n  - api/\n---\nUse buf lint.\n",
            ),
            (
                "docs-style/SKILL.md",
                "---\ndescription: House style for docs\npaths: \"*.md, docs/**\"\n---\nShort sentences.\n",
            ),
            (
                "release-bot/SKILL.md",
                "---\ndescription: Cut a release\nuser-invocable: false\nactivation:\n  keywords: [release, changelog]\n---\nTag and push.\n",
            ),
            (
                "fix-issue/SKILL.md",
                "---\ndescription: Fix a GitHub issue.\nwhen_to_use: When the user names an issue number.\nargument-hint: [issue-number]\narguments: [issue]\nallowed-tools: Bash(gh:*) Read\n---\nFix it.\n",
            ),
            (
                "bad-glob/SKILL.md",
                "---\ndescription: Broken glob\npaths: [\"src/[\", \"*.rs\"]\n---\nBody.\n",
            ),
        ],
    );
    sandbox
}

fn run(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox
        .command()
        .current_dir(&sandbox.repo)
        .args(args)
        .output()
        .unwrap()
}

/// The ids of the `<skill ...>` blocks a render injected, in order.
fn injected(render: &str) -> Vec<String> {
    render
        .match_indices("<skill id=\"")
        .map(|(at, open)| {
            let rest = &render[at + open.len()..];
            rest[..rest.find('"').unwrap()].to_owned()
        })
        .collect()
}

#[test]
fn the_fields_are_read_and_shown() {
    let sandbox = sandbox();
    let show: serde_json::Value = serde_json::from_str(&ok(run(
        &sandbox,
        &["skills", "show", "fix-issue", "--json"],
    )))
    .unwrap();
    let skill = &show["skill"];
    assert_eq!(skill["argument_hint"], "[issue-number]");
    assert_eq!(skill["arguments"], serde_json::json!(["issue"]));
    assert_eq!(skill["when_to_use"], "When the user names an issue number.");
    assert_eq!(skill["user_invocable"], true);
    assert_eq!(
        skill["permissions"]["allowed_tools"],
        serde_json::json!(["Bash(gh:*)", "Read"])
    );
    let show = ok(run(&sandbox, &["skills", "show", "release-bot"]));
    assert!(show.contains("user invocable: false\n"), "{show}");
    let show = ok(run(&sandbox, &["skills", "show", "docs-style"]));
    assert!(show.contains("paths:          *.md, docs/**\n"), "{show}");
    let show = ok(run(&sandbox, &["skills", "show", "fix-issue"]));
    assert!(show.contains("argument hint:  [issue-number]\n"), "{show}");
    assert!(show.contains("arguments:      issue\n"), "{show}");
    assert!(
        show.contains("allowed-tools:  Bash(gh:*), Read\n"),
        "{show}"
    );

    let list = ok(run(&sandbox, &["skills", "list"]));
    assert!(
        list.contains("release-bot  [repo:.bcode/skills]  (model only: no /skill)\n"),
        "{list}"
    );

    // The catalog shows `when_to_use` after the description.
    let catalog = ok(run(&sandbox, &["skills", "catalog"]));
    assert!(
        catalog.contains(
            "<description>Fix a GitHub issue. When the user names an issue number.</description>"
        ),
        "{catalog}"
    );

    // A glob that does not parse is reported; the skill's other glob works.
    let doctor: serde_json::Value =
        serde_json::from_str(&ok(run(&sandbox, &["skills", "doctor", "--json"]))).unwrap();
    let glob_warnings: Vec<&serde_json::Value> = doctor["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["field"] == "paths")
        .collect();
    assert_eq!(glob_warnings.len(), 1, "{doctor}");
    assert_eq!(glob_warnings[0]["severity"], "warning");
    assert_eq!(glob_warnings[0]["line"], 3);
    assert!(
        glob_warnings[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("`paths` glob \"src/[\" is not a valid glob"),
        "{doctor}"
    );
    let show: serde_json::Value = serde_json::from_str(&ok(run(
        &sandbox,
        &["skills", "show", "bad-glob", "--json"],
    )))
    .unwrap();
    assert_eq!(show["skill"]["paths"], serde_json::json!(["*.rs"]));
}

#[test]
fn touched_paths_activate_matching_skills_in_a_render() {
    let sandbox = sandbox();
    let on = ["--set", "skills.auto_activate=\"on\""];
    // (touched paths, the blocks a render with auto_activate = "on" injects)
    let cases: &[(&[&str], &[&str])] = &[
        (&[], &[]),
        (&["api/v1/user.proto"], &["proto-helper"]),
        // A folder glob covers what is below it; `*` crosses folders.
        (&["api/handler.go"], &["proto-helper"]),
        (&["docs/guide/intro.txt"], &["docs-style"]),
        (&["README.md", "src/lib.rs"], &["bad-glob", "docs-style"]),
        (&["src/other.txt"], &[]),
        // Written through `./` and `..` that stay inside.
        (&["./src/../api/x.proto"], &["proto-helper"]),
    ];
    for (touched, expected) in cases {
        let mut args: Vec<&str> = on.to_vec();
        args.push("render");
        for path in *touched {
            args.extend(["--touched", path]);
        }
        let render = ok(run(&sandbox, &args));
        assert_eq!(injected(&render), *expected, "touched {touched:?}");
    }
    // Suggestions are not activations: nothing is injected by default.
    let render = ok(run(&sandbox, &["render", "--touched", "api/a.proto"]));
    assert_eq!(injected(&render), Vec::<String>::new());
    // A path given absolute is made relative to the root.
    let absolute = sandbox.repo.join("api/a.proto");
    let mut args: Vec<&str> = on.to_vec();
    args.extend(["render", "--touched", absolute.to_str().unwrap()]);
    assert_eq!(injected(&ok(run(&sandbox, &args))), ["proto-helper"]);
}

#[test]
fn a_touched_path_outside_the_repository_is_refused() {
    let sandbox = sandbox();
    for path in ["../elsewhere.proto", "/etc/hosts"] {
        let out = run(&sandbox, &["render", "--touched", path]);
        assert_eq!(out.status.code(), Some(2), "{path}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!("touched path `{path}` is outside the repository")),
            "{stderr}"
        );
    }
}

#[test]
fn a_session_suggests_by_path_once_and_keeps_model_only_skills_from_the_user() {
    let sandbox = sandbox();
    let script = "/touched api/v1/a.proto\n/touched api/v1/a.proto\n/accept\n/skills\n/skill release-bot\nprepare the release changelog\n/skill active\n/quit\n";
    let out = ok(sandbox.run_session_in(&sandbox.repo, "fields", &[], script.as_bytes()));
    let transcript: Vec<&str> = out.lines().skip(1).collect();
    let expected = [
        "> /touched api/v1/a.proto",
        "Touched: api/v1/a.proto.",
        "Suggested skill `proto-helper` (matched path api/v1/a.proto): /accept proto-helper to activate, /dismiss to ignore.",
        // The same path again suggests nothing new.
        "> /touched api/v1/a.proto",
        "Touched: api/v1/a.proto.",
        "> /accept",
        "No pending suggestion to accept.",
        "> /skills",
        "  bad-glob [repo:.bcode/skills]: Broken glob",
        "  docs-style [repo:.bcode/skills]: House style for docs",
        "  fix-issue [repo:.bcode/skills] (arguments: [issue-number]): Fix a GitHub issue.",
        "  proto-helper [repo:.bcode/skills]: Protocol buffer conventions",
        "  release-bot [repo:.bcode/skills] (model only: no /skill): Cut a release",
        "> /skill release-bot",
        "error: skill `release-bot` is for the model only (user-invocable: false): the model may use it from the catalog, but it cannot be activated with /skill",
        // Its keywords match, but a skill the user cannot invoke is never
        // offered to the user.
        "> prepare the release changelog",
        "(prompt noted; this CLI has no model: /render shows what the turn would send)",
        "> /skill active",
        "No active skills.",
        "> /quit",
    ];
    assert_eq!(transcript, expected, "{out}");
    let log = std::fs::read_to_string(sandbox.state.join("sessions/fields/events.jsonl")).unwrap();
    let suggested: Vec<serde_json::Value> = log
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|event| event["event"] == "SkillSuggested")
        .collect();
    assert_eq!(suggested.len(), 1, "{log}");
    assert_eq!(
        suggested[0]["matched_paths"],
        serde_json::json!(["api/v1/a.proto"])
    );
    assert!(
        log.contains("\"event\":\"SkillInvocationFailed\",\"id\":\"release-bot\""),
        "{log}"
    );
}

#[test]
fn a_model_only_skill_may_still_be_auto_activated() {
    let sandbox = sandbox();
    let render = ok(run(
        &sandbox,
        &[
            "--set",
            "skills.auto_activate=\"on\"",
            "render",
            "--prompt",
            "write the release changelog",
        ],
    ));
    assert_eq!(injected(&render), ["release-bot"]);
}

/// Issue 38, item 14: one skill's 200 KB `paths` glob parsed, then made
/// the set of every skill's globs too large for globset, so no skill's
/// `paths` activated (the user's own included) while `doctor` saw nothing
/// wrong. A glob over 1,024 bytes is left out at parse time, reported as
/// `invalid_paths_glob` by `doctor` and `list`, and the skill's other
/// globs, and every other skill's, still apply.
#[test]
fn a_huge_glob_costs_only_itself() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    let huge = "?".repeat(200_000);
    let hostile = sandbox.repo.join(".bcode/skills/hostile/SKILL.md");
    common::write(
        &hostile,
        &format!("---\ndescription: Hostile globs\npaths: [\"{huge}\", \"*.md\"]\n---\nBody.\n"),
    );
    common::write(
        &sandbox.home.join(".config/bcode/skills/mine/SKILL.md"),
        "---\ndescription: My protobuf habits\npaths: \"**/*.proto\"\n---\nUse buf.\n",
    );
    for (touched, expected) in [("api/a.proto", ["mine"]), ("README.md", ["hostile"])] {
        let render = ok(run(
            &sandbox,
            &[
                "--set",
                "skills.auto_activate=\"on\"",
                "render",
                "--touched",
                touched,
            ],
        ));
        assert_eq!(injected(&render), expected, "touched {touched}");
    }
    let expected = serde_json::json!({
        "code": "invalid_paths_glob",
        "column": 1,
        "field": "paths",
        "hint": "shorten it: name a folder (`src/api`) or use `**` and `*` rather than spelling paths out",
        "line": 3,
        "message": "`paths` glob 1 is 200000 bytes; a glob longer than 1024 bytes is ignored",
        "path": hostile.to_str().unwrap(),
        "severity": "warning",
        "skill_id": "hostile",
    });
    for command in [["skills", "doctor", "--json"], ["skills", "list", "--json"]] {
        let json: serde_json::Value = serde_json::from_str(&ok(run(&sandbox, &command))).unwrap();
        let globs: Vec<&serde_json::Value> = json["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["field"] == "paths")
            .collect();
        assert_eq!(globs, [&expected], "{command:?}");
    }
}

/// Past 64 globs, a skill's `paths` are cut to the first 64, and said so.
#[test]
fn a_skill_keeps_its_first_sixty_four_globs() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    let globs: Vec<String> = (0..70).map(|n| format!("dir{n}/**")).collect();
    common::write(
        &sandbox.repo.join(".bcode/skills/wide/SKILL.md"),
        &format!(
            "---\ndescription: Many globs\npaths: \"{}\"\n---\nBody.\n",
            globs.join(",")
        ),
    );
    let show: serde_json::Value =
        serde_json::from_str(&ok(run(&sandbox, &["skills", "show", "wide", "--json"]))).unwrap();
    assert_eq!(show["skill"]["paths"], serde_json::json!(globs[..64]));
    let doctor: serde_json::Value =
        serde_json::from_str(&ok(run(&sandbox, &["skills", "doctor", "--json"]))).unwrap();
    let found: Vec<(&str, &str)> = doctor["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["field"] == "paths")
        .map(|d| (d["code"].as_str().unwrap(), d["message"].as_str().unwrap()))
        .collect();
    assert_eq!(
        found,
        [(
            "invalid_paths_glob",
            "`paths` has 70 globs; only the first 64 are used"
        )]
    );
}
