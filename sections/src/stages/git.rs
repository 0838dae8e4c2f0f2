//! The git stages: `worktree_context`, `git_revision` and
//! `dynamic_repository_context` (git status, bounded by
//! `system_prompt.git_status_max_chars`), rendered from the facts
//! [`crate::git::read`] gathered; they never open a repository.

use bcode_prompt_config::BcodeConfig;
use bcode_prompt_pipeline::line_ends;
use bcode_prompt_pipeline::{Section, SectionKind, Stage, StageContext, StageError, StageSpec};
use bcode_text::{Limit, clean_line};
use minijinja::value::Serde;
use minijinja::{Value, context};

use crate::gathered::{Gathered, need};
use crate::git::*;
use crate::stages::environment::small_section;

/// The git stage ids in canonical order; the first enabled one carries the
/// single "no git information" line so it is not repeated three times.
const GIT_STAGES: [SectionKind; 3] = [
    SectionKind::WorktreeContext,
    SectionKind::GitRevision,
    SectionKind::DynamicRepositoryContext,
];

fn first_enabled_git_stage(config: &BcodeConfig) -> Option<SectionKind> {
    GIT_STAGES
        .into_iter()
        .find(|kind| kind.spec().enabled_by(config))
}

/// Renders the sections for a missing or unusable repository, or hands the
/// repository facts on.
fn with_repo<'a>(
    cx: &StageContext<'a, Gathered>,
    kind: SectionKind,
) -> Result<Result<&'a RepoFacts, Vec<Section>>, StageError> {
    let facts = need(&cx.inputs.git, "git")?;
    let mut path = None;
    let mut deadline = None;
    let (reason, note) = match facts {
        GitFacts::Repository(repo) => return Ok(Ok(repo)),
        GitFacts::NoRepository => ("no_repository", None),
        GitFacts::Unavailable(GitUnavailable::OwnedByAnotherUser) => (
            "owner",
            Some("git refused the repository: it is owned by another user".to_owned()),
        ),
        GitFacts::Unavailable(GitUnavailable::NotAFile { path: file }) => {
            // The repository's file name, shown on one line.
            path = Some(clean_line(file));
            (
                "not_a_file",
                Some(format!(
                    "{file} is not a regular file; the repository was not opened"
                )),
            )
        }
        GitFacts::Unavailable(GitUnavailable::TimedOut { deadline_ms }) => {
            deadline = Some(*deadline_ms);
            (
                "timed_out",
                Some(format!(
                    "opening the repository did not finish within {deadline_ms} ms"
                )),
            )
        }
        GitFacts::Unavailable(GitUnavailable::StillRunning) => (
            "still_running",
            Some(
                "an earlier read of the repository overran its deadline and has not finished; \
                 not started again"
                    .to_owned(),
            ),
        ),
        GitFacts::Unavailable(GitUnavailable::ForeignWorkTree { root, work_tree }) => (
            "foreign_work_tree",
            Some(format!(
                "the git folder found at {root} belongs to the work tree {work_tree}; \
                 that repository is not described"
            )),
        ),
        GitFacts::Unavailable(GitUnavailable::Unreadable { detail }) => {
            ("unreadable", Some(format!("git error: {detail}")))
        }
    };
    if first_enabled_git_stage(cx.config) != Some(kind) {
        return Ok(Err(Vec::new()));
    }
    let mut section = small_section(
        cx,
        kind,
        NO_GIT_TEMPLATE,
        context! { reason, path, deadline_ms => deadline },
    )?;
    if let Some(note) = note {
        section = section.with_note(&note);
    }
    Ok(Err(vec![section]))
}

/// `worktree_context`: main or linked worktree, and its root.
#[derive(Clone, Copy, Debug, Default)]
pub struct WorktreeStage;

