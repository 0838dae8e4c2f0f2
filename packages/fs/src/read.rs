//! Bounded, non-blocking reads of regular files (see the crate
//! documentation): open with `O_NONBLOCK`, check with `fstat` on the open
//! file, read up to a limit.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// Why a file could not be read. A closed set on purpose: callers turn each
/// case into their own diagnostic.
#[derive(Debug)]
pub enum ReadError {
    /// Larger than the limit (`len` is what was seen).
    TooLarge {
        /// Size in bytes: the `fstat` length, or the bytes read so far
        /// (one past `max`) when the file grew after it was checked.
        len: u64,
        /// The caller's limit in bytes.
        max: usize,
    },
    /// A FIFO, socket, device or directory.
    NotRegular,
    /// Opening, `fstat` or reading failed (missing file, permissions, ...).
    Io(io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::TooLarge { len, max } => {
                write!(f, "the file is {len} bytes; the limit is {max}")
            }
            ReadError::NotRegular => {
                f.write_str("not a regular file (a FIFO, socket, device or directory)")
            }
            ReadError::Io(err) => write!(f, "{err}"),
        }
    }
}

impl std::error::Error for ReadError {}

/// Opens `path` for reading without blocking and checks, on the open file,
/// that it is a regular file. Returns the file and its length.
pub fn open_regular(path: &Path) -> Result<(File, u64), ReadError> {
    check_regular(open_nonblocking(path)?)
}

/// `path` opened for reading with `O_NONBLOCK` (so a FIFO cannot block the
/// open), not yet checked.
pub(crate) fn open_nonblocking(path: &Path) -> Result<File, ReadError> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // `O_NOCTTY`: a terminal named in a file's place never becomes the
        // process's controlling terminal.
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options.open(path).map_err(ReadError::Io)
}

/// `file` with its length, when `fstat` on it says it is a regular file.
pub(crate) fn check_regular(file: File) -> Result<(File, u64), ReadError> {
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    Ok((file, meta.len()))
}

/// The first `n` bytes (fewer for a shorter file).
pub fn read_head(path: &Path, n: usize) -> Result<Vec<u8>, ReadError> {
    let (file, _) = open_regular(path)?;
    let mut buf = Vec::with_capacity(n);
    file.take(n as u64)
        .read_to_end(&mut buf)
        .map_err(ReadError::Io)?;
    Ok(buf)
}

/// The whole file, at most `max` bytes.
pub fn read_bounded(path: &Path, max: usize) -> Result<Vec<u8>, ReadError> {
    let (mut file, len) = open_regular(path)?;
    if len > max as u64 {
        return Err(ReadError::TooLarge { len, max });
    }
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    read_rest(&mut file, &mut buf, max)?;
    Ok(buf)
}

/// At most `max` bytes of a file an operator named on the command line.
/// Unlike [`read_bounded`] it accepts a pipe or a device (`diff <(...) b.json`
/// is ordinary use, and waiting for the writer of a pipe the operator chose
/// is what they asked for), but never reads past `max` + 1 bytes whatever
/// the file's size claims (`/dev/zero` claims none and never ends). A
/// directory is refused.
pub fn read_named_bounded(path: &Path, max: usize) -> Result<Vec<u8>, ReadError> {
    let mut file = File::open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if meta.is_dir() {
        return Err(ReadError::NotRegular);
    }
    if meta.is_file() && meta.len() > max as u64 {
        return Err(ReadError::TooLarge {
            len: meta.len(),
            max,
        });
    }
    let mut buf = Vec::new();
    read_rest(&mut file, &mut buf, max)?;
    Ok(buf)
}

/// Reads the rest of `file` into `buf`, failing when the total passes `max`
/// (a file may grow after its size was checked).
pub fn read_rest(file: &mut File, buf: &mut Vec<u8>, max: usize) -> Result<(), ReadError> {
    let allowance = (max + 1).saturating_sub(buf.len()) as u64;
    file.take(allowance)
        .read_to_end(buf)
        .map_err(ReadError::Io)?;
    if buf.len() > max {
        return Err(ReadError::TooLarge {
            len: buf.len() as u64,
            max,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn bounded_reads_refuse_large_and_special_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "hello").unwrap();
        assert_eq!(read_bounded(&file, 5).unwrap(), b"hello");
        assert!(matches!(
            read_bounded(&file, 4),
            Err(ReadError::TooLarge { len: 5, max: 4 })
        ));
        assert_eq!(read_head(&file, 2).unwrap(), b"he");
        assert!(matches!(
            read_bounded(dir.path(), 10),
            Err(ReadError::NotRegular)
        ));
        let fifo = dir.path().join("fifo");
        bcode_test_support::mkfifo(&fifo);
        // Opening a FIFO for reading would block without O_NONBLOCK.
        assert!(matches!(
            read_bounded(&fifo, 10),
            Err(ReadError::NotRegular)
        ));
    }

    #[test]
    fn named_reads_accept_streams_but_stop_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        std::fs::write(&file, "hello").unwrap();
        assert_eq!(read_named_bounded(&file, 5).unwrap(), b"hello");
        assert!(matches!(
            read_named_bounded(&file, 4),
            Err(ReadError::TooLarge { len: 5, max: 4 })
        ));
        assert!(matches!(
            read_named_bounded(dir.path(), 10),
            Err(ReadError::NotRegular)
        ));
        // A device that never ends and reports no size.
        assert!(matches!(
            read_named_bounded(Path::new("/dev/zero"), 1000),
            Err(ReadError::TooLarge {
                len: 1001,
                max: 1000
            })
        ));
        assert_eq!(read_named_bounded(Path::new("/dev/null"), 10).unwrap(), b"");
    }
}
