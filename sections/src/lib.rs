//! One module per prompt stage, each with its own template, bounds and
//! toggle, plus the probes that gather their inputs at the edge (clock,
//! environment, git, toolchain, repository files). Stages take gathered
//! data (one typed [`gathered::Gathered`] per turn); only `probe`-style
//! functions and the `gather` functions of the repository sections touch the
//! machine.

#![warn(missing_docs)]

pub mod datetime;
pub mod environment;
pub mod git;
pub mod probe;
pub mod toolchain;

pub mod gathered;
pub mod instructions;
pub mod invariants;
pub mod path_globs;
pub mod relevant;
pub mod stages;
