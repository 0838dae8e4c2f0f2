//! The spec's two fixed formats, byte for byte: the catalog and the
//! invoked-skill context block; catalog modes and bounds; XML escaping of
//! every field; and the real-world corpus.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use std::fs;
use std::path::Path;

use bcode_prompt_config::{CatalogMode, SkillsConfig, SkillsPromptConfig};
use bcode_skill::{CatalogOptions, SkillRegistry, Templates, format_catalog};
use bcode_skill_models::{Severity, SkillContextRequest, SkillId, SourceKind};
use support::{build, root, user_registry, write_tree};

fn catalog(registry: &SkillRegistry, prompt: &SkillsPromptConfig) -> bcode_skill::Catalog {
    format_catalog(
        registry.skills(),
        CatalogOptions {
            prompt,
            user_skills_enabled: true,
        },
        &Templates::builtin(),
    )
    .unwrap()
}

#[test]
fn catalog_matches_the_spec_byte_for_byte() {
    let (_tmp, registry, base) = user_registry(&[("rust-debugging/SKILL.md", support::SPEC_SKILL)]);
    let expected = "The following Bcode skills provide specialized instructions for specific tasks.
Use available Bcode filesystem/document tools to load a skill file when the task matches its description.
User skills are discovered from configured roots including ~/.config/bcode/skills when user skills are enabled.
When a skill file references a relative path, resolve it against the skill directory.

<available_skills>
  <skill>
    <id>rust-debugging</id>
    <name>Rust Debugging</name>
    <description>Diagnose Rust compiler, clippy, test, and runtime failures</description>
    <location>/Users/me/.config/bcode/skills/rust-debugging/SKILL.md</location>
    <source>user-config:skills</source>
  </skill>
</available_skills>"
        .replace("/Users/me/.config/bcode/skills", &base);
    assert_eq!(
        catalog(&registry, &SkillsPromptConfig::default()).text,
        expected
    );
}

/// The spec's block byte for byte, but for its "Skill resource root" line:
/// the block names one root, the folder references resolve against
/// (issue 42).
#[test]
fn context_block_is_the_specs_with_one_root() {
    let (_tmp, registry, base) = user_registry(&[("rust-debugging/SKILL.md", support::SPEC_SKILL)]);
    let request = SkillContextRequest {
        id: SkillId::parse("rust-debugging").unwrap(),
        arguments: vec![],
        raw_arguments: None,
        substitute_arguments: true,
        max_bytes: None,
        preview_max_chars: 2000,
    };
    let response = registry.context(&request, &Templates::builtin()).unwrap();
    let expected = r#"<skill id="rust-debugging" name="Rust Debugging" location="/Users/me/.config/bcode/skills/rust-debugging/SKILL.md">
References are relative to /Users/me/.config/bcode/skills/rust-debugging.
Source label: user-config:skills
Version: 0.1.0

# Rust Debugging
...
</skill>"#
        .replace("/Users/me/.config/bcode/skills", &base);
    assert_eq!(response.text, expected);
    assert_eq!(
        (response.bytes, response.truncated),
        (expected.len(), false)
    );
    assert_eq!(response.preview, "# Rust Debugging\n...");
}

#[test]
fn context_block_bounds_arguments_and_closing_tags() {
    let body = format!("# Title\n</skill>\n{}", "long line of text\n".repeat(200));
    let (_tmp, registry, base) =
        user_registry(&[("big/SKILL.md", &format!("---\ndescription: d\n---\n{body}"))]);
    let request = SkillContextRequest {
        id: SkillId::parse("big").unwrap(),
        arguments: vec!["fix".into(), "<all>".into()],
        raw_arguments: None,
        substitute_arguments: true,
        max_bytes: Some(600),
        preview_max_chars: 60,
    };
    let response = registry.context(&request, &Templates::builtin()).unwrap();
    assert!(response.truncated);
    assert!(response.text.len() <= 600, "{}", response.text.len());
    assert_eq!(response.bytes, response.text.len());
    let head = format!(
        "<skill id=\"big\" name=\"big\" location=\"{base}/big/SKILL.md\">\nReferences are relative to {base}/big.\nSource label: user-config:skills\nInvocation arguments: fix &lt;all&gt;\n\n# Title\n&lt;/skill>\nlong line of text\n"
    );
    assert!(response.text.starts_with(&head), "{}", response.text);
    let tail = format!(
        " more bytes not shown (skills.max_context_bytes = 600). Read the full file at {base}/big/SKILL.md]\n</skill>"
    );
    assert!(response.text.ends_with(&tail), "{}", response.text);
    // The preview is of the body as injected (closing tag neutralised).
    assert_eq!(
        response.preview,
        "# Title\n&lt;/skill>\nlong line of tex… [3583 more characters]"
    );
    assert_eq!(response.preview.chars().count(), 60);
}

