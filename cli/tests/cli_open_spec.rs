//! Fidelity to the open Agent Skills specification (issue 25, item 3):
//! names in any script's lowercase letters or in letters without case load,
//! and a folder and a name that are NFKC-equal are one id.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

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
