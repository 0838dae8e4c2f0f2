//! The integration tests of `packages/skill`, gathered in one test binary: each module is
//! a file beside this one. One binary links once, where one per file linked
//! the whole dependency graph again for each (most of a test run's time).
//! `read_failures.rs` stays a binary of its own: it lowers the process's limit on
//! open files and counts its descriptors, which other tests would disturb.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod support;

mod architecture;
mod arguments;
mod catalog_budget;
mod confinement;
mod events;
mod filesystem;
mod formats;
mod front_matter_cases;
mod front_matter_fidelity;
mod hostile;
mod hostile_bodies;
mod hostile_front_matter_budget;
mod hostile_text;
mod providers;
mod recovery_shapes;
mod registry_corpus;
mod reload;
mod revalidation;
mod routing_cache;
mod routing_suggest;
mod search;
mod session;
mod turn_options;
