//! Per-turn cost of a `PromptSession` at 10,000 skills (issue 11): the
//! session's first turn (open: config, templates, discovery without the
//! disk cache, then the first assembly) against a later turn in which
//! nothing changed. Git sections are off in both: git status is per turn
//! by nature and measured by the `render` bench.

// A benchmark may stop loudly when its fixture cannot be built.
#![allow(clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use bcode_benches::corpus;
use bcode_benches::sessions::session_options as options;
use bcode_prompt::{PromptSession, TurnInput};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

fn turns(c: &mut Criterion) {
    let corpus = corpus(10_000).expect("the 10,000-skill corpus");
    let home = tempfile::tempdir().expect("a home");
    let input = || TurnInput::new("fix the failing cargo test");

    let mut group = c.benchmark_group("turns");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    group.bench_function("first_turn_10000", |b| {
        b.iter_batched(
            || (),
            |()| {
                let mut session =
                    PromptSession::open_blocking(options(&corpus, home.path(), false))
                        .expect("opens");
                black_box(session.next_turn_blocking(input()).expect("a turn"));
                session
            },
            BatchSize::PerIteration,
        );
    });
    for (name, watch) in [
        ("unchanged_turn_10000_stamps", false),
        ("unchanged_turn_10000_watching", true),
    ] {
        let mut session =
            PromptSession::open_blocking(options(&corpus, home.path(), watch)).expect("opens");
        let first = session.next_turn_blocking(input()).expect("a turn");
        eprintln!(
            "{name}: system {} bytes, request context {} bytes",
            first.system().len(),
            first.request_context().len()
        );
        group.bench_function(name, |b| {
            b.iter(|| {
                let turn = session.next_turn_blocking(input()).expect("a turn");
                assert!(!turn.changes.any(), "{:?}", turn.changes);
                black_box(turn)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, turns);
criterion_main!(benches);
