//! `skills doctor --profile` (issue 25, item 4): one fixture per rule of
//! the open Agent Skills validator, and Claude Code's and Codex's rules,
//! each skill's exact
//! portability findings in `--json`, and the exit codes with and without
//! `--strict`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use common::{Sandbox, write};
use serde_json::{Value, json};

/// `(folder, file text)` of one skill per rule, and the findings
/// `(code, line, field)` each gets under `agentskills`.
type Fixture = (
    String,
    String,
    Vec<(&'static str, u64, Option<&'static str>)>,
);

fn fixtures() -> Vec<Fixture> {
    let skill =
        |name: &str, rest: &str| format!("---\nname: {name}\ndescription: d\n{rest}---\nBody.\n");
    let long = |n: usize| "a".repeat(n);
    vec![
        (
            "no-name".into(),
            "---\ndescription: d\n---\nBody.\n".into(),
            vec![("portability_name_missing", 2, Some("name"))],
        ),
        (
            "some-folder".into(),
            skill("another-name", ""),
            vec![("portability_name_mismatch", 2, Some("name"))],
        ),
        (
            "upper".into(),
            skill("Upper", ""),
            vec![
                ("portability_name_mismatch", 2, Some("name")),
                ("portability_name_uppercase", 2, Some("name")),
            ],
        ),
        (
            "double--hyphen".into(),
            skill("double--hyphen", ""),
            vec![("portability_name_hyphens", 2, Some("name"))],
        ),
        (
            long(65),
            skill(&long(65), ""),
            vec![("portability_name_too_long", 2, Some("name"))],
        ),
        (
            "under_score".into(),
            skill("under_score", ""),
            vec![("portability_name_characters", 2, Some("name"))],
        ),
        (
            "no-description".into(),
            "---\nname: no-description\n---\nBody.\n".into(),
            vec![("portability_description_missing", 2, Some("description"))],
        ),
        (
            "long-description".into(),
            format!(
                "---\nname: long-description\ndescription: {}\n---\n",
                long(1025)
            ),
            vec![("portability_description_too_long", 3, Some("description"))],
        ),
        (
            "long-compatibility".into(),
            skill(
                "long-compatibility",
                &format!("compatibility: {}\n", long(501)),
            ),
            vec![(
                "portability_compatibility_too_long",
                4,
                Some("compatibility"),
            )],
        ),
        (
            "extra-key".into(),
            skill("extra-key", "keywords: [a]\n"),
            vec![("portability_unknown_field", 4, Some("keywords"))],
        ),
        (
            "typed-metadata".into(),
            skill(
                "typed-metadata",
                "metadata:\n  author: someone\n  version: 1.10\n  stable: true\n  build: {flags: x}\n",
            ),
            vec![
                (
                    "portability_metadata_not_string",
                    6,
                    Some("metadata.version"),
                ),
                (
                    "portability_metadata_not_string",
                    7,
                    Some("metadata.stable"),
                ),
                ("portability_metadata_not_string", 8, Some("metadata.build")),
            ],
        ),
        (
            "bom".into(),
            format!("\u{feff}{}", skill("bom", "")),
            vec![("portability_byte_order_mark", 1, None)],
        ),
        (
            "portable".into(),
            skill(
                "portable",
                "license: MIT\nmetadata:\n  version: \"1.10\"\nallowed-tools: Read\n",
            ),
            vec![],
        ),
    ]
}

/// One finding as `(code, line, field)`.
type Finding = (String, u64, Option<String>);

/// Findings grouped by skill folder, folders in order.
type ByFolder = Vec<(String, Vec<Finding>)>;

/// Every portability finding of `json`, by skill folder, as `(code, line,
/// field)`, in the document's order.
fn findings_by_folder(json: &Value, skills: &std::path::Path) -> ByFolder {
    let mut by: std::collections::BTreeMap<String, Vec<Finding>> =
        std::collections::BTreeMap::new();
    for d in json["diagnostics"].as_array().unwrap() {
        let code = d["code"].as_str().unwrap();
        if !code.starts_with("portability_") {
            continue;
        }
        assert_eq!(d["severity"], "warning", "{d}");
        let path = std::path::Path::new(d["path"].as_str().unwrap());
        let folder = path.parent().unwrap().strip_prefix(skills).unwrap();
        by.entry(folder.to_str().unwrap().to_owned())
            .or_default()
            .push((
                code.to_owned(),
                d["line"].as_u64().unwrap(),
                d["field"].as_str().map(str::to_owned),
            ));
    }
    by.into_iter().collect()
}

