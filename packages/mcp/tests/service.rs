//! `SkillService` against the SDK's own dispatch of the same server: every
//! `skills/list` page an SDK client gets is the same, a skill the SDK's
//! check refuses is left out of both (and `skills/get` names the reason),
//! and every other request is the SDK's.

#![cfg(feature = "client")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness

use crate::common;

use std::path::Path;

use bcode_skill_mcp::{SKILLS_PAGE, SkillServer, SkillService};
use rmcp::model::{GetSkillRequestParams, ReadResourceRequestParams};
use rmcp::service::{RoleClient, RunningService};
use rmcp::{Service, ServiceExt};
use serde_json::Value;

use common::registry;

fn write_skill(dir: &Path, id: &str, description: &str) {
    let folder = dir.join(id);
    std::fs::create_dir_all(folder.join("refs")).unwrap();
    std::fs::write(
        folder.join("SKILL.md"),
        format!("---\nname: {id}\ndescription: {description}\nmetadata:\n  version: \"1.0\"\n---\nBody of {id}.\n"),
    )
    .unwrap();
    std::fs::write(folder.join("refs/guide.md"), format!("Guide of {id}.\n")).unwrap();
}

/// A client session with `service`, on `runtime`.
fn connect<S: Service<rmcp::RoleServer>>(
    runtime: &tokio::runtime::Runtime,
    service: S,
) -> RunningService<RoleClient, ()> {
    runtime.block_on(async {
        let (client_io, server_io) = tokio::io::duplex(1024 * 1024);
        tokio::spawn(async move {
            let running = service.serve(server_io).await.unwrap();
            let _ = running.waiting().await;
        });
        ().serve(client_io).await.unwrap()
    })
}

/// Every page from the first, as JSON.
fn all_pages(
    runtime: &tokio::runtime::Runtime,
    client: &RunningService<RoleClient, ()>,
) -> Vec<Value> {
    runtime.block_on(async {
        let mut pages = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = cursor.clone().map(|cursor| {
                rmcp::model::PaginatedRequestParams::default().with_cursor(Some(cursor))
            });
            let page = client.list_skills(params).await.unwrap();
            cursor = page.next_cursor.clone();
            pages.push(serde_json::to_value(&page).unwrap());
            if cursor.is_none() {
                return pages;
            }
        }
    })
}

