//! The lines typed in `session`, kept between sessions in the state folder
//! (`<state>/history/session`), never in the repository.
//!
//! The file follows the state folder's rules (`bcode_prompt::files::StateDir`): its
//! folder belongs to the user and nobody else may write to it, the file is
//! never opened through a link, and it is rewritten by renaming a fresh file
//! into place. It is bounded: at most [`Bounds::entries`] lines and
//! [`Bounds::bytes`] bytes are kept, a line longer than
//! [`Bounds::entry_bytes`] or holding a control character is never written
//! (nor read back), and an over-long file is read from its tail only.
//!
//! Lines are appended as they are typed, so two sessions open at once both
//! keep theirs; when the file outgrows its bounds it is read again and
//! rewritten with its newest lines.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use bcode_prompt::files::{ReadError, StateDir, StateError};

/// The history file's name in its folder.
const FILE: &str = "session";

/// How much history is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Lines kept, newest last.
    pub entries: usize,
    /// Bytes of the whole file, line ends included.
    pub bytes: usize,
    /// The longest line kept; a longer one is not history but a paste.
    pub entry_bytes: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            entries: 1000,
            bytes: 256 * 1024,
            entry_bytes: 4096,
        }
    }
}

/// The history file of the user's state folder.
#[derive(Debug)]
pub struct HistoryFile {
    dir: StateDir,
    bounds: Bounds,
    /// Lines and bytes the file holds as far as this session knows (another
    /// session may have appended too; compaction reads the file again).
    lines: usize,
    size: usize,
}

impl HistoryFile {
    /// The history folder below the state folder `state`, created (mode
    /// 0700) when missing; refused like every state folder that is a link,
    /// not the user's or writable by others.
    pub fn open(state: &Path, bounds: Bounds) -> Result<HistoryFile, StateError> {
        let dir = StateDir::open(state)?.subdir("history")?;
        Ok(HistoryFile {
            dir,
            bounds,
            lines: 0,
            size: 0,
        })
    }

    /// The kept lines, oldest first. A missing file is an empty history; a
    /// file beyond the bounds is rewritten to fit them.
    pub fn load(&mut self) -> io::Result<Vec<String>> {
        let (entries, fits) = self.read()?;
        if !fits {
            self.write(&entries)?;
        }
        self.lines = entries.len();
        self.size = entries.iter().map(|e| e.len() + 1).sum();
        Ok(entries)
    }

    /// Whether `line` may be kept: not empty, not too long, and without
    /// control characters (the file holds one entry a line, and a line
    /// recalled later should not carry an escape sequence back).
    pub fn keeps(&self, line: &str) -> bool {
        !line.trim().is_empty()
            && line.len() <= self.bounds.entry_bytes
            && !line.chars().any(char::is_control)
    }

    /// Appends `line` when [`HistoryFile::keeps`] it; past the bounds, the
    /// file is rewritten with its newest lines.
    pub fn append(&mut self, line: &str) -> io::Result<()> {
        if !self.keeps(line) {
            return Ok(());
        }
        let mut file = self.dir.open_append(FILE).map_err(into_io)?;
        file.write_all(format!("{line}\n").as_bytes())?;
        self.lines += 1;
        self.size += line.len() + 1;
        if self.lines > self.bounds.entries || self.size > self.bounds.bytes {
            self.load()?;
        }
        Ok(())
    }

    /// The newest valid lines within the bounds, and whether the file held
    /// exactly them (nothing dropped, nothing over a bound).
    fn read(&self) -> io::Result<(Vec<String>, bool)> {
        let (mut file, len) = match self.dir.open_file(FILE) {
            Ok(opened) => opened,
            Err(ReadError::Io(err)) if err.kind() == io::ErrorKind::NotFound => {
                return Ok((Vec::new(), true));
            }
            Err(err) => return Err(into_io(err)),
        };
        let max = self.bounds.bytes as u64;
        // An over-long file is read from its tail: the newest lines are the
        // ones kept, and nothing beyond the bound is ever held.
        let skipped = len.saturating_sub(max);
        if skipped > 0 {
            file.seek(SeekFrom::Start(skipped))?;
        }
        let mut bytes = Vec::new();
        file.take(max).read_to_end(&mut bytes)?;
        let mut text = bytes.as_slice();
        if skipped > 0 {
            // The first line read is a part of one: dropped.
            let start = text
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |i| i + 1);
            text = &text[start..];
        }
        let mut fits = skipped == 0 && text.last().is_none_or(|&b| b == b'\n');
        let mut entries: Vec<String> = Vec::new();
        for line in text.split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            match std::str::from_utf8(line) {
                Ok(line) if self.keeps(line) => entries.push(line.to_owned()),
                _ => fits = false,
            }
        }
        // The newest lines that fit both bounds.
        let mut size = 0;
        let mut keep = 0;
        for entry in entries.iter().rev() {
            if keep == self.bounds.entries || size + entry.len() + 1 > self.bounds.bytes {
                break;
            }
            size += entry.len() + 1;
            keep += 1;
        }
        if keep < entries.len() {
            fits = false;
            entries.drain(..entries.len() - keep);
        }
        Ok((entries, fits))
    }

    /// Replaces the file with `entries`, renamed into place.
    fn write(&self, entries: &[String]) -> io::Result<()> {
        let mut text = String::with_capacity(self.size);
        for entry in entries {
            text.push_str(entry);
            text.push('\n');
        }
        self.dir
            .replace(FILE, &mut |file| file.write_all(text.as_bytes()))
    }
}

