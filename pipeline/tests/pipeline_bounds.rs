//! The stage-level bounding helper: grapheme-safe cuts on emoji and
//! combining characters, the rendered marker, the truncation recorded in the
//! section report, and a property test over arbitrary text and limits.

// Test helpers may fail loudly too; clippy.toml only covers `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bcode_prompt_config::BcodeConfig;
use bcode_prompt_pipeline::Pipeline;
use bcode_prompt_pipeline::{BoundedText, bound_text};
use bcode_prompt_pipeline::{Section, SectionKind, Stage, StageContext, StageError, StageSpec};
use bcode_templates::{EMBEDDED, Templates};
use bcode_text::Limit;
use proptest::prelude::*;
use serde_json::json;

const FAMILY: &str = "👨‍👩‍👧‍👦"; // 7 chars, 25 bytes, one grapheme
const E_ACUTE_DOT: &str = "e\u{301}\u{323}"; // 3 chars, 5 bytes, one grapheme

/// Stands in for a sections-crate stage that bounds gathered text.
struct GitStatusStage;

struct GitStatus(String);

impl Stage<GitStatus> for GitStatusStage {
    fn spec(&self) -> StageSpec {
        SectionKind::DynamicRepositoryContext.spec()
    }
    fn limit(&self, config: &BcodeConfig) -> Option<Limit> {
        Some(Limit::Chars(config.system_prompt.git_status_max_chars))
    }
    fn render(&self, cx: &StageContext<'_, GitStatus>) -> Result<Vec<Section>, StageError> {
        let status = cx.inputs;
        let bounded = cx.bound(&status.0, self.limit(cx.config), Some("git status"))?;
        Ok(vec![
            Section::new("dynamic_repository_context", bounded.text.clone())
                .with_bounded(&bounded)
                .with_source("git status --porcelain"),
        ])
    }
}

fn templates() -> Templates {
    Templates::embedded(&[EMBEDDED]).unwrap()
}

fn check(text: &str, limit: Limit, expected: &str) {
    let out = bound_text(&templates(), text, Some(limit), &[], None).unwrap();
    assert_eq!(out.text, expected);
    let marker_alone = out.truncation.as_ref().is_some_and(|t| t.kept_nothing());
    assert!(marker_alone || limit.measure(&out.text) <= limit.max());
}

#[test]
fn emoji_and_combining_sequences_are_never_split() {
    let families = FAMILY.repeat(10);
    // The marker takes 41 chars; 48 leaves room for exactly one family.
    check(
        &families,
        Limit::Chars(48),
        &format!("{FAMILY}\n[truncated: 63 of 70 characters omitted]"),
    );
    // 47 leaves 6 chars: not enough for a 7-char grapheme, so only the marker.
    check(
        &families,
        Limit::Chars(47),
        "\n[truncated: 70 of 70 characters omitted]",
    );
    let accents = E_ACUTE_DOT.repeat(20);
    check(
        &accents,
        Limit::Chars(45),
        &format!("{E_ACUTE_DOT}\n[truncated: 57 of 60 characters omitted]"),
    );
    check(
        &accents,
        Limit::Bytes(50),
        &format!("{E_ACUTE_DOT}{E_ACUTE_DOT}\n[truncated: 90 of 100 bytes omitted]"),
    );
}

#[test]
fn a_stage_records_its_cut_in_the_report() {
    let mut config = BcodeConfig::default();
    config.system_prompt.git_status_max_chars = 76;
    let inputs = GitStatus(format!(" M {}\n", FAMILY.repeat(20)));
    let templates = templates();
    let pipeline = Pipeline::new(vec![Box::new(GitStatusStage)]).unwrap();
    let prompt = pipeline
        .assemble(&StageContext::new(&config, &templates, &inputs), false)
        .unwrap();
    // The marker takes 66 chars, leaving 10: " M " and one 7-char family.
    let expected_text =
        format!(" M {FAMILY}\n[truncated: 134 of 144 characters omitted; full text: git status]");
    assert_eq!(prompt.request_context, expected_text);
    assert_eq!(
        serde_json::to_value(&prompt.sections).unwrap(),
        json!([{
            "id": "dynamic_repository_context",
            "class": "turn",
            "placement": "request_context",
            "bytes": expected_text.len(),
            "chars": 76,
            "range": {"start": 0, "end": expected_text.len()},
            "truncated": true,
            "truncations": [{
                "limit": {"chars": 76},
                "cut_at_byte": 28,
                "original_bytes": 504,
                "original_chars": 144,
                "omitted_bytes": 476,
                "omitted_chars": 134,
                "full_text_at": "git status",
            }],
            "sources": ["git status --porcelain"],
            "template": null,
            "notes": [],
        }])
    );
}

#[test]
fn a_broken_marker_override_is_an_error_not_a_silent_cut() {
    let templates = Templates::new(
        &[EMBEDDED],
        vec![bcode_templates::TemplateOverride {
            name: "truncation_marker.j2".into(),
            file: "/ops/truncation_marker.j2".into(),
            source: "[cut {{ omitted_lines }}]".into(),
        }],
    )
    .unwrap();
    let err = bound_text(
        &templates,
        &"x".repeat(100),
        Some(Limit::Chars(50)),
        &[],
        None,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "template `truncation_marker.j2` overridden by /ops/truncation_marker.j2 failed to render \
         at line 1: undefined value: `omitted_lines` is undefined"
    );
    // Within the limit nothing is rendered, so nothing can fail.
    let out: BoundedText =
        bound_text(&templates, "short", Some(Limit::Chars(50)), &[], None).unwrap();
    assert_eq!(out.text, "short");
}

proptest! {
    #[test]
    fn any_text_any_limit_is_a_valid_bounded_prefix_plus_marker(
        text in "\\PC{0,80}|(\\PC|\u{301}|\u{323}|\u{200d}|👩|🏽|\n){0,80}",
        max in 0usize..160,
        chars in any::<bool>(),
        hint in proptest::option::of("[a-z /.]{1,20}"),
    ) {
        let limit = if chars { Limit::Chars(max) } else { Limit::Bytes(max) };
        let templates = templates();
        let out = bound_text(&templates, &text, Some(limit), &[], hint.as_deref()).unwrap();
        prop_assert!(std::str::from_utf8(out.text.as_bytes()).is_ok());
        match &out.truncation {
            None => {
                prop_assert!(limit.measure(&out.text) <= max);
                prop_assert_eq!(&out.text, &text);
            }
            Some(cut) => {
                let t = &cut.truncation;
                let kept = &text[..t.cut_at_byte];
                prop_assert!(out.text.starts_with(kept));
                let marker = &out.text[kept.len()..];
                // Every cut is marked: within the limit, or the marker alone
                // when the limit is smaller than it.
                prop_assert!(limit.measure(&out.text) <= max || cut.kept_nothing());
                let (omitted, original, unit) = match limit {
                    Limit::Chars(_) => (t.omitted_chars, t.original_chars, "characters"),
                    Limit::Bytes(_) => (t.omitted_bytes, t.original_bytes, "bytes"),
                };
                let mut expected = format!("\n[truncated: {omitted} of {original} {unit} omitted");
                if let Some(hint) = &hint {
                    expected.push_str(&format!("; full text: {hint}"));
                }
                expected.push(']');
                prop_assert_eq!(marker, expected.as_str());
                prop_assert_eq!(cut.full_text_at.as_deref(), hint.as_deref());
            }
        }
    }
}
