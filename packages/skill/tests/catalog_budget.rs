//! The catalog bounded by `skills.prompt.max_bytes`, shape by shape:
//! descriptions shortened evenly before any skill is left out, skills left
//! out by source precedence then id, the final line (count and roots), every
//! limit from 0 up carrying the marker and respecting the bound, the size
//! warning, and a 60,000-skill catalog inside a 32 KB budget.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use bcode_prompt_config::{CatalogMode, SkillsPromptConfig};
use bcode_skill::{
    Catalog, CatalogOptions, CatalogSizeWarning, CatalogWarning, MIN_DESCRIPTION_CHARS, Templates,
    format_catalog,
};
use bcode_skill_models::{
    SkillId, SkillLayout, SkillManifest, SkillSource, SkillSummary, SourceKind,
};
use proptest::prelude::*;

/// A source rooted at `/skills/<label>` (or provided from memory when
/// `root` is false).
fn source(kind: SourceKind, ordinal: usize, label: &str, root: bool) -> Arc<SkillSource> {
    Arc::new(SkillSource {
        kind,
        label: label.to_owned(),
        ordinal,
        root: root.then(|| PathBuf::from(format!("/skills/{label}"))),
        provider: (!root).then(|| label.to_owned()),
    })
}

fn skill(source: &Arc<SkillSource>, id: &str, description: &str) -> SkillSummary {
    let root = source
        .root
        .clone()
        .unwrap_or_else(|| PathBuf::from("/provided"));
    SkillSummary {
        manifest: SkillManifest {
            description: description.to_owned(),
            ..SkillManifest::new(SkillId::parse(id).unwrap())
        },
        source: Arc::clone(source),
        layout: SkillLayout::Folder,
        location: root.join(id).join("SKILL.md").into(),
        directory_override: None,
        body_offset: 0,
    }
}

fn format(skills: &[SkillSummary], prompt: &SkillsPromptConfig) -> Catalog {
    // Built once: most tests format hundreds of times.
    static TEMPLATES: OnceLock<Templates> = OnceLock::new();
    format_catalog(
        skills.iter(),
        CatalogOptions {
            prompt,
            user_skills_enabled: false,
        },
        TEMPLATES.get_or_init(Templates::builtin),
    )
    .unwrap()
}

fn bounded(max: usize) -> SkillsPromptConfig {
    SkillsPromptConfig {
        max_bytes: Some(max),
        ..SkillsPromptConfig::default()
    }
}

/// The ids listed, in order.
fn listed(text: &str) -> Vec<&str> {
    text.split("<id>")
        .skip(1)
        .map(|rest| &rest[..rest.find("</id>").unwrap()])
        .collect()
}

/// The descriptions listed, in order (unescaped text is plain here).
fn descriptions(text: &str) -> Vec<&str> {
    text.split("<description>")
        .skip(1)
        .map(|rest| &rest[..rest.find("</description>").unwrap()])
        .collect()
}

/// Eight skills of one user root: six long descriptions of different
/// lengths, two short ones.
fn eight() -> Vec<SkillSummary> {
    let user = source(SourceKind::UserConfig, 0, "user-config:skills", true);
    (0..8)
        .map(|i| {
            let description = if i < 6 {
                format!("Skill {i} {}", "does a careful thing well. ".repeat(4 + i))
            } else {
                format!("Short {i}.")
            };
            skill(&user, &format!("skill-{i}"), description.trim_end())
        })
        .collect()
}

#[test]
fn a_limit_the_catalog_fits_changes_nothing() {
    let skills = eight();
    let whole = format(&skills, &SkillsPromptConfig::default());
    let at_limit = format(&skills, &bounded(whole.text.len()));
    assert_eq!(at_limit, whole);
    assert_eq!(
        (whole.listed, whole.omitted, whole.truncation),
        (8, 0, None)
    );
}

