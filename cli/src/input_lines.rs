//! Lines of operator input (a piped or typed `session`), bounded and
//! checked one line at a time.
//!
//! `BufRead::lines` has two faults for a session: one line that is not UTF-8
//! ends the whole iteration with an error that names no line, and a line
//! has no length bound, so a stream without newlines (`session < /dev/zero`)
//! is buffered without limit. [`InputLines`] reads bytes, keeps at most
//! [`MAX_LINE_BYTES`] of a line, consumes the rest of an over-long line
//! without keeping it, and reports an over-long or non-UTF-8 line as an
//! error for that line only; the next line is read as usual.

use std::io::{self, BufRead};

/// The longest input line kept, newline excluded. A prompt or a `/skill`
/// command with arguments fits many times over; anything longer is not
/// typed by a person.
pub const MAX_LINE_BYTES: usize = 1024 * 1024;

/// Why one line could not be used. The iterator goes on after
/// [`LineError::TooLong`] and [`LineError::NotUtf8`]; it ends after
/// [`LineError::Io`].
#[derive(Debug)]
pub enum LineError {
    /// The line (1-based `line`) had `bytes` bytes, over `max`; it was
    /// skipped without being held in memory.
    TooLong { line: u64, bytes: usize, max: usize },
    /// The line is not UTF-8; `valid_up_to` bytes were.
    NotUtf8 { line: u64, valid_up_to: usize },
    /// Reading the input failed.
    Io(io::Error),
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::TooLong { line, bytes, max } => write!(
                f,
                "input line {line} is {bytes} bytes, over the {max}-byte limit; it was skipped"
            ),
            LineError::NotUtf8 { line, valid_up_to } => write!(
                f,
                "input line {line} is not UTF-8 (invalid byte after {valid_up_to} bytes); it was skipped"
            ),
            LineError::Io(err) => write!(f, "cannot read input: {err}"),
        }
    }
}

impl std::error::Error for LineError {}

/// An iterator over the lines of `reader` without their `\n` or `\r\n`.
#[derive(Debug)]
pub struct InputLines<R> {
    reader: R,
    max: usize,
    line: u64,
    done: bool,
    buf: Vec<u8>,
}

impl<R: BufRead> InputLines<R> {
    /// Lines of `reader`, each at most `max` bytes.
    pub fn new(reader: R, max: usize) -> Self {
        InputLines {
            reader,
            max,
            line: 0,
            done: false,
            buf: Vec::new(),
        }
    }

    /// Reads one line into `buf` (newline and a `\r` before it excluded),
    /// keeping at most `max + 1` bytes. Returns the line's full length, or
    /// `None` at the end.
    fn read_line(&mut self) -> io::Result<Option<usize>> {
        self.buf.clear();
        let mut len = 0usize;
        let mut seen_any = false;
        // The last byte of the line, wherever the cut fell, so a `\r\n`
        // ending is recognised on an over-long line too.
        let mut last = None;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(chunk) => chunk,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            let found = chunk.iter().position(|&b| b == b'\n');
            let take = found.unwrap_or(chunk.len());
            if chunk.is_empty() {
                break;
            }
            seen_any = true;
            if take > 0 {
                last = Some(chunk[take - 1]);
            }
            let room = (self.max + 1).saturating_sub(self.buf.len());
            self.buf.extend_from_slice(&chunk[..take.min(room)]);
            len = len.saturating_add(take);
            self.reader.consume(take + usize::from(found.is_some()));
            if found.is_some() {
                break;
            }
        }
        if !seen_any {
            return Ok(None);
        }
        if last == Some(b'\r') {
            len -= 1;
            if self.buf.len() > len {
                self.buf.truncate(len);
            }
        }
        Ok(Some(len))
    }
}

impl<R: BufRead> Iterator for InputLines<R> {
    type Item = Result<String, LineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let len = match self.read_line() {
            Ok(Some(len)) => len,
            Ok(None) => {
                self.done = true;
                return None;
            }
            Err(err) => {
                // An input that failed once is not read again: a broken
                // terminal would otherwise yield the same error forever.
                self.done = true;
                return Some(Err(LineError::Io(err)));
            }
        };
        self.line += 1;
        if len > self.max {
            return Some(Err(LineError::TooLong {
                line: self.line,
                bytes: len,
                max: self.max,
            }));
        }
        let bytes = std::mem::take(&mut self.buf);
        Some(String::from_utf8(bytes).map_err(|err| LineError::NotUtf8 {
            line: self.line,
            valid_up_to: err.utf8_error().valid_up_to(),
        }))
    }
}

/// The lines of standard input, bounded by [`MAX_LINE_BYTES`].
pub fn stdin_lines() -> InputLines<io::StdinLock<'static>> {
    InputLines::new(io::stdin().lock(), MAX_LINE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line of `input` read with limit `max`, errors as their message.
    fn check(input: &[u8], max: usize, expected: &[Result<&str, &str>]) {
        let got: Vec<Result<String, String>> = InputLines::new(input, max)
            .map(|line| line.map_err(|err| err.to_string()))
            .collect();
        let expected: Vec<Result<String, String>> = expected
            .iter()
            .map(|e| e.map(str::to_owned).map_err(str::to_owned))
            .collect();
        assert_eq!(got, expected, "input {:?}", String::from_utf8_lossy(input));
    }

    #[test]
    fn lines_lose_their_newlines() {
        check(b"", 10, &[]);
        check(
            b"a\nb\r\n\nlast",
            10,
            &[Ok("a"), Ok("b"), Ok(""), Ok("last")],
        );
        check(b"a\n", 10, &[Ok("a")]);
    }

    #[test]
    fn a_non_utf8_line_is_an_error_for_that_line_only() {
        check(
            b"/skills\ncaf\xe9\n/quit\n",
            100,
            &[
                Ok("/skills"),
                Err("input line 2 is not UTF-8 (invalid byte after 3 bytes); it was skipped"),
                Ok("/quit"),
            ],
        );
    }

    #[test]
    fn an_over_long_line_is_consumed_and_reported() {
        check(
            b"12345\n123456\n123456\r\n1234\r\n12345678901234567890",
            5,
            &[
                Ok("12345"),
                Err("input line 2 is 6 bytes, over the 5-byte limit; it was skipped"),
                Err("input line 3 is 6 bytes, over the 5-byte limit; it was skipped"),
                Ok("1234"),
                Err("input line 5 is 20 bytes, over the 5-byte limit; it was skipped"),
            ],
        );
        // The limit counts the line without its `\r\n`.
        check(b"12345\r\n", 5, &[Ok("12345")]);
    }

    #[test]
    fn an_endless_line_is_never_held_whole() {
        // A reader that hands out small chunks, as a pipe does.
        let input = vec![b'x'; 3 * 8192 + 7];
        let reader = io::BufReader::with_capacity(64, input.as_slice());
        let mut lines = InputLines::new(reader, 100);
        assert!(matches!(
            lines.next(),
            Some(Err(LineError::TooLong {
                line: 1,
                bytes: 24583,
                max: 100
            }))
        ));
        assert!(lines.buf.capacity() < 4096, "{}", lines.buf.capacity());
        assert!(lines.next().is_none());
    }

    #[test]
    fn a_read_error_ends_the_lines() {
        struct Failing;
        impl io::Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("broken terminal"))
            }
        }
        let mut lines = InputLines::new(io::BufReader::new(Failing), 10);
        assert_eq!(
            lines.next().map(|r| r.map_err(|e| e.to_string())),
            Some(Err("cannot read input: broken terminal".to_owned()))
        );
        assert!(lines.next().is_none());
    }
}
