//! Plugin-provided skills through `bcode.skill/v1`: one registry with folder
//! skills, the same precedence, catalog and context path, isolation of
//! failing and panicking providers, and invoke through a host that owns every
//! capability.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;

use bcode_prompt_config::{SkillsConfig, SkillsPromptConfig};
use bcode_skill::{
    CatalogOptions, Discovery, DiscoveryOptions, FolderProvider, HostError, PermissionDecision,
    PermissionPolicy, PermissionRequest, ProvidedSkill, SCRIPT_EXECUTE_PERMISSION,
    SKILL_INTERFACE_V1, SkillHost, SkillProvider, SkillRegistry, SourceRoot, Templates,
    format_catalog, require_permission,
};
use bcode_skill_models::{
    Diagnostic, DiagnosticCode, InvokeSkillRequest, InvokeSkillResponse, SkillContextRequest,
    SkillContextResponse, SkillDetails, SkillError, SkillId, SkillLayout, SkillManifest,
    SkillPermissionHints, SkillSource, SourceKind,
};
use serde_json::json;

fn manifest(id: &str, description: &str) -> SkillManifest {
    SkillManifest {
        name: format!("{id} (plugin)"),
        description: description.into(),
        ..SkillManifest::new(SkillId::parse(id).unwrap())
    }
    .with_details(SkillDetails {
        version: Some("1.0.0".into()),
        // Advisory: listing the script permission here must grant nothing.
        permissions: SkillPermissionHints {
            tools: vec![SCRIPT_EXECUTE_PERMISSION.into()],
            allowed_tools: vec![],
        },
        ..SkillDetails::default()
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Works,
    ListFails,
    ListPanics,
    ContextPanics,
    DescribesAnother,
    OldInterface,
}

/// A plugin serving skills from memory. Its `invoke` runs a script, which
/// needs `skill.script.execute` from the host, then a tool call.
struct Plugin {
    name: &'static str,
    mode: Mode,
    skills: Vec<ProvidedSkill>,
}

impl Plugin {
    fn new(name: &'static str, ids: &[&str]) -> Self {
        Plugin {
            name,
            mode: Mode::Works,
            skills: ids
                .iter()
                .map(|id| ProvidedSkill {
                    manifest: manifest(id, &format!("Plugin skill {id}")),
                    body_bytes: Some(body(id).len()),
                })
                .collect(),
        }
    }

    fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    fn arc(self) -> Arc<dyn SkillProvider> {
        Arc::new(self)
    }
}

fn body(id: &str) -> String {
    format!("\n# {id}\n\nServed from memory by a plugin.\n\n")
}

impl SkillProvider for Plugin {
    fn name(&self) -> &str {
        self.name
    }

    fn interface(&self) -> &str {
        if self.mode == Mode::OldInterface {
            "bcode.skill/v0"
        } else {
            SKILL_INTERFACE_V1
        }
    }

    fn list(&self) -> Result<Vec<ProvidedSkill>, SkillError> {
        match self.mode {
            Mode::ListFails => Err(SkillError::Provider {
                provider: self.name.into(),
                reason: "backend unreachable".into(),
            }),
            Mode::ListPanics => panic!("list exploded"),
            _ => Ok(self.skills.clone()),
        }
    }

    fn describe(&self, id: &SkillId) -> Result<(SkillManifest, Vec<Diagnostic>), SkillError> {
        let id = if self.mode == Mode::DescribesAnother {
            SkillId::parse("someone-else").unwrap()
        } else {
            id.clone()
        };
        Ok((
            manifest(id.as_str(), "described"),
            vec![Diagnostic::info(
                DiagnosticCode::UnknownField,
                "from the plugin",
            )],
        ))
    }

    fn context(&self, request: &SkillContextRequest) -> Result<String, SkillError> {
        if self.mode == Mode::ContextPanics {
            panic!("context exploded");
        }
        Ok(body(request.id.as_str()))
    }

    fn invoke(
        &self,
        request: &InvokeSkillRequest,
        host: &dyn SkillHost,
    ) -> Result<InvokeSkillResponse, SkillError> {
        let failed = |err: HostError| SkillError::Provider {
            provider: self.name.into(),
            reason: err.to_string(),
        };
        require_permission(
            host,
            &PermissionRequest {
                category: SCRIPT_EXECUTE_PERMISSION.into(),
                detail: format!("scripts/run.sh {}", request.arguments.join(" ")),
                skill_id: request.id.clone(),
            },
        )
        .map_err(failed)?;
        let out = host
            .call_tool("shell.run", json!({ "command": "scripts/run.sh" }))
            .map_err(failed)?;
        Ok(InvokeSkillResponse {
            id: request.id.clone(),
            output: out["stdout"].as_str().unwrap_or_default().into(),
        })
    }
}

/// A plugin that keeps the default `invoke`.
struct Quiet;

impl SkillProvider for Quiet {
    fn name(&self) -> &str {
        "quiet"
    }
    fn list(&self) -> Result<Vec<ProvidedSkill>, SkillError> {
        Ok(vec![ProvidedSkill {
            manifest: manifest("quiet-skill", "Prompt only"),
            body_bytes: None,
        }])
    }
    fn describe(&self, id: &SkillId) -> Result<(SkillManifest, Vec<Diagnostic>), SkillError> {
        Ok((manifest(id.as_str(), "Prompt only"), vec![]))
    }
    fn context(&self, _: &SkillContextRequest) -> Result<String, SkillError> {
        Ok("quiet".into())
    }
}

/// A host that answers permission requests from a policy and records every
/// request and tool call.
struct FakeHost {
    policy: PermissionPolicy,
    asked: RefCell<Vec<PermissionRequest>>,
    calls: RefCell<Vec<(String, serde_json::Value)>>,
}

impl FakeHost {
    fn new(policy: PermissionPolicy) -> Self {
        FakeHost {
            policy,
            asked: RefCell::default(),
            calls: RefCell::default(),
        }
    }
}

impl SkillHost for FakeHost {
    fn call_tool(
        &self,
        tool: &str,
        args: serde_json::Value,
    ) -> Result<serde_json::Value, HostError> {
        self.calls.borrow_mut().push((tool.into(), args));
        Ok(json!({ "stdout": "ran" }))
    }

    fn request_permission(&self, request: &PermissionRequest) -> PermissionDecision {
        self.asked.borrow_mut().push(request.clone());
        self.policy.decide(&request.category)
    }
}

const FOLDER_SKILLS: &[(&str, &str)] = &[
    (
        "shared/SKILL.md",
        "---\ndescription: The folder version wins\n---\nFolder body.\n",
    ),
    (
        "folder-only/SKILL.md",
        "---\ndescription: Only in the folder\n---\nFolder only.\n",
    ),
];

fn folder_root(dir: &Path) -> SourceRoot {
    support::root(SourceKind::RepoBcode, "repo:.bcode/skills", dir)
}

fn build(roots: &[SourceRoot], providers: &[Arc<dyn SkillProvider>]) -> SkillRegistry {
    Discovery::new(DiscoveryOptions::from_config(&SkillsConfig::default()))
        .build_with_providers(roots, providers)
}

fn request(id: &str) -> SkillContextRequest {
    SkillContextRequest {
        id: SkillId::parse(id).unwrap(),
        arguments: vec!["now".into()],
        raw_arguments: None,
        substitute_arguments: true,
        max_bytes: None,
        preview_max_chars: 2000,
    }
}

#[test]
fn plugin_skills_share_registry_precedence_and_catalog() {
    let dir = tempfile::tempdir().unwrap();
    support::write_tree(dir.path(), FOLDER_SKILLS);
    let registry = build(
        &[folder_root(dir.path())],
        &[Plugin::new("acme", &["shared", "plugin-only"]).arc()],
    );
    assert_eq!(
        support::report(&registry, dir.path()),
        "skill folder-only name=\"folder-only\" <repo:.bcode/skills> [ROOT]/folder-only/SKILL.md\n\
         skill plugin-only name=\"plugin-only (plugin)\" <bundled:acme> bcode-provider://acme/plugin-only\n\
         skill shared name=\"shared\" <repo:.bcode/skills> [ROOT]/shared/SKILL.md\n\
         info shadowed bcode-provider://acme/shared skill `shared` from bundled:acme is shadowed by the one from repo:.bcode/skills at `[ROOT]/shared/SKILL.md`\n"
    );
    let plugin = registry.get("plugin-only").unwrap();
    assert_eq!(
        (plugin.layout, &*plugin.source),
        (
            SkillLayout::Provided,
            &SkillSource {
                kind: SourceKind::Bundled,
                label: "bundled:acme".into(),
                ordinal: 0,
                root: None,
                provider: Some("acme".into()),
            }
        )
    );

    let prompt = SkillsPromptConfig::default();
    let catalog = format_catalog(
        registry.skills().filter(|s| {
            s.manifest.id.as_str() != "folder-only" && s.manifest.id.as_str() != "shared"
        }),
        CatalogOptions {
            prompt: &prompt,
            user_skills_enabled: false,
        },
        &Templates::builtin(),
    )
    .unwrap();
    assert_eq!(
        catalog.text,
        "The following Bcode skills provide specialized instructions for specific tasks.\n\
         Use available Bcode filesystem/document tools to load a skill file when the task matches its description.\n\
         When a skill file references a relative path, resolve it against the skill directory.\n\
         \n\
         <available_skills>\n  \
           <skill>\n    \
             <id>plugin-only</id>\n    \
             <name>plugin-only (plugin)</name>\n    \
             <description>Plugin skill plugin-only</description>\n    \
             <location>bcode-provider://acme/plugin-only</location>\n    \
             <source>bundled:acme</source>\n  \
           </skill>\n\
         </available_skills>"
    );
}

#[test]
fn context_is_routed_to_the_provider_and_framed_by_the_host() {
    let dir = tempfile::tempdir().unwrap();
    support::write_tree(dir.path(), FOLDER_SKILLS);
    let registry = build(
        &[folder_root(dir.path())],
        &[Plugin::new("acme", &["shared", "plugin-only"]).arc()],
    );
    let templates = Templates::builtin();
    let text = "<skill id=\"plugin-only\" name=\"plugin-only (plugin)\" location=\"bcode-provider://acme/plugin-only\">\n\
                References are relative to bcode-provider://acme/plugin-only.\n\
                Source label: bundled:acme\n\
                Version: 1.0.0\n\
                Invocation arguments: now\n\
                \n\
                # plugin-only\n\
                \n\
                Served from memory by a plugin.\n\
                </skill>";
    assert_eq!(
        registry
            .context(&request("plugin-only"), &templates)
            .unwrap(),
        SkillContextResponse {
            id: SkillId::parse("plugin-only").unwrap(),
            source: (*registry.get("plugin-only").unwrap().source).clone(),
            location: Some("bcode-provider://acme/plugin-only".into()),
            text: text.into(),
            bytes: text.len(),
            truncated: false,
            truncation: None,
            preview: "# plugin-only\n\nServed from memory by a plugin.".into(),
        }
    );
    // The shadowing folder skill is served from its file, not the plugin.
    let shared = registry.context(&request("shared"), &templates).unwrap();
    assert_eq!(shared.preview, "Folder body.");
}

#[test]
fn failing_and_panicking_providers_are_isolated() {
    let dir = tempfile::tempdir().unwrap();
    support::write_tree(dir.path(), FOLDER_SKILLS);
    let registry = build(
        &[folder_root(dir.path())],
        &[
            Plugin::new("broken", &["lost-a"])
                .with_mode(Mode::ListFails)
                .arc(),
            Plugin::new("crashy", &["lost-b"])
                .with_mode(Mode::ListPanics)
                .arc(),
            Plugin::new("good", &["kept"]).arc(),
        ],
    );
    assert_eq!(
        support::report(&registry, dir.path()),
        "skill folder-only name=\"folder-only\" <repo:.bcode/skills> [ROOT]/folder-only/SKILL.md\n\
         skill kept name=\"kept (plugin)\" <bundled:good> bcode-provider://good/kept\n\
         skill shared name=\"shared\" <repo:.bcode/skills> [ROOT]/shared/SKILL.md\n\
         error provider_failed bcode-provider://broken skill provider `broken` failed: backend unreachable | its skills are unavailable; other skills are not affected\n\
         error provider_failed bcode-provider://crashy skill provider `crashy` failed: panicked in `list`: list exploded | its skills are unavailable; other skills are not affected\n"
    );
    // Ranks follow the order providers were given.
    assert_eq!(registry.get("kept").unwrap().source.ordinal, 2);
}

#[test]
fn a_panic_while_loading_a_body_is_an_error_for_that_skill() {
    let registry = build(
        &[],
        &[Plugin::new("crashy", &["boom"])
            .with_mode(Mode::ContextPanics)
            .arc()],
    );
    assert_eq!(
        registry.context(&request("boom"), &Templates::builtin()),
        Err(SkillError::Provider {
            provider: "crashy".into(),
            reason: "panicked in `context`: context exploded".into(),
        })
    );
}

#[test]
fn entries_and_providers_are_checked_one_by_one() {
    let mut plugin = Plugin::new("acme", &["good", "twice", "twice"]);
    let mut no_description = manifest("no-description", "  ");
    no_description.update_details(|d| d.thinking_effort = Some("High".into()));
    plugin.skills.push(ProvidedSkill {
        manifest: no_description,
        body_bytes: None,
    });
    let mut odd_effort = manifest("odd-effort", "Has an unknown effort");
    odd_effort.update_details(|d| d.thinking_effort = Some("ludicrous".into()));
    plugin.skills.push(ProvidedSkill {
        manifest: odd_effort,
        body_bytes: None,
    });
    let mut normal_effort = manifest("normal-effort", "Effort spelled loosely");
    normal_effort.update_details(|d| d.thinking_effort = Some(" HIGH ".into()));
    normal_effort.name = String::new();
    plugin.skills.push(ProvidedSkill {
        manifest: normal_effort,
        body_bytes: None,
    });
    plugin.skills.push(ProvidedSkill {
        manifest: manifest("huge", "Too big"),
        body_bytes: Some(usize::MAX),
    });
    let registry = build(
        &[],
        &[
            plugin.arc(),
            Plugin::new("acme", &["again"]).arc(),
            Plugin::new("Bad Name", &["x"]).arc(),
            Plugin::new("old", &["y"])
                .with_mode(Mode::OldInterface)
                .arc(),
        ],
    );
    assert_eq!(
        support::report(&registry, Path::new("/nonexistent")),
        "skill good name=\"good (plugin)\" <bundled:acme> bcode-provider://acme/good\n\
         skill normal-effort name=\"normal-effort\" <bundled:acme> bcode-provider://acme/normal-effort\n\
         skill odd-effort name=\"odd-effort (plugin)\" <bundled:acme> bcode-provider://acme/odd-effort\n\
         skill twice name=\"twice (plugin)\" <bundled:acme> bcode-provider://acme/twice\n\
         error provider_failed  skill provider name \"Bad Name\" is not valid | use lowercase letters, digits and hyphens\n\
         error provider_failed bcode-provider://acme a skill provider named `acme` is already registered; this one is ignored\n\
         error file_too_large bcode-provider://acme/huge skill `huge` from provider `acme` has a 18446744073709551615-byte body; skills.max_skill_file_bytes is 262144\n\
         error missing_description bcode-provider://acme/no-description [description] skill `no-description` from provider `acme` has no description; skipped\n\
         warning invalid_field bcode-provider://acme/odd-effort [thinking_effort] `thinking_effort` must be one of none, minimal, low, medium, high, xhigh, found \"ludicrous\"; ignored\n\
         warning duplicate_id bcode-provider://acme/twice [id] skill provider `acme` lists `twice` more than once; the first entry wins\n\
         error provider_failed bcode-provider://old skill provider `old` implements `bcode.skill/v0`; this host speaks `bcode.skill/v1`\n"
    );
    assert_eq!(
        registry
            .get("normal-effort")
            .unwrap()
            .manifest
            .details()
            .thinking_effort(),
        Some("high")
    );
    assert_eq!(
        registry
            .get("odd-effort")
            .unwrap()
            .manifest
            .details()
            .thinking_effort(),
        None
    );
    // Every per-skill diagnostic names its skill.
    let twice = registry.get("twice").unwrap();
    assert_eq!(
        registry
            .diagnostics_for(twice)
            .iter()
            .map(|d| (d.code, d.skill_id().map(str::to_owned)))
            .collect::<Vec<_>>(),
        vec![(DiagnosticCode::DuplicateId, Some("twice".into()))]
    );
}

#[test]
fn describe_is_routed_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    support::write_tree(dir.path(), FOLDER_SKILLS);
    let registry = build(
        &[folder_root(dir.path())],
        &[
            Plugin::new("acme", &["plugin-only"]).arc(),
            Plugin::new("liar", &["lies"])
                .with_mode(Mode::DescribesAnother)
                .arc(),
        ],
    );
    assert_eq!(
        registry.describe("plugin-only").unwrap(),
        (
            manifest("plugin-only", "described"),
            vec![Diagnostic::info(
                DiagnosticCode::UnknownField,
                "from the plugin"
            )]
        )
    );
    assert_eq!(
        registry.describe("folder-only").unwrap(),
        (
            registry.get("folder-only").unwrap().manifest.clone(),
            vec![]
        )
    );
    assert_eq!(
        registry.describe("lies"),
        Err(SkillError::Provider {
            provider: "liar".into(),
            reason: "describe(`lies`) returned the manifest of `someone-else`".into(),
        })
    );
    assert_eq!(
        registry.describe("missing"),
        Err(SkillError::NotFound {
            id: "missing".into(),
            suggestion: None,
        })
    );
}

fn invoke_request(id: &str) -> InvokeSkillRequest {
    InvokeSkillRequest {
        id: SkillId::parse(id).unwrap(),
        arguments: vec!["--fast".into()],
    }
}

fn script_request(id: &str) -> PermissionRequest {
    PermissionRequest {
        category: "skill.script.execute".into(),
        detail: "scripts/run.sh --fast".into(),
        skill_id: SkillId::parse(id).unwrap(),
    }
}

#[test]
fn invoke_asks_for_script_permission_and_stops_when_denied() {
    let dir = tempfile::tempdir().unwrap();
    support::write_tree(dir.path(), FOLDER_SKILLS);
    let registry = build(
        &[folder_root(dir.path())],
        &[Plugin::new("acme", &["runner"]).arc(), Arc::new(Quiet)],
    );

    let mut deny = PermissionPolicy::default();
    deny.set(SCRIPT_EXECUTE_PERMISSION, PermissionDecision::Deny);
    let host = FakeHost::new(deny);
    assert_eq!(
        registry.invoke(&invoke_request("runner"), &host),
        Err(SkillError::Provider {
            provider: "acme".into(),
            reason: "permission `skill.script.execute` was denied".into(),
        })
    );
    assert_eq!(host.asked.borrow().clone(), vec![script_request("runner")]);
    assert_eq!(host.calls.borrow().clone(), vec![]);

    // The default policy asks; an unanswered ask is not a grant, whatever
    // the manifest's advisory permissions say.
    let host = FakeHost::new(PermissionPolicy::default());
    assert_eq!(
        registry.invoke(&invoke_request("runner"), &host),
        Err(SkillError::Provider {
            provider: "acme".into(),
            reason:
                "permission `skill.script.execute` needs the user's approval, which was not given"
                    .into(),
        })
    );
    assert_eq!(host.calls.borrow().clone(), vec![]);

    let mut allow = PermissionPolicy::default();
    allow.set(SCRIPT_EXECUTE_PERMISSION, PermissionDecision::Allow);
    let host = FakeHost::new(allow);
    assert_eq!(
        registry.invoke(&invoke_request("runner"), &host),
        Ok(InvokeSkillResponse {
            id: SkillId::parse("runner").unwrap(),
            output: "ran".into(),
        })
    );
    assert_eq!(host.asked.borrow().clone(), vec![script_request("runner")]);
    assert_eq!(
        host.calls.borrow().clone(),
        vec![("shell.run".into(), json!({ "command": "scripts/run.sh" }))]
    );

    // Folder skills and providers without invoke do not support it.
    let host = FakeHost::new(PermissionPolicy::default());
    assert_eq!(
        registry.invoke(&invoke_request("folder-only"), &host),
        Err(SkillError::InvokeUnsupported {
            id: "folder-only".into()
        })
    );
    assert_eq!(
        registry.invoke(&invoke_request("quiet-skill"), &host),
        Err(SkillError::InvokeUnsupported {
            id: "quiet-skill".into()
        })
    );
    assert_eq!(host.asked.borrow().clone(), vec![]);
}

#[test]
fn the_default_policy_asks_for_everything() {
    let policy = PermissionPolicy::default();
    assert_eq!(
        (
            policy.decide(SCRIPT_EXECUTE_PERMISSION),
            policy.decide("shell.run")
        ),
        (PermissionDecision::Ask, PermissionDecision::Ask)
    );
    assert_eq!(SCRIPT_EXECUTE_PERMISSION, "skill.script.execute");
    assert_eq!(SKILL_INTERFACE_V1, "bcode.skill/v1");
}

#[test]
fn folder_skills_speak_the_same_interface() {
    let dir = tempfile::tempdir().unwrap();
    support::write_tree(dir.path(), FOLDER_SKILLS);
    let registry = build(&[folder_root(dir.path())], &[]);
    let provider = FolderProvider::new(registry.clone());
    assert_eq!(
        provider
            .list()
            .unwrap()
            .into_iter()
            .map(|p| (p.manifest.id.to_string(), p.body_bytes))
            .collect::<Vec<_>>(),
        vec![("folder-only".into(), None), ("shared".into(), None)]
    );
    assert_eq!(
        provider.context(&request("shared")),
        Ok("Folder body.".into())
    );
    assert_eq!(
        provider.describe(&SkillId::parse("shared").unwrap()),
        Ok((registry.get("shared").unwrap().manifest.clone(), vec![]))
    );
    assert_eq!(
        provider.context(&request("missing")),
        Err(SkillError::NotFound {
            id: "missing".into(),
            suggestion: None,
        })
    );
}

#[test]
fn live_reload_keeps_provider_skills() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("folder-skill")).unwrap();
    std::fs::write(
        tmp.path().join("folder-skill/SKILL.md"),
        "---\ndescription: on disk\n---\n",
    )
    .unwrap();
    let roots = vec![bcode_skill::SourceRoot {
        source: bcode_skill_models::SkillSource {
            kind: bcode_skill_models::SourceKind::RepoBcode,
            label: "repo:.bcode/skills".into(),
            ordinal: 0,
            root: None,
            provider: None,
        },
        path: tmp.path().to_path_buf(),
        repository: None,
        owner_check: None,
    }];
    let (mut live, first) = bcode_skill::LiveRegistry::with_providers(
        bcode_skill::DiscoveryOptions::from_config(&bcode_prompt_config::SkillsConfig::default()),
        roots,
        vec![Plugin::new("acme", &["from-plugin"]).arc()],
    );
    let ids = |r: &bcode_skill::SkillRegistry| r.ids().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(ids(&first), ["folder-skill", "from-plugin"]);
    let refreshed = live.begin_turn().unwrap();
    assert_eq!(ids(&refreshed.registry), ["folder-skill", "from-plugin"]);
    assert_eq!(
        refreshed.registry.get("from-plugin").unwrap().source.label,
        "bundled:acme"
    );
}
