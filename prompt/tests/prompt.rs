//! The integration tests of `prompt`, gathered in one test binary: each module is
//! a file beside this one. One binary links once, where one per file linked
//! the whole dependency graph again for each (most of a test run's time).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

mod arguments;
mod git_turns;
mod host_sections;
mod invariant_budget;
mod notices;
mod readme_example;
mod relevant;
mod routing;
mod tool_call_fallback;
mod trust;
mod turns;