#[test]
fn descriptions_are_shortened_evenly_before_any_skill_is_left_out() {
    let skills = eight();
    let whole = format(&skills, &SkillsPromptConfig::default()).text;
    let max = whole.len() - 300;
    let out = format(&skills, &bounded(max));
    assert!(out.text.len() <= max, "{} > {max}", out.text.len());
    assert_eq!((out.listed, out.omitted), (8, 0), "{}", out.text);
    let cap = out.description_chars.expect("descriptions were shortened");
    assert!(cap >= MIN_DESCRIPTION_CHARS);
    let listed = descriptions(&out.text);
    let mut shortened = 0;
    for (i, description) in listed.iter().enumerate() {
        let original = &skills[i].manifest.description;
        if original.chars().count() > cap {
            // One common length for every shortened one, marker included.
            assert_eq!(description.chars().count(), cap, "{description}");
            assert!(description.ends_with('…'));
            assert!(original.starts_with(description.trim_end_matches('…')));
            shortened += 1;
        } else {
            assert_eq!(description, original);
        }
    }
    assert_eq!(out.descriptions_shortened, shortened);
    assert!(shortened >= 2);
    // The longest common length that fits: one more character for each
    // shortened description would not.
    assert!(
        max - out.text.len() < shortened + 2,
        "{} unused",
        max - out.text.len()
    );
    assert!(out.text.ends_with(&format!(
        "  <!-- Descriptions shortened to {cap} characters: the catalog is limited to {max} bytes (skills.prompt.max_bytes). Each skill's file holds its full description. -->\n</available_skills>"
    )), "{}", out.text);
    let t = out.truncation.expect("reported as cut");
    assert_eq!(t.original_bytes, whole.len());
    assert!(t.omitted_bytes > 0);
}

/// Three sources in precedence order, each with skills `a`, `b`, `c`.
fn three_sources() -> (Vec<SkillSummary>, [Arc<SkillSource>; 3]) {
    let repo = source(SourceKind::RepoBcode, 0, "repo:.bcode/skills", true);
    let user = source(SourceKind::UserConfig, 0, "user-config:skills", true);
    let team = source(SourceKind::Config, 0, "config:team", true);
    let mut skills = Vec::new();
    for (prefix, source) in [("team", &team), ("repo", &repo), ("user", &user)] {
        for id in ["c", "a", "b"] {
            skills.push(skill(source, &format!("{prefix}-{id}"), "Short."));
        }
    }
    // The registry's order: by id.
    skills.sort_by(|a, b| a.manifest.id.as_str().cmp(b.manifest.id.as_str()));
    (skills, [repo, user, team])
}

#[test]
fn skills_are_left_out_by_source_precedence_then_id() {
    let (skills, _) = three_sources();
    let whole = format(&skills, &SkillsPromptConfig::default()).text;
    let entry = whole.len() / 9 - 40;
    let mut seen = Vec::new();
    for max in (0..whole.len()).step_by(7) {
        let out = format(&skills, &bounded(max));
        let ids = listed(&out.text);
        assert_eq!(ids.len(), out.listed);
        // The listed ones are the first of the ranking: repo, then user,
        // then the configured root; within one, by id.
        let ranking = [
            "repo-a", "repo-b", "repo-c", "user-a", "user-b", "user-c", "team-a", "team-b",
            "team-c",
        ];
        let mut expected: Vec<&str> = ranking[..out.listed].to_vec();
        expected.sort_unstable();
        assert_eq!(ids, expected, "at {max}:\n{}", out.text);
        seen.push(out.listed);
    }
    // Every count from none to all but two was reached on the way (leaving
    // one out costs a final line longer than the entry it saves).
    for count in 0..8 {
        assert!(
            seen.contains(&count),
            "{count} listed never seen; {seen:?} (entry ~{entry})"
        );
    }
}

#[test]
fn the_final_line_names_the_count_and_the_roots_of_what_was_left_out() {
    let (skills, _) = three_sources();
    let whole = format(&skills, &SkillsPromptConfig::default()).text;
    // Room for about five entries: the configured root's skills and one
    // user skill are left out, so only those two roots are named.
    let per_entry = (whole.len() - 500) / 9;
    let mut found = false;
    for max in (whole.len() - 5 * per_entry)..whole.len() {
        let out = format(&skills, &bounded(max));
        if out.omitted != 4 {
            continue;
        }
        found = true;
        assert!(
            out.text.ends_with(
                "  <!-- 4 more skills not listed: the catalog is limited to \
             MAX bytes (skills.prompt.max_bytes). Their SKILL.md files are under \
             /skills/user-config:skills, /skills/config:team; list them with your \
             filesystem tools to find one that matches the task. -->\n</available_skills>"
                    .replace("MAX", &max.to_string())
                    .as_str()
            ),
            "{}",
            out.text
        );
        break;
    }
    assert!(found);
    // One left out: singular. (Entries with long names, so that leaving one
    // out saves more than the line costs.)
    let skills: Vec<SkillSummary> = skills
        .into_iter()
        .map(|mut s| {
            s.manifest.name = format!("{} {}", s.manifest.id, "long name ".repeat(40));
            s
        })
        .collect();
    let whole = format(&skills, &SkillsPromptConfig::default()).text;
    let out = (0..whole.len())
        .rev()
        .map(|max| format(&skills, &bounded(max)))
        .find(|out| out.omitted > 0)
        .unwrap();
    assert_eq!(out.omitted, 1);
    assert!(
        out.text
            .contains("  <!-- 1 more skill not listed: the catalog is limited to")
            && out
                .text
                .contains("Its SKILL.md file is under /skills/config:team;"),
        "{}",
        out.text
    );
}

