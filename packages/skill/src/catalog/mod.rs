//! The model-visible skill catalog: metadata only, every value XML-escaped,
//! model-hidden skills omitted, optionally bounded. The per-skill entries are
//! a data format and are written in `entry`; every sentence around them comes
//! from `templates/skills/catalog.j2` and, when the catalog was cut to
//! `skills.prompt.max_bytes`, the final line from
//! `templates/skills/catalog_truncated.j2`. What a bounded catalog keeps is
//! chosen in `budget`.
//!
//! This room owns only the listing of every turn: it reads summaries, never
//! a body, and does not decide which skills exist (that is
//! [`crate::discover`]) or what an invoked skill's body becomes (that is
//! [`crate::context`]).

mod budget;
mod entry;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use bcode_prompt_config::{CatalogMode, SkillsConfig, SkillsPromptConfig};
use bcode_skill_models::{SkillSource, SkillSummary};
use bcode_text::{Limit, Truncation, clean_body, clean_line, model_path};
use minijinja::context;
use serde::Serialize;

use bcode_templates::{TemplateError, Templates};

pub use budget::MIN_DESCRIPTION_CHARS;
use budget::{Budget, Candidate, Omission};
use entry::{Ellipsis, EntryShape, MeasuredDescription, shorten, write_entry};

/// A formatted catalog with its accounting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Catalog {
    /// The text exactly as injected; empty when the catalog is off or no
    /// skill is model-visible.
    pub text: String,
    /// The characters of `text`, counted on first ask (see [`Catalog::chars`]).
    chars: CharCount,
    /// Model-visible skills listed (their descriptions possibly shortened).
    pub listed: usize,
    /// Model-visible skills left out by `max_bytes`.
    pub omitted: usize,
    /// Listed descriptions shortened by `max_description_chars`.
    pub descriptions_cut: usize,
    /// Listed descriptions shortened further to fit `max_bytes`, all to
    /// [`Catalog::description_chars`].
    pub descriptions_shortened: usize,
    /// The common length, in characters with the marker, that `max_bytes`
    /// shortened descriptions to; `None` when it shortened none.
    pub description_chars: Option<usize>,
    /// What the `max_bytes` cut removed, or `None` when every model-visible
    /// skill fit. The original is the unbounded catalog; the omitted sizes
    /// are how much less of it the text holds (the final line not counted),
    /// and `cut_at_byte` is what is left of it (the cut is not one prefix:
    /// descriptions are shortened and whole entries left out).
    pub truncation: Option<Truncation>,
    /// Set when the catalog alone is estimated to take more than
    /// `skills.prompt.warn_percent` of `skills.prompt.context_window_tokens`.
    pub size_warning: Option<CatalogSizeWarning>,
    /// The labels of the sources its model-visible skills come from
    /// (`repo:.bcode/skills`, `user-config:skills`), strongest first, each
    /// once: what `render --explain` lists as the section's sources.
    pub sources: Vec<String>,
}

impl Catalog {
    /// The characters of `text`, counted once: a session shows the same
    /// megabytes on every turn without counting them again, and a single
    /// turn, which counts them once while assembling, never asks.
    pub fn chars(&self) -> usize {
        *self.chars.0.get_or_init(|| self.text.chars().count())
    }

    /// The note saying how `max_bytes` shortened descriptions, when it
    /// did: `render --explain` shows it among the section's notes and
    /// `skills catalog` on stderr.
    pub fn shortened_note(&self) -> Option<String> {
        self.description_chars.map(|chars| {
            format!(
                "{} descriptions shortened to {chars} characters to fit skills.prompt.max_bytes",
                self.descriptions_shortened
            )
        })
    }

