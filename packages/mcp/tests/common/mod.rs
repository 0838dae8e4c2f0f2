//! The registry the server tests serve.

#![allow(clippy::unwrap_used, dead_code)] // test helpers; each test binary uses a subset

use std::path::Path;

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{Discovery, DiscoveryOptions, SkillRegistry, SourceRoot};
use bcode_skill_models::{SkillSource, SourceKind};

/// The registry of `dir` as a repository's `.bcode/skills`, default options.
pub fn registry(dir: &Path) -> SkillRegistry {
    Discovery::new(DiscoveryOptions::from_config(&SkillsConfig::default())).build(&[root(dir)])
}

/// `dir` as a repository's `.bcode/skills`.
pub fn root(dir: &Path) -> SourceRoot {
    SourceRoot {
        source: SkillSource {
            kind: SourceKind::RepoBcode,
            label: "repo:.bcode/skills".into(),
            ordinal: 0,
            root: None,
            provider: None,
        },
        path: dir.to_path_buf(),
        repository: None,
        owner_check: None,
    }
}
