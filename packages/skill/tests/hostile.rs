//! The trust line (issue 12) at the library's edge: an edit between turns,
//! a hostile name, a tiny context limit and a flood of arguments never make
//! a `/skill` show a mismatched, malformed or unlogged block.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use std::fs;

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{
    ARGUMENTS_PREVIEW_MAX_CHARS, ArgumentsPreview, SkillSession, SkillSessionOptions, SlashCommand,
    Templates, preview_arguments,
};
use bcode_skill_models::{SkillContextRequest, SkillEvent, SkillId};
use support::user_registry;

fn request(id: &str, max_bytes: Option<usize>) -> SkillContextRequest {
    SkillContextRequest {
        id: SkillId::parse(id).unwrap(),
        arguments: Vec::new(),
        raw_arguments: None,
        substitute_arguments: true,
        max_bytes,
        preview_max_chars: 2000,
    }
}

/// The file is edited after discovery (between turns, before a reload):
/// the block used the name discovery saw with the body read now. Both now
/// come from the one read made for the `/skill`.
#[test]
fn a_skill_edited_after_discovery_is_shown_as_one_version() {
    let (tmp, registry, base) = user_registry(&[(
        "alpha/SKILL.md",
        "---\nname: Old name\ndescription: d\n---\nOld body.\n",
    )]);
    fs::write(
        tmp.path().join("alpha/SKILL.md"),
        "---\nname: New name\nversion: 2.0.0\ndescription: d\n---\nNew body.\n",
    )
    .unwrap();
    let templates = Templates::builtin();
    let options = SkillSessionOptions::from_config(&SkillsConfig::default());
    let mut session = SkillSession::new(registry, options, templates);
    let outcome = session.run(&SlashCommand::Activate {
        id: "alpha".into(),
        arguments: Vec::new(),
        raw_arguments: None,
    });
    assert!(outcome.reply.is_ok(), "{:?}", outcome.reply);
    assert_eq!(
        session.active()[0].context.text,
        format!(
            "<skill id=\"alpha\" name=\"New name\" location=\"{base}/alpha/SKILL.md\">\nReferences are relative to {base}/alpha.\nSource label: user-config:skills\nVersion: 2.0.0\n\nNew body.\n</skill>"
        )
    );
}

/// An edit that breaks the front matter or renames the skill is an error
/// for this `/skill`, not a block mixing two versions.
#[test]
fn a_skill_broken_or_renamed_since_discovery_is_a_load_error() {
    let (tmp, registry, _base) =
        user_registry(&[("alpha/SKILL.md", "---\ndescription: d\n---\nBody.\n")]);
    let templates = Templates::builtin();
    let file = tmp.path().join("alpha/SKILL.md");
    fs::write(&file, "---\ndescription: \"unclosed\n---\nBody.\n").unwrap();
    assert_eq!(
        registry
            .context(&request("alpha", None), &templates)
            .unwrap_err()
            .to_string(),
        "skill `alpha` could not be loaded: its front matter changed on disk and is no longer valid; the skill's diagnostics say why"
    );
    fs::write(&file, "---\nid: beta\ndescription: d\n---\nBody.\n").unwrap();
    assert_eq!(
        registry
            .context(&request("alpha", None), &templates)
            .unwrap_err()
            .to_string(),
        "skill `alpha` could not be loaded: its file now declares the id `beta`; it is available under that id once skills are reloaded"
    );
}

/// The old block was rendered around a NUL sentinel and split on its first
/// occurrence: a name or description holding it moved the body into an
/// attribute. (The NUL itself is shown as `\u{0}`: XML allows it in no
/// form, issue 24.)
#[test]
fn a_sentinel_in_the_front_matter_does_not_move_the_body() {
    let (_tmp, registry, base) = user_registry(&[(
        "alpha/SKILL.md",
        "---\nname: \"x\\0body\\0y\"\ndescription: \"\\0body\\0\"\n---\nThe body.\n",
    )]);
    let response = registry
        .context(&request("alpha", None), &Templates::builtin())
        .unwrap();
    assert_eq!(
        response.text,
        format!(
            "<skill id=\"alpha\" name=\"x\\u{{0}}body\\u{{0}}y\" location=\"{base}/alpha/SKILL.md\">\nReferences are relative to {base}/alpha.\nSource label: user-config:skills\n\nThe body.\n</skill>"
        )
    );
}

