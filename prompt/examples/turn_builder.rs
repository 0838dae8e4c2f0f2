//! A model-turn builder's whole program, as the README and the crate docs
//! show it: open a session for a repository (the first argument, else the
//! current folder), then build three turns and show what each would send.
//! `cargo run --example turn_builder [REPO]` runs it.

use bcode_prompt::{CommandReply, PromptError, PromptSession, SessionOptions, TurnInput};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), PromptError> {
    let repo_root = std::env::args().nth(1).unwrap_or_else(|| ".".to_owned());
    // Once per session: the repository (any folder inside it), the host's
    // environment snapshot (the library never reads the process's own) and
    // config assignments in the syntax of the CLI's `--set`.
    let options = SessionOptions::new(repo_root)
        .env_os(std::env::vars_os())
        .set("invariants.mode=\"relevant\"");
    let mut session = PromptSession::open(options).await?;

    for text in [
        "fix the failing test",
        "/skill rust-debugging the panic in parser.rs",
        "now add a regression test",
    ] {
        let turn = session.next_turn(TurnInput::new(text)).await?;
        // Send turn.system() (a provider's prompt cache may end at
        // turn.cache_boundary()) and turn.request_context() to the model.
        println!(
            "> {text}\n  system: {} bytes (cacheable up to byte {}), request-only context: {} bytes",
            turn.system().len(),
            turn.cache_boundary(),
            turn.request_context().len()
        );
        if let Some(CommandReply::Failed(error)) = &turn.command {
            println!("  command failed: {error}"); // e.g. an unknown skill, with a near miss
        }
        // Every problem of the turn, as one type: a broken skill file, an
        // unknown config key, a failed section, an event the sink refused ...
        for notice in turn.notices() {
            println!("  {} {}: {notice}", notice.severity, notice.code);
        }
        // Here the host streams the answer, runs tools, and commits the
        // final assistant message (relevant-mode invariants re-evaluate
        // in the background from here).
        session.commit_turn("(the model's final answer)");
    }
    Ok(())
}
