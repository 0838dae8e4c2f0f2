//! The `bcode.skill/v1` service interface: the [`SkillProvider`] trait that
//! plugins implement, the [`SkillHost`] capability a host lends them, the
//! permission vocabulary for script execution, and the merge of provider
//! skills into the one [`crate::SkillRegistry`].
//! [`FolderProvider`] (`folder`) serves a registry through the same interface.
//!
//! This room owns the interface and the merge only: which provider skill
//! wins an id against folder skills is decided by discovery's precedence
//! ([`crate::discover`]), and a provider's body is formatted like a folder
//! body by [`crate::context`].
//!
//! # What a provider can do
//!
//! A provider serves skills from memory. It never receives a filesystem path
//! or a shell: the only capability it gets is the `&dyn SkillHost` passed to
//! [`SkillProvider::invoke`], through which every tool call and permission
//! request goes, so Bcode's tools and agent policy apply to plugin behaviour
//! exactly as they do to the model. Permission hints in a manifest are
//! advisory and are never consulted when deciding a permission.
//!
//! # How provider skills join the registry
//!
//! [`Discovery::build_with_providers`](crate::Discovery::build_with_providers)
//! asks each provider for its list and runs the summaries through the same
//! precedence resolution as folder skills. Provider skills rank as bundled
//! ([`SourceKind::Bundled`]), after every bundled root and in the order the
//! providers were given; their source label is `bundled:<provider name>`, so
//! any folder skill with the same id shadows them. A provider relaying an
//! MCP server ([`SkillProvider::source_kind`] is [`SourceKind::Mcp`]) ranks
//! after every folder source and before bundled ones, labelled
//! `mcp:<provider name>`. They have no file, so
//! their `location` and `directory` are the synthetic, model-visible
//! `bcode-provider://<provider name>/<skill id>`, and the source has no root.
//! Loading a body ([`crate::SkillRegistry::body`], and through it
//! [`crate::SkillRegistry::context`]) calls the provider's `context`; the host then
//! formats, bounds and previews it like a folder body, so a provider cannot
//! forge the provenance lines or close the `<skill>` block.
//!
//! # Isolation
//!
//! Every call into a provider is guarded with `catch_unwind`: a provider that
//! fails or panics while listing contributes a `provider_failed` diagnostic
//! and no skills, and the rest of the registry builds as usual; a failure or
//! panic later (body, describe, invoke) becomes a [`SkillError::Provider`].
//! Each listed skill is checked on its own (duplicate id, empty description,
//! unknown `thinking_effort`, oversized body) and reported with its id.
//! A malformed id cannot reach this far: [`SkillId`] only holds valid ids, so
//! an adapter that decodes a plugin's JSON rejects bad ids while decoding.

mod folder;

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bcode_skill_models::{
    Diagnostic, DiagnosticCode, InvokeSkillRequest, InvokeSkillResponse, LoadCause,
    SkillContextRequest, SkillError, SkillId, SkillLayout, SkillManifest, SkillSource,
    SkillSummary, SourceKind,
};

use crate::parse::manifest::THINKING_EFFORTS;

pub use folder::FolderProvider;

/// The interface id of this version of the skill service.
pub const SKILL_INTERFACE_V1: &str = "bcode.skill/v1";

/// The permission category every skill script execution must request.
pub const SCRIPT_EXECUTE_PERMISSION: &str = "skill.script.execute";

/// The scheme of the synthetic locations of provider skills.
pub const PROVIDER_LOCATION_SCHEME: &str = "bcode-provider";

/// One entry of a provider's list: the compact summary of a skill.
#[derive(Clone, Debug, PartialEq)]
pub struct ProvidedSkill {
    /// The skill's metadata. It passes the same checks as a folder skill's
    /// front matter (a description, a size limit); when a provider lists an
    /// id twice, the first entry wins.
    pub manifest: SkillManifest,
    /// The size of the body in bytes, when the provider knows it without
    /// producing the body; checked against `skills.max_skill_file_bytes`.
    pub body_bytes: Option<usize>,
}

