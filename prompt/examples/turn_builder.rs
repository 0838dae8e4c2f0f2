//! A model-turn builder's loop, as in the crate docs: open a session for a
//! repository (the first argument, else the current folder), then build
//! three turns and show what each would send.
//!
//! `cargo run --example turn_builder [REPO]`

use bcode_prompt::{CommandReply, PromptSession, SessionOptions, TurnInput};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let repo_root = std::env::args().nth(1).unwrap_or_else(|| ".".to_owned());
    let options = SessionOptions::new(repo_root)
        .env_os(std::env::vars_os())
        .set("invariants.mode=\"relevant\"");
    let mut session = PromptSession::open(options).await?;
    let first_skill = session.registry().ids().next().map(str::to_owned);

    let command = match &first_skill {
        Some(id) => format!("/skill {id} the panic in parser.rs"),
        None => "/skill rust-debugging the panic in parser.rs".to_owned(),
    };
    for text in [
        "fix the failing test",
        command.as_str(),
        "now add a regression test",
    ] {
        let turn = session.next_turn(TurnInput::new(text)).await?;
        println!("> {text}");
        println!(
            "  system: {} bytes (cacheable up to byte {}), request-only context: {} bytes",
            turn.system().len(),
            turn.cache_boundary(),
            turn.request_context().len()
        );
        let ids: Vec<&str> = turn.sections().iter().map(|s| s.id.as_str()).collect();
        println!("  sections: {}", ids.join(", "));
        match &turn.command {
            Some(CommandReply::Failed(error)) => println!("  command failed: {error}"),
            Some(CommandReply::Invalid(error)) => println!("  not a command: {error}"),
            _ => {}
        }
        for event in &turn.events {
            println!("  event: {event:?}");
        }
        // Here the host sends the texts to the model, streams the answer,
        // runs tools, and commits the final assistant message.
        session.commit_turn("(the model's final answer)");
    }
    Ok(())
}
