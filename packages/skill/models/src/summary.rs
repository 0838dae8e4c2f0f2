//! The compact, indexed description of a skill; no body.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::manifest::SkillManifest;
use crate::source::SkillSource;

/// How a skill is laid out on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SkillLayout {
    /// `<root>/.../<id>/SKILL.md` (or `skill.md`, `README.md`) with resources beside it.
    Folder,
    /// `<root>/<id>.md`.
    Flat,
    /// Served by a provider from memory.
    Provided,
}

/// What the registry indexes for each skill. Cheap to clone and to list; the
/// body is loaded separately, only when a skill is described or activated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillSummary {
    /// The validated front matter.
    pub manifest: SkillManifest,
    /// Shared by every skill of one source root: one allocation per root,
    /// not a label and a path per skill (serialized as the source itself).
    pub source: Arc<SkillSource>,
    /// Whether the skill is a folder, a flat file or provided from memory.
    pub layout: SkillLayout,
    /// Absolute path of the instruction file (inside the canonical root).
    pub location: PathBuf,
    /// The directory relative references resolve against.
    pub directory: PathBuf,
    /// Byte offset of the body in the instruction file.
    pub body_offset: usize,
}

impl SkillSummary {
    /// Whether the skill appears in the model-visible catalog.
    pub fn model_visible(&self) -> bool {
        !self.manifest.disable_model_invocation
    }
}