/// A plugin-provided source of skills, speaking `bcode.skill/v1`.
///
/// `Send + Sync` because a registry, which holds its providers, is shared by
/// the sessions of a host.
pub trait SkillProvider: Send + Sync {
    /// A stable name: lowercase letters, digits and hyphens (the skill id
    /// grammar), used in the source label `bundled:<name>`.
    fn name(&self) -> &str;

    /// The interface version the provider implements.
    fn interface(&self) -> &str {
        SKILL_INTERFACE_V1
    }

    /// Compact summaries of every skill the provider serves.
    fn list(&self) -> Result<Vec<ProvidedSkill>, SkillError>;

    /// Which source kind its skills rank as: [`SourceKind::Bundled`]
    /// (label `bundled:<name>`) unless the provider relays an MCP server
    /// ([`SourceKind::Mcp`], label `mcp:<name>`). Any other kind is read as
    /// bundled: a provider cannot outrank folder skills.
    fn source_kind(&self) -> SourceKind {
        SourceKind::Bundled
    }

    /// What the last [`SkillProvider::list`] left out or noticed (a skill it
    /// could not relay), reported with the registry's diagnostics.
    fn list_diagnostics(&self) -> Vec<Diagnostic> {
        Vec::new()
    }

    /// Validated metadata and diagnostics for one skill.
    fn describe(&self, id: &SkillId) -> Result<(SkillManifest, Vec<Diagnostic>), SkillError>;

    /// The body of a skill's context. The host wraps it in the `<skill>` block
    /// with provenance and applies `max_bytes` and the preview itself.
    fn context(&self, request: &SkillContextRequest) -> Result<String, SkillError>;

    /// Where the files of skill `id` are named for the model, when they
    /// have names of their own (an MCP skill's `skill://pdf/` folder): the
    /// `<skill>` block then gives it as the folder its references are
    /// relative to. `None`: the synthetic `bcode-provider://` location.
    fn resource_base(&self, id: &SkillId) -> Option<String> {
        let _ = id;
        None
    }

    /// The bytes of the supporting file `path` of skill `id` (relative to
    /// its folder, as `SKILL.md` names it: `references/FORM.md`), read now.
    /// A provider whose skills have no files refuses.
    fn read_file(&self, id: &SkillId, path: &str) -> Result<Vec<u8>, SkillError> {
        Err(SkillError::Provider {
            provider: self.name().to_owned(),
            reason: format!("its skill `{id}` has no file `{path}` to read"),
        })
    }

    /// Plugin-backed behaviour. Everything it does goes through `host`.
    fn invoke(
        &self,
        request: &InvokeSkillRequest,
        host: &dyn SkillHost,
    ) -> Result<InvokeSkillResponse, SkillError> {
        let _ = host;
        Err(SkillError::InvokeUnsupported {
            id: request.id.to_string(),
        })
    }
}

/// The capability a host lends a provider during `invoke`: Bcode tools and
/// permission prompts, nothing else.
pub trait SkillHost {
    /// Runs a Bcode tool (for example `filesystem.read`) under agent policy.
    fn call_tool(
        &self,
        tool: &str,
        args: serde_json::Value,
    ) -> Result<serde_json::Value, HostError>;

    /// Asks for a permission. A host resolves [`PermissionDecision::Ask`] by
    /// asking the user; when it cannot, it returns `Ask`, which callers must
    /// treat as not granted.
    fn request_permission(&self, request: &PermissionRequest) -> PermissionDecision;
}

/// A permission a provider asks the host for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermissionRequest {
    /// For example [`SCRIPT_EXECUTE_PERMISSION`].
    pub category: String,
    /// What exactly would run, shown to the user.
    pub detail: String,
    /// The skill on whose behalf the provider asks, so the user knows who
    /// wants it.
    pub skill_id: SkillId,
}

/// A host's answer to a permission request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PermissionDecision {
    /// Granted for this request.
    Allow,
    /// Refused; the provider must not go ahead.
    Deny,
    /// The user must be asked (from a policy), or was not reachable (from a
    /// host): not a grant.
    Ask,
}

