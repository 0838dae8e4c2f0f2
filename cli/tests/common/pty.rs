//! A pseudo-terminal for tests that type into the CLI as a person does:
//! the command's standard input and output are a real terminal of a chosen
//! width (its stderr goes to a file), keys are written to the terminal's
//! other side and its screen output is read back, each wait bounded by a
//! timeout rather than a sleep.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use rustix::fs::{Mode, OFlags};
use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

/// The longest a test waits for output it expects: a bound for a stuck
/// session, never a pause (each wait ends as soon as the output is there).
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Keys as a terminal sends them.
pub const UP: &str = "\u{1b}[A";
pub const TAB: &str = "\t";
pub const ENTER: &str = "\r";
pub const CTRL_D: &str = "\u{4}";
pub const CTRL_U: &str = "\u{15}";

/// A command running on a pseudo-terminal.
pub struct Pty {
    child: Child,
    master: File,
    output: Receiver<Vec<u8>>,
    /// Everything the terminal showed so far, raw.
    seen: Vec<u8>,
    /// How much of `seen` (as plain text) earlier waits consumed.
    consumed: usize,
    stderr: PathBuf,
}

impl Pty {
    /// Starts `command` with a terminal `columns` wide (0: a terminal that
    /// tells no width) as its standard input and output, and its stderr in
    /// the file `stderr`.
    pub fn spawn(mut command: Command, columns: u16, stderr: &Path) -> Pty {
        let master =
            openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let terminal = rustix::fs::open(
            name.as_c_str(),
            OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap();
        tcsetwinsize(
            &terminal,
            Winsize {
                ws_row: 24,
                ws_col: columns,
                ws_xpixel: 0,
                ws_ypixel: 0,
            },
        )
        .unwrap();
        command
            .stdin(Stdio::from(terminal.try_clone().unwrap()))
            .stdout(Stdio::from(terminal))
            .stderr(File::create(stderr).unwrap());
        let child = command.spawn().unwrap();
        // The command holds the terminal's ends; this process keeps none, so
        // reading the master ends when the command exits.
        drop(command);
        let master = File::from(master);
        let mut reader = master.try_clone().unwrap();
        let (send, output) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // A closed terminal reads as an error (EIO) or as the end.
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                if send.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Pty {
            child,
            master,
            output,
            seen: Vec::new(),
            consumed: 0,
            stderr: stderr.to_path_buf(),
        }
    }

    /// Types `keys`.
    pub fn send(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// The plain text (see [`plain`]) shown since the last wait, up to and
    /// including the first `needle`; fails after [`PATIENCE`] without it.
    pub fn expect(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let text = plain(&self.seen);
            if let Some(at) = text[self.consumed..].find(needle) {
                let end = self.consumed + at + needle.len();
                let shown = text[self.consumed..end].to_owned();
                self.consumed = end;
                return shown;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.output.recv_timeout(left) {
                Ok(bytes) => self.seen.extend_from_slice(&bytes),
                Err(RecvTimeoutError::Timeout) => panic!(
                    "no {needle:?} on the terminal within {PATIENCE:?}; since the last wait: {:?}\nstderr: {}",
                    &text[self.consumed..],
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                ),
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "the command ended before {needle:?}; since the last wait: {:?}\nstderr: {}",
                    &text[self.consumed..],
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                ),
            }
        }
    }

    /// Waits (at most [`PATIENCE`]) for the command to exit: its exit code
    /// and its stderr.
    pub fn finish(mut self) -> (Option<i32>, String) {
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the command did not exit within {PATIENCE:?}");
            }
            // Short polls: the exit is usually immediate.
            std::thread::sleep(Duration::from_millis(10));
        };
        (
            status.code(),
            std::fs::read_to_string(&self.stderr).unwrap_or_default(),
        )
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        // A failed test leaves no session behind.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Terminal output as plain text: escape sequences (CSI, OSC, and the
/// two-byte ones) and carriage returns removed, the rest as UTF-8 (lossy).
pub fn plain(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters, then one final byte in `@`..=`~`.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ESC `\`.
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' | '\u{7}' => {}
            c => out.push(c),
        }
    }
    out
}

impl super::Sandbox {
    /// `session --id ID` on a terminal `columns` wide (`TERM=xterm`, and
    /// `env` besides the sandbox's variables), its stderr in the sandbox.
    pub fn typed_session(&self, id: &str, columns: u16, env: &[(&str, &str)]) -> Pty {
        let mut command = self.command();
        command.env("TERM", "xterm").args(["session", "--id", id]);
        for (key, value) in env {
            command.env(key, value);
        }
        Pty::spawn(
            command,
            columns,
            &self.base.join(format!("session-{id}.stderr")),
        )
    }
}
