//! `[facts]`: machine facts pinned in advance instead of probed, so a
//! rendered prompt can be kept as a golden file and re-rendered to the same
//! bytes on any machine. The same table is a facts file
//! (`bcode-prompt render --facts FILE`, keys at the top level), a `[facts]`
//! table in any config layer, and `bcode_prompt::Facts` in the library.
//!
//! Every key is optional: a key that is set replaces its probe; one that is
//! not set is probed as usual, or, in a hermetic render, not probed at all
//! (its section is left out). Values are checked when a session opens.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The pinned machine facts. Doc comments here become the JSON Schema
/// descriptions of `[facts]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Facts {
    /// The clock reading, as an RFC 3339 timestamp (a turn's own clock, such as `render --now`, wins).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub now: Option<String>,
    /// The time zone, as an IANA name (`render --timezone` wins).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// The shell's executable name (e.g. `bash`); an empty string means no shell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// The locale (e.g. `en_US.UTF-8`); an empty string means no locale is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// How Bcode runs: `interactive`, `scripted` or `render`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "PinnedRuntimeMode")]
    pub runtime_mode: Option<PinnedRuntimeMode>,
    /// The home folder as shown to the model: paths under the real home are shown under this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// The repository root as shown to the model: paths under the real checkout are shown under this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo_root: Option<String>,
    /// `[facts.os]`: the operating system.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "OsFact")]
    pub os: Option<OsFact>,
    /// `[facts.hosting]`: CI, container and SSH presence.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "HostingFact")]
    pub hosting: Option<HostingFact>,
    /// `[facts.git]`: the repository's revision and status, or no repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "GitFact")]
    pub git: Option<GitFact>,
    /// The toolchain versions as `name: version line` entries, in the order shown (e.g. `"rustc: rustc 1.95.0"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<String>")]
    pub toolchain: Option<Vec<String>>,
}

impl Facts {
    /// `self` with every key that `over` sets taken from `over` (a facts
    /// file over a config layer's `[facts]`, a golden's facts under the
    /// command line's).
    pub fn overlaid(&self, over: &Facts) -> Facts {
        fn pick<T: Clone>(base: &Option<T>, over: &Option<T>) -> Option<T> {
            over.as_ref().or(base.as_ref()).cloned()
        }
        Facts {
            now: pick(&self.now, &over.now),
            timezone: pick(&self.timezone, &over.timezone),
            shell: pick(&self.shell, &over.shell),
            locale: pick(&self.locale, &over.locale),
            runtime_mode: pick(&self.runtime_mode, &over.runtime_mode),
            home: pick(&self.home, &over.home),
            repo_root: pick(&self.repo_root, &over.repo_root),
            os: pick(&self.os, &over.os),
            hosting: pick(&self.hosting, &over.hosting),
            git: pick(&self.git, &over.git),
            toolchain: pick(&self.toolchain, &over.toolchain),
        }
    }

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        *self == Facts::default()
    }
}

/// `[facts.os]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct OsFact {
    /// The OS family, e.g. `linux`, `macos`, `windows`.
    pub family: String,
    /// The OS version as the OS names it, e.g. `Linux (Ubuntu 24.04)`; omitted when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The architecture, e.g. `x86_64`, `aarch64`.
    pub arch: String,
}

/// `[facts.hosting]`: presence signals only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct HostingFact {
    /// Running in CI.
    pub ci: bool,
    /// Running inside a container.
    pub container: bool,
    /// Running over SSH.
    pub ssh: bool,
}

/// How Bcode runs, as pinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PinnedRuntimeMode {
    /// A person is in the loop.
    Interactive,
    /// A session driven by piped commands or a script.
    Scripted,
    /// A one-shot render.
    Render,
}

/// Where `HEAD` points, as pinned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PinnedHead {
    /// On `branch`, at `commit`.
    #[default]
    Branch,
    /// At `commit`, on no branch.
    Detached,
    /// On `branch`, which has no commits yet.
    Unborn,
    /// The folder is not inside a git repository (the other keys are ignored).
    None,
}

/// The kind of checkout, as pinned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PinnedWorktree {
    /// The repository's main working tree, rooted at the repository root.
    #[default]
    Main,
    /// A linked worktree (`git worktree add`), rooted at the repository root.
    Linked,
    /// A bare repository.
    Bare,
}

/// `[facts.git]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct GitFact {
    /// `branch`, `detached`, `unborn`, or `none` for no repository.
    pub head: PinnedHead,
    /// The branch name (for `branch` and `unborn`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The full commit id in hex (for `branch` and `detached`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The abbreviated commit id shown first; the first seven digits of `commit` when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short: Option<String>,
    /// `main`, `linked` or `bare`.
    pub worktree: PinnedWorktree,
    /// The status as `git status --short` lines (`XY path`); empty means a clean tree.
    pub status: Vec<String>,
}
