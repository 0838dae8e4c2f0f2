//! The turn API from every kind of host: a multi-thread and a
//! current-thread tokio runtime (relevant mode on, which used to create a
//! runtime of its own and panic inside one), a plain `main` through the
//! blocking wrappers, and a blocking call made from inside a runtime.
//! Also: what a session picks up between turns, and that a turn in which
//! nothing changed gives the same bytes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use bcode_prompt::skills::{SessionReply, SkillError, SkillEvent, SkillReload};
use bcode_prompt::{CommandReply, PromptError, PromptSession, SkillLifetime, TurnInput, Workspace};
use common::{Repo, at, write};

/// Three turns: a prompt, a `/skill` command, another prompt.
async fn three_turns(repo: &Repo) -> Vec<bcode_prompt::Turn> {
    let options = repo.options().set("invariants.mode=\"relevant\"");
    let mut session = PromptSession::open(options).await.unwrap();
    let mut turns = Vec::new();
    for text in [
        "fix the parser",
        "/skill rust-debugging the panic",
        "now the clock",
    ] {
        let turn = session
            .next_turn(TurnInput::new(text).now(at("2026-12-01T10:00:00Z")))
            .await
            .unwrap();
        session.commit_turn("done");
        turns.push(turn);
    }
    turns
}

fn check_three_turns(turns: &[bcode_prompt::Turn]) {
    let [first, second, third] = turns else {
        panic!("three turns")
    };
    // The first prompt focuses the parser invariant.
    assert!(first.system().contains("<invariant id=\"parser-rules\""));
    assert!(!first.system().contains("clock-rules\" title"));
    // The command activates the skill: its block is request-only context.
    assert!(matches!(
        &second.command,
        Some(CommandReply::Done(SessionReply::Activated { .. }))
    ));
    assert!(
        second
            .request_context()
            .contains("<skill id=\"rust-debugging\" name=\"rust-debugging\"")
    );
    assert!(
        second
            .request_context()
            .contains("Invocation arguments: the panic")
    );
    let kinds: Vec<&str> = second
        .events
        .iter()
        .map(|e| match e {
            SkillEvent::SkillActivated { .. } => "activated",
            SkillEvent::SkillContextLoaded { .. } => "loaded",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["activated", "loaded"]);
    // The skill stays active on the next turn; the cacheable prefix (the
    // base, instructions and catalog) is the same bytes on every turn.
    assert!(
        third
            .request_context()
            .contains("<skill id=\"rust-debugging\"")
    );
    let prefix = |t: &bcode_prompt::Turn| t.system()[..t.cache_boundary()].to_owned();
    assert_eq!(prefix(first), prefix(second));
    assert_eq!(prefix(second), prefix(third));
    assert!(first.cache_boundary() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_turns_on_a_multi_thread_runtime() {
    let repo = Repo::new();
    check_three_turns(&three_turns(&repo).await);
}

#[tokio::test(flavor = "current_thread")]
async fn three_turns_on_a_current_thread_runtime() {
    let repo = Repo::new();
    check_three_turns(&three_turns(&repo).await);
}

#[test]
fn three_turns_from_a_plain_main() {
    let repo = Repo::new();
    let options = repo.options().set("invariants.mode=\"relevant\"");
    let mut session = PromptSession::open_blocking(options).unwrap();
    let mut turns = Vec::new();
    for text in [
        "fix the parser",
        "/skill rust-debugging the panic",
        "now the clock",
    ] {
        turns.push(
            session
                .next_turn_blocking(TurnInput::new(text).now(at("2026-12-01T10:00:00Z")))
                .unwrap(),
        );
    }
    check_three_turns(&turns);
}

#[tokio::test(flavor = "current_thread")]
async fn a_blocking_call_inside_a_runtime_does_not_panic() {
    let repo = Repo::new();
    let mut session = PromptSession::open_blocking(repo.options()).unwrap();
    let turn = session.next_turn_blocking(TurnInput::new("hello")).unwrap();
    assert!(!turn.system().is_empty());
    // Dropping a session that owns a runtime inside another runtime is fine.
    drop(session);
}

/// A workspace opened once (the config read, the root found) serves a
/// session opened in it: the same prompt as a session that opens its own,
/// from the same config, roots and state folder.
#[test]
fn a_session_opened_in_a_workspace_gives_the_same_prompt_as_one_opened_alone() {
    let repo = Repo::new();
    let workspace = Workspace::open(&repo.options()).unwrap();
    assert_eq!(workspace.repo(), repo.root.as_path());
    assert_eq!(workspace.work(), repo.root.as_path());
    assert_eq!(
        workspace.state().path(),
        Some(repo.home.join(".local/state/bcode").as_path())
    );
    let roots: Vec<std::path::PathBuf> = workspace
        .skill_roots()
        .into_iter()
        .map(|root| root.path)
        .collect();
    let (repo_root, home) = (&repo.root, &repo.home);
    assert_eq!(
        roots,
        [
            repo_root.join(".bcode/skills"),
            repo_root.join(".agents/skills"),
            repo_root.join("skills"),
            repo_root.join(".claude/skills"),
            home.join(".config/bcode/skills"),
            home.join(".agents/skills"),
            home.join(".local/state/bcode/skills"),
        ]
    );
    assert!(!workspace.config().config.system_prompt.sections.locale);
    let input = || TurnInput::new("hello").now(at("2026-12-01T10:00:00Z"));
    let mut in_workspace = PromptSession::open_in_blocking(workspace, repo.options()).unwrap();
    let mut alone = PromptSession::open_blocking(repo.options()).unwrap();
    assert_eq!(
        in_workspace.next_turn_blocking(input()).unwrap().prompt,
        alone.next_turn_blocking(input()).unwrap().prompt
    );
}

#[test]
fn a_turn_in_which_nothing_changed_gives_the_same_bytes_and_no_changes() {
    let repo = Repo::new();
    let mut session = PromptSession::open_blocking(repo.options()).unwrap();
    let input = || TurnInput::new("hello").now(at("2026-12-01T10:00:00Z"));
    let first = session.next_turn_blocking(input()).unwrap();
    let second = session.next_turn_blocking(input()).unwrap();
    assert_eq!(first.prompt, second.prompt);
    assert!(!second.changes.any(), "{:?}", second.changes);
    assert!(second.diagnostics.is_empty());
}

/// A multi-turn session watches its skill folders by default, so an
/// unchanged turn costs no stamp checks; an edit finished right before a
/// turn is still in it. Asked not to watch, it checks stamps; a single-turn
/// session follows nothing.
#[test]
fn a_multi_turn_session_watches_its_skills_by_default() {
    let repo = Repo::new();
    let mut session = PromptSession::open_blocking(repo.options()).unwrap();
    if cfg!(target_os = "linux") {
        assert_eq!(session.skill_reload(), SkillReload::Watching);
    }
    let input = || TurnInput::new("hello").now(at("2026-12-01T10:00:00Z"));
    session.next_turn_blocking(input()).unwrap();
    for round in 0..5 {
        let description = format!("Write docs, take {round}");
        write(
            &repo.root.join("skills/docs/SKILL.md"),
            &format!("---\ndescription: {description}\n---\nDocs.\n"),
        );
        let turn = session.next_turn_blocking(input()).unwrap();
        assert!(turn.system().contains(&description), "round {round}");
    }

    let stamps =
        PromptSession::open_blocking(repo.options().skill_lifetime(SkillLifetime::StampChecked))
            .unwrap();
    assert_eq!(
        stamps.skill_reload(),
        SkillReload::CheckingStamps { reason: None }
    );
    let once =
        PromptSession::open_blocking(repo.options().skill_lifetime(SkillLifetime::SingleTurn))
            .unwrap();
    assert_eq!(once.skill_reload(), SkillReload::NotFollowed);
}

#[test]
fn changes_between_turns_are_picked_up_and_reported() {
    let repo = Repo::new();
    let mut session = PromptSession::open_blocking(repo.options()).unwrap();
    let input = || TurnInput::new("hello").now(at("2026-12-01T10:00:00Z"));
    let first = session.next_turn_blocking(input()).unwrap();
    assert!(first.system().contains("Run cargo test before you finish."));

    write(&repo.root.join("AGENTS.md"), "Run cargo clippy too.\n");
    write(
        &repo.root.join("skills/docs/SKILL.md"),
        "---\ndescription: Write docs\n---\nDocs.\n",
    );
    write(
        &repo.root.join(".bcode/bcode.toml"),
        "[system_prompt.sections]\nagent_suffix = false\n",
    );
    let second = session.next_turn_blocking(input()).unwrap();
    assert!(second.changes.instructions);
    assert!(second.changes.config);
    assert_eq!(second.changes.skills.added, ["docs"]);
    assert!(second.system().contains("Run cargo clippy too."));
    assert!(second.system().contains("<id>docs</id>"));
    assert!(second.omitted().iter().any(|o| o.id == "agent_suffix"));
}

/// An edit that leaves the effective config as it was is no config change,
/// but the warnings it brings are reported with the turn that notices it,
/// once, and the session's config has the new load (lines, warnings).
#[test]
fn an_edit_that_only_changes_the_warnings_reports_them_once() {
    let repo = Repo::new();
    let config = repo.root.join(".bcode/bcode.toml");
    write(&config, "[skills]\nenabeld = false\n");
    let mut session = PromptSession::open_blocking(repo.options()).unwrap();
    let input = || TurnInput::new("hello").now(at("2026-12-01T10:00:00Z"));
    let first = session.next_turn_blocking(input()).unwrap();
    let keys = |turn: &bcode_prompt::Turn| -> Vec<String> {
        turn.config_warnings.iter().map(|w| w.key.clone()).collect()
    };
    assert_eq!(keys(&first), ["skills.enabeld"]);

    write(&config, "# moved down a line\n[skills]\nenabld = false\n");
    let second = session.next_turn_blocking(input()).unwrap();
    assert!(!second.changes.config);
    assert_eq!(keys(&second), ["skills.enabld"]);
    assert_eq!(second.config_warnings[0].line, Some(3));
    assert_eq!(session.config().warnings, second.config_warnings);
    assert!(second.system() == first.system());

    let third = session.next_turn_blocking(input()).unwrap();
    assert!(
        third.config_warnings.is_empty(),
        "{:?}",
        third.config_warnings
    );
}

/// Template overrides are stamped with the config files: an override
/// edited, added or removed is picked up by the next turn, reported as a
/// template change, and its warnings come with that turn, once.
#[test]
fn template_override_edits_are_picked_up_between_turns() {
    let repo = Repo::new();
    let dir = repo.root.join("prompt-templates");
    write(
        &dir.join("skills/catalog.j2"),
        "Skills, take one:\n{{ entries }}",
    );
    let options = repo
        .options()
        .set(format!("system_prompt.templates_dir=\"{}\"", dir.display()));
    let mut session = PromptSession::open_blocking(options).unwrap();
    let input = || TurnInput::new("hello").now(at("2026-12-01T10:00:00Z"));
    let first = session.next_turn_blocking(input()).unwrap();
    assert!(first.system().contains("Skills, take one:"));

    write(
        &dir.join("skills/catalog.j2"),
        "Skills, take two:\n{{ entries }}",
    );
    let edited = session.next_turn_blocking(input()).unwrap();
    assert!(edited.changes.templates && !edited.changes.config);
    assert!(edited.system().contains("Skills, take two:"));
    assert!(!edited.system().contains("Skills, take one:"));

    write(&dir.join("sections/datetime.j2"), "The date is secret.");
    let added = session.next_turn_blocking(input()).unwrap();
    assert!(added.changes.templates);
    assert!(added.request_context().contains("The date is secret."));

    std::fs::remove_file(dir.join("sections/datetime.j2")).unwrap();
    let removed = session.next_turn_blocking(input()).unwrap();
    assert!(removed.changes.templates);
    assert!(!removed.request_context().contains("The date is secret."));
    assert!(
        removed
            .request_context()
            .contains("Current local date and time")
    );
    assert!(removed.system().contains("Skills, take two:"));

    write(&dir.join("no-such-template.j2"), "x");
    let unknown = session.next_turn_blocking(input()).unwrap();
    assert!(unknown.changes.templates);
    assert!(
        matches!(
            unknown.template_warnings.as_slice(),
            [bcode_templates::TemplateWarning::UnknownTemplate { name, .. }] if name == "no-such-template.j2"
        ),
        "{:?}",
        unknown.template_warnings
    );
    let after = session.next_turn_blocking(input()).unwrap();
    assert!(after.template_warnings.is_empty(), "reported once");
    assert!(!after.changes.templates);
    assert!(after.system() == unknown.system());

    // A skill activated after an edit of the context template renders
    // with it.
    write(
        &dir.join("skills/context.j2"),
        "<skill id=\"{{ id|xml }}\">rendered by the edited template</skill>",
    );
    let activated = session
        .next_turn_blocking(
            TurnInput::new("/skill rust-debugging the panic").now(at("2026-12-01T10:00:00Z")),
        )
        .unwrap();
    assert!(activated.changes.templates);
    assert!(
        activated
            .request_context()
            .contains("rendered by the edited template"),
        "{}",
        activated.request_context()
    );
}

#[test]
fn an_unknown_skill_in_a_command_is_a_reply_and_an_event_not_an_error() {
    let repo = Repo::new();
    let mut session = PromptSession::open_blocking(repo.options()).unwrap();
    let turn = session
        .next_turn_blocking(TurnInput::new("/skill rust-debuging"))
        .unwrap();
    let Some(CommandReply::Failed(error)) = &turn.command else {
        panic!("{:?}", turn.command)
    };
    assert_eq!(
        error.to_string(),
        "no skill with id `rust-debuging`; did you mean `rust-debugging`?"
    );
    assert!(matches!(
        turn.events.as_slice(),
        [SkillEvent::SkillInvocationFailed { .. }]
    ));
    // Asked for explicitly, the same id is an error of the turn.
    let err = session
        .next_turn_blocking(TurnInput::new("").activate("rust-debuging"))
        .unwrap_err();
    assert!(matches!(
        err,
        PromptError::Skill(SkillError::NotFound { ref suggestion, .. })
            if suggestion.as_deref() == Some("rust-debugging")
    ));
}

#[test]
fn bad_setup_is_a_typed_error_never_a_panic() {
    let repo = Repo::new();
    let gone = bcode_prompt::SessionOptions::new(repo.root.join("no-such-folder"));
    assert!(matches!(
        PromptSession::open_blocking(gone),
        Err(PromptError::Repository { .. })
    ));

    let bad_config = repo.options().config_file(repo.root.join("missing.toml"));
    assert!(matches!(
        PromptSession::open_blocking(bad_config),
        Err(PromptError::Config(_))
    ));

    write(&repo.root.join("templates/base.j2"), "{% if %}");
    let broken = repo.options().set(format!(
        "system_prompt.templates_dir=\"{}\"",
        repo.root.join("templates").display()
    ));
    assert!(matches!(
        PromptSession::open_blocking(broken),
        Err(PromptError::Template(_))
    ));
}

#[test]
fn sessions_on_one_shared_pool_share_the_registry_and_each_sees_changes() {
    let repo = Repo::new();
    let shared = bcode_prompt::skills::SharedSkills::new();
    let open = || {
        PromptSession::open_blocking(
            repo.options()
                .skill_lifetime(SkillLifetime::Shared(shared.clone())),
        )
        .unwrap()
    };
    let (mut a, mut b) = (open(), open());
    assert!(a.registry().same_as(&b.registry()));
    let input = || TurnInput::new("hello").now(at("2026-12-01T10:00:00Z"));
    let (first_a, first_b) = (
        a.next_turn_blocking(input()).unwrap(),
        b.next_turn_blocking(input()).unwrap(),
    );
    assert_eq!(first_a.prompt, first_b.prompt);

    write(
        &repo.root.join("skills/docs/SKILL.md"),
        "---\ndescription: Write docs\n---\nDocs.\n",
    );
    // One session notices the change; the other is told too.
    let second_a = a.next_turn_blocking(input()).unwrap();
    let second_b = b.next_turn_blocking(input()).unwrap();
    assert_eq!(second_a.changes.skills.added, ["docs"]);
    assert_eq!(second_b.changes.skills.added, ["docs"]);
    // (A file written within the racy window is read again at the next
    // check, so the two may hold equal rather than identical snapshots.)
    let ids = |s: &PromptSession| s.registry().ids().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(ids(&a), ids(&b));
    assert_eq!(second_a.prompt, second_b.prompt);
}

/// A session shows the catalog it keeps as shared text with the character
/// count it made once; a single turn moves the catalog text in and assembly
/// counts it. Both must give the same bytes and the same accounting, for
/// text that is not ASCII too, on every turn.
#[test]
fn a_kept_catalog_and_a_handed_over_one_give_the_same_prompt() {
    let repo = Repo::new();
    write(
        &repo.root.join("skills/café-naïve/SKILL.md"),
        "---\nname: cafe-naive\ndescription: Prépare le café — naïvement, ☕ pour l'équipe\n---\nBody\n",
    );
    let input = || TurnInput::new("hello").now(at("2026-12-01T10:00:00Z"));
    let mut single =
        PromptSession::open_blocking(repo.options().skill_lifetime(SkillLifetime::SingleTurn))
            .unwrap();
    let alone = single.next_turn_blocking(input()).unwrap();
    let mut session = PromptSession::open_blocking(repo.options()).unwrap();
    for _ in 0..2 {
        let turn = session.next_turn_blocking(input()).unwrap();
        assert_eq!(turn.prompt, alone.prompt);
    }
    let catalog = alone
        .prompt
        .sections
        .iter()
        .find(|s| s.id == "skill_catalog")
        .expect("a catalog section");
    let text = &alone.prompt.system[catalog.range.clone()];
    assert!(text.contains('☕'), "{text}");
    assert_eq!(catalog.chars, text.chars().count());
    assert!(catalog.chars < catalog.bytes);
}

/// A skill with no Bcode field is suggested for the task its description
/// names, by the relevance index the sessions of one pool share; a skill
/// added between turns is suggested on the next turn of either session.
#[test]
fn a_skill_the_task_describes_is_suggested_before_and_after_a_change() {
    let repo = Repo::new();
    write(
        &repo.root.join("skills/storybook/SKILL.md"),
        "---\nname: storybook\ndescription: Write Storybook stories for React components\n---\nOne story per state.\n",
    );
    let shared = bcode_prompt::skills::SharedSkills::new();
    let open = || {
        PromptSession::open_blocking(
            repo.options()
                .skill_lifetime(SkillLifetime::Shared(shared.clone())),
        )
        .unwrap()
    };
    let (mut a, mut b) = (open(), open());
    let suggested = |session: &mut PromptSession, text: &str| -> Vec<String> {
        let turn = session
            .next_turn_blocking(TurnInput::new(text).now(at("2026-12-01T10:00:00Z")))
            .unwrap();
        assert!(turn.suggestions.iter().all(|s| s.relevance.is_some()));
        turn.suggestions.iter().map(|s| s.id.to_string()).collect()
    };
    assert_eq!(suggested(&mut a, "write storybook stories"), ["storybook"]);
    assert_eq!(suggested(&mut b, "write playwright tests"), [] as [&str; 0]);

    write(
        &repo.root.join("skills/playwright/SKILL.md"),
        "---\nname: playwright\ndescription: Write end-to-end browser tests with Playwright\n---\nRun headless.\n",
    );
    assert_eq!(suggested(&mut a, "write playwright tests"), ["playwright"]);
    assert_eq!(suggested(&mut b, "write playwright tests"), ["playwright"]);
    assert_eq!(suggested(&mut b, "write storybook stories"), ["storybook"]);
}
