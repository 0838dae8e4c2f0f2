//! The `[skills]` configuration table and its defaults, exactly as the spec
//! gives them. Every optional limit is an `Option`: omitted means unlimited.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How skills are offered without an explicit `/skill` command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AutoActivate {
    /// Never suggest or activate by keyword.
    Off,
    /// Match prompts against activation keywords and suggest, never apply.
    #[default]
    Suggest,
    /// Activate matching skills conservatively; every activation is an auditable event.
    On,
}

/// What the model-visible skill catalog contains.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CatalogMode {
    /// No catalog in model context; skills stay available elsewhere.
    Off,
    /// Ids, names and locations.
    NamesOnly,
    /// Ids, names, descriptions, locations, sources and optionally keywords.
    #[default]
    Summary,
}

/// `[skills]`: discovery, bounds and activation of skills.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct SkillsConfig {
    /// Master switch: `false` disables skill discovery and therefore the catalog.
    pub enabled: bool,
    /// Keyword suggestion and automatic activation: `off`, `suggest` or `on`.
    pub auto_activate: AutoActivate,
    /// Discover `<repo>/.bcode/skills/`.
    pub include_repo_skills: bool,
    /// Discover `<repo>/skills/`.
    pub include_generic_repo_skills: bool,
    /// Discover the user config and user state skill roots.
    pub include_user_skills: bool,
    /// Discover `<repo>/.claude/skills/`.
    pub include_compat_claude_skills: bool,
    /// Discover `<repo>/.agents/skills/` and `~/.agents/skills/`, where the open Agent Skills standard (and Codex, Gemini CLI, Pi, Goose, Zed, Amp, Cursor) keeps skills.
    pub include_agents_skills: bool,
    /// Optional bound, in bytes, on each injected skill context block, marked when applied; omitted means unlimited. A limit smaller than the block's frame and marker keeps only the marker and the file's location (the marker wins over the limit), and `render` warns.
    pub max_context_bytes: Option<usize>,
    /// Skill files larger than this many bytes are skipped with `file_too_large`.
    pub max_skill_file_bytes: usize,
    /// Bound, in characters, on transcript and event previews of loaded skill context, marked when applied (a limit smaller than the marker keeps the marker alone).
    pub preview_max_chars: usize,
    /// Follow symlinks (Nix, Home Manager); `false` skips them with a diagnostic.
    pub follow_symlinks: bool,
    /// Replace the placeholders of an invoked skill's body: `$ARGUMENTS` (the arguments as typed), `$ARGUMENTS[N]` and `$N` (the N-th word, from 0), `$name` for a name the front matter's `arguments:` list declares, and `${SKILL_DIR}` / `${CLAUDE_SKILL_DIR}` (the skill's folder as the block shows it). `\$` keeps a dollar; fenced and inline code are left alone. `false` injects the body exactly as written.
    pub substitute_arguments: bool,
    /// Keep the last discovery in the state directory, so a later one-shot
    /// render of unchanged skill trees checks file stamps instead of reading
    /// every skill file again.
    pub disk_cache: bool,
    /// `[skills.sources]`
    pub sources: SkillsSourcesConfig,
    /// `[skills.disabled]`
    pub disabled: SkillsDisabledConfig,
    /// `[skills.prompt]`
    pub prompt: SkillsPromptConfig,
    /// `[skills.routing]`
    pub routing: SkillsRoutingConfig,
    /// `[[skills.mcp_servers]]`: MCP servers whose skills (SEP-2640) join the registry as source `mcp:<name>`, with ids `<name>:<skill name>`. Each starts a program or reaches a URL (with the user's headers), so an untrusted repository's entries are ignored.
    pub mcp_servers: Vec<McpServerConfig>,
}

/// One `[[skills.mcp_servers]]` entry: a program speaking MCP on its standard input and output (`command`), or a server reached over MCP's Streamable HTTP (`url`); exactly one of the two.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct McpServerConfig {
    /// The server's name: lowercase letters, digits and hyphens. Its skills are labelled `mcp:<name>` and named `<name>:<skill name>`.
    pub name: String,
    /// The program to run (looked up on `PATH` when it has no `/`). Not with `url`.
    #[serde(default)]
    pub command: Option<String>,
    /// The server's Streamable HTTP endpoint (`https://host/mcp`, or `http://host:port/mcp`), instead of `command`. An `https://` server's certificate is always verified, against Mozilla's roots (built in) and those of `ca_file`.
    #[serde(default)]
    pub url: Option<String>,
    /// HTTP headers sent with every request to `url`. A value may take an environment variable as `${env:NAME}` (`Authorization = "Bearer ${env:HF_TOKEN}"`), so the secret stays out of the config; an unset or empty variable fails the entry with a diagnostic that names the variable, never a value.
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// A PEM file of extra root certificates trusted for this entry's `https://` server, on top of the built-in ones (e.g. a private server's own CA): absolute, `~/`-relative, or relative to the folder of the config file that names it. With an `https://` `url` only; it never turns verification off.
    #[serde(default)]
    pub ca_file: Option<String>,
    /// Its arguments (with `command`).
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables set for it, on top of the host's (with `command`).
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// How long, in milliseconds, starting the server, one listing or one file read may take; a server that takes longer is given up on with a diagnostic.
    #[serde(default = "default_mcp_timeout_ms")]
    pub timeout_ms: u64,
    /// The folder the server is started in (with `command`): absolute, `~/`-relative, or relative to the folder of the config file that names it. Omitted: a neutral folder (`/`), never the repository or the folder Bcode runs in, so a relative command, script or module name cannot pick up a repository's file.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Whether skills whose files the server lists as `"dynamic"` (generated content that no digest vouches for) are loaded; `false` leaves them out with a diagnostic. Default `true`, as SEP-2640 allows.
    #[serde(default = "default_allow_dynamic")]
    pub allow_dynamic: bool,
}

