//! `McpProvider` over Streamable HTTP (issue 40, items 2 and 8; moved here
//! from the CLI's tests, issue 41): an entry naming `url` and `headers`,
//! against `serve_http` requiring a bearer token. A header's
//! `${env:NAME}` is taken from the spec's environment and its value never
//! shows; a server that is not there is a diagnostic, the rest loads.

#![cfg(all(feature = "client", feature = "http"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::client_spawned::{local_skills, registry_of};
use crate::server_http::Server;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use bcode_skill::{SkillProvider, SkillRegistry};
use bcode_skill_mcp::{McpEndpoint, McpProvider, McpServerSpec};
use bcode_skill_models::SkillId;
use bcode_test_support::write_tree;

const PDF: &str = "---\nname: pdf\ndescription: Reads PDFs.\nlicense: MIT\n---\nThe PDF body.\n";
const FORM: &str = "Fill the form.\n";

/// The timeout of the entries served here (a healthy answer takes
/// milliseconds; this is for a loaded machine).
const TIMEOUT_MS: u64 = 10_000;

/// A bound on building a registry: the timeout, and a margin.
const DEADLINE: Duration = Duration::from_millis(TIMEOUT_MS + 5_000);

/// The token the server requires.
const TOKEN: &str = "s3cret-token";

/// The provider of the `url` entry `name`, sending
/// `Authorization: Bearer ${env:HF_TOKEN}` with `HF_TOKEN` set to `token`
/// (unset for `None`).
fn url_provider(name: &str, url: &str, token: Option<&str>) -> Arc<McpProvider> {
    Arc::new(McpProvider::spawn(
        McpServerSpec {
            name: name.to_owned(),
            endpoint: McpEndpoint::Url {
                url: url.to_owned(),
                headers: BTreeMap::from([(
                    "Authorization".to_owned(),
                    "Bearer ${env:HF_TOKEN}".to_owned(),
                )]),
                ca_file: None,
            },
            env: token
                .map(|token| BTreeMap::from([("HF_TOKEN".to_owned(), token.to_owned())]))
                .unwrap_or_default(),
            timeout: Duration::from_millis(TIMEOUT_MS),
            allow_dynamic: true,
        },
        None,
    ))
}

/// Each skill's id with its source.
fn listed(registry: &SkillRegistry) -> Vec<(String, String)> {
    registry
        .skills()
        .map(|skill| (skill.manifest.id.to_string(), skill.source.label.clone()))
        .collect()
}

/// Each diagnostic's message.
fn messages(registry: &SkillRegistry) -> Vec<String> {
    registry
        .diagnostics()
        .iter()
        .map(|d| d.message().into_owned())
        .collect()
}

fn skills(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(id, source)| ((*id).to_owned(), (*source).to_owned()))
        .collect()
}

/// Our own server over HTTP (protocol 2026-07-28), a token required: the
/// entry's header carries it from `HF_TOKEN`; the skill is listed, its
/// body and supporting file loaded, verified. Without the variable, or
/// with a wrong token, the entry fails with a diagnostic naming the
/// variable or the refusal, never a value, and the local skill loads.
#[test]
fn our_own_server_over_http_is_consumed_with_a_token_from_the_environment() {
    let other = tempfile::tempdir().unwrap();
    write_tree(
        other.path(),
        &[("pdf/SKILL.md", PDF), ("pdf/references/FORM.md", FORM)],
    );
    let server = Server::start(other.path(), Some(TOKEN));
    let url = format!("http://{}/mcp", server.addr);
    let local = local_skills();

    let provider = url_provider("other", &url, Some(TOKEN));
    let registry = registry_of(
        local.path(),
        vec![Arc::clone(&provider) as Arc<dyn SkillProvider>],
        DEADLINE,
    );
    assert_eq!(messages(&registry), Vec::<String>::new());
    assert_eq!(
        listed(&registry),
        skills(&[("local", "repo:.bcode/skills"), ("other:pdf", "mcp:other")])
    );
    let pdf = registry.get("other:pdf").unwrap();
    assert_eq!(registry.body(pdf).unwrap(), "The PDF body.");
    let id = SkillId::namespaced("other", "pdf").unwrap();
    assert_eq!(
        provider.read_file(&id, "references/FORM.md").unwrap(),
        FORM.as_bytes()
    );

    let failed = |token: Option<&str>| {
        let registry = registry_of(
            local.path(),
            vec![url_provider("other", &url, token) as Arc<dyn SkillProvider>],
            DEADLINE,
        );
        let ids: Vec<String> = listed(&registry).into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids, ["local"]);
        let messages = messages(&registry);
        if let Some(token) = token {
            assert!(
                messages.iter().all(|message| !message.contains(token)),
                "the token shows: {messages:?}"
            );
        }
        assert_eq!(messages.len(), 1, "{messages:?}");
        messages[0].clone()
    };
    assert_eq!(
        failed(None),
        "skill provider `other` failed: MCP server `other`: the value of header `Authorization` \
         takes `${env:HF_TOKEN}`, and the environment variable HF_TOKEN is not set or empty"
    );
    assert_eq!(
        failed(Some("wrong-token-value")),
        "skill provider `other` failed: MCP server `other`: the MCP handshake over HTTP failed: \
         unexpected server response: HTTP 401 Unauthorized: the server refused the request's \
         credentials (check the entry's `headers`) (send discover request)"
    );
    drop(registry);
    drop(provider);
    server.stop().unwrap();
}

/// A server that is not there costs a diagnostic naming the entry, over
/// `http` and `https` alike; the rest loads.
#[test]
fn a_closed_port_is_a_diagnostic() {
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let local = local_skills();
    let registry = registry_of(
        local.path(),
        vec![
            url_provider("gone", &format!("http://{closed}/mcp"), Some(TOKEN))
                as Arc<dyn SkillProvider>,
            url_provider("gone-tls", &format!("https://{closed}/mcp"), Some(TOKEN)),
        ],
        DEADLINE,
    );
    assert_eq!(
        listed(&registry),
        skills(&[("local", "repo:.bcode/skills")])
    );
    assert_eq!(
        messages(&registry),
        ["gone", "gone-tls"].map(|name| format!(
            "skill provider `{name}` failed: MCP server `{name}`: the MCP handshake over HTTP failed: \
             Client error: cannot connect to {closed}: Connection refused (os error 111) (send discover request)"
        ))
    );
}
