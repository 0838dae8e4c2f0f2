//! One notice channel: every problem of a turn, whatever part of the
//! session raised it, comes out of `Turn::notices` as one type.

use crate::common;

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
                turn.diagnostics[0].hint().map(|h| h.into_owned())
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
    assert_eq!(notices[0].message, turn.diagnostics[0].message());
    assert_eq!(
        notices[0].path.as_deref(),
        turn.diagnostics[0].path.as_deref()
    );
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

/// A `.git` above the working folder that another user owns (issue 38,
/// item 5) is not taken as the root: the host hears of it once, on the
/// first turn, as a `foreign_owner` notice naming the folder and the way to
/// trust it. Only root can give a folder away, so the test needs root.
#[test]
fn a_refused_root_is_a_notice_of_the_first_turn() {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").map_or(true, |meta| meta.uid() != 0) {
        eprintln!("skipped: only root can give a folder to another user");
        return;
    }
    let repo = Repo::new();
    std::fs::create_dir_all(repo.root.join(".git")).unwrap();
    std::os::unix::fs::chown(repo.root.join(".git"), Some(65534), Some(65534)).unwrap();
    let work = repo.root.join("skills");
    let options = bcode_prompt::SessionOptions::new(&work)
        .env([("HOME".to_owned(), repo.home.display().to_string())]);
    let mut session = PromptSession::open_blocking(options).unwrap();
    let first = session
        .next_turn_blocking(TurnInput::new("hello").now(at("2026-12-01T10:00:00Z")))
        .unwrap();
    let (folder, git) = (repo.root.display().to_string(), repo.root.join(".git"));
    assert_eq!(
        first.foreign_root,
        Some(bcode_prompt::repository::RefusedRoot {
            folder: repo.root.clone(),
            not_owned: bcode_prompt::repository::NotOwned {
                path: git.clone(),
                owner: 65534,
                user: 0,
            },
        })
    );
    let notices = first.notices();
    let shown: Vec<_> = notices
        .iter()
        .map(|n| (n.source, n.code, n.path.clone(), n.to_string()))
        .collect();
    assert_eq!(
        shown,
        [(
            NoticeSource::Repository,
            "foreign_owner",
            Some(repo.root.clone()),
            format!(
                "`{folder}` holds a `.git` above the working folder but is not taken as the \
                 repository root: `{}` belongs to uid 65534, not to this user (uid 0); the \
                 working folder is its own root and nothing above it is read; if you trust \
                 that folder, add {folder:?} to `trust.safe_directories` in your user config",
                git.display()
            )
        )]
    );
    let second = session
        .next_turn_blocking(TurnInput::new("again").now(at("2026-12-01T10:01:00Z")))
        .unwrap();
    assert_eq!(second.notices(), Vec::<Notice>::new());
}
