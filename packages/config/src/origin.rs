//! Where a configuration value came from, and the warnings that point there.

use std::fmt;
use std::path::PathBuf;

/// The layer that set an effective config value.
///
/// `Display` gives the wording `config explain` prints after `#`:
/// `default`, `user file /x/bcode.toml`, `repo file /r/.bcode/bcode.toml`,
/// `env BCODE_SKILLS__ENABLED`, `config file /x/extra.toml`,
/// `--set skills.enabled=false`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Origin {
    /// The built-in default.
    Default,
    /// `$XDG_CONFIG_HOME/bcode/bcode.toml` (or `~/.config/bcode/bcode.toml`).
    UserFile {
        /// The user config file, resolved from `XDG_CONFIG_HOME` or `HOME`.
        path: PathBuf,
    },
    /// `<repo>/.bcode/bcode.toml`.
    RepoFile {
        /// The repository config file, joined onto the working directory.
        path: PathBuf,
    },
    /// A `BCODE_<SECTION>__<KEY>` environment variable.
    Env {
        /// The variable's name, e.g. `BCODE_SKILLS__ENABLED`.
        var: String,
    },
    /// A file given with `--config`.
    ConfigFile {
        /// The `--config` argument, joined onto the working directory.
        path: PathBuf,
    },
    /// A `--set key.path=value` flag, as written.
    SetFlag {
        /// The flag's `KEY=VALUE` argument, without `--set`.
        arg: String,
    },
}

impl Origin {
    /// The file behind this origin, if it is a file layer.
    pub fn file(&self) -> Option<&PathBuf> {
        match self {
            Origin::UserFile { path } | Origin::RepoFile { path } | Origin::ConfigFile { path } => {
                Some(path)
            }
            Origin::Default | Origin::Env { .. } | Origin::SetFlag { .. } => None,
        }
    }

    /// Whether the repository wrote this layer (untrusted until the user
    /// trusts the repository); every other layer is the user's or the host's.
    pub fn is_repository(&self) -> bool {
        matches!(self, Origin::RepoFile { .. })
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::UserFile { path } => write!(f, "user file {}", path.display()),
            Origin::RepoFile { path } => write!(f, "repo file {}", path.display()),
            Origin::Env { var } => write!(f, "env {var}"),
            Origin::ConfigFile { path } => write!(f, "config file {}", path.display()),
            Origin::SetFlag { arg } => write!(f, "--set {arg}"),
        }
    }
}

/// An origin plus the 1-based line in its file, when known; renders as
/// `repo file /r/.bcode/bcode.toml:3` so editors and terminals can jump there.
#[derive(Clone, Copy, Debug)]
pub(crate) struct At<'a> {
    pub(crate) origin: &'a Origin,
    pub(crate) line: Option<usize>,
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}", self.origin),
            None => write!(f, "{}", self.origin),
        }
    }
}

/// What kind of problem a [`ConfigWarning`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ConfigWarningKind {
    /// A key the configuration does not have; its value is dropped.
    /// `config check --strict` refuses these.
    UnknownKey,
    /// A value an untrusted repository's config may not set; it is dropped
    /// (see `LoadedConfig::ignored`).
    Untrusted,
}

/// A problem that does not stop loading, such as an unknown key (which is
/// ignored). `Display` renders `origin[:line]: message`, plus the suggestion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    /// What kind of problem it is.
    pub kind: ConfigWarningKind,
    /// The dotted key the warning is about, e.g. `skills.prompt.catalogue`.
    pub key: String,
    /// The layer that wrote the key.
    pub origin: Origin,
    /// The 1-based line in the origin's file, when the origin is a file.
    pub line: Option<usize>,
    /// What is wrong, without the location.
    pub message: String,
    /// A known dotted key that was probably meant.
    pub suggestion: Option<String>,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = At {
            origin: &self.origin,
            line: self.line,
        };
        write!(f, "{at}: {}", self.message)?;
        if let Some(suggestion) = &self.suggestion {
            write!(f, "; did you mean `{suggestion}`?")?;
        }
        Ok(())
    }
}
