#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The relevant-mode driver against scripted fake selectors (fast, slow,
//! hanging, failing, unknown ids, too many ids) on a paused tokio clock:
//! every deadline is exact and nothing really sleeps.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bcode_prompt_config::{InvariantsConfig, InvariantsMode, OnTimeout};
use bcode_prompt_sections::{
    Decision, FallbackReason, FallbackUsed, FocusState, Guidance, InvariantCatalog,
    InvariantSelector, PathTaken, RelevantInvariants, Selection, SelectionOrigin, SelectorAnswer,
    SelectorError, SelectorFuture, SelectorRequest, TaskContext, Timings, parse_invariants,
};
use tokio::time::{Instant, sleep};

/// What one selector call does.
#[derive(Clone, Debug)]
enum Act {
    Answer(u64, &'static [&'static str]),
    Fail(u64),
    Hang,
}

/// Answers calls from a script and logs starts, answers and cancellations.
#[derive(Debug, Default)]
struct Fake {
    script: Mutex<VecDeque<Act>>,
    log: Arc<Mutex<Vec<String>>>,
    calls: Mutex<u32>,
}

/// Logs a call dropped before it finished: a cancelled provider call.
struct Guard {
    log: Arc<Mutex<Vec<String>>>,
    call: u32,
    done: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if !self.done {
            self.log
                .lock()
                .unwrap()
                .push(format!("call {} cancelled", self.call));
        }
    }
}

impl InvariantSelector for Fake {
    fn select(&self, request: SelectorRequest) -> SelectorFuture {
        let act = self.script.lock().unwrap().pop_front().unwrap_or(Act::Hang);
        let call = {
            let mut calls = self.calls.lock().unwrap();
            *calls += 1;
            *calls
        };
        let log = self.log.clone();
        log.lock()
            .unwrap()
            .push(format!("call {call} for {:?}", request.task.text));
        Box::pin(async move {
            let mut guard = Guard {
                log,
                call,
                done: false,
            };
            let result = match act {
                Act::Answer(ms, ids) => {
                    sleep(Duration::from_millis(ms)).await;
                    Ok(SelectorAnswer {
                        ids: ids.iter().map(|s| (*s).to_owned()).collect(),
                        task_summary: Some(format!("summary {call}")),
                    })
                }
                Act::Fail(ms) => {
                    sleep(Duration::from_millis(ms)).await;
                    Err(SelectorError::new("provider said 500"))
                }
                Act::Hang => std::future::pending().await,
            };
            guard.done = true;
            guard
                .log
                .lock()
                .unwrap()
                .push(format!("call {call} finished"));
            result
        })
    }
}

fn catalog() -> Arc<InvariantCatalog> {
    let file = |id: &str, keywords: &str| {
        (
            format!("{id}.md"),
            format!(
                "---\nid: {id}\ntitle: Title {id}\nsummary: About {id}\nkeywords: [{keywords}]\n---\nBody {id}\n"
            ),
        )
    };
    Arc::new(parse_invariants(vec![
        file("alpha", "parser"),
        file("beta", "templates"),
        file("gamma", "clock"),
        file("delta", "sidecar"),
    ]))
}

fn config(edit: impl FnOnce(&mut InvariantsConfig)) -> InvariantsConfig {
    let mut config = InvariantsConfig {
        mode: InvariantsMode::Relevant,
        ..InvariantsConfig::default()
    };
    config.selector.initial_timeout_ms = Some(2000);
    config.selector.background_timeout_ms = Some(1000);
    edit(&mut config);
    config
}

fn start(config: InvariantsConfig, script: &[Act]) -> (RelevantInvariants, Arc<Fake>) {
    let fake = Arc::new(Fake::default());
    fake.script.lock().unwrap().extend(script.iter().cloned());
    let driver = RelevantInvariants::new(config, catalog(), fake.clone());
    (driver, fake)
}

fn log(fake: &Fake) -> Vec<String> {
    fake.log.lock().unwrap().clone()
}

fn task(text: &str) -> TaskContext {
    TaskContext::new(text, &[])
}

fn focused(
    ids: &[&str],
    summary: Option<&str>,
    origin: SelectionOrigin,
    generation: u64,
) -> Guidance {
    Guidance::Focused(Selection {
        ids: ids.iter().map(|s| (*s).to_owned()).collect(),
        task_summary: summary.map(str::to_owned),
        origin,
        generation,
    })
}

fn selector(ids: &[&str], summary: &str, generation: u64) -> Guidance {
    focused(ids, Some(summary), SelectionOrigin::Selector, generation)
}

