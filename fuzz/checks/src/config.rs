//! Target `config`: the input is a `bcode.toml`, loaded through the real
//! config loader both as the repository's file and as a `--config` file.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use bcode_prompt_config::{ConfigInputs, LoadedConfig, load};

/// Properties: loading never panics and answers the same twice; a file
/// that is not UTF-8 TOML is an error; an error says what is wrong; a
/// loaded config explains every value and words every warning.
pub fn check(data: &[u8]) {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let base = dir.path();
    let (repo, home) = (base.join("repo"), base.join("home"));
    let written = fs::create_dir_all(repo.join(".bcode"))
        .and_then(|()| fs::create_dir_all(&home))
        .and_then(|()| fs::write(repo.join(".bcode/bcode.toml"), data))
        .and_then(|()| fs::write(base.join("extra.toml"), data));
    if written.is_err() {
        return;
    }
    let env = BTreeMap::from([("HOME".to_owned(), home.display().to_string())]);
    let as_repo_file = ConfigInputs {
        repo: repo.clone(),
        cwd: base.to_path_buf(),
        env: env.clone(),
        ..ConfigInputs::default()
    };
    check_inputs(&as_repo_file, data);
    // An empty repository, so the input is the only file read.
    let empty_repo = base.join("empty");
    if fs::create_dir_all(&empty_repo).is_err() {
        return;
    }
    let as_config_file = ConfigInputs {
        repo: empty_repo,
        cwd: base.to_path_buf(),
        env,
        config_files: vec![Path::new("extra.toml").to_path_buf()],
        ..ConfigInputs::default()
    };
    check_inputs(&as_config_file, data);
}

fn check_inputs(inputs: &ConfigInputs, data: &[u8]) {
    let first = load(inputs);
    let second = load(inputs);
    let valid_toml = std::str::from_utf8(data)
        .ok()
        .is_some_and(|text| text.parse::<toml::Table>().is_ok());
    match (&first, &second) {
        (Ok(first), Ok(second)) => {
            assert!(valid_toml, "loaded a file that is not TOML: {data:?}");
            assert_eq!(summary(first), summary(second), "not deterministic");
            check_loaded(first);
        }
        (Err(first), Err(second)) => {
            assert_eq!(first, second, "not deterministic");
            assert!(!first.to_string().is_empty(), "{first:?}");
        }
        _ => assert_eq!(
            first.is_ok(),
            second.is_ok(),
            "not deterministic: {first:?} then {second:?}"
        ),
    }
}

/// Everything a loaded config shows: each value with its origin, and the
/// warnings.
fn summary(loaded: &LoadedConfig) -> (Vec<String>, Vec<String>) {
    (
        loaded
            .explain()
            .iter()
            .map(|value| format!("{} = {} ({:?})", value.key, value.value, value.origin))
            .collect(),
        loaded.warnings.iter().map(|w| format!("{w:?}")).collect(),
    )
}

fn check_loaded(loaded: &LoadedConfig) {
    for value in loaded.explain() {
        assert!(!value.key.is_empty(), "{value:?}");
        assert!(!value.value.is_empty(), "{value:?}");
    }
    for warning in &loaded.warnings {
        assert!(!warning.to_string().is_empty(), "{warning:?}");
    }
    let _ = loaded.configured_skill_roots();
    let _ = loaded.templates_dir();
}
