//! The edge of config loading: finding and reading the layer files and
//! picking the `BCODE_*__*` variables out of the environment it is given.
//! Everything after reading is done by `validate` and `loaded` on data.
//!
//! | # | layer (lowest first)  | where                                                         |
//! |---|-----------------------|---------------------------------------------------------------|
//! | 0 | built-in defaults     | `BcodeConfig::default()`                                      |
//! | 1 | user file             | `$XDG_CONFIG_HOME/bcode/bcode.toml`, else `$HOME/.config/...`  |
//! | 2 | repo file             | `<repo>/.bcode/bcode.toml`                                    |
//! | 3 | environment           | `BCODE_<SECTION>__<KEY>`, one layer per variable, by name      |
//! | 4 | `--config` files      | in the order given                                            |
//! | 5 | `--set KEY=VALUE`     | in the order given                                            |
//!
//! Layer 2 is the repository's; the others are the user's. Whether the
//! repository is trusted is decided from the user's layers alone
//! (`ConfigInputs::trust_repo`, `BCODE_TRUST_REPO`, `trust.repositories`);
//! see `trust.rs` for what an untrusted repository's layer loses.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use std::path::Component;

use super::error::{ConfigError, ConfigErrorKind};
use super::loaded::{LoadedConfig, merge};
use super::origin::{ConfigWarning, ConfigWarningKind, Origin};
use super::trust::{SafeDirectories, TRUST_ENV_VAR, TrustInputs};
use super::validate::{self, Found, Layer};
use bcode_text::lexical;

/// Everything loading depends on, passed in so tests and callers control it:
/// nothing here reads the process environment or the current directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigInputs {
    /// The repository root (`--repo`); relative paths join `cwd`.
    pub repo: PathBuf,
    /// The working directory: the base of relative `--config` paths and of
    /// relative paths set by environment variables or `--set`.
    pub cwd: PathBuf,
    /// The environment: `HOME`, `XDG_CONFIG_HOME` and `BCODE_*__*` are read.
    pub env: BTreeMap<String, String>,
    /// `--config` files, lowest precedence first.
    pub config_files: Vec<PathBuf>,
    /// `--set KEY=VALUE` flags as written, lowest precedence first.
    pub set: Vec<String>,
    /// Ids of host-defined sections: `system_prompt.sections.<id>` is a
    /// known key for each (a boolean toggle), not an unknown-key warning.
    pub host_sections: Vec<String>,
    /// The user trusts this repository for this run (the CLI's
    /// `--trust-repo`, a host's `SessionOptions::trust_repository`): its own
    /// config is applied in full.
    pub trust_repo: bool,
}

/// The prefix of config variables. Only names that also contain `__` are
/// config keys: `BCODE_STATE_DIR` and other single-level names are paths or
/// switches owned by other parts of Bcode and are ignored here.
const ENV_PREFIX: &str = "BCODE_";

/// Loads the layered configuration; see the module table for the order.
///
/// Missing user and repo files are skipped; a missing `--config` file, an
/// unreadable file, invalid TOML, an invalid value or an inconsistent
/// combination is an error (the first one found). Unknown keys and values an
/// untrusted repository may not set are warnings in the result.
pub fn load(inputs: &ConfigInputs) -> Result<LoadedConfig, ConfigError> {
    let report = check(inputs);
    match (report.loaded, report.errors.into_iter().next()) {
        (Some(loaded), None) => Ok(loaded),
        (_, Some(error)) => Err(error),
        // `merge` gives no config only with an error; this answer is for
        // the impossible rest.
        (None, None) => Err(ConfigError::new(ConfigErrorKind::Extract {
            key: String::new(),
            origin: None,
            message: "the configuration could not be merged".to_owned(),
        })),
    }
}

/// Everything wrong with a configuration, not only its first error.
#[derive(Clone, Debug)]
pub struct ConfigCheck {
    /// Every layer read, in precedence order (lowest first), the defaults
    /// excluded.
    pub layers: Vec<Origin>,
    /// Every warning of every layer, in layer order.
    pub warnings: Vec<ConfigWarning>,
    /// Every error: the files that could not be read or parsed and the
    /// malformed `--set` flags, in layer order; then every invalid value, in
    /// layer order; then the errors of the merged result.
    pub errors: Vec<ConfigError>,
    /// The configuration, when there is no error.
    pub loaded: Option<LoadedConfig>,
}

impl ConfigCheck {
    /// The warnings `config check --strict` counts as errors: unknown keys
    /// (no key or value is deprecated today; a deprecation would be one too).
    pub fn strict_errors(&self) -> impl Iterator<Item = &ConfigWarning> {
        self.warnings
            .iter()
            .filter(|warning| self.is_strict_error(warning))
    }

