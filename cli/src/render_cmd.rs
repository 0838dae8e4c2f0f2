//! `bcode-prompt render`: the assembled prompt exactly as a model turn would
//! receive it (cacheable system text, then the request-only context after a
//! divider), its section table (`--explain`) or all of it as data (`--json`).

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;
use std::str::FromStr;

use bcode_prompt::{AssembledPrompt, PromptError, PromptSession, RuntimeMode, Turn, TurnInput};

use crate::cli_context::{CliContext, CliError};

/// Options of `render`.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    pub prompt: Option<String>,
    pub skills: Vec<String>,
    pub now: Option<String>,
    pub timezone: Option<String>,
    pub json: bool,
    pub explain: bool,
    /// `--session DIR`: where relevant-mode invariant focus persists.
    pub session: Option<std::path::PathBuf>,
}

/// The divider between the cacheable system text and the request-only context.
pub const DIVIDER: &str = "===== request-only context (sent with this request, not part of the cached system prompt) =====";

pub fn run(
    options: &RenderOptions,
    context: &CliContext,
    out: &mut dyn Write,
) -> Result<ExitCode, CliError> {
    let now = match &options.now {
        Some(text) => chrono::DateTime::parse_from_rfc3339(text)
            .map_err(|err| CliError::Usage(format!("--now {text:?} is not an RFC 3339 timestamp ({err}); for example 2026-11-29T19:30:00Z")))?
            .with_timezone(&chrono::Utc),
        None => chrono::Utc::now(),
    };
    let timezone = match &options.timezone {
        Some(name) => Some(chrono_tz::Tz::from_str(name).map_err(|_| {
            CliError::Usage(format!("--timezone {name:?} is not an IANA time zone name; for example Europe/Berlin or America/New_York"))
        })?),
        None => None,
    };
    // One session, one settled turn: the façade does all the wiring.
    let mut session_options = context
        .session_options()
        .runtime_mode(RuntimeMode::Render)
        .single_turn(true);
    if let Some(dir) = &options.session {
        // Relative to the working directory, like every path on the command line.
        session_options = session_options.focus_dir(dir);
    }
    let mut session =
        PromptSession::open_blocking(session_options).map_err(|err| prompt_error(&err))?;
    let mut input = TurnInput::new(options.prompt.clone().unwrap_or_default()).now(now);
    if let Some(zone) = timezone {
        input = input.timezone(zone);
    }
    for id in &options.skills {
        input = input.activate(id.clone());
    }
    let rendered = session
        .next_turn_blocking(input.settle())
        .map_err(|err| prompt_error(&err))?;
    report_warnings(&rendered);
    let prompt = &rendered.prompt;
    let io = CliError::Io;
    if options.json {
        serde_json::to_writer_pretty(&mut *out, prompt).map_err(|err| CliError::Io(err.into()))?;
        writeln!(out).map_err(io)?;
    } else if options.explain {
        out.write_all(explain(prompt).as_bytes()).map_err(io)?;
    } else {
        out.write_all(prompt.system.as_bytes()).map_err(io)?;
        if !prompt.system.ends_with('\n') {
            writeln!(out).map_err(io)?;
        }
        if !prompt.request_context.is_empty() {
            write!(out, "\n{DIVIDER}\n\n{}", prompt.request_context).map_err(io)?;
            if !prompt.request_context.ends_with('\n') {
                writeln!(out).map_err(io)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A library error as the CLI says it: the library names no flags, so the
/// hints about `--skill` and `skills list` are added here.
pub fn prompt_error(err: &PromptError) -> CliError {
    match err {
        PromptError::Config(err) => CliError::Config(format!("invalid configuration: {err}")),
        PromptError::Skill(err) => CliError::Usage(format!(
            "{err} (asked for with --skill; `bcode-prompt skills list` shows every id)"
        )),
        other => CliError::Usage(other.to_string()),
    }
}

fn report_warnings(rendered: &Turn) {
    // Config warnings were printed when the CLI loaded the config.
    for warning in &rendered.template_warnings {
        eprintln!("bcode-prompt: warning: {warning}");
    }
    for warning in &rendered.catalog_warnings {
        eprintln!("bcode-prompt: warning: {warning}");
    }
    let errors = rendered
        .diagnostics
        .iter()
        .filter(|d| d.severity == bcode_skill_models::Severity::Error)
        .count();
    if errors > 0 {
        eprintln!(
            "bcode-prompt: {errors} skill file(s) could not be loaded; run `bcode-prompt skills doctor`"
        );
    }
}

/// The section table: one row per section, then omitted sections, notes and
/// the cache boundary.
pub fn explain(prompt: &AssembledPrompt) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<34} {:<8} {:<8} {:>8} {:<9} sources",
        "section", "part", "class", "bytes", "truncated"
    );
    for s in &prompt.sections {
        let part = match s.placement {
            bcode_prompt::Placement::System => "system",
            _ => "request",
        };
        let class = serde_json::to_value(s.class)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<34} {:<8} {:<8} {:>8} {:<9} {}",
            s.id,
            part,
            class,
            s.bytes,
            if s.truncated { "yes" } else { "no" },
            if s.sources.is_empty() {
                "-".to_owned()
            } else {
                s.sources.join(", ")
            }
        );
    }
    let _ = writeln!(
        out,
        "\ncache boundary: byte {} of {} in the system text ({} bytes of system text change per turn)",
        prompt.cache_boundary,
        prompt.system.len(),
        prompt.system.len() - prompt.cache_boundary
    );
    let _ = writeln!(
        out,
        "request-only context: {} bytes",
        prompt.request_context.len()
    );
    if !prompt.omitted.is_empty() {
        let _ = writeln!(out, "\nomitted:");
        for o in &prompt.omitted {
            let reason = serde_json::to_value(&o.reason)
                .map(|v| v.to_string())
                .unwrap_or_default();
            let _ = writeln!(out, "  {:<32} {reason}", o.id);
        }
    }
    let notes: Vec<(&str, &String)> = prompt
        .sections
        .iter()
        .flat_map(|s| s.notes.iter().map(move |n| (s.id.as_str(), n)))
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(out, "\nnotes:");
        for (id, note) in notes {
            let _ = writeln!(out, "  {id}: {note}");
        }
    }
    out
}
