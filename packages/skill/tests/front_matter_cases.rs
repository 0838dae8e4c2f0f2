//! Data-driven discovery cases: each case is a small skill tree; its report
//! (skills found and every diagnostic) is a reviewed snapshot.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use support::discover_files;

fn cases() -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    let s = |x: &str| x.to_owned();
    vec![
        (
            "spec_example",
            vec![("rust-debugging/SKILL.md", s(support::SPEC_SKILL))],
        ),
        (
            "instruction_file_priority",
            vec![
                (
                    "all-three/SKILL.md",
                    s("---\ndescription: from SKILL.md\n---\n"),
                ),
                (
                    "all-three/skill.md",
                    s("---\ndescription: from skill.md\n---\n"),
                ),
                (
                    "all-three/README.md",
                    s("---\ndescription: from README.md\n---\n"),
                ),
                (
                    "lower-and-readme/skill.md",
                    s("---\ndescription: from skill.md\n---\n"),
                ),
                (
                    "lower-and-readme/README.md",
                    s("---\ndescription: from README.md\n---\n"),
                ),
                (
                    "readme-only/README.md",
                    s("---\ndescription: from README.md\n---\n"),
                ),
                ("category/README.md", s("# A category of skills\n")),
                (
                    "category/inner/SKILL.md",
                    s("---\ndescription: nested under a category\n---\n"),
                ),
            ],
        ),
        (
            "skill_folders_are_not_searched",
            vec![
                ("outer/SKILL.md", s("---\ndescription: outer\n---\n")),
                (
                    "outer/sub/inner/SKILL.md",
                    s("---\ndescription: inner, a resource of outer\n---\n"),
                ),
                (
                    "outer/docs/README.md",
                    s("---\ndescription: also a resource\n---\n"),
                ),
            ],
        ),
        (
            "id_inference",
            vec![
                ("from-folder/SKILL.md", s("---\ndescription: d\n---\n")),
                ("flat-file.md", s("---\ndescription: d\n---\n")),
                (
                    "folder-name/SKILL.md",
                    s("---\nid: explicit-id\nname: Explicit\ndescription: d\n---\n"),
                ),
                ("My_Skill/SKILL.md", s("---\ndescription: d\n---\n")),
                (
                    "escape/SKILL.md",
                    s("---\nid: ../etc\ndescription: d\n---\n"),
                ),
                ("numeric/SKILL.md", s("---\nid: 42\ndescription: d\n---\n")),
                (
                    "long/SKILL.md",
                    format!("---\nid: {}\ndescription: d\n---\n", "a".repeat(65)),
                ),
            ],
        ),
        (
            "toml_bom_and_crlf",
            vec![
                (
                    "toml-skill/SKILL.md",
                    s(
                        "+++\nname = \"TOML Skill\"\ndescription = \"Uses TOML\"\nversion = \"2.0\"\n[activation]\nkeywords = [\"toml\"]\n+++\nBody\n",
                    ),
                ),
                (
                    "bom-crlf/SKILL.md",
                    s(
                        "\u{feff}---\r\nname: Windows\r\ndescription: Saved on Windows\r\n---\r\nBody\r\n",
                    ),
                ),
            ],
        ),
        (
            "malformed_and_recovered",
            vec![
                (
                    "recovered/SKILL.md",
                    s("---\nname: recovered\ndescription: Use when: the user asks for it\n---\n"),
                ),
                (
                    "unclosed-quote/SKILL.md",
                    s("---\nname: x\ndescription: \"never closed\n---\n"),
                ),
                (
                    "tabs/SKILL.md",
                    s("---\nname: x\nmetadata:\n\tkey: v\ndescription: d\n---\n"),
                ),
                (
                    "ambiguous/SKILL.md",
                    s("---\ndescription: first: part\n  continued here\n---\n"),
                ),
                ("not-a-mapping/SKILL.md", s("---\n- a\n- b\n---\n")),
                (
                    "unterminated/SKILL.md",
                    s("---\ndescription: never closed\n"),
                ),
                ("bad-toml/SKILL.md", s("+++\ndescription = \n+++\n")),
            ],
        ),
        (
            "descriptions",
            vec![
                ("missing/SKILL.md", s("---\nname: x\n---\n")),
                ("empty/SKILL.md", s("---\ndescription: \"  \"\n---\n")),
                ("no-front-matter/SKILL.md", s("# Just markdown\n")),
                ("list/SKILL.md", s("---\ndescription: [a, b]\n---\n")),
                ("number/SKILL.md", s("---\ndescription: 42\n---\n")),
                (
                    "block/SKILL.md",
                    s("---\ndescription: >-\n  Folded over\n  two lines\n---\n"),
                ),
                (
                    "long/SKILL.md",
                    format!("---\ndescription: {}\n---\n", "word ".repeat(220).trim()),
                ),
            ],
        ),
        (
            "fields",
            vec![
                (
                    "hidden-snake/SKILL.md",
                    s("---\ndescription: d\ndisable_model_invocation: true\n---\n"),
                ),
                (
                    "hidden-kebab/SKILL.md",
                    s("---\ndescription: d\ndisable-model-invocation: true\n---\n"),
                ),
                (
                    "hidden-string/SKILL.md",
                    s("---\ndescription: d\ndisable-model-invocation: \"true\"\n---\n"),
                ),
                (
                    "agent-skills/SKILL.md",
                    s(
                        "---\nname: agent-skills\ndescription: d\nlicense: Apache-2.0\ncompatibility: needs git\nallowed-tools: Bash(git:*) Read\nmetadata:\n  author: someone\n  version: \"1.0\"\n---\n",
                    ),
                ),
                (
                    "unknown/SKILL.md",
                    s("---\ndescripton: typo\ndescription: d\nargument-hint: \"[file]\"\n---\n"),
                ),
                (
                    "types/SKILL.md",
                    s(
                        "---\ndescription: d\nversion: 1.5\nkeywords: rust, cargo\nthinking_effort: HIGH\nactivation:\n  keywords: [cargo, Clippy]\n  extra: 1\n---\n",
                    ),
                ),
                (
                    "bad-types/SKILL.md",
                    s(
                        "---\ndescription: d\nname: [x]\nthinking_effort: extreme\npermissions: write-everything\nactivation: rust\n---\n",
                    ),
                ),
            ],
        ),
        (
            "flat_files_and_ignored_entries",
            vec![
                ("README.md", s("# Skills of this repository\n")),
                ("NOTES.md", s("Plain notes, no front matter\n")),
                (
                    "flat-skill.md",
                    s("---\ndescription: a flat skill\n---\nBody\n"),
                ),
                ("notes.txt", s("not markdown\n")),
                (
                    ".hidden/SKILL.md",
                    s("---\ndescription: hidden folder\n---\n"),
                ),
                (
                    "node_modules/pkg/SKILL.md",
                    s("---\ndescription: in node_modules\n---\n"),
                ),
                (
                    "deeper/flat.md",
                    s("---\ndescription: not at the root, ignored\n---\n"),
                ),
            ],
        ),
        (
            "hostile_front_matter",
            vec![
                ("alias-bomb/SKILL.md", alias_bomb()),
                (
                    "deep-flow/SKILL.md",
                    format!(
                        "---\ndescription: d\nx: {}{}\n---\n",
                        "[".repeat(20_000),
                        "]".repeat(20_000)
                    ),
                ),
                (
                    "deep-block/SKILL.md",
                    format!(
                        "---\ndescription: d\n{}---\n",
                        (0..40)
                            .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
                            .collect::<String>()
                    ),
                ),
                (
                    "deep-toml/SKILL.md",
                    format!(
                        "+++\ndescription = \"d\"\nx = {}{}\n+++\n",
                        "[".repeat(20_000),
                        "]".repeat(20_000)
                    ),
                ),
            ],
        ),
    ]
}

fn alias_bomb() -> String {
    let mut text = String::from(
        "---\ndescription: d\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for pair in names.windows(2) {
        let (prev, name) = (pair[0], pair[1]);
        text.push_str(&format!("{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
    }
    text.push_str("---\n");
    text
}

#[test]
fn discovery_cases() {
    for (name, files) in cases() {
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
        insta::assert_snapshot!(name, discover_files(&files));
    }
}
