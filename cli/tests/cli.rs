//! The integration tests of `cli`, gathered in one test binary: each module is
//! a file beside this one. One binary links once, where one per file linked
//! the whole dependency graph again for each (most of a test run's time).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

mod cli_agents_skills;
mod cli_arguments;
mod cli_catalog_size;
mod cli_config;
mod cli_diff;
mod cli_doctor_profile;
mod cli_explain;
mod cli_golden;
mod cli_help;
mod cli_mcp;
mod cli_mcp_consume;
mod cli_mcp_consume_http;
mod cli_mcp_http;
mod cli_open_spec;
mod cli_render;
mod cli_search;
mod cli_session;
mod cli_skill_fields;
mod cli_skills;
mod cli_trust;
mod cli_working_folder;
mod hostile;
mod hostile_confine;
mod hostile_git;
mod hostile_golden;
mod hostile_invariants;
mod hostile_state;
mod hostile_text;
mod hostile_tokens;
mod hostile_trust;
mod hostile_tty;
mod session_tty;
