//! What the CLI tests share: a sandbox (repository, home and state folders
//! in a temporary directory) and the binary launched in it with a cleared
//! environment, so no test sees the real home, state or process variables.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code)] // test helpers; each test binary uses a subset

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[cfg(unix)]
pub mod pty;

// The helpers every crate's tests share, under the names these tests use;
// [`Sandbox::short_racy_window`] runs commands with `TEST_RACY_WINDOW`.
pub use bcode_test_support::{
    TEST_RACY_WINDOW, age, mkfifo, past_racy_window, write, write_tree as write_files,
};

/// The binary with an empty environment and no arguments yet (for the
/// commands that take no repository, or a test that sets its own).
pub fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_bcode-prompt"));
    command.env_clear();
    command
}

/// Runs `command`, which must exit 0; the failure message carries what it
/// printed. Returns its whole output.
pub fn succeed(command: &mut Command) -> Output {
    let out = command.output().unwrap();
    assert_exit_0(&out);
    out
}

/// [`succeed`], returning only stdout (which must be UTF-8).
pub fn succeed_stdout(command: &mut Command) -> String {
    ok(command.output().unwrap())
}

/// The stdout (which must be UTF-8) of a command that exited 0.
pub fn ok(out: Output) -> String {
    assert_exit_0(&out);
    String::from_utf8(out.stdout).unwrap()
}

/// Fails, showing what the command printed, unless it exited 0.
pub fn assert_exit_0(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        lossy(&out.stdout),
        lossy(&out.stderr)
    );
}

/// Output bytes as text; they must be UTF-8.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Output bytes as text, invalid UTF-8 replaced (for messages and for
/// output that may carry any bytes).
pub fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `render` at a pinned instant, in UTC.
pub const RENDER_PINNED: [&str; 5] = [
    "render",
    "--now",
    "2026-11-29T12:00:00Z",
    "--timezone",
    "UTC",
];

/// Canonical `repo/`, `home/` (created) and `state/` folders in a temp dir.
pub struct Sandbox {
    _tmp: tempfile::TempDir,
    pub base: PathBuf,
    pub repo: PathBuf,
    pub home: PathBuf,
    pub state: PathBuf,
    /// The racy window its commands run with (`BCODE_RACY_WINDOW_MS`);
    /// `None` keeps the real one.
    racy_window: Option<std::time::Duration>,
    /// How often its `mcp` commands re-check the skill trees
    /// (`BCODE_MCP_REFRESH_MS`); `None` keeps the real half second.
    mcp_refresh: Option<std::time::Duration>,
}

/// The re-check interval of [`Sandbox::short_mcp_refresh`].
pub const TEST_MCP_REFRESH: std::time::Duration = std::time::Duration::from_millis(50);

impl Sandbox {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let (repo, home, state) = (base.join("repo"), base.join("home"), base.join("state"));
        fs::create_dir_all(&home).unwrap();
        Sandbox {
            _tmp: tmp,
            base,
            repo,
            home,
            state,
            racy_window: None,
            mcp_refresh: None,
        }
    }

    /// This sandbox with its commands' racy window shortened to
    /// [`TEST_RACY_WINDOW`], for tests that need a stamp trusted.
    pub fn short_racy_window(mut self) -> Self {
        self.racy_window = Some(TEST_RACY_WINDOW);
        self
    }

    /// This sandbox with its `mcp` commands re-checking the skill trees
    /// every [`TEST_MCP_REFRESH`], so a test waits out their first
    /// re-checks in a fraction of a second.
    pub fn short_mcp_refresh(mut self) -> Self {
        self.mcp_refresh = Some(TEST_MCP_REFRESH);
        self
    }

    /// `bcode-prompt --repo <repo>` with only `HOME` and `BCODE_STATE_DIR` set.
    pub fn command(&self) -> Command {
        self.command_in(&self.repo)
    }

    /// [`Sandbox::command`] with `args`, run to the end.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// [`Sandbox::command`] on another repository folder (one with an odd
    /// name, for example).
    pub fn command_in(&self, repo: &Path) -> Command {
        let mut command = binary();
        command
            .env("HOME", &self.home)
            .env("BCODE_STATE_DIR", &self.state)
            .arg("--repo")
            .arg(repo);
        if let Some(window) = self.racy_window {
            command.env("BCODE_RACY_WINDOW_MS", window.as_millis().to_string());
        }
        if let Some(every) = self.mcp_refresh {
            command.env("BCODE_MCP_REFRESH_MS", every.as_millis().to_string());
        }
        command
    }
}

