//! Reading instruction files for discovery: just enough to hold the front
//! matter, through `bcode-fs` (non-blocking, `fstat`-checked, bounded), so a
//! FIFO or device can never hang discovery and bodies wait until used.

use std::io::Read;
use std::path::Path;

use crate::front_matter::{self, Split};

/// How much of a file discovery reads first: enough for almost any front
/// matter (a few hundred bytes), so bodies are not read until a skill is
/// used. The read grows while the block is still open.
const PREFIX_BYTES: usize = 2 * 1024;

pub use bcode_fs::ReadError;
use bcode_fs::{DirHandle, open_regular, read_rest};

pub use bcode_fs::{read_bounded as read_all, read_head};

/// Enough of the file to hold its whole front matter, into `buf` (cleared
/// first; a loader reuses one buffer for all its files, where a fresh 2 KiB
/// allocation per file made the allocator consolidate its free lists each
/// time): a prefix, extended to the whole file (at most `max` bytes) when
/// the block does not close inside the prefix. `root`, when given, is an
/// open folder `path` may lie below, to look it up from. Returns the split
/// of `buf` when deciding how much to read needed one.
pub fn read_front(
    root: Option<&DirHandle>,
    path: &Path,
    max: usize,
    buf: &mut Vec<u8>,
) -> Result<Option<Split>, ReadError> {
    buf.clear();
    let (mut file, len) = match root {
        Some(root) => root.open_regular(path)?,
        None => open_regular(path)?,
    };
    if len > max as u64 {
        return Err(ReadError::TooLarge { len, max });
    }
    let len = usize::try_from(len).unwrap_or(max);
    let mut want = PREFIX_BYTES.min(max);
    loop {
        // Never past the length `fstat` gave: a file shorter than the
        // prefix is read in one call, without a second one to meet its end
        // (one that grows meanwhile changes its stamp, so the next build
        // reads it again).
        let before = buf.len();
        (&mut file)
            .take(want.min(len).saturating_sub(before) as u64)
            .read_to_end(buf)
            .map_err(ReadError::Io)?;
        if buf.len() < want {
            return Ok(None);
        }
        let split = front_matter::split(buf);
        if !matches!(split, Split::Unterminated { .. }) {
            return Ok(Some(split));
        }
        if want >= max {
            // Still open at the size limit: one more byte tells whether the
            // file grew past the limit since it was measured.
            return read_rest(&mut file, buf, max).map(|()| None);
        }
        want = (want * 4).min(max);
    }
}
