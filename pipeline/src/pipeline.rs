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
use crate::section::{self, Position, StageSpec};
use crate::section::{Placement, SectionClass};
use crate::stage::{Section, Stage, StageContext, StageError};
use bcode_prompt_config::{BcodeConfig, SectionToggles};
use bcode_templates::Templates;

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

    /// Whether the stage `id` is registered and its toggle in `config` is
    /// on: what assembly decides, for an edge that gathers only what a
    /// section will show.
    pub fn enables(&self, id: &str, config: &BcodeConfig) -> bool {
        self.stages
            .iter()
            .any(|(spec, _)| &*spec.id == id && spec.enabled_by(config))
    }

    /// Each stage as configured by `config`, in order.
    pub fn describe(&self, config: &BcodeConfig) -> Vec<StageInfo> {
        self.stages
            .iter()
            .map(|(spec, stage)| StageInfo {
                id: spec.id.to_string(),
                host: !spec.is_canonical(),
                toggle: spec.toggle.as_deref().map(str::to_owned),
                enabled: spec.enabled_by(config),
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
        Ok(self.render(cx, strict)?.join())
    }

    /// [`Pipeline::assemble`] taking the inputs, which are dropped once
    /// every stage has run and before the sections are joined: a section
    /// sharing a text only the inputs also held (a one-shot render's skill
    /// catalog) then becomes the joined prompt itself, not a copy beside it.
    pub fn assemble_owned(
        &self,
        config: &BcodeConfig,
        templates: &Templates,
        inputs: I,
        strict: bool,
    ) -> Result<AssembledPrompt, AssembleError> {
        let rendered = self.render(&StageContext::new(config, templates, &inputs), strict)?;
        drop(inputs);
        Ok(rendered.join())
    }

    /// Runs every enabled stage: the sections placed, in canonical order,
    /// and those left out with the reason.
    fn render(&self, cx: &StageContext<'_, I>, strict: bool) -> Result<Rendered, AssembleError> {
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
            if !spec.enabled_by(cx.config) {
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

        Ok(Rendered { placed, omitted })
    }
}

/// What the stages of one assembly gave, before it is joined.
struct Rendered {
    placed: Vec<Placed>,
    omitted: Vec<OmittedSection>,
}

impl Rendered {
    fn join(self) -> AssembledPrompt {
        let Rendered { placed, omitted } = self;
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
        AssembledPrompt {
            system: system_text,
            request_context,
            cache_boundary,
            sections: reports,
            omitted,
        }
    }
}

/// Joins `sections` with the separator, appending one report per section.
fn join(sections: Vec<Placed>, reports: &mut Vec<SectionReport>) -> String {
    let total: usize = sections
        .iter()
        .map(|p| p.section.text.len() + SECTION_SEPARATOR.len())
        .sum();
    let mut sections = sections;
    let grown = section_to_grow(&sections, total);
    let mut text = match grown {
        Some(i) => grow_around(&mut sections, i, total),
        None => String::with_capacity(total),
    };
    let mut start = 0;
    for (i, placed) in sections.into_iter().enumerate() {
        let Placed {
            class,
            placement,
            section,
        } = placed;
        let len = match grown {
            // Already in place: the grown section ends the text so far.
            Some(g) if i == g => text.len() - start,
            Some(g) if i < g => section.text.len(),
            _ => {
                if i > 0 {
                    text.push_str(SECTION_SEPARATOR);
                }
                start = text.len();
                text.push_str(&section.text);
                section.text.len()
            }
        };
        let begin = start;
        let chars = section.char_count_of(&text[begin..begin + len]);
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

/// A section at least this large becomes the joined text itself even when
/// its buffer must grow: a 60,000-skill catalog is 26 MB, and a fresh
/// buffer would hold it twice at a render's peak memory.
const GROW_IN_PLACE_BYTES: usize = 16 * 1024 * 1024;

/// The section whose own buffer should become the joined text: the largest,
/// when it owns its text (a shared one would be copied out first) and its
/// buffer already has room for everything (a catalog formatted
/// into a generously sized buffer and handed over) or when it is so large
/// that a second copy would show at the peak. Otherwise one fresh buffer is
/// cheaper: growing a buffer that lacks room is a copy, and putting the
/// sections before it in front is a second (an unchanged turn of a
/// 10,000-skill session copies its 4.8 MB catalog once, not three times).
fn section_to_grow(sections: &[Placed], total: usize) -> Option<usize> {
    let (i, largest) = sections
        .iter()
        .enumerate()
        .max_by_key(|(i, p)| (p.section.text.len(), std::cmp::Reverse(*i)))?;
    let text = &largest.section.text;
    let capacity = text.owned_capacity()?;
    (capacity >= total || text.len() >= GROW_IN_PLACE_BYTES).then_some(i)
}

/// Makes section `i`'s buffer the joined text so far: the sections before
/// it, each followed by the separator, then its own text, with room for
/// `total` bytes.
fn grow_around(sections: &mut [Placed], i: usize, total: usize) -> String {
    let mut before = String::new();
    for placed in sections.iter().take(i) {
        before.push_str(&placed.section.text);
        before.push_str(SECTION_SEPARATOR);
    }
    let mut text = sections
        .get_mut(i)
        .map(|placed| placed.section.text.take_string())
        .unwrap_or_default();
    // Exact: an amortized reserve would double a buffer of megabytes.
    text.reserve_exact(total.saturating_sub(text.len()));
    text.insert_str(0, &before);
    text
}

#[cfg(test)]
mod tests {
    use super::{GROW_IN_PLACE_BYTES, Placed, SECTION_SEPARATOR, join, section_to_grow};
    use crate::section::{Placement, SectionClass};
    use crate::stage::Section;

    fn placed(id: &str, text: String) -> Placed {
        Placed {
            class: SectionClass::Session,
            placement: Placement::System,
            section: Section::new(id, text),
        }
    }

    /// Sections whose largest (`é` repeated, in the middle) has a buffer of
    /// `capacity` bytes.
    fn sections(capacity: usize) -> Vec<Placed> {
        let mut large = String::with_capacity(capacity);
        large.push_str(&"é".repeat(300));
        vec![
            placed("a", "first".into()),
            placed("b", large),
            placed("c", "last ü".into()),
        ]
    }

    fn check(sections: Vec<Placed>) {
        let texts: Vec<String> = sections
            .iter()
            .map(|p| p.section.text.to_string())
            .collect();
        let mut reports = Vec::new();
        let joined = join(sections, &mut reports);
        assert_eq!(joined, texts.join(SECTION_SEPARATOR));
        for (report, text) in reports.iter().zip(&texts) {
            assert_eq!(&joined[report.range.clone()], text, "{}", report.id);
            assert_eq!(report.chars, text.chars().count(), "{}", report.id);
        }
    }

    #[test]
    fn the_largest_buffer_is_grown_only_when_it_has_room_or_is_huge() {
        let total = |s: &[Placed]| {
            s.iter()
                .map(|p| p.section.text.len() + SECTION_SEPARATOR.len())
                .sum::<usize>()
        };
        let roomy = sections(4096);
        assert_eq!(section_to_grow(&roomy, total(&roomy)), Some(1));
        check(roomy);
        let tight = sections(0);
        assert_eq!(section_to_grow(&tight, total(&tight)), None);
        check(tight);
        let huge = vec![
            placed("a", "first".into()),
            placed("b", "x".repeat(GROW_IN_PLACE_BYTES)),
        ];
        assert_eq!(section_to_grow(&huge, total(&huge)), Some(1));
        check(huge);
    }

    #[test]
    fn a_known_char_count_is_used_until_the_text_is_shortened() {
        let text = "é".repeat(10);
        let mut known = placed("known", text.clone());
        known.section = known.section.with_char_count(10);
        let mut reports = Vec::new();
        join(vec![known], &mut reports);
        assert_eq!(reports[0].chars, 10);
        // A count made before a cut is not trusted for the shorter text.
        let mut cut = placed("cut", text);
        cut.section = cut.section.with_char_count(10);
        cut.section.text.truncate(6);
        let mut reports = Vec::new();
        join(vec![cut], &mut reports);
        assert_eq!(reports[0].chars, 3);
    }
}
