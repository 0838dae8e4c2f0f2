//! Where a skill came from: the ten source kinds in precedence order.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The kinds of skill source, declared highest precedence first; the derived
/// ordering *is* the precedence table (see `bcode-skill`'s `precedence`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SourceKind {
    /// `<repo>/.bcode/skills/`
    RepoBcode,
    /// `<repo>/.agents/skills/` (the open Agent Skills standard's folder)
    RepoAgents,
    /// `<repo>/skills/`
    RepoGeneric,
    /// `<repo>/.claude/skills/`
    RepoCompatClaude,
    /// `$XDG_CONFIG_HOME/bcode/skills/` or `~/.config/bcode/skills/`
    UserConfig,
    /// `~/.agents/skills/` (the open Agent Skills standard's user folder)
    UserAgents,
    /// `$BCODE_STATE_DIR/skills/`, `$XDG_STATE_HOME/bcode/skills/` or `~/.local/state/bcode/skills/`
    UserState,
    /// An entry of `skills.sources.paths`.
    Config,
    /// Skills an MCP server publishes (a `[[skills.mcp_servers]]` entry),
    /// served by a provider; ranked after every folder source so that an
    /// MCP skill never shadows a local one.
    Mcp,
    /// Shipped with Bcode or a plugin.
    Bundled,
}

/// One concrete source: its kind, its label (for example `repo:.bcode/skills`
/// or `config:../team-skills`), its position among sources of the same kind
/// (configured paths keep the order they were written in) and its root.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SkillSource {
    /// Which of the ten kinds this source is; decides precedence first.
    pub kind: SourceKind,
    /// How the source is named in diagnostics, events and the context
    /// block's provenance (for example `user-config:skills`).
    pub label: String,
    /// Order among sources of the same kind; lower wins. For the
    /// repository's kinds, how many folders lie between the working folder
    /// and the one the source is in (0: the working folder itself).
    pub ordinal: usize,
    /// The root directory (canonical when it exists), or `None` for skills a
    /// provider serves from memory.
    pub root: Option<PathBuf>,
    /// The id of the provider serving this source's skills (`None` for a
    /// folder source): how a provided skill finds its provider, rather than
    /// by parsing the label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

impl SkillSource {
    /// The key that orders sources by precedence: lower is stronger. The
    /// repository's sources come first, nearer folder first (their ordinal
    /// is the number of folders between the working folder and theirs),
    /// then by kind; the others by kind, then by ordinal (configured paths
    /// in the order written).
    pub fn precedence(&self) -> (bool, usize, usize) {
        let rank = self.kind as usize;
        if self.kind.is_repository() {
            (false, self.ordinal, rank)
        } else {
            (true, rank, self.ordinal)
        }
    }
}

impl SourceKind {
    /// One of the four kinds read in the repository's folders (`.bcode`,
    /// `.agents`, `skills`, `.claude`), confined to the repository.
    pub fn is_repository(self) -> bool {
        self <= SourceKind::RepoCompatClaude
    }
}
