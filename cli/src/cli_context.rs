//! What every command needs: the repository, an injected snapshot of the
//! environment, and the loaded configuration (exit 2 when it is invalid).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use bcode_prompt::machine::{CI_VARIABLES, CONTAINER_VARIABLES, SSH_VARIABLES};
use bcode_prompt::repository::{Cache, StateFolder};
use bcode_prompt::{PromptError, SessionOptions, Workspace};

/// The environment variable that sets the racy window in milliseconds (see
/// [`ProcessInputs::racy_window`]).
const RACY_WINDOW_VAR: &str = "BCODE_RACY_WINDOW_MS";

/// The variable that shortens `bcode-prompt mcp`'s re-check of the skill
/// trees (see [`ProcessInputs::mcp_refresh`]).
const MCP_REFRESH_VAR: &str = "BCODE_MCP_REFRESH_MS";

/// How often `bcode-prompt mcp` re-checks the skill trees by default.
pub const MCP_REFRESH: std::time::Duration = std::time::Duration::from_millis(500);

/// Why a command could not run, with its exit code.
#[derive(Debug)]
pub enum CliError {
    /// Bad arguments or an unknown skill: exit 2.
    Usage(String),
    /// An invalid configuration: exit 2.
    Config(String),
    /// Writing output failed (a closed pipe, for example): exit 2.
    Io(std::io::Error),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        2
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Usage(message) | CliError::Config(message) => f.write_str(message),
            CliError::Io(err) => write!(f, "cannot write output: {err}"),
        }
    }
}

/// The resolved inputs of one invocation and the workspace they open (the
/// loaded configuration among it).
#[derive(Debug)]
pub struct CliContext {
    pub inputs: ProcessInputs,
    pub workspace: Workspace,
}

/// The config layer flags of the command line.
#[derive(Clone, Debug)]
pub struct LayerFlags {
    pub repo: Option<PathBuf>,
    pub config_files: Vec<PathBuf>,
    pub set: Vec<String>,
    pub trust_repo: bool,
}

/// What the process gives an invocation before any config is loaded: the
/// folder `--repo` names, the working directory and the environment
/// snapshot. A command that only opens a session (`render`, `check`,
/// `session`) needs no more: the session loads the config and reports its
/// warnings. The repository root is the workspace's to find
/// ([`bcode_prompt::Workspace::repo`]); the CLI never looks for it itself.
#[derive(Clone, Debug)]
pub struct ProcessInputs {
    /// The working folder `--repo` names (canonical): the root, or a
    /// folder inside it whose instructions and skills are added.
    pub work: PathBuf,
    /// The process's working directory, for paths given on the command line.
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    pub flags: LayerFlags,
}

