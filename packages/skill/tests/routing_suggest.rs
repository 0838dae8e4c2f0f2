//! Suggestion and auto-activation from the relevance index (issue 39):
//! skills that have no Bcode field (only `name`, `description` and a body,
//! as in a monorepo's `.agents/skills`) are suggested for the tasks they
//! describe; a body mention or a prompt of chat is not enough; `on`
//! activates only a clear winner; every suggestion event records the
//! index's score and matched words; after a registry change the index
//! follows the last one.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use std::fs;

use bcode_prompt_config::{AutoActivate, SkillsConfig};
use bcode_skill::{LiveRegistry, SkillRegistry, SkillSession, SkillSessionOptions, Templates};
use bcode_skill::{PromptOutcome, Suggestion};
use bcode_skill_models::{Figure, RelevanceMatch, RelevanceTerm, SkillEvent, SourceKind};
use support::{age, build, past_racy_window, quick_options, root, write_tree};

const LABEL: &str = "repo:.agents/skills";

/// A monorepo's `.agents/skills`: only `name`, `description` and a body,
/// except `product-analytics`, which follows the portability lint's hint
/// (keywords under `metadata`), and `release-notes`, kept from the model.
const TREE: &[(&str, &str)] = &[
    (
        "storybook/SKILL.md",
        "---\nname: storybook\ndescription: Use when writing or reviewing Storybook stories (`.stories.tsx`) for React components.\n---\n\n# Storybook stories\n\nRead the shared conventions first. Give every story a title and args;\nkeep one file per component.\n",
    ),
    (
        "react-components/SKILL.md",
        "---\nname: react-components\ndescription: Guidelines for writing React components. Use when creating a new component.\n---\n\nProps are typed; state stays local; effects are a last resort.\nStories live beside the component.\n",
    ),
    (
        "changelog-writing/SKILL.md",
        "---\nname: changelog-writing\ndescription: Write a changelog entry once a feature is ready to merge.\n---\n\nOne entry per user-visible change, in the past tense.\n",
    ),
    (
        "preview-environments/SKILL.md",
        "---\nname: preview-environments\ndescription: Use the disposable per-branch previews for manual testing.\n---\n\nWhen a preview will not start, inspect its pods with kubectl and read\nthe events of the namespace.\n",
    ),
    (
        "product-analytics/SKILL.md",
        "---\nname: product-analytics\ndescription: Product analytics for the web app.\nmetadata:\n  keywords: [posthog, tracking]\n---\n\nCapture one event per user action with the shared helper.\n",
    ),
    (
        "release-notes/SKILL.md",
        "---\nname: release-notes\ndescription: Write the release notes of a version.\ndisable-model-invocation: true\n---\n\nGroup the changes by area.\n",
    ),
];

struct Tree {
    tmp: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(tmp.path(), TREE);
        Tree { tmp }
    }

    fn registry(&self) -> SkillRegistry {
        build(
            &[root(SourceKind::RepoAgents, LABEL, self.tmp.path())],
            &SkillsConfig::default(),
        )
    }

    fn session(&self, auto: AutoActivate) -> SkillSession {
        let config = SkillsConfig {
            auto_activate: auto,
            ..SkillsConfig::default()
        };
        SkillSession::new(
            self.registry(),
            SkillSessionOptions::from_config(&config),
            Templates::builtin(),
        )
    }
}

/// The suggestions' ids, in order.
fn ids(suggestions: &[Suggestion]) -> Vec<&str> {
    suggestions.iter().map(|s| s.id.as_str()).collect()
}

/// A matched word and its fields.
fn term(word: &str, fields: &[&str]) -> RelevanceTerm {
    RelevanceTerm {
        term: word.into(),
        fields: fields.iter().map(|f| (*f).to_owned()).collect(),
    }
}

/// The score the index gives `id` for `prompt`, as records round it: what
/// `skills search` shows, computed apart from the session.
fn score(registry: &SkillRegistry, prompt: &str, id: &str) -> Figure {
    let hits = bcode_skill::index_registry(registry, None).search(prompt, 10);
    let hit = hits.iter().find(|hit| hit.id.as_str() == id).unwrap();
    Figure::new(hit.score)
}