    /// What the operator should be told about this catalog: too large for
    /// the context window, or a `max_bytes` that leaves room for no skill.
    pub fn warnings(&self) -> Vec<CatalogWarning> {
        let mut warnings = Vec::new();
        if let Some(size) = &self.size_warning {
            warnings.push(CatalogWarning::TooLarge(size.clone()));
        }
        if let Some(t) = &self.truncation
            && self.listed == 0
            && self.omitted > 0
        {
            warnings.push(CatalogWarning::NoRoom {
                max_bytes: t.limit.max(),
                omitted: self.omitted,
            });
        }
        warnings
    }

    fn empty() -> Catalog {
        Catalog {
            text: String::new(),
            chars: CharCount::default(),
            listed: 0,
            omitted: 0,
            descriptions_cut: 0,
            descriptions_shortened: 0,
            description_chars: None,
            truncation: None,
            size_warning: None,
            sources: Vec::new(),
        }
    }
}

/// A count of a catalog's characters, made when first asked for; equal
/// whether or not it has been made (it is derived from the text, which the
/// catalog's own equality compares).
#[derive(Clone, Debug, Default)]
struct CharCount(OnceLock<usize>);

impl PartialEq for CharCount {
    fn eq(&self, _other: &CharCount) -> bool {
        true
    }
}

impl Eq for CharCount {}

/// A warning about a formatted catalog, for the operator (stderr, the
/// turn, `--explain`); its `Display` is the sentence to print.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CatalogWarning {
    /// The catalog alone is estimated to take more than its share of the
    /// context window.
    TooLarge(CatalogSizeWarning),
    /// `skills.prompt.max_bytes` leaves room for no skill: the model sees
    /// only the final line saying where the skills are.
    NoRoom {
        /// `skills.prompt.max_bytes`.
        max_bytes: usize,
        /// The skills left out (all of them).
        omitted: usize,
    },
}

impl fmt::Display for CatalogWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CatalogWarning::TooLarge(size) => size.fmt(f),
            CatalogWarning::NoRoom { max_bytes, omitted } => write!(
                f,
                "skills.prompt.max_bytes = {max_bytes} leaves room for none of the {omitted} skills: \
                 the catalog is only its final line saying where they are"
            ),
        }
    }
}

/// A catalog too large for the model's context window, by the estimate of
/// [`CatalogSizeWarning::check`]. Its `Display` is the operator's warning,
/// naming the keys that bound the catalog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CatalogSizeWarning {
    /// Bytes of the catalog text.
    pub bytes: usize,
    /// Estimated tokens: `bytes / 4`, rounded up (an estimate, not a
    /// tokenizer's count).
    pub estimated_tokens: usize,
    /// The tokens above which the warning is given:
    /// `context_window_tokens * warn_percent / 100`.
    pub threshold_tokens: usize,
    /// `skills.prompt.context_window_tokens`.
    pub context_window_tokens: usize,
    /// `skills.prompt.warn_percent`.
    pub warn_percent: u32,
}

/// Bytes per token in the size estimate (English prose and XML average
/// about four).
pub const BYTES_PER_TOKEN: usize = 4;

impl CatalogSizeWarning {
    /// The warning for a catalog of `bytes` under `prompt`, or `None` when
    /// it is within the share (or the warning is off, `warn_percent = 0`).
    pub fn check(bytes: usize, prompt: &SkillsPromptConfig) -> Option<CatalogSizeWarning> {
        if prompt.warn_percent == 0 {
            return None;
        }
        let threshold = u128::try_from(prompt.context_window_tokens)
            .unwrap_or(u128::MAX)
            .saturating_mul(u128::from(prompt.warn_percent))
            / 100;
        let threshold_tokens = usize::try_from(threshold).unwrap_or(usize::MAX);
        let estimated_tokens = bytes.div_ceil(BYTES_PER_TOKEN);
        (estimated_tokens > threshold_tokens).then_some(CatalogSizeWarning {
            bytes,
            estimated_tokens,
            threshold_tokens,
            context_window_tokens: prompt.context_window_tokens,
            warn_percent: prompt.warn_percent,
        })
    }
}

