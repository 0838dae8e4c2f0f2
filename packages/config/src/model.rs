//! The typed configuration of the whole spec with its defaults: `[skills]`
//! (in `skills`), `[invariants]`, `[system_prompt]` and
//! `[model]` and `[trust]`. Every optional limit is an `Option`: omitted
//! means unlimited.
//! Doc comments here become the JSON Schema descriptions.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::facts::Facts;
use crate::skills::SkillsConfig;

/// The whole effective configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct BcodeConfig {
    /// `[skills]`
    pub skills: SkillsConfig,
    /// `[invariants]`
    pub invariants: InvariantsConfig,
    /// `[system_prompt]`
    pub system_prompt: SystemPromptConfig,
    /// `[model]`
    pub model: ModelConfig,
    /// `[facts]`: machine facts pinned instead of probed (golden files).
    #[serde(skip_serializing_if = "Facts::is_empty")]
    pub facts: Facts,
    /// `[trust]`
    pub trust: TrustConfig,
}

/// `[trust]`: which repositories' own config is applied in full, and which
/// folders other users own count as yours. Honoured
/// only from the user's layers (user file, environment, `--config`,
/// `--set`); a repository's config cannot trust anything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct TrustConfig {
    /// Repository roots whose `.bcode/bcode.toml` may also set the keys that
    /// reach outside the repository, run programs or change who decides.
    /// `~/` means the home; relative entries resolve against the directory of
    /// the file that set them; a repository is trusted when its root is one
    /// of the entries (folders below an entry are not).
    pub repositories: Vec<String>,
    /// Folders that other users own and that you take for yours, with
    /// everything below them, as git's `safe.directory` does: a repository
    /// root above the working folder, and the folders between them, count
    /// only when you own them or they are listed here (`*` lists every
    /// folder). `~/` and relative entries resolve as `repositories` does.
    pub safe_directories: Vec<String>,
}

/// How invariant guidance is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InvariantsMode {
    /// Place the complete invariants catalog; no selector calls.
    #[default]
    Full,
    /// Ask a selector which invariants matter for the task and keep that focus through a turn.
    Relevant,
}

/// What a timed-out or failed selection falls back to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnTimeout {
    /// The complete invariants catalog.
    #[default]
    Full,
    /// The last valid selection, else the complete catalog.
    Previous,
    /// The built-in deterministic (lexical) selector.
    Deterministic,
    /// No invariant guidance this turn.
    None,
}

/// `[invariants]`: repository invariant guidance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct InvariantsConfig {
    /// Master switch: `false` suppresses catalog loading, reminders, selector work and invariant metadata in every mode.
    pub enabled: bool,
    /// `full` or `relevant`.
    pub mode: InvariantsMode,
    /// The most invariants a relevant-mode selection keeps.
    pub max_selected: usize,
    /// Add the selector's short task summary to focused guidance.
    pub include_task_summary: bool,
    /// The most invariant files read, in file-name order; the rest are
    /// skipped with a note.
    pub max_files: usize,
    /// The most `paths` globs used of one invariant; the rest are ignored
    /// with a note.
    pub max_globs_per_file: usize,
    /// `[invariants.selector]`
    pub selector: InvariantSelectorConfig,
}

impl Default for InvariantsConfig {
    fn default() -> Self {
        InvariantsConfig {
            enabled: true,
            mode: InvariantsMode::Full,
            max_selected: 6,
            include_task_summary: true,
            max_files: 100,
            max_globs_per_file: 64,
            selector: InvariantSelectorConfig::default(),
        }
    }
}

/// `[invariants.selector]`: deadlines and fallbacks of relevant mode.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct InvariantSelectorConfig {
    /// Model profile for selector calls; the active model is used when omitted.
    pub model_profile: Option<String>,
    /// Deadline for the first selection of a session, in milliseconds; omitted means wait without a deadline.
    pub initial_timeout_ms: Option<u64>,
    /// Deadline for background re-evaluation, in milliseconds; omitted means wait without a deadline.
    pub background_timeout_ms: Option<u64>,
    /// Make a new prompt wait for unfinished background re-evaluation.
    pub wait_for_background_on_next_prompt: bool,
    /// Cancel the provider call when its deadline passes.
    pub cancel_on_timeout: bool,
    /// Cancel background work that a newer request has made stale.
    pub cancel_stale: bool,
    /// `full`, `previous`, `deterministic` or `none`.
    pub on_timeout: OnTimeout,
}

/// Where the base of the system prompt comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PromptMode {
    /// Bcode's built-in coding-agent prompt.
    #[default]
    Default,
    /// `system_prompt.text` replaces the built-in prompt; enabled sections are still appended.
    Replace,
}

/// `[system_prompt]`: the base prompt, its sections and their bounds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct SystemPromptConfig {
    /// `default` or `replace`.
    pub mode: PromptMode,
    /// The base prompt in `replace` mode; must not be empty there.
    pub text: String,
    /// Optional bound, in characters, on each repository instruction file, marked when applied; omitted means unlimited. A limit smaller than the truncation marker keeps none of the text: the marker alone is shown (the marker wins over the limit) and `render` warns.
    pub repository_instructions_max_chars: Option<usize>,
    /// Bound, in characters, on all repository instruction files together, in the order they are placed (root first, `BCODE.md` before `AGENTS.md`): the file that crosses it is cut with the truncation marker and the files after it are left out (each named in the section notes) without being read. Each file counts its text as the model sees it, at most its `repository_instructions_max_chars`. The default, 1,048,576, is far above real instructions; a repository's config may lower it, never raise it.
    pub repository_instructions_total_max_chars: usize,
    /// Optional bound, in characters, on the repository invariants catalog, marked when applied; omitted means unlimited. A limit smaller than the truncation marker keeps none of the text: the marker alone is shown (the marker wins over the limit) and `render` warns.
    pub repository_invariants_max_chars: Option<usize>,
    /// Bound, in characters, on git status context, marked when applied. A limit smaller than the truncation marker keeps none of the text: the marker alone is shown (the marker wins over the limit) and `render` warns.
    pub git_status_max_chars: usize,
    /// A directory whose `*.j2` files override the embedded templates of the same name.
    /// Relative paths resolve against the directory of the file that set it.
    pub templates_dir: Option<String>,
    /// `[system_prompt.sections]`
    pub sections: SectionToggles,
}

