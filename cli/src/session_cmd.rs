//! `bcode-prompt session`: an interactive skill session in the terminal, as
//! the spec's TUI section describes it, and equally driven by commands piped
//! on stdin (no prompt is printed then). Lines starting with `/` are
//! commands; anything else is a user prompt, matched against activation
//! keywords and the relevance index (names, descriptions). Every skill event goes to `events.jsonl` in the session folder
//! under the state directory.
//!
//! On a terminal (standard input and output both), lines are read with a
//! line editor (`line_editor.rs`: editing keys, history kept in the state
//! folder, Tab completion of commands and skill ids) and listings are
//! fitted to the terminal's width; piped, lines are read as they come
//! (`input_lines.rs`) and output stays whole.

use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bcode_prompt::machine::RuntimeMode;
use bcode_prompt::skills::{ActivationReason, JsonlSink, SystemClock, describe_matches};
use bcode_prompt::skills::{SessionReply, SkillEvent, SkillReload, Suggestion};
use bcode_prompt::{CommandReply, NoticeSource, PromptSession, Turn, TurnInput};

use crate::cli_context::{CliError, ProcessInputs};
use crate::input_lines::{InputLines, LineError};
use crate::line_editor::{Completions, LineEditor};
use crate::session_history::{Bounds, HistoryFile};
use crate::terminal::{Fit, printable, printable_line};

const HELP: &str = "commands:
  /skills                  list available skills
  /skills <task words>     the skills that best fit a task, best first
  /skill <id> [args...]    activate a skill
  /skill active            list active skills
  /skill off <id>          deactivate a skill
  /accept [id]             activate suggested skills (all, or one)
  /dismiss                 dismiss the current suggestions
  /touched <path>...       note paths the task touched: skills whose `paths` match are suggested
  /render                  show the prompt the next turn would send
  /quit                    end the session
anything else is a prompt: it is matched against skill names, descriptions and keywords";

/// The commands this loop handles itself (besides `/exit`, `/quit`'s
/// alias), for the usage line of an unknown command.
const SESSION_COMMANDS: [&str; 6] = [
    "/accept", "/dismiss", "/touched", "/render", "/help", "/quit",
];