    /// Whether `config check --strict` counts this warning as an error.
    pub fn is_strict_error(&self, warning: &ConfigWarning) -> bool {
        warning.kind == ConfigWarningKind::UnknownKey
    }
}

/// Checks every layer: a file that cannot be read or parsed is an error and
/// the others are still checked; a bad value is an error and the other keys
/// of its file are still checked (and warned about).
pub fn check(inputs: &ConfigInputs) -> ConfigCheck {
    let cwd = inputs.cwd.clone();
    let mut found = Found::default();
    let layers = read_layers(inputs, true, &mut found);
    let origins = layers.iter().map(|layer| layer.origin.clone()).collect();
    let trust = TrustInputs {
        repo: cwd.join(&inputs.repo),
        by_option: inputs.trust_repo,
        by_env: non_empty(&inputs.env, TRUST_ENV_VAR)
            .is_some_and(|value| matches!(value, "1" | "true")),
        cwd,
        home: non_empty(&inputs.env, "HOME").map(PathBuf::from),
        real_path: &real_path,
    };
    let loaded = merge(layers, &inputs.host_sections, &trust, &mut found);
    ConfigCheck {
        layers: origins,
        warnings: found.warnings,
        errors: found.errors,
        loaded,
    }
}

/// Every layer in precedence order (the repository's file only when
/// `with_repo`); files that cannot be read or parsed and malformed `--set`
/// flags go to `found`.
fn read_layers(inputs: &ConfigInputs, with_repo: bool, found: &mut Found) -> Vec<Layer> {
    let cwd = &inputs.cwd;
    let mut layers = Vec::new();
    let mut read = |origin: Origin, optional: bool, layers: &mut Vec<Layer>| match read_layer(
        origin, optional,
    ) {
        Ok(Some(layer)) => layers.push(layer),
        Ok(None) => {}
        Err(error) => found.errors.push(error),
    };
    if let Some(path) = user_file(&inputs.env) {
        read(Origin::UserFile { path }, true, &mut layers);
    }
    if with_repo {
        let repo_file = cwd.join(&inputs.repo).join(".bcode").join("bcode.toml");
        read(Origin::RepoFile { path: repo_file }, true, &mut layers);
    }
    for (var, value) in &inputs.env {
        if let Some(path) = env_key(var) {
            let origin = Origin::Env { var: var.clone() };
            layers.push(validate::assignment(origin, &path, value));
        }
    }
    for file in &inputs.config_files {
        let path = cwd.join(file);
        read(Origin::ConfigFile { path }, false, &mut layers);
    }
    for arg in &inputs.set {
        match set_layer(arg) {
            Ok(layer) => layers.push(layer),
            Err(error) => found.errors.push(error),
        }
    }
    layers
}

/// `trust.safe_directories` as the user's layers set it (the user file,
/// `BCODE_*__*` variables, `--config`, `--set`; never a repository's),
/// read before the repository root is known, since the list decides which
/// folder the root may be (`bcode_fs::repository_root`). The highest layer
/// that sets the list is the list (arrays are replaced whole); entries
/// resolve as `trust.repositories` does (`~/` is the home, a relative entry
/// joins the folder of the file that set it); `*` trusts every folder.
/// Layers that cannot be read are skipped here; [`load`] reports them.
pub fn safe_directories(inputs: &ConfigInputs) -> SafeDirectories {
    let layers = read_layers(inputs, false, &mut Found::default());
    let home = non_empty(&inputs.env, "HOME").map(PathBuf::from);
    SafeDirectories::of_layers(&layers, home.as_deref(), &inputs.cwd)
}

/// The path a file operation on `path` reaches: the longest part of it that
/// exists with its links resolved, then the rest applied lexically (a part
/// that does not exist has no links). Trust compares these, so neither a
/// link inside the repository nor `..` can make an outside path look inside.
fn real_path(path: &Path) -> PathBuf {
    let components: Vec<Component<'_>> = path.components().collect();
    for split in (1..=components.len()).rev() {
        let (head, rest) = components.split_at(split);
        let head: PathBuf = head.iter().collect();
        if let Ok(real) = std::fs::canonicalize(&head) {
            return lexical(&rest.iter().fold(real, |path, part| path.join(part)));
        }
    }
    lexical(path)
}

/// `$XDG_CONFIG_HOME/bcode/bcode.toml`, else `$HOME/.config/bcode/bcode.toml`;
/// `None` when neither is usable, so no user file is read. Resolved by the
/// same `SourceEnv` as the user skill roots (empty or relative values do
/// not count, as the XDG specification says), so both always agree.
/// Every file [`load`] reads (or would read, were it there), in layer
/// order: the user file, the repository file and the `--config` files. A
/// session stamps them to notice a changed config between turns.
pub fn config_files(inputs: &ConfigInputs) -> Vec<PathBuf> {
    let cwd = &inputs.cwd;
    let mut files: Vec<PathBuf> = user_file(&inputs.env).into_iter().collect();
    files.push(cwd.join(&inputs.repo).join(".bcode").join("bcode.toml"));
    files.extend(inputs.config_files.iter().map(|file| cwd.join(file)));
    files
}

