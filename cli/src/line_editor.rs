//! The line editor of an interactive `session` (standard input and output
//! both terminals): rustyline's editing keys and history, Tab completion of
//! the session's commands and of skill ids, and the history kept between
//! sessions ([`crate::session_history`]).
//!
//! rustyline is used without its own file history: the history file is the
//! state folder's, written by [`HistoryFile`] under the state folder's rules.

use rustyline::completion::{Completer, Pair};
use rustyline::config::{CompletionType, Config};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::{History, MemHistory};
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};

use crate::input_lines::{LineError, MAX_LINE_BYTES};
use crate::session_history::HistoryFile;

/// The session's commands, as completed after a `/` (`/exit` is `/quit`'s
/// alias, left out so that `/` and Tab list each command once).
pub const COMMANDS: [&str; 8] = [
    "/accept", "/dismiss", "/help", "/quit", "/render", "/skill", "/skills", "/touched",
];

/// Terminal names rustyline cannot edit on: it then reads a plain line of
/// any length, so the session reads the bounded way instead. The same list
/// as rustyline's own.
const UNSUPPORTED_TERMS: [&str; 3] = ["dumb", "cons25", "emacs"];

/// Whether a terminal named `term` (the `TERM` variable) supports editing.
pub fn supports_editing(term: Option<&str>) -> bool {
    term.is_none_or(|term| {
        !UNSUPPORTED_TERMS
            .iter()
            .any(|unsupported| unsupported.eq_ignore_ascii_case(term))
    })
}

/// What Tab completes to, refreshed before each line.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Completions {
    /// Every skill id of the registry.
    pub skills: Vec<String>,
    /// The active skills (`/skill off <id>`).
    pub active: Vec<String>,
    /// The pending suggestions (`/accept <id>`).
    pub pending: Vec<String>,
}

impl Completions {
    /// The candidates for the word that ends at byte `pos` of `line`, and
    /// where that word starts.
    pub fn complete(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = line.get(..pos).unwrap_or(line);
        let start = before.rfind(char::is_whitespace).map_or(0, |i| {
            i + before[i..].chars().next().map_or(1, char::len_utf8)
        });
        let word = &before[start..];
        let earlier: Vec<&str> = before[..start].split_whitespace().collect();
        let choices: Vec<&str> = match earlier.as_slice() {
            [] if word.starts_with('/') => COMMANDS.to_vec(),
            ["/skill"] => ["active", "off"]
                .into_iter()
                .chain(self.skills.iter().map(String::as_str))
                .collect(),
            ["/skill", "off"] => self.active.iter().map(String::as_str).collect(),
            ["/accept"] => self.pending.iter().map(String::as_str).collect(),
            _ => Vec::new(),
        };
        let mut found: Vec<String> = choices
            .into_iter()
            .filter(|choice| choice.starts_with(word))
            .map(str::to_owned)
            .collect();
        found.sort();
        found.dedup();
        (start, found)
    }
}

/// rustyline's helper: completion only (no hints, colours or validation).
#[derive(Debug, Default)]
struct SessionHelper {
    completions: Completions,
}

