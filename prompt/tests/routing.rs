//! Routing (`[skills.routing]`): the request-only `relevant_skills` section
//! lists the skills that best fit each turn's task, off by default; turns
//! with different tasks never change a byte before the cache boundary;
//! `PromptSession::search` answers a host's "find a skill" tool; after an
//! edit only the changed skill is indexed again, and the answers are those
//! of a fresh session.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use bcode_prompt::{PromptSession, SkillLifetime, TurnInput};
use common::{Repo, at, write, write_files};

/// The façade repository plus skills written only to the open standard (no
/// Bcode field at all), one of them hidden from the model.
fn repo() -> Repo {
    let repo = Repo::new();
    write_files(
        &repo.root,
        &[
            (
                ".agents/skills/storybook/SKILL.md",
                "---\nname: storybook\ndescription: Write and maintain component stories.\n---\nUse CSF3. One story per state.\n",
            ),
            (
                ".agents/skills/pdf-forms/SKILL.md",
                "---\nname: pdf-forms\ndescription: Fill in and extract PDF forms.\nmetadata:\n  tags: [pdf, acroform]\n---\nRun scripts/fill.py with the field values.\n",
            ),
            (
                ".agents/skills/pdf-forms/scripts/fill.py",
                "print('fill')\n",
            ),
            (
                ".agents/skills/secret-pdf/SKILL.md",
                "---\nname: secret-pdf\ndescription: PDF forms, hidden from the model.\ndisable-model-invocation: true\n---\nPDF forms.\n",
            ),
        ],
    );
    repo
}

