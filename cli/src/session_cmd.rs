//! `bcode-prompt session`: an interactive skill session in the terminal, as
//! the spec's TUI section describes it, and equally driven by commands piped
//! on stdin (no prompt is printed then). Lines starting with `/` are
//! commands; anything else is a user prompt, matched against activation
//! keywords. Every skill event goes to `events.jsonl` in the session folder
//! under the state directory.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bcode_prompt_sections::probe::{RealMachine, RuntimeMode};
use bcode_prompt_sections::render::{RenderRequest, SessionSkills, render_for_session};
use bcode_skill::{
    ActivationReason, DiscoveryOptions, EventSink, JsonlSink, LiveRegistry, SessionOptions,
    SessionReply, SkillSession, SlashCommand, Suggestion, SystemClock, parse_command,
};
use bcode_skill_models::SkillEvent;

use crate::cli_context::{CliContext, CliError};
use crate::skills_cmd::skill_templates;

/// Commands the session handles itself (skill commands are parsed by the library).
const SESSION_COMMANDS: [&str; 6] = ["/render", "/accept", "/dismiss", "/help", "/quit", "/exit"];

const HELP: &str = "commands:
  /skills                  list available skills
  /skill <id> [args...]    activate a skill
  /skill active            list active skills
  /skill off <id>          deactivate a skill
  /accept [id]             activate suggested skills (all, or one)
  /dismiss                 dismiss the current suggestions
  /render                  show the prompt the next turn would send
  /quit                    end the session
anything else is a prompt: it is matched against skill keywords";

/// Options of `session`.
#[derive(Debug, Clone, Default)]
pub struct SessionCmdOptions {
    /// A name for the session folder (default: a timestamp).
    pub id: Option<String>,
}