#[test]
fn pages_and_other_requests_are_the_sdks_own() {
    let tmp = tempfile::tempdir().unwrap();
    for n in 0..SKILLS_PAGE + 30 {
        write_skill(
            tmp.path(),
            &format!("s{n:03}"),
            &format!("Skill {n} <&> \"quoted\""),
        );
    }
    // Valid ids here, refused by the SEP's name rule (single internal
    // hyphens): read, checked once, and left out.
    write_skill(tmp.path(), "s050--double", "Two hyphens.");
    let registry = registry(tmp.path());
    let runtime = runtime();
    let ours = connect(&runtime, SkillService::new(SkillServer::new(&registry)));
    let sdks = connect(&runtime, SkillServer::new(&registry));

    let pages = all_pages(&runtime, &ours);
    assert_eq!(pages, all_pages(&runtime, &sdks));
    assert_eq!(pages.len(), 2);
    let uris: Vec<&str> = pages
        .iter()
        .flat_map(|page| page["skills"].as_array().unwrap())
        .map(|skill| skill["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris.len(), SKILLS_PAGE + 30);
    assert!(!uris.iter().any(|uri| uri.contains("double")));
    assert_eq!(
        pages[0]["skills"][0]["frontmatter"]["metadata"]["version"],
        "1.0"
    );

    runtime.block_on(async {
        let refused = GetSkillRequestParams::new("skill://s050--double/SKILL.md");
        let err = ours
            .get_skill(refused.clone())
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("single internal hyphens"), "{err}");
        assert_eq!(err, sdks.get_skill(refused).await.unwrap_err().to_string());
        let read = ReadResourceRequestParams::new("skill://s007/refs/guide.md");
        let text = serde_json::to_value(ours.read_resource(read.clone()).await.unwrap()).unwrap();
        assert_eq!(text["contents"][0]["text"], "Guide of s007.\n");
        let theirs = serde_json::to_value(sdks.read_resource(read).await.unwrap()).unwrap();
        assert_eq!(text, theirs);
    });
}

/// The answer lines `service` gives to `requests` (one line each, every
/// one a request), sent in a session opened by the first.
fn answers<S: Service<rmcp::RoleServer>>(
    runtime: &tokio::runtime::Runtime,
    service: S,
    requests: &[String],
) -> Vec<String> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    runtime.block_on(async {
        let (client_io, server_io) = tokio::io::duplex(1024 * 1024);
        tokio::spawn(async move {
            if let Ok(running) = service.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let (read, mut write) = tokio::io::split(client_io);
        let mut lines = BufReader::new(read).lines();
        let mut answers = Vec::new();
        for request in requests {
            write.write_all(request.as_bytes()).await.unwrap();
            write.write_all(b"\n").await.unwrap();
            answers.push(lines.next_line().await.unwrap().unwrap());
        }
        answers
    })
}

/// Issue 40's consumer opens its stdio session with `server/discover`
/// (protocol 2026-07-28): each `skills/list` carries its own `_meta`, and
/// is answered without the SDK's second check of every entry. Every
/// answer, byte for byte, is still the SDK's: the pages (with their caching
/// hints), a cursor refused, and the SDK's refusals of a request whose
/// `_meta` names a version the server does not speak or lacks a key.
#[test]
fn pages_of_a_session_opened_with_discover_are_the_sdks_own() {
    let tmp = tempfile::tempdir().unwrap();
    for n in 0..SKILLS_PAGE + 5 {
        write_skill(tmp.path(), &format!("s{n:03}"), &format!("Skill {n}"));
    }
    let registry = registry(tmp.path());
    let runtime = runtime();
    let meta = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    });
    let request = |id: u32, method: &str, mut params: Value| {
        params["_meta"] = meta.clone();
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
            .to_string()
    };
    let mut old_version = meta.clone();
    old_version["io.modelcontextprotocol/protocolVersion"] = "2099-01-01".into();
    let mut no_capabilities = meta.clone();
    no_capabilities
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let requests = [
        request(1, "server/discover", serde_json::json!({})),
        request(2, "skills/list", serde_json::json!({})),
        request(3, "skills/list", serde_json::json!({"cursor": "100"})),
        request(4, "skills/list", serde_json::json!({"cursor": "nope"})),
        serde_json::json!({"jsonrpc": "2.0", "id": 5, "method": "skills/list", "params": {"_meta": old_version}}).to_string(),
        serde_json::json!({"jsonrpc": "2.0", "id": 6, "method": "skills/list", "params": {"_meta": no_capabilities}}).to_string(),
    ];
    let ours = answers(
        &runtime,
        SkillService::new(SkillServer::new(&registry)),
        &requests,
    );
    let sdks = answers(&runtime, SkillServer::new(&registry), &requests);
    assert_eq!(ours, sdks);
    let parsed: Vec<Value> = ours
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        parsed[1]["result"]["skills"].as_array().unwrap().len(),
        SKILLS_PAGE
    );
    assert_eq!(parsed[1]["result"]["nextCursor"], "100");
    assert_eq!(parsed[1]["result"]["cacheScope"], "private");
    assert_eq!(parsed[2]["result"]["skills"].as_array().unwrap().len(), 5);
    let codes: Vec<&Value> = parsed[3..]
        .iter()
        .map(|refused| &refused["error"]["code"])
        .collect();
    assert_eq!(codes, [-32602, -32022, -32602]);
}

/// A two-thread runtime, as the stdio service gets one.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
