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

/// Our own server over HTTP, requiring [`TOKEN`], serving one skill,
/// `pdf`, with two supporting files; and the folder it serves.
fn pdf_server() -> (tempfile::TempDir, Server) {
    let other = tempfile::tempdir().unwrap();
    write_tree(
        other.path(),
        &[
            ("pdf/SKILL.md", PDF),
            ("pdf/references/FORM.md", FORM),
            ("pdf/references/TABLE.md", "A table.\n"),
        ],
    );
    let server = Server::start(other.path(), Some(TOKEN));
    (other, server)
}

/// The registry of the skills in `local` and those of `provider`, which
/// all load without a diagnostic.
fn registry_with(local: &std::path::Path, provider: &Arc<McpProvider>) -> SkillRegistry {
    let registry = registry_of(
        local,
        vec![Arc::clone(provider) as Arc<dyn SkillProvider>],
        DEADLINE,
    );
    assert_eq!(messages(&registry), Vec::<String>::new());
    registry
}

/// `other:pdf`'s body and `references/FORM.md`, loaded through
/// `provider`, are what its server holds; its id.
fn pdf_loads(registry: &SkillRegistry, provider: &McpProvider) -> SkillId {
    let pdf = registry.get("other:pdf").unwrap();
    assert_eq!(registry.body(pdf).unwrap(), "The PDF body.");
    let id = SkillId::namespaced("other", "pdf").unwrap();
    assert_eq!(
        provider.read_file(&id, "references/FORM.md").unwrap(),
        FORM.as_bytes()
    );
    id
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
    let (_other, server) = pdf_server();
    let url = format!("http://{}/mcp", server.addr);
    let local = local_skills();

    let provider = url_provider("other", &url, Some(TOKEN));
    let registry = registry_with(local.path(), &provider);
    assert_eq!(
        listed(&registry),
        skills(&[("local", "repo:.bcode/skills"), ("other:pdf", "mcp:other")])
    );
    pdf_loads(&registry, &provider);

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

/// A TCP relay to `to` on a port of its own: it counts the connections
/// made to it and keeps every byte sent over them, to the server.
struct Relay {
    addr: std::net::SocketAddr,
    connections: Arc<std::sync::atomic::AtomicUsize>,
    sent: Arc<std::sync::Mutex<Vec<u8>>>,
    /// The client side of every connection, to cut them.
    clients: Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    fn start(to: std::net::SocketAddr) -> Relay {
        use std::io::{Read, Write};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let relay = Relay {
            addr: listener.local_addr().unwrap(),
            connections: Arc::default(),
            sent: Arc::default(),
            clients: Arc::default(),
        };
        let (connections, sent) = (Arc::clone(&relay.connections), Arc::clone(&relay.sent));
        let clients = Arc::clone(&relay.clients);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(mut client) = client else { break };
                connections.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                clients.lock().unwrap().push(client.try_clone().unwrap());
                let mut server = std::net::TcpStream::connect(to).unwrap();
                let (mut to_client, mut from_server) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || std::io::copy(&mut from_server, &mut to_client));
                let sent = Arc::clone(&sent);
                std::thread::spawn(move || {
                    let mut buf = [0u8; 16 * 1024];
                    while let Ok(read) = client.read(&mut buf) {
                        if read == 0 || server.write_all(&buf[..read]).is_err() {
                            break;
                        }
                        sent.lock().unwrap().extend_from_slice(&buf[..read]);
                    }
                    let _ = server.shutdown(std::net::Shutdown::Write);
                });
            }
        });
        relay
    }

    /// The HTTP requests sent through it so far (their request lines).
    fn requests(&self) -> usize {
        let sent = self.sent.lock().unwrap();
        let text = String::from_utf8_lossy(&sent);
        text.matches(" /mcp HTTP/1.1\r\n").count()
    }

    fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Closes every connection made so far, as a server closes the ones
    /// that stayed idle too long.
    fn cut(&self) {
        for client in self.clients.lock().unwrap().drain(..) {
            let _ = client.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// Requests of one consumer go over one kept connection: the handshake,
/// the listing, the body and a supporting file each reuse the connection
/// of the answer before, instead of a connection (and, over `https`, a
/// handshake) each. A kept connection the server closed is replaced: the
/// next request still gets its answer.
#[test]
fn one_connection_carries_a_consumers_requests() {
    let (_other, server) = pdf_server();
    let relay = Relay::start(server.addr);
    let provider = url_provider("other", &format!("http://{}/mcp", relay.addr), Some(TOKEN));
    let local = local_skills();
    let registry = registry_with(local.path(), &provider);
    let id = pdf_loads(&registry, &provider);
    let (requests, connections) = (relay.requests(), relay.connections());
    assert!(requests >= 4, "{requests} requests");
    assert_eq!(connections, 1, "{requests} requests");
    relay.cut();
    assert_eq!(
        provider.read_file(&id, "references/TABLE.md").unwrap(),
        b"A table.\n"
    );
    assert_eq!(relay.connections(), 2);
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
