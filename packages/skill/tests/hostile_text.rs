//! Issue 24, item 9: C0 controls (NUL, ESC, BS, DEL), a bidi override
//! (RLO, U+202E), a zero-width space and a line separator (U+2028) in a
//! skill's name, description, body, folder and source label never reach
//! the catalog or the `<skill>` block raw: hidden characters are shown as
//! `\u{..}`, line separators end a line in the body and description and
//! become a space in one-line values, and the body keeps only tabs and
//! line feeds.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use bcode_prompt_config::{SkillsConfig, SkillsPromptConfig};
use bcode_skill::{CatalogOptions, SkillRegistry, Templates, format_catalog};
use bcode_skill_models::{SkillContextRequest, SkillId, SourceKind};
use support::{build, canonical, root, write_tree};

/// The folder holds a line separator and an ESC; `id` keeps the skill's id
/// valid. The front matter's escapes are YAML's (`\0`, `\e`, `\b`, `\x7f`,
/// `\u202e`, `\u200b`, `\u2028`); the body holds the raw characters.
const FOLDER: &str = "al\u{2028}pha\u{1b}";
const SKILL: &str = "---
id: alpha
name: \"Evil\\0Name\\e[31m\\b\\x7f\\u202eRLO\\u200bZW\\u2028LS\"
description: \"first\\nsecond\\u2028third\\0 \\e]0;title\\x07\\u202e\"
activation:
  keywords: [\"k\\u2028w\", \"z\\u200bw\"]
---
Body\0 with NUL, \x1b[2J ESC, \x08 BS, \x7f DEL, \u{202e} RLO, \u{200b} ZWSP,\u{2028} LS,\r\nCRLF end.
\ttab kept
";

/// A registry of the one hostile skill, under a source label holding a
/// line separator and a bidi override; and the canonical root.
fn registry() -> (tempfile::TempDir, SkillRegistry, String) {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[(&format!("{FOLDER}/SKILL.md"), SKILL)]);
    let registry = build(
        &[root(
            SourceKind::UserConfig,
            "user-config:\u{2028}sk\u{202e}ills",
            tmp.path(),
        )],
        &SkillsConfig::default(),
    );
    let base = canonical(tmp.path()).display().to_string();
    (tmp, registry, base)
}

/// Any character the model must not see raw: controls other than tab and
/// line feed, line and paragraph separators, bidi and zero-width ones.
fn forbidden(c: char) -> bool {
    (c.is_control() && c != '\t' && c != '\n')
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{61c}' | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}' | '\u{2060}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

const NAME: &str = "Evil\\u{0}Name\\u{1b}[31m\\u{8}\\u{7f}\\u{202e}RLO\\u{200b}ZW LS";

#[test]
fn the_catalog_entry_is_clean() {
    let (_tmp, registry, base) = registry();
    let prompt = SkillsPromptConfig {
        include_keywords: true,
        ..SkillsPromptConfig::default()
    };
    let catalog = format_catalog(
        registry.skills(),
        CatalogOptions {
            prompt: &prompt,
            user_skills_enabled: true,
        },
        &Templates::builtin(),
    )
    .unwrap();
    let expected = format!(
        "The following Bcode skills provide specialized instructions for specific tasks.
Use available Bcode filesystem/document tools to load a skill file when the task matches its description.
User skills are discovered from configured roots including ~/.config/bcode/skills when user skills are enabled.
When a skill file references a relative path, resolve it against the skill directory.

<available_skills>
  <skill>
    <id>alpha</id>
    <name>{NAME}</name>
    <description>first
second
third\\u{{0}} \\u{{1b}}]0;title\\u{{7}}\\u{{202e}}</description>
    <location>{base}/al pha\\u{{1b}}/SKILL.md</location>
    <source>user-config: sk\\u{{202e}}ills</source>
    <keywords>k w, z\\u{{200b}}w</keywords>
  </skill>
</available_skills>"
    );
    assert_eq!(catalog.text, expected);
    assert!(!catalog.text.chars().any(forbidden));
}

/// Bounded catalogs measure entries before writing them: the sizes stay
/// exact with cleaned values, at every limit.
#[test]
fn a_bounded_catalog_of_hostile_values_stays_within_its_limit() {
    let (_tmp, registry, _base) = registry();
    let whole = format_catalog(
        registry.skills(),
        CatalogOptions {
            prompt: &SkillsPromptConfig::default(),
            user_skills_enabled: true,
        },
        &Templates::builtin(),
    )
    .unwrap();
    for max in (0..whole.text.len() + 8).step_by(7) {
        let prompt = SkillsPromptConfig {
            max_bytes: Some(max),
            max_description_chars: Some(12),
            ..SkillsPromptConfig::default()
        };
        let catalog = format_catalog(
            registry.skills(),
            CatalogOptions {
                prompt: &prompt,
                user_skills_enabled: true,
            },
            &Templates::builtin(),
        )
        .unwrap();
        assert!(
            !catalog.text.chars().any(forbidden),
            "{max}: {:?}",
            catalog.text
        );
        if catalog.listed > 0 {
            assert!(catalog.text.len() <= max, "{max}: {}", catalog.text.len());
        }
    }
}

#[test]
fn the_skill_block_is_clean() {
    let (_tmp, registry, base) = registry();
    let request = SkillContextRequest {
        id: SkillId::parse("alpha").unwrap(),
        arguments: vec!["fix\u{2028}it\u{1b}".into()],
        raw_arguments: None,
        substitute_arguments: true,
        max_bytes: None,
        preview_max_chars: 2000,
    };
    let response = registry.context(&request, &Templates::builtin()).unwrap();
    let expected = format!(
        "<skill id=\"alpha\" name=\"{NAME}\" location=\"{base}/al pha\\u{{1b}}/SKILL.md\">
References are relative to {base}/al pha\\u{{1b}}.
Source label: user-config: sk\\u{{202e}}ills
Invocation arguments: fix it\\u{{1b}}

Body\\u{{0}} with NUL, \\u{{1b}}[2J ESC, \\u{{8}} BS, \\u{{7f}} DEL, \\u{{202e}} RLO, \\u{{200b}} ZWSP,
 LS,
CRLF end.
\ttab kept
</skill>"
    );
    assert_eq!(response.text, expected);
    assert_eq!(response.bytes, expected.len());
    assert!(!response.text.chars().any(forbidden));
}

/// Under every limit the block (cut body, or the marker alone) is clean.
#[test]
fn a_bounded_skill_block_is_clean_at_every_limit() {
    let (_tmp, registry, _base) = registry();
    for max in 0..700 {
        let request = SkillContextRequest {
            id: SkillId::parse("alpha").unwrap(),
            arguments: Vec::new(),
            raw_arguments: None,
            substitute_arguments: true,
            max_bytes: Some(max),
            preview_max_chars: 40,
        };
        let response = registry.context(&request, &Templates::builtin()).unwrap();
        assert!(
            !response.text.chars().any(forbidden),
            "{max}: {:?}",
            response.text
        );
        assert!(
            !response.preview.chars().any(forbidden),
            "{max}: {:?}",
            response.preview
        );
    }
}
