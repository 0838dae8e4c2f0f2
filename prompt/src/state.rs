//! The user's state folder as an environment snapshot names it, and the
//! one place its named cache folders (`cache/skills`, `cache/git`,
//! `cache/mcp`, `cache/mcp-server`) are opened.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bcode_fs::{StateDir, StateError};
use bcode_skill_models::SourceEnv;

/// A cache folder kept under `<state dir>/cache/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cache {
    /// The last registry and the routing index (`cache/skills`).
    Skills,
    /// What the git probe's status learns (`cache/git`).
    Git,
    /// Files fetched from configured MCP servers (`cache/mcp`).
    Mcp,
    /// The digests `bcode-prompt mcp` serves (`cache/mcp-server`).
    McpServer,
}

impl Cache {
    /// The folder's name under `cache/`.
    pub fn name(self) -> &'static str {
        match self {
            Cache::Skills => "skills",
            Cache::Git => "git",
            Cache::Mcp => "mcp",
            Cache::McpServer => "mcp-server",
        }
    }
}

/// The user's state folder (`BCODE_STATE_DIR`, else `XDG_STATE_HOME/bcode`,
/// else `~/.local/state/bcode`), or none when the snapshot names none (a
/// hermetic session's is empty). Nothing is created until a folder is asked
/// for; every folder follows `bcode_fs::StateDir`'s rules (user-only, never
/// through a link).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateFolder {
    path: Option<PathBuf>,
}

impl StateFolder {
    /// The state folder `env` names.
    pub fn of(env: &BTreeMap<String, String>) -> StateFolder {
        StateFolder {
            path: SourceEnv::from_map(env).state_dir(),
        }
    }

    /// Where the state folder is (not checked), if the snapshot names one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The state folder itself, created private when missing.
    pub fn open(&self) -> Option<Result<StateDir, StateError>> {
        self.path.as_deref().map(StateDir::open)
    }

    /// `<state dir>/cache/<name>`, created private when missing; `None`
    /// when there is no state folder or it, `cache/` or the cache's folder
    /// is not safe to keep state in (the caller goes without the cache).
    pub fn cache(&self, cache: Cache) -> Option<StateDir> {
        self.open()?
            .and_then(|state| state.subdir("cache"))
            .and_then(|caches| caches.subdir(cache.name()))
            .ok()
    }

    /// Whether the state folder and, where they exist, `cache/` and the
    /// cache's folder are safe to keep state in, creating nothing (a missing
    /// folder is no problem): what the CLI warns about once.
    pub fn check(&self, cache: Cache) -> Result<(), StateError> {
        let Some(state) = &self.path else {
            return Ok(());
        };
        let exists = |path: &Path| std::fs::symlink_metadata(path).is_ok();
        if !exists(state) {
            return Ok(());
        }
        let mut dir = StateDir::existing(state)?;
        for name in ["cache", cache.name()] {
            if !exists(&dir.path().join(name)) {
                break;
            }
            dir = dir.subdir(name)?;
        }
        Ok(())
    }
}
