//! Fidelity to the open Agent Skills specification (issue 25, item 3):
//! names in any script's lowercase letters or in letters without case load,
//! and a folder and a name that are NFKC-equal are one id.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use common::{Sandbox, ok, write};

#[test]
fn non_ascii_and_nfkc_equal_names_are_ids() {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".bcode/skills");
    for (folder, name) in [
        ("навык", "навык"),
        ("技能", "技能"),
        // A decomposed é (as a macOS file name holds it) and a composed one.
        ("cafe\u{301}-notes", "caf\u{e9}-notes"),
        // A ligature folder whose NFKC form is the name.
        ("\u{fb01}le-tools", "file-tools"),
    ] {
        write(
            &skills.join(folder).join("SKILL.md"),
            &format!("---\nname: {name}\ndescription: The {name} skill\n---\nBody of {name}.\n"),
        );
    }
    write(
        &skills.join("Заглавный").join("SKILL.md"),
        "---\ndescription: Uppercase folder, no name\n---\nBody.\n",
    );
    let out = ok(sandbox
        .command()
        .args(["skills", "list", "--json"])
        .output()
        .unwrap());
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> = json["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["caf\u{e9}-notes", "file-tools", "навык", "技能"]);
    let codes: Vec<(&str, &str)> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["severity"].as_str().unwrap()))
        .collect();
    assert_eq!(codes, [("invalid_id", "error")]);

    // Invoked by a spelling that is NFKC-equal to the id.
    let block = ok(sandbox
        .command()
        .args(["skills", "context", "cafe\u{301}-notes"])
        .output()
        .unwrap());
    assert!(
        block.starts_with("<skill id=\"caf\u{e9}-notes\" name=\"caf\u{e9}-notes\""),
        "{block}"
    );
    let block = ok(sandbox
        .command()
        .args(["skills", "context", "技能"])
        .output()
        .unwrap());
    assert!(block.contains("Body of 技能."), "{block}");
}

/// A folder whose instruction file is named in another case or spelling
/// (and holds no recognised one) is reported, naming the file to rename.
#[test]
fn a_misnamed_instruction_file_is_named_with_the_fix() {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".bcode/skills");
    for (folder, file) in [
        ("one", "Skill.md"),
        ("two", "SKILLS.md"),
        ("three", "skill.MD"),
    ] {
        write(
            &skills.join(folder).join(file),
            "---\ndescription: Misnamed\n---\nBody.\n",
        );
    }
    write(
        &skills.join("fine/SKILL.md"),
        "---\ndescription: Fine\n---\nBody.\n",
    );
    let out = ok(sandbox
        .command()
        .args(["skills", "list", "--json"])
        .output()
        .unwrap());
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["skills"].as_array().unwrap().len(), 1);
    let root = sandbox.repo.display().to_string();
    let found: Vec<(String, String, String)> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                d["path"].as_str().unwrap().replace(&root, "[REPO]"),
                d["hint"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String)> = [
        "[REPO]/.bcode/skills/one/Skill.md",
        "[REPO]/.bcode/skills/three/skill.MD",
        "[REPO]/.bcode/skills/two/SKILLS.md",
    ]
    .iter()
    .map(|path| {
        (
            "misnamed_skill_file".to_owned(),
            (*path).to_owned(),
            "rename it to SKILL.md".to_owned(),
        )
    })
    .collect();
    assert_eq!(found, expected);
}

/// Consecutive hyphens in an id and a `compatibility` over 500 characters
/// load, with a warning each naming the open specification's rule.
#[test]
fn open_spec_limits_are_warnings() {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".bcode/skills");
    write(
        &skills.join("pdf--tools/SKILL.md"),
        "---\ndescription: Double hyphen\n---\nBody.\n",
    );
    write(
        &skills.join("wide/SKILL.md"),
        &format!(
            "---\ndescription: Long compatibility\ncompatibility: {}\n---\nBody.\n",
            "x".repeat(501)
        ),
    );
    let out = ok(sandbox
        .command()
        .args(["skills", "list", "--json"])
        .output()
        .unwrap());
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["skills"].as_array().unwrap().len(), 2);
    let found: Vec<(&str, &str, &str)> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["severity"].as_str().unwrap(),
                d["message"].as_str().unwrap(),
                d["hint"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "warning",
                "the id `pdf--tools` has consecutive hyphens, which Agent Skills does not allow",
                "use single hyphens, e.g. `pdf-tools`"
            ),
            (
                "warning",
                "`compatibility` is 501 characters; Agent Skills allows 500",
                "name only the environments the skill needs"
            ),
        ]
    );
}