impl fmt::Display for CatalogSizeWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the skill catalog alone is about {} tokens ({} bytes at an estimated {BYTES_PER_TOKEN} bytes a token), \
             more than {}% of a {}-token context window (skills.prompt.warn_percent, skills.prompt.context_window_tokens); \
             bound it with skills.prompt.max_bytes (for example {}) or skills.prompt.max_description_chars, \
             or route instead: skills.routing.enabled = true lists the skills that fit each task \
             (set skills.prompt.catalog = \"names_only\" or \"off\")",
            self.estimated_tokens,
            self.bytes,
            self.warn_percent,
            self.context_window_tokens,
            self.threshold_tokens.saturating_mul(BYTES_PER_TOKEN),
        )
    }
}

/// Options beyond `[skills.prompt]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CatalogOptions<'a> {
    /// The `[skills.prompt]` table: whether the catalog is shown, its byte
    /// budget and the description length cap.
    pub prompt: &'a SkillsPromptConfig,
    /// Whether user skill roots are searched (`skills.include_user_skills`);
    /// the preamble only mentions them when they are.
    pub user_skills_enabled: bool,
}

impl<'a> CatalogOptions<'a> {
    /// The options the `[skills]` table sets: the one place its catalog
    /// keys are read for formatting and for the section's reported limit.
    pub fn from_config(config: &'a SkillsConfig) -> CatalogOptions<'a> {
        CatalogOptions {
            prompt: &config.prompt,
            user_skills_enabled: config.include_user_skills,
        }
    }

    /// The byte budget of the whole catalog (`skills.prompt.max_bytes`),
    /// `None` when unbounded: what the catalog is cut to and what the
    /// `skill_catalog` stage reports as its limit.
    pub fn max_bytes(&self) -> Option<usize> {
        self.prompt.max_bytes
    }
}

/// Formats the catalog of `skills` (in the order given; the registry yields
/// them by id). With `max_bytes`, see `budget` for what is kept: the text
/// stays within the limit, except that the final line, which says what was
/// left out, is never dropped.
pub fn format_catalog<'s>(
    skills: impl Iterator<Item = &'s SkillSummary>,
    options: CatalogOptions<'_>,
    templates: &Templates,
) -> Result<Catalog, TemplateError> {
    let Some(prepared) = Prepared::of(skills, options, templates)? else {
        return Ok(Catalog::empty());
    };
    let format = prepared.format();
    let prompt = options.prompt;
    let mut catalog = match options.max_bytes() {
        None => format.whole(&prepared.visible, prepared.estimate),
        Some(max) => format.bounded(&prepared.visible, prepared.estimate, max, templates)?,
    };
    catalog.size_warning = CatalogSizeWarning::check(catalog.text.len(), prompt);
    catalog.sources = source_labels(&prepared.visible);
    Ok(catalog)
}

/// Why [`write_catalog`] stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteCatalogError {
    /// A catalog template failed.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// Writing the text failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The text [`write_catalog`] formats before handing it on: a few dozen
/// entries.
pub const WRITE_PIECE_BYTES: usize = 64 * 1024;

/// [`format_catalog`], writing the text to `out`. Without `max_bytes` the
/// text is written as it is formatted, in pieces of about
/// `WRITE_PIECE_BYTES`, and never held whole (60,000 skills make 26 MB of
/// it): the returned catalog's `text` is then empty and its accounting is
/// the same. A bounded catalog is small and is formatted first.
pub fn write_catalog<'s>(
    skills: impl Iterator<Item = &'s SkillSummary>,
    options: CatalogOptions<'_>,
    templates: &Templates,
    out: &mut dyn std::io::Write,
) -> Result<Catalog, WriteCatalogError> {
    let prompt = options.prompt;
    if options.max_bytes().is_some() {
        let catalog = format_catalog(skills, options, templates)?;
        out.write_all(catalog.text.as_bytes())?;
        return Ok(catalog);
    }
    let Some(prepared) = Prepared::of(skills, options, templates)? else {
        return Ok(Catalog::empty());
    };
    let (mut catalog, bytes) = prepared.format().whole_into(&prepared.visible, out)?;
    catalog.size_warning = CatalogSizeWarning::check(bytes, prompt);
    catalog.sources = source_labels(&prepared.visible);
    Ok(catalog)
}

