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
use crate::section::{self, Position, StageSpec};
use crate::stage::{Placement, Section, SectionClass, Stage, StageContext, StageError};

/// What goes between two sections of the same part: one blank line.
pub const SECTION_SEPARATOR: &str = "\n\n";

/// A set of stages that is known to be valid, kept in canonical order, each
/// with its spec (asked once, when the pipeline is built).
pub struct Pipeline<I> {
    stages: Vec<(StageSpec, Box<dyn Stage<I>>)>,
}

impl<I> fmt::Debug for Pipeline<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<&str> = self.stages.iter().map(|(spec, _)| &*spec.id).collect();
        f.debug_struct("Pipeline").field("stages", &ids).finish()
    }
}

/// A stage set that cannot form a pipeline. These are programming errors in
/// whoever assembles the stage list, reported rather than panicking.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// A stage placed `At` a canonical section declared an id other than
    /// that section's name.
    #[error("stage `{id}` has no place in the canonical section order")]
    UnknownStage {
        /// The id the stage's spec declared.
        id: String,
    },
    /// A canonical stage's toggle is not a field of `SectionToggles`, so no
    /// config could ever switch it.
    #[error("stage `{stage}` names toggle `{toggle}`, which is not a [system_prompt.sections] key")]
    UnknownToggle {
        /// The id of the stage that declared the toggle.
        stage: String,
        /// The toggle name as declared.
        toggle: String,
    },
    /// Two stages declared the same id.
    #[error("stage `{id}` was registered twice")]
    DuplicateStage {
        /// The id both stages declared.
        id: String,
    },
    /// A host section's id breaks the host id grammar or takes a canonical
    /// section's name.
    #[error(
        "host section id `{id}` is not usable: use lower-case letters, digits and `_`, start with a letter, and do not reuse a canonical section name"
    )]
    InvalidHostId {
        /// The rejected id.
        id: String,
    },
}

/// Why assembly stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssembleError {
    /// A stage failed fatally.
    #[error("section `{section}` failed: {error}")]
    Stage {
        /// The id of the stage that failed.
        section: String,
        /// The stage's error: a fatal one, or any error of a host stage
        /// when assembling in strict mode.
        error: StageError,
    },
    /// A stage yielded a section whose id is not its own id or `<id>:...`.
    #[error(
        "stage `{stage}` yielded section `{section}`, whose id must be `{stage}` or start with `{stage}:`"
    )]
    ForeignSectionId {
        /// The id of the stage that yielded the section.
        stage: String,
        /// The section id it used.
        section: String,
    },
    /// Two sections share an id.
    #[error("section `{section}` was yielded twice")]
    DuplicateSection {
        /// The section id yielded a second time.
        section: String,
    },
}

/// What `--explain` shows about a stage before anything runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StageInfo {
    /// The stage id, which is also the id (or id prefix) of its sections.
    pub id: String,
    /// Whether a host defined this section (not one of the canonical ones).
    pub host: bool,
    /// The `[system_prompt.sections]` key that switches the stage, or `None`
    /// for a stage that always runs (such as `base` and `active_skill`).
    pub toggle: Option<String>,
    /// Whether the stage runs under the given config: it has no toggle, or
    /// its toggle is not `false`.
    pub enabled: bool,
    /// The stability class from the stage's spec.
    pub class: SectionClass,
    /// The part of the prompt its sections go to.
    pub placement: Placement,
    /// The main template the stage renders, when its spec names one.
    pub template: Option<String>,
    /// The bound the stage applies to its variable text under the config;
    /// `None` means untruncated.
    pub limit: Option<Limit>,
}

/// A section on its way into the output.
struct Placed {
    class: SectionClass,
    placement: Placement,
    section: Section,
}

