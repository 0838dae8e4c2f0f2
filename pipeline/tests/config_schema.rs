//! Keeps `config-schema/` in step with the config types: the checked-in JSON
//! Schema must equal `json_schema()`, and the documented example must set
//! every key and load without warnings.
//!
//! After changing a config type, regenerate the schema with
//! `BCODE_UPDATE_SCHEMA=1 cargo test -p bcode-prompt-pipeline`
//! and review the diff; the example is written by hand, so add new keys to
//! `config-schema/bcode.example.toml` with a comment.

// Helpers outside `#[test]` functions are test code too; clippy's
// allow-*-in-tests settings only cover `#[test]` items and `cfg(test)`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use bcode_prompt_pipeline::config::{ConfigInputs, Origin, json_schema, load};

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../config-schema")
}

#[test]
fn checked_in_schema_is_current() {
    let path = schema_dir().join("bcode.schema.json");
    let expected = format!(
        "{}\n",
        serde_json::to_string_pretty(&json_schema()).unwrap()
    );
    // Reading this one switch is the usual update-snapshot pattern; the
    // config under test never sees the process environment.
    if std::env::var_os("BCODE_UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "{} is stale; regenerate it with BCODE_UPDATE_SCHEMA=1 cargo test -p bcode-prompt-pipeline",
        path.display()
    );
}

#[test]
fn example_sets_every_key_and_loads_without_warnings() {
    let example = schema_dir().join("bcode.example.toml");
    let root = tempfile::tempdir().unwrap();
    let inputs = ConfigInputs {
        repo: root.path().to_path_buf(),
        cwd: root.path().to_path_buf(),
        env: BTreeMap::new(),
        config_files: vec![example.clone()],
        set: Vec::new(),
        host_sections: Vec::new(),
        trust_repo: false,
    };
    let loaded = match load(&inputs) {
        Ok(loaded) => loaded,
        Err(error) => panic!("the example does not load:\n{error}"),
    };
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings, Vec::<String>::new());
    // Every leaf of the schema is set by the example file, not by a default.
    let from_elsewhere: Vec<String> = loaded
        .explain()
        .into_iter()
        .filter(|line| {
            line.origin
                != Origin::ConfigFile {
                    path: example.clone(),
                }
        })
        .map(|line| format!("{} = {}  # {}", line.key, line.value, line.origin))
        .collect();
    assert_eq!(from_elsewhere, Vec::<String>::new());
}