#[test]
fn a_tree_without_bcode_fields_is_suggested_with_score_and_matched_words() {
    let tree = Tree::new();
    let mut session = tree.session(AutoActivate::Suggest);
    let prompt = "write storybook stories";
    let out = session.on_prompt(prompt);
    let relevance = RelevanceMatch {
        score: score(&tree.registry(), prompt, "storybook"),
        coverage: Figure::new(1.0),
        matched: vec![
            term("write", &["description"]),
            term("storybook", &["name", "description", "body"]),
            term("stories", &["description", "body"]),
        ],
    };
    assert_eq!(
        out,
        PromptOutcome {
            suggestions: vec![Suggestion {
                id: bcode_skill_models::SkillId::parse("storybook").unwrap(),
                source: LABEL.into(),
                matched_keywords: Vec::new(),
                matched_paths: Vec::new(),
                score: 0,
                model_visible: true,
                user_invocable: true,
                relevance: Some(relevance.clone()),
            }],
            activated: Vec::new(),
            events: vec![SkillEvent::SkillSuggested {
                id: "storybook".into(),
                source: LABEL.into(),
                matched_keywords: Vec::new(),
                matched_paths: Vec::new(),
                relevance: Some(relevance),
            }],
        }
    );
    assert!(out_score_is_positive(&out));
    // The event as the log writes it: the index's record beside the
    // keyword fields, which keep their shape.
    assert_eq!(
        serde_json::to_value(&out.events[0]).unwrap()["relevance"]["matched"],
        serde_json::json!([
            {"term": "write", "fields": ["description"]},
            {"term": "storybook", "fields": ["name", "description", "body"]},
            {"term": "stories", "fields": ["description", "body"]},
        ])
    );
}

fn out_score_is_positive(out: &PromptOutcome) -> bool {
    out.suggestions
        .iter()
        .all(|s| s.relevance.as_ref().is_some_and(|r| r.score.get() > 0.0))
}

#[test]
fn metadata_keywords_suggest_a_skill_that_follows_the_portability_hint() {
    let tree = Tree::new();
    let mut session = tree.session(AutoActivate::Suggest);
    let out = session.on_prompt("add posthog tracking to the signup button");
    assert_eq!(ids(&out.suggestions), ["product-analytics"]);
    let relevance = out.suggestions[0].relevance.as_ref().unwrap();
    assert_eq!(
        bcode_skill::strong_terms(relevance),
        ["posthog", "tracking"]
    );
    assert_eq!(
        relevance.matched,
        [
            term("posthog", &["keywords"]),
            term("tracking", &["keywords"])
        ]
    );
}

#[test]
fn a_body_mention_or_chat_suggests_nothing() {
    let tree = Tree::new();
    let mut session = tree.session(AutoActivate::Suggest);
    for prompt in [
        // `kubectl` and `pods` are in one body only.
        "why do the pods restart? kubectl shows nothing",
        "thanks, that looks good",
        "kubernetes",
        "",
    ] {
        assert_eq!(
            session.on_prompt(prompt),
            PromptOutcome::default(),
            "{prompt}"
        );
    }
}

#[test]
fn on_activates_a_clear_winner_and_not_one_of_two_close_skills() {
    let tree = Tree::new();
    let mut session = tree.session(AutoActivate::On);
    let out = session.on_prompt("write storybook stories");
    assert_eq!(
        out.activated
            .iter()
            .map(|id| id.as_str())
            .collect::<Vec<_>>(),
        ["storybook"]
    );
    assert!(out.suggestions.is_empty());
    let SkillEvent::SkillActivated {
        reason, relevance, ..
    } = &out.events[0]
    else {
        panic!("{:?}", out.events)
    };
    assert_eq!(reason, "auto: matched write, storybook, stories");
    assert_eq!(
        relevance.as_ref().map(|r| r.coverage),
        Some(Figure::new(1.0))
    );
    assert!(matches!(
        out.events[1],
        SkillEvent::SkillContextLoaded { .. }
    ));

    // Both describe React components: offered, neither activated.
    let mut session = tree.session(AutoActivate::On);
    let out = session.on_prompt("react components");
    assert!(out.activated.is_empty(), "{:?}", out.activated);
    assert_eq!(ids(&out.suggestions), ["react-components", "storybook"]);
}

