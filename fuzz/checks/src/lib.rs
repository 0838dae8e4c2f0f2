//! The properties the fuzz targets of `fuzz/` assert, one module per
//! target, as plain functions of the input bytes: each returns normally or
//! panics (an assertion) on a violated property, which is what libFuzzer
//! reports as a crash. The fuzz targets only call them; this crate's tests
//! replay every seed and a bounded, deterministic mutation run through the
//! same functions, so `cargo test --workspace` keeps them compiling and
//! honest on stable Rust, where cargo-fuzz itself cannot run.

#![warn(missing_docs)]

pub mod config;
pub mod document;
mod front_matter;
pub mod front_matter_toml;
pub mod front_matter_yaml;
pub mod mutate;
pub mod seeds;
pub mod skill_file;
pub mod yaml_differential;

/// One fuzz target: its name (the file under `fuzz/fuzz_targets/` and the
/// folder under `fuzz/corpus/` and `fuzz/seeds/`) and its check.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// The target's name, e.g. `front_matter_yaml`.
    pub name: &'static str,
    /// The property it asserts: returns, or panics on a violation.
    pub check: fn(&[u8]),
}

/// Every fuzz target, in the order `fuzz/README.md` lists them.
pub const TARGETS: [Target; 5] = [
    Target {
        name: "front_matter_yaml",
        check: front_matter_yaml::check,
    },
    Target {
        name: "front_matter_toml",
        check: front_matter_toml::check,
    },
    Target {
        name: "document",
        check: document::check,
    },
    Target {
        name: "config",
        check: config::check,
    },
    Target {
        name: "yaml_differential",
        check: yaml_differential::check,
    },
];