/// Why a host refused a provider's request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The host answered [`PermissionDecision::Deny`].
    #[error("permission `{category}` was denied")]
    PermissionDenied {
        /// The permission category that was asked for.
        category: String,
    },
    /// The host answered [`PermissionDecision::Ask`]: approval was needed and
    /// not given, which is not a grant.
    #[error("permission `{category}` needs the user's approval, which was not given")]
    PermissionNotGranted {
        /// The permission category that was asked for.
        category: String,
    },
    /// The provider asked for a tool the host does not have.
    #[error("no tool named `{tool}`")]
    UnknownTool {
        /// The tool name as the provider gave it.
        tool: String,
    },
    /// The tool ran and failed.
    #[error("tool `{tool}` failed: {reason}")]
    Tool {
        /// The tool that failed.
        tool: String,
        /// Why, in the tool's words.
        reason: String,
    },
}

/// Requests `request` from `host` and succeeds only on an explicit `Allow`.
pub fn require_permission(
    host: &dyn SkillHost,
    request: &PermissionRequest,
) -> Result<(), HostError> {
    match host.request_permission(request) {
        PermissionDecision::Allow => Ok(()),
        PermissionDecision::Deny => Err(HostError::PermissionDenied {
            category: request.category.clone(),
        }),
        PermissionDecision::Ask => Err(HostError::PermissionNotGranted {
            category: request.category.clone(),
        }),
    }
}

/// A host-side table of decisions by permission category. The default asks
/// for everything, [`SCRIPT_EXECUTE_PERMISSION`] included. It takes no
/// manifest: skill permission metadata is advisory and cannot grant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermissionPolicy {
    rules: BTreeMap<String, PermissionDecision>,
    fallback: PermissionDecision,
}

impl Default for PermissionPolicy {
    fn default() -> Self {
        let mut rules = BTreeMap::new();
        // Written out although it equals the fallback, so that loosening the
        // fallback later cannot silently loosen script execution.
        rules.insert(
            SCRIPT_EXECUTE_PERMISSION.to_owned(),
            PermissionDecision::Ask,
        );
        PermissionPolicy {
            rules,
            fallback: PermissionDecision::Ask,
        }
    }
}

impl PermissionPolicy {
    /// Sets the decision for one category (operator configuration).
    pub fn set(&mut self, category: &str, decision: PermissionDecision) {
        self.rules.insert(category.to_owned(), decision);
    }

    /// The decision for `category`.
    pub fn decide(&self, category: &str) -> PermissionDecision {
        self.rules.get(category).copied().unwrap_or(self.fallback)
    }
}

/// The providers of a registry, by provider id (its name, the id a
/// provided skill's source names).
#[derive(Clone, Default)]
pub(crate) struct ProviderSet(BTreeMap<String, Arc<dyn SkillProvider>>);

impl std::fmt::Debug for ProviderSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

/// What asking the providers produced.
pub(crate) struct Collected {
    pub skills: Vec<SkillSummary>,
    pub diagnostics: Vec<Diagnostic>,
    pub providers: ProviderSet,
}

