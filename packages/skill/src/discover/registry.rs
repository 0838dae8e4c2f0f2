//! The registry: a plain index of the skills a build produced, with the
//! diagnostics and root reports of that build, answering lookups. Bodies
//! are not part of the index; `body` loads one on demand (from its file or
//! its provider). Building one is [`crate::Discovery`]'s job.
//!
//! A body is read through the confinement of the root its skill was found
//! under, the walk's own (`bcode_fs::Confinement`): a repository's skills
//! must still resolve inside the repository, and nothing is read under
//! `/proc`, `/sys` or `/dev`, so a `SKILL.md` swapped for a link after the
//! walk checked it cannot put an outside file into the prompt.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use bcode_skill_models::{
    Diagnostic, DiagnosticCode, InvokeSkillRequest, InvokeSkillResponse, LoadCause, SkillError,
    SkillId, SkillLayout, SkillManifest, SkillSummary,
};

use bcode_prompt_config::SkillsConfig;

use crate::discover::read::{ReadError, RootConfinements};
use crate::discover::walk::WalkOptions;
use crate::parse::front_matter::{self, Split};
use crate::provider::{self, ProviderSet, SkillHost, guarded};

/// Everything discovery needs besides the roots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveryOptions {
    /// Depth, entry budget and symlink switch of each root's walk.
    pub walk: WalkOptions,
    /// `skills.max_skill_file_bytes`: larger instruction files are skipped
    /// with a `file_too_large` error, unread.
    pub max_skill_file_bytes: usize,
    /// `skills.disabled.ids`: ids left out of the registry (lookups say they
    /// are disabled rather than unknown).
    pub disabled_ids: BTreeSet<String>,
}

impl DiscoveryOptions {
    /// The options the `[skills]` table sets; walk limits other than
    /// `follow_symlinks` keep their defaults.
    pub fn from_config(config: &SkillsConfig) -> Self {
        DiscoveryOptions {
            walk: WalkOptions {
                follow_symlinks: config.follow_symlinks,
                ..WalkOptions::default()
            },
            max_skill_file_bytes: config.max_skill_file_bytes,
            disabled_ids: config.disabled.ids.iter().cloned().collect(),
        }
    }
}

/// A source root as discovery saw it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RootReport {
    /// The source's label (for example `repo:.bcode/skills`).
    pub label: String,
    /// The root as computed or configured, before canonicalisation.
    pub path: PathBuf,
    /// `None` when the root does not exist.
    pub canonical: Option<PathBuf>,
    /// Skills parsed under this root, before precedence, disabling and
    /// duplicate ids are applied.
    pub skills_found: usize,
}

/// The indexed skills of a session or request, with the diagnostics of the
/// build that produced them.
#[derive(Clone, Debug, Default)]
pub struct SkillRegistry {
    /// Sorted by id, each id once (looked up by binary search: a map
    /// would copy every id as its key). Shared: registries are immutable,
    /// so clones (a session swapping registries, an unchanged rebuild)
    /// cost nothing.
    skills: Arc<Vec<Arc<SkillSummary>>>,
    diagnostics: Arc<Vec<Diagnostic>>,
    roots: Vec<RootReport>,
    max_skill_file_bytes: usize,
    disabled_ids: BTreeSet<String>,
    /// The providers that served skills, for loading their bodies.
    providers: ProviderSet,
    /// Where each root's files may resolve, for reading bodies.
    confinements: RootConfinements,
}

impl SkillRegistry {
    /// A registry from what a build produced: by a discovery, or read back
    /// from the disk cache (with no providers).
    /// `skills` are sorted by id here, and of several with one id (only a
    /// damaged disk cache has them) the first is kept.
    pub(crate) fn new(
        mut skills: Vec<Arc<SkillSummary>>,
        diagnostics: Vec<Diagnostic>,
        roots: Vec<RootReport>,
        options: &DiscoveryOptions,
        providers: ProviderSet,
        confinements: RootConfinements,
    ) -> Self {
        skills.sort_by(|a, b| a.manifest.id.cmp(&b.manifest.id));
        skills.dedup_by(|later, first| later.manifest.id == first.manifest.id);
        SkillRegistry {
            skills: Arc::new(skills),
            diagnostics: Arc::new(diagnostics),
            roots,
            max_skill_file_bytes: options.max_skill_file_bytes,
            disabled_ids: options.disabled_ids.clone(),
            providers,
            confinements,
        }
    }

