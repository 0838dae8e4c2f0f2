//! The key tree of the config: every key of `BcodeConfig` and what it may
//! hold. Generated from `json_schema()` by the test
//! `schema::tests::the_checked_in_key_tree_is_current`; do not edit. After
//! changing a config type: `BCODE_UPDATE_SCHEMA=1 cargo test -p bcode-prompt-pipeline`.

use super::shape::{LeafKind, Shape};

/// The key tree of `BcodeConfig`, tables sorted by key.
#[rustfmt::skip]
pub(crate) static KEY_TREE: Shape = Shape::Table(&[
    ("facts", Shape::Table(&[
        ("git", Shape::Table(&[
            ("branch", Shape::Leaf { kind: LeafKind::Str, nullable: true }),
            ("commit", Shape::Leaf { kind: LeafKind::Str, nullable: true }),
            ("head", Shape::Leaf { kind: LeafKind::Enum(&["branch", "detached", "unborn", "none"]), nullable: false }),
            ("short", Shape::Leaf { kind: LeafKind::Str, nullable: true }),
            ("status", Shape::Leaf { kind: LeafKind::StrArray, nullable: false }),
            ("worktree", Shape::Leaf { kind: LeafKind::Enum(&["main", "linked", "bare"]), nullable: false }),
        ])),
        ("home", Shape::Leaf { kind: LeafKind::Str, nullable: true }),
        ("hosting", Shape::Table(&[
            ("ci", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("container", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("ssh", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
        ])),
        ("locale", Shape::Leaf { kind: LeafKind::Str, nullable: true }),
        ("now", Shape::Leaf { kind: LeafKind::Str, nullable: true }),
        ("os", Shape::Table(&[
            ("arch", Shape::Leaf { kind: LeafKind::Str, nullable: false }),
            ("family", Shape::Leaf { kind: LeafKind::Str, nullable: false }),
            ("version", Shape::Leaf { kind: LeafKind::Str, nullable: true }),
        ])),
        ("repo_root", Shape::Leaf { kind: LeafKind::Str, nullable: true }),
        ("runtime_mode", Shape::Leaf { kind: LeafKind::Enum(&["interactive", "scripted", "render"]), nullable: false }),
        ("shell", Shape::Leaf { kind: LeafKind::Str, nullable: true }),
        ("timezone", Shape::Leaf { kind: LeafKind::Str, nullable: true }),
        ("toolchain", Shape::Leaf { kind: LeafKind::StrArray, nullable: false }),
    ])),
    ("invariants", Shape::Table(&[
        ("enabled", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
        ("include_task_summary", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
        ("max_files", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: false }),
        ("max_globs_per_file", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: false }),
        ("max_selected", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: false }),
        ("mode", Shape::Leaf { kind: LeafKind::Enum(&["full", "relevant"]), nullable: false }),
        ("selector", Shape::Table(&[
            ("background_timeout_ms", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: true }),
            ("cancel_on_timeout", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("cancel_stale", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("initial_timeout_ms", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: true }),
            ("model_profile", Shape::Leaf { kind: LeafKind::Str, nullable: true }),
            ("on_timeout", Shape::Leaf { kind: LeafKind::Enum(&["full", "previous", "deterministic", "none"]), nullable: false }),
            ("wait_for_background_on_next_prompt", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
        ])),
    ])),
    ("model", Shape::Table(&[
        ("tool_output", Shape::Table(&[
            ("fallback_argument_chars", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: false }),
        ])),
    ])),
    ("skills", Shape::Table(&[
        ("auto_activate", Shape::Leaf { kind: LeafKind::Enum(&["off", "suggest", "on"]), nullable: false }),
        ("disabled", Shape::Table(&[
            ("ids", Shape::Leaf { kind: LeafKind::StrArray, nullable: false }),
        ])),
        ("disk_cache", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
        ("enabled", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
        ("follow_symlinks", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
        ("include_compat_claude_skills", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
        ("include_generic_repo_skills", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
        ("include_repo_skills", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
        ("include_user_skills", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
        ("max_context_bytes", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: true }),
        ("max_skill_file_bytes", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: false }),
        ("preview_max_chars", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: false }),
        ("prompt", Shape::Table(&[
            ("catalog", Shape::Leaf { kind: LeafKind::Enum(&["off", "names_only", "summary"]), nullable: false }),
            ("context_window_tokens", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: false }),
            ("include_keywords", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("include_sources", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("max_bytes", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: true }),
            ("max_description_chars", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: true }),
            ("warn_percent", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: false }),
        ])),
        ("sources", Shape::Table(&[
            ("paths", Shape::Leaf { kind: LeafKind::StrArray, nullable: false }),
        ])),
    ])),
    ("system_prompt", Shape::Table(&[
        ("git_status_max_chars", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: false }),
        ("mode", Shape::Leaf { kind: LeafKind::Enum(&["default", "replace"]), nullable: false }),
        ("repository_instructions_max_chars", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: true }),
        ("repository_invariants_max_chars", Shape::Leaf { kind: LeafKind::UnsignedInt, nullable: true }),
        ("sections", Shape::Table(&[
            ("agent_suffix", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("config_profile", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("current_datetime", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("dynamic_repository_context", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("execution_environment", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("git_revision", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("hosting_environment", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("locale", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("repository_context", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("repository_invariants", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("runtime_mode", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("skill_catalog", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("toolchain_context", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("user_authority", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
            ("worktree_context", Shape::Leaf { kind: LeafKind::Bool, nullable: false }),
        ])),
        ("templates_dir", Shape::Leaf { kind: LeafKind::Str, nullable: true }),
        ("text", Shape::Leaf { kind: LeafKind::Str, nullable: false }),
    ])),
    ("trust", Shape::Table(&[
        ("repositories", Shape::Leaf { kind: LeafKind::StrArray, nullable: false }),
    ])),
]);