/// The entries of `skills`, in the order given, in the catalog's entry
/// format: always with descriptions (routed skills are listed for the
/// model to choose from, whatever `skills.prompt.catalog` shows), with the
/// catalog's sources, keywords and description cap. For the request-only
/// `relevant_skills` section, whose template frames them.
pub fn format_entries(
    skills: &[&SkillSummary],
    options: CatalogOptions<'_>,
    templates: &Templates,
) -> Result<String, TemplateError> {
    let prompt = options.prompt;
    let ellipsis = Ellipsis::new(templates.render("skills/description_truncated.j2", context! {})?);
    let format = Format {
        head: "",
        tail: "",
        shape: EntryShape {
            summary: true,
            sources: prompt.include_sources,
            keywords: prompt.include_keywords,
        },
        ellipsis: &ellipsis,
        explicit_cap: prompt.max_description_chars,
    };
    let mut text = String::new();
    for skill in skills {
        let (description, _) = format.description(skill);
        write_entry(&mut text, skill, &description, format.shape);
    }
    Ok(text)
}

/// What formatting a catalog starts from: the visible skills, a size
/// estimate, the rendered frame and the description marker.
struct Prepared<'s> {
    visible: Vec<&'s SkillSummary>,
    estimate: usize,
    frame_text: String,
    ellipsis: Ellipsis,
    shape: EntryShape,
    explicit_cap: Option<usize>,
}

impl<'s> Prepared<'s> {
    /// `None` when the catalog is off or no skill is model-visible.
    fn of(
        skills: impl Iterator<Item = &'s SkillSummary>,
        options: CatalogOptions<'_>,
        templates: &Templates,
    ) -> Result<Option<Prepared<'s>>, TemplateError> {
        let prompt = options.prompt;
        if prompt.catalog == CatalogMode::Off {
            return Ok(None);
        }
        let shape = EntryShape {
            summary: prompt.catalog == CatalogMode::Summary,
            sources: prompt.include_sources,
            keywords: prompt.include_keywords,
        };
        let ellipsis =
            Ellipsis::new(templates.render("skills/description_truncated.j2", context! {})?);
        // One pass over the summaries picks the visible ones and sizes the
        // buffer (each pass over 10,000 summaries is 10,000 cache misses when
        // they are not in cache).
        let mut estimate = 0;
        let visible: Vec<&SkillSummary> = skills
            .filter(|s| s.model_visible())
            .inspect(|s| {
                let m = &s.manifest;
                estimate += 160
                    + m.id.as_str().len()
                    + m.name.len()
                    + m.description.len()
                    + s.location.as_os_str().len()
                    + s.source.label.len();
            })
            .collect();
        if visible.is_empty() {
            return Ok(None);
        }
        // The preamble and closing come from the template, rendered once
        // around a placeholder; the entries are written between them in one
        // pre-sized buffer, values escaped straight into it. A 10,000-skill
        // catalog is megabytes, and every extra copy of it showed in profiles.
        let frame_text = templates.render(
            "skills/catalog.j2",
            context! { entries => ENTRIES_SLOT, user_skills_enabled => options.user_skills_enabled },
        )?;
        Ok(Some(Prepared {
            visible,
            estimate,
            frame_text,
            ellipsis,
            shape,
            explicit_cap: prompt.max_description_chars.filter(|_| shape.summary),
        }))
    }

    fn format(&self) -> Format<'_> {
        let (head, tail) = self
            .frame_text
            .split_once(ENTRIES_SLOT)
            .unwrap_or((self.frame_text.as_str(), ""));
        Format {
            head,
            tail,
            shape: self.shape,
            ellipsis: &self.ellipsis,
            explicit_cap: self.explicit_cap,
        }
    }
}

