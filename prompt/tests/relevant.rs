//! Relevant mode through the façade: the host's selector is used; one that
//! errors, panics (building its call or inside it) or overruns its deadline
//! falls back by `on_timeout` and the turn still assembles; the focus is
//! kept between processes in the session sidecar.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::sync::Arc;

use bcode_prompt::invariants::{
    InvariantSelector, SelectorAnswer, SelectorError, SelectorFuture, SelectorRequest,
};
use bcode_prompt::{PromptSession, TurnInput};
use common::Repo;

/// How a test selector behaves.
#[derive(Debug, Clone, Copy)]
enum Behaviour {
    Answers,
    Errors,
    PanicsBuilding,
    PanicsInside,
    Sleeps,
}

#[derive(Debug)]
struct Host(Behaviour);

impl InvariantSelector for Host {
    fn select(&self, request: SelectorRequest) -> SelectorFuture {
        let behaviour = self.0;
        if let Behaviour::PanicsBuilding = behaviour {
            panic!("selector bug while building the call");
        }
        Box::pin(async move {
            match behaviour {
                Behaviour::Answers => Ok(SelectorAnswer {
                    ids: vec!["clock-rules".to_owned()],
                    task_summary: Some(format!("about: {}", request.task.text)),
                }),
                Behaviour::Errors => Err(SelectorError::new("model unavailable")),
                Behaviour::PanicsInside => panic!("selector bug inside the call"),
                Behaviour::Sleeps | Behaviour::PanicsBuilding => {
                    // Never answers: the turn's deadline ends the wait.
                    std::future::pending::<()>().await;
                    Err(SelectorError::new("too late"))
                }
            }
        })
    }
}

fn notes(turn: &bcode_prompt::Turn) -> Vec<String> {
    turn.sections()
        .iter()
        .find(|s| s.id == "repository_invariants")
        .map(|s| {
            s.notes
                .iter()
                .filter(|n| !n.starts_with("waited"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

async fn turn_with(behaviour: Behaviour) -> bcode_prompt::Turn {
    let repo = Repo::new();
    // Only the sleeping selector is meant to overrun: the others get time
    // enough to fail on their own even on a loaded machine.
    let timeout_ms = if matches!(behaviour, Behaviour::Sleeps) {
        200
    } else {
        10_000
    };
    let options = repo
        .options()
        .set("invariants.mode=\"relevant\"")
        .set(format!(
            "invariants.selector.initial_timeout_ms={timeout_ms}"
        ))
        .set("invariants.selector.cancel_on_timeout=true")
        .selector(Arc::new(Host(behaviour)));
    let mut session = PromptSession::open(options).await.unwrap();
    session
        .next_turn(TurnInput::new("fix the parser"))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_selector_decides() {
    let turn = turn_with(Behaviour::Answers).await;
    assert!(turn.system().contains("<invariant id=\"clock-rules\""));
    assert!(!turn.system().contains("<invariant id=\"parser-rules\""));
    assert!(
        turn.system()
            .contains("Task, as the selector understood it: about: fix the parser")
    );
    assert_eq!(
        notes(&turn)[..3],
        [
            "1 of 2 invariants placed".to_owned(),
            "relevant mode: initial selection".to_owned(),
            "guidance: selector selection #1 [clock-rules]".to_owned()
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_selector_falls_back_and_the_turn_assembles() {
    for (behaviour, reason) in [
        (Behaviour::Errors, "selector failed: model unavailable"),
        (
            Behaviour::PanicsBuilding,
            "selector failed: the selector panicked",
        ),
        (
            Behaviour::PanicsInside,
            "selector failed: selector task panicked",
        ),
        (Behaviour::Sleeps, "selector timed out after 200 ms"),
    ] {
        let turn = turn_with(behaviour).await;
        // The default on_timeout is "full": the complete catalog.
        assert!(
            turn.system().contains("<invariant id=\"parser-rules\""),
            "{behaviour:?}"
        );
        assert!(
            turn.system().contains("<invariant id=\"clock-rules\""),
            "{behaviour:?}"
        );
        let notes = notes(&turn);
        assert!(
            notes.contains(&format!("fallback: on_timeout = full ({reason})")),
            "{behaviour:?}: {notes:?}"
        );
    }
}

#[test]
fn the_focus_survives_the_process_in_the_session_sidecar() {
    let repo = Repo::new();
    let session_dir = repo.home.join("session");
    let render = |prompt: &str| {
        let options = repo
            .options()
            .set("invariants.mode=\"relevant\"")
            .focus_dir(&session_dir);
        let mut session = PromptSession::open_blocking(options).unwrap();
        let turn = session
            .next_turn_blocking(TurnInput::new(prompt).settle())
            .unwrap();
        notes(&turn)
    };
    assert_eq!(
        render("fix the parser"),
        [
            "1 of 2 invariants placed",
            "relevant mode: initial selection",
            "guidance: deterministic selection #1 [parser-rules]",
            "session sidecar: saved focus #2 [parser-rules] for the next prompt",
        ]
    );
    assert_eq!(
        render("now the clock"),
        [
            "1 of 2 invariants placed",
            "relevant mode: reused last valid selection",
            "guidance: deterministic selection #2 [parser-rules]",
            "recovered focus #2 from the session sidecar",
            "session sidecar: saved focus #3 [clock-rules] for the next prompt",
        ]
    );
    std::fs::write(bcode_prompt_sections_sidecar_path(&session_dir), "garbage").unwrap();
    assert_eq!(
        render("the clock again"),
        [
            "1 of 2 invariants placed",
            "relevant mode: initial selection",
            "guidance: deterministic selection #1 [clock-rules]",
            "session sidecar: sidecar is corrupt (expected value at line 1 column 1); ignored",
            "session sidecar: saved focus #2 [clock-rules] for the next prompt",
        ]
    );
}

/// Where the sidecar lives in a session folder.
fn bcode_prompt_sections_sidecar_path(dir: &std::path::Path) -> std::path::PathBuf {
    bcode_prompt_sections::sidecar_path(dir)
}
