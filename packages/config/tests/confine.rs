//! The repository's config file must resolve inside the repository (issue
//! 12): `.bcode/bcode.toml` linked out of the checkout is refused with an
//! error naming the link and its target, and one linked inside still loads.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(unix)]

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::Path;

use bcode_prompt_config::{ConfigInputs, load};

fn inputs(repo: &Path) -> ConfigInputs {
    ConfigInputs {
        repo: repo.to_path_buf(),
        cwd: repo.to_path_buf(),
        env: BTreeMap::new(),
        config_files: Vec::new(),
        set: Vec::new(),
        host_sections: Vec::new(),
        trust_repo: false,
    }
}

#[test]
fn a_repository_config_linked_out_of_the_repository_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let repo = base.join("repo");
    std::fs::create_dir_all(repo.join(".bcode")).unwrap();
    std::fs::write(base.join("elsewhere.toml"), "[skills]\nenabled = false\n").unwrap();
    symlink(base.join("elsewhere.toml"), repo.join(".bcode/bcode.toml")).unwrap();
    let err = load(&inputs(&repo)).unwrap_err().to_string();
    assert!(err.contains("bcode.toml"), "{err}");
    assert!(
        err.contains(&format!(
            "resolves to `{}`",
            base.join("elsewhere.toml").display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("outside `{}`", repo.display())),
        "{err}"
    );
}

#[test]
fn a_repository_config_linked_inside_the_repository_loads() {
    let dir = tempfile::tempdir().unwrap();
    let repo = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(repo.join(".bcode")).unwrap();
    std::fs::create_dir_all(repo.join("config")).unwrap();
    std::fs::write(
        repo.join("config/bcode.toml"),
        "[skills]\nenabled = false\n",
    )
    .unwrap();
    symlink("../config/bcode.toml", repo.join(".bcode/bcode.toml")).unwrap();
    let loaded = load(&inputs(&repo)).unwrap();
    assert!(!loaded.config.skills.enabled);
}
