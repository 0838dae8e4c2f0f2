//! One git probe read of a repository, as a one-shot `render` makes it, for
//! `valgrind --tool=callgrind` (issue 43): the CLI's 1.5 s deadline cuts a
//! read short under valgrind, this one waits a minute.
//!
//! ```text
//! git_read --repo DIR --state DIR [--times N] [--groups N]
//! ```
//!
//! `--state` is the racy cache's folder (kept between runs, as a user's
//! state folder is); `--times` reads that many times in one process (the
//! first pays what a one-shot render pays); `--groups` sets how many
//! threads a large scan is split over (1: never split; default: the
//! probe's). Prints the last facts' kind.

// A measuring tool: a bad argument ends the run with a message, which is
// what `expect`/`panic` give.
#![allow(clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::time::Duration;

use bcode_prompt_sections::{GitCache, GitFacts, GitProbeOptions, StatusSplit, read_git};

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut repo, mut state, mut times) = (None, None, 1usize);
    let mut split = StatusSplit::default();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--repo" => repo = args.next().map(PathBuf::from),
            "--state" => state = args.next().map(PathBuf::from),
            "--times" => {
                times = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--times takes a number");
            }
            "--groups" => {
                split.groups = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--groups takes a number");
            }
            other => panic!("unknown argument {other}; usage: git_read --repo DIR --state DIR"),
        }
    }
    let repo = repo.expect("--repo DIR");
    let state = state.expect("--state DIR (the racy cache's folder)");
    std::fs::create_dir_all(&state).expect("the state folder can be made");
    let options = GitProbeOptions {
        deadline: Duration::from_secs(60),
        cache: Some(GitCache {
            dir: state,
            // The shipped racy window (`bcode_fs::RACY_WINDOW`).
            racy_window: Duration::from_secs(2),
            user_git_files: GitCache::user_git_files(&std::env::vars().collect()),
        }),
        split,
        ..GitProbeOptions::default()
    };
    let mut last = None;
    for _ in 0..times {
        last = Some(read_git(&repo, &options));
    }
    match last {
        Some(GitFacts::Repository(facts)) => println!("{:?}", facts.status),
        other => println!("{other:?}"),
    }
}
