//! Host-defined sections: placed relative to a canonical section, toggled by
//! `system_prompt.sections.<id>`, reported like the canonical ones, never
//! moving a byte before the cache boundary when they change per turn; a
//! failing or panicking one costs only itself (or, strict, fails the turn).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bcode_prompt::report::{OmitReason, Placement, Position, SectionClass, SectionKind};
use bcode_prompt::sections::{Gathered, Section, Stage, StageContext, StageError, StageSpec};
use bcode_prompt::{PromptError, PromptSession, TurnInput};
use common::{Repo, at};

/// A turn-class note in the system text, after the skill catalog: its text
/// changes every turn (a counter), so it must sit behind the boundary.
#[derive(Debug, Default)]
struct TurnCounter {
    turns: AtomicUsize,
}

impl Stage<Gathered> for TurnCounter {
    fn spec(&self) -> StageSpec {
        StageSpec::host(
            "team_turn",
            SectionClass::Turn,
            Placement::System,
            Position::After(SectionKind::SkillCatalog),
        )
        .with_template("team/turn.j2")
    }

    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let n = self.turns.fetch_add(1, Ordering::SeqCst) + 1;
        let prompt = cx.inputs.prompt.clone().unwrap_or_default();
        let (text, usage) = cx.render(
            "team/turn.j2",
            bcode_prompt::sections::context! { n => n, prompt => prompt },
        )?;
        Ok(vec![Section::new("team_turn", text).with_template(usage)])
    }
}

/// A session-class rule, before the repository instructions.
#[derive(Debug)]
struct TeamRules;

impl Stage<Gathered> for TeamRules {
    fn spec(&self) -> StageSpec {
        StageSpec::host(
            "team_rules",
            SectionClass::Session,
            Placement::System,
            Position::Before(SectionKind::RepositoryContext),
        )
    }

    fn render(&self, _cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        Ok(vec![Section::new(
            "team_rules",
            "Team rule: small commits.".into(),
        )])
    }
}

/// A stage that fails, or panics.
#[derive(Debug)]
struct Broken {
    panics: bool,
}

impl Stage<Gathered> for Broken {
    fn spec(&self) -> StageSpec {
        StageSpec::host(
            "flaky",
            SectionClass::Turn,
            Placement::RequestContext,
            Position::After(SectionKind::CurrentDatetime),
        )
    }

    fn render(&self, _cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        if self.panics {
            panic!("host bug");
        }
        Err(StageError::Degraded {
            message: "the ticket tracker did not answer".into(),
        })
    }
}

fn options(repo: &Repo) -> bcode_prompt::SessionOptions {
    repo.options()
        .section(Arc::new(TurnCounter::default()))
        .section(Arc::new(TeamRules))
        .template("team/turn.j2", "Turn {{ n }} of this session: {{ prompt }}")
}

#[test]
fn a_turn_class_host_section_never_moves_a_byte_before_the_boundary() {
    let repo = Repo::new();
    let mut session = PromptSession::open_blocking(options(&repo)).unwrap();
    let first = session
        .next_turn_blocking(TurnInput::new("one").now(at("2026-12-01T10:00:00Z")))
        .unwrap();
    let second = session
        .next_turn_blocking(TurnInput::new("two").now(at("2026-12-01T10:05:00Z")))
        .unwrap();
    let ids: Vec<&str> = first.sections().iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "base",
            "team_rules",
            "repository_context:AGENTS.md",
            "repository_invariants",
            "skill_catalog",
            "user_authority",
            "agent_suffix",
            "team_turn",
            "current_datetime",
            "runtime_mode",
            "config_profile",
        ]
    );
    let section = |turn: &bcode_prompt::Turn, id: &str| {
        let s = turn.sections().iter().find(|s| s.id == id).unwrap().clone();
        turn.system()[s.range.clone()].to_owned()
    };
    assert_eq!(section(&first, "team_turn"), "Turn 1 of this session: one");
    assert_eq!(section(&second, "team_turn"), "Turn 2 of this session: two");
    assert_eq!(section(&first, "team_rules"), "Team rule: small commits.");
    // Everything before the boundary is byte-identical; the host section
    // lies after it.
    assert_eq!(first.cache_boundary(), second.cache_boundary());
    assert_eq!(
        first.system()[..first.cache_boundary()],
        second.system()[..second.cache_boundary()]
    );
    let turn_range = first
        .sections()
        .iter()
        .find(|s| s.id == "team_turn")
        .unwrap()
        .range
        .clone();
    assert!(turn_range.start >= first.cache_boundary());
    // Reported like the canonical sections, with its template.
    let report = first
        .sections()
        .iter()
        .find(|s| s.id == "team_turn")
        .unwrap();
    assert_eq!(
        report.template.as_ref().map(|t| t.name.as_str()),
        Some("team/turn.j2")
    );
    let stages = session.stages();
    let info = stages.iter().find(|s| s.id == "team_turn").unwrap();
    assert!(info.host && info.enabled);
}

