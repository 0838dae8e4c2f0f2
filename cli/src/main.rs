//! `bcode-prompt`: the operator CLI. The only crate that knows about
//! terminals, argument parsing and JSON output. Data goes to stdout, status
//! and diagnostics to stderr.
//!
//! Exit codes: 0 success; 1 `skills doctor --strict` found an error-level
//! diagnostic (or, with `--profile`, a portability finding), `diff` found differences, `check` found the prompt differs
//! from its golden, or `config check` found an error; 2 bad arguments, an
//! invalid configuration, or an unknown skill.

mod check_cmd;
mod cli_context;
mod config_cmd;
mod diagnostics_out;
mod diff_cmd;
mod explain;
mod facts_cmd;
mod help;
mod input_lines;
mod line_editor;
#[cfg(feature = "mcp")]
mod mcp_cmd;
mod render_cmd;
mod session_cmd;
mod session_history;
mod skills_cmd;
mod skills_json;
mod terminal;
mod tokens;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::cli_context::{CliContext, CliError, LayerFlags, ProcessInputs};

/// Inspect and render what Bcode sends to the model: skills, configuration
/// and the assembled system prompt.
#[derive(Debug, Parser)]
#[command(
    name = "bcode-prompt",
    version,
    about,
    after_help = help::after(
        "Every command has its own --help with its arguments, exit codes and environment.",
        "Exit codes:\n  0  success\n  1  `skills doctor --strict` found an error (with --profile, a portability finding too), `diff` or `check` found differences, or `config check` found an error\n  2  bad arguments, an invalid configuration or an unknown skill",
        help::Reads::Prompt,
    )
)]
struct Cli {
    /// Given before the command, for every command that reads a repository.
    #[command(flatten)]
    layers: Layers,
    #[command(subcommand)]
    command: Command,
}

/// Where the configuration comes from: the repository and the layers above
/// its files. Accepted before the command and, on the commands they apply
/// to, after it; `diff` reads neither.
#[derive(Debug, Default, Clone, Args)]
struct Layers {
    /// The repository to work on (default: the current directory).
    #[arg(long, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// An extra config file, layered above the user and repository files (repeatable).
    #[arg(long = "config", value_name = "FILE")]
    config_files: Vec<PathBuf>,
    /// Set a config value, e.g. `--set skills.prompt.catalog=off` (TOML value syntax; repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Trust the repository for this run: apply its own `.bcode/bcode.toml` in full, including
    /// keys that reach outside it or run programs (also `BCODE_TRUST_REPO=1`, or list it in
    /// `trust.repositories` in the user config).
    #[arg(long)]
    trust_repo: bool,
}

impl Layers {
    fn is_empty(&self) -> bool {
        self.repo.is_none()
            && self.config_files.is_empty()
            && self.set.is_empty()
            && !self.trust_repo
    }

    /// The flags given before the command, then those given after it: a
    /// later `--set` wins, and a `--repo` after the command replaces one
    /// before it.
    fn then(self, after: Layers) -> Layers {
        Layers {
            repo: after.repo.or(self.repo),
            config_files: joined(self.config_files, after.config_files),
            set: joined(self.set, after.set),
            trust_repo: self.trust_repo || after.trust_repo,
        }
    }

    /// The flags as the CLI context takes them.
    fn into_flags(self) -> LayerFlags {
        LayerFlags {
            repo: self.repo,
            config_files: self.config_files,
            set: self.set,
            trust_repo: self.trust_repo,
        }
    }
}

/// The values given before a command, then those after it. Arguments made
/// `global` (under `skills` and `config`) reach both places with the same
/// values; those are taken once.
fn joined<T: PartialEq>(before: Vec<T>, after: Vec<T>) -> Vec<T> {
    if after == before {
        return before;
    }
    before.into_iter().chain(after).collect()
}

/// What one turn is rendered from, shared by `render` and `check` (which
/// words their help its own way with `mut_arg`).
#[derive(Debug, Args)]
struct TurnArgs {
    /// The user's prompt for this turn (default: empty).
    #[arg(long, value_name = "TEXT")]
    prompt: Option<String>,
    /// Activate a skill for this turn (repeatable); `skills list` shows the ids.
    #[arg(long = "skill", value_name = "ID")]
    skills: Vec<String>,
    /// The clock, as an RFC 3339 timestamp, e.g. 2026-11-29T19:30:00Z (default: now).
    #[arg(long, value_name = "RFC3339")]
    now: Option<String>,
    /// The time zone, as an IANA name, e.g. Europe/Berlin (default: TZ, else the system zone).
    #[arg(long, value_name = "IANA")]
    timezone: Option<String>,
    /// A path the task touched (repeatable; relative to the current folder): skills whose
    /// `paths` globs match it are suggested, or activated with skills.auto_activate = "on".
    #[arg(long = "touched", value_name = "PATH")]
    touched: Vec<String>,
    /// Everything as one JSON document: both texts, the cache boundary, every section.
    #[arg(long)]
    json: bool,
}

