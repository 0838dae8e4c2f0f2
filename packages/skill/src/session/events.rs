//! Durable skill session events: the [`EventSink`] hosts emit [`SkillEvent`]s
//! into, an in-memory sink, and an append-only JSON-lines log that survives
//! crashes and can be audited afterwards.
//!
//! # The log format
//!
//! One record per line, each a JSON object holding a sequence number, a UTC
//! RFC 3339 timestamp and the event's own fields (tagged by `event`):
//!
//! ```text
//! {"seq":0,"at":"2026-03-01T12:00:00.000Z","event":"SkillActivated","id":"rust-debugging",...}
//! ```
//!
//! The newline is the commit marker. [`JsonlSink`] writes a record and its
//! newline in one call, then flushes and `sync_data`s before `emit` returns,
//! so an acknowledged event is on disk. A crash in the middle of a write
//! leaves a last line without a newline; [`read_events`] reports that torn
//! tail and skips it, and a sink reopened on that file first ends the torn
//! line so its next record starts on a line of its own. Lines longer than
//! [`MAX_RECORD_BYTES`] are never held in memory whole: the reader skips them
//! with a problem, and the sink refuses to write them.
//!
//! The log is state in a folder that may be shared (a CI runner's state
//! directory), so it is opened only as a regular file and never through a
//! link (`O_NOFOLLOW`, `O_NONBLOCK`, then `fstat`): a FIFO, a device or a
//! link in its place is refused with [`EventSinkError::NotALog`] rather than
//! appended to or read. A sink finds where to continue by reading the log
//! backwards from its end, at most [`TAIL_SCAN_BYTES`], so a huge (or
//! sparse) file opens at once; [`read_events`] reads at most
//! [`MAX_LOG_BYTES`].

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use bcode_skill_models::{SkillContextResponse, SkillEvent};
use serde::{Deserialize, Serialize};

/// The longest record line, newline excluded, that the log accepts. Events
/// carry bounded previews, never bodies, so real records are far smaller; the
/// cap only keeps a damaged or hostile file from exhausting memory.
pub const MAX_RECORD_BYTES: usize = 1024 * 1024;

/// How far back from its end a sink looks for the last intact record before
/// it gives up on a log (damaged lines are skipped, but only this many bytes
/// of them).
pub const TAIL_SCAN_BYTES: usize = 4 * MAX_RECORD_BYTES;

/// The largest log [`read_events`] reads; a larger one is refused rather
/// than held in memory.
pub const MAX_LOG_BYTES: u64 = 256 * 1024 * 1024;

/// Where hosts send skill events.
///
/// `emit` takes `&mut self`: a sink is owned by one session, and a host that
/// shares one across threads wraps it in a `Mutex`, which keeps the sinks
/// themselves free of locks. `Send` lets a session move to another thread.
pub trait EventSink: Send {
    /// Records `event`. When this returns `Ok`, the event is durable as far
    /// as the sink's medium allows.
    fn emit(&mut self, event: &SkillEvent) -> Result<(), EventSinkError>;
}

/// Why an event could not be recorded or a log could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EventSinkError {
    /// Opening, locking, reading, writing or syncing the log file failed.
    #[error("event log `{path}`: {source}")]
    Io {
        /// The log file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The event could not be turned into JSON.
    #[error("event could not be serialized: {reason}")]
    Serialize {
        /// serde_json's error message.
        reason: String,
    },
    /// The serialized record is longer than a log line may be, so it was not
    /// written (a reader would skip it as oversized).
    #[error("event record is {bytes} bytes; the limit is {max}")]
    TooLarge {
        /// Size of the serialized record in bytes, without its newline.
        bytes: usize,
        /// [`MAX_RECORD_BYTES`].
        max: usize,
    },
    /// The file is not a log this sink can continue or read: not a regular
    /// file (a FIFO, device, folder or link in its place), a last line over
    /// [`MAX_RECORD_BYTES`], no intact record within `TAIL_SCAN_BYTES` of
    /// its end, or (for [`read_events`]) larger than `MAX_LOG_BYTES`.
    #[error("event log `{path}` refused: {reason}")]
    NotALog {
        /// The log file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Another sink (in this or another process) holds the log: a log has
    /// one writer at a time, or two would number records from the same point.
    #[error(
        "event log `{path}` is in use by another writer (is a session with the same id still running?)"
    )]
    Locked {
        /// The log file that is locked.
        path: PathBuf,
    },
}