/// Every limit, from zero to past the whole block: the result is the whole
/// block, or a block cut inside its body with the marker, or (when even the
/// frame does not fit) open tag, marker and close tag. Never empty, never
/// without its marker.
#[test]
fn every_context_limit_gives_a_well_formed_marked_block() {
    let (_tmp, registry, base) = user_registry(&[(
        "alpha/SKILL.md",
        "---\ndescription: d\n---\nFirst line of the body.\nSecond line of the body.\n",
    )]);
    let templates = Templates::builtin();
    let whole = registry
        .context(&request("alpha", None), &templates)
        .unwrap()
        .text;
    let open = format!("<skill id=\"alpha\" name=\"alpha\" location=\"{base}/alpha/SKILL.md\">\n");
    let frame_head = format!(
        "{open}References are relative to {base}/alpha.\nSource label: user-config:skills\n\n"
    );
    let marker_start = "[… skill body truncated: ";
    for max in 0..=whole.len() + 1 {
        let response = registry
            .context(&request("alpha", Some(max)), &templates)
            .unwrap();
        let text = &response.text;
        assert_eq!(response.bytes, text.len());
        if max >= whole.len() {
            assert_eq!(text, &whole);
            assert!(!response.truncated);
            continue;
        }
        assert!(response.truncated, "{max}");
        assert!(text.starts_with(&open), "{max}: {text}");
        assert!(text.contains(marker_start), "{max}: {text}");
        assert!(
            text.ends_with(&format!(
                "(skills.max_context_bytes = {max}). Read the full file at {base}/alpha/SKILL.md]\n</skill>"
            )),
            "{max}: {text}"
        );
        if text.starts_with(&frame_head) {
            // Cut inside the body: within the limit.
            assert!(text.len() <= max, "{max}: {text}");
        } else {
            // The marker-only block: no provenance line, the whole body omitted.
            assert_eq!(
                text,
                &format!(
                    "{open}[… skill body truncated: 48 more bytes not shown (skills.max_context_bytes = {max}). Read the full file at {base}/alpha/SKILL.md]\n</skill>"
                )
            );
        }
    }
}

/// Arguments are bounded like previews: characters in total, each argument
/// costing one more, the cut one ending with the preview marker.
#[test]
fn arguments_are_previewed_within_a_bound() {
    let templates = Templates::builtin();
    let check = |arguments: &[&str], max: usize, expected: ArgumentsPreview| {
        let arguments: Vec<String> = arguments.iter().map(|a| (*a).to_owned()).collect();
        assert_eq!(
            preview_arguments(&arguments, max, &templates).unwrap(),
            expected,
            "{arguments:?} within {max}"
        );
    };
    let kept = |arguments: &[&str], truncated: bool, original_bytes: usize| ArgumentsPreview {
        arguments: arguments.iter().map(|a| (*a).to_owned()).collect(),
        truncated,
        original_bytes,
    };
    check(&[], 10, kept(&[], false, 0));
    // Each argument costs its characters and one more.
    check(&["ab", "cd"], 6, kept(&["ab", "cd"], false, 4));
    // No room left for any of "cd": its marker alone says it was cut.
    check(
        &["ab", "cd"],
        5,
        kept(&["ab", "… [2 more characters]"], true, 4),
    );
    let long = "y".repeat(100);
    check(
        &["fix", &long, "more"],
        40,
        kept(&["fix", "yyyyyyyyyyyy… [88 more characters]"], true, 107),
    );
    // A flood of empty arguments is bounded too.
    let empty = vec![""; 100_000];
    check(&empty, 10, kept(&[""; 10], true, 0));
    // `preview_max_chars` itself is capped.
    let huge = "z".repeat(ARGUMENTS_PREVIEW_MAX_CHARS * 2);
    let preview = preview_arguments(&[huge], usize::MAX, &templates).unwrap();
    assert!(preview.truncated);
    assert_eq!(
        preview.arguments[0].chars().count(),
        ARGUMENTS_PREVIEW_MAX_CHARS - 1
    );
}

/// A mistyped id of a megabyte: the failure event quoted it whole and was
/// too large for the log.
#[test]
fn a_huge_unknown_id_is_bounded_in_its_failure_event() {
    let (_tmp, registry, _base) =
        user_registry(&[("alpha/SKILL.md", "---\ndescription: d\n---\nBody.\n")]);
    let options = SkillSessionOptions::from_config(&SkillsConfig::default());
    let mut session = SkillSession::new(registry, options, Templates::builtin());
    let id = "q".repeat(1024 * 1024);
    let outcome = session.run(&SlashCommand::Activate {
        id: id.clone(),
        arguments: Vec::new(),
        raw_arguments: None,
    });
    let [SkillEvent::SkillInvocationFailed { id: logged, error }] = outcome.events.as_slice()
    else {
        panic!("{:?}", outcome.events.len());
    };
    assert_eq!(logged.chars().count(), ARGUMENTS_PREVIEW_MAX_CHARS);
    assert!(
        logged.ends_with(" more characters]"),
        "{}",
        &logged[logged.len() - 40..]
    );
    assert!(error.chars().count() <= ARGUMENTS_PREVIEW_MAX_CHARS);
}