#[test]
fn provided_skills_left_out_are_named_by_their_provider() {
    let repo = source(SourceKind::RepoBcode, 0, "repo:.bcode/skills", true);
    let plugin = source(SourceKind::Bundled, 1, "plugin:tools", false);
    let skills = vec![
        skill(&repo, "a", "Short."),
        skill(&plugin, "b", "Short."),
        skill(&plugin, "c", "Short."),
    ];
    let out = format(&skills, &bounded(0));
    assert_eq!(
        out.text,
        "3 Bcode skills are available but not listed: the skill catalog is limited to 0 bytes \
         (skills.prompt.max_bytes). Their SKILL.md files are under /skills/repo:.bcode/skills, \
         or provided by plugin:tools; list those folders with your filesystem tools and load a \
         skill file when the task matches its description."
    );
}

#[test]
fn a_limit_smaller_than_the_frame_leaves_the_line_alone() {
    let skills = eight();
    let out = format(&skills, &bounded(500));
    // The marker wins over content: the line, not an empty catalog.
    assert_eq!(
        out.text,
        "8 Bcode skills are available but not listed: the skill catalog is limited to 500 bytes \
         (skills.prompt.max_bytes). Their SKILL.md files are under /skills/user-config:skills; \
         list those folders with your filesystem tools and load a skill file when the task \
         matches its description."
    );
    assert_eq!((out.listed, out.omitted), (0, 8));
    assert!(out.truncation.is_some());
    assert_eq!(
        out.warnings(),
        [CatalogWarning::NoRoom {
            max_bytes: 500,
            omitted: 8
        }]
    );
    assert!(format(&eight(), &bounded(2000)).warnings().is_empty());
}

/// For every limit from 0 to the whole catalog: uncut, or cut with the
/// marker and within the limit (or the line alone, over a limit smaller
/// than the line).
fn check_every_limit(skills: &[SkillSummary], prompt: &SkillsPromptConfig) {
    let whole = format(skills, prompt);
    for max in 0..=whole.text.len() + 1 {
        let out = format(
            skills,
            &SkillsPromptConfig {
                max_bytes: Some(max),
                ..prompt.clone()
            },
        );
        if max >= whole.text.len() {
            assert_eq!(out.text, whole.text);
            continue;
        }
        assert!(out.truncation.is_some(), "at {max}");
        assert_eq!(out.listed + out.omitted, whole.listed);
        let standalone = out.text.contains("available but not listed");
        assert!(
            standalone
                || out.text.contains("more skill")
                || out.text.contains("Descriptions shortened"),
            "no marker at {max}:\n{}",
            out.text
        );
        if standalone {
            assert_eq!((out.listed, out.omitted), (0, whole.listed));
            assert!(!out.text.contains("<available_skills>"));
        } else {
            assert!(out.text.len() <= max, "{} > {max}", out.text.len());
            assert!(out.text.ends_with("</available_skills>"));
        }
    }
}

#[test]
fn every_limit_from_zero_carries_the_marker_and_respects_the_bound() {
    // Small catalogs (each limit is one format): long and short
    // descriptions; names only over three sources; a description limit and
    // keywords on top.
    check_every_limit(&eight()[3..7], &SkillsPromptConfig::default());
    check_every_limit(
        &three_sources().0[..6],
        &SkillsPromptConfig {
            catalog: CatalogMode::NamesOnly,
            ..SkillsPromptConfig::default()
        },
    );
    check_every_limit(
        &eight()[4..8],
        &SkillsPromptConfig {
            max_description_chars: Some(80),
            include_keywords: true,
            ..SkillsPromptConfig::default()
        },
    );
}

