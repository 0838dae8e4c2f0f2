//! The integration tests of `packages/mcp`, gathered in one test binary: each module is
//! a file beside this one. One binary links once, where one per file linked
//! the whole dependency graph again for each (most of a test run's time).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

mod client_over_http;
mod client_provider;
mod client_spawned;
mod server_http;
mod server_lines;
mod server_pages;
mod server_reads;
mod server_search;
mod service;
