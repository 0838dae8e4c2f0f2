//! Where a skill came from: the nine source kinds in precedence order.

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
    /// Shipped with Bcode or a plugin.
    Bundled,
}

/// One concrete source: its kind, its label (for example `repo:.bcode/skills`
/// or `config:../team-skills`), its position among sources of the same kind
/// (configured paths keep the order they were written in) and its root.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SkillSource {
    /// Which of the nine kinds this source is; decides precedence first.
    pub kind: SourceKind,
    /// How the source is named in diagnostics, events and the context
    /// block's provenance (for example `user-config:skills`).
    pub label: String,
    /// Order among sources of the same kind; lower wins.
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
    /// The key that orders sources by precedence: lower is stronger.
    pub fn precedence(&self) -> (SourceKind, usize) {
        (self.kind, self.ordinal)
    }
}
