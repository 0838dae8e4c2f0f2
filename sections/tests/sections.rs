//! The integration tests of `sections`, gathered in one test binary: each module is
//! a file beside this one. One binary links once, where one per file linked
//! the whole dependency graph again for each (most of a test run's time).
//! `git_hostile.rs` stays a binary of its own: it samples the states of every
//! thread of the process, which other tests' threads would disturb.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

mod base_stage;
mod embedded_templates;
mod git_cache;
mod git_session;
mod git_status_split;
mod git_untracked;
mod invariant_budget;
mod machine_sections;
mod relevant_driver;
mod relevant_sidecar;
