//! Many sessions in one process (issue 11): memory per additional session
//! on one shared registry snapshot, and turns from many concurrent
//! sessions on the machine's cores (throughput, p50/p99 latency, against
//! one session alone). Prints one JSON line.
//!
//! `sessions_scale [--sessions N] [--turns K] [--skills S]` (defaults 100,
//! 5, 10000); build with `--release`.

// A measuring tool may stop loudly when its fixture cannot be built.
#![allow(clippy::expect_used, clippy::panic, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use bcode_benches::corpus;
use bcode_benches::sessions::{rss_kib, session_options};
use bcode_prompt::skills::SharedSkills;
use bcode_prompt::{PromptSession, SkillLifetime, TurnInput};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

fn main() {
    let sessions = arg("--sessions", 100);
    let turns = arg("--turns", 5);
    let skills = arg("--skills", 10_000);
    let corpus = corpus(skills).expect("the corpus");
    let home = tempfile::tempdir().expect("a home");
    let shared = SharedSkills::new();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("a runtime");
    let input = || TurnInput::new("fix the failing cargo test");

    // Memory: one session and its turn, then the others on the same pool,
    // each holding its last turn (its own prompt text) as a host would.
    let (open, kept, rss_one, rss_all, held_text) = runtime.block_on(async {
        let options = || {
            session_options(&corpus, home.path(), true)
                .skill_lifetime(SkillLifetime::Shared(shared.clone()))
        };
        let mut open = Vec::with_capacity(sessions);
        let mut kept = Vec::with_capacity(sessions);
        let mut first = PromptSession::open(options()).await.expect("opens");
        kept.push(first.next_turn(input()).await.expect("a turn"));
        open.push(first);
        let rss_one = rss_kib().unwrap_or(0);
        let mut held_text = 0usize;
        for _ in 1..sessions {
            let mut session = PromptSession::open(options()).await.expect("opens");
            let turn = session.next_turn(input()).await.expect("a turn");
            held_text += turn.system().len() + turn.request_context().len();
            kept.push(turn);
            open.push(session);
        }
        let rss_all = rss_kib().unwrap_or(0);
        (open, kept, rss_one, rss_all, held_text)
    });
    let extra = sessions.saturating_sub(1).max(1) as f64;
    let growth_kib = rss_all.saturating_sub(rss_one) as f64;
    let per_session_kib = growth_kib / extra;
    let per_session_beyond_text_kib = (growth_kib - held_text as f64 / 1024.0) / extra;
    drop(kept);

    // One session alone, `turns` turns.
    let mut sessions_vec = open;
    let alone: Vec<Duration> = runtime.block_on(async {
        let session = &mut sessions_vec[0];
        let mut out = Vec::new();
        for _ in 0..turns {
            let started = Instant::now();
            session.next_turn(input()).await.expect("a turn");
            out.push(started.elapsed());
        }
        out
    });

    // Every session at once, `turns` turns each, on two worker threads.
    let started = Instant::now();
    let mut latencies: Vec<Duration> = runtime.block_on(async {
        let mut tasks = Vec::new();
        for mut session in sessions_vec.drain(..) {
            tasks.push(tokio::spawn(async move {
                let mut out = Vec::new();
                for _ in 0..turns {
                    let started = Instant::now();
                    session
                        .next_turn(TurnInput::new("fix the failing cargo test"))
                        .await
                        .expect("a turn");
                    out.push(started.elapsed());
                }
                out
            }));
        }
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.expect("a session task"));
        }
        all
    });
    let wall = started.elapsed();
    latencies.sort();
    let mut alone_sorted = alone.clone();
    alone_sorted.sort();
    let alone_mean =
        alone.iter().map(Duration::as_secs_f64).sum::<f64>() / alone.len().max(1) as f64;
    let concurrent_turns = latencies.len();
    let throughput = concurrent_turns as f64 / wall.as_secs_f64();
    println!(
        "{{\"skills\": {skills}, \"sessions\": {sessions}, \"turns_per_session\": {turns}, \
         \"rss_one_session_kib\": {rss_one}, \"rss_all_sessions_kib\": {rss_all}, \
         \"held_prompt_text_kib\": {}, \"per_additional_session_kib\": {per_session_kib:.1}, \
         \"per_additional_session_beyond_prompt_kib\": {per_session_beyond_text_kib:.1}, \
         \"alone_turn_ms_p50\": {:.2}, \"alone_turns_per_s\": {:.1}, \
         \"concurrent_turns\": {concurrent_turns}, \"concurrent_wall_s\": {:.2}, \
         \"concurrent_turns_per_s\": {throughput:.1}, \"concurrent_turn_ms_p50\": {:.2}, \
         \"concurrent_turn_ms_p99\": {:.2}, \"concurrent_turn_ms_max\": {:.2}}}",
        held_text / 1024,
        percentile(&alone_sorted, 0.5),
        1.0 / alone_mean.max(f64::EPSILON),
        wall.as_secs_f64(),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        percentile(&latencies, 1.0),
    );
}
