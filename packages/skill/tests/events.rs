//! The skill event sinks and the durable JSON-lines log: round trip, one
//! durable line per emit, and recovery from torn, damaged and oversized lines.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{
    Clock, EventRecord, EventSink, JsonlSink, LogProblem, LogProblemKind, MAX_RECORD_BYTES,
    MemorySink, ReadOutcome, Templates, context_loaded, read_events,
};
use bcode_skill_models::{
    Figure, RelevanceMatch, RelevanceTerm, SkillContextRequest, SkillEvent, SkillId, SourceKind,
};

/// A clock that starts at 2026-03-01T12:00:00Z and advances one second per
/// reading, so each record has a distinct, predictable time.
#[derive(Clone, Default)]
struct StepClock(Arc<AtomicU64>);

impl Clock for StepClock {
    fn now(&self) -> SystemTime {
        let step = self.0.fetch_add(1, Ordering::SeqCst);
        UNIX_EPOCH + Duration::from_secs(1_772_366_400 + step)
    }
}

fn sink(path: &Path) -> JsonlSink {
    JsonlSink::open(path, Box::new(StepClock::default())).unwrap()
}

fn activated(id: &str) -> SkillEvent {
    SkillEvent::SkillActivated {
        id: id.into(),
        source: "repo:.bcode/skills".into(),
        arguments: vec!["diagnose".into(), "line\nbreak".into()],
        arguments_truncated: false,
        arguments_bytes: None,
        reason: "explicit".into(),
        relevance: None,
    }
}

fn record(seq: u64, at: &str, event: SkillEvent) -> EventRecord {
    EventRecord {
        seq,
        at: at.into(),
        event,
    }
}

/// The record a fresh [`sink`] writes as its `seq`th (its clock steps one
/// second a reading).
fn stepped(seq: u64, event: SkillEvent) -> EventRecord {
    record(seq, &format!("2026-03-01T12:00:0{seq}.000Z"), event)
}

/// What reading a log gives whose good records are `a` then `b`, written by
/// one sink, around the lines `problems` are about.
fn a_then_b(problems: Vec<LogProblem>) -> ReadOutcome {
    ReadOutcome {
        events: vec![stepped(0, activated("a")), stepped(1, activated("b"))],
        problems,
    }
}

fn malformed(line: u64, reason: &str) -> LogProblem {
    LogProblem {
        line,
        kind: LogProblemKind::Malformed {
            reason: reason.into(),
        },
    }
}

/// A temporary folder (deleted when dropped) and a log path inside it.
fn log_path() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    (dir, path)
}

/// A suggestion the relevance index made, with its record.
fn storybook_suggested() -> SkillEvent {
    SkillEvent::SkillSuggested {
        id: "storybook".into(),
        source: "repo:.agents/skills".into(),
        matched_keywords: Vec::new(),
        matched_paths: Vec::new(),
        relevance: Some(RelevanceMatch {
            score: Figure::new(12.511_34),
            coverage: Figure::new(0.75),
            matched: vec![
                RelevanceTerm {
                    term: "storybook".into(),
                    fields: vec!["name".into(), "body".into()],
                },
                RelevanceTerm {
                    term: "stories".into(),
                    fields: vec!["description".into()],
                },
            ],
        }),
    }
}

fn all_events() -> Vec<SkillEvent> {
    vec![
        SkillEvent::SkillSuggested {
            id: "rust-debugging".into(),
            source: "repo:.bcode/skills".into(),
            matched_keywords: vec!["cargo".into()],
            matched_paths: Vec::new(),
            relevance: None,
        },
        storybook_suggested(),
        activated("rust-debugging"),
        SkillEvent::SkillContextLoaded {
            id: "rust-debugging".into(),
            source: "repo:.bcode/skills".into(),
            bytes: 1234,
            truncated: true,
            preview: "# Rust Debugging…".into(),
        },
        SkillEvent::SkillInvocationFailed {
            id: "pdf".into(),
            error: "no skill with id `pdf`".into(),
        },
        SkillEvent::SkillDeactivated {
            id: "rust-debugging".into(),
            reason: "user".into(),
        },
        SkillEvent::SkillsReloaded {
            added: vec!["a".into()],
            changed: vec![],
            removed: vec!["b".into()],
        },
    ]
}

#[test]
fn memory_sink_keeps_events_in_order() {
    let mut sink = MemorySink::default();
    for event in all_events() {
        sink.emit(&event).unwrap();
    }
    assert_eq!(sink.events, all_events());
}

