//! Section identity, in one place: every canonical section is a
//! [`SectionKind`], which carries its name (the `[system_prompt.sections]`
//! toggle name, `base` or `active_skill`), its rank in the canonical order,
//! its toggle, its stability class, its placement and its template. A host
//! adds its own sections with a [`StageSpec`] placed before or after a
//! canonical one.
//!
//! Canonical order (design card: base or replace, datetime, environment, git
//! status, invariants, skill catalog, user authority, active skill blocks).
//! The pipeline sorts stages by [`Position`]; within each part it first moves
//! turn sections of the system text behind the stable ones so that the
//! cacheable prefix is not interrupted.

use std::borrow::Cow;

use serde::Serialize;

/// How often a section's text can change, which decides whether it may sit
/// inside the cacheable prefix of the system text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SectionClass {
    /// The same for every request made with this config (base, user authority).
    Static,
    /// Fixed for a session (repository instructions, invariants, catalog).
    Session,
    /// Changes per request (datetime, git status, active skill blocks).
    Turn,
}

impl SectionClass {
    /// Whether the section may be part of the cacheable prefix.
    pub fn is_stable(self) -> bool {
        matches!(self, SectionClass::Static | SectionClass::Session)
    }
}

/// Which part of the assembled prompt a section goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Placement {
    /// The cacheable system text.
    System,
    /// The request-only model context (the spec's wording for datetime,
    /// environment, git revision and similar facts).
    RequestContext,
}

/// The canonical sections, in canonical order (the derive order is the
/// order: [`SectionKind::rank`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SectionKind {
    /// The base or replacement text.
    Base,
    /// The local date, time, timezone abbreviation and UTC offset.
    CurrentDatetime,
    /// OS family and version, architecture and shell name.
    ExecutionEnvironment,
    /// Presence-only hosting signals: CI, container, SSH.
    HostingEnvironment,
    /// The user's locale, or that none is set.
    Locale,
    /// How Bcode runs: interactive, scripted or a one-shot render.
    RuntimeMode,
    /// Whether the checkout is the main, a linked or a bare worktree, and
    /// its root.
    WorktreeContext,
    /// The active configuration profile's name, if any.
    ConfigProfile,
    /// Branch or detached HEAD, commit and dirty flag.
    GitRevision,
    /// The first line of a fixed set of version commands (opt-in).
    ToolchainContext,
    /// Git status.
    DynamicRepositoryContext,
    /// Repository instructions (`BCODE.md`, `AGENTS.md`).
    RepositoryContext,
    /// The repository's invariants: the whole catalog in `full` mode, or
    /// the selected ones in relevant mode.
    RepositoryInvariants,
    /// The model-visible catalog of available skills.
    SkillCatalog,
    /// The instruction-precedence policy for explicit user overrides.
    UserAuthority,
    /// The skills that best fit the turn's task (`skills.routing`).
    RelevantSkills,
    /// One block per active skill (`active_skill:<id>`), after a short guide.
    ActiveSkill,
    /// The closing instructions of the system prompt.
    AgentSuffix,
}

use SectionClass::{Session, Static, Turn};

impl SectionKind {
    /// Every canonical section, in canonical order.
    pub const ALL: [SectionKind; 18] = [
        SectionKind::Base,
        SectionKind::CurrentDatetime,
        SectionKind::ExecutionEnvironment,
        SectionKind::HostingEnvironment,
        SectionKind::Locale,
        SectionKind::RuntimeMode,
        SectionKind::WorktreeContext,
        SectionKind::ConfigProfile,
        SectionKind::GitRevision,
        SectionKind::ToolchainContext,
        SectionKind::DynamicRepositoryContext,
        SectionKind::RepositoryContext,
        SectionKind::RepositoryInvariants,
        SectionKind::SkillCatalog,
        SectionKind::UserAuthority,
        SectionKind::RelevantSkills,
        SectionKind::ActiveSkill,
        SectionKind::AgentSuffix,
    ];

