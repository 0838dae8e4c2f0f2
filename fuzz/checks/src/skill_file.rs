//! The check every target that builds a whole file shares: the bytes as a
//! skill file, under each of the three names that make a candidate, through
//! the real parser, and (when a skill comes out) its context block through
//! the real templates.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use bcode_skill::{
    InstructionKind, ParseOutcome, Placeholders, SkillOrigin, Templates, format_context,
    parse_skill, substitute_arguments,
};
use bcode_skill_models::{Severity, SkillContextRequest, SkillLayout, SkillSource, SourceKind};
use bcode_text::{clean_body, clean_line, model_path, neutralize_closing_tag};

/// The three file names that make a candidate.
const KINDS: [InstructionKind; 3] = [
    InstructionKind::SkillFile,
    InstructionKind::Readme,
    InstructionKind::Flat,
];

fn origin(kind: InstructionKind) -> SkillOrigin {
    let root = PathBuf::from("/fuzz/skills");
    let (layout, directory, location) = match kind {
        InstructionKind::Flat => (SkillLayout::Flat, root.clone(), root.join("fuzzed.md")),
        InstructionKind::Readme => (
            SkillLayout::Folder,
            root.join("fuzzed"),
            root.join("fuzzed/README.md"),
        ),
        InstructionKind::SkillFile => (
            SkillLayout::Folder,
            root.join("fuzzed"),
            root.join("fuzzed/SKILL.md"),
        ),
    };
    SkillOrigin {
        source: Arc::new(SkillSource {
            kind: SourceKind::RepoBcode,
            label: "repo:.bcode/skills".into(),
            ordinal: 0,
            root: Some(root),
            provider: None,
        }),
        layout,
        kind,
        location,
        directory,
        inferred_id: "fuzzed".into(),
    }
}

fn templates() -> &'static Templates {
    static TEMPLATES: OnceLock<Templates> = OnceLock::new();
    TEMPLATES.get_or_init(Templates::builtin)
}

/// Parses `bytes` as a skill file under every candidate name and checks
/// each outcome; returns the `SKILL.md` outcome for further checks.
///
/// Properties: parsing never panics and is deterministic; a file gives a
/// skill, or is documentation, or says why not with an error diagnostic,
/// and a skill comes with no error; every position is inside the file; the
/// body starts inside the file; the context block of a skill is one
/// well-formed `<skill>` element under any byte limit, and clean (no
/// hidden or line-breaking character but the line feed; issue 24).
pub fn check(bytes: &[u8]) -> ParseOutcome {
    let mut skill_file = None;
    for kind in KINDS {
        let origin = origin(kind);
        let outcome = parse_skill(&origin, bytes);
        assert_eq!(outcome, parse_skill(&origin, bytes), "not deterministic");
        check_outcome(&origin, bytes, &outcome);
        if kind == InstructionKind::SkillFile {
            skill_file = Some(outcome);
        }
    }
    skill_file.unwrap_or_else(|| parse_skill(&origin(InstructionKind::SkillFile), bytes))
}

fn check_outcome(origin: &SkillOrigin, bytes: &[u8], outcome: &ParseOutcome) {
    let errors = outcome
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    match &outcome.skill {
        Some(_) => assert_eq!(errors, 0, "a skill with errors: {outcome:?}"),
        None if outcome.not_a_skill => {
            assert_ne!(origin.kind, InstructionKind::SkillFile, "{outcome:?}");
        }
        None => assert!(errors > 0, "no skill and no error says why: {outcome:?}"),
    }
    let lines = bytes.iter().filter(|&&b| b == b'\n' || b == b'\r').count() + 1;
    for d in &outcome.diagnostics {
        if let Some(line) = d.line {
            let line = usize::try_from(line).unwrap_or(usize::MAX);
            assert!(
                (1..=lines).contains(&line),
                "line {line} of a {lines}-line file: {d:?}"
            );
        }
        assert!(!d.message().is_empty(), "{d:?}");
    }
    if let Some(skill) = &outcome.skill {
        assert!(skill.body_offset <= bytes.len(), "{skill:?}");
        // The block depends on the manifest, not the file name: one kind
        // is enough, and keeps the mutation run fast.
        if origin.kind == InstructionKind::SkillFile {
            let body = String::from_utf8_lossy(&bytes[skill.body_offset..]);
            check_context(skill, &body, bytes.len());
        }
    }
}

/// The block under no limit and under a limit picked from the input size,
/// invoked with arguments that try to close the block and hide text.
fn check_context(skill: &bcode_skill_models::SkillSummary, body: &str, size: usize) {
    let arguments = vec!["</skill>".to_owned(), "\u{202e}x\u{1b}".to_owned()];
    for max_bytes in [None, Some(size % 257), Some(size % 4099)] {
        let request = SkillContextRequest {
            id: skill.manifest.id.clone(),
            arguments: arguments.clone(),
            raw_arguments: None,
            substitute_arguments: true,
            max_bytes,
            preview_max_chars: 200,
        };
        let response = format_context(skill, body, &request, templates());
        assert!(
            response.is_ok(),
            "the built-in templates failed: {response:?}"
        );
        let Ok(response) = response else { return };
        let text = &response.text;
        assert_eq!(response.bytes, text.len());
        let open = format!("<skill id=\"{}\" ", skill.manifest.id.as_str());
        assert!(text.starts_with(&open), "{text:?}");
        assert!(text.ends_with("</skill>"), "{text:?}");
        assert_eq!(text.matches("</skill>").count(), 1, "{text:?}");
        if response.truncated {
            assert!(text.contains("skill body truncated"), "{text:?}");
        } else {
            // The body, placeholders replaced and closing tags defused, is
            // the block's last content: never inside an attribute or the
            // provenance lines.
            let directory = clean_line(&model_path(skill.directory())).into_owned();
            let values = Placeholders {
                all: &arguments.join(" "),
                words: &arguments,
                names: skill.manifest.details().arguments(),
                skill_dir: &directory,
            };
            let body = substitute_arguments(body, &values);
            let body = clean_body(&body);
            let body = neutralize_closing_tag(&body, "skill");
            assert!(text.ends_with(&format!("\n\n{body}\n</skill>")), "{text:?}");
        }
        // Whatever the file held, the block is clean: no control character
        // but tab and line feed (XML 1.0 allows no other, even escaped), no
        // line or paragraph separator, no bidi or zero-width character.
        assert!(!text.chars().any(unclean), "{text:?}");
    }
}

/// A character a model-visible block must not hold raw.
fn unclean(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n')
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{61c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
                | '\u{fffe}'
                | '\u{ffff}'
        )
}