/// Where the session's lines come from: the line editor on a terminal, the
/// bounded line reader otherwise.
enum Input {
    Editor(Box<LineEditor>),
    Lines(InputLines<std::io::StdinLock<'static>>),
}

impl Input {
    /// The next line; `prompt` is shown first when a person types.
    fn next(&mut self, prompt: Option<&str>) -> Option<Result<String, LineError>> {
        match self {
            Input::Editor(editor) => editor.read_line(prompt.unwrap_or_default()),
            Input::Lines(lines) => {
                if let Some(prompt) = prompt {
                    eprint!("{prompt}");
                }
                lines.next()
            }
        }
    }
}

/// The prompt a person types after.
const PROMPT: &str = "bcode> ";

/// Options of `session`.
#[derive(Debug, Clone, Default)]
pub struct SessionCmdOptions {
    /// A name for the session folder (default: a timestamp).
    pub id: Option<String>,
}

/// Runs the session: every line is one turn of a [`PromptSession`] (the
/// library does the wiring; this is only its terminal front end).
pub fn run(
    options: &SessionCmdOptions,
    inputs: &ProcessInputs,
    out: &mut dyn Write,
) -> Result<ExitCode, CliError> {
    let folder = session_folder(inputs, options)?;
    let log_path = folder.join("events.jsonl");
    let sink = JsonlSink::open(&log_path, Box::new(SystemClock)).map_err(|err| {
        CliError::Usage(format!(
            "cannot open the event log `{}`: {err}",
            log_path.display()
        ))
    })?;
    let interactive = std::io::stdin().is_terminal();
    // Skill edits are noticed by the session's default folder watch (or
    // stamp checks where one is not possible), the same whether piped or not.
    let session_options = inputs
        .session_options()
        .events(Box::new(sink))
        .runtime_mode(if interactive {
            RuntimeMode::Interactive
        } else {
            RuntimeMode::Scripted
        });
    let workspace = bcode_prompt::Workspace::open(&session_options)
        .map_err(|err| crate::render_cmd::prompt_error(&err))?;
    let root = workspace.repo().to_path_buf();
    let mut session = PromptSession::open_in_blocking(workspace, session_options)
        .map_err(|err| crate::render_cmd::prompt_error(&err))?;
    // The session loaded the config (once): its warnings now, those of a
    // config edited later with the turn that notices it.
    let loaded = session.config();
    for warning in &loaded.warnings {
        eprintln!("bcode-prompt: warning: {warning}");
    }
    let io = CliError::Io;
    writeln!(
        out,
        "Skill session {} ({} skills; auto-activation: {}). Events: {}",
        folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        session.registry().len(),
        serde_json::to_value(loaded.config.skills.auto_activate)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        log_path.display()
    )
    .map_err(io)?;
    if let SkillReload::CheckingStamps {
        reason: Some(reason),
    } = session.skill_reload()
    {
        // Status, not data: the operator learns why turns check stamps.
        eprintln!("bcode-prompt: skill edits are checked at each turn: {reason}");
    }
    if interactive {
        writeln!(out, "Type a prompt or a command; /help lists commands.").map_err(io)?;
    }

    let mut pending: Vec<Suggestion> = Vec::new();
    // Every turn carries the paths touched so far (hosts do the same); the
    // skill session matches each path once.
    let mut touched: Vec<String> = Vec::new();
    let mut first_turn = true;
    // The skills active so far, as the turns' events say, for completing
    // `/skill off`.
    let mut active: BTreeSet<String> = BTreeSet::new();
    let mut input = open_input(interactive, inputs, &state_dir(inputs)?);
    loop {
        // Measured at each line: the terminal may have been resized.
        let fit = Fit {
            columns: crate::terminal::stdout_columns(inputs.env.get("COLUMNS").map(String::as_str)),
        };
        if let Input::Editor(editor) = &mut input {
            editor.set_completions(completions(&session, &active, &pending));
        }
        let Some(line) = input.next(interactive.then_some(PROMPT)) else {
            break;
        };
        let line = match line {
            Ok(line) => line,
            // An over-long or non-UTF-8 line costs only itself.
            Err(err @ (LineError::TooLong { .. } | LineError::NotUtf8 { .. })) => {
                writeln!(out, "error: {err}").map_err(io)?;
                continue;
            }
            Err(LineError::Io(err)) => return Err(CliError::Io(err)),
        };
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if !interactive {
            writeln!(out, "> {}", printable_line(trimmed)).map_err(io)?;
        }
        let word = trimmed.split_whitespace().next().unwrap_or_default();
        let input = match word {
            "/quit" | "/exit" => break,
            "/help" => {
                for line in HELP.lines() {
                    // A command's line wraps under the description column.
                    let indent = if line.starts_with("  /") { 27 } else { 2 };
                    fit.wrap(out, line, &" ".repeat(indent), 4).map_err(io)?;
                }
                continue;
            }
            "/dismiss" => {
                writeln!(out, "Dismissed {} suggestion(s).", pending.len()).map_err(io)?;
                pending.clear();
                continue;
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
                    continue;
                }
                pending.retain(|p| !chosen.iter().any(|c| c.id == p.id));
                chosen.iter().fold(TurnInput::new(""), |input, s| {
                    input.activate_because(
                        s.id.as_str(),
                        Vec::new(),
                        ActivationReason::Accepted {
                            matched_keywords: s.matched_keywords.clone(),
                            matched_paths: s.matched_paths.clone(),
                            relevance: s.relevance.clone(),
                        },
                    )
                })
            }
            "/touched" => {
                let given: Vec<&str> = trimmed.split_whitespace().skip(1).collect();
                if given.is_empty() {
                    writeln!(out, "usage: /touched <path>...").map_err(io)?;
                    continue;
                }
                let mut noted = Vec::new();
                let mut failed = false;
                for path in given {
                    match inputs.repository_path(&root, path) {
                        Ok(path) => noted.push(path),
                        Err(err) => {
                            writeln!(out, "error: {}", printable_line(&err.to_string()))
                                .map_err(io)?;
                            failed = true;
                        }
                    }
                }
                if failed && noted.is_empty() {
                    continue;
                }
                writeln!(out, "Touched: {}.", printable_line(&noted.join(", "))).map_err(io)?;
                for path in noted {
                    if !touched.contains(&path) {
                        touched.push(path);
                    }
                }
                TurnInput::new("")
            }
            // `/render` shows what the next turn sends: a turn with no text.
            "/render" => TurnInput::new(""),
            // A slash command that is neither this loop's nor a skill
            // command: the error names the near miss and every command
            // of the session, not only the skill commands the library knows.
            _ if word.starts_with('/') => {
                if let Err(err) = bcode_prompt::skills::parse_command(trimmed, &SESSION_COMMANDS) {
                    writeln!(out, "error: {}", printable_line(&err.to_string())).map_err(io)?;
                    continue;
                }
                TurnInput::new(trimmed)
            }
            _ => TurnInput::new(trimmed),
        };
        let is_prompt = !trimmed.starts_with('/') || word == "/touched";
        let input = input.touched_paths(touched.clone());
        let turn = match session.next_turn_blocking(input) {
            Ok(turn) => turn,
            Err(err) => {
                writeln!(out, "error: {}", printable_line(&err.to_string())).map_err(io)?;
                continue;
            }
        };
        report_turn(&turn, first_turn, out)?;
        first_turn = false;
        for event in &turn.events {
            match event {
                SkillEvent::SkillActivated { id, .. } => {
                    active.insert(id.clone());
                }
                SkillEvent::SkillDeactivated { id, .. } => {
                    active.remove(id);
                }
                _ => {}
            }
        }
        match word {
            "/render" => show_render(&turn, out)?,
            "/accept" => show_loaded(&turn.events, fit, out)?,
            _ if is_prompt => {
                for event in &turn.events {
                    if let SkillEvent::SkillActivated { id, reason, .. } = event {
                        writeln!(
                            out,
                            "Activated skill `{}` ({}).",
                            printable_line(id),
                            printable_line(reason)
                        )
                        .map_err(io)?;
                    }
                }
                pending = turn.suggestions.clone();
                for s in &pending {
                    let matched = describe_matches(
                        &s.matched_keywords,
                        &s.matched_paths,
                        s.relevance.as_ref(),
                    );
                    let line = format!(
                        "Suggested skill `{}` (matched {}): /accept {} to activate, /dismiss to ignore.",
                        s.id,
                        printable_line(&matched),
                        s.id
                    );
                    fit.wrap(out, &line, "  ", 4).map_err(io)?;
                }
                if word != "/touched" {
                    writeln!(
                        out,
                        "(prompt noted; this CLI has no model: /render shows what the turn would send)"
                    )
                    .map_err(io)?;
                }
            }
            _ => match turn.command {
                Some(CommandReply::Done(reply)) => {
                    note_unclosed_quote(trimmed, &reply, out)?;
                    show_listing(out, fit, Ok(reply))?;
                }
                Some(CommandReply::Failed(err)) => show_listing(out, fit, Err(err))?,
                Some(CommandReply::Invalid(err)) => {
                    writeln!(out, "error: {}", printable_line(&err.to_string())).map_err(io)?;
                }
                Some(_) | None => {}
            },
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Says so when `/skill <id> ARGS` activated a skill although ARGS left a
/// quote open: the words were then split on whitespace alone, which the
/// user may not have meant.
fn note_unclosed_quote(
    line: &str,
    reply: &SessionReply,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let typed = match bcode_prompt::skills::parse_command(line, &SESSION_COMMANDS) {
        Ok(Some(bcode_prompt::skills::SlashCommand::Activate {
            raw_arguments: Some(raw),
            ..
        })) => raw,
        _ => return Ok(()),
    };
    if matches!(reply, SessionReply::Activated { .. })
        && !bcode_prompt::skills::split_arguments(&typed).balanced
    {
        writeln!(
            out,
            "note: a quote in the arguments is not closed; they were split at spaces, quotes kept"
        )
        .map_err(CliError::Io)?;
    }
    Ok(())
}

/// What changed since the last turn, and problems of the event log.
fn report_turn(turn: &Turn, first_turn: bool, out: &mut dyn Write) -> Result<(), CliError> {
    if !turn.changes.skills.is_empty() {
        writeln!(
            out,
            "Skills changed: {}",
            printable_line(&turn.changes.skills.to_string())
        )
        .map_err(CliError::Io)?;
    }
    // Catalog warnings hold on every turn they apply to: shown on the
    // first, and again when the skills, the config or the templates changed.
    let changed = !turn.changes.skills.is_empty() || turn.changes.config || turn.changes.templates;
    for notice in turn.notices() {
        match notice.source {
            // The first turn's diagnostics are the registry's own (`skills
            // doctor` shows them); later ones are new since the last turn.
            NoticeSource::Skills if !first_turn => eprintln!(
                "bcode-prompt: {}: {}",
                notice.severity,
                printable_line(&notice.message)
            ),
            // The config's warnings at the start were printed when it opened.
            NoticeSource::Config if !first_turn => {
                eprintln!("bcode-prompt: warning: {notice}");
            }
            // The turn carries them when they are new: the first, and after
            // an edit.
            NoticeSource::Templates | NoticeSource::Repository => {
                eprintln!("bcode-prompt: warning: {notice}");
            }
            NoticeSource::Catalog if first_turn || changed => {
                eprintln!("bcode-prompt: warning: {notice}");
            }
            NoticeSource::EventLog => {
                eprintln!("bcode-prompt: could not record an event: {notice}");
            }
            _ => {}
        }
    }
    Ok(())
}

/// The "loaded" transcript item of each skill whose context a turn loaded.
fn show_loaded(events: &[SkillEvent], fit: Fit, out: &mut dyn Write) -> Result<(), CliError> {
    for event in events {
        if let SkillEvent::SkillContextLoaded {
            id,
            source,
            bytes,
            truncated,
            preview,
        } = event
        {
            let Ok(id) = bcode_prompt::skills::SkillId::parse_reference(id) else {
                continue;
            };
            show_reply(
                out,
                fit,
                Ok(SessionReply::Activated {
                    id,
                    source: source.clone(),
                    bytes: *bytes,
                    truncated: *truncated,
                    preview: preview.clone(),
                }),
            )?;
        }
    }
    Ok(())
}

fn show_render(turn: &Turn, out: &mut dyn Write) -> Result<(), CliError> {
    write!(
        out,
        "{}\n\n{}\n\n{}\n",
        printable(turn.system()),
        crate::render_cmd::DIVIDER,
        printable(turn.request_context())
    )
    .map_err(CliError::Io)
}

/// The user's state folder (not yet checked).
fn state_dir(inputs: &ProcessInputs) -> Result<PathBuf, CliError> {
    let state = bcode_prompt::repository::StateFolder::of(&inputs.env);
    state.path().map(Path::to_path_buf).ok_or_else(|| {
        CliError::Usage("no state directory: set BCODE_STATE_DIR, XDG_STATE_HOME or HOME".into())
    })
}

/// The line editor when a person types at a terminal that can edit (and
/// output goes to the terminal too: the editor draws there), with the
/// history of the state folder `state` when it is usable; else the bounded
/// reader of piped lines.
fn open_input(interactive: bool, inputs: &ProcessInputs, state: &std::path::Path) -> Input {
    let editing = interactive
        && crate::terminal::stdout_is_terminal()
        && crate::line_editor::supports_editing(inputs.env.get("TERM").map(String::as_str));
    if editing {
        let history = match HistoryFile::open(state, Bounds::default()) {
            Ok(history) => Some(history),
            Err(err) => {
                eprintln!("bcode-prompt: warning: session history not kept: {err}");
                None
            }
        };
        match LineEditor::new(history) {
            Ok(editor) => return Input::Editor(Box::new(editor)),
            Err(err) => eprintln!("bcode-prompt: warning: no line editing: {err}"),
        }
    }
    Input::Lines(crate::input_lines::stdin_lines())
}

/// What Tab completes to before the next line.
fn completions(
    session: &PromptSession,
    active: &BTreeSet<String>,
    pending: &[Suggestion],
) -> Completions {
    // An id is typed, so one a person could not type is not offered.
    let typable = |id: &str| !id.chars().any(|c| c.is_control() || c.is_whitespace());
    Completions {
        skills: session
            .registry()
            .ids()
            .filter(|id| typable(id))
            .map(str::to_owned)
            .collect(),
        active: active.iter().filter(|id| typable(id)).cloned().collect(),
        pending: pending
            .iter()
            .map(|s| s.id.as_str().to_owned())
            .filter(|id| typable(id))
            .collect(),
    }
}

/// `<state dir>/sessions/<id>/`, created.
fn session_folder(
    inputs: &ProcessInputs,
    options: &SessionCmdOptions,
) -> Result<PathBuf, CliError> {
    let state = state_dir(inputs)?;
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
    // The log is the session's audit trail: in a state folder another user
    // could write to, a planted link would redirect it, so the session
    // refuses to start rather than run without a trustworthy log.
    let folder = bcode_prompt::files::StateDir::open(&state)
        .and_then(|state| state.subdir("sessions"))
        .and_then(|sessions| sessions.subdir(&id))
        .map_err(|err| CliError::Usage(format!("cannot keep a session log: {err}")))?;
    Ok(folder.path().to_path_buf())
}

fn show_listing(
    out: &mut dyn Write,
    fit: Fit,
    reply: Result<SessionReply, bcode_prompt::skills::SessionError>,
) -> Result<(), CliError> {
    let io = CliError::Io;
    match reply {
        Ok(SessionReply::Listing(list)) if list.is_empty() => {
            writeln!(out, "No skills available.").map_err(io)
        }
        Ok(SessionReply::Listing(list)) => {
            for s in list {
                let mut marks: Vec<String> = Vec::new();
                if s.active {
                    marks.push("active".into());
                }
                if !s.model_visible {
                    marks.push("hidden from the model".into());
                }
                if !s.user_invocable {
                    marks.push("model only: no /skill".into());
                }
                if let Some(hint) = &s.argument_hint {
                    marks.push(format!("arguments: {hint}"));
                }
                let marks = if marks.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", marks.join(", "))
                };
                let description = s
                    .description
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                let line = format!(
                    "  {} [{}]{}: {}",
                    s.id,
                    printable_line(&s.source),
                    printable_line(&marks),
                    printable_line(&description)
                );
                // At most three lines a skill on a terminal, the rest
                // under the id: the whole description is in `skills list`.
                fit.wrap(out, &line, "      ", 3).map_err(io)?;
            }
            Ok(())
        }
        other => show_reply(out, fit, other),
    }
}

fn show_reply(
    out: &mut dyn Write,
    fit: Fit,
    reply: Result<SessionReply, bcode_prompt::skills::SessionError>,
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
            let loaded = format!(
                "Loaded skill `{id}` from {} ({bytes} bytes{cut}).",
                printable_line(&source)
            );
            fit.wrap(out, &loaded, "  ", 4).map_err(io)?;
            // The transcript preview item: what was injected, bounded. Its
            // lines are cut, not wrapped, on a terminal: a table's rows
            // stay rows.
            fit.cut(out, &format!("┌ skill context: {id}"))
                .map_err(io)?;
            for line in preview.lines() {
                fit.cut(out, &format!("│ {}", printable_line(line)))
                    .map_err(io)?;
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
                    ActivationReason::Model => "model".to_owned(),
                    ActivationReason::Auto {
                        matched_keywords,
                        matched_paths,
                        relevance,
                    } => {
                        format!(
                            "auto: {}",
                            describe_matches(&matched_keywords, &matched_paths, relevance.as_ref())
                        )
                    }
                    ActivationReason::Accepted {
                        matched_keywords,
                        matched_paths,
                        relevance,
                    } => {
                        format!(
                            "accepted suggestion: {}",
                            describe_matches(&matched_keywords, &matched_paths, relevance.as_ref())
                        )
                    }
                    _ => "other".to_owned(),
                };
                let args = if arguments.is_empty() {
                    String::new()
                } else {
                    format!(" args: {}", arguments.join(" "))
                };
                let row = format!("  {id} ({}){}", printable_line(&how), printable_line(&args));
                fit.cut(out, &row).map_err(io)?;
            }
            Ok(())
        }
        Ok(SessionReply::Deactivated { id }) => {
            writeln!(out, "Deactivated skill `{id}`.").map_err(io)
        }
        Ok(_) => Ok(()),
        Err(err) => writeln!(out, "error: {}", printable_line(&err.to_string())).map_err(io),
    }
}
