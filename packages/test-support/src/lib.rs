//! Test helpers more than one crate's tests use, kept once here: writing
//! a tree of files, ageing files past the racy window, git repositories,
//! FIFOs, environment maps, raw HTTP/1.1 and the MCP tests' fixtures. A dev-dependency only (`publish = false`); each helper fails
//! the test that calls it when the file system or git refuses.

// Helpers fail the calling test on an error: that is what a test wants.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod env;
mod files;
mod git;
pub mod http;
pub mod mcp;

pub use env::env_map;
pub use files::{TEST_RACY_WINDOW, age, mkfifo, past_racy_window, write, write_tree};
pub use git::{commit_all, init};
