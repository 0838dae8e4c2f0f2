//! The façade re-reads invariants when `[invariants] max_files` changes
//! between turns, even though no invariant file changed (issue 12).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use bcode_prompt::{PromptSession, TurnInput};
use common::{Repo, at, write};

use std::time::Duration;

/// The session's racy window here: waited out instead of the real two
/// seconds.
const WINDOW: Duration = Duration::from_millis(100);

#[test]
fn a_new_invariant_budget_applies_at_the_next_turn() {
    let repo = Repo::new();
    // Past the (shortened) racy window, so unchanged invariant files are
    // trusted by their stamps and only the budget can make the session read
    // them again.
    std::thread::sleep(WINDOW + Duration::from_millis(50));
    let mut session = PromptSession::open_blocking(repo.options().racy_window(WINDOW)).unwrap();
    let input = || TurnInput::new("hello").now(at("2026-12-01T10:00:00Z"));
    let first = session.next_turn_blocking(input()).unwrap();
    assert!(
        first.system().contains("invariant id=\"clock-rules\"")
            && first.system().contains("invariant id=\"parser-rules\""),
        "{}",
        first.system()
    );

    write(
        &repo.root.join(".bcode/bcode.toml"),
        "[invariants]\nmax_files = 1\n",
    );
    let second = session.next_turn_blocking(input()).unwrap();
    assert!(second.changes.config);
    // Only the first file by name (clock.md) is read now.
    assert!(second.system().contains("invariant id=\"clock-rules\""));
    assert!(
        !second.system().contains("invariant id=\"parser-rules\""),
        "{}",
        second.system()
    );
}