    /// An empty registry (skills disabled).
    pub fn empty() -> Self {
        SkillRegistry::default()
    }

    /// Whether `other` is this very registry (a clone of it, or what an
    /// unchanged rebuild returned): then nothing about it needs redoing.
    pub fn same_as(&self, other: &SkillRegistry) -> bool {
        Arc::ptr_eq(&self.skills, &other.skills)
            && Arc::ptr_eq(&self.diagnostics, &other.diagnostics)
    }

    /// Whether this registry already holds exactly what a build produced:
    /// the same summaries (the very `Arc`s, as cache hits share them), the
    /// same diagnostics and root reports. Then the build's answer is this
    /// registry, and [`SkillRegistry::same_as`] tells callers so.
    pub(crate) fn holds(
        &self,
        skills: &[Arc<SkillSummary>],
        diagnostics: &[Diagnostic],
        roots: &[RootReport],
        confinements: &RootConfinements,
    ) -> bool {
        self.confinements == *confinements
            && self.skills.len() == skills.len()
            && self
                .skills
                .iter()
                .zip(skills)
                .all(|(a, b)| Arc::ptr_eq(a, b))
            && *self.diagnostics == diagnostics
            && self.roots == roots
    }

    /// Every available skill, by id (hidden ones included).
    pub fn skills(&self) -> impl Iterator<Item = &SkillSummary> {
        self.skills.iter().map(|s| &**s)
    }

    /// How many skills are available (hidden ones included).
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// Whether no skill is available.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The skills by id, as the registry shares them: a holder that keeps
    /// summaries past the registry (the MCP server's snapshot) clones the
    /// `Arc`, not the summary.
    pub fn shared_skills(&self) -> impl ExactSizeIterator<Item = &Arc<SkillSummary>> {
        self.skills.iter()
    }

    /// The available skill with this id; `None` for an unknown, disabled or
    /// malformed id (see [`SkillRegistry::lookup`] for which).
    pub fn get(&self, id: &str) -> Option<&SkillSummary> {
        let id = SkillId::parse_reference(id).ok()?;
        let at = self
            .skills
            .binary_search_by(|s| s.manifest.id.cmp(&id))
            .ok()?;
        self.skills.get(at).map(|s| &**s)
    }

    /// A skill by id, or why it is not available (unknown, disabled).
    pub fn lookup(&self, id: &str) -> Result<&SkillSummary, SkillError> {
        if let Some(skill) = self.get(id) {
            return Ok(skill);
        }
        if self.disabled_ids.contains(id) {
            return Err(SkillError::Disabled { id: id.to_owned() });
        }
        Err(SkillError::NotFound {
            id: id.to_owned(),
            suggestion: bcode_text::closest(id, self.ids()).map(str::to_owned),
        })
    }