#[test]
fn round_trip_with_sequence_and_time() {
    let (_dir, path) = log_path();
    let mut sink = sink(&path);
    for event in all_events() {
        sink.emit(&event).unwrap();
    }
    let expected: Vec<EventRecord> = all_events()
        .into_iter()
        .enumerate()
        .map(|(i, e)| stepped(i as u64, e))
        .collect();
    assert_eq!(
        read_events(&path).unwrap(),
        ReadOutcome {
            events: expected,
            problems: vec![],
        }
    );
}

#[test]
fn the_line_format_is_flat_and_tagged() {
    let (_dir, path) = log_path();
    sink(&path)
        .emit(&SkillEvent::SkillDeactivated {
            id: "a".into(),
            reason: "user".into(),
        })
        .unwrap();
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "{\"seq\":0,\"at\":\"2026-03-01T12:00:00.000Z\",\"event\":\"SkillDeactivated\",\"id\":\"a\",\"reason\":\"user\"}\n"
    );
}

/// The relevance index's record of a suggestion is one more object on the
/// line, its figures rounded to four decimals; a line written before it
/// existed (no `relevance`) reads as a suggestion without one.
#[test]
fn a_suggestion_records_the_index_score_and_old_lines_still_read() {
    let (_dir, path) = log_path();
    sink(&path).emit(&storybook_suggested()).unwrap();
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "{\"seq\":0,\"at\":\"2026-03-01T12:00:00.000Z\",\"event\":\"SkillSuggested\",\"id\":\"storybook\",\"source\":\"repo:.agents/skills\",\"matched_keywords\":[],\"relevance\":{\"score\":12.5113,\"coverage\":0.75,\"matched\":[{\"term\":\"storybook\",\"fields\":[\"name\",\"body\"]},{\"term\":\"stories\",\"fields\":[\"description\"]}]}}\n"
    );
    append(
        &path,
        b"{\"seq\":1,\"at\":\"2026-03-01T12:00:01.000Z\",\"event\":\"SkillSuggested\",\"id\":\"rust\",\"source\":\"repo:.bcode/skills\",\"matched_keywords\":[\"rust\"]}\n",
    );
    assert_eq!(
        read_events(&path).unwrap().events,
        [
            stepped(0, storybook_suggested()),
            stepped(
                1,
                SkillEvent::SkillSuggested {
                    id: "rust".into(),
                    source: "repo:.bcode/skills".into(),
                    matched_keywords: vec!["rust".into()],
                    matched_paths: Vec::new(),
                    relevance: None,
                }
            ),
        ]
    );
}

#[test]
fn every_emit_is_on_disk_before_it_returns() {
    let (_dir, path) = log_path();
    let mut sink = sink(&path);
    let mut expected = Vec::new();
    for (i, event) in all_events().into_iter().enumerate() {
        sink.emit(&event).unwrap();
        expected.push(stepped(i as u64, event));
        // Read through a separate handle: what another process would see.
        assert_eq!(
            read_events(&path).unwrap(),
            ReadOutcome {
                events: expected.clone(),
                problems: vec![],
            },
            "after emit {i}"
        );
    }
}

