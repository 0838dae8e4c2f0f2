//! The ordered pipeline: runs the enabled stages in canonical order, places
//! their sections into the system text or the request-only context, joins
//! them with a fixed separator, computes the cache boundary and accounts for
//! every section.
//!
//! Layout of the system text: every static and session section first (in
//! canonical order), then every turn section (in canonical order). The cache
//! boundary is the end of the last stable section, so a change of clock, git
//! status or active skills never changes a byte before it. The request-only
//! context follows canonical order alone; it is not cached.
//!
//! Sections whose text is empty after trimming trailing whitespace are left
//! out of the text and listed in `omitted` (reason `empty`), as are disabled
//! sections (`disabled`) and non-fatal stage failures (`failed`). Fatal stage
//! errors abort with [`AssembleError`] (see `stage` for the policy).

use std::collections::BTreeSet;
use std::fmt;

use bcode_text::Limit;
use serde::Serialize;

use crate::assembled::{AssembledPrompt, OmitReason, OmittedSection, SectionReport};
use crate::config::{BcodeConfig, SectionToggles};
use crate::order;
use crate::stage::{Placement, Section, SectionClass, Stage, StageContext, StageError};

/// What goes between two sections of the same part: one blank line.
pub const SECTION_SEPARATOR: &str = "\n\n";

/// A set of stages that is known to be valid, kept in canonical order.
pub struct Pipeline {
    stages: Vec<Box<dyn Stage>>,
}

impl fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<&str> = self.stages.iter().map(|s| s.id()).collect();
        f.debug_struct("Pipeline").field("stages", &ids).finish()
    }
}

/// A stage set that cannot form a pipeline. These are programming errors in
/// whoever assembles the stage list, reported rather than panicking.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    #[error("stage `{id}` has no place in the canonical section order")]
    UnknownStage { id: String },
    #[error("stage `{stage}` names toggle `{toggle}`, which is not a [system_prompt.sections] key")]
    UnknownToggle { stage: String, toggle: String },
    #[error("stage `{id}` was registered twice")]
    DuplicateStage { id: String },
}

/// Why assembly stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssembleError {
    /// A stage failed fatally.
    #[error("section `{section}` failed: {error}")]
    Stage { section: String, error: StageError },
    /// A stage yielded a section whose id is not its own id or `<id>:...`.
    #[error(
        "stage `{stage}` yielded section `{section}`, whose id must be `{stage}` or start with `{stage}:`"
    )]
    ForeignSectionId { stage: String, section: String },
    /// Two sections share an id.
    #[error("section `{section}` was yielded twice")]
    DuplicateSection { section: String },
}

/// What `--explain` shows about a stage before anything runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StageInfo {
    pub id: String,
    pub toggle: Option<String>,
    pub enabled: bool,
    pub class: SectionClass,
    pub placement: Placement,
    pub template: Option<String>,
    pub limit: Option<Limit>,
}

/// A section on its way into the output.
struct Placed {
    class: SectionClass,
    placement: Placement,
    section: Section,
}

impl Pipeline {
    /// Validates `stages` and sorts them into canonical order, so the order
    /// in which a caller registered them never matters.
    pub fn new(stages: Vec<Box<dyn Stage>>) -> Result<Pipeline, PipelineError> {
        let toggles = SectionToggles::default();
        let mut seen = BTreeSet::new();
        let mut ranked = Vec::with_capacity(stages.len());
        for stage in stages {
            let id = stage.id();
            let Some(rank) = order::rank(id).filter(|_| order::stage_of(id) == id) else {
                return Err(PipelineError::UnknownStage { id: id.to_owned() });
            };
            if let Some(toggle) = stage.toggle()
                && toggles.get(toggle).is_none()
            {
                return Err(PipelineError::UnknownToggle {
                    stage: id.to_owned(),
                    toggle: toggle.to_owned(),
                });
            }
            if !seen.insert(id) {
                return Err(PipelineError::DuplicateStage { id: id.to_owned() });
            }
            ranked.push((rank, stage));
        }
        ranked.sort_by_key(|(rank, _)| *rank);
        Ok(Pipeline {
            stages: ranked.into_iter().map(|(_, stage)| stage).collect(),
        })
    }

    /// Each stage as configured by `config`, in canonical order.
    pub fn describe(&self, config: &BcodeConfig) -> Vec<StageInfo> {
        self.stages
            .iter()
            .map(|stage| StageInfo {
                id: stage.id().to_owned(),
                toggle: stage.toggle().map(str::to_owned),
                enabled: is_enabled(stage.as_ref(), config),
                class: stage.class(),
                placement: stage.placement(),
                template: stage.template().map(str::to_owned),
                limit: stage.limit(config),
            })
            .collect()
    }

