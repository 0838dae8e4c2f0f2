//! Bounded, non-blocking reads of instruction files. Files are opened with
//! `O_NONBLOCK` and checked with `fstat` before any read, so a FIFO or device
//! (even one swapped in after the walk looked) can never hang discovery.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

use crate::front_matter::{self, Split};

/// How much of a file discovery reads first: enough for almost any front
/// matter (a few hundred bytes), so bodies are not read until a skill is
/// used. The read grows while the block is still open.
const PREFIX_BYTES: usize = 4 * 1024;

/// Why a file could not be read.
#[derive(Debug)]
pub enum ReadError {
    TooLarge { len: u64, max: usize },
    NotRegular,
    Io(io::Error),
}

/// Opens `path` for reading without blocking and checks, on the open file,
/// that it is a regular file. Returns the file and its length.
fn open(path: &Path) -> Result<(File, u64), ReadError> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    Ok((file, meta.len()))
}

/// The first `n` bytes (fewer for a shorter file).
pub fn read_head(path: &Path, n: usize) -> Result<Vec<u8>, ReadError> {
    let (file, _) = open(path)?;
    let mut buf = Vec::with_capacity(n);
    file.take(n as u64)
        .read_to_end(&mut buf)
        .map_err(ReadError::Io)?;
    Ok(buf)
}

/// Enough of the file to hold its whole front matter: a prefix, extended to
/// the whole file (at most `max` bytes) when the block does not close inside
/// the prefix.
pub fn read_front(path: &Path, max: usize) -> Result<Vec<u8>, ReadError> {
    let (mut file, len) = open(path)?;
    if len > max as u64 {
        return Err(ReadError::TooLarge { len, max });
    }
    let len = usize::try_from(len).unwrap_or(max);
    let mut want = PREFIX_BYTES.min(max);
    let mut buf = Vec::with_capacity(want.min(len.max(1)));
    loop {
        let before = buf.len();
        (&mut file)
            .take((want - before) as u64)
            .read_to_end(&mut buf)
            .map_err(ReadError::Io)?;
        let at_end = buf.len() < want;
        if at_end || !matches!(front_matter::split(&buf), Split::Unterminated { .. }) {
            return Ok(buf);
        }
        if want >= max {
            // Still open at the size limit: one more byte tells whether the
            // file grew past the limit since it was measured.
            return match read_rest(&mut file, &mut buf, max) {
                Ok(()) => Ok(buf),
                Err(err) => Err(err),
            };
        }
        want = (want * 4).min(max);
    }
}

/// The whole file, at most `max` bytes.
pub fn read_all(path: &Path, max: usize) -> Result<Vec<u8>, ReadError> {
    let (mut file, len) = open(path)?;
    if len > max as u64 {
        return Err(ReadError::TooLarge { len, max });
    }
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    read_rest(&mut file, &mut buf, max)?;
    Ok(buf)
}

/// Reads the rest of `file` into `buf`, failing when the total passes `max`
/// (a file may grow after its size was checked).
fn read_rest(file: &mut File, buf: &mut Vec<u8>, max: usize) -> Result<(), ReadError> {
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