/// A source of timestamps, injected so tests and golden files are hermetic.
pub trait Clock: Send {
    /// The current time, stamped on each record as it is written.
    fn now(&self) -> SystemTime;
}

/// The real clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// One line of the log: the event with its position and time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Position in the log, from 0, increasing by one per record.
    pub seq: u64,
    /// When the event was emitted, UTC, RFC 3339 with milliseconds.
    pub at: String,
    /// The event itself; its fields sit beside `seq` and `at` in the JSON.
    #[serde(flatten)]
    pub event: SkillEvent,
}

/// Collects events in memory, for tests and hosts that persist elsewhere.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemorySink {
    /// Every event emitted, in order.
    pub events: Vec<SkillEvent>,
}

impl EventSink for MemorySink {
    fn emit(&mut self, event: &SkillEvent) -> Result<(), EventSinkError> {
        self.events.push(event.clone());
        Ok(())
    }
}

/// The durable sink: an append-only JSON-lines file.
pub struct JsonlSink {
    file: File,
    path: PathBuf,
    clock: Box<dyn Clock>,
    next_seq: u64,
    /// Set when the file may end in the middle of a line (a torn tail found
    /// at open, or a write of ours that failed part-way), so the next record
    /// must begin with a newline rather than be glued onto the fragment.
    needs_newline: bool,
}

impl std::fmt::Debug for JsonlSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlSink")
            .field("path", &self.path)
            .field("next_seq", &self.next_seq)
            .field("needs_newline", &self.needs_newline)
            .finish_non_exhaustive()
    }
}

impl JsonlSink {
    /// Opens (creating if needed) the log at `path` for appending. Sequence
    /// numbers continue after the last intact record; problems in the
    /// existing file are not errors here (read them with [`read_events`]).
    /// A log has one writer at a time: two sinks on one file would each
    /// number their records from the same point and interleave them, so the
    /// sink holds an exclusive lock on the file for its lifetime and a second
    /// one gets [`EventSinkError::Locked`]. On a filesystem without locks the
    /// log is opened unlocked rather than not at all. The file is created
    /// mode 0600 and only ever opened as a regular file, never through a
    /// link ([`EventSinkError::NotALog`] otherwise).
    pub fn open(path: &Path, clock: Box<dyn Clock>) -> Result<Self, EventSinkError> {
        let io_error = |source| EventSinkError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = open_log(&options, path)?;
        // Taken before the last sequence number is read, so no other writer
        // can append between that read and our first record. The lock goes
        // with the file handle: dropping the sink (or the process dying)
        // releases it.
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(EventSinkError::Locked {
                    path: path.to_path_buf(),
                });
            }
            Err(std::fs::TryLockError::Error(err)) if err.kind() == io::ErrorKind::Unsupported => {}
            Err(std::fs::TryLockError::Error(err)) => return Err(io_error(err)),
        }
        let next_seq = match last_seq(&mut file).map_err(io_error)? {
            Tail::Seq(seq) => seq.map_or(0, |seq| seq.saturating_add(1)),
            Tail::Refused(reason) => {
                return Err(EventSinkError::NotALog {
                    path: path.to_path_buf(),
                    reason,
                });
            }
        };
        let needs_newline = ends_without_newline(&mut file).map_err(io_error)?;
        Ok(JsonlSink {
            file,
            path: path.to_path_buf(),
            clock,
            next_seq,
            needs_newline,
        })
    }

    /// The sequence number the next record will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }
}

