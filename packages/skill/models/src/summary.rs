//! The compact, indexed description of a skill; no body.

use std::path::{Path, PathBuf};
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
    /// Absolute path of the instruction file (inside the canonical root),
    /// shared with the diagnostics about the file.
    pub location: Arc<Path>,
    /// The directory relative references resolve against, when it is not
    /// the folder of `location` (a provided skill's); `None` for every
    /// skill read from disk, whose folder it is. A second copy of that path
    /// per skill was 5 MB of a 60,000-skill registry. Read the directory
    /// with [`SkillSummary::directory`]; set this field with
    /// [`directory_override`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory_override: Option<PathBuf>,
    /// Byte offset of the body in the instruction file.
    pub body_offset: usize,
}

/// The `directory_override` of a summary at `location` whose references
/// resolve against `directory`: `None` when that is `location`'s folder.
pub fn directory_override(location: &Path, directory: PathBuf) -> Option<PathBuf> {
    (location.parent() != Some(directory.as_path())).then_some(directory)
}

impl SkillSummary {
    /// The directory relative references resolve against: the folder of
    /// the instruction file, unless the summary says otherwise.
    pub fn directory(&self) -> &Path {
        match &self.directory_override {
            Some(directory) => directory,
            None => self.location.parent().unwrap_or(Path::new("")),
        }
    }

    /// Whether the skill appears in the model-visible catalog.
    pub fn model_visible(&self) -> bool {
        !self.manifest.disable_model_invocation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_is_the_files_folder_unless_overridden() {
        let location = Path::new("/r/skills/a/SKILL.md");
        assert_eq!(
            directory_override(location, PathBuf::from("/r/skills/a")),
            None
        );
        assert_eq!(
            directory_override(location, PathBuf::from("/elsewhere")),
            Some(PathBuf::from("/elsewhere"))
        );
        // A location with no folder keeps the directory it was given.
        assert_eq!(
            directory_override(Path::new(""), PathBuf::from("/d")),
            Some(PathBuf::from("/d"))
        );
        let mut skill = SkillSummary {
            manifest: SkillManifest::new(
                crate::SkillId::parse("a").unwrap_or_else(|_| unreachable!()),
            ),
            source: Arc::new(SkillSource {
                kind: crate::SourceKind::Config,
                label: "config:x".into(),
                ordinal: 0,
                root: None,
                provider: None,
            }),
            layout: SkillLayout::Folder,
            location: Arc::from(location),
            directory_override: None,
            body_offset: 0,
        };
        assert_eq!(skill.directory(), Path::new("/r/skills/a"));
        skill.directory_override = Some(PathBuf::from("/elsewhere"));
        assert_eq!(skill.directory(), Path::new("/elsewhere"));
    }
}