/// The labels of the sources of `visible`, strongest first, each once.
fn source_labels(visible: &[&SkillSummary]) -> Vec<String> {
    Sources::of(visible)
        .list
        .iter()
        .map(|source| source.label.clone())
        .collect()
}

/// The skill's `when_to_use`, which the catalog shows after its
/// description (the model reads both to decide), when it has one.
fn when_to_use(skill: &SkillSummary) -> Option<&str> {
    skill
        .manifest
        .details()
        .when_to_use()
        .filter(|text| !text.is_empty())
}

/// What every entry of one catalog shares.
struct Format<'a> {
    head: &'a str,
    tail: &'a str,
    shape: EntryShape,
    ellipsis: &'a Ellipsis,
    /// `max_description_chars`, in summary mode.
    explicit_cap: Option<usize>,
}

impl Format<'_> {
    /// A description cleaned for the model, then cut to
    /// `max_description_chars`, and whether it was cut. Cleaned first, so
    /// the cap counts what the model sees and the budget measures what is
    /// written.
    fn description<'s>(&self, skill: &'s SkillSummary) -> (Cow<'s, str>, bool) {
        let description = match when_to_use(skill) {
            None => clean_body(&skill.manifest.description),
            Some(more) => Cow::Owned(
                clean_body(&format!("{} {more}", skill.manifest.description)).into_owned(),
            ),
        };
        let Some(max) = self.explicit_cap else {
            return (description, false);
        };
        match description {
            Cow::Borrowed(description) => {
                let cut = shorten(description, max, &self.ellipsis.text);
                let was_cut = matches!(cut, Cow::Owned(_));
                (cut, was_cut)
            }
            Cow::Owned(description) => match shorten(&description, max, &self.ellipsis.text) {
                Cow::Owned(cut) => (Cow::Owned(cut), true),
                Cow::Borrowed(_) => (Cow::Owned(description), false),
            },
        }
    }

    /// Every visible skill, whole (no `max_bytes`, or everything fits it).
    fn whole(&self, visible: &[&SkillSummary], estimate: usize) -> Catalog {
        let mut text = String::with_capacity(self.head.len() + estimate + self.tail.len());
        // Never handed on: the text grows to the whole catalog.
        let result = self.entries(visible, &mut text, usize::MAX, &mut |_| Ok(()));
        let mut catalog = result.unwrap_or_else(|_| Catalog::empty());
        catalog.text = text;
        catalog
    }

    /// [`Format::whole`] written to `out` in pieces as it is formatted;
    /// the catalog (without its text) and the bytes written.
    fn whole_into(
        &self,
        visible: &[&SkillSummary],
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<(Catalog, usize)> {
        let mut piece = String::with_capacity(WRITE_PIECE_BYTES + 4096);
        let mut written = 0;
        let catalog = self.entries(visible, &mut piece, WRITE_PIECE_BYTES, &mut |piece| {
            out.write_all(piece.as_bytes())?;
            written += piece.len();
            piece.clear();
            Ok(())
        })?;
        Ok((catalog, written))
    }

    /// Writes the head, every visible skill's entry and the tail into
    /// `text`, handing it to `hand_on` whenever it holds `piece_bytes` or
    /// more, and at the end.
    fn entries(
        &self,
        visible: &[&SkillSummary],
        text: &mut String,
        piece_bytes: usize,
        hand_on: &mut dyn FnMut(&mut String) -> std::io::Result<()>,
    ) -> std::io::Result<Catalog> {
        let mut catalog = Catalog::empty();
        text.push_str(self.head);
        for chunk in visible.chunks(PREFETCH_CHUNK) {
            prefetch_value_cache_lines(chunk);
            for skill in chunk {
                let (description, cut) = self.description(skill);
                catalog.descriptions_cut += usize::from(cut);
                write_entry(text, skill, &description, self.shape);
                if text.len() >= piece_bytes {
                    hand_on(text)?;
                }
            }
        }
        text.push_str(self.tail);
        hand_on(text)?;
        catalog.listed = visible.len();
        Ok(catalog)
    }

    /// The catalog within `max` bytes (see `budget`).
    fn bounded(
        &self,
        visible: &[&SkillSummary],
        estimate: usize,
        max: usize,
        templates: &Templates,
    ) -> Result<Catalog, TemplateError> {
        let sources = Sources::of(visible);
        // Each entry is measured once: written with an empty description
        // into one scratch buffer, its description measured on its own.
        let mut scratch = String::new();
        let mut explicit_cuts = Vec::with_capacity(visible.len());
        let frame_bytes = self.head.len() + self.tail.len();
        let mut full_bytes = frame_bytes;
        let mut full_chars = self.head.chars().count() + self.tail.chars().count();
        let candidates: Vec<Candidate<'_>> = visible
            .iter()
            .map(|skill| {
                scratch.clear();
                write_entry(&mut scratch, skill, "", self.shape);
                let description = self.shape.summary.then(|| {
                    let (text, cut) = self.description(skill);
                    explicit_cuts.push(cut);
                    MeasuredDescription::new(text)
                });
                let fixed_chars = scratch.chars().count();
                full_bytes += scratch.len() + description.as_ref().map_or(0, |d| d.escaped_bytes);
                full_chars += fixed_chars + description.as_ref().map_or(0, |d| d.escaped_chars);
                Candidate {
                    fixed_bytes: scratch.len(),
                    description,
                    source: sources.index_of(&skill.source),
                }
            })
            .collect();
        if full_bytes <= max {
            return Ok(self.whole(visible, estimate));
        }
        // Kept longest first: highest source precedence, then id.
        let mut ranking: Vec<usize> = (0..visible.len()).collect();
        ranking.sort_by(|&a, &b| {
            (candidates[a].source, visible[a].manifest.id.as_str())
                .cmp(&(candidates[b].source, visible[b].manifest.id.as_str()))
        });
        let line = |omission: &Omission| {
            let mut roots: Vec<String> = Vec::new();
            let mut providers: Vec<String> = Vec::new();
            for &source in &omission.sources {
                let source = sources.list[source];
                match &source.root {
                    Some(root) => {
                        let root = clean_line(&model_path(root)).into_owned();
                        if !roots.contains(&root) {
                            roots.push(root);
                        }
                    }
                    None => providers.push(clean_line(&source.label).into_owned()),
                }
            }
            templates.render(
                "skills/catalog_truncated.j2",
                context! {
                    omitted_skills => omission.omitted,
                    limit => max,
                    roots,
                    providers,
                    description_chars => omission.description_chars,
                    standalone => omission.standalone,
                },
            )
        };
        let plan = budget::plan(
            &candidates,
            &ranking,
            sources.list.len(),
            Budget {
                max_bytes: max,
                frame_bytes,
                ellipsis: self.ellipsis,
            },
            &line,
        )?;

        let mut catalog = Catalog::empty();
        let mut text;
        if plan.omission.standalone {
            text = plan.line.clone();
        } else {
            text = String::with_capacity(max.min(full_bytes) + plan.line.len());
            text.push_str(self.head);
            for (i, skill) in visible.iter().enumerate() {
                if !plan.kept[i] {
                    continue;
                }
                catalog.listed += 1;
                catalog.descriptions_cut += usize::from(explicit_cuts.get(i) == Some(&true));
                let Some(description) = &candidates[i].description else {
                    write_entry(&mut text, skill, "", self.shape);
                    continue;
                };
                match plan.description_chars {
                    Some(cap) if description.chars > cap => {
                        catalog.descriptions_shortened += 1;
                        let short = shorten(&description.text, cap, &self.ellipsis.text);
                        write_entry(&mut text, skill, &short, self.shape);
                    }
                    _ => write_entry(&mut text, skill, &description.text, self.shape),
                }
            }
            text.push_str(&plan.line);
            text.push_str(self.tail);
        }
        catalog.omitted = visible.len() - catalog.listed;
        catalog.description_chars = plan
            .description_chars
            .filter(|_| catalog.descriptions_shortened > 0);
        let kept_bytes = text.len() - plan.line.len();
        let kept_chars = text.chars().count() - plan.line.chars().count();
        let omitted_bytes = full_bytes.saturating_sub(kept_bytes);
        catalog.truncation = Some(Truncation {
            limit: Limit::Bytes(max),
            cut_at_byte: full_bytes - omitted_bytes,
            original_bytes: full_bytes,
            original_chars: full_chars,
            omitted_bytes,
            omitted_chars: full_chars.saturating_sub(kept_chars),
        });
        catalog.text = text;
        Ok(catalog)
    }
}