/// How the machine's facts are pinned, shared by `render` and `check`. Kept
/// apart from [`TurnArgs`] so that `render --help` lists its own flags
/// between the two groups, in the order it always has.
#[derive(Debug, Args)]
struct PinArgs {
    /// Pin machine facts from a facts file (`bcode-prompt facts` prints one), over the config's `[facts]`.
    #[arg(long, value_name = "FILE")]
    facts: Option<PathBuf>,
    /// Read no environment (no user config, user skills, BCODE_*, TZ, LANG...) and probe
    /// nothing unpinned: with a facts file, the same bytes on any machine.
    #[arg(long)]
    hermetic: bool,
}

impl TurnArgs {
    /// The render options these flags and `pins` give; the flags only
    /// `render` has are left at their defaults.
    fn options(self, pins: PinArgs) -> render_cmd::RenderOptions {
        let TurnArgs {
            prompt,
            skills,
            now,
            timezone,
            touched,
            json,
        } = self;
        render_cmd::RenderOptions {
            prompt,
            skills,
            now,
            timezone,
            touched,
            json,
            facts: pins.facts,
            hermetic: pins.hermetic,
            ..render_cmd::RenderOptions::default()
        }
    }
}

/// Makes a command group's own arguments (its `Layers`, the only ones it
/// has) `global`, so they are accepted after any of its subcommands too.
fn global(arg: clap::Arg) -> clap::Arg {
    arg.global(true)
}

