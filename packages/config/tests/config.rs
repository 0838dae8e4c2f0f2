//! The integration tests of `bcode-prompt-config`, gathered in one test
//! binary: each module is a file beside this one. One binary links once,
//! where one per file linked the whole dependency graph again for each.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod confine;
mod layers;
mod schema;
mod trust;