impl Completer for SessionHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, found) = self.completions.complete(line, pos);
        let single = found.len() == 1;
        let pairs = found
            .into_iter()
            .map(|choice| Pair {
                // A unique choice is followed by a space, ready for the
                // next word, as shells do.
                replacement: if single {
                    format!("{choice} ")
                } else {
                    choice.clone()
                },
                display: choice,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for SessionHelper {
    type Hint = String;
}

impl Highlighter for SessionHelper {}

impl Validator for SessionHelper {}

impl Helper for SessionHelper {}

/// The editor, its history and the file that keeps it.
pub struct LineEditor {
    editor: Editor<SessionHelper, MemHistory>,
    /// `None` when there is no usable history file (the session then keeps
    /// history in memory only).
    file: Option<HistoryFile>,
    /// Lines read so far, for naming one in an error.
    count: u64,
}

impl std::fmt::Debug for LineEditor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineEditor")
            .field("history", &self.editor.history().len())
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl LineEditor {
    /// An editor whose history starts with `file`'s lines. A history file
    /// that cannot be read is said on stderr; the session goes on without.
    pub fn new(mut file: Option<HistoryFile>) -> Result<LineEditor, ReadlineError> {
        let config = Config::builder()
            .max_history_size(crate::session_history::Bounds::default().entries)?
            .history_ignore_dups(true)?
            // A line typed after a space is not kept, as in shells: a way
            // to type something that should not be remembered.
            .history_ignore_space(true)
            .auto_add_history(false)
            .completion_type(CompletionType::List)
            .build();
        let mut history = MemHistory::with_config(&config);
        if let Some(kept) = file.as_mut() {
            match kept.load() {
                Ok(lines) => {
                    for line in lines {
                        history.add(&line)?;
                    }
                }
                Err(err) => {
                    eprintln!("bcode-prompt: warning: session history not kept: {err}");
                    file = None;
                }
            }
        }
        let mut editor = Editor::with_history(config, history)?;
        editor.set_helper(Some(SessionHelper::default()));
        Ok(LineEditor {
            editor,
            file,
            count: 0,
        })
    }

    /// Replaces what Tab completes to.
    pub fn set_completions(&mut self, completions: Completions) {
        if let Some(helper) = self.editor.helper_mut() {
            helper.completions = completions;
        }
    }

    /// The next line typed after `prompt`, added to the history; `None` at
    /// the end of input (Ctrl-D on an empty line). Ctrl-C drops the line
    /// being typed and asks again, as in a shell.
    pub fn read_line(&mut self, prompt: &str) -> Option<Result<String, LineError>> {
        loop {
            let read = self.editor.readline(prompt);
            if read.is_ok() {
                self.count += 1;
            }
            match read {
                Ok(line) if line.len() > MAX_LINE_BYTES => {
                    return Some(Err(LineError::TooLong {
                        line: self.count,
                        bytes: line.len(),
                        max: MAX_LINE_BYTES,
                    }));
                }
                Ok(line) => {
                    self.remember(&line);
                    return Some(Ok(line));
                }
                Err(ReadlineError::Interrupted) => {}
                Err(ReadlineError::Eof) => return None,
                Err(ReadlineError::Io(err)) => return Some(Err(LineError::Io(err))),
                Err(other) => return Some(Err(LineError::Io(std::io::Error::other(other)))),
            }
        }
    }

    /// Adds `line` to the history in memory and, when the editor kept it
    /// (not a repeat, not typed after a space), to the file.
    fn remember(&mut self, line: &str) {
        let line = line.trim_end();
        let Some(file) = self.file.as_ref() else {
            let _ = self.editor.add_history_entry(line);
            return;
        };
        if !file.keeps(line) {
            return;
        }
        if !matches!(self.editor.add_history_entry(line), Ok(true)) {
            return;
        }
        if let Some(file) = self.file.as_mut()
            && let Err(err) = file.append(line)
        {
            // Said once: the session goes on with history in memory.
            eprintln!("bcode-prompt: warning: session history not kept: {err}");
            self.file = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str, expected: (usize, &[&str])) {
        let completions = Completions {
            skills: vec!["docs".into(), "rust-debugging".into(), "rust-docs".into()],
            active: vec!["docs".into()],
            pending: vec!["rust-docs".into()],
        };
        let (start, found) = completions.complete(line, line.len());
        let found: Vec<&str> = found.iter().map(String::as_str).collect();
        assert_eq!((start, found.as_slice()), expected, "{line:?}");
    }

    #[test]
    fn commands_complete_after_a_slash() {
        check("/", (0, &COMMANDS));
        check("/ski", (0, &["/skill", "/skills"]));
        check("/sk", (0, &["/skill", "/skills"]));
        check("/q", (0, &["/quit"]));
        check("/nothing", (0, &[]));
        // Not a command: a prompt completes to nothing.
        check("fix", (0, &[]));
    }

    #[test]
    fn skill_ids_complete_where_a_command_takes_one() {
        check(
            "/skill ",
            (7, &["active", "docs", "off", "rust-debugging", "rust-docs"]),
        );
        check("/skill rus", (7, &["rust-debugging", "rust-docs"]));
        check("/skill  rust-de", (8, &["rust-debugging"]));
        check("/skill off ", (11, &["docs"]));
        check("/accept r", (8, &["rust-docs"]));
        // Arguments of a skill, task words and paths are free text.
        check("/skill docs ch", (12, &[]));
        check("/skills rus", (8, &[]));
        check("/touched src", (9, &[]));
    }

    #[test]
    fn editing_needs_a_capable_terminal() {
        assert!(supports_editing(None));
        assert!(supports_editing(Some("xterm-256color")));
        assert!(!supports_editing(Some("dumb")));
        assert!(!supports_editing(Some("EMACS")));
    }
}