    /// Every diagnostic of the build (walk, parse, precedence, providers),
    /// sorted by path, position and code.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Diagnostics about one skill: those with its id or its file.
    pub fn diagnostics_for(&self, skill: &SkillSummary) -> Vec<&Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| {
                d.skill_id() == Some(skill.manifest.id.as_str())
                    || d.path.as_deref() == Some(&*skill.location)
            })
            .collect()
    }

    /// One report per searched root, highest precedence first.
    pub fn roots(&self) -> &[RootReport] {
        &self.roots
    }

    /// The ids of all skills, for near-miss suggestions.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.skills.iter().map(|s| s.manifest.id.as_str())
    }

    /// Loads the body of a skill: the text after its front matter, with CRLF
    /// turned into LF and surrounding blank lines removed. Reads the file now
    /// (bounded by `max_skill_file_bytes`), so an edit since discovery shows.
    /// A provider skill's body comes from its provider, bounded the same way.
    pub fn body(&self, skill: &SkillSummary) -> Result<String, SkillError> {
        if skill.layout == SkillLayout::Provided {
            return provider::provided_body(&self.providers, skill, self.max_skill_file_bytes)
                .map(|body| normalize_body(&body));
        }
        let bytes = self.read_instruction(skill)?;
        body_of(skill, &bytes)
    }

    /// The bytes of the supporting file `path` (relative to the skill's
    /// folder: `references/FORM.md`) of a provider skill, read through its
    /// provider now (an MCP skill's is fetched on this demand and verified
    /// against its listing), bounded by `max_skill_file_bytes`. A folder
    /// skill's files are on disk in its folder; asking here for one is an
    /// error that says where.
    pub fn read_file(&self, skill: &SkillSummary, path: &str) -> Result<Vec<u8>, SkillError> {
        if skill.layout == SkillLayout::Provided {
            return provider::provided_file(
                &self.providers,
                skill,
                path,
                self.max_skill_file_bytes,
            );
        }
        Err(SkillError::Provider {
            provider: skill.source.label.clone(),
            reason: format!(
                "`{}` is not served by a provider; its files are in `{}`",
                skill.manifest.id,
                skill.directory().display()
            ),
        })
    }

    /// The skill as its file says now and its body, both from one read, so
    /// a `/skill` after an edit never pairs the front matter discovery saw
    /// with the body written since. The id must not have changed: the
    /// caller asked for this skill, and a renamed one is found by its new
    /// id once the registry is rebuilt.
    pub fn load_current(
        &self,
        skill: &SkillSummary,
    ) -> Result<(Arc<SkillSummary>, String), SkillError> {
        if skill.layout == SkillLayout::Provided {
            let body = self.body(skill)?;
            let mut skill = skill.clone();
            // A skill whose files have names of their own (an MCP skill's
            // `skill://` folder) shows that folder as the one its
            // references are relative to, so the model can name its
            // supporting files.
            if let Some(base) = provider::provided_base(&self.providers, &skill) {
                skill.directory_override = Some(PathBuf::from(base));
            }
            return Ok((Arc::new(skill), body));
        }
        let bytes = self.read_instruction(skill)?;
        let origin = crate::parse::skill::SkillOrigin {
            source: Arc::clone(&skill.source),
            layout: skill.layout,
            kind: crate::parse::skill::InstructionKind::SkillFile,
            location: skill.location.to_path_buf(),
            directory: skill.directory().to_path_buf(),
            // The id the skill already has: a file that does not name one
            // keeps it, as it did at discovery.
            inferred_id: skill.manifest.id.to_string(),
        };
        let changed = |cause: LoadCause| SkillError::Load {
            id: skill.manifest.id.to_string(),
            cause,
        };
        let current = crate::parse::skill::parse_skill(&origin, &bytes)
            .skill
            .ok_or_else(|| changed(LoadCause::NoLongerValid))?;
        if current.manifest.id != skill.manifest.id {
            return Err(changed(LoadCause::IdChanged {
                now: current.manifest.id.to_string(),
            }));
        }
        let body = body_of(&current, &bytes)?;
        Ok((current, body))
    }

    /// The instruction file's bytes, bounded by `max_skill_file_bytes`, read
    /// through its root's confinement (see the module docs).
    fn read_instruction(&self, skill: &SkillSummary) -> Result<Vec<u8>, SkillError> {
        self.confinements
            .read_body(skill, self.max_skill_file_bytes)
            .map_err(|err| SkillError::Load {
                id: skill.manifest.id.to_string(),
                cause: match err {
                    ReadError::TooLarge { len, max } => LoadCause::TooLarge { len, max },
                    ReadError::NotRegular => LoadCause::NotRegular,
                    ReadError::Io(_) if err.escape().is_some() => LoadCause::PathEscape {
                        message: err.to_string(),
                    },
                    ReadError::Io(err) => LoadCause::Io {
                        message: err.to_string(),
                    },
                },
            })
    }

    /// Registry-level diagnostics for a deep check (`skills doctor`): loads
    /// every body and reports the ones that cannot be used.
    pub fn check_bodies(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for skill in self.skills() {
            if let Err(err) = self.body(skill) {
                let code = match &err {
                    SkillError::Load {
                        cause: LoadCause::InvalidUtf8 { .. },
                        ..
                    } => DiagnosticCode::InvalidUtf8,
                    SkillError::Load {
                        cause: LoadCause::PathEscape { .. },
                        ..
                    } => DiagnosticCode::PathEscape,
                    _ => DiagnosticCode::Unreadable,
                };
                out.push(
                    Diagnostic::error(code, err.to_string())
                        .with_path(&skill.location)
                        .with_skill(skill.manifest.id.as_str()),
                );
            }
        }
        out
    }
}