impl Stage<Gathered> for WorktreeStage {
    fn spec(&self) -> StageSpec {
        SectionKind::WorktreeContext.spec()
    }
    fn limit(&self, _config: &BcodeConfig) -> Option<Limit> {
        Some(crate::stages::environment::SMALL_SECTION_LIMIT)
    }
    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let repo = match with_repo(cx, SectionKind::WorktreeContext)? {
            Ok(repo) => repo,
            Err(sections) => return Ok(sections),
        };
        // Folder and worktree names are the repository's: cleaned for
        // the model like every one-line fact.
        let line = |text: &str| clean_line(text).into_owned();
        let ctx = match &repo.worktree {
            WorktreeFacts::Main { root } => context! { kind => "main", root => line(root) },
            WorktreeFacts::Linked {
                root,
                name,
                main_root,
            } => context! {
                kind => "linked",
                root => line(root),
                name => name.as_deref().map(line),
                main_root => main_root.as_deref().map(line),
            },
            WorktreeFacts::Bare => context! { kind => "bare" },
        };
        Ok(vec![small_section(
            cx,
            SectionKind::WorktreeContext,
            WORKTREE_TEMPLATE,
            ctx,
        )?])
    }
}

/// `git_revision`: branch or detached head, commit, dirty flag.
#[derive(Clone, Copy, Debug, Default)]
pub struct GitRevisionStage;

impl Stage<Gathered> for GitRevisionStage {
    fn spec(&self) -> StageSpec {
        SectionKind::GitRevision.spec()
    }
    fn limit(&self, _config: &BcodeConfig) -> Option<Limit> {
        Some(crate::stages::environment::SMALL_SECTION_LIMIT)
    }
    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let repo = match with_repo(cx, SectionKind::GitRevision)? {
            Ok(repo) => repo,
            Err(sections) => return Ok(sections),
        };
        let dirty = match &repo.status {
            StatusOutcome::Done(status) => Some(status.total.total() > 0),
            _ => None,
        };
        let bare = repo.worktree == WorktreeFacts::Bare;
        let mut note = None;
        // A branch name may hold what git allows and the model must not
        // see raw: a line separator (U+2028) would add lines to this
        // one-line fact, a bidi override reorder it.
        let ctx = match &repo.head {
            HeadFacts::Branch { name, commit } => {
                let branch = clean_line(name);
                context! { head => "branch", branch, commit => Value::from(Serde(commit)), dirty, bare }
            }
            HeadFacts::Detached { commit } => {
                context! { head => "detached", commit => Value::from(Serde(commit)), dirty, bare }
            }
            HeadFacts::Unborn { name } => {
                let branch = clean_line(name);
                context! { head => "unborn", branch, dirty, bare }
            }
            HeadFacts::Unknown { detail } => {
                note = Some(format!("cannot read HEAD: {detail}"));
                context! { head => "unknown", dirty, bare }
            }
        };
        let mut section = small_section(cx, SectionKind::GitRevision, REVISION_TEMPLATE, ctx)?;
        if let Some(note) = note {
            section = section.with_note(&note);
        }
        Ok(vec![section])
    }
}

/// `dynamic_repository_context`: the short git status, bounded by
/// `system_prompt.git_status_max_chars` (cut at line ends, with a summary of
/// what was left out).
#[derive(Clone, Copy, Debug, Default)]
pub struct GitStatusStage;

