//! Choosing what a catalog bounded by `skills.prompt.max_bytes` keeps.
//!
//! In this order, and only as far as needed:
//! 1. every description is shortened to one common length (the longest that
//!    fits, found by bisection), down to [`MIN_DESCRIPTION_CHARS`];
//! 2. skills are left out, lowest source precedence first and, within a
//!    source, last id first, keeping descriptions at that minimum;
//! 3. the descriptions of the skills that remain get back the longest common
//!    length that still fits.
//!
//! Whenever anything is cut, a final line (worded by the caller's template)
//! says what and where the rest is; its size counts against the limit.
//! When not even the catalog's frame and that line fit, the catalog is the
//! line alone, even over the limit: the marker wins over the limit.
//!
//! Sizes are computed, not rendered: each entry is measured once, so the
//! search costs a few passes over the entries (not a re-render per try),
//! and the passes that drop skills only look at the skills that can fit.

use bcode_templates::TemplateError;

use super::entry::{Ellipsis, MeasuredDescription};

/// Descriptions are not shortened below this many characters (the marker
/// included) before skills are left out: shorter ones no longer say when a
/// skill applies.
pub const MIN_DESCRIPTION_CHARS: usize = 60;

/// One model-visible skill, measured.
#[derive(Clone, Debug)]
pub(super) struct Candidate<'s> {
    /// Bytes of its entry with an empty description.
    pub(super) fixed_bytes: usize,
    /// Its description (`None` when descriptions are not shown).
    pub(super) description: Option<MeasuredDescription<'s>>,
    /// Its source, as an index into the caller's sources, which are in
    /// precedence order.
    pub(super) source: usize,
}

impl Candidate<'_> {
    /// Bytes of the entry with its description capped at `cap` characters.
    fn bytes_at(&self, cap: Option<usize>, ellipsis: &Ellipsis) -> usize {
        self.fixed_bytes
            + self.description.as_ref().map_or(0, |d| match cap {
                Some(cap) => d.escaped_bytes_at(cap, ellipsis),
                None => d.escaped_bytes,
            })
    }

    /// Whether a cap of `cap` characters shortens the description.
    fn shortened_at(&self, cap: usize) -> bool {
        self.description.as_ref().is_some_and(|d| d.chars > cap)
    }

    fn description_chars(&self) -> usize {
        self.description.as_ref().map_or(0, |d| d.chars)
    }
}

/// What the final line reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Omission {
    /// Skills left out.
    pub(super) omitted: usize,
    /// The sources of the skills left out (indices into the caller's
    /// sources, in precedence order).
    pub(super) sources: Vec<usize>,
    /// The common description length, when a listed description was
    /// shortened to it.
    pub(super) description_chars: Option<usize>,
    /// The line stands alone: not even the catalog's frame fits.
    pub(super) standalone: bool,
}

/// What a bounded catalog keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Plan {
    /// Per candidate, in the caller's order: whether it is listed.
    pub(super) kept: Vec<bool>,
    /// The cap applied to every listed description, when any was shortened.
    pub(super) description_chars: Option<usize>,
    /// What the final line reports and its text.
    pub(super) omission: Omission,
    /// The final line.
    pub(super) line: String,
}

/// The limit and what surrounds the entries.
#[derive(Clone, Copy, Debug)]
pub(super) struct Budget<'a> {
    /// `skills.prompt.max_bytes`.
    pub(super) max_bytes: usize,
    /// Bytes of the preamble and closing tag around the entries.
    pub(super) frame_bytes: usize,
    /// The description marker.
    pub(super) ellipsis: &'a Ellipsis,
}

