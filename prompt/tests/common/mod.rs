//! A small repository for façade tests: a skill, instructions, invariants,
//! a private HOME, and session options that read nothing of the machine
//! running the tests beyond what the sections probe (turned off here).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use bcode_prompt::SessionOptions;
use bcode_prompt::time::{DateTime, Utc};
// The helpers every crate's tests share, under the names these tests use.
pub use bcode_test_support::{write, write_tree as write_files};

/// A temporary repository and home.
pub struct Repo {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
}

impl Repo {
    pub fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("repo");
        let home = base.join("home");
        std::fs::create_dir_all(&home).unwrap();
        write_files(
            &root,
            &[
                (
                    "skills/rust-debugging/SKILL.md",
                    "---\ndescription: Diagnose Rust build and test failures\nactivation:\n  keywords: [rust, cargo]\n---\n# Rust Debugging\nRead the panic first.\n",
                ),
                ("AGENTS.md", "Run cargo test before you finish.\n"),
                (
                    ".bcode/invariants/parser.md",
                    "---\nid: parser-rules\ntitle: Parser rules\nsummary: The parser never allocates per token\nkeywords: [parser]\n---\nKeep the parser allocation-free.\n",
                ),
                (
                    ".bcode/invariants/clock.md",
                    "---\nid: clock-rules\ntitle: Clock rules\nsummary: Time is injected\nkeywords: [clock]\n---\nNever read the system clock in the core.\n",
                ),
            ],
        );
        Repo {
            _dir: dir,
            root,
            home,
        }
    }

    /// Options with a private HOME and the machine-facing sections off, so
    /// every byte of the prompt comes from the repository and the config.
    pub fn options(&self) -> SessionOptions {
        let mut options = SessionOptions::new(&self.root).env([
            ("HOME".to_owned(), self.home.display().to_string()),
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
        ]);
        for section in [
            "execution_environment",
            "hosting_environment",
            "locale",
            "git_revision",
            "worktree_context",
            "dynamic_repository_context",
        ] {
            options = options.set(format!("system_prompt.sections.{section}=false"));
        }
        options
    }
}

/// A fixed clock reading.
pub fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}
