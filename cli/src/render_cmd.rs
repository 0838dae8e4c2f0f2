//! `bcode-prompt render`: the assembled prompt exactly as a model turn would
//! receive it (cacheable system text, then the request-only context after a
//! divider), its section table (`--explain`) or all of it as data (`--json`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;

use bcode_prompt::facts::{Facts, parse_facts};
use bcode_prompt::machine::RuntimeMode;
use bcode_prompt::report::AssembledPrompt;
use bcode_prompt::report::write_prompt_text;
use bcode_prompt::skills::Severity;
use bcode_prompt::{
    NoticeSource, PromptError, PromptSession, SkillLifetime, Turn, TurnInput, Workspace,
};

use crate::cli_context::{CliError, ProcessInputs};

/// Options of `render`.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    pub prompt: Option<String>,
    pub skills: Vec<String>,
    pub now: Option<String>,
    pub timezone: Option<String>,
    /// `--touched PATH`: paths the task touched, as given.
    pub touched: Vec<String>,
    pub json: bool,
    pub explain: bool,
    /// `--session DIR`: where relevant-mode invariant focus persists.
    pub session: Option<std::path::PathBuf>,
    /// `--facts FILE`: pinned machine facts, over the config's `[facts]`.
    pub facts: Option<std::path::PathBuf>,
    /// `--hermetic`: read no environment, probe nothing unpinned.
    pub hermetic: bool,
}

/// The divider between the cacheable system text and the request-only
/// context (the library's, so goldens written by Rust tests and by the CLI
/// agree).
pub use bcode_prompt::report::DIVIDER;