    /// The section id: the toggle's name, `base` or `active_skill`.
    pub fn name(self) -> &'static str {
        self.facts().0
    }

    /// The position in the canonical order.
    pub fn rank(self) -> usize {
        self as usize
    }

    /// The `[system_prompt.sections]` toggle, if the section has one (the
    /// base cannot be switched off and active skills are asked for per turn).
    pub fn toggle(self) -> Option<&'static str> {
        match self {
            SectionKind::Base | SectionKind::ActiveSkill => None,
            other => Some(other.name()),
        }
    }

    /// The default stability class (a stage may report another, e.g.
    /// relevant-mode invariants are per turn).
    pub fn class(self) -> SectionClass {
        self.facts().1
    }

    /// Which part of the prompt the section goes to.
    pub fn placement(self) -> Placement {
        self.facts().2
    }

    /// The main template the section renders.
    pub fn template(self) -> &'static str {
        self.facts().3
    }

    /// The kind named `name`, if any.
    pub fn from_name(name: &str) -> Option<SectionKind> {
        SectionKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
    }

    /// The stage spec of this canonical section.
    pub fn spec(self) -> StageSpec {
        StageSpec {
            id: Cow::Borrowed(self.name()),
            toggle: self.toggle().map(Cow::Borrowed),
            class: self.class(),
            placement: self.placement(),
            template: Some(Cow::Borrowed(self.template())),
            position: Position::At(self),
        }
    }

    /// (name, class, placement, template): the one table of section facts.
    fn facts(self) -> (&'static str, SectionClass, Placement, &'static str) {
        use Placement::{RequestContext as Request, System};
        match self {
            SectionKind::Base => ("base", Static, System, "base.j2"),
            SectionKind::CurrentDatetime => {
                ("current_datetime", Turn, Request, "sections/datetime.j2")
            }
            SectionKind::ExecutionEnvironment => (
                "execution_environment",
                Session,
                Request,
                "sections/execution_environment.j2",
            ),
            SectionKind::HostingEnvironment => (
                "hosting_environment",
                Session,
                Request,
                "sections/hosting_environment.j2",
            ),
            SectionKind::Locale => ("locale", Session, Request, "sections/locale.j2"),
            SectionKind::RuntimeMode => {
                ("runtime_mode", Session, Request, "sections/runtime_mode.j2")
            }
            SectionKind::WorktreeContext => (
                "worktree_context",
                Session,
                Request,
                "sections/worktree_context.j2",
            ),
            SectionKind::ConfigProfile => (
                "config_profile",
                Session,
                Request,
                "sections/config_profile.j2",
            ),
            SectionKind::GitRevision => ("git_revision", Turn, Request, "sections/git_revision.j2"),
            SectionKind::ToolchainContext => (
                "toolchain_context",
                Session,
                Request,
                "sections/toolchain.j2",
            ),
            SectionKind::DynamicRepositoryContext => (
                "dynamic_repository_context",
                Turn,
                Request,
                "sections/git_status.j2",
            ),
            SectionKind::RepositoryContext => (
                "repository_context",
                Session,
                System,
                "sections/repo_instructions.j2",
            ),
            SectionKind::RepositoryInvariants => (
                "repository_invariants",
                Session,
                System,
                "sections/repo_invariants.j2",
            ),
            SectionKind::SkillCatalog => ("skill_catalog", Session, System, "skills/catalog.j2"),
            SectionKind::UserAuthority => (
                "user_authority",
                Static,
                System,
                "sections/user_authority.j2",
            ),
            SectionKind::RelevantSkills => ("relevant_skills", Turn, Request, "skills/relevant.j2"),
            SectionKind::ActiveSkill => ("active_skill", Turn, Request, "skills/context.j2"),
            SectionKind::AgentSuffix => {
                ("agent_suffix", Static, System, "sections/agent_suffix.j2")
            }
        }
    }
}

/// Where a stage sits in the order: a canonical section's own place, or
/// just before or after one (host-defined sections).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "relative_to", content = "section")]
#[non_exhaustive]
pub enum Position {
    /// The canonical section's own place; only its own stage may use it.
    At(SectionKind),
    /// Just before the canonical section (a host section).
    Before(SectionKind),
    /// Just after the canonical section (a host section).
    After(SectionKind),
}

impl Position {
    /// The sort key: canonical rank, then before / at / after. Stages with
    /// equal keys keep the order in which they were registered.
    pub fn key(self) -> (usize, u8) {
        match self {
            Position::Before(kind) => (kind.rank(), 0),
            Position::At(kind) => (kind.rank(), 1),
            Position::After(kind) => (kind.rank(), 2),
        }
    }
}

/// Everything the pipeline needs to know about a stage before running it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StageSpec {
    /// The section id (sections a stage yields are this id or `<id>:...`).
    pub id: Cow<'static, str>,
    /// The `[system_prompt.sections]` key that switches the stage off.
    pub toggle: Option<Cow<'static, str>>,
    /// How often the stage's text can change, which decides whether it may
    /// sit before the cache boundary.
    pub class: SectionClass,
    /// The part of the prompt every section of the stage goes to.
    pub placement: Placement,
    /// The main template (for `--explain`).
    pub template: Option<Cow<'static, str>>,
    /// Where the stage sorts in the canonical order.
    pub position: Position,
}