/// The body in `bytes`, the text of `skill`'s instruction file.
fn body_of(skill: &SkillSummary, bytes: &[u8]) -> Result<String, SkillError> {
    let load_error = |cause: LoadCause| SkillError::Load {
        id: skill.manifest.id.to_string(),
        cause,
    };
    let offset = match front_matter::split(bytes) {
        Split::Block { body_offset, .. } | Split::None { body_offset } => body_offset,
        Split::Unterminated { .. } => {
            return Err(load_error(LoadCause::UnterminatedFrontMatter));
        }
    };
    let rest = bytes.get(offset..).unwrap_or_default();
    let body = std::str::from_utf8(rest).map_err(|err| {
        let before = rest.get(..err.valid_up_to()).unwrap_or_default();
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        load_error(LoadCause::InvalidUtf8 { line })
    })?;
    Ok(normalize_body(body))
}

fn normalize_body(body: &str) -> String {
    let body = if body.contains('\r') {
        body.replace("\r\n", "\n")
    } else {
        body.to_owned()
    };
    let trimmed_start = body.trim_start_matches(['\n', ' ', '\t']);
    // Keep indentation of the first line: only whole blank lines are dropped.
    let start = body.len() - trimmed_start.len();
    let line_start = body[..start].rfind('\n').map_or(0, |i| i + 1);
    body[line_start..].trim_end().to_owned()
}

impl SkillRegistry {
    /// `describe` of `bcode.skill/v1` for any skill in the registry: the
    /// manifest and the diagnostics about it; provider skills add what their
    /// provider reports.
    pub fn describe(&self, id: &str) -> Result<(SkillManifest, Vec<Diagnostic>), SkillError> {
        let skill = self.lookup(id)?;
        let mut diagnostics: Vec<Diagnostic> =
            self.diagnostics_for(skill).into_iter().cloned().collect();
        if skill.layout != SkillLayout::Provided {
            return Ok((skill.manifest.clone(), diagnostics));
        }
        let (name, provider) = self.providers.serving(skill)?;
        let (manifest, more) = guarded(name.to_owned(), "describe", || {
            provider.describe(&skill.manifest.id)
        })?;
        if manifest.id != skill.manifest.id {
            return Err(SkillError::Provider {
                provider: name.to_owned(),
                reason: format!(
                    "describe(`{}`) returned the manifest of `{}`",
                    skill.manifest.id, manifest.id
                ),
            });
        }
        diagnostics.extend(more);
        Ok((manifest, diagnostics))
    }

    /// `invoke` of `bcode.skill/v1`: routes to the skill's provider. Folder
    /// skills are prompt packs whose scripts stay inert, so they do not
    /// support invoke.
    pub fn invoke(
        &self,
        request: &InvokeSkillRequest,
        host: &dyn SkillHost,
    ) -> Result<InvokeSkillResponse, SkillError> {
        let skill = self.lookup(request.id.as_str())?;
        if skill.layout != SkillLayout::Provided {
            return Err(SkillError::InvokeUnsupported {
                id: request.id.to_string(),
            });
        }
        let (name, provider) = self.providers.serving(skill)?;
        let response = guarded(name.to_owned(), "invoke", || provider.invoke(request, host))?;
        if response.id != request.id {
            return Err(SkillError::Provider {
                provider: name.to_owned(),
                reason: format!("invoke(`{}`) answered for `{}`", request.id, response.id),
            });
        }
        Ok(response)
    }
}
