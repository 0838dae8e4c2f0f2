//! `bcode-prompt config show|explain|schema|check`: the effective
//! configuration, each value with its origin, the JSON Schema, and a check of
//! every layer. Plain Rust on purpose: the clap definitions live with the rest
//! of the CLI and convert into [`ConfigCommand`]. Everything written here is
//! data for stdout; the caller prints `loaded.warnings` to stderr and maps
//! errors to exit codes.

use std::fmt;
use std::io::{self, Write};

use bcode_prompt::config::{ConfigCheck, LoadedConfig, Origin, json_schema};

/// A `config` subcommand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigCommand {
    /// The effective config as TOML, or as one JSON document with `json`.
    Show { json: bool },
    /// `key = value  # origin` for every leaf, or for the leaves under `key`.
    Explain { key: Option<String> },
    /// The JSON Schema of the config.
    Schema,
}

/// Whether `key` names a leaf of the config or a table above some leaves
/// (`skills.prompt`, `skills`). The caller checks this before running
/// `explain KEY` so an unknown key exits 2 with its own message.
pub fn explain_matches(loaded: &LoadedConfig, key: &str) -> bool {
    loaded.explain().iter().any(|line| under(&line.key, key))
}

/// Runs `cmd`, writing its output to `out`.
///
/// Errors: write failures, and `explain KEY` for a `KEY` that
/// [`explain_matches`] rejects, which is an `InvalidInput` error whose
/// message names the key (nothing is written in that case).
pub fn run(cmd: &ConfigCommand, loaded: &LoadedConfig, out: &mut dyn Write) -> io::Result<()> {
    match cmd {
        ConfigCommand::Show { json: false } => {
            let text = toml::to_string(&loaded.config).map_err(io::Error::other)?;
            out.write_all(text.as_bytes())
        }
        ConfigCommand::Show { json: true } => {
            let value = serde_json::to_value(&loaded.config).map_err(io::Error::other)?;
            write_json(out, &value)
        }
        ConfigCommand::Explain { key } => {
            let lines: Vec<_> = loaded
                .explain()
                .into_iter()
                .filter(|line| key.as_deref().is_none_or(|key| under(&line.key, key)))
                .collect();
            if let (Some(key), true) = (key, lines.is_empty()) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "unknown config key `{key}`; `bcode-prompt config explain` lists every key"
                    ),
                ));
            }
            // The machine facts are unset unless pinned (twenty keys): the
            // whole listing shows the pinned ones and one line for the rest;
            // `config explain facts` lists every key.
            let unset_fact = |line: &bcode_prompt::config::ExplainedValue| {
                key.is_none()
                    && under(&line.key, "facts")
                    && line.value == bcode_prompt::config::UNSET
                    && matches!(line.origin, Origin::Default)
            };
            let unset_facts = lines.iter().filter(|line| unset_fact(line)).count();
            let facts = lines.iter().filter(|l| under(&l.key, "facts")).count();
            let last_fact = lines.iter().rposition(|l| under(&l.key, "facts"));
            for (i, line) in lines.iter().enumerate() {
                if !unset_fact(line) {
                    let at = At(&line.origin, line.line);
                    writeln!(out, "{} = {}  # {at}", line.key, line.value)?;
                }
                if Some(i) == last_fact && unset_facts > 0 {
                    let more = if unset_facts < facts { " more" } else { "" };
                    writeln!(
                        out,
                        "# facts: {unset_facts}{more} keys unset, probed from the machine \
                         (`bcode-prompt config explain facts` lists them)"
                    )?;
                }
            }
            for ignored in loaded.ignored() {
                if key.as_deref().is_none_or(|key| under(&ignored.key, key)) {
                    let at = At(&ignored.origin, ignored.line);
                    writeln!(
                        out,
                        "{} = {}  # ignored, {at}: {}",
                        ignored.key, ignored.value, ignored.reason
                    )?;
                }
            }
            Ok(())
        }
        ConfigCommand::Schema => write_json(out, &json_schema()),
    }
}

