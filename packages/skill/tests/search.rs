//! The relevance index over real registries: built from discovery (bodies
//! and file names read as the registry reads them), refreshed after a
//! reload by indexing only what changed, run on the shared real-world
//! corpus, and bounded on hostile input (huge bodies, hundreds of thousands of distinct
//! words, a megabyte-long query) in work linear in what the limits allow.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use std::path::Path;

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{Discovery, SkillRegistry};
use bcode_skill::{Normalizer, SearchField, SkillIndex, SkillText, index_registry, refresh_index};
use bcode_skill_models::{SkillId, SourceKind};
use support::{age, past_racy_window, quick_options, root, write_tree};

fn ids(index: &SkillIndex, query: &str) -> Vec<String> {
    index
        .search(query, 10)
        .into_iter()
        .map(|hit| hit.id.to_string())
        .collect()
}

fn skills_root(dir: &Path) -> Vec<bcode_skill::SourceRoot> {
    vec![root(SourceKind::RepoAgents, "repo:.agents/skills", dir)]
}

const TREE: &[(&str, &str)] = &[
    (
        "storybook/SKILL.md",
        "---\nname: storybook\ndescription: Component stories.\n---\nWrite CSF3 stories.\n",
    ),
    (
        "pdf-forms/SKILL.md",
        "---\nname: pdf-forms\ndescription: Fill PDF forms.\n---\nRun the script.\n",
    ),
    ("pdf-forms/scripts/fill_acroform.py", "print()\n"),
    ("pdf-forms/references/FORMS.md", "# Forms\n"),
    (
        "flat.md",
        "---\ndescription: A flat skill about kubernetes manifests.\n---\nhelm charts too\n",
    ),
];

#[test]
fn the_index_reads_bodies_and_file_names() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), TREE);
    let registry =
        Discovery::new(quick_options(&SkillsConfig::default())).build(&skills_root(dir.path()));
    let index = index_registry(&registry, None);
    assert_eq!(index.len(), 3);
    // `acroform` is only in a script's name; `helm` only in a flat body;
    // `csf3` only in a folder skill's body.
    assert_eq!(ids(&index, "acroform"), ["pdf-forms"]);
    assert_eq!(ids(&index, "helm"), ["flat"]);
    assert_eq!(ids(&index, "csf3"), ["storybook"]);
    let hit = &index.search("fill acroform forms", 1)[0];
    assert_eq!(hit.id.as_str(), "pdf-forms");
    assert_eq!(hit.matched[1].fields, [SearchField::Files]);
    assert_eq!(
        bcode_skill::other_files(registry.get("pdf-forms").unwrap()),
        ["references/FORMS.md", "scripts/fill_acroform.py"]
    );
}

/// A discovery over `dir` that keeps its last build, as a session's does.
fn rebuild(discovery: &mut Discovery, dir: &Path) -> SkillRegistry {
    discovery.build(&skills_root(dir))
}

#[test]
fn a_reload_indexes_again_only_the_skill_that_changed() {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                format!("skill-{i:02}/SKILL.md"),
                format!("---\nname: skill-{i:02}\ndescription: Skill number {i}.\n---\nbody {i}\n"),
            )
        })
        .collect();
    files.push(("skill-07/notes.txt".into(), "x".into()));
    let tree: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write_tree(dir.path(), &tree);
    age(dir.path());
    past_racy_window();
    let mut discovery = Discovery::new(quick_options(&SkillsConfig::default()));
    let before = rebuild(&mut discovery, dir.path());
    let mut index = index_registry(&before, None);
    // One skill's body changes, one is removed, one is added.
    write_tree(
        dir.path(),
        &[
            (
                "skill-07/SKILL.md",
                "---\nname: skill-07\ndescription: Skill number 7.\n---\nnow about terraform\n",
            ),
            (
                "skill-99/SKILL.md",
                "---\nname: skill-99\ndescription: New.\n---\nterraform modules\n",
            ),
        ],
    );
    std::fs::remove_dir_all(dir.path().join("skill-12")).unwrap();
    past_racy_window();
    let after = rebuild(&mut discovery, dir.path());
    assert_eq!(refresh_index(&mut index, &before, &after), 2);
    let fresh = index_registry(&after, None);
    for query in ["terraform", "skill number", "body 12", "notes"] {
        assert_eq!(index.search(query, 10), fresh.search(query, 10), "{query}");
    }
    // Both bodies name terraform once; skill-07's is the shorter.
    assert_eq!(ids(&index, "terraform"), ["skill-07", "skill-99"]);
    assert!(!index.contains(&SkillId::parse("skill-12").unwrap()));
}