#[test]
fn a_description_limit_below_the_marker_leaves_the_marker() {
    let out = format(
        &eight(),
        &SkillsPromptConfig {
            max_description_chars: Some(0),
            ..SkillsPromptConfig::default()
        },
    );
    assert!(
        descriptions(&out.text).iter().all(|d| *d == "…"),
        "{}",
        out.text
    );
    assert_eq!(out.descriptions_cut, 8);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any descriptions (escapes, combining marks, emoji, CRLF) and any
    /// limit: within the bound unless the line stands alone, marked when cut.
    #[test]
    fn any_catalog_respects_its_bound(
        descriptions in proptest::collection::vec("([a-z <>&\"' .]|\r\n|é|e\u{301}|👍🏽){1,200}", 1..12),
        max in 0usize..4000,
    ) {
        let repo = source(SourceKind::RepoBcode, 0, "repo:.bcode/skills", true);
        let user = source(SourceKind::UserConfig, 0, "user-config:skills", true);
        let skills: Vec<SkillSummary> = descriptions
            .iter()
            .enumerate()
            .map(|(i, d)| skill(if i % 2 == 0 { &repo } else { &user }, &format!("s-{i:02}"), d))
            .collect();
        let whole = format(&skills, &SkillsPromptConfig::default());
        let out = format(&skills, &bounded(max));
        if whole.text.len() <= max {
            prop_assert_eq!(&out.text, &whole.text);
        } else if out.text.contains("available but not listed") {
            prop_assert_eq!(out.listed, 0);
        } else {
            prop_assert!(out.text.len() <= max);
            prop_assert!(out.text.contains("<!-- "));
        }
    }
}

#[test]
fn a_budgeted_catalog_reads_well() {
    let (mut skills, [repo, user, _]) = three_sources();
    skills.push(skill(
        &repo,
        "release-notes",
        "Draft release notes from the merged pull requests since the last tag: group them by area, \
         call out breaking changes & migrations, and link every <PR>. Use when preparing a release, \
         when asked what changed since a version, or when a changelog entry is missing or stale.",
    ));
    skills.push(skill(
        &user,
        "rust-debugging",
        "Diagnose Rust compiler, clippy, test, and runtime failures; read the full error first, \
         then reproduce it with the smallest command, and fix the cause rather than the symptom \
         (no new allow attributes, no skipped tests).",
    ));
    skills.sort_by(|a, b| a.manifest.id.as_str().cmp(b.manifest.id.as_str()));
    // Four limits: descriptions shortened only; skills left out and the
    // remaining descriptions shortened; the line alone.
    let whole = format(&skills, &SkillsPromptConfig::default()).text.len();
    let mut shown = String::new();
    for max in [whole - 100, 2400, 1400, 300] {
        let out = format(&skills, &bounded(max));
        assert!(out.text.len() <= max || out.listed == 0);
        shown.push_str(&format!(
            "===== max_bytes = {max}: {} bytes =====\n{}\n",
            out.text.len(),
            out.text
        ));
    }
    insta::assert_snapshot!(shown);
}

#[test]
fn sixty_thousand_skills_fit_a_32_kib_budget_usefully() {
    let sources = [
        source(SourceKind::RepoBcode, 0, "repo:.bcode/skills", true),
        source(SourceKind::UserConfig, 0, "user-config:skills", true),
        source(SourceKind::Config, 0, "config:registry", true),
    ];
    let skills: Vec<SkillSummary> = (0..60_000)
        .map(|i| {
            skill(
                &sources[if i < 20 {
                    0
                } else if i < 200 {
                    1
                } else {
                    2
                }],
                &format!("skill-{i:05}"),
                &format!(
                    "Use when the task needs skill {i}: {}",
                    "it explains the steps. ".repeat(8)
                ),
            )
        })
        .collect();
    let max = 32 * 1024;
    // How long this takes is the catalog bench's to measure
    // (`catalog/format_budget_32k`, per skill from 100 to 10,000).
    let out = format(&skills, &bounded(max));
    assert!(out.text.len() <= max);
    // Every repo skill, user skills after them, and the line saying where
    // the other tens of thousands are.
    assert!(out.listed > 60, "{} listed", out.listed);
    assert_eq!(out.listed + out.omitted, 60_000);
    let ids = listed(&out.text);
    assert!(ids.contains(&"skill-00000") && ids.contains(&"skill-00019"));
    assert!(
        out.text
            .contains(&format!("{} more skills not listed", out.omitted))
    );
    assert!(
        out.text
            .contains("under /skills/user-config:skills, /skills/config:registry;")
    );
    assert!(
        descriptions(&out.text)
            .iter()
            .all(|d| d.chars().count() >= MIN_DESCRIPTION_CHARS)
    );
}

