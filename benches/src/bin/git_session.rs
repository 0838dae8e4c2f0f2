//! The git cost of a long-lived session's turn (issue 43 item 4), before
//! and after `GitSession`, measured in pairs on one repository (made by
//! `benches/scripts/gen_git_repo.py`). Prints one JSON line on stdout.
//!
//! ```text
//! git_session --repo DIR [--rounds N]
//! ```
//!
//! Each round times, in turning order:
//!
//! * `read`: one `read::read` with the racy cache in a state folder: what
//!   every turn of a session ran before (`before` of the steady turn);
//! * `steady`: one turn of a `GitSession` that has read the repository and
//!   seen no change since (`after`; an untimed turn first takes in the
//!   other sides' touches);
//! * `first`: the first turn of a fresh `GitSession` (the watch is made,
//!   then the repository read): what the watch adds to a read;
//! * `touched` / `touched_read`: one tracked file rewritten with the same
//!   bytes, then a session turn (a change: read again, the watch kept, as
//!   only a file changed) or a plain read.
//!
//! Whole `PromptSession` turns, every section on but the skills: a steady
//! turn of the default session (`turn_steady`, again after an untimed one)
//! against the same of a
//! `SkillLifetime::SingleTurn` session, which reads git every turn as every
//! session did before (`turn_every`). Medians over the rounds; ratios are
//! medians of per-round ratios.

// A measuring tool: a bad argument or a repository that cannot be read
// ends the run with a message, which is what `expect`/`panic` give.
#![allow(clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bcode_benches::{median, rounds_value};
use bcode_prompt::{PromptSession, SessionOptions, SkillLifetime, TurnInput};
use bcode_prompt_sections::{GitCache, GitFacts, GitProbeOptions, GitSession, read_git};

