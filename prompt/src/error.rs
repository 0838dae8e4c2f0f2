//! The one error type of the façade. Every cause is typed, and no message
//! names a CLI flag or command: a front end adds its own hints.

use std::path::PathBuf;

use bcode_prompt_config::ConfigError;
use bcode_prompt_pipeline::{AssembleError, PipelineError};
use bcode_skill_models::SkillError;
use bcode_templates::TemplateError;

/// Why a session could not open or a turn could not be built. Skill
/// diagnostics never cause one (they are reported with the turn), and a
/// slash command naming an unknown skill is an event of the turn, not an
/// error.
///
/// Its `Debug` form is the message (then each underlying cause), so a
/// host's `fn main() -> Result<(), PromptError>` that returns one through
/// `?` prints `Error: repository ./x: No such file or directory`, not the
/// variant's fields; match on the variants for the structured cause.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// The repository path does not exist or is not a folder.
    #[error("repository {}: {detail}", path.display())]
    Repository {
        /// The path as the session resolved it.
        path: PathBuf,
        /// What the filesystem said.
        detail: String,
    },
    /// A configuration layer is invalid (the error names its file and line).
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    /// A template (an operator's override, a host's template) failed to
    /// load or render.
    #[error("template error: {0}")]
    Template(#[from] TemplateError),
    /// A skill asked for explicitly cannot be used: unknown (with the
    /// closest id), disabled, skills disabled, or its file cannot be loaded.
    #[error("{0}")]
    Skill(#[from] SkillError),
    /// The stage set cannot form a pipeline (a host section with a bad id,
    /// registered twice, ...).
    #[error("cannot build the prompt pipeline: {0}")]
    Pipeline(#[from] PipelineError),
    /// A stage failed fatally (a broken override, `mode = "replace"` with
    /// no text), or a host stage failed in a strict session.
    #[error("cannot assemble the prompt: {0}")]
    Assemble(#[from] AssembleError),
    /// A pinned machine fact (`[facts]`, [`crate::SessionOptions::facts`])
    /// cannot be used.
    #[error("invalid pinned facts: {0}")]
    Facts(#[from] crate::facts::FactsError),
    /// The blocking work of a turn could not run (its worker panicked or
    /// the runtime is shutting down).
    #[error("the turn could not run: {detail}")]
    Runtime {
        /// What went wrong.
        detail: String,
    },
}

impl std::fmt::Debug for PromptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")?;
        let mut cause = std::error::Error::source(self);
        while let Some(error) = cause {
            let text = error.to_string();
            // `#[error("{0}")]`-style variants show their cause already.
            if !self.to_string().ends_with(&text) {
                write!(f, "\n  caused by: {text}")?;
            }
            cause = error.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `fn main() -> Result<(), PromptError>` prints after `Error: `.
    #[test]
    fn debug_reads_as_the_message() {
        let error = PromptError::Repository {
            path: PathBuf::from("./no-such-folder"),
            detail: "No such file or directory (os error 2)".to_owned(),
        };
        assert_eq!(
            format!("{error:?}"),
            "repository ./no-such-folder: No such file or directory (os error 2)"
        );
    }
}