fn into_io(err: ReadError) -> io::Error {
    match err {
        ReadError::Io(err) => err,
        other => io::Error::other(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Bounds = Bounds {
        entries: 3,
        bytes: 20,
        entry_bytes: 8,
    };

    fn file(text: Option<&[u8]>) -> (tempfile::TempDir, HistoryFile) {
        let tmp = tempfile::tempdir().unwrap();
        let history = HistoryFile::open(&tmp.path().join("state"), SMALL).unwrap();
        if let Some(text) = text {
            std::fs::write(tmp.path().join("state/history/session"), text).unwrap();
        }
        (tmp, history)
    }

    fn on_disk(tmp: &tempfile::TempDir) -> String {
        std::fs::read_to_string(tmp.path().join("state/history/session")).unwrap()
    }

    #[test]
    fn no_file_is_an_empty_history() {
        let (tmp, mut history) = file(None);
        assert_eq!(history.load().unwrap(), Vec::<String>::new());
        assert!(!tmp.path().join("state/history/session").exists());
    }

    #[test]
    fn lines_are_appended_and_read_back() {
        let (tmp, mut history) = file(None);
        history.load().unwrap();
        history.append("/skills").unwrap();
        history.append("fix it").unwrap();
        assert_eq!(on_disk(&tmp), "/skills\nfix it\n");
        assert_eq!(history.load().unwrap(), ["/skills", "fix it"]);
    }

    #[test]
    fn lines_that_are_not_history_are_not_kept() {
        let (tmp, mut history) = file(None);
        history.load().unwrap();
        for line in ["", "   ", "123456789", "a\u{1b}[2J", "tab\there", "ok"] {
            history.append(line).unwrap();
        }
        assert_eq!(on_disk(&tmp), "ok\n");
    }

    #[test]
    fn the_file_stays_within_its_line_bound() {
        let (tmp, mut history) = file(None);
        history.load().unwrap();
        for line in ["a", "b", "c", "d", "e"] {
            history.append(line).unwrap();
        }
        assert_eq!(on_disk(&tmp), "c\nd\ne\n");
    }

    #[test]
    fn the_file_stays_within_its_byte_bound() {
        let (tmp, mut history) = file(None);
        history.load().unwrap();
        for line in ["1234567", "abcdefg", "ABCDEFG"] {
            history.append(line).unwrap();
        }
        assert_eq!(on_disk(&tmp), "abcdefg\nABCDEFG\n");
    }

    #[test]
    fn an_oversized_or_odd_file_is_read_from_its_tail_and_rewritten() {
        let mut text = b"x".repeat(1000);
        text.extend_from_slice(b"\nbad\xff\nlong-line\nok\n\x1b]52\nlast");
        let (tmp, mut history) = file(Some(&text));
        assert_eq!(history.load().unwrap(), ["ok", "last"]);
        assert_eq!(on_disk(&tmp), "ok\nlast\n");
        // Within the bounds: a line that is not UTF-8, one too long and one
        // without its line end.
        let (tmp, mut history) = file(Some(b"\xff\n123456789\nok\nend"));
        assert_eq!(history.load().unwrap(), ["ok", "end"]);
        assert_eq!(on_disk(&tmp), "ok\nend\n");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_the_files_place_is_refused_and_not_followed() {
        let (tmp, mut history) = file(None);
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::write(&elsewhere, "secret\n").unwrap();
        std::os::unix::fs::symlink(&elsewhere, tmp.path().join("state/history/session")).unwrap();
        assert!(history.load().is_err());
        assert!(history.append("typed").is_err());
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "secret\n");
    }
}