pub fn run(
    options: &SessionCmdOptions,
    context: &CliContext,
    out: &mut dyn Write,
) -> Result<ExitCode, CliError> {
    let config = &context.loaded.config.skills;
    let folder = session_folder(context, options)?;
    let log_path = folder.join("events.jsonl");
    let mut sink = JsonlSink::open(&log_path, Box::new(SystemClock)).map_err(|err| {
        CliError::Usage(format!(
            "cannot open the event log `{}`: {err}",
            log_path.display()
        ))
    })?;
    let interactive = std::io::stdin().is_terminal();

    let roots = if config.enabled {
        context.skill_roots()
    } else {
        Vec::new()
    };
    let (mut live, registry) = LiveRegistry::new(DiscoveryOptions::from_config(config), roots);
    if interactive {
        // Interactive sessions watch the roots so a quiet tree costs nothing;
        // piped sessions check metadata at each turn, which is deterministic.
        if let Err(err) = live.watch(Duration::from_millis(200)) {
            eprintln!(
                "bcode-prompt: not watching skill roots ({err}); checking them at each turn instead"
            );
        }
    }
    let mut session = SkillSession::new(
        registry,
        SessionOptions::from_config(config),
        skill_templates(context)?,
    );
    let io = CliError::Io;
    writeln!(
        out,
        "Skill session {} ({} skills; auto-activation: {}). Events: {}",
        folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        session.registry().len(),
        serde_json::to_value(config.auto_activate)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        log_path.display()
    )
    .map_err(io)?;
    if interactive {
        writeln!(out, "Type a prompt or a command; /help lists commands.").map_err(io)?;
    }

    let mut pending: Vec<Suggestion> = Vec::new();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    loop {
        if interactive {
            eprint!("bcode> ");
        }
        let Some(line) = lines.next() else { break };
        let line = line.map_err(io)?;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if !interactive {
            writeln!(out, "> {trimmed}").map_err(io)?;
        }
        let word = trimmed.split_whitespace().next().unwrap_or_default();
        match word {
            "/quit" | "/exit" => break,
            "/help" => writeln!(out, "{HELP}").map_err(io)?,
            "/render" => render_next_turn(context, &session, interactive, out)?,
            "/dismiss" => {
                writeln!(out, "Dismissed {} suggestion(s).", pending.len()).map_err(io)?;
                pending.clear();
            }
            "/accept" => {
                let wanted = trimmed.split_whitespace().nth(1);
                let chosen: Vec<Suggestion> = pending
                    .iter()
                    .filter(|s| wanted.is_none_or(|w| s.id.as_str() == w))
                    .cloned()
                    .collect();
                if chosen.is_empty() {
                    writeln!(
                        out,
                        "No pending suggestion{} to accept.",
                        wanted.map(|w| format!(" `{w}`")).unwrap_or_default()
                    )
                    .map_err(io)?;
                }
                for suggestion in chosen {
                    let reason = ActivationReason::Auto {
                        matched_keywords: suggestion.matched_keywords.clone(),
                    };
                    let outcome = session.activate(suggestion.id.as_str(), &[], reason);
                    emit_all(&mut sink, &outcome.events);
                    show_reply(out, outcome.reply)?;
                    pending.retain(|p| p.id != suggestion.id);
                }
            }
            _ => match parse_command(trimmed, &SESSION_COMMANDS) {
                Ok(Some(command)) => {
                    let outcome = session.run(&command);
                    emit_all(&mut sink, &outcome.events);
                    if matches!(command, SlashCommand::List) {
                        show_listing(out, outcome.reply)?;
                    } else {
                        show_reply(out, outcome.reply)?;
                    }
                }
                Ok(None) => {
                    // A prompt starts a turn: registry changes land now, never mid-turn.
                    if let Some(refresh) = live.begin_turn() {
                        let reload =
                            session.replace_registry(refresh.registry, &refresh.changed_files);
                        emit_all(&mut sink, &reload.events);
                        if !reload.diff.is_empty() {
                            writeln!(out, "Skills changed: {}", reload.diff).map_err(io)?;
                        }
                        for d in &reload.diagnostics {
                            eprintln!("bcode-prompt: {}: {}", d.severity, d.message);
                        }
                    }
                    let outcome = session.on_prompt(trimmed);
                    emit_all(&mut sink, &outcome.events);
                    for event in &outcome.events {
                        if let SkillEvent::SkillActivated { id, reason, .. } = event {
                            writeln!(out, "Activated skill `{id}` ({reason}).").map_err(io)?;
                        }
                    }
                    pending = outcome.suggestions;
                    for s in &pending {
                        writeln!(out, "Suggested skill `{}` (matched {}): /accept {} to activate, /dismiss to ignore.", s.id, s.matched_keywords.join(", "), s.id)
                            .map_err(io)?;
                    }
                    writeln!(out, "(prompt noted; this CLI has no model: /render shows what the turn would send)").map_err(io)?;
                }
                Err(err) => writeln!(out, "error: {err}").map_err(io)?,
            },
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `<state dir>/sessions/<id>/`, created.
fn session_folder(context: &CliContext, options: &SessionCmdOptions) -> Result<PathBuf, CliError> {
    let state = context.source_env().state_dir().ok_or_else(|| {
        CliError::Usage("no state directory: set BCODE_STATE_DIR, XDG_STATE_HOME or HOME".into())
    })?;
    let id = match &options.id {
        Some(id)
            if !id.is_empty()
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            id.clone()
        }
        Some(id) => {
            return Err(CliError::Usage(format!(
                "--id {id:?}: use letters, digits, `-` and `_` only"
            )));
        }
        None => {
            chrono::Utc::now().format("%Y%m%d-%H%M%S").to_string()
                + &format!("-{}", std::process::id())
        }
    };
    let folder = state.join("sessions").join(id);
    std::fs::create_dir_all(&folder).map_err(|err| {
        CliError::Usage(format!(
            "cannot create the session folder `{}`: {err}",
            folder.display()
        ))
    })?;
    Ok(folder)
}

fn emit_all(sink: &mut JsonlSink, events: &[SkillEvent]) {
    for event in events {
        if let Err(err) = sink.emit(event) {
            eprintln!("bcode-prompt: could not record an event: {err}");
        }
    }
}

fn show_listing(
    out: &mut dyn Write,
    reply: Result<SessionReply, bcode_skill::SessionError>,
) -> Result<(), CliError> {
    let io = CliError::Io;
    match reply {
        Ok(SessionReply::Listing(list)) if list.is_empty() => {
            writeln!(out, "No skills available.").map_err(io)
        }
        Ok(SessionReply::Listing(list)) => {
            for s in list {
                let mut marks = Vec::new();
                if s.active {
                    marks.push("active");
                }
                if !s.model_visible {
                    marks.push("hidden from the model");
                }
                let marks = if marks.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", marks.join(", "))
                };
                writeln!(
                    out,
                    "  {} [{}]{marks}: {}",
                    s.id,
                    s.source,
                    s.description
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                )
                .map_err(io)?;
            }
            Ok(())
        }
        other => show_reply(out, other),
    }
}

fn show_reply(
    out: &mut dyn Write,
    reply: Result<SessionReply, bcode_skill::SessionError>,
) -> Result<(), CliError> {
    let io = CliError::Io;
    match reply {
        Ok(SessionReply::Activated {
            id,
            source,
            bytes,
            truncated,
            preview,
        }) => {
            let cut = if truncated {
                ", truncated by skills.max_context_bytes"
            } else {
                ""
            };
            writeln!(
                out,
                "Loaded skill `{id}` from {source} ({bytes} bytes{cut})."
            )
            .map_err(io)?;
            // The transcript preview item: what was injected, bounded.
            writeln!(out, "┌ skill context: {id}").map_err(io)?;
            for line in preview.lines() {
                writeln!(out, "│ {line}").map_err(io)?;
            }
            writeln!(out, "└").map_err(io)
        }
        Ok(SessionReply::ActiveList(list)) if list.is_empty() => {
            writeln!(out, "No active skills.").map_err(io)
        }
        Ok(SessionReply::ActiveList(list)) => {
            for (id, arguments, reason) in list {
                let how = match reason {
                    ActivationReason::Explicit => "explicit".to_owned(),
                    ActivationReason::Auto { matched_keywords } => {
                        format!("auto: {}", matched_keywords.join(", "))
                    }
                    _ => "other".to_owned(),
                };
                let args = if arguments.is_empty() {
                    String::new()
                } else {
                    format!(" args: {}", arguments.join(" "))
                };
                writeln!(out, "  {id} ({how}){args}").map_err(io)?;
            }
            Ok(())
        }
        Ok(SessionReply::Deactivated { id }) => {
            writeln!(out, "Deactivated skill `{id}`.").map_err(io)
        }
        Ok(_) => Ok(()),
        Err(err) => writeln!(out, "error: {err}").map_err(io),
    }
}

/// What the next turn would send: the render pipeline with this session's
/// registry and the blocks it loaded for its active skills.
fn render_next_turn(
    context: &CliContext,
    session: &SkillSession,
    interactive: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let request = RenderRequest {
        repo: context.repo.clone(),
        cwd: context.cwd.clone(),
        env: context.env.clone(),
        config_files: context.config_files.clone(),
        set: context.set.clone(),
        now: chrono::Utc::now(),
        timezone: None,
        skills: Vec::new(),
        prompt: None,
        session_dir: None,
    };
    let skills = SessionSkills {
        registry: session.registry().clone(),
        active: session.active().iter().map(|a| a.context.clone()).collect(),
        runtime_mode: if interactive {
            RuntimeMode::Interactive
        } else {
            RuntimeMode::Scripted
        },
    };
    match render_for_session(&request, &context.loaded, &RealMachine, &skills) {
        Ok(rendered) => {
            let p = &rendered.prompt;
            write!(
                out,
                "{}\n\n{}\n\n{}\n",
                p.system,
                crate::render_cmd::DIVIDER,
                p.request_context
            )
            .map_err(CliError::Io)
        }
        Err(err) => writeln!(out, "error: {err}").map_err(CliError::Io),
    }
}
