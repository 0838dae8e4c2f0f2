//! One notice channel: every problem of a turn, whatever part of the
//! session raised it, comes out of `Turn::notices` as one type.

mod common;

use bcode_prompt::skills::Severity;
use bcode_prompt::{Notice, NoticeSource, PromptSession, TurnInput};
use common::{Repo, at, write_files};

/// What a notice says, without the parts that name temporary paths.
fn summary(notice: &Notice) -> (NoticeSource, Severity, &'static str, Option<String>) {
    (
        notice.source,
        notice.severity,
        notice.code,
        notice.hint.clone(),
    )
}

#[test]
fn a_turn_gives_every_problem_as_one_notice_type() {
    let repo = Repo::new();
    write_files(
        &repo.root,
        &[
            (".bcode/bcode.toml", "[skills]\nenabeld = false\n"),
            (".bcode/templates/sections/nothing_here.j2", "hello\n"),
            (
                "skills/broken/SKILL.md",
                "---\nname: broken\n---\nNo description.\n",
            ),
        ],
    );
    let templates = repo.root.join(".bcode/templates");
    let options = repo.options().set(format!(
        "system_prompt.templates_dir={:?}",
        templates.display().to_string()
    ));
    let mut session = PromptSession::open_blocking(options).unwrap();
    let turn = session
        .next_turn_blocking(TurnInput::new("hello").now(at("2026-12-01T10:00:00Z")))
        .unwrap();
    let notices = turn.notices();
    let summaries: Vec<_> = notices.iter().map(summary).collect();
    assert_eq!(
        summaries,
        [
            (
                NoticeSource::Skills,
                Severity::Error,
                "missing_description",
                turn.diagnostics[0].hint.clone()
            ),
            (
                NoticeSource::Config,
                Severity::Warning,
                "unknown_config_key",
                Some("did you mean `skills.enabled`?".to_owned())
            ),
            (
                NoticeSource::Templates,
                Severity::Warning,
                "unknown_template",
                None
            ),
        ]
    );
    // Each notice reads as the sentence the old channel's value printed.
    assert_eq!(notices[1].to_string(), turn.config_warnings[0].to_string());
    assert_eq!(notices[1].line, Some(2));
    assert_eq!(
        notices[2].to_string(),
        turn.template_warnings[0].to_string()
    );
    assert_eq!(notices[0].message, turn.diagnostics[0].message);
    assert_eq!(notices[0].path, turn.diagnostics[0].path);
}

#[test]
fn a_quiet_turn_has_no_notices() {
    let repo = Repo::new();
    let mut session = PromptSession::open_blocking(repo.options()).unwrap();
    let turn = session
        .next_turn_blocking(TurnInput::new("hello").now(at("2026-12-01T10:00:00Z")))
        .unwrap();
    assert_eq!(turn.notices(), Vec::<Notice>::new());
}