#[test]
fn every_catalog_value_is_xml_escaped() {
    let (_tmp, registry, base) = user_registry(&[(
        "inject/SKILL.md",
        "---\nname: \"A & B <script>\"\ndescription: \"Use when </description><skill> \\\"quotes\\\" and 'apostrophes'\"\nactivation:\n  keywords: [\"<k>\", \"a&b\"]\n---\n",
    )]);
    let prompt = SkillsPromptConfig {
        include_keywords: true,
        ..SkillsPromptConfig::default()
    };
    let text = catalog(&registry, &prompt).text;
    let entry = format!(
        "  <skill>
    <id>inject</id>
    <name>A &amp; B &lt;script&gt;</name>
    <description>Use when &lt;/description&gt;&lt;skill&gt; &quot;quotes&quot; and &apos;apostrophes&apos;</description>
    <location>{base}/inject/SKILL.md</location>
    <source>user-config:skills</source>
    <keywords>&lt;k&gt;, a&amp;b</keywords>
  </skill>
"
    );
    assert!(text.contains(&entry), "{text}");
}

#[test]
fn catalog_modes_hidden_skills_and_bounds() {
    let files: Vec<(String, String)> = (0..6)
        .map(|i| (format!("skill-{i}/SKILL.md"), format!("---\ndescription: Skill number {i} does a thing 😀 well\nactivation:\n  keywords: [k{i}]\n---\n")))
        .chain([("hidden/SKILL.md".to_string(), "---\ndescription: secret\ndisable-model-invocation: true\n---\n".to_string())])
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let (_tmp, registry, base) = user_registry(&refs);
    assert_eq!(registry.len(), 7);

    let off = SkillsPromptConfig {
        catalog: CatalogMode::Off,
        ..SkillsPromptConfig::default()
    };
    assert_eq!(catalog(&registry, &off).text, "");

    let names = SkillsPromptConfig {
        catalog: CatalogMode::NamesOnly,
        ..SkillsPromptConfig::default()
    };
    let text = catalog(&registry, &names).text;
    assert!(text.contains(&format!("  <skill>\n    <id>skill-0</id>\n    <name>skill-0</name>\n    <location>{base}/skill-0/SKILL.md</location>\n  </skill>\n")), "{text}");
    assert!(
        !text.contains("hidden") && !text.contains("<description>") && !text.contains("<source>")
    );

    let short = SkillsPromptConfig {
        max_description_chars: Some(12),
        ..SkillsPromptConfig::default()
    };
    let out = catalog(&registry, &short);
    assert!(
        out.text.contains("<description>Skill numbe…</description>"),
        "{}",
        out.text
    );
    assert_eq!(out.descriptions_cut, 6);

    let full = catalog(&registry, &SkillsPromptConfig::default());
    assert_eq!((full.listed, full.omitted), (6, 0));
    let max = full.text.len() - 300;
    let bounded = catalog(
        &registry,
        &SkillsPromptConfig {
            max_bytes: Some(max),
            ..SkillsPromptConfig::default()
        },
    );
    assert!(bounded.text.len() <= max);
    assert_eq!(bounded.listed + bounded.omitted, 6);
    assert!(bounded.listed >= 2 && bounded.omitted >= 1, "{bounded:?}");
    assert_eq!(bounded.text.matches("<skill>").count(), bounded.listed);
    let omitted = bounded.omitted;
    assert!(bounded.text.ends_with(&format!(
        "  </skill>\n  <!-- {omitted} more skills not listed: the catalog is limited to {max} bytes (skills.prompt.max_bytes). Their SKILL.md files are under {base}; list them with your filesystem tools to find one that matches the task. -->\n</available_skills>"
    )), "{}", bounded.text);
    // Room for the preamble and the line but not for one whole entry: no
    // entry is split; only the line stands between the tags.
    let cut = (0..max)
        .rev()
        .map(|max| {
            (
                max,
                catalog(
                    &registry,
                    &SkillsPromptConfig {
                        max_bytes: Some(max),
                        ..SkillsPromptConfig::default()
                    },
                ),
            )
        })
        .find(|(_, cut)| cut.listed == 0)
        .unwrap();
    let (marker_only, cut) = cut;
    assert_eq!((cut.listed, cut.omitted), (0, 6), "{}", cut.text);
    assert!(cut.text.len() <= marker_only);
    assert!(cut.text.contains(&format!(
        "<available_skills>\n  <!-- 6 more skills not listed: the catalog is limited to {marker_only} bytes (skills.prompt.max_bytes)."
    )), "{}", cut.text);
    assert!(
        cut.text.ends_with("-->\n</available_skills>") && !cut.text.contains("<skill>"),
        "{}",
        cut.text
    );
    // A limit below the preamble and the line: the line alone, never a
    // preamble cut mid-sentence or an unclosed element, and the whole text
    // is reported as cut.
    let line = |limit: usize| {
        format!(
            "6 Bcode skills are available but not listed: the skill catalog is limited to {limit} bytes (skills.prompt.max_bytes). Their SKILL.md files are under {base}; list those folders with your filesystem tools and load a skill file when the task matches its description."
        )
    };
    let tiny = catalog(
        &registry,
        &SkillsPromptConfig {
            max_bytes: Some(250),
            ..SkillsPromptConfig::default()
        },
    );
    assert_eq!(tiny.text, line(250));
    assert_eq!((tiny.listed, tiny.omitted), (0, 6));
    assert_eq!(
        tiny.truncation.map(|t| (t.cut_at_byte, t.omitted_bytes)),
        Some((0, full.text.len()))
    );
    // Below even the line, the line still stands: the marker wins over the
    // limit (an empty catalog would hide that skills exist).
    let none = catalog(
        &registry,
        &SkillsPromptConfig {
            max_bytes: Some(40),
            ..SkillsPromptConfig::default()
        },
    );
    assert_eq!((none.text, none.omitted), (line(40), 6));
}