impl Stage<Gathered> for GitStatusStage {
    fn spec(&self) -> StageSpec {
        SectionKind::DynamicRepositoryContext.spec()
    }
    /// The limit applies to the whole section: the listing, its marker and
    /// the left-out summary.
    fn limit(&self, config: &BcodeConfig) -> Option<Limit> {
        Some(Limit::Chars(config.system_prompt.git_status_max_chars))
    }
    fn render(&self, cx: &StageContext<'_, Gathered>) -> Result<Vec<Section>, StageError> {
        let repo = match with_repo(cx, SectionKind::DynamicRepositoryContext)? {
            Ok(repo) => repo,
            Err(sections) => return Ok(sections),
        };
        let section = |ctx: Value| -> Result<Section, StageError> {
            let (text, usage) = cx.render(STATUS_TEMPLATE, ctx)?;
            Ok(
                Section::new(SectionKind::DynamicRepositoryContext.name(), text)
                    .with_template(usage)
                    .with_source(STATUS_FULL_TEXT_AT),
            )
        };
        let status = match &repo.status {
            StatusOutcome::Done(status) => status,
            StatusOutcome::NotGathered => {
                return Err(StageError::Degraded {
                    message: "git status was not gathered".to_owned(),
                });
            }
            StatusOutcome::TimedOut { deadline_ms } => {
                let s = section(context! { state => "timed_out", deadline_ms })?;
                return Ok(vec![s.with_note(&format!(
                    "git status did not finish within {deadline_ms} ms; not shown"
                ))]);
            }
            StatusOutcome::Failed { detail } => {
                let s = section(context! { state => "failed" })?;
                return Ok(vec![s.with_note(&format!("git status failed: {detail}"))]);
            }
            StatusOutcome::StillRunning => {
                let s = section(context! { state => "still_running" })?;
                return Ok(vec![s.with_note(
                    "an earlier git status scan overran its deadline and has not finished; \
                     not started again",
                )]);
            }
        };
        if repo.worktree == WorktreeFacts::Bare {
            return Ok(vec![section(context! { state => "bare" })?]);
        }
        if status.entries.is_empty() && !status.capped {
            return Ok(vec![section(context! { state => "clean" })?]);
        }

        let mut listing = String::new();
        let mut ends = Vec::with_capacity(status.entries.len());
        for entry in &status.entries {
            if !listing.is_empty() {
                listing.push('\n');
            }
            listing.push_str(&entry.code);
            listing.push(' ');
            // One entry, one line: a path's line separators and hidden
            // characters are cleaned like every one-line fact.
            listing.push_str(&clean_line(&entry.path));
            ends.push(listing.len());
        }
        // The limit covers the whole section: heading, listing, marker and
        // the left-out summary. Measure the frame the template puts around
        // the listing: with nothing left out first, and only when a cut is
        // needed with the longest summary possible (every entry left out).
        let frame = |left_out: &StateCounts| -> Result<usize, StageError> {
            let (text, _) = cx.render(
                STATUS_TEMPLATE,
                context! {
                    state => "listed",
                    listing => "",
                    left_out => Value::from(Serde(*left_out)),
                    left_out_total => left_out.total(),
                    capped => status.capped,
                    listed => status.entries.len(),
                },
            )?;
            Ok(text.chars().count())
        };
        let room = |overhead: usize| {
            self.limit(cx.config)
                .map(|l| Limit::Chars(l.max().saturating_sub(overhead)))
        };
        let cuts = line_ends(&listing);
        let mut bounded = cx.bound_at(
            &listing,
            room(frame(&StateCounts::default())?),
            &cuts,
            Some(STATUS_FULL_TEXT_AT),
        )?;
        if bounded.truncation.is_some() || status.capped {
            bounded = cx.bound_at(
                &listing,
                room(frame(&status.total)?),
                &cuts,
                Some(STATUS_FULL_TEXT_AT),
            )?;
        }
        let kept_bytes = bounded
            .truncation
            .as_ref()
            .map_or(listing.len(), |t| t.truncation.cut_at_byte);
        let mut shown = StateCounts::default();
        for (entry, end) in status.entries.iter().zip(&ends) {
            if *end <= kept_bytes {
                shown.add(entry.state);
            }
        }
        let left_out = status.total.minus(&shown);
        let ctx = context! {
            state => "listed",
            listing => &bounded.text,
            left_out => Value::from(Serde(left_out)),
            left_out_total => left_out.total(),
            capped => status.capped,
            listed => status.entries.len(),
        };
        let mut s = section(ctx)?.with_bounded(&bounded);
        if status.capped {
            s = s.with_note(&format!(
                "git status listing capped at {} entries",
                status.entries.len()
            ));
        }
        Ok(vec![s])
    }
}