fn default_allow_dynamic() -> bool {
    true
}

/// The default of [`McpServerConfig::timeout_ms`].
pub const DEFAULT_MCP_TIMEOUT_MS: u64 = 5000;

fn default_mcp_timeout_ms() -> u64 {
    DEFAULT_MCP_TIMEOUT_MS
}

impl Default for SkillsConfig {
    fn default() -> Self {
        SkillsConfig {
            enabled: true,
            auto_activate: AutoActivate::Suggest,
            include_repo_skills: true,
            include_generic_repo_skills: true,
            include_user_skills: true,
            include_compat_claude_skills: true,
            include_agents_skills: true,
            max_context_bytes: None,
            max_skill_file_bytes: 262_144,
            preview_max_chars: 2000,
            follow_symlinks: true,
            substitute_arguments: true,
            disk_cache: true,
            sources: SkillsSourcesConfig::default(),
            disabled: SkillsDisabledConfig::default(),
            prompt: SkillsPromptConfig::default(),
            routing: SkillsRoutingConfig::default(),
            mcp_servers: Vec::new(),
        }
    }
}

/// `[skills.sources]`: extra skill roots.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct SkillsSourcesConfig {
    /// Extra roots, searched after the user roots and before bundled skills, in
    /// the order written. Relative entries resolve against the directory of the
    /// file that set them.
    pub paths: Vec<String>,
}

/// `[skills.disabled]`: skills never loaded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct SkillsDisabledConfig {
    /// Ids of skills to leave out everywhere: catalog, listing for the model and invocation.
    pub ids: Vec<String>,
}

/// `[skills.prompt]`: the model-visible catalog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct SkillsPromptConfig {
    /// `off`, `names_only` or `summary`.
    pub catalog: CatalogMode,
    /// Optional bound, in bytes, on the whole catalog; omitted means unlimited.
    /// When the catalog does not fit, descriptions are first shortened evenly
    /// (one common length, down to 60 characters), then skills are left out,
    /// lowest source precedence first and then by id, and a final line tells
    /// the model how many were left out and under which roots their files
    /// are. That line is always there when anything was cut: when the limit
    /// is smaller than the line itself, the catalog is the line alone (the
    /// marker wins over the limit).
    pub max_bytes: Option<usize>,
    /// Optional bound, in characters, on each description, cut on grapheme
    /// boundaries and marked; omitted means unlimited. A limit smaller than the
    /// marker leaves the marker alone (the marker wins over the limit).
    pub max_description_chars: Option<usize>,
    /// Include each skill's source label in `summary` mode.
    pub include_sources: bool,
    /// Include each skill's activation keywords in `summary` mode.
    pub include_keywords: bool,
    /// The model's context window, in tokens, for the catalog size warning.
    pub context_window_tokens: usize,
    /// Warn (on stderr and in the turn's report) when the catalog alone is
    /// estimated to take more than this percentage of `context_window_tokens`;
    /// `0` turns the warning off. Tokens are estimated as bytes / 4.
    pub warn_percent: u32,
}

impl Default for SkillsPromptConfig {
    fn default() -> Self {
        SkillsPromptConfig {
            catalog: CatalogMode::Summary,
            max_bytes: None,
            max_description_chars: None,
            include_sources: true,
            include_keywords: false,
            context_window_tokens: 200_000,
            warn_percent: 25,
        }
    }
}

/// `[skills.routing]`: the skills that best fit each turn's task, ranked by
/// the relevance index, in the request-only section `relevant_skills`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct SkillsRoutingConfig {
    /// Add the `relevant_skills` section: the best matches for the turn's text and touched paths, in the catalog's entry format. Off by default, so the spec's catalog stays the default; with many skills, turn it on and set `skills.prompt.catalog` to `names_only` or `off`.
    pub enabled: bool,
    /// The most skills the section lists.
    pub max_results: usize,
    /// The least score (BM25 per field, summed, as `skills search` shows it) a skill needs to be listed; `0` lists every match.
    pub min_score: ScoreFloor,
}

impl Default for SkillsRoutingConfig {
    fn default() -> Self {
        SkillsRoutingConfig {
            enabled: false,
            max_results: 5,
            min_score: ScoreFloor(0.0),
        }
    }
}

/// A score floor: a non-negative number compared with relevance scores.
/// Equal when its bits are, so configs stay comparable (`Eq`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct ScoreFloor(#[schemars(range(min = 0.0))] pub f64);

impl PartialEq for ScoreFloor {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for ScoreFloor {}