/// Lists every provider, isolated from each other, and turns their entries
/// into summaries ranked as bundled from `first_ordinal` on.
pub(crate) fn collect(
    providers: &[Arc<dyn SkillProvider>],
    first_ordinal: usize,
    max_body_bytes: usize,
) -> Collected {
    let mut out = Collected {
        skills: Vec::new(),
        diagnostics: Vec::new(),
        providers: ProviderSet::default(),
    };
    for (index, provider) in providers.iter().enumerate() {
        let failed = |path: Option<&Path>, message: String| {
            let d = Diagnostic::error(DiagnosticCode::ProviderFailed, message);
            match path {
                Some(path) => d.with_path(path),
                None => d,
            }
        };
        let name = match guarded("#".to_owned() + &index.to_string(), "name", || {
            Ok(provider.name().to_owned())
        }) {
            Ok(name) => name,
            Err(err) => {
                out.diagnostics.push(failed(None, err.to_string()));
                continue;
            }
        };
        if SkillId::parse(&name).is_err() {
            out.diagnostics.push(
                failed(None, format!("skill provider name {name:?} is not valid"))
                    .with_hint("use lowercase letters, digits and hyphens"),
            );
            continue;
        }
        let home = provider_location(&name, None);
        if out.providers.0.contains_key(&name) {
            out.diagnostics.push(failed(
                Some(&home),
                format!(
                    "a skill provider named `{name}` is already registered; this one is ignored"
                ),
            ));
            continue;
        }
        let interface = guarded(name.clone(), "interface", || {
            Ok(provider.interface().to_owned())
        });
        match interface {
            Ok(found) if found == SKILL_INTERFACE_V1 => {}
            Ok(found) => {
                out.diagnostics.push(failed(
                    Some(&home),
                    format!(
                        "skill provider `{name}` implements `{found}`; this host speaks `{SKILL_INTERFACE_V1}`"
                    ),
                ));
                continue;
            }
            Err(err) => {
                out.diagnostics.push(failed(Some(&home), err.to_string()));
                continue;
            }
        }
        let listed = match guarded(name.clone(), "list", || provider.list()) {
            Ok(listed) => listed,
            Err(err) => {
                out.diagnostics.push(
                    failed(Some(&home), err.to_string())
                        .with_hint("its skills are unavailable; other skills are not affected"),
                );
                continue;
            }
        };
        out.diagnostics.extend(
            guarded(name.clone(), "list_diagnostics", || {
                Ok(provider.list_diagnostics())
            })
            .unwrap_or_default()
            .into_iter()
            .map(|d| match d.path {
                Some(_) => d,
                None => d.with_path(&home),
            }),
        );
        let (kind, prefix) =
            match guarded(name.clone(), "source_kind", || Ok(provider.source_kind())) {
                Ok(SourceKind::Mcp) => (SourceKind::Mcp, "mcp"),
                _ => (SourceKind::Bundled, "bundled"),
            };
        let source = SkillSource {
            kind,
            label: format!("{prefix}:{name}"),
            ordinal: first_ordinal.saturating_add(index),
            root: None,
            provider: Some(name.clone()),
        };
        let mut seen = std::collections::BTreeSet::new();
        for entry in listed {
            if let Some(summary) = check_entry(
                entry,
                &name,
                &source,
                max_body_bytes,
                &mut seen,
                &mut out.diagnostics,
            ) {
                out.skills.push(summary);
            }
        }
        out.providers.0.insert(name, Arc::clone(provider));
    }
    out
}

/// The per-skill checks a provider's entry must pass; folder skills pass the
/// same ones in the manifest validator.
fn check_entry(
    entry: ProvidedSkill,
    provider: &str,
    source: &SkillSource,
    max_body_bytes: usize,
    seen: &mut std::collections::BTreeSet<SkillId>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<SkillSummary> {
    let ProvidedSkill {
        mut manifest,
        body_bytes,
    } = entry;
    let id = manifest.id.clone();
    let location = provider_location(provider, Some(&id));
    let report = |d: Diagnostic| d.with_path(&location).with_skill(id.as_str());
    if !seen.insert(id.clone()) {
        diagnostics.push(report(
            Diagnostic::warning(
                DiagnosticCode::DuplicateId,
                format!(
                    "skill provider `{provider}` lists `{id}` more than once; the first entry wins"
                ),
            )
            .with_field("id"),
        ));
        return None;
    }
    if manifest.description.trim().is_empty() {
        diagnostics.push(report(
            Diagnostic::error(
                DiagnosticCode::MissingDescription,
                format!("skill `{id}` from provider `{provider}` has no description; skipped"),
            )
            .with_field("description"),
        ));
        return None;
    }
    if let Some(bytes) = body_bytes.filter(|&b| b > max_body_bytes) {
        diagnostics.push(report(Diagnostic::error(
            DiagnosticCode::FileTooLarge,
            format!(
                "skill `{id}` from provider `{provider}` has a {bytes}-byte body; skills.max_skill_file_bytes is {max_body_bytes}"
            ),
        )));
        return None;
    }
    if let Some(effort) = manifest.details().thinking_effort().map(str::to_owned) {
        let normal = effort.trim().to_ascii_lowercase();
        let known = THINKING_EFFORTS.contains(&normal.as_str());
        manifest.update_details(|d| d.thinking_effort = known.then_some(normal));
        if !known {
            diagnostics.push(report(
                Diagnostic::warning(
                    DiagnosticCode::InvalidField,
                    format!(
                        "`thinking_effort` must be one of {}, found {effort:?}; ignored",
                        THINKING_EFFORTS.join(", ")
                    ),
                )
                .with_field("thinking_effort"),
            ));
        }
    }
    if manifest.name.trim().is_empty() {
        manifest.name = id.to_string();
    }
    Some(SkillSummary {
        manifest,
        source: Arc::new(source.clone()),
        layout: SkillLayout::Provided,
        directory_override: bcode_skill_models::directory_override(&location, location.clone()),
        location: location.into(),
        body_offset: 0,
    })
}

/// `bcode-provider://<provider>` or `bcode-provider://<provider>/<id>`.
fn provider_location(provider: &str, id: Option<&SkillId>) -> PathBuf {
    match id {
        Some(id) => PathBuf::from(format!("{PROVIDER_LOCATION_SCHEME}://{provider}/{id}")),
        None => PathBuf::from(format!("{PROVIDER_LOCATION_SCHEME}://{provider}")),
    }
}

/// Runs one call into a provider, turning a panic into an error.
pub(crate) fn guarded<T>(
    provider: String,
    operation: &str,
    call: impl FnOnce() -> Result<T, SkillError>,
) -> Result<T, SkillError> {
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-string payload".to_owned());
            Err(SkillError::Provider {
                provider,
                reason: format!("panicked in `{operation}`: {message}"),
            })
        }
    }
}

