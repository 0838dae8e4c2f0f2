//! Open-specification fidelity of front matter, as data: each case is a
//! file's text, the `metadata` (and the version) it loads as, and every
//! diagnostic it gets (code, line, column, field). `metadata` keeps what
//! the author wrote on every path (the YAML fast path, the full parser,
//! recovery, TOML); an unquoted `: ` is recovered at any depth; one run
//! reports every problem of a file.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use bcode_skill::parse_skill;
use serde_json::{Value, json};

/// What one file loads as: `None` when it is skipped, else the metadata
/// and the version as JSON.
type Loaded = Option<Value>;

/// Diagnostics as `(code, line, column, field)`.
type Found = Vec<(&'static str, Option<u32>, Option<u32>, Option<&'static str>)>;

/// A diagnostic as `(code, line, column, field)`, owned.
type Owned = (String, Option<u32>, Option<u32>, Option<String>);

fn parse(text: &str) -> (Loaded, Vec<Owned>) {
    let origin = support::registry_origin("skill");
    let outcome = parse_skill(&origin, text.as_bytes());
    let loaded = outcome.skill.as_ref().map(|skill| {
        let details = skill.manifest.details();
        json!({"metadata": skill.manifest.metadata, "version": details.version()})
    });
    let found = outcome
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.code.to_string(),
                d.line,
                d.column,
                d.field.as_deref().map(str::to_owned),
            )
        })
        .collect();
    (loaded, found)
}

fn check(name: &str, text: &str, loaded: Loaded, found: Found) {
    let found: Vec<_> = found
        .into_iter()
        .map(|(code, line, column, field)| {
            (code.to_owned(), line, column, field.map(str::to_owned))
        })
        .collect();
    assert_eq!(parse(text), (loaded, found), "case {name}:\n{text}");
}

#[test]
fn metadata_as_written_and_every_problem_reported() {
    let yaml = |front: &str| format!("---\n{front}---\nBody.\n");
    let toml = |front: &str| format!("+++\n{front}+++\nBody.\n");
    let cases: Vec<(&str, String, Loaded, Found)> = vec![
        (
            "flow_metadata_full_parser",
            yaml(
                "description: d\nmetadata: {version: 1.10, stable: true, hex: 0x10, big: 1e3, none: ~, nil: null}\n",
            ),
            Some(
                json!({"metadata": {"version": "1.10", "stable": "true", "hex": "0x10", "big": "1e3",
                                     "none": "~", "nil": "null"}, "version": null}),
            ),
            vec![],
        ),
        (
            "block_metadata_fast_path",
            yaml(
                "description: d\nmetadata:\n  version: 1.10\n  stable: true\n  tags: [1.0, beta]\n",
            ),
            Some(
                json!({"metadata": {"version": "1.10", "stable": "true", "tags": ["1.0", "beta"]},
                        "version": null}),
            ),
            vec![],
        ),
        (
            "quoted_stays_its_value_other_fields_keep_typing",
            yaml("description: d\nversion: 1.10\nmetadata:\n  a: \"1.10\"\n  b: '2.0'\n"),
            Some(json!({"metadata": {"a": "1.10", "b": "2.0"}, "version": "1.1"})),
            vec![],
        ),
        (
            "nested_maps_and_lists_keep_their_shape",
            yaml(
                "description: d\nmetadata:\n  build:\n    flags: [1, on, ~]\n    nested: {x: 0.50}\n  list:\n    - 3.14\n    - {y: false}\n",
            ),
            Some(
                json!({"metadata": {"build": {"flags": ["1", "on", "~"], "nested": {"x": "0.50"}},
                                     "list": ["3.14", {"y": "false"}]}, "version": null}),
            ),
            vec![],
        ),
        (
            "non_ascii_keys_and_values",
            yaml("description: Отладка Rust\nmetadata:\n  версия: 1.10\n  作者: 李雷\n"),
            Some(json!({"metadata": {"версия": "1.10", "作者": "李雷"}, "version": null})),
            vec![],
        ),
        (
            "toml_metadata_as_written",
            toml(
                "description = \"d\"\nversion = \"2\"\n[metadata]\nversion = 1.10\nstable = true\nlist = [1.0, 0x1F]\n",
            ),
            Some(
                json!({"metadata": {"version": "1.10", "stable": "true", "list": ["1.0", "0x1F"]},
                        "version": "2"}),
            ),
            vec![],
        ),
        (
            "nested_unquoted_colon_is_repaired",
            yaml(
                "description: d\nmetadata:\n  short-description: What's included: builds\n  version: 1.10\n",
            ),
            Some(
                json!({"metadata": {"short-description": "What's included: builds", "version": "1.10"},
                        "version": null}),
            ),
            vec![(
                "recovered_front_matter",
                Some(4),
                Some(22),
                Some("metadata.short-description"),
            )],
        ),
        (
            "two_unquoted_colons_two_repairs",
            yaml("description: Use when: asked\nmetadata:\n  note: Ключ: значение\n"),
            Some(json!({"metadata": {"note": "Ключ: значение"}, "version": null})),
            vec![
                (
                    "recovered_front_matter",
                    Some(2),
                    Some(14),
                    Some("description"),
                ),
                (
                    "recovered_front_matter",
                    Some(4),
                    Some(9),
                    Some("metadata.note"),
                ),
            ],
        ),
        (
            "still_invalid_reports_each_repair_and_the_error",
            yaml("description: Use when: asked\nmetadata:\n  note: a: b\nlicense: \"MIT\n"),
            None,
            vec![
                (
                    "malformed_front_matter",
                    Some(2),
                    Some(14),
                    Some("description"),
                ),
                (
                    "malformed_front_matter",
                    Some(4),
                    Some(9),
                    Some("metadata.note"),
                ),
                ("malformed_front_matter", Some(5), Some(10), None),
            ],
        ),
        (
            "block_scalar_lines_are_not_repaired",
            yaml("description: |\n  Use when: asked\n  key: a: b\nmetadata:\n  k: v\n"),
            Some(json!({"metadata": {"k": "v"}, "version": null})),
            vec![],
        ),
    ];
    for (name, text, loaded, found) in cases {
        check(name, &text, loaded, found);
    }
}

/// The whole diagnostic for a nested repair: the fix names the line to
/// write, the field names the path.
#[test]
fn a_nested_repair_says_how_to_fix_the_line() {
    let origin = support::registry_origin("skill");
    let text =
        "---\ndescription: d\nmetadata:\n  short-description: What's included: builds\n---\n";
    let outcome = parse_skill(&origin, text.as_bytes());
    let d = &outcome.diagnostics[0];
    assert_eq!(
        (
            outcome.diagnostics.len(),
            &*d.message(),
            d.hint().as_deref()
        ),
        (
            1,
            "the value of `metadata.short-description` contains `: ` and is not quoted, which is invalid YAML; it was read as a quoted string",
            Some("quote the value: short-description: \"What's included: builds\"")
        )
    );
}
