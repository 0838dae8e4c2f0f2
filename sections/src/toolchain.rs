//! The opt-in `toolchain_context` stage and its probe: a fixed allowlist of
//! version commands, run directly (no shell), in parallel, each with a time
//! and an output limit, the whole run with an overall limit. Failing,
//! missing and hanging tools are omitted (and listed in the section notes).
//!
//! The commands are data ([`ToolCommand`]), so tests run fake ones; the
//! stage only renders the gathered [`ToolchainFacts`].
//!
//! Commands run from a neutral folder (never the repository, which could
//! steer rustup or go towards binaries it chooses), so the versions are the
//! machine's defaults, not a repository's pinned toolchain.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use bcode_text::Limit;
use serde::Serialize;

/// The template this stage renders.
pub const TOOLCHAIN_TEMPLATE: &str = "sections/toolchain.j2";

/// The bound on each tool's version line.
pub const VERSION_LINE_LIMIT: Limit = Limit::Chars(120);

/// The fixed allowlist: `(name, program, args)`.
pub const TOOLCHAIN_COMMANDS: &[(&str, &str, &[&str])] = &[
    ("rustc", "rustc", &["--version"]),
    ("cargo", "cargo", &["--version"]),
    ("python3", "python3", &["--version"]),
    ("node", "node", &["--version"]),
    ("go", "go", &["version"]),
    ("git", "git", &["--version"]),
    ("gcc", "gcc", &["--version"]),
];

/// One version command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCommand {
    /// The tool's name as shown in the section, e.g. `python3`.
    pub name: String,
    /// The executable, looked up on `PATH` and run without a shell.
    pub program: String,
    /// The arguments that make it print its version, e.g. `--version`.
    pub args: Vec<String>,
}

/// [`TOOLCHAIN_COMMANDS`] as [`ToolCommand`]s.
pub fn default_commands() -> Vec<ToolCommand> {
    TOOLCHAIN_COMMANDS
        .iter()
        .map(|(name, program, args)| ToolCommand {
            name: (*name).to_owned(),
            program: (*program).to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        })
        .collect()
}

/// Time and output limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolchainLimits {
    /// Each command is killed after this.
    pub per_command: Duration,
    /// The whole run never waits longer than this.
    pub overall: Duration,
    /// Bytes of stdout read from each command.
    pub max_output_bytes: usize,
}

impl Default for ToolchainLimits {
    fn default() -> Self {
        ToolchainLimits {
            per_command: Duration::from_secs(1),
            overall: Duration::from_secs(2),
            max_output_bytes: 4096,
        }
    }
}

/// A tool's version line (the first line of its output).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolVersion {
    /// The tool's name from its [`ToolCommand`].
    pub name: String,
    /// The first line of its stdout, trimmed, control characters replaced;
    /// the stage bounds it to `VERSION_LINE_LIMIT`.
    pub version: String,
}

/// Why a tool is not shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolOmission {
    /// It could not be started (usually: not installed).
    NotFound,
    /// It exited unsuccessfully.
    Failed,
    /// It printed nothing usable.
    NoOutput,
    /// It hit its own or the overall time limit.
    TimedOut,
}

impl ToolOmission {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            ToolOmission::NotFound => "not found",
            ToolOmission::Failed => "failed",
            ToolOmission::NoOutput => "no output",
            ToolOmission::TimedOut => "timed out",
        }
    }
}

/// What the toolchain probe found, in command-list order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolchainFacts {
    /// The tools that printed a version line.
    pub versions: Vec<ToolVersion>,
    /// The tools left out, by name, with why (listed in the section notes).
    pub omitted: Vec<(String, ToolOmission)>,
}

/// A run in progress: the commands are already executing on their own
/// threads, so other probes can work meanwhile.
#[derive(Debug)]
pub struct ToolchainRun {
    names: Vec<String>,
    results: mpsc::Receiver<(usize, Result<String, ToolOmission>)>,
    overall_deadline: Instant,
}

/// Starts every command in `dir` (tools such as rustup pick their version
/// from the directory).
pub fn start(commands: &[ToolCommand], dir: &Path, limits: &ToolchainLimits) -> ToolchainRun {
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    for (index, command) in commands.iter().enumerate() {
        let worker_tx = tx.clone();
        let command = command.clone();
        let dir = dir.to_path_buf();
        let limits = *limits;
        let spawned = thread::Builder::new()
            .name(format!("bcode-tool-{}", command.name))
            .spawn(move || {
                let _ = worker_tx.send((index, run_one(&command, &dir, &limits)));
            });
        if spawned.is_err() {
            let _ = tx.send((index, Err(ToolOmission::Failed)));
        }
    }
    ToolchainRun {
        names: commands.iter().map(|c| c.name.clone()).collect(),
        results: rx,
        overall_deadline: started + limits.overall,
    }
}

impl ToolchainRun {
    /// Waits for the results, never past the overall deadline. Commands still
    /// running then are reported as timed out; their threads kill them at
    /// their own limit.
    pub fn finish(self) -> ToolchainFacts {
        let mut results: Vec<Option<Result<String, ToolOmission>>> = vec![None; self.names.len()];
        let mut pending = self.names.len();
        while pending > 0 {
            let left = self
                .overall_deadline
                .saturating_duration_since(Instant::now());
            match self.results.recv_timeout(left) {
                Ok((index, result)) => {
                    if let Some(slot) = results.get_mut(index) {
                        *slot = Some(result);
                        pending -= 1;
                    }
                }
                Err(_) => break,
            }
        }
        let mut facts = ToolchainFacts::default();
        for (name, result) in self.names.into_iter().zip(results) {
            match result.unwrap_or(Err(ToolOmission::TimedOut)) {
                Ok(version) => facts.versions.push(ToolVersion { name, version }),
                Err(why) => facts.omitted.push((name, why)),
            }
        }
        facts
    }
}

/// Where version commands run: a directory no repository controls.
pub const NEUTRAL_DIR: &str = "/";

/// Runs the commands and waits for them (see `start`).
pub fn run_toolchain(
    commands: &[ToolCommand],
    dir: &Path,
    limits: &ToolchainLimits,
) -> ToolchainFacts {
    start(commands, dir, limits).finish()
}

fn run_one(
    command: &ToolCommand,
    dir: &PathBuf,
    limits: &ToolchainLimits,
) -> Result<String, ToolOmission> {
    let deadline = Instant::now() + limits.per_command;
    let mut child = Command::new(&command.program)
        .args(&command.args)
        .current_dir(dir)
        // Use the installed Go, never a toolchain a go.mod asks to download.
        .env("GOTOOLCHAIN", "local")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|_| ToolOmission::NotFound)?;
    // Read on a separate thread: a child that forks a grandchild holding the
    // pipe open would otherwise block the read past every limit.
    let (out_tx, out_rx) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        let max = u64::try_from(limits.max_output_bytes).unwrap_or(u64::MAX);
        let _ = thread::Builder::new().spawn(move || {
            let mut buf = Vec::new();
            let _ = stdout.take(max).read_to_end(&mut buf);
            let _ = out_tx.send(buf);
        });
    }
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ToolOmission::TimedOut);
            }
        }
    };
    if !status.success() {
        return Err(ToolOmission::Failed);
    }
    let left = deadline.saturating_duration_since(Instant::now());
    let output = out_rx
        .recv_timeout(left)
        .map_err(|_| ToolOmission::TimedOut)?;
    let text = String::from_utf8_lossy(&output);
    let line: String = text
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if line.is_empty() {
        return Err(ToolOmission::NoOutput);
    }
    Ok(line)
}