fn user_file(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    let env = bcode_skill_models::SourceEnv::from_map(env);
    Some(env.user_config_dir()?.join("bcode.toml"))
}

fn non_empty<'a>(env: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    env.get(name)
        .map(String::as_str)
        .filter(|value| !value.is_empty())
}

/// The key path of a config variable: `BCODE_SYSTEM_PROMPT__SECTIONS__USER_AUTHORITY`
/// gives `system_prompt.sections.user_authority`. Levels are split only on
/// `__` because section and key names contain single underscores.
fn env_key(var: &str) -> Option<Vec<String>> {
    let rest = var.strip_prefix(ENV_PREFIX)?;
    if !rest.contains("__") {
        return None;
    }
    Some(rest.split("__").map(str::to_ascii_lowercase).collect())
}

fn set_layer(arg: &str) -> Result<Layer, ConfigError> {
    let malformed = || {
        ConfigError::new(ConfigErrorKind::MalformedSet {
            arg: arg.to_owned(),
        })
    };
    let (key, value) = arg.split_once('=').ok_or_else(malformed)?;
    let path: Vec<String> = key.trim().split('.').map(|s| s.trim().to_owned()).collect();
    if path.iter().any(String::is_empty) {
        return Err(malformed());
    }
    let origin = Origin::SetFlag {
        arg: arg.to_owned(),
    };
    Ok(validate::assignment(origin, &path, value))
}

/// Reads a layer file; `Ok(None)` for a missing optional file.
fn read_layer(origin: Origin, optional: bool) -> Result<Option<Layer>, ConfigError> {
    let Some(path) = origin.file() else {
        return Ok(None);
    };
    // Bounded and non-blocking: a repository's bcode.toml must not be able
    // to hang the CLI (a FIFO) or make it read without limit.
    let read_error =
        |origin, message: String| Err(ConfigError::new(ConfigErrorKind::Read { origin, message }));
    // The repository's file must resolve inside the repository (trusted or
    // not): `.bcode/bcode.toml` linked out of it is refused, naming the target.
    let read = match (&origin, path.parent().and_then(Path::parent)) {
        (Origin::RepoFile { .. }, Some(repo)) => {
            bcode_fs::Confinement::within(repo).read_bounded(path, MAX_CONFIG_FILE_BYTES)
        }
        _ => bcode_fs::read_bounded(path, MAX_CONFIG_FILE_BYTES),
    };
    match read {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => validate::parse_file(origin, text).map(Some),
            Err(_) => read_error(origin, "the file is not valid UTF-8".into()),
        },
        Err(bcode_fs::ReadError::Io(error)) if optional && error.kind() == ErrorKind::NotFound => {
            Ok(None)
        }
        Err(error) => read_error(origin, error.to_string()),
    }
}

/// Config files are small; this cap only stops a runaway file.
const MAX_CONFIG_FILE_BYTES: usize = 4 * 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_file_follows_the_same_xdg_rules_as_user_skill_roots() {
        let env = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let file = |pairs: &[(&str, &str)]| user_file(&env(pairs)).map(|p| p.display().to_string());
        assert_eq!(
            file(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "/x")]).as_deref(),
            Some("/x/bcode/bcode.toml")
        );
        // Relative or empty values do not count (XDG base directory spec).
        assert_eq!(
            file(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "rel")]).as_deref(),
            Some("/h/.config/bcode/bcode.toml")
        );
        assert_eq!(
            file(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "")]).as_deref(),
            Some("/h/.config/bcode/bcode.toml")
        );
        assert_eq!(file(&[("HOME", "relative")]), None);
    }

    #[test]
    fn env_keys_split_only_on_double_underscores() {
        let key = |var: &str| env_key(var).map(|path| path.join("."));
        assert_eq!(
            key("BCODE_SYSTEM_PROMPT__SECTIONS__USER_AUTHORITY").as_deref(),
            Some("system_prompt.sections.user_authority")
        );
        assert_eq!(
            key("BCODE_SKILLS__PROMPT__CATALOG").as_deref(),
            Some("skills.prompt.catalog")
        );
        assert_eq!(key("BCODE_STATE_DIR"), None);
        assert_eq!(key("HOME"), None);
    }

    #[test]
    fn user_file_prefers_xdg_config_home() {
        let env = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        assert_eq!(
            user_file(&env(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "/x")])),
            Some(PathBuf::from("/x/bcode/bcode.toml"))
        );
        assert_eq!(
            user_file(&env(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "")])),
            Some(PathBuf::from("/h/.config/bcode/bcode.toml"))
        );
        assert_eq!(user_file(&env(&[])), None);
    }
}