fn append(path: &Path, bytes: &[u8]) {
    fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

#[test]
fn a_torn_last_line_is_skipped_and_reported() {
    let (_dir, path) = log_path();
    let mut sink = sink(&path);
    sink.emit(&activated("a")).unwrap();
    drop(sink);
    let torn = b"{\"seq\":1,\"at\":\"2026-03-01T12:00:01.000Z\",\"event\":\"SkillDeac";
    append(&path, torn);
    assert_eq!(
        read_events(&path).unwrap(),
        ReadOutcome {
            events: vec![stepped(0, activated("a"))],
            problems: vec![LogProblem {
                line: 2,
                kind: LogProblemKind::TornTail { bytes: torn.len() },
            }],
        }
    );
}

#[test]
fn a_complete_record_without_its_newline_is_still_torn() {
    let (_dir, path) = log_path();
    let line = "{\"seq\":0,\"at\":\"2026-03-01T12:00:00.000Z\",\"event\":\"SkillDeactivated\",\"id\":\"a\",\"reason\":\"user\"}";
    fs::write(&path, line).unwrap();
    assert_eq!(
        read_events(&path).unwrap(),
        ReadOutcome {
            events: vec![],
            problems: vec![LogProblem {
                line: 1,
                kind: LogProblemKind::TornTail { bytes: line.len() },
            }],
        }
    );
}

#[test]
fn reopening_after_a_torn_line_starts_a_fresh_line() {
    let (_dir, path) = log_path();
    let mut first = sink(&path);
    first.emit(&activated("a")).unwrap();
    drop(first);
    append(&path, b"{\"seq\":1,\"at\":\"2026-03-0");

    let mut reopened = JsonlSink::open(&path, Box::new(StepClock::default())).unwrap();
    // The torn record was never acknowledged, so its number is reused.
    assert_eq!(reopened.next_seq(), 1);
    reopened.emit(&activated("b")).unwrap();
    assert_eq!(
        read_events(&path).unwrap(),
        ReadOutcome {
            events: vec![
                stepped(0, activated("a")),
                record(1, "2026-03-01T12:00:00.000Z", activated("b")),
            ],
            problems: vec![malformed(
                2,
                "EOF while parsing a string at line 1 column 24"
            )],
        }
    );
}

#[test]
fn garbage_in_the_middle_is_reported_per_line() {
    let (_dir, path) = log_path();
    let mut sink = sink(&path);
    sink.emit(&activated("a")).unwrap();
    append(&path, b"not json\n\n\xff\xfe\n{\"seq\":9,\"event\":\"Nope\"}\n{\"seq\":9,\"at\":\"x\",\"event\":\"Nope\"}\n");
    sink.emit(&activated("b")).unwrap();
    assert_eq!(
        read_events(&path).unwrap(),
        a_then_b(vec![
            malformed(2, "expected ident at line 1 column 2"),
            malformed(3, "blank line"),
            malformed(
                4,
                "not UTF-8: invalid utf-8 sequence of 1 bytes from index 0"
            ),
            malformed(5, "missing field `at` at line 1 column 24"),
            malformed(
                6,
                "unknown variant `Nope`, expected one of `SkillSuggested`, `SkillActivated`, `SkillDeactivated`, `SkillContextLoaded`, `SkillInvocationFailed`, `SkillsReloaded` at line 1 column 33"
            ),
        ])
    );
}

#[test]
fn an_oversized_line_is_skipped_without_failing() {
    let (_dir, path) = log_path();
    let mut sink = sink(&path);
    sink.emit(&activated("a")).unwrap();
    let big = MAX_RECORD_BYTES + 10;
    let mut line = vec![b'x'; big];
    line.push(b'\n');
    append(&path, &line);
    sink.emit(&activated("b")).unwrap();
    // An oversized torn tail is reported by its size too.
    append(&path, &vec![b'y'; big]);
    let oversized = |line| LogProblem {
        line,
        kind: LogProblemKind::Oversized { bytes: big },
    };
    assert_eq!(
        read_events(&path).unwrap(),
        a_then_b(vec![oversized(2), oversized(4)])
    );
}

#[test]
fn the_sink_refuses_records_the_reader_would_skip() {
    let (_dir, path) = log_path();
    let mut sink = sink(&path);
    let err = sink
        .emit(&SkillEvent::SkillInvocationFailed {
            id: "a".into(),
            error: "e".repeat(MAX_RECORD_BYTES),
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "event record is {} bytes; the limit is {MAX_RECORD_BYTES}",
            MAX_RECORD_BYTES + 93
        )
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), "");
    assert_eq!(sink.next_seq(), 0);
}

#[test]
fn context_loaded_carries_a_bounded_preview_not_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let body = "0123456789".repeat(100);
    support::write_tree(
        dir.path(),
        &[(
            "long/SKILL.md",
            &format!("---\ndescription: A long skill\n---\n{body}\n"),
        )],
    );
    let registry = support::build(
        &[support::root(
            SourceKind::RepoBcode,
            "repo:.bcode/skills",
            dir.path(),
        )],
        &SkillsConfig::default(),
    );
    let response = registry
        .context(
            &SkillContextRequest {
                id: SkillId::parse("long").unwrap(),
                arguments: vec![],
                raw_arguments: None,
                substitute_arguments: true,
                max_bytes: None,
                preview_max_chars: 40,
            },
            &Templates::builtin(),
        )
        .unwrap();
    let event = context_loaded(&response);
    assert_eq!(
        event,
        SkillEvent::SkillContextLoaded {
            id: "long".into(),
            source: "repo:.bcode/skills".into(),
            bytes: response.text.len(),
            truncated: false,
            preview: "0123456789012345… [984 more characters]".into(),
        }
    );
    // The preview respects `preview_max_chars`, marker included; the full
    // body is in the injected text but never in the event.
    assert_eq!(response.preview.chars().count(), 39);
    assert!(response.text.contains(&body));
    assert!(!serde_json::to_string(&event).unwrap().contains(&body));
}