impl StageSpec {
    /// A host-defined section: toggled by `system_prompt.sections.<id>`
    /// (on unless set to `false`), placed relative to a canonical section.
    pub fn host(
        id: &str,
        class: SectionClass,
        placement: Placement,
        position: Position,
    ) -> StageSpec {
        StageSpec {
            id: Cow::Owned(id.to_owned()),
            toggle: Some(Cow::Owned(id.to_owned())),
            class,
            placement,
            template: None,
            position,
        }
    }

    /// The same spec with another class.
    pub fn with_class(mut self, class: SectionClass) -> StageSpec {
        self.class = class;
        self
    }

    /// The same spec in another part of the prompt.
    pub fn with_placement(mut self, placement: Placement) -> StageSpec {
        self.placement = placement;
        self
    }

    /// The same spec with another main template.
    pub fn with_template(mut self, template: &str) -> StageSpec {
        self.template = Some(Cow::Owned(template.to_owned()));
        self
    }

    /// The same spec switched by another `[system_prompt.sections]` key.
    pub fn with_toggle(mut self, toggle: &str) -> StageSpec {
        self.toggle = Some(Cow::Owned(toggle.to_owned()));
        self
    }

    /// The same spec with no toggle: the stage always runs.
    pub fn without_toggle(mut self) -> StageSpec {
        self.toggle = None;
        self
    }

    /// Whether `config` leaves this stage on: the one reading of
    /// `[system_prompt.sections]`. A canonical toggle always has a value; a
    /// host section's is on unless the config sets it to `false`; a stage
    /// without a toggle always runs.
    pub fn enabled_by(&self, config: &bcode_prompt_config::BcodeConfig) -> bool {
        self.toggle
            .as_deref()
            .is_none_or(|toggle| config.system_prompt.sections.get(toggle) != Some(false))
    }

    /// Whether this is one of the canonical sections.
    pub fn is_canonical(&self) -> bool {
        matches!(self.position, Position::At(_))
    }
}

/// The stage id part of a section id (`active_skill:rust` -> `active_skill`).
pub fn stage_of(section_id: &str) -> &str {
    section_id
        .split_once(':')
        .map_or(section_id, |(stage, _)| stage)
}

/// Whether `id` can name a host-defined section: lower-case ASCII letters,
/// digits and `_`, starting with a letter, at most 64 bytes, and not a
/// canonical name (so it can be a `[system_prompt.sections]` key).
pub fn is_valid_host_id(id: &str) -> bool {
    let mut bytes = id.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && SectionKind::from_name(id).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_the_design_card() {
        assert_eq!(SectionKind::Base.rank(), 0);
        assert_eq!(SectionKind::ActiveSkill.rank(), 16);
        let card = [
            SectionKind::Base,
            SectionKind::CurrentDatetime,
            SectionKind::ExecutionEnvironment,
            SectionKind::DynamicRepositoryContext,
            SectionKind::RepositoryInvariants,
            SectionKind::SkillCatalog,
            SectionKind::UserAuthority,
            SectionKind::ActiveSkill,
        ];
        assert!(card.windows(2).all(|w| w[0].rank() < w[1].rank()));
        for (i, kind) in SectionKind::ALL.iter().enumerate() {
            assert_eq!(kind.rank(), i);
            assert_eq!(SectionKind::from_name(kind.name()), Some(*kind));
        }
        assert_eq!(stage_of("active_skill:rust-debugging"), "active_skill");
        assert_eq!(SectionKind::from_name("base_extra"), None);
    }

    #[test]
    fn every_toggle_is_a_section_and_every_section_toggle_a_config_key() {
        let toggles = bcode_prompt_config::SectionToggles::default();
        let json = serde_json::to_value(&toggles).unwrap();
        for name in json.as_object().unwrap().keys() {
            let kind = SectionKind::from_name(name).unwrap();
            assert_eq!(kind.toggle(), Some(name.as_str()));
        }
        for kind in SectionKind::ALL {
            if let Some(toggle) = kind.toggle() {
                assert!(toggles.get(toggle).is_some(), "{toggle}");
            }
        }
    }

    #[test]
    fn every_section_template_is_embedded() {
        let names = bcode_templates::Templates::builtin().names();
        for kind in SectionKind::ALL {
            assert!(names.iter().any(|n| n == kind.template()), "{kind:?}");
        }
    }

    #[test]
    fn host_ids_are_plain_and_never_canonical() {
        assert!(is_valid_host_id("team_rules"));
        assert!(!is_valid_host_id("locale"));
        assert!(!is_valid_host_id("Team"));
        assert!(!is_valid_host_id("a:b"));
        assert!(!is_valid_host_id(""));
        assert!(!is_valid_host_id("9lives"));
    }
}