impl ProviderSet {
    /// The provider serving `skill`, by the provider id its source names.
    pub(crate) fn serving(
        &self,
        skill: &SkillSummary,
    ) -> Result<(&str, &dyn SkillProvider), SkillError> {
        skill
            .source
            .provider
            .as_deref()
            .and_then(|id| self.0.get_key_value(id))
            .map(|(id, provider)| (id.as_str(), provider.as_ref()))
            .ok_or_else(|| SkillError::Load {
                id: skill.manifest.id.to_string(),
                cause: LoadCause::NoProvider {
                    source_label: skill.source.label.clone(),
                },
            })
    }
}

/// Where the files of a provider skill are named, when its provider says.
pub(crate) fn provided_base(providers: &ProviderSet, skill: &SkillSummary) -> Option<String> {
    let (name, provider) = providers.serving(skill).ok()?;
    guarded(name.to_owned(), "resource_base", || {
        Ok(provider.resource_base(&skill.manifest.id))
    })
    .ok()
    .flatten()
}

/// A supporting file of a provider skill, read through its provider and
/// bounded like a skill file.
pub(crate) fn provided_file(
    providers: &ProviderSet,
    skill: &SkillSummary,
    path: &str,
    max_bytes: usize,
) -> Result<Vec<u8>, SkillError> {
    let (name, provider) = providers.serving(skill)?;
    let bytes = guarded(name.to_owned(), "read_file", || {
        provider.read_file(&skill.manifest.id, path)
    })?;
    if bytes.len() > max_bytes {
        return Err(SkillError::Load {
            id: skill.manifest.id.to_string(),
            cause: LoadCause::ProviderBodyTooLarge {
                len: bytes.len(),
                max: max_bytes,
            },
        });
    }
    Ok(bytes)
}

/// The body of a provider skill, bounded like a skill file.
pub(crate) fn provided_body(
    providers: &ProviderSet,
    skill: &SkillSummary,
    max_bytes: usize,
) -> Result<String, SkillError> {
    let (name, provider) = providers.serving(skill)?;
    // The host does the bounding and previewing, so the provider is asked for
    // the plain body; invocation arguments are shown (and substituted) in
    // the host's block.
    let request = SkillContextRequest {
        id: skill.manifest.id.clone(),
        arguments: Vec::new(),
        raw_arguments: None,
        substitute_arguments: false,
        max_bytes: None,
        preview_max_chars: 0,
    };
    let body = guarded(name.to_owned(), "context", || provider.context(&request))?;
    if body.len() > max_bytes {
        return Err(SkillError::Load {
            id: skill.manifest.id.to_string(),
            cause: LoadCause::ProviderBodyTooLarge {
                len: body.len(),
                max: max_bytes,
            },
        });
    }
    Ok(body)
}