#[test]
fn a_host_section_is_toggled_by_its_config_key() {
    let repo = Repo::new();
    let options = options(&repo).set("system_prompt.sections.team_rules=false");
    let mut session = PromptSession::open_blocking(options).unwrap();
    let turn = session.next_turn_blocking(TurnInput::new("x")).unwrap();
    assert!(!turn.system().contains("Team rule"));
    let omitted = turn
        .omitted()
        .iter()
        .find(|o| o.id == "team_rules")
        .unwrap();
    assert_eq!(
        omitted.reason,
        OmitReason::Disabled {
            toggle: "team_rules".into()
        }
    );
    // A key for a section nobody registered is still an unknown key.
    let session = PromptSession::open_blocking(
        repo.options()
            .set("system_prompt.sections.team_rulez=false"),
    )
    .unwrap();
    let warnings = session.config().warnings;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].key, "system_prompt.sections.team_rulez");
}

#[test]
fn a_failing_or_panicking_host_section_costs_only_itself() {
    for panics in [false, true] {
        let repo = Repo::new();
        let options = repo.options().section(Arc::new(Broken { panics }));
        let mut session = PromptSession::open_blocking(options).unwrap();
        let turn = session.next_turn_blocking(TurnInput::new("x")).unwrap();
        assert!(turn.system().contains("Run cargo test"));
        let failure = turn
            .section_failures
            .iter()
            .find(|f| f.id == "flaky")
            .unwrap();
        let expected = if panics {
            "the host stage panicked"
        } else {
            "the ticket tracker did not answer"
        };
        assert_eq!(failure.message, expected);
        assert!(turn.omitted().iter().any(|o| o.id == "flaky"
            && o.reason
                == OmitReason::Failed {
                    message: expected.into()
                }));
    }
}

#[test]
fn a_strict_session_returns_the_host_sections_error() {
    let repo = Repo::new();
    let options = repo
        .options()
        .section(Arc::new(Broken { panics: false }))
        .strict(true);
    let mut session = PromptSession::open_blocking(options).unwrap();
    let err = session.next_turn_blocking(TurnInput::new("x")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot assemble the prompt: section `flaky` failed: the ticket tracker did not answer"
    );
    assert!(matches!(err, PromptError::Assemble(_)));
}

#[test]
fn a_host_section_with_a_canonical_name_is_refused() {
    #[derive(Debug)]
    struct Impostor;
    impl Stage<Gathered> for Impostor {
        fn spec(&self) -> StageSpec {
            StageSpec::host(
                "locale",
                SectionClass::Static,
                Placement::System,
                Position::Before(SectionKind::Base),
            )
        }
        fn render(&self, _: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
            Ok(vec![])
        }
    }
    let repo = Repo::new();
    let err = PromptSession::open_blocking(repo.options().section(Arc::new(Impostor))).unwrap_err();
    assert!(matches!(err, PromptError::Pipeline(_)), "{err}");
}
