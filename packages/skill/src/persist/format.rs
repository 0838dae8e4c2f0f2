//! The disk cache's file format: each source written once and named by its
//! index from the skills, and the skills read one at a time straight into
//! the shared summaries a registry holds.
//!
//! At 60,000 skills the first format (every summary with its own copy of
//! its source, read whole into memory, then into a vector of summaries,
//! then into shared ones) peaked at 144 MB of heap to read a 62.5 MB file:
//! the file, the vector and the copies of the sources at once.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bcode_skill_models::{Diagnostic, SkillLayout, SkillManifest, SkillSource, SkillSummary};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::registry::RootReport;
use crate::snapshot::StoredSnapshot;

/// Bumped whenever what is written changes meaning.
pub(super) const FORMAT: u32 = 5;

/// The file, as read.
pub(super) struct Stored {
    pub format: u32,
    /// What the build depended on, in full (the file name is its hash).
    pub key: String,
    pub snapshot: StoredSnapshot,
    /// Every summary, sharing one source per root.
    pub skills: Vec<Arc<SkillSummary>>,
    pub diagnostics: Vec<Diagnostic>,
    pub reports: Vec<RootReport>,
}

/// The file, as written: borrowed from the registry (cloning 10,000
/// summaries to write them doubled the memory of a render). `sources`
/// comes before `skills`, which name them by index.
#[derive(Serialize)]
pub(super) struct StoredRef<'a> {
    pub format: u32,
    pub key: &'a str,
    pub snapshot: StoredSnapshot,
    pub sources: Vec<&'a SkillSource>,
    pub skills: Vec<SkillRef<'a>>,
    pub diagnostics: &'a [Diagnostic],
    pub reports: &'a [RootReport],
}

/// One summary as written: its source by index into `sources`.
#[derive(Serialize)]
pub(super) struct SkillRef<'a> {
    source: usize,
    layout: SkillLayout,
    location: &'a Path,
    /// Only where it is not `location`'s folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    directory: Option<&'a Path>,
    body_offset: usize,
    manifest: &'a SkillManifest,
}

/// One summary as read.
#[derive(Deserialize)]
struct StoredSkill {
    source: usize,
    layout: SkillLayout,
    location: PathBuf,
    #[serde(default)]
    directory: Option<PathBuf>,
    body_offset: usize,
    manifest: SkillManifest,
}

impl<'a> StoredRef<'a> {
    /// `skills` with their sources gathered, each once, in first-use order.
    pub fn skills(
        skills: impl Iterator<Item = &'a SkillSummary>,
    ) -> (Vec<&'a SkillSource>, Vec<SkillRef<'a>>) {
        let mut sources: Vec<&'a SkillSource> = Vec::new();
        let refs = skills
            .map(|skill| {
                let source = match sources.iter().position(|s| **s == *skill.source) {
                    Some(index) => index,
                    None => {
                        sources.push(&skill.source);
                        sources.len() - 1
                    }
                };
                SkillRef {
                    source,
                    layout: skill.layout,
                    location: &skill.location,
                    directory: skill.directory_override.as_deref(),
                    body_offset: skill.body_offset,
                    manifest: &skill.manifest,
                }
            })
            .collect();
        (sources, refs)
    }
}

impl<'de> Deserialize<'de> for Stored {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(StoredVisitor)
    }
}

struct StoredVisitor;

impl<'de> Visitor<'de> for StoredVisitor {
    type Value = Stored;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a skill discovery cache")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Stored, A::Error> {
        let mut format = None;
        let mut key = None;
        let mut snapshot = None;
        let mut sources: Option<Vec<Arc<SkillSource>>> = None;
        let mut skills = None;
        // Skills met before the sources they name (JSON does not order an
        // object's members; a tool that rewrote the file may sort them).
        let mut early: Option<Vec<StoredSkill>> = None;
        let mut diagnostics = None;
        let mut reports = None;
        while let Some(field) = map.next_key::<String>()? {
            match field.as_str() {
                "format" => format = Some(map.next_value()?),
                "key" => key = Some(map.next_value()?),
                "snapshot" => snapshot = Some(map.next_value()?),
                "sources" => sources = Some(map.next_value()?),
                "skills" => match sources.as_deref() {
                    Some(sources) => skills = Some(map.next_value_seed(SkillsSeed { sources })?),
                    None => early = Some(map.next_value()?),
                },
                "diagnostics" => diagnostics = Some(map.next_value()?),
                "reports" => reports = Some(map.next_value()?),
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let missing = de::Error::missing_field;
        if let Some(early) = early {
            let sources = sources.ok_or_else(|| missing("sources"))?;
            skills = Some(
                early
                    .into_iter()
                    .map(|stored| shared(stored, &sources))
                    .collect::<Result<_, _>>()?,
            );
        }
        Ok(Stored {
            format: format.ok_or_else(|| missing("format"))?,
            key: key.ok_or_else(|| missing("key"))?,
            snapshot: snapshot.ok_or_else(|| missing("snapshot"))?,
            skills: skills.ok_or_else(|| missing("skills"))?,
            diagnostics: diagnostics.ok_or_else(|| missing("diagnostics"))?,
            reports: reports.ok_or_else(|| missing("reports"))?,
        })
    }
}

/// Reads the skills array one summary at a time into shared summaries,
/// each pointing at the one copy of its source.
struct SkillsSeed<'s> {
    sources: &'s [Arc<SkillSource>],
}

impl<'de> DeserializeSeed<'de> for SkillsSeed<'_> {
    type Value = Vec<Arc<SkillSummary>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for SkillsSeed<'_> {
    type Value = Vec<Arc<SkillSummary>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of skills")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut skills = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(stored) = seq.next_element::<StoredSkill>()? {
            skills.push(shared(stored, self.sources)?);
        }
        Ok(skills)
    }
}

/// The shared summary of a stored skill, with the one copy of its source.
fn shared<E: de::Error>(
    stored: StoredSkill,
    sources: &[Arc<SkillSource>],
) -> Result<Arc<SkillSummary>, E> {
    let source = sources
        .get(stored.source)
        .ok_or_else(|| E::custom("a skill names a source that is not there"))?;
    Ok(Arc::new(SkillSummary {
        manifest: stored.manifest,
        source: Arc::clone(source),
        layout: stored.layout,
        directory_override: stored.directory.and_then(|directory| {
            bcode_skill_models::directory_override(&stored.location, directory)
        }),
        location: stored.location,
        body_offset: stored.body_offset,
    }))
}
