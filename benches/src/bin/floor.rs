//! The physical floor of skill discovery, for whole-process comparisons
//! (issue 14): one thread walks the given roots, opens every file named
//! `SKILL.md` and reads its first 8 KiB, and parses nothing. Any loader
//! must at least do this much, so `bcode-prompt skills catalog` and `render`
//! are measured as multiples of it.
//!
//! ```text
//! floor ROOT...
//! ```
//!
//! Every folder is listed (skill folders too: the floor does not know that
//! a folder with a `SKILL.md` holds no other skill); symlinked folders are
//! not followed, a symlinked `SKILL.md` is opened like any other. Prints one
//! JSON line: folders listed, files opened, bytes read, peak RSS.

// A measuring tool: a bad argument ends the run with a message.
#![allow(clippy::expect_used, clippy::panic)]

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use bcode_benches::peak_rss_kib;

/// How much of each `SKILL.md` the floor reads.
const HEAD: usize = 8 * 1024;

#[derive(Default)]
struct Counts {
    folders: u64,
    files: u64,
    bytes: u64,
    errors: u64,
}

fn main() {
    let roots: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if roots.is_empty() {
        panic!("usage: floor ROOT...");
    }
    let mut counts = Counts::default();
    let mut buf = vec![0u8; HEAD];
    for root in &roots {
        walk(root, &mut buf, &mut counts);
    }
    println!(
        "{{\"folders\":{},\"files\":{},\"bytes\":{},\"errors\":{},\"peak_rss_kib\":{}}}",
        counts.folders,
        counts.files,
        counts.bytes,
        counts.errors,
        peak_rss_kib().unwrap_or(0)
    );
}

/// Depth first, one folder at a time, on this thread.
fn walk(root: &Path, buf: &mut [u8], counts: &mut Counts) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            counts.errors += 1;
            continue;
        };
        counts.folders += 1;
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                counts.errors += 1;
                continue;
            };
            if kind.is_dir() {
                stack.push(entry.path());
            } else if entry.file_name() == "SKILL.md" {
                match read_head(&entry.path(), buf) {
                    Some(n) => {
                        counts.files += 1;
                        counts.bytes += n as u64;
                    }
                    None => counts.errors += 1,
                }
            }
        }
    }
}

/// Reads up to `buf.len()` bytes from the start of `path`.
fn read_head(path: &Path, buf: &mut [u8]) -> Option<usize> {
    let mut file = File::open(path).ok()?;
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(_) => return None,
        }
    }
    Some(filled)
}
