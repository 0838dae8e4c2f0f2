//! The integration tests of `pipeline`, gathered in one test binary: each module is
//! a file beside this one. One binary links once, where one per file linked
//! the whole dependency graph again for each (most of a test run's time).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod pipeline_assembly;
mod pipeline_bounds;
mod pipeline_templates;