impl EventSink for JsonlSink {
    fn emit(&mut self, event: &SkillEvent) -> Result<(), EventSinkError> {
        let record = EventRecord {
            seq: self.next_seq,
            at: format_rfc3339(self.clock.now()),
            event: event.clone(),
        };
        // Compact JSON escapes control characters, so a record never
        // contains a raw newline and one line is always one record.
        let json = serde_json::to_string(&record).map_err(|err| EventSinkError::Serialize {
            reason: err.to_string(),
        })?;
        if json.len() > MAX_RECORD_BYTES {
            return Err(EventSinkError::TooLarge {
                bytes: json.len(),
                max: MAX_RECORD_BYTES,
            });
        }
        let mut line = Vec::with_capacity(json.len() + 2);
        if self.needs_newline {
            line.push(b'\n');
        }
        line.extend_from_slice(json.as_bytes());
        line.push(b'\n');
        let io_error = |source| EventSinkError::Io {
            path: self.path.clone(),
            source,
        };
        // Assume the worst until the whole line is synced: a failure part-way
        // leaves a fragment the next record must not continue.
        self.needs_newline = true;
        self.file.write_all(&line).map_err(io_error)?;
        self.file.flush().map_err(io_error)?;
        self.file.sync_data().map_err(io_error)?;
        self.needs_newline = false;
        self.next_seq += 1;
        Ok(())
    }
}

/// What reading a log found: the intact records, in file order, and every
/// line that was skipped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadOutcome {
    /// The intact records, in file order.
    pub events: Vec<EventRecord>,
    /// Every skipped line, in file order.
    pub problems: Vec<LogProblem>,
}

/// A skipped line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogProblem {
    /// 1-based line number.
    pub line: u64,
    /// Why the line was skipped.
    pub kind: LogProblemKind,
}

/// Why a line was skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LogProblemKind {
    /// The last line has no newline: a write interrupted by a crash. Its
    /// record was never acknowledged, so it is not an event even when the
    /// fragment happens to be valid JSON.
    TornTail {
        /// Length of the fragment in bytes.
        bytes: usize,
    },
    /// A complete line that is not a record (not UTF-8, not JSON, an unknown
    /// event, a blank line).
    Malformed {
        /// What was wrong with the line, in the decoder's words.
        reason: String,
    },
    /// A line over [`MAX_RECORD_BYTES`]; it was skipped without being held
    /// in memory. `bytes` counts the line without its newline.
    Oversized {
        /// Length of the line in bytes, without its newline.
        bytes: usize,
    },
}

/// Reads the log at `path`. Damaged lines are reported and skipped; only
/// failing to open or read the file is an error.
/// Like a sink, it opens only a regular file and never through a link, and
/// it refuses a log over `MAX_LOG_BYTES` rather than hold it in memory.
pub fn read_events(path: &Path) -> Result<ReadOutcome, EventSinkError> {
    let io_error = |source| EventSinkError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut options = OpenOptions::new();
    options.read(true);
    let file = open_log(&options, path)?;
    let len = file.metadata().map_err(io_error)?.len();
    if len > MAX_LOG_BYTES {
        return Err(EventSinkError::NotALog {
            path: path.to_path_buf(),
            reason: format!("it is {len} bytes; at most {MAX_LOG_BYTES} are read"),
        });
    }
    // Bounded again while reading: the file may grow after it was measured.
    read_events_from(&mut BufReader::new(file.take(MAX_LOG_BYTES))).map_err(io_error)
}

