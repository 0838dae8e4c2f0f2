//! The error of an invalid configuration: structured until printed, and its
//! `Display` is the whole human message (key, bad value, what is allowed and
//! where it came from, down to the line).

use std::fmt;

use super::origin::{At, Origin};

/// Why a configuration could not be loaded. Bad config is never replaced by a
/// default silently: it stops loading with one of these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    // Boxed so `Result<_, ConfigError>` stays small on the happy path.
    kind: Box<ConfigErrorKind>,
}

/// The structured cause of a [`ConfigError`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// A file that must exist (a `--config` file), or any file that exists,
    /// could not be read.
    Read {
        /// The file layer that could not be read.
        origin: Origin,
        /// The I/O error's message, or that the file is not valid UTF-8.
        message: String,
    },
    /// A file is not valid TOML.
    Syntax {
        /// The file layer holding the bad TOML.
        origin: Origin,
        /// The 1-based line of the parser's error span (its start).
        line: usize,
        /// The 1-based column, counted in characters, on that line.
        column: usize,
        /// The TOML parser's message, trailing whitespace trimmed.
        message: String,
    },
    /// A known key holds a value of the wrong type or outside its range.
    InvalidValue {
        /// The dotted key, e.g. `skills.prompt.catalog`.
        key: String,
        /// The value as written, rendered as TOML.
        value: String,
        /// What the key accepts, in words.
        expected: String,
        /// A close allowed value for a misspelt enum value.
        suggestion: Option<String>,
        /// The layer that set the bad value.
        origin: Origin,
        /// The 1-based line of the key in the origin's file, when the origin
        /// is a file and the key was found in it.
        line: Option<usize>,
    },
    /// A `--set` flag that is not `KEY=VALUE`.
    MalformedSet {
        /// The flag's argument as written, without `--set`.
        arg: String,
    },
    /// `system_prompt.mode = "replace"` with an empty `system_prompt.text`.
    ReplaceWithoutText {
        /// The layer that set `system_prompt.mode`.
        mode_origin: Origin,
        /// The 1-based line of `system_prompt.mode` in that layer's file,
        /// when known.
        mode_line: Option<usize>,
        /// The layer that last set `system_prompt.text`, or
        /// [`Origin::Default`] when no layer did.
        text_origin: Origin,
        /// The 1-based line of `system_prompt.text` in that layer's file,
        /// when known.
        text_line: Option<usize>,
    },
    /// A `[[skills.mcp_servers]]` entry that does not say how to reach its
    /// server: both or neither of `command` and `url`, a `url` that is not
    /// `http://` or `https://`, or a key of the other kind of entry.
    McpServerEntry {
        /// The entry's `name`.
        name: String,
        /// What is wrong, in words.
        problem: String,
        /// The layer that last set `skills.mcp_servers`.
        origin: Origin,
        /// The 1-based line of the key in that layer's file, when known.
        line: Option<usize>,
    },
    /// The merged values did not fit the typed config. Validation runs first,
    /// so this only guards against a gap between validation and the types.
    Extract {
        /// The dotted key figment could not convert (empty for the root).
        key: String,
        /// The layer that supplied the value, when figment recorded one.
        origin: Option<Origin>,
        /// figment's description of the mismatch.
        message: String,
    },
}

impl ConfigError {
    pub(crate) fn new(kind: ConfigErrorKind) -> Self {
        ConfigError {
            kind: Box::new(kind),
        }
    }

    /// The structured cause.
    pub fn kind(&self) -> &ConfigErrorKind {
        &self.kind
    }
}

impl std::error::Error for ConfigError {}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind.as_ref() {
            ConfigErrorKind::Read { origin, message } => {
                write!(f, "{origin}: cannot read config: {message}")
            }
            ConfigErrorKind::Syntax {
                origin,
                line,
                column,
                message,
            } => write!(f, "{origin}:{line}:{column}: invalid TOML: {message}"),
            ConfigErrorKind::InvalidValue {
                key,
                value,
                expected,
                suggestion,
                origin,
                line,
            } => {
                let at = At {
                    origin,
                    line: *line,
                };
                write!(
                    f,
                    "{at}: invalid value for `{key}`: {value}\n  expected {expected}"
                )?;
                if let Some(suggestion) = suggestion {
                    write!(f, "\n  did you mean `{suggestion}`?")?;
                }
                Ok(())
            }
            ConfigErrorKind::MalformedSet { arg } => write!(
                f,
                "--set {arg}: expected KEY=VALUE with a dotted key, e.g. --set skills.prompt.catalog=off"
            ),
            ConfigErrorKind::ReplaceWithoutText {
                mode_origin,
                mode_line,
                text_origin,
                text_line,
            } => {
                let mode_at = At {
                    origin: mode_origin,
                    line: *mode_line,
                };
                let text_at = At {
                    origin: text_origin,
                    line: *text_line,
                };
                write!(
                    f,
                    "`system_prompt.mode` is \"replace\" ({mode_at}) but `system_prompt.text` is empty ({text_at})\n  \
                     replace mode needs the replacement prompt in `system_prompt.text`; set it, or set `system_prompt.mode = \"default\"`"
                )
            }
            ConfigErrorKind::McpServerEntry {
                name,
                problem,
                origin,
                line,
            } => {
                let at = At {
                    origin,
                    line: *line,
                };
                write!(
                    f,
                    "{at}: the `[[skills.mcp_servers]]` entry `{name}` {problem}\n  \
                     an entry names either `command` (a program speaking MCP on its standard input and output) or `url` (an `https://` or `http://` Streamable HTTP endpoint)"
                )
            }
            ConfigErrorKind::Extract {
                key,
                origin,
                message,
            } => match origin {
                Some(origin) => write!(f, "{origin}: invalid value for `{key}`: {message}"),
                None => write!(f, "invalid value for `{key}`: {message}"),
            },
        }
    }
}