/// Chooses what fits in `budget`. `ranking` lists the candidates from the
/// one kept longest to the one left out first (highest source precedence,
/// then id); `line` renders the final line of an omission. Call it only
/// when the whole catalog does not fit.
pub(super) fn plan(
    candidates: &[Candidate<'_>],
    ranking: &[usize],
    source_count: usize,
    budget: Budget<'_>,
    line: &dyn Fn(&Omission) -> Result<String, TemplateError>,
) -> Result<Plan, TemplateError> {
    let search = Search {
        candidates,
        ranking,
        budget,
        line,
        last_rank: last_rank_per_source(candidates, ranking, source_count),
    };
    if let Some(plan) = search.shorten_all()? {
        return Ok(plan);
    }
    search.drop_some()
}

struct Search<'a, 's> {
    candidates: &'a [Candidate<'s>],
    ranking: &'a [usize],
    budget: Budget<'a>,
    line: &'a dyn Fn(&Omission) -> Result<String, TemplateError>,
    /// Per source, the last position in `ranking` of one of its skills: a
    /// source has a skill left out when that position is not kept.
    last_rank: Vec<Option<usize>>,
}

impl Search<'_, '_> {
    fn fits(&self, entries: usize, line: &str) -> bool {
        self.budget.frame_bytes + entries + line.len() <= self.budget.max_bytes
    }

    /// The omission when the first `kept` of the ranking are listed.
    fn omission(&self, kept: usize, description_chars: Option<usize>) -> Omission {
        Omission {
            omitted: self.ranking.len() - kept,
            sources: self
                .last_rank
                .iter()
                .enumerate()
                .filter(|(_, last)| last.is_some_and(|last| last >= kept))
                .map(|(source, _)| source)
                .collect(),
            description_chars,
            standalone: false,
        }
    }

    /// Step 1: every skill listed, descriptions at the longest common cap
    /// (at least the minimum) that fits; `None` when even the minimum does
    /// not fit.
    fn shorten_all(&self) -> Result<Option<Plan>, TemplateError> {
        let longest = self
            .candidates
            .iter()
            .map(Candidate::description_chars)
            .max()
            .unwrap_or(0);
        if longest <= MIN_DESCRIPTION_CHARS {
            return Ok(None);
        }
        // A lower bound first, in plain arithmetic: with thousands of skills
        // over a small limit, the entries without descriptions already
        // exceed it and no description needs to be looked at.
        let floor: usize = self
            .candidates
            .iter()
            .map(|c| {
                c.fixed_bytes
                    + c.description.as_ref().map_or(0, |d| {
                        if d.chars <= MIN_DESCRIPTION_CHARS {
                            d.escaped_bytes
                        } else {
                            d.escaped_bytes.min(self.budget.ellipsis.escaped_bytes)
                        }
                    })
            })
            .sum();
        if !self.fits(floor, "") {
            return Ok(None);
        }
        let all: Vec<usize> = (0..self.candidates.len()).collect();
        let Some((cap, line)) = self.longest_cap(&all, MIN_DESCRIPTION_CHARS, longest)? else {
            return Ok(None);
        };
        let omission = self.omission(all.len(), Some(cap));
        Ok(Some(Plan {
            kept: vec![true; self.candidates.len()],
            description_chars: Some(cap),
            omission,
            line,
        }))
    }

    /// The longest cap in `low..longest` at which `kept` (all of the
    /// ranking's first `kept.len()`) fits with its line, with that line;
    /// `None` when not even `low` fits. A cap of `longest` shortens nothing
    /// and is not considered: the caller knows it does not fit or asks
    /// about it separately.
    fn longest_cap(
        &self,
        kept: &[usize],
        low: usize,
        longest: usize,
    ) -> Result<Option<(usize, String)>, TemplateError> {
        let attempt = |cap: usize| -> Result<Option<String>, TemplateError> {
            let entries: usize = kept
                .iter()
                .map(|&i| self.candidates[i].bytes_at(Some(cap), self.budget.ellipsis))
                .sum();
            let any_shortened = kept.iter().any(|&i| self.candidates[i].shortened_at(cap));
            let line = (self.line)(&self.omission(kept.len(), any_shortened.then_some(cap)))?;
            Ok(self.fits(entries, &line).then_some(line))
        };
        let Some(mut best) = attempt(low)? else {
            return Ok(None);
        };
        // Sizes grow with the cap (except by a marker's width where a cut
        // starts), so bisection finds the longest cap that fits, or one
        // close to it; every answer is checked, so the limit always holds.
        let (mut fits, mut too_long) = (low, longest);
        while too_long - fits > 1 {
            let mid = fits + (too_long - fits) / 2;
            match attempt(mid)? {
                Some(line) => {
                    fits = mid;
                    best = line;
                }
                None => too_long = mid,
            }
        }
        Ok(Some((fits, best)))
    }