impl Sandbox {
    /// `bcode-prompt session --id ID` with `extra` flags before the command,
    /// fed `script` on stdin (written on a thread, so a large script cannot
    /// dead-lock against the session's output); returns its whole output.
    pub fn run_session(&self, id: &str, extra: &[&str], script: &[u8]) -> std::process::Output {
        self.run_session_in(&std::env::current_dir().unwrap(), id, extra, script)
    }

    /// [`Sandbox::run_session`] run from the folder `cwd` (paths typed in
    /// the session are taken from there).
    pub fn run_session_in(
        &self,
        cwd: &Path,
        id: &str,
        extra: &[&str],
        script: &[u8],
    ) -> std::process::Output {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = self
            .command()
            .current_dir(cwd)
            .args(extra)
            .args(["session", "--id", id])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let script = script.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&script));
        let output = child.wait_with_output().unwrap();
        // A session that exits before reading its input (refused at start)
        // closes the pipe first: not a failure of the test's writing.
        if let Err(err) = writer.join().unwrap() {
            assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{err}");
        }
        output
    }
}

/// A `session` kept running, driven line by line: what a test types, and
/// the transcript read up to the line it waits for.
pub struct LiveSession {
    pub child: std::process::Child,
    pub stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    /// Where the session's stderr goes (a file, so it never blocks).
    stderr: PathBuf,
}

impl Sandbox {
    /// Starts `session --id ID` (stderr discarded) for a test to drive.
    pub fn live_session(&self, id: &str) -> LiveSession {
        use std::process::Stdio;
        let stderr = self.base.join(format!("session-{id}.stderr"));
        let mut child = self
            .command()
            .args(["session", "--id", id])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        LiveSession {
            child,
            stdin,
            stdout,
            stderr,
        }
    }
}

impl LiveSession {
    /// Writes one input line.
    pub fn send(&mut self, line: &str) {
        use std::io::Write;
        writeln!(self.stdin, "{line}").unwrap();
    }

    /// The transcript up to and including the first line containing
    /// `needle`; fails when the session ends first.
    pub fn read_until(&mut self, needle: &str) -> String {
        use std::io::BufRead;
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the session ended before {needle:?}: {seen}"
            );
            seen.push_str(&line);
            if line.contains(needle) {
                return seen;
            }
        }
    }

    /// Closes the input and waits: the session's exit code.
    pub fn finish(self) -> Option<i32> {
        self.finish_with_stderr().0
    }

    /// Closes the input, waits for the exit and returns its code with
    /// everything the session wrote to stderr.
    pub fn finish_with_stderr(self) -> (Option<i32>, String) {
        let LiveSession {
            mut child,
            stdin,
            stderr,
            ..
        } = self;
        drop(stdin);
        let code = child.wait().unwrap().code();
        (code, fs::read_to_string(stderr).unwrap())
    }
}

/// Makes `dir` a git repository with one commit of everything in it.
pub fn git_commit_all(dir: &Path) {
    let repository = git2::Repository::init(dir).unwrap();
    let mut index = repository.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repository.find_tree(index.write_tree().unwrap()).unwrap();
    let signature = git2::Signature::now("Someone", "someone@example.invalid").unwrap();
    repository
        .commit(
            Some("HEAD"),
            &signature,
            &signature,
            "team repo",
            &tree,
            &[],
        )
        .unwrap();
}

/// Waits for `child`, killing it after `limit` (then its exit code is
/// `None`).
pub fn wait_or_kill(mut child: std::process::Child, limit: std::time::Duration) -> Output {
    let id = child.id();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if finished.recv_timeout(limit).is_err() {
            // The child is still running: end it by its id.
            let _ = std::process::Command::new("kill")
                .args(["-9", &id.to_string()])
                .status();
        }
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut bytes).unwrap();
        bytes
    });
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut stdout, &mut out).unwrap();
    let status = child.wait().unwrap();
    let _ = done.send(());
    watchdog.join().unwrap();
    Output {
        status,
        stdout: out,
        stderr: errors.join().unwrap(),
    }
}

/// `sha256:<hex>` of `bytes`, by the system's `sha256sum` (an
/// implementation other than the one under test).
pub fn digest(bytes: &[u8]) -> String {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    let hex = String::from_utf8(out.stdout).unwrap();
    format!("sha256:{}", hex.split_whitespace().next().unwrap())
}