// A new command that reads a repository or the configuration flattens
// `Layers` (`#[command(flatten)]`; a group also marks the three `global`, as
// `skills` and `config` do, so they reach its subcommands) and says in
// `after_help` what it reads; one that does not (like `diff`) has no `Layers` and rejects them.
#[derive(Debug, Subcommand)]
enum Command {
    /// Skills: list, inspect, check, and show what the model sees.
    #[command(
        after_help = help::after("Each subcommand has its own --help.", help::EXIT_CODES, help::Reads::Config),
        mut_args(global),
    )]
    Skills {
        #[command(flatten)]
        layers: Layers,
        #[command(subcommand)]
        command: SkillsCommand,
    },
    /// The effective configuration and where each value came from.
    #[command(
        after_help = help::after("Each subcommand has its own --help.", help::EXIT_CODES, help::Reads::Config),
        mut_args(global),
    )]
    Config {
        #[command(flatten)]
        layers: Layers,
        #[command(subcommand)]
        command: ConfigSubcommand,
    },
    /// The assembled prompt: cacheable system text, then the request-only context.
    #[command(after_help = help::after(&help::section_ids(), help::EXIT_CODES, help::Reads::Prompt))]
    Render {
        #[command(flatten)]
        layers: Layers,
        #[command(flatten)]
        turn: TurnArgs,
        /// The section table (id, part, class, bytes, tokens, truncation, sources) and the cache boundary.
        #[arg(long, conflicts_with = "json")]
        explain: bool,
        /// A session folder: relevant-mode invariant focus is kept there between runs.
        #[arg(long, value_name = "DIR")]
        session: Option<PathBuf>,
        #[command(flatten)]
        pins: PinArgs,
    },
    /// Render and compare with a saved golden file; --bless writes it.
    #[command(
        after_help = help::after(
            "The golden's facts are kept beside it in GOLDEN.facts.toml; a differing render is written to GOLDEN.new.",
            help::CHECK_EXIT_CODES,
            help::Reads::Prompt,
        ),
        // The same flags as `render`, in the words of a golden check.
        mut_arg("skills", |a| a.help("Activate a skill for this turn (repeatable)")),
        mut_arg("now", |a| a.help("The clock, as an RFC 3339 timestamp (default: the pinned clock, else now)")),
        mut_arg("timezone", |a| a.help("The time zone, as an IANA name (default: the pinned zone, else TZ, else the system zone)")),
        mut_arg("json", |a| a.help("The golden is `render --json` output")),
        mut_arg("facts", |a| a.help("Pin machine facts from a facts file, over the golden's own")),
        mut_arg("hermetic", |a| a.help("As `render --hermetic` (recommended for goldens)")),
    )]
    Check {
        #[command(flatten)]
        layers: Layers,
        /// The golden file: `render` text output, or its JSON with --json.
        #[arg(value_name = "GOLDEN")]
        golden: PathBuf,
        /// Write the golden (and, the first time, its facts) instead of comparing.
        #[arg(long)]
        bless: bool,
        #[command(flatten)]
        turn: TurnArgs,
        #[command(flatten)]
        pins: PinArgs,
    },
    /// This machine's facts (OS, shell, locale, git, toolchain, roots...) as a facts file.
    #[command(after_help = help::after(
        "Keep the keys you want pinned and pass the file to render --facts or check --facts. \
         Only the facts of the sections that are on are probed; the file the output is \
         redirected into is left out of the git status.",
        help::EXIT_CODES,
        help::Reads::Prompt,
    ))]
    Facts {
        #[command(flatten)]
        layers: Layers,
        /// Pin neutral roots (repo_root = "/repo", home = "/home/user") instead of this machine's.
        #[arg(long)]
        portable: bool,
    },
    /// Compare two saved `render --json` results: which section broke the prompt cache?
    #[command(after_help = help::after(&help::diff_budget(diff_cmd::DIFF_BUDGET), help::DIFF_EXIT_CODES, help::Reads::Nothing))]
    Diff {
        /// The earlier render, saved from `render --json`.
        #[arg(value_name = "A.json")]
        a: PathBuf,
        /// The later render, saved from `render --json`.
        #[arg(value_name = "B.json")]
        b: PathBuf,
    },
    /// An interactive skill session (prompts and slash commands); also reads
    /// commands piped on stdin. Events go to the session folder's events.jsonl.
    #[command(after_help = help::after(
        "Type /help in the session for its commands.",
        help::EXIT_CODES,
        help::Reads::Prompt,
    ))]
    Session {
        #[command(flatten)]
        layers: Layers,
        /// The session folder's name under `<state dir>/sessions/` (default: a timestamp).
        #[arg(long)]
        id: Option<String>,
    },
    /// Serve the skills over MCP on stdin/stdout (newline-delimited JSON-RPC 2.0), or over
    /// Streamable HTTP with --http, with the skills extension (SEP-2640): skills/list,
    /// skills/get, resources/list and resources/read of skill://<id>/<file>, and the tool
    /// search_skills (query, limit), which ranks the served skills for a task and answers with
    /// their skill:// URIs. Add `bcode-prompt --repo DIR mcp` to another agent's MCP config.
    #[cfg(feature = "mcp")]
    #[command(after_help = help::after(
        "Skills whose front-matter name is not their id are not served (SEP-2640 serves a skill under its name); they are named on stderr at start, and so are skills whose name is not ASCII (common MCP clients refuse them).\n\nWith --http ADDR the endpoint is http://ADDR/mcp, until SIGINT or SIGTERM; the address bound is told on stderr. A request from a web page (with an Origin header) is refused. Serving on an address other than loopback needs --http-token-env.",
        help::EXIT_CODES,
        help::Reads::Config,
    ))]
    Mcp {
        #[command(flatten)]
        layers: Layers,
        /// Serve over Streamable HTTP on ADDR (IP:PORT; port 0 picks one), instead of stdio.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// With --http: every request must carry `Authorization: Bearer <token>`, the token
        /// read from the environment variable VAR (needed for an address other than loopback).
        #[arg(long, value_name = "VAR", requires = "http")]
        http_token_env: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum SkillsCommand {
    /// Every available skill, including those hidden from the model.
    #[command(after_help = help::after("", help::EXIT_CODES, help::Reads::Config))]
    List {
        /// As one JSON document: `{"skills": [...], "diagnostics": [...]}`.
        #[arg(long)]
        json: bool,
    },
    /// One skill's validated metadata and its diagnostics.
    #[command(after_help = help::after("", help::EXIT_CODES, help::Reads::Config))]
    Show {
        /// The skill's id (`skills list` shows them).
        id: String,
        /// As one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Diagnostics only (including a check of every skill body).
    #[command(after_help = help::after(help::DOCTOR_PROFILES, help::DOCTOR_EXIT_CODES, help::Reads::Config))]
    Doctor {
        /// As one JSON document: `{"diagnostics": [...]}`.
        #[arg(long)]
        json: bool,
        /// Exit 1 when any error-level diagnostic exists (or, with --profile, any
        /// portability finding).
        #[arg(long)]
        strict: bool,
        /// Lint each skill file against a profile's rules: agentskills, claude or codex.
        #[arg(long, value_name = "PROFILE")]
        profile: Option<String>,
    },
    /// The model-visible catalog exactly as injected (empty when off).
    #[command(after_help = help::after("", help::EXIT_CODES, help::Reads::Config))]
    Catalog,
    /// The skills that best fit a task, best first, with why each ranked.
    ///
    /// The query is the words given; with none (and stdin not a terminal) or
    /// with `-`, it is read from stdin, so a long task can be piped in.
    #[command(after_help = help::after("", help::EXIT_CODES, help::Reads::Config))]
    Search {
        /// The task, in words (or `-` for stdin). Options may come after
        /// it (`skills search pdf forms --limit 3`); a word that starts
        /// with `-` goes after `--`.
        query: Vec<String>,
        /// How many skills to show at most.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// As one JSON document: `{"query": .., "results": [..], "diagnostics": [..]}`.
        #[arg(long)]
        json: bool,
    },
    /// The `<skill ...>` block exactly as injected.
    #[command(after_help = help::after("", help::EXIT_CODES, help::Reads::Config))]
    Context {
        /// The skill's id (`skills list` shows them).
        id: String,
        /// Invocation arguments, as in `/skill ID ARGS...`.
        #[arg(trailing_var_arg = true)]
        args: Vec<String>,
    },
    /// A supporting file of a skill an MCP server serves, read now through
    /// the server and verified against its listing.
    #[command(after_help = help::after("", help::EXIT_CODES, help::Reads::Config))]
    Read {
        /// The skill's id (`skills list` shows them).
        id: String,
        /// The file, relative to the skill's folder (`references/FORM.md`).
        path: String,
    },
}

#[derive(Debug, Subcommand)]
enum ConfigSubcommand {
    /// The effective configuration.
    #[command(after_help = help::after("", help::EXIT_CODES, help::Reads::Config))]
    Show {
        /// As one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Each effective value with its origin and line (`key = value  # origin:line`), then the
    /// values of an untrusted repository's config that were ignored, and why.
    #[command(after_help = help::after("", help::EXIT_CODES, help::Reads::Config))]
    Explain {
        /// One dotted key or table, e.g. `skills.prompt` (default: every key).
        key: Option<String>,
    },
    /// Validate every config layer and print every warning and every error of every file.
    ///
    /// Every layer is checked even when another has an error, and every key of a file is
    /// checked even when one of its values is invalid. Problems go to stdout, one per line,
    /// starting `error:` or `warning:`, then a summary line.
    #[command(after_help = help::after("", help::CONFIG_CHECK_EXIT_CODES, help::Reads::Config))]
    Check {
        /// Unknown keys (and deprecated values) are errors too.
        #[arg(long)]
        strict: bool,
    },
    /// The JSON Schema of the configuration.
    #[command(after_help = help::after("", help::EXIT_CODES, help::Reads::Config))]
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
    let Cli { layers, command } = cli;
    let before = layers.clone();
    let given_before = !layers.is_empty();
    // `diff` compares two files and needs no repository or configuration.
    // `render`, `check` and `session` read the process's inputs and leave the
    // config to the session they open, so it is loaded once; every other
    // command loads it first. An invalid config exits 2 either way.
    let flags_of = move |after: Layers| layers.then(after).into_flags();
    let load = CliContext::from_process;
    let mut stdout = std::io::stdout().lock();
    match command {
        Command::Diff { a, b } => {
            if given_before {
                return Err(CliError::Usage(
                    "--repo, --config and --set do not apply to `diff`: it compares two saved renders"
                        .to_owned(),
                ));
            }
            let (report, differs) = diff_cmd::diff(&a, &b)?;
            print!("{}", terminal::on_stdout(&report));
            Ok(if differs {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        #[cfg(feature = "mcp")]
        Command::Mcp {
            layers,
            http,
            http_token_env,
        } => {
            // The SDK writes the protocol to stdout itself, from another
            // thread: the lock this function holds would stop it.
            drop(stdout);
            let context = load(flags_of(layers))?;
            let transport = match http {
                Some(addr) => mcp_cmd::Transport::Http {
                    addr,
                    token_env: http_token_env,
                },
                None => mcp_cmd::Transport::Stdio,
            };
            mcp_cmd::run(&context, transport)
        }
        Command::Skills {
            layers,
            command: cmd,
        } => {
            let context = load(flags_of(layers))?;
            let cmd = match cmd {
                SkillsCommand::List { json } => skills_cmd::SkillsCmd::List { json },
                SkillsCommand::Show { id, json } => skills_cmd::SkillsCmd::Show { id, json },
                SkillsCommand::Doctor {
                    json,
                    strict,
                    profile,
                } => skills_cmd::SkillsCmd::Doctor {
                    json,
                    strict,
                    profile: profile.as_deref().map(skills_cmd::profile).transpose()?,
                },
                SkillsCommand::Catalog => skills_cmd::SkillsCmd::Catalog,
                SkillsCommand::Search { query, limit, json } => skills_cmd::SkillsCmd::Search {
                    query: skills_cmd::search_query(&query)?,
                    limit,
                    json,
                },
                SkillsCommand::Context { id, args } => skills_cmd::SkillsCmd::Context { id, args },
                SkillsCommand::Read { id, path } => skills_cmd::SkillsCmd::Read { id, path },
            };
            skills_cmd::run(&cmd, &context, &mut stdout)
        }
        Command::Render {
            layers,
            turn,
            explain,
            session,
            pins,
        } => {
            let inputs = ProcessInputs::read(flags_of(layers), pins.hermetic)?;
            let options = render_cmd::RenderOptions {
                explain,
                session,
                ..turn.options(pins)
            };
            render_cmd::run(&options, &inputs, &mut stdout)
        }
        Command::Check {
            layers,
            golden,
            bless,
            turn,
            pins,
        } => {
            let inputs = ProcessInputs::read(flags_of(layers), pins.hermetic)?;
            let options = check_cmd::CheckOptions {
                golden,
                bless,
                render: turn.options(pins),
            };
            check_cmd::run(&options, &inputs, &mut stdout)
        }
        Command::Facts { layers, portable } => {
            facts_cmd::run(&load(flags_of(layers))?, portable, &mut stdout)
        }
        Command::Session { layers, id } => session_cmd::run(
            &session_cmd::SessionCmdOptions { id },
            &ProcessInputs::read(flags_of(layers), false)?,
            &mut stdout,
        ),
        // `config check` reports an invalid config instead of stopping at it.
        Command::Config {
            layers: after,
            command: ConfigSubcommand::Check { strict },
        } => config_check(before.then(after).into_flags(), strict, &mut stdout),
        Command::Config {
            layers,
            command: cmd,
        } => {
            let context = load(flags_of(layers))?;
            let cmd = match cmd {
                ConfigSubcommand::Show { json } => config_cmd::ConfigCommand::Show { json },
                ConfigSubcommand::Explain { key } => {
                    if let Some(key) = &key
                        && !config_cmd::explain_matches(context.workspace.config(), key)
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
                    return config_check(context_flags(&context), strict, &mut stdout);
                }
            };
            config_cmd::run(&cmd, context.workspace.config(), &mut stdout).map_err(CliError::Io)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `config check`: asks the workspace to check its config instead of
/// opening it, so an invalid config is reported in full instead of
/// stopping the command, from the same root and layers every other
/// command loads.
fn config_check(
    flags: LayerFlags,
    strict: bool,
    out: &mut dyn std::io::Write,
) -> Result<ExitCode, CliError> {
    let inputs = ProcessInputs::read(flags, false)?;
    let report = bcode_prompt::Workspace::check_config(&inputs.options())
        .map_err(|err| CliError::Usage(err.to_string()))?;
    let code = config_cmd::check(&report, strict, out).map_err(CliError::Io)?;
    Ok(ExitCode::from(code))
}

/// The layer flags a loaded context was made from.
fn context_flags(context: &CliContext) -> LayerFlags {
    LayerFlags {
        repo: Some(context.inputs.work.clone()),
        ..context.inputs.flags.clone()
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// Every argument of every command, at every level, has help text and
    /// every command an epilogue with its exit codes and environment.
    #[test]
    fn every_command_and_argument_is_documented() {
        fn walk(command: &clap::Command, path: &str) {
            for arg in command.get_arguments() {
                assert!(
                    arg.get_help().is_some(),
                    "`{path}` argument `{}` has no help",
                    arg.get_id()
                );
            }
            let epilogue = command
                .get_after_help()
                .map(ToString::to_string)
                .unwrap_or_default();
            assert!(
                epilogue.contains("Exit codes:") && epilogue.contains("Environment:"),
                "`{path}` has no exit codes or environment in its help"
            );
            for sub in command.get_subcommands() {
                walk(sub, format!("{path} {}", sub.get_name()).trim());
            }
        }
        let command = Cli::command();
        command.clone().debug_assert();
        walk(&command, "");
    }
}