    /// Steps 2 and 3: the longest prefix of the ranking that fits with
    /// descriptions at the minimum, then the longest cap for it.
    fn drop_some(&self) -> Result<Plan, TemplateError> {
        let n = self.ranking.len();
        let cap = self
            .candidates
            .iter()
            .any(|c| c.shortened_at(MIN_DESCRIPTION_CHARS))
            .then_some(MIN_DESCRIPTION_CHARS);
        // Sizes of the ranking's prefixes at the minimum cap, and how many of
        // them had a description shortened; stops at the first prefix that
        // cannot fit, so a small limit looks at a few entries only. At least
        // one skill is left out (listing all of them did not fit).
        let mut sizes = vec![0usize];
        let mut shortened = vec![0usize];
        for &i in &self.ranking[..n.saturating_sub(1)] {
            let c = &self.candidates[i];
            let size = sizes[sizes.len() - 1] + c.bytes_at(cap, self.budget.ellipsis);
            if !self.fits(size, "") {
                break;
            }
            sizes.push(size);
            let cut = cap.is_some_and(|cap| c.shortened_at(cap));
            shortened.push(shortened[shortened.len() - 1] + usize::from(cut));
        }
        let attempt = |kept: usize| -> Result<Option<String>, TemplateError> {
            let chars = cap.filter(|_| shortened[kept] > 0);
            let line = (self.line)(&self.omission(kept, chars))?;
            Ok(self.fits(sizes[kept], &line).then_some(line))
        };
        let Some(mut line) = attempt(0)? else {
            return self.standalone();
        };
        // The line shrinks as fewer skills are left out and the entries grow,
        // so the largest count that fits is found by bisection; every answer
        // is checked.
        let (mut fits, mut too_many) = (0, sizes.len());
        while too_many - fits > 1 {
            let mid = fits + (too_many - fits) / 2;
            match attempt(mid)? {
                Some(fitting) => {
                    fits = mid;
                    line = fitting;
                }
                None => too_many = mid,
            }
        }
        let kept_ranks = &self.ranking[..fits];
        let mut description_chars = cap.filter(|_| shortened[fits] > 0);
        if description_chars.is_some() {
            // Step 3: what the left-out skills freed goes back to the
            // descriptions of the listed ones.
            let longest = kept_ranks
                .iter()
                .map(|&i| self.candidates[i].description_chars())
                .max()
                .unwrap_or(0);
            let whole = self.omission(fits, None);
            let whole_line = (self.line)(&whole)?;
            let whole_size: usize = kept_ranks
                .iter()
                .map(|&i| self.candidates[i].bytes_at(None, self.budget.ellipsis))
                .sum();
            if self.fits(whole_size, &whole_line) {
                description_chars = None;
                line = whole_line;
            } else if let Some((cap, longer)) =
                self.longest_cap(kept_ranks, MIN_DESCRIPTION_CHARS, longest)?
            {
                description_chars = Some(cap);
                line = longer;
            }
        }
        let mut kept = vec![false; self.candidates.len()];
        for &i in kept_ranks {
            kept[i] = true;
        }
        Ok(Plan {
            kept,
            description_chars,
            omission: self.omission(fits, description_chars),
            line,
        })
    }

    /// Not even the frame and the line fit: the line alone.
    fn standalone(&self) -> Result<Plan, TemplateError> {
        let mut omission = self.omission(0, None);
        omission.standalone = true;
        let line = (self.line)(&omission)?;
        Ok(Plan {
            kept: vec![false; self.candidates.len()],
            description_chars: None,
            omission,
            line,
        })
    }
}

/// Per source, the last position in `ranking` of one of its skills.
fn last_rank_per_source(
    candidates: &[Candidate<'_>],
    ranking: &[usize],
    source_count: usize,
) -> Vec<Option<usize>> {
    let mut last = vec![None; source_count];
    for (rank, &i) in ranking.iter().enumerate() {
        if let Some(slot) = last.get_mut(candidates[i].source) {
            *slot = Some(rank);
        }
    }
    last
}