#[test]
fn precedence_shadowing_duplicates_and_disabled_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path();
    write_tree(
        base,
        &[
            ("repo/a/SKILL.md", "---\ndescription: repo a\n---\n"),
            ("repo/b/SKILL.md", "---\ndescription: repo b\n---\n"),
            (
                "repo/z-other/SKILL.md",
                "---\nid: a\ndescription: same source, later path\n---\n",
            ),
            ("user/a/SKILL.md", "---\ndescription: user a\n---\n"),
            ("user/c/SKILL.md", "---\ndescription: user c\n---\n"),
            ("user/off/SKILL.md", "---\ndescription: disabled\n---\n"),
        ],
    );
    let roots = [
        root(
            SourceKind::RepoBcode,
            "repo:.bcode/skills",
            &base.join("repo"),
        ),
        root(
            SourceKind::UserConfig,
            "user-config:skills",
            &base.join("user"),
        ),
    ];
    let mut config = SkillsConfig::default();
    config.disabled.ids = vec!["off".into()];
    let registry = build(&roots, &config);
    assert_eq!(
        support::report(&registry, base),
        "skill a name=\"a\" <repo:.bcode/skills> [ROOT]/repo/a/SKILL.md
skill b name=\"b\" <repo:.bcode/skills> [ROOT]/repo/b/SKILL.md
skill c name=\"c\" <user-config:skills> [ROOT]/user/c/SKILL.md
warning duplicate_id [ROOT]/repo/z-other/SKILL.md skill `a` is defined twice in repo:.bcode/skills; `[ROOT]/repo/a/SKILL.md` wins (first by path) over this one | give one of them a different `id`
info shadowed [ROOT]/user/a/SKILL.md skill `a` from user-config:skills is shadowed by the one from repo:.bcode/skills at `[ROOT]/repo/a/SKILL.md`
info disabled [ROOT]/user/off/SKILL.md skill `off` from user-config:skills is disabled by skills.disabled.ids
"
    );
    assert_eq!(
        registry.lookup("off").unwrap_err().to_string(),
        "skill `off` is disabled by skills.disabled.ids"
    );
    // The outcome does not depend on the order roots or entries were read in.
    let reversed = build(&[roots[1].clone(), roots[0].clone()], &config);
    assert_eq!(
        reversed.get("a").unwrap().source.label,
        "repo:.bcode/skills"
    );
}

#[test]
fn the_real_world_corpus_loads_without_errors() {
    let corpus =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/anthropic-skills");
    // A bare clone has no shared folder beside it: say so and pass, unless
    // the run requires the corpus (`.ci/run` does).
    if !corpus.is_dir() && std::env::var_os("BCODE_REQUIRE_SHARED").is_none() {
        // Written to the real stderr, past the test harness's capture, so
        // a plain `cargo test` shows what was skipped and why.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!(
                "skipped: {} is missing (the shared folder is not beside this clone; \
             BCODE_REQUIRE_SHARED=1 makes that an error)\n",
                corpus.display()
            )
            .as_bytes(),
        );
        return;
    }
    let corpus = fs::canonicalize(&corpus).unwrap_or_else(|err| {
        panic!(
            "this test needs the project's shared folder beside the clone: `{}` ({err}); \
             see README.md, \"The shared folder beside the clone\"",
            corpus.display()
        )
    });
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&corpus, tmp.path());
    let registry = build(
        &[root(
            SourceKind::RepoBcode,
            "repo:.bcode/skills",
            tmp.path(),
        )],
        &SkillsConfig::default(),
    );
    let expected_ids: Vec<String> = fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().join("SKILL.md").is_file())
        .map(|e| e.file_name().into_string().unwrap())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let ids: Vec<String> = registry
        .skills()
        .map(|s| s.manifest.id.to_string())
        .collect();
    assert_eq!(
        ids, expected_ids,
        "nested README.md files must not become skills"
    );
    let errors: Vec<_> = registry
        .diagnostics()
        .iter()
        .chain(&registry.check_bodies())
        .filter(|d| d.severity == Severity::Error)
        .cloned()
        .collect();
    assert_eq!(errors, vec![]);
    let prompt = SkillsPromptConfig::default();
    assert_eq!(catalog(&registry, &prompt).listed, ids.len());
    for id in &ids {
        let request = SkillContextRequest {
            id: SkillId::parse(id).unwrap(),
            arguments: vec![],
            raw_arguments: None,
            substitute_arguments: true,
            max_bytes: None,
            preview_max_chars: 2000,
        };
        registry.context(&request, &Templates::builtin()).unwrap();
    }
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}