    /// Runs every enabled stage and assembles the prompt. Deterministic: the
    /// same config, templates and inputs give the same bytes.
    pub fn assemble(&self, cx: &StageContext<'_>) -> Result<AssembledPrompt, AssembleError> {
        let mut placed = Vec::new();
        let mut omitted = Vec::new();
        let mut ids = BTreeSet::new();
        for stage in &self.stages {
            let (id, class, placement) = (stage.id(), stage.class(), stage.placement());
            let omit = |id: &str, reason| OmittedSection {
                id: id.to_owned(),
                class,
                placement,
                reason,
            };
            if !is_enabled(stage.as_ref(), cx.config) {
                let toggle = stage.toggle().unwrap_or(id).to_owned();
                omitted.push(omit(id, OmitReason::Disabled { toggle }));
                continue;
            }
            let sections = match stage.render(cx) {
                Ok(sections) => sections,
                Err(error) if error.is_fatal() => {
                    return Err(AssembleError::Stage {
                        section: id.to_owned(),
                        error,
                    });
                }
                Err(error) => {
                    let message = error.to_string();
                    omitted.push(omit(id, OmitReason::Failed { message }));
                    continue;
                }
            };
            if sections.is_empty() {
                omitted.push(omit(id, OmitReason::Empty));
            }
            for mut section in sections {
                if order::stage_of(&section.id) != id {
                    return Err(AssembleError::ForeignSectionId {
                        stage: id.to_owned(),
                        section: section.id,
                    });
                }
                if !ids.insert(section.id.clone()) {
                    return Err(AssembleError::DuplicateSection {
                        section: section.id,
                    });
                }
                // Trailing whitespace would make the separator uneven and is
                // never meaningful at the end of a section.
                let kept = section.text.trim_end().len();
                section.text.truncate(kept);
                if section.text.is_empty() {
                    omitted.push(omit(&section.id, OmitReason::Empty));
                    continue;
                }
                placed.push(Placed {
                    class,
                    placement,
                    section,
                });
            }
        }

        // Stages ran in canonical order, so `placed` already is; a stable
        // sort that only moves turn sections behind stable ones keeps
        // canonical order within each group.
        let (mut system, request): (Vec<Placed>, Vec<Placed>) = placed
            .into_iter()
            .partition(|p| p.placement == Placement::System);
        system.sort_by_key(|p| !p.class.is_stable());

        let mut reports = Vec::with_capacity(system.len() + request.len());
        let system_text = join(system, &mut reports);
        let cache_boundary = reports
            .iter()
            .take_while(|r| r.class.is_stable())
            .last()
            .map_or(0, |r| r.range.end);
        let request_context = join(request, &mut reports);
        Ok(AssembledPrompt {
            system: system_text,
            request_context,
            cache_boundary,
            sections: reports,
            omitted,
        })
    }
}

fn is_enabled(stage: &dyn Stage, config: &BcodeConfig) -> bool {
    // `Pipeline::new` rejected unknown toggles, so `None` cannot happen here.
    stage
        .toggle()
        .is_none_or(|toggle| config.system_prompt.sections.get(toggle) != Some(false))
}

/// Joins `sections` with the separator, appending one report per section.
///
/// The largest section's own buffer becomes the joined text (the others
/// are written before and after it in place): a 10,000-skill catalog is
/// megabytes, and copying it into a fresh buffer held two copies at once
/// at the render's peak memory.
fn join(sections: Vec<Placed>, reports: &mut Vec<SectionReport>) -> String {
    let total: usize = sections
        .iter()
        .map(|p| p.section.text.len() + SECTION_SEPARATOR.len())
        .sum();
    let largest = sections
        .iter()
        .enumerate()
        .max_by_key(|(i, p)| (p.section.text.len(), std::cmp::Reverse(*i)))
        .map(|(i, _)| i);
    let mut sections = sections;
    let mut text = match largest {
        Some(i) => std::mem::take(&mut sections[i].section.text),
        None => String::new(),
    };
    // Everything before the largest section, joined, then moved in front of
    // it with one copy of the tail; everything after is appended.
    let mut before = String::new();
    for placed in &sections[..largest.unwrap_or(0)] {
        before.push_str(&placed.section.text);
        before.push_str(SECTION_SEPARATOR);
    }
    text.reserve(total.saturating_sub(text.len()));
    text.insert_str(0, &before);
    let mut start = 0;
    for (i, placed) in sections.into_iter().enumerate() {
        let Placed {
            class,
            placement,
            section,
        } = placed;
        let bytes = if Some(i) == largest {
            let len = text.len() - start;
            (start, len)
        } else if largest.is_some_and(|l| i < l) {
            (start, section.text.len())
        } else {
            text.push_str(SECTION_SEPARATOR);
            start = text.len();
            text.push_str(&section.text);
            (start, section.text.len())
        };
        let (begin, len) = bytes;
        let chars = text[begin..begin + len].chars().count();
        reports.push(SectionReport {
            id: section.id,
            class,
            placement,
            bytes: len,
            chars,
            range: begin..begin + len,
            truncated: !section.truncations.is_empty(),
            truncations: section.truncations,
            sources: section.sources,
            template: section.template,
            notes: section.notes,
        });
        start = begin + len + SECTION_SEPARATOR.len();
    }
    text
}
