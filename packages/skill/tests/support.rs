//! Shared helpers: build skill trees in temporary directories and render what
//! discovery made of them as one comparable report.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{
    Discovery, DiscoveryOptions, InstructionKind, SkillOrigin, SkillRegistry, SourceRoot,
};
use bcode_skill_models::{SkillLayout, SkillSource, SourceKind};

// The helpers every crate's tests share, under the names these tests use.
#[allow(unused_imports)] // each test binary uses a subset
pub use bcode_test_support::{TEST_RACY_WINDOW, age, past_racy_window, write_tree};

/// The spec's example skill ("Skill package format"), with a short body.
pub const SPEC_SKILL: &str = "---
id: rust-debugging
name: Rust Debugging
description: Diagnose Rust compiler, clippy, test, and runtime failures
version: 0.1.0
activation:
  keywords:
    - rust
    - cargo
    - clippy
permissions:
  tools:
    - filesystem.read
    - shell.run
---

# Rust Debugging
...
";

/// Where `parse_skill` is told a skill file is: `/registry/<folder>/SKILL.md`
/// of a repository `.bcode/skills` root (no file is read).
pub fn registry_origin(folder: &str) -> SkillOrigin {
    let directory = PathBuf::from("/registry").join(folder);
    SkillOrigin {
        source: std::sync::Arc::new(SkillSource {
            kind: SourceKind::RepoBcode,
            label: "repo:.bcode/skills".into(),
            ordinal: 0,
            root: None,
            provider: None,
        }),
        layout: SkillLayout::Folder,
        kind: InstructionKind::SkillFile,
        location: directory.join("SKILL.md"),
        directory,
        inferred_id: folder.to_owned(),
    }
}

pub fn root(kind: SourceKind, label: &str, path: &Path) -> SourceRoot {
    SourceRoot {
        source: SkillSource {
            kind,
            label: label.into(),
            ordinal: 0,
            root: None,
            provider: None,
        },
        path: path.to_path_buf(),
        repository: None,
        owner_check: None,
    }
}

pub fn build(roots: &[SourceRoot], config: &SkillsConfig) -> SkillRegistry {
    Discovery::new(DiscoveryOptions::from_config(config)).build(roots)
}

/// One line per skill (`id <source> <location>`) and per diagnostic
/// (`severity code <path>:line:col [field] message | hint`), with `base`
/// replaced by `[ROOT]`.
pub fn report(registry: &SkillRegistry, base: &Path) -> String {
    let base = fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    let rel = |p: &Path| {
        p.display()
            .to_string()
            .replace(&base.display().to_string(), "[ROOT]")
    };
    let mut out = String::new();
    for s in registry.skills() {
        let hidden = if s.model_visible() { "" } else { " hidden" };
        out.push_str(&format!(
            "skill {} name={:?} <{}> {}{hidden}\n",
            s.manifest.id,
            s.manifest.name,
            s.source.label,
            rel(&s.location)
        ));
    }
    for d in registry.diagnostics() {
        let mut line = format!(
            "{} {} {}",
            d.severity,
            d.code,
            d.path.as_deref().map(rel).unwrap_or_default()
        );
        if let Some(l) = d.line {
            line.push_str(&format!(":{l}"));
            if let Some(c) = d.column {
                line.push_str(&format!(":{c}"));
            }
        }
        if let Some(f) = &d.field {
            line.push_str(&format!(" [{f}]"));
        }
        line.push_str(&format!(" {}", rel(Path::new(&*d.message()))));
        if let Some(h) = d.hint() {
            line.push_str(&format!(" | {h}"));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Discovers one `repo:.bcode/skills`-style root holding `files` and returns the report.
pub fn discover_files(files: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), files);
    let registry = build(
        &[root(
            SourceKind::RepoBcode,
            "repo:.bcode/skills",
            dir.path(),
        )],
        &SkillsConfig::default(),
    );
    report(&registry, dir.path())
}

pub fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap()
}

/// Discovery options with [`TEST_RACY_WINDOW`].
pub fn quick_options(config: &SkillsConfig) -> DiscoveryOptions {
    let mut options = DiscoveryOptions::from_config(config);
    options.walk.racy_window = TEST_RACY_WINDOW;
    options
}

/// A registry of the skills in `files`, written under one user-config
/// root in a fresh temporary folder; also the folder (kept alive by the
/// caller) and its canonical path as text, for expected locations.
pub fn user_registry(files: &[(&str, &str)]) -> (tempfile::TempDir, SkillRegistry, String) {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), files);
    let registry = build(
        &[root(
            SourceKind::UserConfig,
            "user-config:skills",
            tmp.path(),
        )],
        &SkillsConfig::default(),
    );
    let base = canonical(tmp.path()).display().to_string();
    (tmp, registry, base)
}