/// Opens the log at `path` with `options`, never through a link and without
/// blocking, and only when `fstat` says it is a regular file.
fn open_log(options: &OpenOptions, path: &Path) -> Result<File, EventSinkError> {
    let mut options = options.clone();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let refused = |reason: &str| EventSinkError::NotALog {
        path: path.to_path_buf(),
        reason: reason.to_owned(),
    };
    let file = match options.open(path) {
        Ok(file) => file,
        #[cfg(unix)]
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
            return Err(refused(
                "it is a symbolic link; an event log is never opened through one",
            ));
        }
        // A FIFO opened for writing with no reader.
        #[cfg(unix)]
        Err(err) if err.raw_os_error() == Some(libc::ENXIO) => {
            return Err(refused("it is not a regular file"));
        }
        Err(source) => {
            return Err(EventSinkError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let meta = file.metadata().map_err(|source| EventSinkError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_file() {
        return Err(refused("it is not a regular file"));
    }
    Ok(file)
}

/// Reads a log from any reader (the core of [`read_events`]).
pub fn read_events_from(reader: &mut dyn BufRead) -> io::Result<ReadOutcome> {
    let mut outcome = ReadOutcome::default();
    let mut number = 0u64;
    let mut buf = Vec::new();
    loop {
        let line = next_line(reader, &mut buf, MAX_RECORD_BYTES)?;
        if matches!(line, Line::End) {
            break;
        }
        number += 1;
        let problem = match line {
            // Handled above; kept in the match so a new variant is not missed.
            Line::End => break,
            Line::Oversized { bytes } => LogProblemKind::Oversized { bytes },
            Line::Torn => LogProblemKind::TornTail { bytes: buf.len() },
            Line::Complete => match parse_record(&buf) {
                Ok(record) => {
                    outcome.events.push(record);
                    continue;
                }
                Err(reason) => LogProblemKind::Malformed { reason },
            },
        };
        outcome.problems.push(LogProblem {
            line: number,
            kind: problem,
        });
    }
    Ok(outcome)
}

/// What the end of a log says about continuing it.
enum Tail {
    /// The sequence number of the last intact record (`None`: there is none).
    Seq(Option<u64>),
    /// Why the log cannot be continued.
    Refused(String),
}

/// The sequence number of the last intact record, found by reading the
/// log backwards from its end: a window of the last bytes, grown (64 KiB,
/// then four times larger each time) until it holds the last intact record
/// or the start of the file, up to [`TAIL_SCAN_BYTES`]. A line longer than
/// [`MAX_RECORD_BYTES`] on the way (a torn tail included) ends the search
/// with a refusal: no record this sink wrote is that long, so the file is
/// not its log, and scanning on would make opening cost the file's size.
fn last_seq(file: &mut File) -> io::Result<Tail> {
    let len = file.seek(SeekFrom::End(0))?;
    let mut window = 64 * 1024;
    let mut buf = Vec::new();
    loop {
        let want = len.min(window as u64);
        buf.clear();
        file.seek(SeekFrom::Start(len - want))?;
        (&mut *file).take(want).read_to_end(&mut buf)?;
        let at_start = buf.len() as u64 == len;
        match scan_tail(&buf, at_start) {
            Some(tail) => return Ok(tail),
            None if window >= TAIL_SCAN_BYTES => {
                return Ok(Tail::Refused(format!(
                    "no intact record in its last {TAIL_SCAN_BYTES} bytes"
                )));
            }
            None => window = (window * 4).min(TAIL_SCAN_BYTES),
        }
    }
}

/// [`last_seq`]'s answer from the last bytes of a log (`at_start`: all of
/// them), or `None` when more bytes are needed to tell.
fn scan_tail(buf: &[u8], at_start: bool) -> Option<Tail> {
    let too_long = || {
        Tail::Refused(format!(
            "its last line is longer than {MAX_RECORD_BYTES} bytes, the longest record"
        ))
    };
    // The torn tail after the last newline is skipped, as the reader does.
    let mut end = match buf.iter().rposition(|&b| b == b'\n') {
        Some(newline) if buf.len() - newline - 1 > MAX_RECORD_BYTES => return Some(too_long()),
        Some(newline) => newline,
        None if buf.len() > MAX_RECORD_BYTES => return Some(too_long()),
        None if at_start => return Some(Tail::Seq(None)),
        None => return None,
    };
    loop {
        let start = buf[..end].iter().rposition(|&b| b == b'\n').map(|i| i + 1);
        let line = &buf[start.unwrap_or(0)..end];
        if line.len() > MAX_RECORD_BYTES {
            return Some(too_long());
        }
        match start {
            Some(start) => {
                if let Ok(record) = parse_record(line) {
                    return Some(Tail::Seq(Some(record.seq)));
                }
                end = start - 1;
            }
            None if at_start => {
                return Some(Tail::Seq(parse_record(line).ok().map(|r| r.seq)));
            }
            // The line may begin before the window.
            None => return None,
        }
    }
}

fn parse_record(line: &[u8]) -> Result<EventRecord, String> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Err("blank line".into());
    }
    let text = std::str::from_utf8(line).map_err(|err| format!("not UTF-8: {err}"))?;
    serde_json::from_str(text).map_err(|err| err.to_string())
}

enum Line {
    /// `buf` holds a line that ended with a newline (not included).
    Complete,
    /// `buf` holds the last line of the input, which has no newline.
    Torn,
    /// A line longer than the cap; `buf` is empty.
    Oversized {
        bytes: usize,
    },
    End,
}

/// Reads one line into `buf` without ever buffering more than `max` bytes of
/// it: past the cap the rest of the line is consumed and counted, not kept.
fn next_line(reader: &mut dyn BufRead, buf: &mut Vec<u8>, max: usize) -> io::Result<Line> {
    buf.clear();
    let mut len = 0usize;
    let mut oversized = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if chunk.is_empty() {
            return Ok(match (len, oversized) {
                (0, _) => Line::End,
                // A torn tail over the cap is still a torn tail; its bytes
                // were counted, not kept.
                (_, true) => Line::Oversized { bytes: len },
                (_, false) => Line::Torn,
            });
        }
        let (take, found) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (at, true),
            None => (chunk.len(), false),
        };
        len = len.saturating_add(take);
        if !oversized && len > max {
            oversized = true;
            buf.clear();
        }
        if !oversized {
            buf.extend_from_slice(&chunk[..take]);
        }
        reader.consume(take + usize::from(found));
        if found {
            return Ok(if oversized {
                Line::Oversized { bytes: len }
            } else {
                Line::Complete
            });
        }
    }
}