#[test]
fn each_rule_is_a_warning_naming_it() {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".bcode/skills");
    let fixtures = fixtures();
    for (folder, text, _) in &fixtures {
        write(&skills.join(folder).join("SKILL.md"), text);
    }
    let out = sandbox.run(&["skills", "doctor", "--json", "--profile", "agentskills"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut expected: ByFolder = fixtures
        .iter()
        .filter(|(_, _, found)| !found.is_empty())
        .map(|(folder, _, found)| {
            (
                folder.clone(),
                found
                    .iter()
                    .map(|(code, line, field)| {
                        ((*code).to_owned(), *line, field.map(str::to_owned))
                    })
                    .collect(),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(findings_by_folder(&json, &skills), expected);

    // One finding whole, as `--json` prints it.
    let mismatch: Vec<&Value> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| {
            d["code"] == "portability_name_mismatch"
                && d["path"].as_str().unwrap().contains("some-folder")
        })
        .collect();
    let path = skills.join("some-folder/SKILL.md");
    assert_eq!(
        mismatch,
        [&json!({
            "code": "portability_name_mismatch",
            "column": 1,
            "field": "name",
            "hint": "use `name: some-folder`, or rename the folder to `another-name`",
            "line": 2,
            "message": "Agent Skills (agentskills): the name `another-name` is not the folder's name `some-folder`",
            "path": path.to_str().unwrap(),
            "severity": "warning",
            "skill_id": "some-folder",
        })]
    );

    // Without a profile nothing of this appears.
    let out = sandbox.run(&["skills", "doctor", "--json"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(findings_by_folder(&json, &skills), vec![]);
}

#[test]
fn the_spec_example_is_flagged_and_strict_fails_on_it() {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".bcode/skills");
    write(
        &skills.join("rust-debugging/SKILL.md"),
        "---\nid: rust-debugging\nname: Rust Debugging\ndescription: Diagnose Rust failures\nversion: 0.1.0\n---\nBody.\n",
    );
    let run = |args: &[&str]| {
        let out = sandbox.run(args);
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), findings_by_folder(&json, &skills))
    };
    let flagged = vec![(
        "rust-debugging".to_owned(),
        vec![
            (
                "portability_unknown_field".to_owned(),
                2,
                Some("id".to_owned()),
            ),
            (
                "portability_name_mismatch".to_owned(),
                3,
                Some("name".to_owned()),
            ),
            (
                "portability_name_uppercase".to_owned(),
                3,
                Some("name".to_owned()),
            ),
            (
                "portability_name_characters".to_owned(),
                3,
                Some("name".to_owned()),
            ),
            (
                "portability_unknown_field".to_owned(),
                5,
                Some("version".to_owned()),
            ),
        ],
    )];
    assert_eq!(
        run(&["skills", "doctor", "--json", "--profile", "agentskills"]),
        (Some(0), flagged.clone())
    );
    assert_eq!(
        run(&[
            "skills",
            "doctor",
            "--json",
            "--profile",
            "agentskills",
            "--strict"
        ]),
        (Some(1), flagged)
    );
    // Bcode itself loads it without an error: strict alone passes.
    assert_eq!(
        run(&["skills", "doctor", "--json", "--strict"]),
        (Some(0), vec![])
    );

    // Codex reads any name and ignores other keys.
    assert_eq!(
        run(&[
            "skills",
            "doctor",
            "--json",
            "--profile",
            "codex",
            "--strict"
        ]),
        (Some(0), vec![])
    );

    // Claude Code's rules: the name's characters and case, not its keys.
    assert_eq!(
        run(&[
            "skills",
            "doctor",
            "--json",
            "--profile",
            "claude",
            "--strict"
        ]),
        (
            Some(1),
            vec![(
                "rust-debugging".to_owned(),
                vec![
                    (
                        "portability_name_uppercase".to_owned(),
                        3,
                        Some("name".to_owned())
                    ),
                    (
                        "portability_name_characters".to_owned(),
                        3,
                        Some("name".to_owned())
                    ),
                ],
            )]
        )
    );
}

#[test]
fn claude_rules_and_a_clean_strict_run() {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".bcode/skills");
    write(
        &skills.join("claude-helper/SKILL.md"),
        "---\nname: claude-helper\ndescription: Use <b>bold</b> text\n---\nBody.\n",
    );
    let out = sandbox.run(&["skills", "doctor", "--json", "--profile", "claude"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (out.status.code(), findings_by_folder(&json, &skills)),
        (
            Some(0),
            vec![(
                "claude-helper".to_owned(),
                vec![
                    (
                        "portability_reserved_word".to_owned(),
                        2,
                        Some("name".to_owned())
                    ),
                    (
                        "portability_xml_tag".to_owned(),
                        3,
                        Some("description".to_owned())
                    ),
                ],
            )]
        )
    );

    let clean = Sandbox::new();
    write(
        &clean.repo.join(".bcode/skills/portable/SKILL.md"),
        "---\nname: portable\ndescription: d\n---\nBody.\n",
    );
    for profile in ["agentskills", "claude", "codex"] {
        let out = clean.run(&["skills", "doctor", "--profile", profile, "--strict"]);
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned()
            ),
            (Some(0), String::new()),
            "{profile}"
        );
    }
}

#[test]
fn an_unknown_profile_exits_2_naming_the_profiles() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(&sandbox.repo).unwrap();
    let out = sandbox.run(&["skills", "doctor", "--profile", "codexx"]);
    assert_eq!(
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned()),
        (
            Some(2),
            "bcode-prompt: --profile: unknown profile `codexx`; the profiles are: agentskills, claude, codex\n"
                .to_owned()
        )
    );
}

