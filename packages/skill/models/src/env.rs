//! The environment variables that locate Bcode's user directories, read
//! through a caller-supplied lookup so nothing here touches the process
//! environment. One resolution for the user config file and every user root.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The environment variables that locate the user config file and roots,
/// passed in rather than read from the process so tests and golden files
/// are hermetic.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceEnv {
    /// `HOME`: the fallback base of the config and state directories.
    pub home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`: where `bcode/` (config file and user skills) lives
    /// instead of `~/.config`.
    pub xdg_config_home: Option<PathBuf>,
    /// `XDG_STATE_HOME`: where `bcode/` state lives instead of
    /// `~/.local/state`.
    pub xdg_state_home: Option<PathBuf>,
    /// `BCODE_STATE_DIR`: the state directory itself, overriding both
    /// `XDG_STATE_HOME` and `HOME`.
    pub bcode_state_dir: Option<PathBuf>,
}

impl SourceEnv {
    /// Reads `HOME`, `XDG_CONFIG_HOME`, `XDG_STATE_HOME` and `BCODE_STATE_DIR`
    /// through `var`. Empty or relative values count as unset, as the XDG base
    /// directory specification requires.
    pub fn from_vars(var: &dyn Fn(&str) -> Option<String>) -> Self {
        let path = |name: &str| {
            var(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        SourceEnv {
            home: path("HOME"),
            xdg_config_home: path("XDG_CONFIG_HOME"),
            xdg_state_home: path("XDG_STATE_HOME"),
            bcode_state_dir: path("BCODE_STATE_DIR"),
        }
    }

    /// [`SourceEnv::from_vars`] over an environment snapshot: the one way a
    /// snapshot (the CLI's, a session's) names the user's folders.
    pub fn from_map(env: &BTreeMap<String, String>) -> Self {
        Self::from_vars(&|name| env.get(name).cloned())
    }

    /// `$XDG_CONFIG_HOME/bcode`, else `~/.config/bcode`.
    pub fn user_config_dir(&self) -> Option<PathBuf> {
        self.xdg_config_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".config")))
            .map(|p| p.join("bcode"))
    }

    /// `$BCODE_STATE_DIR`, else `$XDG_STATE_HOME/bcode`, else `~/.local/state/bcode`.
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.bcode_state_dir.clone().or_else(|| {
            self.xdg_state_home
                .clone()
                .or_else(|| self.home.as_ref().map(|h| h.join(".local").join("state")))
                .map(|p| p.join("bcode"))
        })
    }
}