fn ends_without_newline(file: &mut File) -> io::Result<bool> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// The `SkillContextLoaded` event for a context response: id, source label,
/// byte count, truncation flag and the response's bounded preview. The
/// injected text itself is deliberately left out so the log never stores a
/// skill body.
pub fn context_loaded(response: &SkillContextResponse) -> SkillEvent {
    SkillEvent::SkillContextLoaded {
        id: response.id.to_string(),
        source: response.source.label.clone(),
        bytes: response.bytes,
        truncated: response.truncated,
        preview: response.preview.clone(),
    }
}

/// Formats `time` as UTC RFC 3339 with milliseconds, e.g.
/// `2026-03-01T12:00:00.000Z`. Written here rather than taken from a date
/// crate because it is the only date arithmetic this crate needs.
pub fn format_rfc3339(time: SystemTime) -> String {
    // Milliseconds since the epoch, negative before it.
    let millis: i128 = match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i128::try_from(after.as_millis()).unwrap_or(i128::MAX),
        Err(before) => -i128::try_from(before.duration().as_millis()).unwrap_or(i128::MAX),
    };
    let secs = millis.div_euclid(1000);
    let ms = millis.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to a proleptic
/// Gregorian date.
fn civil_from_days(days: i128) -> (i128, i128, i128) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i128::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use std::time::Duration;

    fn epoch_plus(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[derive(Clone, Copy)]
    struct Epoch;
    impl Clock for Epoch {
        fn now(&self) -> SystemTime {
            UNIX_EPOCH
        }
    }

    fn activated(id: &str) -> SkillEvent {
        SkillEvent::SkillDeactivated {
            id: id.into(),
            reason: "explicit".into(),
        }
    }

    #[test]
    fn a_log_has_one_writer_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut first = JsonlSink::open(&path, Box::new(Epoch)).unwrap();
        first.emit(&activated("a")).unwrap();
        let second = JsonlSink::open(&path, Box::new(Epoch));
        match second {
            Err(EventSinkError::Locked { path: locked }) => assert_eq!(locked, path),
            other => panic!("expected Locked, got {other:?}"),
        }
        first.emit(&activated("b")).unwrap();
        drop(first);
        // Released with the first sink: the next writer continues the numbering.
        let mut third = JsonlSink::open(&path, Box::new(Epoch)).unwrap();
        assert_eq!(third.next_seq(), 2);
        third.emit(&activated("c")).unwrap();
        let seqs: Vec<u64> = read_events(&path)
            .unwrap()
            .events
            .iter()
            .map(|r| r.seq)
            .collect();
        assert_eq!(seqs, [0, 1, 2]);
    }

    /// Where a sink continues a log, for several shapes of its end; the
    /// window is kept small by the lines being short, so the growth of the
    /// window is exercised by padding.
    #[test]
    fn the_last_record_is_found_from_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let record = |seq: u64| {
            let r = EventRecord {
                seq,
                at: "1970-01-01T00:00:00.000Z".into(),
                event: activated("a"),
            };
            serde_json::to_string(&r).unwrap() + "\n"
        };
        let junk = "not json\n".repeat(20_000);
        let too_long = "x".repeat(MAX_RECORD_BYTES + 1);
        let cases: Vec<(String, Result<Option<u64>, &str>)> = vec![
            (String::new(), Ok(None)),
            (record(0), Ok(Some(0))),
            (record(0) + &record(1) + "{\"seq\":2,", Ok(Some(1))),
            // Damaged lines after the last record, across window growth.
            (record(0) + &record(7) + &junk + "\n\n", Ok(Some(7))),
            (junk.clone(), Ok(None)),
            (record(3) + &too_long + "\n", Err("its last line is longer")),
            (record(3) + &too_long, Err("its last line is longer")),
            (
                record(3) + &"y\n".repeat(TAIL_SCAN_BYTES / 2 + 1),
                Err("no intact record"),
            ),
        ];
        for (text, expected) in cases {
            std::fs::write(&path, &text).unwrap();
            let mut file = File::open(&path).unwrap();
            let got = match last_seq(&mut file).unwrap() {
                Tail::Seq(seq) => Ok(seq),
                Tail::Refused(reason) => {
                    let start = expected.err().unwrap_or("?");
                    assert!(reason.starts_with(start), "{reason}");
                    Err(start)
                }
            };
            assert_eq!(got, expected, "{} bytes", text.len());
        }
    }

    /// A sparse file of 20 GB (no newline at all) is refused from its last
    /// bytes: the scan that used to read it whole never finished.
    #[test]
    fn a_huge_sparse_log_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        File::create(&path)
            .unwrap()
            .set_len(20 * 1024 * 1024 * 1024)
            .unwrap();
        match JsonlSink::open(&path, Box::new(Epoch)) {
            Err(EventSinkError::NotALog { reason, .. }) => assert_eq!(
                reason,
                format!(
                    "its last line is longer than {MAX_RECORD_BYTES} bytes, the longest record"
                )
            ),
            other => panic!("expected NotALog, got {other:?}"),
        }
        match read_events(&path) {
            Err(EventSinkError::NotALog { reason, .. }) => assert_eq!(
                reason,
                format!("it is 21474836480 bytes; at most {MAX_LOG_BYTES} are read")
            ),
            other => panic!("expected NotALog, got {other:?}"),
        }
    }

    #[cfg(unix)]
    #[test]
    fn links_and_special_files_are_not_logs() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let fifo = dir.path().join("fifo.jsonl");
        bcode_test_support::mkfifo(&fifo);
        let dev = dir.path().join("zero.jsonl");
        std::os::unix::fs::symlink("/dev/zero", &dev).unwrap();
        for (path, reason) in [
            (
                &link,
                "it is a symbolic link; an event log is never opened through one",
            ),
            (&fifo, "it is not a regular file"),
            (
                &dev,
                "it is a symbolic link; an event log is never opened through one",
            ),
            (&dir.path().to_path_buf(), "it is not a regular file"),
        ] {
            for result in [
                JsonlSink::open(path, Box::new(Epoch)).map(|_| ()),
                read_events(path).map(|_| ()),
            ] {
                match result {
                    Err(EventSinkError::NotALog {
                        reason: got,
                        path: p,
                    }) => {
                        assert_eq!((got.as_str(), &p), (reason, path));
                    }
                    Err(EventSinkError::Io { source, .. })
                        if path == &dir.path().to_path_buf()
                            && source.raw_os_error() == Some(libc::EISDIR) => {}
                    other => panic!("{}: expected NotALog, got {other:?}", path.display()),
                }
            }
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    }

    #[test]
    fn formats_dates() {
        let cases = [
            (0, "1970-01-01T00:00:00.000Z"),
            (951_782_400, "2000-02-29T00:00:00.000Z"),
            (1_772_366_400, "2026-03-01T12:00:00.000Z"),
            (4_102_444_799, "2099-12-31T23:59:59.000Z"),
        ];
        for (secs, expected) in cases {
            assert_eq!(format_rfc3339(epoch_plus(secs)), expected, "{secs}");
        }
        let before = UNIX_EPOCH - Duration::from_millis(1);
        assert_eq!(format_rfc3339(before), "1969-12-31T23:59:59.999Z");
    }
}
