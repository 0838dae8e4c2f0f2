//! `McpProvider` over servers it starts (moved here from the CLI's tests,
//! issue 41): each failing server (it does not start, exits, hangs,
//! answers garbage or stalls after the handshake) costs its timeout once
//! and reaches the registry as one `provider_failed` diagnostic naming it,
//! the local skill loading as before; and one bad entry of a listing costs
//! that entry alone (issue 40, item 3). The servers are `sh` scripts.

#![cfg(feature = "client")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{Discovery, DiscoveryOptions, SkillProvider, SkillRegistry};
use bcode_skill_mcp::{McpEndpoint, McpProvider, McpServerSpec, digest};
use bcode_skill_models::{DiagnosticCode, Severity};
use bcode_test_support::mcp::{fake_server, sh_quote};
use bcode_test_support::write_tree;
use serde_json::{Value, json};

/// The timeout every entry of these tests gets.
const TIMEOUT_MS: u64 = 1500;

/// The timeout of the failing servers: long enough that a listing paying
/// it twice cannot pass for one paying it once.
const FAULT_TIMEOUT_MS: u64 = 3000;

/// A generous bound on a listing that meets a failing server: its timeout
/// once, plus a process start and a discovery on a busy machine.
const DEADLINE: Duration = Duration::from_millis(FAULT_TIMEOUT_MS + 2000);

/// A server that answers the discovery (declaring the skills extension on
/// protocol 2026-07-28) late, two seconds in, and then never answers
/// again: starting and listing share one timeout, so this costs no more
/// than a silent server.
const STALLS: &str = r#"read line; sleep 2; printf '%s\n' '{"jsonrpc":"2.0","id":"bcode-discover","result":{"supportedVersions":["2026-07-28"],"capabilities":{"resources":{},"extensions":{"io.modelcontextprotocol/skills":{}}},"ttlMs":0,"cacheScope":"private","resultType":"complete"}}'; sleep 60"#;

/// A skills folder with one local skill (`local`).
pub(crate) fn local_skills() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_tree(
        dir.path(),
        &[(
            "local/SKILL.md",
            "---\nname: local\ndescription: A local skill.\n---\nLocal body.\n",
        )],
    );
    dir
}

/// Server `name` running `command` with `args`, as a
/// `[[skills.mcp_servers]]` entry without `cwd` gives it; the host's
/// `PATH` is its environment.
fn spec(name: &str, command: &str, args: &[&str], timeout_ms: u64) -> McpServerSpec {
    let env: BTreeMap<String, String> = std::env::var("PATH")
        .map(|path| BTreeMap::from([("PATH".to_owned(), path)]))
        .unwrap_or_default();
    McpServerSpec {
        name: name.to_owned(),
        endpoint: McpEndpoint::Command {
            command: command.to_owned(),
            args: args.iter().map(|arg| (*arg).to_owned()).collect(),
            dir: None,
        },
        env,
        timeout: Duration::from_millis(timeout_ms),
        allow_dynamic: true,
    }
}

/// The provider of [`spec`], without a file cache.
fn provider(name: &str, command: &str, args: &[&str], timeout_ms: u64) -> McpProvider {
    McpProvider::spawn(spec(name, command, args, timeout_ms), None)
}

/// The registry of `local` with `provider`, built on a thread of its own
/// and given up on (the test failed) past `limit`: a watchdog, not a
/// stopwatch.
fn registry_within(local: &Path, provider: McpProvider, limit: Duration) -> SkillRegistry {
    registry_of(local, vec![Arc::new(provider)], limit)
}

/// [`registry_within`] of any `providers`.
pub(crate) fn registry_of(
    local: &Path,
    providers: Vec<Arc<dyn SkillProvider>>,
    limit: Duration,
) -> SkillRegistry {
    let local = local.to_path_buf();
    let (built, registry) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let registry = Discovery::new(DiscoveryOptions::from_config(&SkillsConfig::default()))
            .build_with_providers(&[common::root(&local)], &providers);
        let _ = built.send(registry);
    });
    registry
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("the listing ran past {limit:?}"))
}

/// Each skill's id, name, description, source and location.
pub(crate) fn skills(registry: &SkillRegistry) -> Vec<Value> {
    registry
        .skills()
        .map(|skill| {
            json!({
                "id": skill.manifest.id.as_str(),
                "name": skill.manifest.name,
                "description": skill.manifest.description,
                "source": skill.source.label,
                "location": skill.location.display().to_string(),
            })
        })
        .collect()
}

