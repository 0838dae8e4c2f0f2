//! `bcode-prompt`: the operator CLI. The only crate that knows about
//! terminals, argument parsing and JSON output. Data goes to stdout, status
//! and diagnostics to stderr.
//!
//! Exit codes: 0 success; 1 `skills doctor --strict` found an error-level
//! diagnostic, `diff` found differences, `check` found the prompt differs
//! from its golden, or `config check` found an error; 2 bad arguments, an
//! invalid configuration, or an unknown skill.

mod check_cmd;
mod cli_context;
mod config_cmd;
mod diagnostics_out;
mod diff_cmd;
mod facts_cmd;
mod input_lines;
mod render_cmd;
mod session_cmd;
mod skills_cmd;
mod terminal;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::cli_context::{CliContext, CliError, LayerFlags, ProcessInputs};

/// Inspect and render what Bcode sends to the model: skills, configuration
/// and the assembled system prompt.
#[derive(Debug, Parser)]
#[command(name = "bcode-prompt", version, about)]
struct Cli {
    /// The repository to work on (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// An extra config file, layered above the user and repository files (repeatable).
    #[arg(long = "config", global = true, value_name = "FILE")]
    config_files: Vec<PathBuf>,
    /// Set a config value, e.g. `--set skills.prompt.catalog=off` (TOML value syntax; repeatable).
    #[arg(long = "set", global = true, value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Trust the repository for this run: apply its own `.bcode/bcode.toml` in full, including
    /// keys that reach outside it or run programs (also `BCODE_TRUST_REPO=1`, or list it in
    /// `trust.repositories` in the user config).
    #[arg(long, global = true)]
    trust_repo: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Skills: list, inspect, check, and show what the model sees.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// The effective configuration and where each value came from.
    #[command(subcommand)]
    Config(ConfigSubcommand),
    /// The assembled prompt: cacheable system text, then the request-only context.
    Render {
        /// The user's prompt for this turn.
        #[arg(long)]
        prompt: Option<String>,
        /// Activate a skill for this turn (repeatable).
        #[arg(long = "skill", value_name = "ID")]
        skills: Vec<String>,
        /// The clock, as an RFC 3339 timestamp (default: now).
        #[arg(long, value_name = "RFC3339")]
        now: Option<String>,
        /// The time zone, as an IANA name (default: TZ, else the system zone).
        #[arg(long, value_name = "IANA")]
        timezone: Option<String>,
        /// Everything as one JSON document.
        #[arg(long)]
        json: bool,
        /// The section table (id, class, bytes, truncation, sources) and the cache boundary.
        #[arg(long, conflicts_with = "json")]
        explain: bool,
        /// A session folder: relevant-mode invariant focus is kept there between runs.
        #[arg(long, value_name = "DIR")]
        session: Option<PathBuf>,
        /// Pin machine facts from a facts file (over the config's `[facts]`); `facts` prints one.
        #[arg(long, value_name = "FILE")]
        facts: Option<PathBuf>,
        /// Read no environment (no user config or skills, no LANG, SHELL, TZ, CI...) and probe
        /// nothing that is not pinned: sections without their facts are left out.
        #[arg(long)]
        hermetic: bool,
    },
    /// Render and compare with a golden file; exit 1 with the changed lines when they differ.
    /// The golden's facts are kept beside it in GOLDEN.facts.toml.
    Check {
        /// The golden file: what `render` prints (or `render --json` with --json).
        golden: PathBuf,
        /// Write the golden (and, the first time, its facts) instead of comparing.
        #[arg(long)]
        bless: bool,
        /// The user's prompt for this turn.
        #[arg(long)]
        prompt: Option<String>,
        /// Activate a skill for this turn (repeatable).
        #[arg(long = "skill", value_name = "ID")]
        skills: Vec<String>,
        /// The clock, as an RFC 3339 timestamp (default: the pinned clock, else now).
        #[arg(long, value_name = "RFC3339")]
        now: Option<String>,
        /// The time zone, as an IANA name (default: the pinned zone, else TZ, else the system zone).
        #[arg(long, value_name = "IANA")]
        timezone: Option<String>,
        /// The golden is `render --json` output.
        #[arg(long)]
        json: bool,
        /// Pin machine facts from a facts file, over the golden's own.
        #[arg(long, value_name = "FILE")]
        facts: Option<PathBuf>,
        /// As `render --hermetic` (recommended for goldens).
        #[arg(long)]
        hermetic: bool,
    },
    /// This machine's facts (OS, shell, locale, git, toolchain, roots...) as a facts file.
    Facts,
    /// Compare two saved `render --json` results: which section broke the prompt cache?
    Diff { a: PathBuf, b: PathBuf },
    /// An interactive skill session (prompts and slash commands); also reads
    /// commands piped on stdin. Events go to the session folder's events.jsonl.
    Session {
        /// The session folder's name under `<state dir>/sessions/` (default: a timestamp).
        #[arg(long)]
        id: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum SkillsCommand {
    /// Every available skill, including those hidden from the model.
    List {
        #[arg(long)]
        json: bool,
    },
    /// One skill's validated metadata and its diagnostics.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Diagnostics only (including a check of every skill body).
    Doctor {
        #[arg(long)]
        json: bool,
        /// Exit 1 when any error-level diagnostic exists.
        #[arg(long)]
        strict: bool,
    },
    /// The model-visible catalog exactly as injected (empty when off).
    Catalog,
    /// The `<skill ...>` block exactly as injected.
    Context {
        id: String,
        /// Invocation arguments, as in `/skill ID ARGS...`.
        #[arg(trailing_var_arg = true)]
        args: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
enum ConfigSubcommand {
    /// The effective configuration.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Each effective value with its origin and line (`key = value  # origin:line`), then the
    /// values of an untrusted repository's config that were ignored, and why.
    Explain { key: Option<String> },
    /// Validate every config layer and print every warning and every error of every file.
    ///
    /// Every layer is checked even when another has an error, and every key of a file is
    /// checked even when one of its values is invalid. Problems go to stdout, one per line,
    /// starting `error:` or `warning:`, then a summary line.
    ///
    /// Exit codes: 0 no error (warnings allowed); 1 an error was found (with --strict, an
    /// unknown key counts as one); 2 bad arguments.
    Check {
        /// Unknown keys (and deprecated values) are errors too.
        #[arg(long)]
        strict: bool,
    },
    /// The JSON Schema of the configuration.
    Schema,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        // A reader that stops early (`| head`) is not an error of ours.
        Err(CliError::Io(err)) if err.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("bcode-prompt: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, CliError> {
    let Cli {
        repo,
        config_files,
        set,
        trust_repo,
        command,
    } = cli;
    let flags = LayerFlags {
        repo,
        config_files,
        set,
        trust_repo,
    };
    let mut stdout = std::io::stdout().lock();
    // `diff` compares two files and needs no repository or configuration;
    // every other command loads both first (an invalid config exits 2).
    let hermetic = matches!(
        command,
        Command::Render { hermetic: true, .. } | Command::Check { hermetic: true, .. }
    );
    let load = || {
        if hermetic {
            CliContext::hermetic(flags.clone())
        } else {
            CliContext::from_process(flags.clone())
        }
    };
    match command {
        Command::Diff { a, b } => {
            let (report, differs) = diff_cmd::diff(&a, &b)?;
            print!("{report}");
            Ok(if differs {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Skills(cmd) => {
            let context = load()?;
            let cmd = match cmd {
                SkillsCommand::List { json } => skills_cmd::SkillsCmd::List { json },
                SkillsCommand::Show { id, json } => skills_cmd::SkillsCmd::Show { id, json },
                SkillsCommand::Doctor { json, strict } => {
                    skills_cmd::SkillsCmd::Doctor { json, strict }
                }
                SkillsCommand::Catalog => skills_cmd::SkillsCmd::Catalog,
                SkillsCommand::Context { id, args } => skills_cmd::SkillsCmd::Context { id, args },
            };
            skills_cmd::run(&cmd, &context, &mut stdout)
        }
        Command::Render {
            prompt,
            skills,
            now,
            timezone,
            json,
            explain,
            session,
            facts,
            hermetic,
        } => {
            let context = load()?;
            let options = render_cmd::RenderOptions {
                prompt,
                skills,
                now,
                timezone,
                json,
                explain,
                session,
                facts,
                hermetic,
            };
            render_cmd::run(&options, &context, &mut stdout)
        }
        Command::Check {
            golden,
            bless,
            prompt,
            skills,
            now,
            timezone,
            json,
            facts,
            hermetic,
        } => {
            let context = load()?;
            let render = render_cmd::RenderOptions {
                prompt,
                skills,
                now,
                timezone,
                json,
                facts,
                hermetic,
                ..render_cmd::RenderOptions::default()
            };
            let options = check_cmd::CheckOptions {
                golden,
                bless,
                render,
            };
            check_cmd::run(&options, &context, &mut stdout)
        }
        Command::Facts => facts_cmd::run(&load()?, &mut stdout),
        Command::Session { id } => session_cmd::run(
            &session_cmd::SessionCmdOptions { id },
            &load()?,
            &mut stdout,
        ),
        // `config check` reports an invalid config instead of stopping at it.
        Command::Config(ConfigSubcommand::Check { strict }) => {
            config_check(&flags, strict, &mut stdout)
        }
        Command::Config(cmd) => {
            let context = load()?;
            let cmd = match cmd {
                ConfigSubcommand::Show { json } => config_cmd::ConfigCommand::Show { json },
                ConfigSubcommand::Explain { key } => {
                    if let Some(key) = &key
                        && !config_cmd::explain_matches(&context.loaded, key)
                    {
                        return Err(CliError::Usage(format!(
                            "unknown config key `{key}`; `bcode-prompt config explain` lists every key"
                        )));
                    }
                    config_cmd::ConfigCommand::Explain { key }
                }
                ConfigSubcommand::Schema => config_cmd::ConfigCommand::Schema,
                // Taken by the arm above, before loading; the same answer here.
                ConfigSubcommand::Check { strict } => {
                    return config_check(&flags, strict, &mut stdout);
                }
            };
            config_cmd::run(&cmd, &context.loaded, &mut stdout).map_err(CliError::Io)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `config check`: loads nothing up front, so an invalid config is reported
/// in full instead of stopping the command.
fn config_check(
    flags: &LayerFlags,
    strict: bool,
    out: &mut dyn std::io::Write,
) -> Result<ExitCode, CliError> {
    let inputs = ProcessInputs::read(flags.clone(), false)?;
    let code = config_cmd::check(&inputs.config_inputs(), strict, out).map_err(CliError::Io)?;
    Ok(ExitCode::from(code))
}
