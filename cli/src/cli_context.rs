//! What every command needs: the repository, an injected snapshot of the
//! environment, and the loaded configuration (exit 2 when it is invalid).

use std::collections::BTreeMap;
use std::path::PathBuf;

use bcode_prompt::SessionOptions;
use bcode_prompt_pipeline::config::{ConfigInputs, LoadedConfig, load};
use bcode_skill::{SourceEnv, SourceRoot};

/// Why a command could not run, with its exit code.
#[derive(Debug)]
pub enum CliError {
    /// Bad arguments or an unknown skill: exit 2.
    Usage(String),
    /// An invalid configuration: exit 2.
    Config(String),
    /// Writing output failed (a closed pipe, for example): exit 2.
    Io(std::io::Error),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        2
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Usage(message) | CliError::Config(message) => f.write_str(message),
            CliError::Io(err) => write!(f, "cannot write output: {err}"),
        }
    }
}

/// The resolved inputs of one invocation.
#[derive(Debug)]
pub struct CliContext {
    pub repo: PathBuf,
    /// The process's working directory, for paths given on the command line.
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    pub config_files: Vec<PathBuf>,
    pub set: Vec<String>,
    pub loaded: LoadedConfig,
}

impl CliContext {
    /// Reads the process environment once, here at the edge, and loads the
    /// layered configuration. Config warnings go to stderr.
    pub fn from_process(
        repo: Option<PathBuf>,
        config_files: Vec<PathBuf>,
        set: Vec<String>,
    ) -> Result<Self, CliError> {
        let cwd = std::env::current_dir()
            .map_err(|err| CliError::Usage(format!("cannot read the current directory: {err}")))?;
        let repo = repo.map_or_else(|| cwd.clone(), |r| cwd.join(r));
        let repo = std::fs::canonicalize(&repo)
            .map_err(|err| CliError::Usage(format!("--repo `{}`: {err}", repo.display())))?;
        if !repo.is_dir() {
            return Err(CliError::Usage(format!(
                "--repo `{}` is not a directory",
                repo.display()
            )));
        }
        let env: BTreeMap<String, String> = std::env::vars().collect();
        let loaded = load(&ConfigInputs {
            repo: repo.clone(),
            cwd: cwd.clone(),
            env: env.clone(),
            config_files: config_files.clone(),
            set: set.clone(),
            host_sections: Vec::new(),
        })
        .map_err(|err| CliError::Config(err.to_string()))?;
        for warning in &loaded.warnings {
            eprintln!("bcode-prompt: warning: {warning}");
        }
        Ok(CliContext {
            repo,
            cwd,
            env,
            config_files,
            set,
            loaded,
        })
    }

    pub fn source_env(&self) -> SourceEnv {
        SourceEnv::from_vars(&|name| self.env.get(name).cloned())
    }

    /// The skill roots of this repository, highest precedence first (the
    /// session's computation, so commands and renders agree).
    pub fn skill_roots(&self) -> Vec<SourceRoot> {
        bcode_prompt::skill_roots(&self.repo, &self.env, &self.loaded)
    }

    /// Session options for this invocation: the repository, the working
    /// directory, the environment snapshot and every config layer flag.
    pub fn session_options(&self) -> SessionOptions {
        let mut options = SessionOptions::new(&self.repo)
            .cwd(&self.cwd)
            .env(self.env.clone());
        for file in &self.config_files {
            options = options.config_file(file);
        }
        for assignment in &self.set {
            options = options.set(assignment);
        }
        options
    }
}
