//! Git fixtures shared by the section tests: the workspace's test helpers
//! under the names these tests use.

#![allow(dead_code)] // each test binary uses a subset

use std::path::Path;

#[allow(unused_imports)] // each test binary uses a subset
pub use bcode_test_support::{commit_all, init, mkfifo};

/// Writes `text` to `dir/name`, creating its folders.
pub fn write(dir: &Path, name: &str, text: &str) {
    bcode_test_support::write(&dir.join(name), text);
}