fn routed(turn: &bcode_prompt::Turn) -> Vec<String> {
    turn.sections()
        .iter()
        .filter(|s| s.id == "relevant_skills")
        .flat_map(|s| s.notes.iter().cloned())
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn routing_is_off_by_default() {
    let repo = repo();
    let mut session = PromptSession::open(repo.options()).await.unwrap();
    let turn = session
        .next_turn(TurnInput::new("write storybook stories").now(at("2026-12-01T10:00:00Z")))
        .await
        .unwrap();
    assert!(turn.sections().iter().all(|s| s.id != "relevant_skills"));
    assert!(!turn.request_context().contains("<relevant_skills>"));
}

#[tokio::test(flavor = "current_thread")]
async fn each_turn_gets_the_skills_of_its_task_after_the_cache_boundary() {
    let repo = repo();
    let options = repo
        .options()
        .set("skills.routing.enabled=true")
        .set("skills.prompt.catalog=\"names_only\"")
        .skill_lifetime(SkillLifetime::StampChecked);
    let mut session = PromptSession::open(options).await.unwrap();
    let mut turns = Vec::new();
    for text in [
        "write storybook stories",
        "fill in the tax pdf form",
        "hello",
    ] {
        turns.push(
            session
                .next_turn(TurnInput::new(text).now(at("2026-12-01T10:00:00Z")))
                .await
                .unwrap(),
        );
        session.commit_turn("done");
    }
    let [stories, pdf, hello] = &turns[..] else {
        panic!("three turns")
    };
    // Nothing routed changes the cacheable text.
    for turn in [pdf, hello] {
        assert_eq!(turn.cache_boundary(), stories.cache_boundary());
        assert_eq!(
            &turn.system()[..turn.cache_boundary()],
            &stories.system()[..stories.cache_boundary()]
        );
    }
    let section = stories
        .sections()
        .iter()
        .find(|s| s.id == "relevant_skills")
        .unwrap();
    assert_eq!(
        section.placement,
        bcode_prompt::report::Placement::RequestContext
    );
    assert_eq!(
        routed(stories),
        [
            "routed storybook score 10.01 (write: description; storybook: name; stories: description, body)"
        ]
    );
    let text = &stories.request_context()[section.range.clone()];
    assert!(
        text.contains("<relevant_skills>\n  <skill>\n    <id>storybook</id>"),
        "{text}"
    );
    assert!(text.contains("<description>Write and maintain component stories.</description>"));
    // The hidden skill matches too, but is never routed to the model.
    assert_eq!(routed(pdf).len(), 1, "{:?}", routed(pdf));
    assert!(routed(pdf)[0].starts_with("routed pdf-forms score"));
    assert!(routed(hello).is_empty());
}

#[tokio::test(flavor = "current_thread")]
async fn touched_paths_route_too() {
    let repo = repo();
    let options = repo.options().set("skills.routing.enabled=true");
    let mut session = PromptSession::open(options).await.unwrap();
    let turn = session
        .next_turn(
            TurnInput::new("")
                .touched_paths(vec!["src/components/Button.stories.tsx".to_owned()])
                .now(at("2026-12-01T10:00:00Z")),
        )
        .await
        .unwrap();
    assert_eq!(routed(&turn).len(), 1);
    assert!(routed(&turn)[0].starts_with("routed storybook"));
}

/// What one turn of "write storybook stories" routes with routing on and
/// `set` added to the options.
async fn routed_with(repo: &Repo, set: &str) -> Vec<String> {
    let options = repo.options().set("skills.routing.enabled=true").set(set);
    let mut session = PromptSession::open(options).await.unwrap();
    let turn = session
        .next_turn(TurnInput::new("write storybook stories").now(at("2026-12-01T10:00:00Z")))
        .await
        .unwrap();
    routed(&turn)
}

#[tokio::test(flavor = "current_thread")]
async fn the_floor_and_the_count_bound_the_section() {
    let repo = repo();
    assert_eq!(
        routed_with(&repo, "skills.routing.min_score=1.0")
            .await
            .len(),
        1
    );
    for set in [
        "skills.routing.min_score=100.0",
        "skills.routing.max_results=0",
        "system_prompt.sections.relevant_skills=false",
    ] {
        assert!(routed_with(&repo, set).await.is_empty(), "{set}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn search_answers_as_a_fresh_session_after_an_edit() {
    let repo = repo();
    let options = || {
        repo.options()
            .skill_lifetime(SkillLifetime::StampChecked)
            .racy_window(std::time::Duration::ZERO)
    };
    let mut session = PromptSession::open(options()).await.unwrap();
    // The first turn uses the registry of the opening; later turns check
    // for edits.
    session
        .next_turn(TurnInput::new("first").now(at("2026-12-01T10:00:00Z")))
        .await
        .unwrap();
    let ids = |hits: Vec<bcode_prompt::skills::SearchHit>| -> Vec<String> {
        hits.into_iter().map(|h| h.id.to_string()).collect()
    };
    assert_eq!(
        ids(session.search("pdf forms", 10)),
        ["pdf-forms", "secret-pdf"]
    );
    // The storybook skill now says it fills PDF forms as well.
    write(
        &repo.root.join(".agents/skills/storybook/SKILL.md"),
        "---\nname: storybook\ndescription: Stories, and PDF forms of stories.\n---\nPDF forms, PDF forms, PDF forms.\n",
    );
    session
        .next_turn(TurnInput::new("anything").now(at("2026-12-01T10:00:00Z")))
        .await
        .unwrap();
    let fresh = PromptSession::open(options()).await.unwrap();
    let after = session.search("pdf forms", 10);
    assert_eq!(after, fresh.search("pdf forms", 10));
    assert!(ids(after).contains(&"storybook".to_owned()));
}

/// The routing cache files under `home`'s state folder.
fn routing_files(home: &std::path::Path) -> Vec<String> {
    let dir = home.join(".local/state/bcode/cache/skills");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with("routing-"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test(flavor = "current_thread")]
async fn a_session_keeps_its_index_in_the_disk_cache_and_answers_as_without() {
    let repo = repo();
    let options = |cache: bool| {
        repo.options()
            .set(format!("skills.disk_cache={cache}"))
            .set("skills.routing.enabled=true")
            .racy_window(std::time::Duration::ZERO)
    };
    let without = PromptSession::open(options(false)).await.unwrap();
    let expected = without.search("fill pdf forms with a script", 10);
    let turn_without = routed_with_session(without).await;
    assert!(!turn_without.is_empty());
    assert_eq!(routing_files(&repo.home), Vec::<String>::new());
    // A session with the cache writes the index there as it builds it...
    let first = PromptSession::open(options(true)).await.unwrap();
    assert_eq!(first.search("fill pdf forms with a script", 10), expected);
    let written = routing_files(&repo.home);
    assert_eq!(written.len(), 1, "{written:?}");
    // ... and the next session, reading it, answers the same: the search,
    // the routed section.
    let second = PromptSession::open(options(true)).await.unwrap();
    assert_eq!(second.search("fill pdf forms with a script", 10), expected);
    assert_eq!(routed_with_session(second).await, turn_without);
    assert_eq!(routing_files(&repo.home), written);
}

async fn routed_with_session(mut session: PromptSession) -> Vec<String> {
    let turn = session
        .next_turn(TurnInput::new("fill in the tax pdf form").now(at("2026-12-01T10:00:00Z")))
        .await
        .unwrap();
    routed(&turn)
}