#[test]
fn the_size_warning_names_the_keys_and_follows_the_settings() {
    let prompt = SkillsPromptConfig::default();
    // 200,000 tokens * 25% = 50,000 tokens = 200,000 bytes.
    assert_eq!(CatalogSizeWarning::check(200_000, &prompt), None);
    let warning = CatalogSizeWarning::check(200_001, &prompt).expect("over the share");
    assert_eq!(
        (warning.estimated_tokens, warning.threshold_tokens),
        (50_001, 50_000)
    );
    let text = warning.to_string();
    for key in [
        "skills.prompt.max_bytes",
        "skills.prompt.max_description_chars",
        "skills.prompt.warn_percent",
        "skills.prompt.context_window_tokens",
        "skills.routing.enabled = true",
        "skills.prompt.catalog = \"names_only\"",
    ] {
        assert!(text.contains(key), "{text}");
    }
    let off = SkillsPromptConfig {
        warn_percent: 0,
        ..SkillsPromptConfig::default()
    };
    assert_eq!(CatalogSizeWarning::check(usize::MAX, &off), None);

    // A catalog is checked as formatted: over a tiny window it warns,
    // bounded under the share it does not.
    let small_window = SkillsPromptConfig {
        context_window_tokens: 1_000,
        warn_percent: 10,
        ..SkillsPromptConfig::default()
    };
    let out = format(&eight(), &small_window);
    assert!(out.text.len() > 400);
    assert_eq!(
        out.size_warning,
        CatalogSizeWarning::check(out.text.len(), &small_window)
    );
    assert!(out.size_warning.is_some());
    let bounded_small = SkillsPromptConfig {
        max_bytes: Some(400),
        ..small_window
    };
    assert_eq!(format(&eight(), &bounded_small).size_warning, None);
}

/// `write_catalog` writes the very bytes `format_catalog` returns, with the
/// same accounting, whether it streams them (no `max_bytes`: many pieces at
/// 3,000 skills) or formats a bounded catalog first; the streamed one keeps
/// no text.
#[test]
fn a_written_catalog_is_the_formatted_one_in_pieces() {
    let repo = source(SourceKind::RepoBcode, 0, "repo", true);
    let skills: Vec<SkillSummary> = (0..3000)
        .map(|n| {
            skill(
                &repo,
                &format!("s{n:04}"),
                &format!("Skill {n} does é & <things>."),
            )
        })
        .collect();
    let templates = Templates::builtin();
    for prompt in [
        SkillsPromptConfig::default(),
        bounded(40_000),
        SkillsPromptConfig {
            catalog: CatalogMode::NamesOnly,
            ..SkillsPromptConfig::default()
        },
        SkillsPromptConfig {
            catalog: CatalogMode::Off,
            ..SkillsPromptConfig::default()
        },
    ] {
        let options = CatalogOptions {
            prompt: &prompt,
            user_skills_enabled: false,
        };
        let whole = format_catalog(skills.iter(), options, &templates).unwrap();
        let mut pieces = Pieces::default();
        let written =
            bcode_skill::write_catalog(skills.iter(), options, &templates, &mut pieces).unwrap();
        assert_eq!(String::from_utf8(pieces.bytes).unwrap(), whole.text);
        if prompt.max_bytes.is_none() && prompt.catalog == CatalogMode::Summary {
            assert!(pieces.calls > 3, "{} pieces", pieces.calls);
            assert!(written.text.is_empty());
        }
        assert_eq!(
            (
                written.listed,
                written.omitted,
                written.descriptions_cut,
                &written.sources
            ),
            (
                whole.listed,
                whole.omitted,
                whole.descriptions_cut,
                &whole.sources
            )
        );
        assert_eq!(written.size_warning, whole.size_warning);
    }
}

#[derive(Default)]
struct Pieces {
    bytes: Vec<u8>,
    calls: usize,
}

impl std::io::Write for Pieces {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.calls += 1;
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