impl<I> Pipeline<I> {
    /// Validates `stages` and sorts them into order (canonical rank, host
    /// sections before or after their anchor in registration order), so the
    /// order in which a caller registered them never matters otherwise.
    pub fn new(stages: Vec<Box<dyn Stage<I>>>) -> Result<Pipeline<I>, PipelineError> {
        let toggles = SectionToggles::default();
        let mut seen = BTreeSet::new();
        let mut ranked = Vec::with_capacity(stages.len());
        for stage in stages {
            let spec = stage.spec();
            let id = spec.id.to_string();
            match spec.position {
                Position::At(kind) if kind.name() != id => {
                    return Err(PipelineError::UnknownStage { id });
                }
                Position::At(_) => {
                    if let Some(toggle) = &spec.toggle
                        && toggles.get(toggle).is_none()
                    {
                        return Err(PipelineError::UnknownToggle {
                            stage: id,
                            toggle: toggle.to_string(),
                        });
                    }
                }
                Position::Before(_) | Position::After(_) => {
                    if !section::is_valid_host_id(&id) {
                        return Err(PipelineError::InvalidHostId { id });
                    }
                }
            }
            if !seen.insert(id.clone()) {
                return Err(PipelineError::DuplicateStage { id });
            }
            ranked.push((spec.position.key(), spec, stage));
        }
        ranked.sort_by_key(|(key, _, _)| *key);
        Ok(Pipeline {
            stages: ranked
                .into_iter()
                .map(|(_, spec, stage)| (spec, stage))
                .collect(),
        })
    }

    /// Each stage as configured by `config`, in order.
    pub fn describe(&self, config: &BcodeConfig) -> Vec<StageInfo> {
        self.stages
            .iter()
            .map(|(spec, stage)| StageInfo {
                id: spec.id.to_string(),
                host: !spec.is_canonical(),
                toggle: spec.toggle.as_deref().map(str::to_owned),
                enabled: is_enabled(spec, config),
                class: spec.class,
                placement: spec.placement,
                template: spec.template.as_deref().map(str::to_owned),
                limit: stage.limit(config),
            })
            .collect()
    }

    /// Runs every enabled stage and assembles the prompt. Deterministic: the
    /// same config, templates and inputs give the same bytes.
    ///
    /// A host-defined stage that fails, even fatally, or panics is omitted
    /// with its reason (a host's section must not take the prompt down);
    /// with `strict` its error is returned instead.
    pub fn assemble(
        &self,
        cx: &StageContext<'_, I>,
        strict: bool,
    ) -> Result<AssembledPrompt, AssembleError> {
        let mut placed = Vec::new();
        let mut omitted = Vec::new();
        let mut ids = BTreeSet::new();
        for (spec, stage) in &self.stages {
            let (id, class, placement) = (&*spec.id, spec.class, spec.placement);
            let omit = |id: &str, reason| OmittedSection {
                id: id.to_owned(),
                class,
                placement,
                reason,
            };
            if !is_enabled(spec, cx.config) {
                let toggle = spec.toggle.as_deref().unwrap_or(id).to_owned();
                omitted.push(omit(id, OmitReason::Disabled { toggle }));
                continue;
            }
            let host = !spec.is_canonical();
            let result = if host {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| stage.render(cx)))
                    .unwrap_or_else(|_| {
                        Err(StageError::Degraded {
                            message: "the host stage panicked".to_owned(),
                        })
                    })
            } else {
                stage.render(cx)
            };
            let sections = match result {
                Ok(sections) => sections,
                Err(error) if (host && strict) || (!host && error.is_fatal()) => {
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
                if section::stage_of(&section.id) != id {
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

fn is_enabled(spec: &StageSpec, config: &BcodeConfig) -> bool {
    // A canonical toggle always has a value; a host section's is on unless
    // the config sets it to `false`.
    spec.toggle
        .as_deref()
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
    // Exact: the catalog section alone can be tens of megabytes, and an
    // amortized reserve would double its buffer.
    text.reserve_exact(total.saturating_sub(text.len()));
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