#[test]
fn the_help_names_the_profiles_and_their_exit_code() {
    let sandbox = Sandbox::new();
    let help = |args: &[&str]| String::from_utf8(sandbox.run(args).stdout).unwrap();
    let doctor = help(&["skills", "doctor", "--help"]);
    for needle in [
        "--profile <PROFILE>",
        "  agentskills  the open Agent Skills specification",
        "  claude       Claude Code",
        "  codex        the Codex CLI's loader",
        "  1  --strict and at least one error-level diagnostic, or --strict --profile and\n     at least one portability finding",
        "  2  bad arguments (an unknown --profile among them)",
    ] {
        assert!(
            doctor.contains(needle),
            "{needle:?} missing from:\n{doctor}"
        );
    }
    let top = help(&["--help"]);
    assert!(
        top.contains("(with --profile, a portability finding too)"),
        "{top}"
    );
}

#[test]
fn codex_rules() {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".bcode/skills");
    write(
        &skills.join("lower-case/skill.md"),
        "---\nname: lower-case\ndescription: d\n---\nBody.\n",
    );
    write(
        &skills.join("short/SKILL.md"),
        &format!(
            "---\nname: short\ndescription: d\nmetadata:\n  short-description: {}\n---\nBody.\n",
            "x".repeat(1025)
        ),
    );
    let out = sandbox.run(&[
        "skills",
        "doctor",
        "--json",
        "--profile",
        "codex",
        "--strict",
    ]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings: Vec<(String, Option<u64>, Option<String>)> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"].as_str().unwrap().starts_with("portability_"))
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                d["line"].as_u64(),
                d["field"].as_str().map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(
        (out.status.code(), findings),
        (
            Some(1),
            vec![
                ("portability_file_name".to_owned(), None, None),
                (
                    "portability_description_too_long".to_owned(),
                    Some(5),
                    Some("metadata.short-description".to_owned())
                ),
            ]
        )
    );
}

/// `skills doctor --json --profile <profile>`, killed after `limit`; its
/// findings by folder.
fn bounded_doctor(sandbox: &Sandbox, profile: &str, limit_s: u64) -> (Option<i32>, ByFolder) {
    let child = sandbox
        .command()
        .args(["skills", "doctor", "--json", "--profile", profile])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = common::wait_or_kill(child, std::time::Duration::from_secs(limit_s));
    let findings = match serde_json::from_slice::<Value>(&out.stdout) {
        Ok(json) => findings_by_folder(&json, &sandbox.repo.join(".bcode/skills")),
        Err(_) => Vec::new(),
    };
    (out.status.code(), findings)
}

/// Issue 38, item 13: the XML-tag rule scanned the rest of a description
/// for `>` after every `<`, so a 240 KB description of `<a` took over a
/// second and forty of them most of a minute (killed at 30 s here); it
/// is one pass.
#[test]
fn claude_finds_xml_tags_in_one_pass() {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".bcode/skills");
    let description = "<a".repeat(120_000);
    let count = 40;
    for n in 0..count {
        let name = format!("lt-{n:02}");
        write(
            &skills.join(&name).join("SKILL.md"),
            &format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n"),
        );
    }
    let expected: ByFolder = (0..count)
        .map(|n| {
            (
                format!("lt-{n:02}"),
                vec![(
                    "portability_description_too_long".to_owned(),
                    3,
                    Some("description".to_owned()),
                )],
            )
        })
        .collect();
    assert_eq!(bounded_doctor(&sandbox, "claude", 30), (Some(0), expected));
}

/// Found beside item 13: each finding's line was looked up by a scan of
/// every line of the front matter, so 4,000 unknown keys after a 45,000-line
/// description took 40 s for one skill (killed at 30 s here); the lines
/// of the keys are indexed once.
#[test]
fn agentskills_finds_the_lines_of_many_keys_in_one_pass() {
    let sandbox = Sandbox::new();
    let keys = 4_000;
    let filler = "  a\n".repeat(45_000);
    let fields: String = (0..keys).map(|n| format!("k{n:04}: 1\n")).collect();
    write(
        &sandbox.repo.join(".bcode/skills/keys/SKILL.md"),
        &format!("---\nname: keys\ndescription: |\n{filler}{fields}---\nBody.\n"),
    );
    let mut found = vec![(
        "portability_description_too_long".to_owned(),
        3,
        Some("description".to_owned()),
    )];
    // The keys start after the opening line, `name`, `description` and
    // its 45,000 lines.
    found.extend((0..keys).map(|n| {
        (
            "portability_unknown_field".to_owned(),
            4 + 45_000 + n,
            Some(format!("k{n:04}")),
        )
    }));
    assert_eq!(
        bounded_doctor(&sandbox, "agentskills", 30),
        (Some(0), vec![("keys".to_owned(), found)])
    );
}