/// The default of `system_prompt.repository_instructions_total_max_chars`
/// (1 Mi characters): instructions are placed whole in any real repository,
/// but links or nested folders cannot make them fill the prompt (twenty
/// links to an 8 MiB file were a 160 MiB prompt).
pub const REPOSITORY_INSTRUCTIONS_TOTAL_MAX_CHARS: usize = 1 << 20;

impl Default for SystemPromptConfig {
    fn default() -> Self {
        SystemPromptConfig {
            mode: PromptMode::Default,
            text: String::new(),
            repository_instructions_max_chars: None,
            repository_instructions_total_max_chars: REPOSITORY_INSTRUCTIONS_TOTAL_MAX_CHARS,
            repository_invariants_max_chars: None,
            git_status_max_chars: 4000,
            templates_dir: None,
            sections: SectionToggles::default(),
        }
    }
}

/// `[system_prompt.sections]`: one toggle per section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct SectionToggles {
    /// Local timestamp, timezone abbreviation and UTC offset (request-only).
    pub current_datetime: bool,
    /// OS family and version, architecture, shell name and coarse presence signals (request-only).
    pub execution_environment: bool,
    /// Coarse hosting signals such as CI, container or SSH (request-only).
    pub hosting_environment: bool,
    /// The locale (request-only).
    pub locale: bool,
    /// Branch, commit and dirty flag (request-only).
    pub git_revision: bool,
    /// How Bcode is running, e.g. interactive or scripted (request-only).
    pub runtime_mode: bool,
    /// Opt in: runs a fixed set of version commands with per-command time and output limits.
    pub toolchain_context: bool,
    /// Whether the checkout is a linked worktree, and its root (request-only).
    pub worktree_context: bool,
    /// The active configuration profile (request-only).
    pub config_profile: bool,
    /// The complete repository invariants catalog in `full` mode.
    pub repository_invariants: bool,
    /// Repository instructions from `BCODE.md` and `AGENTS.md`.
    pub repository_context: bool,
    /// Per-request repository facts such as git status.
    pub dynamic_repository_context: bool,
    /// The closing agent instructions.
    pub agent_suffix: bool,
    /// The instruction-precedence policy for explicit user overrides; true when omitted.
    pub user_authority: bool,
    /// The model-visible skill catalog.
    pub skill_catalog: bool,
    /// The skills that best fit the turn's task, ranked by the relevance index (request-only); present only when `skills.routing.enabled = true`.
    pub relevant_skills: bool,
    /// Toggles of host-defined sections, by id (on unless set to `false`).
    /// Only ids a host registered are accepted; others are unknown keys.
    #[serde(flatten)]
    #[schemars(skip)]
    pub host: BTreeMap<String, bool>,
}

impl Default for SectionToggles {
    fn default() -> Self {
        SectionToggles {
            current_datetime: true,
            execution_environment: true,
            hosting_environment: true,
            locale: true,
            git_revision: true,
            runtime_mode: true,
            toolchain_context: false,
            worktree_context: true,
            config_profile: true,
            repository_invariants: true,
            repository_context: true,
            dynamic_repository_context: true,
            agent_suffix: true,
            user_authority: true,
            skill_catalog: true,
            relevant_skills: true,
            host: BTreeMap::new(),
        }
    }
}

impl SectionToggles {
    /// Whether the toggle named `id` is on; `None` for a name that is not a
    /// canonical toggle and was not set for a host section.
    pub fn get(&self, id: &str) -> Option<bool> {
        Some(match id {
            "current_datetime" => self.current_datetime,
            "execution_environment" => self.execution_environment,
            "hosting_environment" => self.hosting_environment,
            "locale" => self.locale,
            "git_revision" => self.git_revision,
            "runtime_mode" => self.runtime_mode,
            "toolchain_context" => self.toolchain_context,
            "worktree_context" => self.worktree_context,
            "config_profile" => self.config_profile,
            "repository_invariants" => self.repository_invariants,
            "repository_context" => self.repository_context,
            "dynamic_repository_context" => self.dynamic_repository_context,
            "agent_suffix" => self.agent_suffix,
            "user_authority" => self.user_authority,
            "skill_catalog" => self.skill_catalog,
            "relevant_skills" => self.relevant_skills,
            host => return self.host.get(host).copied(),
        })
    }
}

/// `[model]`
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ModelConfig {
    /// `[model.tool_output]`
    pub tool_output: ToolOutputConfig,
}

/// `[model.tool_output]`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ToolOutputConfig {
    /// Bound, in characters, on historical tool-call arguments rendered as fallback text, marked when applied; stored arguments are never changed. A limit smaller than the truncation marker keeps the marker alone.
    pub fallback_argument_chars: usize,
}

impl Default for ToolOutputConfig {
    fn default() -> Self {
        ToolOutputConfig {
            fallback_argument_chars: 6000,
        }
    }
}