/// The distinct sources of the visible skills, in precedence order.
struct Sources<'s> {
    list: Vec<&'s SkillSource>,
    index: BTreeMap<((bool, usize, usize), &'s str), usize>,
}

impl<'s> Sources<'s> {
    fn of(visible: &[&'s SkillSummary]) -> Sources<'s> {
        let mut index = BTreeMap::new();
        // Skills of one root share one `SkillSource`, and they come by id,
        // so runs of one source are skipped without a lookup.
        let mut last: Option<&Arc<SkillSource>> = None;
        for skill in visible {
            if last.is_some_and(|last| Arc::ptr_eq(last, &skill.source)) {
                continue;
            }
            last = Some(&skill.source);
            let source: &'s SkillSource = &skill.source;
            index
                .entry((source.precedence(), source.label.as_str()))
                .or_insert(source);
        }
        // A BTreeMap iterates in key order: precedence, then label.
        let list: Vec<&SkillSource> = index.values().copied().collect();
        let index = index
            .keys()
            .enumerate()
            .map(|(position, key)| (*key, position))
            .collect();
        Sources { list, index }
    }

    fn index_of(&self, source: &SkillSource) -> usize {
        self.index
            .get(&(source.precedence(), source.label.as_str()))
            .copied()
            .unwrap_or(0)
    }
}

/// Entries whose values are prefetched together (see
/// [`prefetch_value_cache_lines`]): enough independent loads to keep the
/// memory system busy, few enough that the lines are still in L1/L2 when
/// the entries are written (16-64 measured alike).
const PREFETCH_CHUNK: usize = 32;

/// Touches one byte of every cache line of the values a chunk of entries is
/// about to copy, before any of them is written. The summaries' strings are
/// scattered over the heap, so each value's first line is a cache miss;
/// taken one value at a time (scan, then copy) those misses ran one after
/// the other and were half of formatting. Here the loads are independent, so
/// the CPU has many in flight at once. `black_box` only keeps the loads from
/// being optimised away.
// Kept for criterion `catalog/format/10000`: 4.7 -> 2.2 ms
// (benches/notes/2026-11-30-pi-five-rounds.md).
fn prefetch_value_cache_lines(chunk: &[&SkillSummary]) {
    let mut acc = 0u8;
    for s in chunk {
        for value in [
            s.manifest.id.as_str().as_bytes(),
            s.manifest.name.as_bytes(),
            s.manifest.description.as_bytes(),
            s.location.as_os_str().as_encoded_bytes(),
            s.source.label.as_bytes(),
        ] {
            acc ^= value.iter().step_by(64).fold(0, |a, &b| a ^ b);
        }
    }
    std::hint::black_box(acc);
}

/// A placeholder that cannot occur in rendered text (NUL), marking where the
/// entries go in the rendered catalog template.
const ENTRIES_SLOT: &str = "\u{0}entries\u{0}";
