//! One module per prompt stage, each with its own template, bounds and
//! toggle, plus the probes that gather their inputs at the edge (clock,
//! environment, git, toolchain, repository files). Stages take gathered
//! data (one typed [`Gathered`] per turn); only `probe`-style functions and
//! the `gather` functions of the repository sections touch the machine.
//!
//! The modules are private; the root re-exports by name what the façade,
//! the benches and the tests use, and the types their signatures show.
//! Where two modules' names would meet at the root, the name says whose it
//! is ([`read_git`], [`git_status`], [`gather_instructions`],
//! [`gather_invariants`], [`gather_machine_with`], [`sidecar_path`]).

#![warn(missing_docs)]

mod datetime;
mod environment;
mod git;
mod probe;
mod toolchain;

mod gathered;
mod instructions;
mod invariants;
mod path_globs;
mod relevant;
mod stages;

pub use datetime::{DateTimeInput, ZoneSource};
pub use environment::{
    CI_VARIABLES, CONTAINER_VARIABLES, ConfigProfile, ExecutionFacts, HostingSignals, LocaleFacts,
    LocaleSource, OsFacts, RuntimeMode, SSH_VARIABLES,
};
pub use gathered::{Gathered, RoutedSkills};
pub use git::read::{
    GitCache, GitProbeOptions, GitRead, RacyCounts, RunningGitRead, WaitingGitRead, racy_counts,
    read_git, start_git_read, unscanned_status_reads,
};
pub use git::session::{GitSession, GitSessionStats};
pub use git::status::{StatusSplit, git_status};
pub use git::{
    CommitId, EntryState, GitFacts, GitUnavailable, HeadFacts, RepoFacts, StateCounts, StatusEntry,
    StatusFacts, StatusOutcome, WorktreeFacts,
};
pub use instructions::{
    InstructionFile, InstructionLimits, RepositoryInstructions, gather_instructions,
    instruction_files,
};
pub use invariants::{
    INVARIANTS_DIR, Invariant, InvariantBudget, InvariantCatalog, InvariantProblem,
    InvariantSelection, PathGlobs, gather_invariants, gather_invariants_with, parse_invariants,
};
pub use probe::{
    Machine, Pins, ProbeLimits, ProbeRequest, RealMachine, TurnFacts, gather_machine_with,
    gather_session_facts, start_session_turn_facts, start_toolchain,
};
pub use relevant::deterministic::select_deterministic;
pub use relevant::selector::{InvariantSummary, SelectorFuture};
pub use relevant::sidecar::{
    FocusState, SIDECAR_MAX_BYTES, SidecarProblem, load_sidecar, save_sidecar, save_sidecar_with,
    sidecar_path,
};
pub use relevant::{
    Decision, DeterministicSelector, FallbackReason, FallbackUsed, Guidance, InvariantSelector,
    PathTaken, RelevantInvariants, Selection, SelectionOrigin, SelectorAnswer, SelectorError,
    SelectorRequest, TaskContext, Timings,
};
pub use stages::base::BaseStage;
pub use stages::invariants::RepositoryInvariantsStage;
pub use stages::{StageChoice, canonical_stages, machine_stages};
pub use toolchain::{
    ToolCommand, ToolOmission, ToolVersion, ToolchainFacts, ToolchainLimits, ToolchainRun,
    run_toolchain,
};
