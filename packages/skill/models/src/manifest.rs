//! The validated front matter of a skill.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::id::SkillId;

/// Activation metadata used for suggestion and auto-activation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillActivation {
    /// Keywords, trimmed, deduplicated, in the order written.
    pub keywords: Vec<String>,
}

/// Permission metadata. Advisory only: it never grants anything, and every
/// action still goes through Bcode's tools and policy.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillPermissionHints {
    /// `permissions.tools` (Bcode spelling), e.g. `filesystem.read`.
    pub tools: Vec<String>,
    /// Agent Skills `allowed-tools`, e.g. `Bash(git:*) Read`.
    pub allowed_tools: Vec<String>,
}

/// Everything a skill's front matter declares, validated and normalised.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillManifest {
    pub id: SkillId,
    pub name: String,
    pub description: String,
    pub version: Option<String>,
    pub activation: SkillActivation,
    pub permissions: SkillPermissionHints,
    /// `disable_model_invocation` / `disable-model-invocation`.
    pub disable_model_invocation: bool,
    /// An explicit reasoning effort for turns that invoke this skill.
    pub thinking_effort: Option<String>,
    /// A preferred model for turns that invoke this skill.
    pub model: Option<String>,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    /// Agent Skills `metadata`: free-form, kept as written.
    pub metadata: BTreeMap<String, serde_json::Value>,
    /// Fields Bcode does not know, kept so hosts and plugins can read them.
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl SkillManifest {
    /// A manifest with only an id (also its name) and every other field
    /// empty, for providers and tests to fill in with struct update syntax.
    pub fn new(id: SkillId) -> Self {
        SkillManifest {
            name: id.to_string(),
            id,
            description: String::new(),
            version: None,
            activation: SkillActivation::default(),
            permissions: SkillPermissionHints::default(),
            disable_model_invocation: false,
            thinking_effort: None,
            model: None,
            license: None,
            compatibility: None,
            metadata: BTreeMap::new(),
            extra: BTreeMap::new(),
        }
    }
}
