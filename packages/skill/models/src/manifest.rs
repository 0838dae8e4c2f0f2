//! The validated front matter of a skill.

use serde::{Deserialize, Serialize};

use crate::field_map::FieldMap;
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
    /// The id the skill is known by: front matter `id`, else the folder name
    /// or file stem, else a `name` that is a valid id.
    pub id: SkillId,
    /// The display name: front matter `name`, or the id when it is absent or
    /// empty.
    pub name: String,
    /// What the skill is for and when to use it, shown in the model-visible
    /// catalog; required, so never empty for a parsed skill.
    pub description: String,
    /// Front matter `version`, free-form and not interpreted.
    pub version: Option<String>,
    /// Keywords that suggest or auto-activate the skill.
    pub activation: SkillActivation,
    /// Advisory tool hints; they grant nothing.
    pub permissions: SkillPermissionHints,
    /// `disable_model_invocation` / `disable-model-invocation`.
    pub disable_model_invocation: bool,
    /// An explicit reasoning effort for turns that invoke this skill.
    pub thinking_effort: Option<String>,
    /// A preferred model for turns that invoke this skill.
    pub model: Option<String>,
    /// Agent Skills `license`, kept as written.
    pub license: Option<String>,
    /// Agent Skills `compatibility` (the environments the skill needs), kept
    /// as written.
    pub compatibility: Option<String>,
    /// Agent Skills `metadata`: free-form, kept as written.
    pub metadata: FieldMap,
    /// Fields Bcode does not know, kept so hosts and plugins can read them.
    pub extra: FieldMap,
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
            metadata: FieldMap::new(),
            extra: FieldMap::new(),
        }
    }
}