const WARMUP: usize = 3;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut rounds = 21;
    let mut repo: Option<PathBuf> = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => {
                rounds = rounds_value(args.next()).expect("--rounds takes a positive number");
            }
            "--repo" => repo = args.next().map(PathBuf::from),
            other => panic!("unknown argument {other}; usage: git_session --repo DIR [--rounds N]"),
        }
    }
    let repo = repo.expect("--repo DIR (see benches/scripts/gen_git_repo.py)");
    let repo = repo.canonicalize().expect("the repository exists");
    let state = tempfile::tempdir().expect("a state folder");
    let options = GitProbeOptions {
        // Long enough that no read is cut short: the work is what is timed.
        deadline: Duration::from_secs(60),
        cache: Some(GitCache {
            dir: state.path().to_path_buf(),
            // The shipped racy window (`bcode_fs::RACY_WINDOW`).
            racy_window: Duration::from_secs(2),
            user_git_files: GitCache::user_git_files(&std::env::vars().collect()),
        }),
        ..GitProbeOptions::default()
    };
    let touched_file = first_tracked(&repo);
    let expected = read_git(&repo, &options);
    assert!(matches!(expected, GitFacts::Repository(_)), "{expected:?}");

    let steady_session = GitSession::new(true);
    let _ = steady_session.start(&repo, &options).finish();
    let changed_session = GitSession::new(true);
    let _ = changed_session.start(&repo, &options).finish();
    let home = tempfile::tempdir().expect("a home");
    let mut turn_steady = prompt_session(&repo, home.path(), SkillLifetime::Watched);
    let mut turn_every = prompt_session(&repo, home.path(), SkillLifetime::SingleTurn);
    let _ = turn(&mut turn_steady);
    let _ = turn(&mut turn_every);

    let names = [
        "read",
        "steady",
        "first",
        "touched",
        "touched_read",
        "turn_steady",
        "turn_every",
    ];
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for round in 0..WARMUP + rounds {
        let mut times = [0.0; 7];
        let order: Vec<usize> = if round % 2 == 0 {
            (0..names.len()).collect()
        } else {
            (0..names.len()).rev().collect()
        };
        for which in order {
            times[which] = match which {
                0 => timed(|| read_git(&repo, &options)),
                1 => {
                    // Untimed: takes in the other sides' touches, so the
                    // timed turn is a steady one.
                    let _ = steady_session.start(&repo, &options).finish();
                    let reused = steady_session.stats().reused;
                    let time = timed(|| steady_session.start(&repo, &options).finish());
                    assert_eq!(steady_session.stats().reused, reused + 1, "not steady");
                    time
                }
                2 => timed(|| GitSession::new(true).start(&repo, &options).finish()),
                3 => {
                    touch(&touched_file);
                    timed(|| changed_session.start(&repo, &options).finish())
                }
                4 => {
                    touch(&touched_file);
                    timed(|| read_git(&repo, &options))
                }
                5 => {
                    let _ = turn(&mut turn_steady);
                    timed_turn(&mut turn_steady)
                }
                _ => timed_turn(&mut turn_every),
            };
        }
        if round >= WARMUP {
            for (slot, time) in samples.iter_mut().zip(times) {
                slot.push(time);
            }
        }
    }
    let stats = steady_session.stats();
    let ratio = |a: usize, b: usize| {
        let mut r: Vec<f64> = samples[a]
            .iter()
            .zip(&samples[b])
            .map(|(x, y)| x / y)
            .collect();
        median(&mut r)
    };
    let ratios = serde_json::json!({
        "read_over_steady": ratio(0, 1),
        "first_over_read": ratio(2, 0),
        "touched_over_touched_read": ratio(3, 4),
        "turn_every_over_turn_steady": ratio(6, 5),
    });
    let mut medians = serde_json::Map::new();
    for (name, slot) in names.iter().zip(samples.iter_mut()) {
        medians.insert(format!("{name}_ms"), serde_json::json!(median(slot) * 1e3));
    }
    println!(
        "{}",
        serde_json::json!({
            "repo": repo.display().to_string(),
            "rounds": rounds,
            "medians": medians,
            "ratios": ratios,
            "steady_session": {"reads": stats.reads, "reused": stats.reused, "watches": stats.watches},
            "touched_session": {
                "reads": changed_session.stats().reads,
                "watches": changed_session.stats().watches,
            },
            "watched": stats.unwatched.is_none(),
        })
    );
}

fn timed(run: impl FnOnce() -> GitFacts) -> f64 {
    let start = Instant::now();
    let facts = run();
    let time = start.elapsed().as_secs_f64();
    assert!(matches!(facts, GitFacts::Repository(_)), "{facts:?}");
    time
}

fn timed_turn(session: &mut PromptSession) -> f64 {
    let start = Instant::now();
    let text = turn(session);
    let time = start.elapsed().as_secs_f64();
    assert!(text.contains("Git status"), "no git status in the turn");
    time
}

fn turn(session: &mut PromptSession) -> String {
    let turn = session
        .next_turn_blocking(TurnInput::new("go on"))
        .expect("a turn");
    session.commit_turn("done");
    format!("{}{}", turn.system(), turn.request_context())
}

fn prompt_session(repo: &Path, home: &Path, lifetime: SkillLifetime) -> PromptSession {
    let options = SessionOptions::new(repo)
        .env([("HOME".to_owned(), home.display().to_string())])
        .set("skills.enabled=false")
        .skill_lifetime(lifetime);
    PromptSession::open_blocking(options).expect("a session")
}

/// The first regular file of the repository's first folder (a tracked one
/// in a generated repository).
fn first_tracked(repo: &Path) -> PathBuf {
    let git = git2::Repository::open(repo).expect("a repository");
    let index = git.index().expect("its index");
    let entry = index.get(0).expect("a tracked file");
    repo.join(String::from_utf8(entry.path).expect("a UTF-8 path"))
}

/// Rewrites `path` with its own bytes: a change event, the same content.
fn touch(path: &Path) {
    let bytes = std::fs::read(path).expect("the tracked file");
    std::fs::write(path, bytes).expect("rewritten");
}