#[test]
fn hidden_skills_are_never_suggested_nor_activated_by_the_index() {
    let tree = Tree::new();
    for auto in [AutoActivate::Suggest, AutoActivate::On] {
        let mut session = tree.session(auto);
        // `release-notes` is the only skill the prompt describes.
        assert_eq!(
            session.on_prompt("write the release notes"),
            PromptOutcome::default(),
            "{auto:?}"
        );
    }
}

#[test]
fn off_matches_nothing_and_builds_no_index() {
    let tree = Tree::new();
    let mut session = tree.session(AutoActivate::Off);
    assert_eq!(
        session.on_prompt("write storybook stories"),
        PromptOutcome::default()
    );
    assert!(session.indexes().relevance.get().is_none());
}

#[test]
fn keyword_suggestions_keep_their_order_and_record_and_come_first() {
    let tree = Tree::new();
    fs::write(
        tree.tmp.path().join("changelog-writing/SKILL.md"),
        "---\nname: changelog-writing\ndescription: Write a changelog entry once a feature is ready to merge.\nactivation:\n  keywords: [storybook]\n---\nBody.\n",
    )
    .unwrap();
    let mut session = tree.session(AutoActivate::Suggest);
    let out = session.on_prompt("write storybook stories");
    // The keyword match first, as before the index, with its event as it
    // was; then the skill only the index vouched for.
    assert_eq!(ids(&out.suggestions), ["changelog-writing", "storybook"]);
    assert_eq!(
        out.events[0],
        SkillEvent::SkillSuggested {
            id: "changelog-writing".into(),
            source: LABEL.into(),
            matched_keywords: vec!["storybook".into()],
            matched_paths: Vec::new(),
            relevance: None,
        }
    );
    assert!(out.suggestions[1].relevance.is_some());
}

#[test]
fn after_a_change_the_index_follows_the_last_one_and_answers_as_a_fresh_one() {
    let tree = Tree::new();
    for (file, _) in TREE {
        age(&tree.tmp.path().join(file));
    }
    past_racy_window();
    let roots = vec![root(SourceKind::RepoAgents, LABEL, tree.tmp.path())];
    let (mut live, registry) = LiveRegistry::new(quick_options(&SkillsConfig::default()), roots);
    let mut session = SkillSession::new(
        registry,
        SkillSessionOptions::from_config(&SkillsConfig::default()),
        Templates::builtin(),
    );
    assert!(session.indexes().relevance.get().is_none(), "built lazily");
    assert_eq!(
        ids(&session.on_prompt("write storybook stories").suggestions),
        ["storybook"]
    );
    assert!(session.indexes().relevance.get().is_some());

    // A new skill, a body-only edit and a removal.
    write_tree(
        tree.tmp.path(),
        &[(
            "playwright/SKILL.md",
            "---\nname: playwright\ndescription: Write end-to-end browser tests with Playwright.\n---\nRun them headless.\n",
        )],
    );
    fs::write(
        tree.tmp.path().join("storybook/SKILL.md"),
        "---\nname: storybook\ndescription: Use when writing or reviewing Storybook stories (`.stories.tsx`) for React components.\n---\nChromatic snapshots guard every story.\n",
    )
    .unwrap();
    fs::remove_dir_all(tree.tmp.path().join("changelog-writing")).unwrap();
    let refresh = live.begin_turn().unwrap();
    assert!(refresh.changed_files.contains("storybook"));
    session.replace_registry(refresh.registry.clone(), &refresh.changed_files);
    // Built again only when a prompt needs it, from the last one.
    assert!(session.indexes().relevance.get().is_none());
    assert_eq!(
        ids(&session.on_prompt("write playwright tests").suggestions),
        ["playwright"]
    );
    let followed = session.indexes().relevance.get().expect("built");
    let fresh = bcode_skill::index_registry(&refresh.registry, None);
    for query in [
        "write playwright tests",
        "chromatic snapshots",
        "shared conventions",
        "changelog entry",
        "write storybook stories",
    ] {
        assert_eq!(
            followed.search(query, 10),
            fresh.search(query, 10),
            "{query}"
        );
    }
    assert_eq!(followed.len(), fresh.len());
}