#[test]
fn the_real_world_corpus_is_indexed_and_routes_its_own_descriptions() {
    let corpus =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/anthropic-skills");
    if !corpus.is_dir() && std::env::var_os("BCODE_REQUIRE_SHARED").is_none() {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("skipped: {} is missing\n", corpus.display()).as_bytes(),
        );
        return;
    }
    let registry = Discovery::new(quick_options(&SkillsConfig::default())).build(&[root(
        SourceKind::RepoBcode,
        "repo:.bcode/skills",
        &corpus,
    )]);
    let index = index_registry(&registry, None);
    assert_eq!(index.len(), registry.len());
    assert!(registry.len() >= 10, "{}", registry.len());
    // Tasks in other words than the skills' own names.
    for (task, expected) in [
        (
            "make an animated GIF for our team chat",
            "slack-gif-creator",
        ),
        (
            "test my local web app in a browser with playwright",
            "webapp-testing",
        ),
        ("build an MCP server for an external API", "mcp-builder"),
        (
            "run evals to benchmark how well my skill triggers",
            "skill-creator",
        ),
    ] {
        assert_eq!(ids(&index, task)[0], expected, "{task}");
    }
}

#[test]
fn many_distinct_words_and_a_huge_query_cost_what_their_text_costs() {
    // One skill whose body is 200,000 distinct words (1.6 MB; the release
    // bench `route_scale` runs a million), far
    // past what discovery reads of a file: the index takes it in one
    // linear pass.
    let body: String = (0..200_000u32).map(|i| format!("w{i:x}q ")).collect();
    let mut index = SkillIndex::new();
    let mut normalizer = Normalizer::new();
    let text = SkillText {
        fields: [
            "many".into(),
            "Many words".into(),
            String::new(),
            String::new(),
            body,
        ],
    };
    index.insert(SkillId::parse("many").unwrap(), &text, &mut normalizer);
    index.insert(
        SkillId::parse("few").unwrap(),
        &SkillText {
            fields: [
                "few".into(),
                "Few words".into(),
                String::new(),
                String::new(),
                "w5q".into(),
            ],
        },
        &mut normalizer,
    );
    // A megabyte-long query of words the index has: cut to the query cap.
    let query: String = (0..150_000u32).map(|i| format!("w{i:x}q ")).collect();
    assert!(query.len() > 1_000_000);
    let hits = index.search(&query, 10);
    assert_eq!(hits[0].id.as_str(), "many");
    assert_eq!(hits[0].matched.len(), bcode_skill::MAX_QUERY_TERMS);
    assert_eq!(ids(&index, "w5q"), ["few", "many"]);
}

#[test]
fn a_body_past_the_file_limit_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let big = format!(
        "---\ndescription: Huge.\n---\n{}",
        "huge body words ".repeat(2_000_000)
    );
    write_tree(dir.path(), &[("huge/SKILL.md", &big), TREE[0]]);
    let registry =
        Discovery::new(quick_options(&SkillsConfig::default())).build(&skills_root(dir.path()));
    // Over `skills.max_skill_file_bytes`: not a skill, so not indexed.
    let index = index_registry(&registry, None);
    assert_eq!(
        index.ids().map(|i| i.to_string()).collect::<Vec<_>>(),
        ["storybook"]
    );
    assert!(index.search("huge body", 10).is_empty());
}
