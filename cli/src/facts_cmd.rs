//! `bcode-prompt facts`: this machine's facts (clock, zone, OS, shell,
//! locale, hosting, git, toolchain, home and repository roots) as a facts
//! file, the starting point of a team's pinned facts for golden files.

use std::io::Write;
use std::process::ExitCode;

use bcode_prompt::RealMachine;
use bcode_prompt::facts::{facts_to_toml, machine_facts};

use crate::cli_context::{CliContext, CliError};

/// The comment a facts file starts with.
pub const FACTS_HEADER: &str = "\
# Machine facts for `bcode-prompt render --facts FILE` (or a [facts] table in
# a config file). Every key is optional: a key pins its fact; with --hermetic,
# a fact that is not pinned is not probed and its section is left out.
# Replace repo_root and home with neutral names (e.g. /src/project) so the
# rendered prompt shows no checkout path of this machine.
";

/// Prints the facts of this machine for the repository of `context`.
pub fn run(context: &CliContext, out: &mut dyn Write) -> Result<ExitCode, CliError> {
    let facts = machine_facts(
        &context.inputs.repo,
        &context.inputs.env,
        &RealMachine,
        chrono::Utc::now(),
    );
    write!(out, "{FACTS_HEADER}\n{}", facts_to_toml(&facts)).map_err(CliError::Io)?;
    Ok(ExitCode::SUCCESS)
}