impl ProcessInputs {
    /// A path the user says the task touched (`render --touched`,
    /// `/touched`), as the skills' `paths` globs and the relevant-mode
    /// selector read it: relative to the repository root, `/`-separated.
    /// A relative path is taken from the working directory, like every
    /// path on the command line; the file need not exist (a deleted file
    /// was touched too). A path outside the repository (whose root is
    /// `root`, as the workspace found it) is an error.
    pub fn repository_path(&self, root: &Path, given: &str) -> Result<String, CliError> {
        let written = bcode_prompt::text::lexical(&self.cwd.join(given));
        // Through a link inside the repository, the real path is the one
        // below the root.
        let real = std::fs::canonicalize(&written).unwrap_or_else(|_| written.clone());
        let inside = real
            .strip_prefix(root)
            .or_else(|_| written.strip_prefix(root))
            .map_err(|_| {
                CliError::Usage(format!(
                    "touched path `{given}` is outside the repository `{}`",
                    root.display()
                ))
            })?;
        let parts: Vec<String> = inside
            .components()
            .map(|part| part.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.is_empty() {
            return Err(CliError::Usage(format!(
                "touched path `{given}` is the repository itself; name a file or folder in it"
            )));
        }
        Ok(parts.join("/"))
    }

    /// Reads the process environment once, here at the edge (warnings
    /// about variables that had to be dropped go to stderr); a hermetic
    /// command (`--hermetic`) reads none of it, so no user config, user
    /// skill root or `BCODE_*` variable takes part.
    pub fn read(flags: LayerFlags, hermetic: bool) -> Result<Self, CliError> {
        let cwd = std::env::current_dir()
            .map_err(|err| CliError::Usage(format!("cannot read the current directory: {err}")))?;
        let repo = flags
            .repo
            .as_ref()
            .map_or_else(|| cwd.clone(), |r| cwd.join(r));
        let repo = std::fs::canonicalize(&repo)
            .map_err(|err| CliError::Usage(format!("--repo `{}`: {err}", repo.display())))?;
        if !repo.is_dir() {
            return Err(CliError::Usage(format!(
                "--repo `{}` is not a directory",
                repo.display()
            )));
        }
        // `vars_os`, never `vars`: `std::env::vars` panics on the first value
        // that is not UTF-8, and `cd` into a checkout with a Latin-1 name is
        // enough to put one in `PWD`.
        let (env, warnings) = if hermetic {
            (BTreeMap::new(), Vec::new())
        } else {
            env_snapshot(std::env::vars_os())
        };
        for warning in &warnings {
            eprintln!("bcode-prompt: warning: {warning}");
        }
        Ok(ProcessInputs {
            work: repo,
            cwd,
            env,
            flags,
        })
    }

    /// The racy window: `BCODE_RACY_WINDOW_MS` milliseconds when the
    /// environment sets it to a whole number, else `bcode_prompt::files::RACY_WINDOW`.
    /// A stamp changed within the window is never trusted; the variable
    /// lets tests on a file system with fine timestamps shorten the wait.
    /// It is read from the process environment only: a repository's config
    /// cannot reach it, so a repository cannot make its own edits trusted
    /// sooner (and `--hermetic` reads no environment at all).
    pub fn racy_window(&self) -> std::time::Duration {
        self.env
            .get(RACY_WINDOW_VAR)
            .and_then(|ms| ms.trim().parse::<u64>().ok())
            .map_or(
                bcode_prompt::files::RACY_WINDOW,
                std::time::Duration::from_millis,
            )
    }

    /// How often `bcode-prompt mcp` re-checks the skill trees:
    /// `BCODE_MCP_REFRESH_MS` milliseconds (1 to 500) when the environment
    /// sets it to a whole number, else [`MCP_REFRESH`]. Tests shorten it so
    /// they need not wait out the server's first re-checks; it is never
    /// longer than the default, so a listing's `ttlMs` stays a promise the
    /// server keeps. Read from the process environment only.
    pub fn mcp_refresh(&self) -> std::time::Duration {
        self.env
            .get(MCP_REFRESH_VAR)
            .and_then(|ms| ms.trim().parse::<u64>().ok())
            .map_or(MCP_REFRESH, |ms| {
                std::time::Duration::from_millis(ms)
                    .clamp(std::time::Duration::from_millis(1), MCP_REFRESH)
            })
    }

    /// Says on stderr (once a process) when the state folder, or the disk
    /// cache's folders in it, are not safe to keep state in: the library then
    /// quietly goes without the disk cache, and the operator should know why.
    /// Nothing is created here; a missing folder is no problem.
    fn warn_about_the_state_folder(&self) {
        static WARNED: std::sync::Once = std::sync::Once::new();
        if let Err(err) = StateFolder::of(&self.env).check(Cache::Skills) {
            WARNED.call_once(|| {
                eprintln!("bcode-prompt: warning: {err}; the skill disk cache is not used");
            });
        }
    }

    /// Session options for this invocation (see [`ProcessInputs::options`]),
    /// with a warning on stderr when the state folder is not usable.
    pub fn session_options(&self) -> SessionOptions {
        self.warn_about_the_state_folder();
        self.options()
    }

    /// The options a workspace or session of this invocation opens with:
    /// the repository, the working directory, the environment snapshot and
    /// every config layer flag.
    pub fn options(&self) -> SessionOptions {
        let mut options = SessionOptions::new(&self.work)
            .cwd(&self.cwd)
            .env(self.env.clone())
            .trust_repository(self.flags.trust_repo)
            .racy_window(self.racy_window());
        for file in &self.flags.config_files {
            options = options.config_file(file);
        }
        for assignment in &self.flags.set {
            options = options.set(assignment);
        }
        options
    }
}

impl CliContext {
    /// Reads the process environment once, here at the edge, and loads the
    /// layered configuration. Config warnings go to stderr.
    pub fn from_process(flags: LayerFlags) -> Result<Self, CliError> {
        let inputs = ProcessInputs::read(flags, false)?;
        let workspace = Workspace::open(&inputs.options()).map_err(|err| match err {
            PromptError::Config(err) => CliError::Config(err.to_string()),
            other => CliError::Usage(other.to_string()),
        })?;
        if let Some(refused) = workspace.refused_root() {
            eprintln!(
                "bcode-prompt: warning: {}",
                bcode_prompt::Notice::from_foreign_root(refused)
            );
        }
        for warning in &workspace.config().warnings {
            eprintln!("bcode-prompt: warning: {warning}");
        }
        Ok(CliContext { inputs, workspace })
    }
}

/// Variables whose *value* the prompt or the configuration reads: a value
/// that is not UTF-8 is dropped with a warning, because the operator would
/// otherwise wonder why their setting had no effect.
fn value_is_read(name: &str) -> bool {
    const READ: [&str; 6] = ["HOME", "TZ", "SHELL", "LANG", "LC_ALL", "LC_MESSAGES"];
    name.starts_with("BCODE_") || name.starts_with("XDG_") || READ.contains(&name)
}

/// Variables of which only the presence is read (CI, container and SSH
/// signals): their value never reaches the prompt, so a lossy copy keeps
/// the signal without a warning.
fn presence_is_read(name: &str) -> bool {
    [CI_VARIABLES, CONTAINER_VARIABLES, SSH_VARIABLES]
        .iter()
        .any(|set| set.contains(&name))
}

/// The UTF-8 snapshot of the environment that the rest of the program sees,
/// and a warning for each variable it needs whose value had to be dropped.
/// Other variables that are not UTF-8 (`PWD` in a Latin-1 named checkout,
/// for example) are skipped silently: nothing reads them.
pub fn env_snapshot(
    vars: impl Iterator<Item = (OsString, OsString)>,
) -> (BTreeMap<String, String>, Vec<String>) {
    let mut env = BTreeMap::new();
    let mut warnings = Vec::new();
    for (name, value) in vars {
        // A name that is not UTF-8 cannot be one we look up.
        let Ok(name) = name.into_string() else {
            continue;
        };
        match value.into_string() {
            Ok(value) => {
                env.insert(name, value);
            }
            Err(value) if presence_is_read(&name) => {
                env.insert(name, value.to_string_lossy().into_owned());
            }
            Err(value) if value_is_read(&name) => warnings.push(format!(
                "environment variable {name} is not UTF-8 ({}); it is ignored",
                value.to_string_lossy().escape_debug()
            )),
            Err(_) => {}
        }
    }
    (env, warnings)
}

// The bytes of a non-UTF-8 variable can only be written this way on Unix.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    fn var(name: &[u8], value: &[u8]) -> (OsString, OsString) {
        (
            OsString::from_vec(name.to_vec()),
            OsString::from_vec(value.to_vec()),
        )
    }

    #[test]
    fn non_utf8_variables_are_skipped_and_needed_ones_reported() {
        let (env, warnings) = env_snapshot(
            [
                var(b"PWD", b"/src/caf\xe9"),
                var(b"HOME", b"/home/j\xf6rg"),
                var(b"SSH_TTY", b"/dev/pts/\xff"),
                var(b"N\xe4ME", b"value"),
                var(b"LANG", b"C.UTF-8"),
            ]
            .into_iter(),
        );
        let expected: BTreeMap<String, String> = [
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
            ("SSH_TTY".to_owned(), "/dev/pts/\u{fffd}".to_owned()),
        ]
        .into_iter()
        .collect();
        assert_eq!(env, expected);
        assert_eq!(
            warnings,
            ["environment variable HOME is not UTF-8 (/home/j\u{fffd}rg); it is ignored"]
        );
    }
}