fn decision(path: PathTaken, guidance: Guidance, waited: u64, selector: Option<u64>) -> Decision {
    Decision {
        guidance,
        path,
        fallback: None,
        timings: Timings {
            waited: Duration::from_millis(waited),
            selector: selector.map(Duration::from_millis),
        },
        unknown_ids: Vec::new(),
        over_limit_ids: Vec::new(),
        events: Vec::new(),
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn timed_out(policy: OnTimeout, after: u64) -> Option<FallbackUsed> {
    Some(FallbackUsed {
        policy,
        reason: FallbackReason::TimedOut {
            after: Duration::from_millis(after),
        },
    })
}

fn failed(policy: OnTimeout) -> Option<FallbackUsed> {
    Some(FallbackUsed {
        policy,
        reason: FallbackReason::Failed {
            message: "provider said 500".to_owned(),
        },
    })
}

/// Every `on_timeout` value.
const POLICIES: [OnTimeout; 4] = [
    OnTimeout::Full,
    OnTimeout::Previous,
    OnTimeout::Deterministic,
    OnTimeout::None,
];

/// The event of the background call the final assistant turn starts.
const STARTED_2: &str = "background re-evaluation #2 started after the final assistant turn";

/// A first prompt `p1`, the final assistant turn committed (which starts
/// background call #2), `wait_ms` of quiet, then prompt `next`: its
/// decision.
async fn after_background(driver: &mut RelevantInvariants, wait_ms: u64, next: &str) -> Decision {
    driver.selection_for_prompt(&task("p1")).await;
    driver.on_final_assistant_turn_committed(&task("p1 done"));
    sleep(Duration::from_millis(wait_ms)).await;
    driver.selection_for_prompt(&task(next)).await
}

/// The events of background call #2 reaching its deadline: cancelled, or
/// `running` (what is said of a call left running).
fn deadline_events(cancel: bool, running: &str) -> Vec<String> {
    let end = if cancel {
        "selector call #2 cancelled at its deadline (cancel_on_timeout = true)"
    } else {
        running
    };
    strings(&[STARTED_2, end])
}

/// The selector log of [`after_background`] whose call #2 hangs.
fn hanging_background_calls(cancel: bool) -> Vec<String> {
    let mut calls = strings(&[
        "call 1 for \"p1\"",
        "call 1 finished",
        "call 2 for \"p1 done\"",
    ]);
    if cancel {
        calls.push("call 2 cancelled".to_owned());
    }
    calls
}

#[tokio::test(start_paused = true)]
async fn fast_answer_is_validated_and_reused_through_the_turn() {
    let (mut driver, fake) = start(config(|_| {}), &[Act::Answer(120, &["gamma", "alpha"])]);
    let got = driver.selection_for_prompt(&task("fix the clock")).await;
    let expected = decision(
        PathTaken::InitialSelection,
        selector(&["gamma", "alpha"], "summary 1", 1),
        120,
        Some(120),
    );
    assert_eq!(got, expected);
    assert_eq!(
        got.notes(),
        strings(&[
            "relevant mode: initial selection",
            "guidance: selector selection #1 [gamma, alpha]",
            "waited 120 ms; selector answered in 120 ms",
        ])
    );
    assert_eq!(
        log(&fake),
        strings(&["call 1 for \"fix the clock\"", "call 1 finished"])
    );
}

#[tokio::test(start_paused = true)]
async fn unknown_ids_and_ids_over_max_selected_are_dropped_and_reported() {
    let (mut driver, _) = start(
        config(|c| c.max_selected = 2),
        &[Act::Answer(
            5,
            &["alpha", "nope", "beta", "alpha", "gamma", "delta"],
        )],
    );
    let got = driver.selection_for_prompt(&task("t")).await;
    let mut expected = decision(
        PathTaken::InitialSelection,
        selector(&["alpha", "beta"], "summary 1", 1),
        5,
        Some(5),
    );
    expected.unknown_ids = strings(&["nope"]);
    expected.over_limit_ids = strings(&["gamma", "delta"]);
    assert_eq!(got, expected);
    assert_eq!(
        got.notes()[3..],
        strings(&[
            "dropped unknown ids from the selector: nope",
            "dropped ids beyond max_selected: gamma, delta",
        ])
    );
}

/// The guidance each `on_timeout` value gives a first prompt whose selector
/// hangs (no previous selection exists yet).
fn first_prompt_fallback(policy: OnTimeout) -> (Guidance, Vec<String>) {
    match policy {
        OnTimeout::Full => (Guidance::Catalog, vec![]),
        OnTimeout::None => (Guidance::Nothing, vec![]),
        OnTimeout::Previous => (
            Guidance::Catalog,
            strings(&["no previous valid selection: complete catalog"]),
        ),
        OnTimeout::Deterministic => (
            focused(
                &["gamma"],
                Some("touch the clock"),
                SelectionOrigin::Deterministic,
                0,
            ),
            vec![],
        ),
    }
}

#[tokio::test(start_paused = true)]
async fn a_hanging_first_selection_falls_back_per_on_timeout_with_and_without_cancel() {
    for policy in POLICIES {
        for cancel in [false, true] {
            let (mut driver, fake) = start(
                config(|c| {
                    c.selector.on_timeout = policy;
                    c.selector.cancel_on_timeout = cancel;
                }),
                &[Act::Hang],
            );
            let got = driver.selection_for_prompt(&task("touch the clock")).await;
            let (guidance, mut events) = first_prompt_fallback(policy);
            events.push(if cancel {
                "selector call #1 cancelled at its deadline (cancel_on_timeout = true)".to_owned()
            } else {
                "selector call #1 left running (cancel_on_timeout = false); a late answer is used from the next prompt on".to_owned()
            });
            let mut expected = decision(PathTaken::InitialSelection, guidance, 2000, None);
            expected.fallback = timed_out(policy, 2000);
            expected.events = events;
            assert_eq!(got, expected, "{policy:?} cancel={cancel}");
            let mut calls = strings(&["call 1 for \"touch the clock\""]);
            if cancel {
                calls.push("call 1 cancelled".to_owned());
            }
            tokio::task::yield_now().await;
            assert_eq!(log(&fake), calls, "{policy:?} cancel={cancel}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_slow_first_answer_is_adopted_late_unless_cancelled() {
    let script = [Act::Answer(3000, &["beta"])];
    let (mut driver, fake) = start(config(|_| {}), &script);
    let first = driver.selection_for_prompt(&task("t")).await;
    assert_eq!(first.guidance, Guidance::Catalog);
    sleep(Duration::from_millis(1500)).await;
    let next = driver.selection_for_prompt(&task("t2")).await;
    let mut expected = decision(
        PathTaken::AdoptedBackground,
        selector(&["beta"], "summary 1", 1),
        0,
        Some(3000),
    );
    expected.events = strings(&["selector call #1 answered 1000 ms after its deadline"]);
    assert_eq!(next, expected);
    assert_eq!(
        log(&fake),
        strings(&["call 1 for \"t\"", "call 1 finished"])
    );

    // With cancel_on_timeout the late answer never comes.
    let (mut driver, fake) = start(config(|c| c.selector.cancel_on_timeout = true), &script);
    driver.selection_for_prompt(&task("t")).await;
    sleep(Duration::from_millis(1500)).await;
    let next = driver.selection_for_prompt(&task("t2")).await;
    assert_eq!(
        next,
        decision(PathTaken::ReusedLast, Guidance::Catalog, 0, None)
    );
    assert_eq!(
        log(&fake),
        strings(&["call 1 for \"t\"", "call 1 cancelled"])
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_selection_falls_back_at_once() {
    let (mut driver, _) = start(
        config(|c| c.selector.on_timeout = OnTimeout::Deterministic),
        &[Act::Fail(40)],
    );
    let got = driver.selection_for_prompt(&task("the parser")).await;
    let mut expected = decision(
        PathTaken::InitialSelection,
        focused(
            &["alpha"],
            Some("the parser"),
            SelectionOrigin::Deterministic,
            0,
        ),
        40,
        None,
    );
    expected.fallback = failed(OnTimeout::Deterministic);
    assert_eq!(got, expected);
}

#[tokio::test(start_paused = true)]
async fn background_re_evaluation_never_delays_delivery_and_is_not_awaited_by_default() {
    let (mut driver, fake) = start(
        config(|c| c.selector.background_timeout_ms = None),
        &[Act::Answer(10, &["alpha"]), Act::Hang],
    );
    driver.selection_for_prompt(&task("p1")).await;
    let before = Instant::now();
    let started = driver.on_final_assistant_turn_committed(&task("p1 + answer"));
    // Synchronous and instant: the response is delivered with no wait.
    assert_eq!((started, Instant::now()), (Some(2), before));
    sleep(Duration::from_secs(3600)).await;
    let next = driver.selection_for_prompt(&task("p2")).await;
    let mut expected = decision(
        PathTaken::ReusedLast,
        selector(&["alpha"], "summary 1", 1),
        0,
        None,
    );
    expected.events = strings(&[
        STARTED_2,
        "background re-evaluation #2 still running; not waited for",
    ]);
    assert_eq!(next, expected);
    assert_eq!(
        log(&fake),
        strings(&[
            "call 1 for \"p1\"",
            "call 1 finished",
            "call 2 for \"p1 + answer\""
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn a_finished_background_answer_is_adopted_at_the_next_prompt() {
    let (mut driver, _) = start(
        config(|_| {}),
        &[
            Act::Answer(10, &["alpha"]),
            Act::Answer(300, &["delta", "beta"]),
        ],
    );
    let next = after_background(&mut driver, 400, "p2").await;
    let mut expected = decision(
        PathTaken::AdoptedBackground,
        selector(&["delta", "beta"], "summary 2", 2),
        0,
        Some(300),
    );
    expected.events = strings(&[STARTED_2]);
    assert_eq!(next, expected);
}

#[tokio::test(start_paused = true)]
async fn wait_for_background_on_next_prompt_waits_for_the_answer() {
    let (mut driver, _) = start(
        config(|c| c.selector.wait_for_background_on_next_prompt = true),
        &[Act::Answer(10, &["alpha"]), Act::Answer(700, &["gamma"])],
    );
    let next = after_background(&mut driver, 200, "p2").await;
    let mut expected = decision(
        PathTaken::WaitedForBackground,
        selector(&["gamma"], "summary 2", 2),
        500,
        Some(700),
    );
    expected.events = strings(&[STARTED_2]);
    assert_eq!(next, expected);
}

#[tokio::test(start_paused = true)]
async fn waiting_for_hanging_background_work_stops_at_its_deadline() {
    for cancel in [false, true] {
        let (mut driver, fake) = start(
            config(|c| {
                c.selector.wait_for_background_on_next_prompt = true;
                c.selector.on_timeout = OnTimeout::Previous;
                c.selector.cancel_on_timeout = cancel;
            }),
            &[Act::Answer(10, &["alpha"]), Act::Hang],
        );
        let next = after_background(&mut driver, 100, "p2").await;
        let mut expected = decision(
            PathTaken::WaitedForBackground,
            selector(&["alpha"], "summary 1", 1),
            900,
            None,
        );
        expected.fallback = timed_out(OnTimeout::Previous, 1000);
        expected.events = deadline_events(
            cancel,
            "selector call #2 left running (cancel_on_timeout = false)",
        );
        assert_eq!(next, expected, "cancel={cancel}");
        tokio::task::yield_now().await;
        assert_eq!(
            log(&fake),
            hanging_background_calls(cancel),
            "cancel={cancel}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn background_timeout_without_waiting_falls_back_once_per_on_timeout() {
    for policy in POLICIES {
        for cancel in [false, true] {
            let (mut driver, fake) = start(
                config(|c| {
                    c.selector.on_timeout = policy;
                    c.selector.cancel_on_timeout = cancel;
                }),
                &[Act::Answer(10, &["alpha"]), Act::Hang],
            );
            let next = after_background(&mut driver, 1500, "the clock").await;
            let guidance = match policy {
                OnTimeout::Full => Guidance::Catalog,
                OnTimeout::None => Guidance::Nothing,
                OnTimeout::Previous => selector(&["alpha"], "summary 1", 1),
                OnTimeout::Deterministic => focused(
                    &["gamma"],
                    Some("the clock"),
                    SelectionOrigin::Deterministic,
                    1,
                ),
            };
            let mut expected = decision(PathTaken::BackgroundFallback, guidance, 0, None);
            expected.fallback = timed_out(policy, 1000);
            expected.events = deadline_events(
                cancel,
                "selector call #2 still running past its deadline (cancel_on_timeout = false)",
            );
            assert_eq!(next, expected, "{policy:?} cancel={cancel}");
            assert_eq!(
                log(&fake),
                hanging_background_calls(cancel),
                "{policy:?} cancel={cancel}"
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn cancel_stale_cancels_superseded_background_work() {
    for cancel_stale in [false, true] {
        let (mut driver, fake) = start(
            config(|c| {
                c.selector.cancel_stale = cancel_stale;
                c.selector.background_timeout_ms = None;
            }),
            &[
                Act::Answer(10, &["alpha"]),
                Act::Answer(500, &["delta"]),
                Act::Answer(100, &["beta"]),
            ],
        );
        driver.selection_for_prompt(&task("p1")).await;
        driver.on_final_assistant_turn_committed(&task("r1"));
        sleep(Duration::from_millis(50)).await;
        driver.on_final_assistant_turn_committed(&task("r2"));
        sleep(Duration::from_millis(600)).await;
        let next = driver.selection_for_prompt(&task("p2")).await;
        let mut expected = decision(
            PathTaken::AdoptedBackground,
            selector(&["beta"], "summary 3", 3),
            0,
            Some(100),
        );
        let mut events = strings(&[STARTED_2]);
        if cancel_stale {
            events.push("cancelled stale selector call #2 (cancel_stale = true)".to_owned());
        }
        events
            .push("background re-evaluation #3 started after the final assistant turn".to_owned());
        if !cancel_stale {
            // The stale answer arrived last and changes nothing.
            events.push(
                "answer of stale selector call #2 ignored (a newer selection exists)".to_owned(),
            );
        }
        expected.events = events;
        // `took` is the adopted answer's: with both answers, #3's.
        assert_eq!(next, expected, "cancel_stale={cancel_stale}");
        let calls = if cancel_stale {
            strings(&[
                "call 1 for \"p1\"",
                "call 1 finished",
                "call 2 for \"r1\"",
                // The abort is processed by the runtime after the newer call
                // has been started.
                "call 3 for \"r2\"",
                "call 2 cancelled",
                "call 3 finished",
            ])
        } else {
            strings(&[
                "call 1 for \"p1\"",
                "call 1 finished",
                "call 2 for \"r1\"",
                "call 3 for \"r2\"",
                "call 3 finished",
                "call 2 finished",
            ])
        };
        assert_eq!(log(&fake), calls, "cancel_stale={cancel_stale}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_failed_background_run_keeps_the_previous_selection_with_previous() {
    let (mut driver, _) = start(
        config(|c| c.selector.on_timeout = OnTimeout::Previous),
        &[Act::Answer(10, &["alpha"]), Act::Fail(20)],
    );
    let next = after_background(&mut driver, 30, "p2").await;
    let mut expected = decision(
        PathTaken::BackgroundFallback,
        selector(&["alpha"], "summary 1", 1),
        0,
        None,
    );
    expected.fallback = failed(OnTimeout::Previous);
    expected.events = strings(&[STARTED_2]);
    assert_eq!(next, expected);
}

#[tokio::test(start_paused = true)]
async fn disabled_and_full_mode_do_no_selector_work() {
    for (edit, path, guidance) in [
        (
            (|c: &mut InvariantsConfig| c.enabled = false) as fn(&mut InvariantsConfig),
            PathTaken::Disabled,
            Guidance::Nothing,
        ),
        (
            |c: &mut InvariantsConfig| c.mode = InvariantsMode::Full,
            PathTaken::FullMode,
            Guidance::Catalog,
        ),
    ] {
        let (mut driver, fake) = start(config(edit), &[Act::Answer(1, &["alpha"])]);
        let got = driver.selection_for_prompt(&task("p1")).await;
        assert_eq!(driver.on_final_assistant_turn_committed(&task("r1")), None);
        assert_eq!(got, decision(path, guidance, 0, None));
        assert_eq!(log(&fake), Vec::<String>::new());
    }
}

#[tokio::test(start_paused = true)]
async fn a_restored_sidecar_focus_is_reused_without_a_selector_call() {
    let (mut driver, fake) = start(config(|_| {}), &[]);
    driver.restore(&FocusState {
        generation: 4,
        ids: strings(&["beta", "gone"]),
        task_summary: Some("old task".to_owned()),
        origin: SelectionOrigin::Selector,
    });
    let got = driver.selection_for_prompt(&task("p")).await;
    let mut expected = decision(
        PathTaken::ReusedLast,
        selector(&["beta"], "old task", 4),
        0,
        None,
    );
    expected.events = strings(&[
        "recovered focus #4 from the session sidecar",
        "sidecar ids no longer usable, dropped: gone",
    ]);
    assert_eq!(got, expected);
    assert_eq!(log(&fake), Vec::<String>::new());
    assert_eq!(
        driver.on_final_assistant_turn_committed(&task("r")),
        Some(5)
    );
}

#[test]
fn without_a_runtime_background_work_is_skipped_and_reported() {
    let (mut driver, _) = start(config(|_| {}), &[]);
    assert_eq!(driver.on_final_assistant_turn_committed(&task("r")), None);
}
