//! Argument placeholders through the façade: a `/skill` turn and
//! `TurnInput::activate_typed` keep the text as typed for `$ARGUMENTS`;
//! `activate_with` (words only) joins them; the setting reaches the block.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use bcode_prompt::{PromptSession, TurnInput};
use common::{Repo, write};

const BODY: &str = "All: $ARGUMENTS. First: $0. Second: $1.\n";

/// The active block's body line for each input, one session per input.
fn body_line(repo: &Repo, settings: &[&str], input: TurnInput) -> String {
    let mut options = repo.options();
    for setting in settings {
        options = options.set(*setting);
    }
    let mut session = PromptSession::open_blocking(options).unwrap();
    let turn = session.next_turn_blocking(input).unwrap();
    let context = turn.request_context();
    let line = context
        .lines()
        .find(|l| l.starts_with("All: "))
        .unwrap_or_else(|| panic!("no body line in {context}"));
    line.to_owned()
}

#[test]
fn typed_text_words_and_the_switch() {
    let repo = Repo::new();
    write(
        &repo.root.join("skills/args/SKILL.md"),
        &format!("---\ndescription: Echo arguments\n---\n{BODY}"),
    );
    let typed = "a 'b c'  d";
    let cases = [
        (
            TurnInput::new(format!("/skill args {typed}")),
            &[][..],
            "All: a 'b c'  d. First: a. Second: b c.",
        ),
        (
            TurnInput::new("").activate_typed("args", typed),
            &[],
            "All: a 'b c'  d. First: a. Second: b c.",
        ),
        (
            TurnInput::new("").activate_with("args", vec!["a".into(), "b c".into()]),
            &[],
            "All: a b c. First: a. Second: b c.",
        ),
        (
            TurnInput::new(format!("/skill args {typed}")),
            &["skills.substitute_arguments=false"],
            "All: $ARGUMENTS. First: $0. Second: $1.",
        ),
    ];
    for (input, settings, expected) in cases {
        assert_eq!(body_line(&repo, settings, input), expected, "{settings:?}");
    }
}