pub(crate) fn local(dir: &Path) -> Value {
    json!({
        "id": "local",
        "name": "local",
        "description": "A local skill.",
        "source": "repo:.bcode/skills",
        "location": dir.join("local/SKILL.md").display().to_string(),
    })
}

/// Each failing server costs at most its timeout (once: a server that
/// answers the handshake and then hangs included), yields one
/// `provider_failed` diagnostic naming it, and the local skill loads.
#[test]
fn a_server_that_fails_costs_its_timeout_and_a_diagnostic() {
    let missing = "bcode-no-such-program";
    let cases: [(&str, &str, &[&str], &str); 5] = [
        (
            "missing",
            missing,
            &[],
            "skill provider `missing` failed: MCP server `missing`: `bcode-no-such-program` could not be started: No such file or directory (os error 2)",
        ),
        (
            "exits",
            "true",
            &[],
            "skill provider `exits` failed: MCP server `exits`: the MCP handshake with `true` failed: ",
        ),
        (
            "hangs",
            "sleep",
            &["60"],
            "skill provider `hangs` failed: MCP server `hangs`: no answer within 3000 ms (timeout_ms)",
        ),
        (
            "garbage",
            "sh",
            &["-c", "echo garbage; sleep 60"],
            "skill provider `garbage` failed: MCP server `garbage`: no answer within 3000 ms (timeout_ms)",
        ),
        (
            "stalls",
            "sh",
            &["-c", STALLS],
            "skill provider `stalls` failed: MCP server `stalls`: no answer within 3000 ms (timeout_ms)",
        ),
    ];
    // The cases run side by side: each waits on its own server's timeout,
    // so one after another they only cost the suite their sum.
    let check = |(name, command, args, message): (&str, &str, &[&str], &str)| {
        let dir = local_skills();
        // Each costs its own timeout and no more.
        let registry = registry_within(
            dir.path(),
            provider(name, command, args, FAULT_TIMEOUT_MS),
            DEADLINE,
        );
        assert_eq!(skills(&registry), [local(dir.path())], "{name}");
        let diagnostics = registry.diagnostics();
        assert_eq!(diagnostics.len(), 1, "{name}: {diagnostics:?}");
        let found = &diagnostics[0];
        assert_eq!(
            (
                found.code,
                found.severity,
                found.path.as_deref(),
                found.hint().as_deref()
            ),
            (
                DiagnosticCode::ProviderFailed,
                Severity::Error,
                Some(Path::new(&format!("bcode-provider://{name}"))),
                Some("its skills are unavailable; other skills are not affected"),
            ),
            "{name}"
        );
        let text = found.message();
        if name == "exits" {
            // The rest is the SDK's account of the broken pipe.
            assert!(text.starts_with(message), "{name}: {text}");
        } else {
            assert_eq!(text, message, "{name}");
        }
    };
    std::thread::scope(|scope| {
        let running: Vec<_> = cases
            .into_iter()
            .map(|case| scope.spawn(move || check(case)))
            .collect();
        for case in running {
            if let Err(panic) = case.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// A listing entry of the skill at `uri` whose `SKILL.md` is `body`.
fn entry(uri: &str, name: &str, description: &str, body: &str) -> Value {
    json!({
        "uri": uri,
        "frontmatter": {"name": name, "description": description},
        "resources": [{"uri": uri, "digest": digest(body.as_bytes()), "size": body.len()}],
    })
}

/// Issue 40, item 3: one bad entry costs one entry. A listing holding a
/// good skill, one whose file has no `size`, one without `resources`, one
/// of another scheme, one over the SEP's 512 files and one listed as
/// `"dynamic"`: the good and the dynamic skills load (the dynamic one said
/// to be unverified, its body read unverified), every other is left out
/// with a diagnostic naming it and why; `allow_dynamic = false` leaves the
/// dynamic one out too.
#[test]
fn one_bad_entry_costs_one_entry() {
    let dir = local_skills();
    let servers = tempfile::tempdir().unwrap();
    let ok_uri = "skill://ok/SKILL.md";
    let dyn_uri = "skill://dyn/SKILL.md";
    let ok_body = "---\nname: ok\ndescription: Loads.\n---\nThe good body.\n";
    let dyn_body = "---\nname: dyn\ndescription: Generated.\n---\nThe generated body.\n";
    let d = digest(b"x");
    let many: Vec<Value> =
        std::iter::once(json!({"uri": "skill://many/SKILL.md", "digest": d, "size": 1}))
            .chain(
                (1..513)
                    .map(|n| json!({"uri": format!("skill://many/f{n}"), "digest": d, "size": 1})),
            )
            .collect();
    let listing = json!({"resultType": "complete", "skills": [
        entry(ok_uri, "ok", "Loads.", ok_body),
        {"uri": "skill://nosize/SKILL.md", "frontmatter": {"name": "nosize", "description": "d"},
         "resources": [{"uri": "skill://nosize/SKILL.md", "digest": d}]},
        {"uri": "skill://bare/SKILL.md", "frontmatter": {"name": "bare", "description": "d"}},
        {"uri": "file:///etc/SKILL.md", "frontmatter": {"name": "etc", "description": "d"},
         "resources": [{"uri": "file:///etc/SKILL.md", "digest": d, "size": 1}]},
        {"uri": "skill://many/SKILL.md", "frontmatter": {"name": "many", "description": "d"},
         "resources": many},
        {"uri": dyn_uri, "frontmatter": {"name": "dyn", "description": "Generated."},
         "resources": "dynamic"},
    ]});
    let script = fake_server(
        servers.path(),
        "mixed",
        &format!("      printf '%s' {}", sh_quote(&listing.to_string())),
        &[(ok_uri, ok_body), (dyn_uri, dyn_body)],
    );
    let script = script.display().to_string();
    let remote = |id: &str, name: &str, description: &str| {
        json!({
            "id": id,
            "name": name,
            "description": description,
            "source": "mcp:srv",
            "location": format!("bcode-provider://srv/{id}"),
        })
    };
    let left_out = |uri: &str, why: &str| {
        json!({
            "code": "provider_failed",
            "message": format!("MCP server `srv`: its skill `{uri}` is left out: {why}"),
        })
    };
    // Both sides sorted: the registry's order is not what is tested.
    let brief = |registry: &SkillRegistry| -> Vec<String> {
        let mut brief: Vec<String> = registry
            .diagnostics()
            .iter()
            .map(|d| json!({"code": d.code.as_str(), "message": d.message()}).to_string())
            .collect();
        brief.sort();
        brief
    };
    let sorted = |expected: Vec<Value>| -> Vec<String> {
        let mut sorted: Vec<String> = expected.iter().map(Value::to_string).collect();
        sorted.sort();
        sorted
    };
    let registry = registry_within(
        dir.path(),
        provider("srv", "sh", &[&script], TIMEOUT_MS),
        DEADLINE,
    );
    assert_eq!(
        skills(&registry),
        [
            local(dir.path()),
            remote("srv:dyn", "dyn", "Generated."),
            remote("srv:ok", "ok", "Loads."),
        ]
    );
    let refused = [
        left_out(
            "skill://nosize/SKILL.md",
            "its file `skill://nosize/SKILL.md` has no `size`",
        ),
        left_out(
            "skill://bare/SKILL.md",
            "it has no `resources`, which the SEP requires (a list of its files, or \"dynamic\")",
        ),
        left_out(
            "file:///etc/SKILL.md",
            "its URI has the scheme `file`, not `skill`",
        ),
        left_out(
            "skill://many/SKILL.md",
            "it lists 513 files, more than the 512 a skill may have",
        ),
    ];
    let mut expected = refused.to_vec();
    expected.push(json!({
        "code": "invalid_field",
        "message": "MCP server `srv`: its skill `skill://dyn/SKILL.md` lists its files as \"dynamic\": no digest vouches for them, so they are loaded unverified (`allow_dynamic = false` leaves such skills out)",
    }));
    assert_eq!(brief(&registry), sorted(expected));
    let body = |id: &str| registry.body(registry.get(id).unwrap()).unwrap();
    assert_eq!(body("srv:dyn"), "The generated body.");
    assert_eq!(body("srv:ok"), "The good body.");

    let mut strict = spec("srv", "sh", &[&script], TIMEOUT_MS);
    strict.allow_dynamic = false;
    let registry = registry_within(dir.path(), McpProvider::spawn(strict, None), DEADLINE);
    assert_eq!(
        skills(&registry),
        [local(dir.path()), remote("srv:ok", "ok", "Loads.")]
    );
    let mut expected = refused.to_vec();
    expected.push(json!({
        "code": "disabled",
        "message": "MCP server `srv`: its skill `skill://dyn/SKILL.md` is left out: it lists its files as \"dynamic\", which no digest vouches for, and its entry says `allow_dynamic = false`",
    }));
    assert_eq!(brief(&registry), sorted(expected));
}