/// `config check [--strict]`: every error and warning of every layer, one
/// per line (`error: ...`, `warning: ...`), then a summary line. Returns the
/// exit code: 0 without errors, 1 with any (with `strict`, unknown keys are
/// errors too).
pub fn check(report: &ConfigCheck, strict: bool, out: &mut dyn Write) -> io::Result<u8> {
    let refused = if strict {
        report.strict_errors().count()
    } else {
        0
    };
    for error in &report.errors {
        writeln!(out, "error: {error}")?;
    }
    for warning in &report.warnings {
        let level = if strict && report.is_strict_error(warning) {
            "error"
        } else {
            "warning"
        };
        writeln!(out, "{level}: {warning}")?;
    }
    let errors = report.errors.len() + refused;
    let warnings = report.warnings.len() - refused;
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    if report.layers.is_empty() && errors == 0 && warnings == 0 {
        // Nothing was checked: say what would have been, not "0 layers".
        write!(
            out,
            "no config to check: no user or repository bcode.toml, BCODE_* variable, --config or --set (the built-in defaults apply)"
        )?;
    } else {
        write!(
            out,
            "{} checked: {}, {}",
            plural(report.layers.len(), "layer"),
            plural(errors, "error"),
            plural(warnings, "warning")
        )?;
    }
    if let Some(loaded) = &report.loaded {
        write!(out, "; the repository is {}", loaded.trust())?;
    }
    writeln!(out)?;
    Ok(if errors == 0 { 0 } else { 1 })
}

/// An origin and its line, as `origin:line` (editors and terminals jump there).
struct At<'a>(&'a Origin, Option<usize>);

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(line) => write!(f, "{}:{line}", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

/// Whether `key` is `prefix` itself or lies in the table `prefix`.
fn under(key: &str, prefix: &str) -> bool {
    key == prefix
        || key
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('.'))
}

fn write_json(out: &mut dyn Write, value: &serde_json::Value) -> io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    writeln!(out, "{text}")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use bcode_prompt::config::{ConfigInputs, load};

    use super::*;

    fn loaded(set: &[&str]) -> LoadedConfig {
        let root = tempfile::tempdir().unwrap();
        let inputs = ConfigInputs {
            repo: root.path().to_path_buf(),
            cwd: root.path().to_path_buf(),
            env: BTreeMap::new(),
            config_files: Vec::new(),
            set: set.iter().map(|arg| (*arg).to_owned()).collect(),
            host_sections: Vec::new(),
            trust_repo: false,
        };
        load(&inputs).unwrap()
    }

    fn output(cmd: &ConfigCommand, loaded: &LoadedConfig) -> String {
        let mut out = Vec::new();
        run(cmd, loaded, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn explain_key_prints_the_leaves_under_it_with_origins() {
        let loaded = loaded(&["skills.prompt.catalog=off", "skills.prompt.max_bytes=100"]);
        let cmd = ConfigCommand::Explain {
            key: Some("skills.prompt".to_owned()),
        };
        assert_eq!(
            output(&cmd, &loaded),
            "skills.prompt.catalog = \"off\"  # --set skills.prompt.catalog=off\n\
             skills.prompt.context_window_tokens = 200000  # default\n\
             skills.prompt.include_keywords = false  # default\n\
             skills.prompt.include_sources = true  # default\n\
             skills.prompt.max_bytes = 100  # --set skills.prompt.max_bytes=100\n\
             skills.prompt.max_description_chars = (unset)  # default\n\
             skills.prompt.warn_percent = 25  # default\n"
        );
        assert!(explain_matches(&loaded, "skills"));
        assert!(explain_matches(&loaded, "skills.enabled"));
        assert!(!explain_matches(&loaded, "skills.prompt.cat"));
    }

    #[test]
    fn explain_of_an_unknown_key_is_an_invalid_input_error() {
        let loaded = loaded(&[]);
        let cmd = ConfigCommand::Explain {
            key: Some("skils".to_owned()),
        };
        let mut out = Vec::new();
        let error = run(&cmd, &loaded, &mut out).unwrap_err();
        assert_eq!(
            (error.kind(), error.to_string(), out),
            (
                io::ErrorKind::InvalidInput,
                "unknown config key `skils`; `bcode-prompt config explain` lists every key"
                    .to_owned(),
                Vec::new()
            )
        );
    }

    #[test]
    fn show_round_trips_in_both_formats() {
        let loaded = loaded(&["invariants.mode=relevant"]);
        let text = output(&ConfigCommand::Show { json: false }, &loaded);
        let from_toml: bcode_prompt::config::BcodeConfig = toml::from_str(&text).unwrap();
        assert_eq!(from_toml, loaded.config);
        let json = output(&ConfigCommand::Show { json: true }, &loaded);
        let from_json: bcode_prompt::config::BcodeConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(from_json, loaded.config);
    }

    #[test]
    fn schema_prints_the_json_schema() {
        let text = output(&ConfigCommand::Schema, &loaded(&[]));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value, json_schema());
    }
}