pub fn run(
    options: &RenderOptions,
    inputs: &ProcessInputs,
    out: &mut dyn Write,
) -> Result<ExitCode, CliError> {
    let facts = match &options.facts {
        Some(path) => read_facts(&inputs.cwd.join(path))?,
        None => Facts::default(),
    };
    let (rendered, root) = render_turn(options, inputs, facts, None)?;
    let prompt = &rendered.prompt;
    let io = CliError::Io;
    if options.json {
        serde_json::to_writer_pretty(&mut *out, prompt).map_err(|err| CliError::Io(err.into()))?;
        writeln!(out).map_err(io)?;
    } else if options.explain {
        let paths = crate::explain::PathBase {
            repo: crate::explain::normalise(&root),
            home: inputs
                .env
                .get("HOME")
                .map(|home| crate::explain::normalise(std::path::Path::new(home))),
        };
        let report = crate::explain::explain(prompt, &paths);
        out.write_all(report.as_bytes()).map_err(io)?;
    } else if crate::terminal::stdout_is_terminal() {
        // On a terminal, an escape sequence from a repository file is
        // shown instead of obeyed.
        let mut text = Vec::new();
        write_prompt_text(&mut text, prompt).map_err(io)?;
        let text = String::from_utf8_lossy(&text);
        out.write_all(crate::terminal::printable(&text).as_bytes())
            .map_err(io)?;
    } else {
        // The exact prompt, streamed.
        write_prompt_text(out, prompt).map_err(io)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The most of a facts file read (`--facts`, a golden's sidecar).
pub const MAX_FACTS_BYTES: usize = 1024 * 1024;

/// The one key of a golden's facts sidecar that is not a fact: the working
/// folder the golden was blessed for (see `check_cmd`). Any facts file may
/// hold it, so a sidecar passed to `render --facts` still reads; only
/// `check` uses it.
pub const WORKING_FOLDER_KEY: &str = "working_folder";

/// Reads a facts file named on the command line (`--facts`, `path`
/// absolute) through `bcode-fs`. In a repository it must resolve inside
/// that repository, like the repository's own files: a committed
/// `ci/facts.toml -> ~/.env` is refused, naming where it leads, so no line
/// of the secret is quoted by a parse error. A file outside every
/// repository is the user's own and may link anywhere but the system
/// folders.
pub fn read_facts(path: &std::path::Path) -> Result<Facts, CliError> {
    let bytes = bcode_prompt::files::Confinement::for_path(path)
        .read_bounded(path, MAX_FACTS_BYTES)
        .map_err(|err| facts_error(path, &err))?;
    parse_facts_file(path, bytes).map(|(facts, _)| facts)
}

/// A facts file that could not be read, as the CLI says it.
pub fn facts_error(path: &std::path::Path, err: &dyn std::fmt::Display) -> CliError {
    CliError::Usage(format!("facts file `{}`: {err}", path.display()))
}

/// The facts of a facts file's `bytes` (read from `path`), and the working
/// folder it records ([`WORKING_FOLDER_KEY`]), if any. A file without that
/// key is parsed exactly as before the key existed, errors included.
pub fn parse_facts_file(
    path: &std::path::Path,
    bytes: Vec<u8>,
) -> Result<(Facts, Option<String>), CliError> {
    let text = String::from_utf8(bytes)
        .map_err(|_| CliError::Usage(format!("facts file `{}` is not UTF-8", path.display())))?;
    let bad = |err: &dyn std::fmt::Display| facts_error(path, err);
    let mut table = match toml::from_str::<toml::Table>(&text) {
        Ok(table) if table.contains_key(WORKING_FOLDER_KEY) => table,
        _ => {
            return parse_facts(&text)
                .map(|facts| (facts, None))
                .map_err(|e| bad(&e));
        }
    };
    let folder = match table.remove(WORKING_FOLDER_KEY) {
        Some(toml::Value::String(folder)) => folder,
        _ => {
            return Err(bad(&format!(
                "`{WORKING_FOLDER_KEY}` is not a string (a folder below the repository root, \
                 `/`-separated, `.` for the root)"
            )));
        }
    };
    // The rest, as a facts file of its own: its errors name keys, not
    // lines, and the lines were parsed once already.
    let rest = toml::to_string(&table).map_err(|e| bad(&e))?;
    let facts = parse_facts(&rest).map_err(|e| bad(&e))?;
    Ok((facts, Some(folder)))
}

/// Opens one session with `facts` pinned, in `workspace` when the caller
/// opened it already (from the same inputs), and builds its one settled
/// turn; the config's, templates' and skills' problems are reported on
/// stderr (an invalid config exits 2, as for every command). Returns the
/// turn and the repository root the workspace found.
pub fn render_turn(
    options: &RenderOptions,
    inputs: &ProcessInputs,
    facts: Facts,
    workspace: Option<Workspace>,
) -> Result<(Turn, PathBuf), CliError> {
    // Without `--now`, the pinned clock (if any) or the real one.
    let now = match &options.now {
        Some(text) => Some(chrono::DateTime::parse_from_rfc3339(text)
            .map_err(|err| CliError::Usage(format!("--now {text:?} is not an RFC 3339 timestamp ({err}); for example 2026-11-29T19:30:00Z")))?
            .with_timezone(&chrono::Utc)),
        None => None,
    };
    let timezone = match &options.timezone {
        Some(name) => Some(chrono_tz::Tz::from_str(name).map_err(|_| {
            CliError::Usage(format!("--timezone {name:?} is not an IANA time zone name; for example Europe/Berlin or America/New_York"))
        })?),
        None => None,
    };
    // One session, one settled turn: the façade does all the wiring.
    let mut session_options = inputs
        .session_options()
        .runtime_mode(RuntimeMode::Render)
        .skill_lifetime(SkillLifetime::SingleTurn)
        .facts(facts)
        .hermetic(options.hermetic);
    if let Some(dir) = &options.session {
        // Relative to the working directory, like every path on the command line.
        session_options = session_options.focus_dir(dir);
    }
    let workspace = match workspace {
        Some(workspace) => workspace,
        None => Workspace::open(&session_options).map_err(|err| prompt_error(&err))?,
    };
    let root = workspace.repo().to_path_buf();
    let mut session = PromptSession::open_in_blocking(workspace, session_options)
        .map_err(|err| prompt_error(&err))?;
    let mut input = TurnInput::new(options.prompt.clone().unwrap_or_default());
    if let Some(now) = now {
        input = input.now(now);
    }
    if let Some(zone) = timezone {
        input = input.timezone(zone);
    }
    for id in &options.skills {
        input = input.activate(id.clone());
    }
    input.touched_paths = options
        .touched
        .iter()
        .map(|path| inputs.repository_path(&root, path))
        .collect::<Result<_, _>>()?;
    let rendered = session
        .next_turn_blocking(input.settle())
        .map_err(|err| prompt_error(&err))?;
    report_warnings(&rendered);
    Ok((rendered, root))
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
    let notices = rendered.notices();
    let from = |sources: &'static [NoticeSource]| {
        notices
            .iter()
            .filter(move |notice| sources.contains(&notice.source))
    };
    for notice in from(&[
        NoticeSource::Config,
        NoticeSource::Templates,
        NoticeSource::Repository,
    ]) {
        eprintln!("bcode-prompt: warning: {notice}");
    }
    for warning in limit_warnings(&rendered.prompt) {
        eprintln!("bcode-prompt: warning: {warning}");
    }
    for notice in from(&[NoticeSource::Catalog]) {
        eprintln!("bcode-prompt: warning: {notice}");
    }
    let errors = from(&[NoticeSource::Skills])
        .filter(|notice| notice.severity == Severity::Error)
        .count();
    if errors > 0 {
        eprintln!(
            "bcode-prompt: {errors} skill file(s) could not be loaded; run `bcode-prompt skills doctor`"
        );
    }
}

/// One warning per cut that kept nothing of its text: the limit is smaller
/// than the truncation marker, so the model sees the marker alone.
pub fn limit_warnings(prompt: &AssembledPrompt) -> Vec<String> {
    let mut warnings = Vec::new();
    for section in &prompt.sections {
        for cut in section.truncations.iter().filter(|t| t.kept_nothing()) {
            let t = &cut.truncation;
            let (max, unit) = match t.limit {
                bcode_prompt::text::Limit::Chars(max) => (max, "characters"),
                bcode_prompt::text::Limit::Bytes(max) => (max, "bytes"),
            };
            warnings.push(format!(
                "the limit of {max} {unit} on section `{}` leaves none of its {} {unit}: \
                 the model sees only the truncation marker (raise the limit; `render --explain` shows every cut)",
                section.id,
                match t.limit {
                    bcode_prompt::text::Limit::Chars(_) => t.original_chars,
                    bcode_prompt::text::Limit::Bytes(_) => t.original_bytes,
                },
            ));
        }
    }
    warnings
}
