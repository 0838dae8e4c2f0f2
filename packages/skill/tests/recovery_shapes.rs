//! One reviewed snapshot per recovery shape of issue 14: the file as
//! written, the manifest fields it became, and every diagnostic. Cases that
//! look alike but must stay errors are snapshots too.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use bcode_skill::parse_skill;

/// Parses `text` as `/registry/<folder>/SKILL.md` and renders the outcome:
/// the input, then the manifest's fields (or that there is no skill), then
/// one line per diagnostic (`severity code line:col [field] message | hint`).
fn check(folder: &str, text: &str) -> String {
    let origin = support::registry_origin(folder);
    let outcome = parse_skill(&origin, text.as_bytes());
    let mut out = format!("{folder}/SKILL.md:\n");
    for line in text.split_inclusive('\n') {
        out.push_str(&format!("  | {line:?}\n"));
    }
    match &outcome.skill {
        Some(skill) => {
            let m = &skill.manifest;
            out.push_str(&format!(
                "skill id={} name={:?}\n  description={:?}\n",
                m.id, m.name, m.description
            ));
            if let Some(version) = m.details().version() {
                out.push_str(&format!("  version={version:?}\n"));
            }
            for (key, value) in m.details().extra() {
                out.push_str(&format!("  extra {key}={value}\n"));
            }
        }
        None => out.push_str("no skill\n"),
    }
    for d in &outcome.diagnostics {
        assert_eq!(d.path.as_deref(), Some(origin.location.as_path()));
        let mut line = format!("{} {}", d.severity, d.code);
        if let Some(l) = d.line {
            line.push_str(&format!(" {l}"));
            if let Some(c) = d.column {
                line.push_str(&format!(":{c}"));
            }
        }
        if let Some(f) = &d.field {
            line.push_str(&format!(" [{f}]"));
        }
        line.push_str(&format!(" {}", d.message()));
        if let Some(h) = d.hint() {
            line.push_str(&format!(" | {h}"));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn cases() -> Vec<(&'static str, &'static str, String)> {
    let s = |x: &str| x.to_owned();
    vec![
        // Text after a block-scalar header.
        (
            "block_literal_with_text",
            "literal",
            s(
                "---\nname: literal\ndescription: | Use when the user asks for a diagram.\n  Draws it with Mermaid.\n---\nBody\n",
            ),
        ),
        (
            "block_folded_strip_with_text",
            "folded",
            s(
                "---\nname: folded\ndescription: >- Use when the user asks\n  for a release note.\nversion: 1.2.0\n---\n",
            ),
        ),
        (
            "block_folded_with_text_crlf",
            "folded-crlf",
            s("---\r\ndescription: > Summarise a pull request.\r\nname: folded-crlf\r\n---\r\n"),
        ),
        // A string value that starts with an indicator and goes on as prose.
        (
            "indicator_flow_sequence",
            "auto-invoke",
            s(
                "---\nname: auto-invoke\ndescription: [AUTO-INVOKE] MUST be invoked before editing any file.\n---\n",
            ),
        ),
        (
            "indicator_alias",
            "bold",
            s("---\nname: bold\ndescription: **This applies to every TypeScript file.**\n---\n"),
        ),
        (
            "indicator_block_sequence",
            "dash",
            s("---\nname: dash\ndescription: - Define a database schema from a sketch.\n---\n"),
        ),
        (
            "indicator_flow_mapping",
            "template",
            s(
                "---\nname: template\ndescription: {program.description} Use when the user runs the program.\n---\n",
            ),
        ),
        (
            "indicator_reserved_at",
            "drei",
            s("---\nname: drei\ndescription: @react-three/drei helper for scenes.\n---\n"),
        ),
        (
            "indicator_reserved_backtick",
            "macro",
            s(
                "---\nname: macro\ndescription: `macro` is how this repository generates code.\n---\n",
            ),
        ),
        (
            "indicator_tag",
            "image",
            s("---\nname: image\ndescription: ![](logo.png) Draws the project logo.\n---\n"),
        ),
        (
            "indicator_with_continuation",
            "continued",
            s(
                "---\ndescription: [BETA] Use when the user\n  asks for a changelog.\nname: continued\n---\n",
            ),
        ),
        (
            "indicator_in_name_and_version",
            "fields",
            s(
                "---\nname: [WIP] Fields\nversion: @next\ndescription: Other string fields recover too.\n---\n",
            ),
        ),
        // An unknown field's flow list with an item starting with `@`
        // (issue 42): the list is kept, the skill too.
        (
            "reserved_item_in_flow_list",
            "nextjs",
            s(
                "---\nname: nextjs\ndescription: Next.js with Supabase auth.\ntags: [next,@supabase/ssr]\n---\n",
            ),
        ),
        // The `: ` case, recovered before this issue.
        (
            "unquoted_colon",
            "colon",
            s("---\nname: colon\ndescription: Use when: the user asks for it\n---\n"),
        ),
        // A folder name that is not an id, with a `name` that is one.
        (
            "id_from_name_long_folder",
            "a-very-long-folder-name-copied-from-the-title-of-the-repository-it-came-from",
            s("---\nname: long-folder\ndescription: The folder name is 76 bytes.\n---\n"),
        ),
        (
            "id_from_name_upper_case_folder",
            "PDF_Tools",
            s("---\nname: pdf-tools\ndescription: Fill in PDF forms.\n---\n"),
        ),
        (
            "id_from_name_dotted_folder",
            "tools.v2",
            s("---\nname: tools-v2\ndescription: Second version of the tools.\n---\n"),
        ),
        (
            "id_from_name_and_recovered_description",
            "Combined_Case",
            s("---\nname: combined-case\ndescription: >- Both recoveries at once.\n---\n"),
        ),
        // Look-alikes that stay errors.
        (
            "stays_error_valid_list",
            "list",
            s("---\nname: list\ndescription: [one, two]\n---\n"),
        ),
        (
            "stays_error_comment_or_text",
            "comment",
            s(
                "---\nname: comment\ndescription: [x] Use for tags like #rust # or a comment?\n---\n",
            ),
        ),
        (
            "stays_error_rest_does_not_parse",
            "rest",
            s("---\nname: rest\ndescription: | Recoverable alone\nversion: \"never closed\n---\n"),
        ),
        (
            "stays_error_name_not_an_id",
            "Not_An_Id",
            s("---\nname: Not An Id\ndescription: The name is a title, not an id.\n---\n"),
        ),
        (
            "stays_error_explicit_id",
            "Explicit_Id",
            s(
                "---\nid: Explicit_Id\nname: explicit-id\ndescription: An `id` field is never replaced.\n---\n",
            ),
        ),
    ]
}

#[test]
fn recovery_shapes() {
    for (name, folder, text) in cases() {
        insta::assert_snapshot!(name, check(folder, &text));
    }
}
