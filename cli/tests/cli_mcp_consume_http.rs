//! Consuming skills over MCP's Streamable HTTP (issue 40, items 2 and 8):
//! a `[[skills.mcp_servers]]` entry naming `url` and `headers` instead of
//! `command`. Against a server of the 2025-11-25 era written here
//! (`initialize`, a session, answers as an event stream), and against
//! FastMCP 4.1.6's skills server over HTTP when its Python is set up. A
//! header's `${env:NAME}` is taken from the environment and its value never
//! shows; an `https` URL is reached over TLS (a loopback TLS server with a
//! certificate authority made at test time), its certificate always
//! checked; an untrusted repository cannot add a URL entry. Against our own
//! `serve_http`, and a closed port: `packages/mcp/tests/client_over_http.rs`.

#![cfg(feature = "mcp")]
// Helpers outside `#[test]` functions are test code too; clippy's
// allow-*-in-tests settings only cover `#[test]` items and `cfg(test)`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Sandbox, digest, ok, write};
use serde_json::{Value, json};

const PDF: &str = "---\nname: pdf\ndescription: Reads PDFs.\nlicense: MIT\n---\nThe PDF body.\n";
const FORM: &str = "Fill the form.\n";

/// The timeout of the entries served here (a healthy answer takes
/// milliseconds; this is for a loaded machine).
const TIMEOUT_MS: u64 = 10_000;

/// The token the servers require.
const TOKEN: &str = "s3cret-token";

/// A running server whose child is killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A sandbox with one local skill and `entry` as the user's config.
fn consumer(entry: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/local/SKILL.md"),
        "---\nname: local\ndescription: A local skill.\n---\nLocal body.\n",
    );
    write(&sandbox.home.join(".config/bcode/bcode.toml"), entry);
    sandbox
}

/// One `url` entry sending `Authorization: Bearer ${env:HF_TOKEN}`.
fn url_entry(name: &str, url: &str, timeout_ms: u64) -> String {
    format!(
        "[[skills.mcp_servers]]\nname = {}\nurl = {}\n\
         headers = {{ Authorization = \"Bearer ${{env:HF_TOKEN}}\" }}\ntimeout_ms = {timeout_ms}\n",
        Value::from(name),
        Value::from(url),
    )
}

/// `args` run in the sandbox with `HF_TOKEN` set to `token` (unset for
/// `None`).
fn run(sandbox: &Sandbox, token: Option<&str>, args: &[&str]) -> Output {
    let mut command = sandbox.command();
    if let Some(token) = token {
        command.env("HF_TOKEN", token);
    }
    command.args(args).output().unwrap()
}

/// `skills list --json` as `(ids with their sources, diagnostics' messages)`.
fn list(sandbox: &Sandbox, token: Option<&str>) -> (Vec<(String, String)>, Vec<String>) {
    let listing: Value =
        serde_json::from_str(&ok(run(sandbox, token, &["skills", "list", "--json"]))).unwrap();
    let skills = listing["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| {
            (
                skill["id"].as_str().unwrap().to_owned(),
                skill["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let diagnostics = listing["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap().to_owned())
        .collect();
    (skills, diagnostics)
}

fn skills(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(id, source)| ((*id).to_owned(), (*source).to_owned()))
        .collect()
}

/// A certificate authority made for one test, and a server certificate it
/// signed for `localhost` only (not `127.0.0.1`).
struct TestPki {
    /// The authority's certificate, PEM.
    ca_pem: String,
    /// A server configuration presenting the certificate.
    server: Arc<rustls::ServerConfig>,
}

fn test_pki() -> TestPki {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
        KeyPair, KeyUsagePurpose,
    };
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "Bcode test CA");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let mut leaf = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    leaf.distinguished_name
        .push(DnType::CommonName, "localhost");
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let leaf_cert = leaf.signed_by(&leaf_key, &issuer).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
    let server = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![leaf_cert.der().clone(), ca_cert.der().clone()], key)
    .unwrap();
    TestPki {
        ca_pem: ca_cert.pem(),
        server: Arc::new(server),
    }
}

/// [`url_entry`] with `ca_file` naming `ca_file`.
fn tls_entry(name: &str, url: &str, ca_file: Option<&str>) -> String {
    let mut entry = url_entry(name, url, TIMEOUT_MS);
    if let Some(ca_file) = ca_file {
        entry.push_str(&format!("ca_file = {}\n", Value::from(ca_file)));
    }
    entry
}

/// Over `https`, the server of the 2025-11-25 era serving TLS with a
/// certificate of a private authority, which the entry's `ca_file` (a path
/// relative to the config file) adds to the built-in roots: the skill is
/// listed and its body read, every request over TLS with the token.
#[test]
fn an_https_server_is_consumed_with_a_root_from_ca_file() {
    let pki = test_pki();
    let seen: Seen = Arc::default();
    let addr = serve_legacy(seen.clone(), Some(pki.server.clone()));
    let sandbox = consumer(&tls_entry(
        "secure",
        &format!("https://localhost:{}/mcp", addr.port()),
        Some("certs/test-ca.pem"),
    ));
    write(
        &sandbox.home.join(".config/bcode/certs/test-ca.pem"),
        &pki.ca_pem,
    );
    let (listed, diagnostics) = list(&sandbox, Some(TOKEN));
    assert_eq!(diagnostics, Vec::<String>::new());
    assert_eq!(
        listed,
        skills(&[
            ("local", "repo:.bcode/skills"),
            ("secure:pdf", "mcp:secure")
        ])
    );
    let block = ok(run(
        &sandbox,
        Some(TOKEN),
        &["skills", "context", "secure:pdf"],
    ));
    assert_eq!(
        block,
        "<skill id=\"secure:pdf\" name=\"pdf\" location=\"bcode-provider://secure/secure:pdf\">\n\
         References are relative to skill://pdf/.\n\
         Source label: mcp:secure\n\
         \n\
         The PDF body.\n\
         </skill>\n"
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(methods(&seen), OLDER_ERA_LIST_THEN_READ);
    let bearer = format!("Bearer {TOKEN}");
    assert!(seen.iter().all(|(_, auth, ..)| *auth == bearer), "{seen:?}");
}

/// A certificate no known root vouches for, one that does not name the
/// URL's host, and a `ca_file` that is missing or holds no certificate:
/// each entry is refused with a diagnostic naming it and why, before any
/// request (the server reads none of theirs, so no token is sent), and the
/// other entries load.
#[test]
fn an_untrusted_or_misnamed_certificate_is_refused_and_the_rest_loads() {
    let pki = test_pki();
    let seen: Seen = Arc::default();
    let addr = serve_legacy(seen.clone(), Some(pki.server.clone()));
    let port = addr.port();
    let by_name = format!("https://localhost:{port}/mcp");
    let by_address = format!("https://127.0.0.1:{port}/mcp");
    let entries = [
        tls_entry("good", &by_name, Some("test-ca.pem")),
        tls_entry("untrusted", &by_name, None),
        tls_entry("misnamed", &by_address, Some("test-ca.pem")),
        tls_entry("missing", &by_name, Some("missing.pem")),
        tls_entry("notpem", &by_name, Some("notpem.pem")),
    ]
    .concat();
    let sandbox = consumer(&entries);
    let config = sandbox.home.join(".config/bcode");
    write(&config.join("test-ca.pem"), &pki.ca_pem);
    write(&config.join("notpem.pem"), "not a certificate\n");
    let (listed, diagnostics) = list(&sandbox, Some(TOKEN));
    assert_eq!(
        listed,
        skills(&[("good:pdf", "mcp:good"), ("local", "repo:.bcode/skills")])
    );
    let config = config.display();
    assert_eq!(
        diagnostics,
        [
            "skill provider `misnamed` failed: MCP server `misnamed`: the MCP handshake over HTTP \
             failed: Client error: TLS with 127.0.0.1:PORT failed: the server's certificate is not \
             valid for the URL's host (certificate not valid for name \"127.0.0.1\"; certificate \
             is only valid for DnsName(\"localhost\")) (send discover request)"
                .replace("PORT", &port.to_string()),
            format!(
                "skill provider `missing` failed: MCP server `missing`: its `ca_file` \
                 {config}/missing.pem cannot be read: No such file or directory (os error 2)"
            ),
            format!(
                "skill provider `notpem` failed: MCP server `notpem`: its `ca_file` \
                 {config}/notpem.pem holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)"
            ),
            "skill provider `untrusted` failed: MCP server `untrusted`: the MCP handshake over \
             HTTP failed: Client error: TLS with localhost:PORT failed: the server's certificate \
             is not trusted: no root it chains to is known (unknown issuer; an entry's `ca_file` \
             can add the root of a private server) (send discover request)"
                .replace("PORT", &port.to_string()),
        ]
    );
    let methods: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(method, ..)| method.clone())
        .filter(|method| method != "DELETE")
        .collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "skills/list"
        ]
    );
}

/// An untrusted repository's URL entry is ignored with the usual warning,
/// and nothing connects to its server.
#[test]
fn an_untrusted_repositorys_url_entry_is_ignored() {
    let sandbox = consumer("");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    write(
        &sandbox.repo.join(".bcode/bcode.toml"),
        &url_entry("evil", &format!("http://{addr}/mcp"), TIMEOUT_MS),
    );
    let out = run(&sandbox, Some(TOKEN), &["skills", "list", "--json"]);
    let stderr = common::lossy(&out.stderr);
    let listing: Value = serde_json::from_str(&ok(out)).unwrap();
    assert_eq!(listing["skills"].as_array().unwrap().len(), 1);
    assert_eq!(listing["diagnostics"], json!([]));
    assert!(
        stderr.contains(
            "ignored: it starts programs or sends the user's headers to servers (the MCP servers whose skills it would add); the repository is not trusted"
        ) && stderr.contains("skills.mcp_servers"),
        "{stderr}"
    );
    assert!(
        listener.accept().is_err(),
        "the repository's server was reached"
    );
}

/// One request the legacy server read: method (or HTTP verb), its
/// `Authorization`, `Mcp-Session-Id` and `MCP-Protocol-Version`.
type Seen = Arc<Mutex<Vec<(String, String, String, String)>>>;

/// What a server of the older era sees of a listing run and a reading
/// run: each run discovers (refused), initializes, says initialized, then
/// makes its request in the session.
const OLDER_ERA_LIST_THEN_READ: [&str; 9] = [
    "server/discover",
    "initialize",
    "notifications/initialized",
    "skills/list",
    "server/discover",
    "initialize",
    "notifications/initialized",
    "skills/list",
    "resources/read",
];

/// The methods `seen` in order, without the sessions' ends (a `DELETE`
/// may or may not follow a run).
fn methods(seen: &[(String, String, String, String)]) -> Vec<&str> {
    seen.iter()
        .map(|(method, ..)| method.as_str())
        .filter(|method| *method != "DELETE")
        .collect()
}

/// A server of the 2025-11-25 era over HTTP, in a thread: it requires
/// [`TOKEN`], answers `server/discover` with HTTP 400 and "method not
/// found", `initialize` with a session, `skills/list` as an event stream
/// and `resources/read` as JSON, each request in the session; a `GET`
/// stream it does not offer (405). At `/echo` it answers every request
/// with HTTP 400 and the `Authorization` it was sent.
fn legacy_server(seen: Seen) -> SocketAddr {
    serve_legacy(seen, None)
}

/// [`legacy_server`], over TLS with `tls` when given.
fn serve_legacy(seen: Seen, tls: Option<Arc<rustls::ServerConfig>>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let body = PDF;
    let listing = json!({"skills": [{
        "uri": "skill://pdf/SKILL.md",
        "frontmatter": {"name": "pdf", "description": "Reads PDFs.", "license": "MIT"},
        "resources": [{"uri": "skill://pdf/SKILL.md", "digest": digest(body.as_bytes()), "size": body.len()}],
    }]});
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let seen = seen.clone();
            let listing = listing.clone();
            let tls = tls.clone();
            std::thread::spawn(move || {
                stream
                    .set_read_timeout(Some(Duration::from_secs(30)))
                    .unwrap();
                match tls {
                    None => answer(stream, &seen, &listing),
                    Some(tls) => {
                        let connection = rustls::ServerConnection::new(tls).unwrap();
                        answer(
                            rustls::StreamOwned::new(connection, stream),
                            &seen,
                            &listing,
                        );
                    }
                }
            });
        }
    });
    addr
}

/// Reads one request from `stream` and answers it as [`legacy_server`] says.
/// A TLS handshake the client refuses ends it at the first read.
fn answer<S: Read + Write>(stream: S, seen: &Seen, listing: &Value) {
    let mut reader = BufReader::new(stream);
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
        head.push(line.trim_end().to_owned());
    }
    let header = |name: &str| {
        head.iter()
            .find_map(|line| {
                let (key, value) = line.split_once(':')?;
                key.eq_ignore_ascii_case(name)
                    .then(|| value.trim().to_owned())
            })
            .unwrap_or_default()
    };
    let verb = head[0].split(' ').next().unwrap().to_owned();
    let length: usize = header("content-length").parse().unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = request["method"]
        .as_str()
        .map_or(verb.clone(), str::to_owned);
    seen.lock().unwrap().push((
        method.clone(),
        header("authorization"),
        header("mcp-session-id"),
        header("mcp-protocol-version"),
    ));
    let id = &request["id"];
    let reply = |status: &str, headers: &str, text: &str| {
        format!(
            "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        )
    };
    let json = |value: Value| {
        reply(
            "200 OK",
            "Content-Type: application/json\r\n",
            &value.to_string(),
        )
    };
    let path = head[0].split(' ').nth(1).unwrap_or_default();
    let out = if header("authorization") != format!("Bearer {TOKEN}") {
        reply("401 Unauthorized", "", "no")
    } else if path == "/echo" {
        reply(
            "400 Bad Request",
            "Content-Type: text/plain\r\n",
            &format!("you sent {}", header("authorization")),
        )
    } else if verb != "POST" {
        reply("405 Method Not Allowed", "", "")
    } else if method != "server/discover"
        && method != "initialize"
        && header("mcp-session-id") != "sess-1"
    {
        reply("400 Bad Request", "", "no session")
    } else {
        match method.as_str() {
            "server/discover" => reply(
                "400 Bad Request",
                "Content-Type: application/json\r\n",
                &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}).to_string(),
            ),
            "initialize" => reply(
                "200 OK",
                "Content-Type: application/json\r\nMcp-Session-Id: sess-1\r\n",
                &json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"resources": {}, "extensions": {"io.modelcontextprotocol/skills": {}}},
                    "serverInfo": {"name": "legacy", "version": "1"},
                }})
                .to_string(),
            ),
            "notifications/initialized" => reply("202 Accepted", "", ""),
            "skills/list" => {
                let message = json!({"jsonrpc": "2.0", "id": id, "result": listing});
                reply(
                    "200 OK",
                    "Content-Type: text/event-stream\r\n",
                    &format!(": a comment\n\nevent: message\ndata: {message}\n\n"),
                )
            }
            "resources/read" => json(json!({"jsonrpc": "2.0", "id": id, "result": {
                "contents": [{"uri": "skill://pdf/SKILL.md", "text": PDF}],
            }})),
            _ if id.is_null() => reply("202 Accepted", "", ""),
            _ => json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})),
        }
    };
    let stream = reader.get_mut();
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.flush();
}

/// A server of the 2025-11-25 era over HTTP: `server/discover` refused,
/// the consumer falls back to `initialize`, keeps the session, reads the
/// listing from an event stream and the body as JSON; every request
/// carries the token.
#[test]
fn a_server_of_the_2025_era_over_http_is_consumed_in_its_session() {
    let seen: Seen = Arc::default();
    let addr = legacy_server(seen.clone());
    let sandbox = consumer(&url_entry("old", &format!("http://{addr}/mcp"), TIMEOUT_MS));
    let (listed, diagnostics) = list(&sandbox, Some(TOKEN));
    assert_eq!(diagnostics, Vec::<String>::new());
    assert_eq!(
        listed,
        skills(&[("local", "repo:.bcode/skills"), ("old:pdf", "mcp:old")])
    );
    let block = ok(run(
        &sandbox,
        Some(TOKEN),
        &["skills", "context", "old:pdf"],
    ));
    assert!(block.ends_with("\nThe PDF body.\n</skill>\n"), "{block}");
    let seen = seen.lock().unwrap().clone();
    let bearer = format!("Bearer {TOKEN}");
    assert_eq!(methods(&seen), OLDER_ERA_LIST_THEN_READ);
    for (method, auth, session, version) in &seen {
        assert_eq!(auth, &bearer, "{method}");
        if !matches!(method.as_str(), "server/discover" | "initialize") {
            assert_eq!(
                (session.as_str(), version.as_str()),
                ("sess-1", "2025-11-25"),
                "{method}"
            );
        }
    }
}

/// A server that echoes the token into its error: the diagnostic strikes
/// it out, whole and inside the header.
#[test]
fn a_token_a_server_echoes_is_struck_from_the_diagnostic() {
    let addr = legacy_server(Arc::default());
    let sandbox = consumer(&url_entry(
        "echo",
        &format!("http://{addr}/echo"),
        TIMEOUT_MS,
    ));
    let (listed, diagnostics) = list(&sandbox, Some(TOKEN));
    assert_eq!(listed, skills(&[("local", "repo:.bcode/skills")]));
    assert_eq!(
        diagnostics,
        [
            "skill provider `echo` failed: MCP server `echo`: the MCP handshake over HTTP failed: \
          server/discover was refused, and then initialize: unexpected server response: \
          HTTP 400 Bad Request: you sent [header value] (send initialize request)"
        ]
    );
}

/// FastMCP 4.1.6's skills server over Streamable HTTP (`fastmcp_skills.py
/// DIR --http PORT`), when `.ci/run`'s Python is set up: its skill is
/// listed, loaded and its supporting file read, over protocol 2026-07-28
/// (the entry's header is sent; this server asks for none).
#[test]
fn fastmcp_over_http_is_consumed() {
    let Ok(python) = std::env::var("BCODE_MCP_SERVERS_PYTHON") else {
        assert!(
            std::env::var_os("BCODE_REQUIRE_MCP_CLIENT").is_none(),
            "BCODE_REQUIRE_MCP_CLIENT is set but BCODE_MCP_SERVERS_PYTHON is not"
        );
        eprintln!(
            "skipped: set BCODE_MCP_SERVERS_PYTHON to a Python with fastmcp 4.1.6 (.ci/run does)"
        );
        return;
    };
    let sandbox = consumer("");
    let served = sandbox.base.join("served");
    write(&served.join("pdf/SKILL.md"), PDF);
    write(&served.join("pdf/references/FORM.md"), FORM);
    // A free port, told to the server (uvicorn does not say which port 0
    // gave it).
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_servers/fastmcp_skills.py");
    let child = Command::new(&python)
        .arg(&script)
        .arg(&served)
        .args(["--http", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _server = Running(child);
    // Python's imports take seconds on a busy machine: wait until it
    // accepts connections, in short steps, for at most a minute.
    let ready = (0..600).any(|_| {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
        false
    });
    assert!(ready, "FastMCP did not listen on {port}");
    write(
        &sandbox.home.join(".config/bcode/bcode.toml"),
        &url_entry("fastmcp", &format!("http://127.0.0.1:{port}/mcp"), 60_000),
    );
    let (listed, diagnostics) = list(&sandbox, Some(TOKEN));
    assert_eq!(diagnostics, Vec::<String>::new());
    assert_eq!(
        listed,
        skills(&[
            ("fastmcp:pdf", "mcp:fastmcp"),
            ("local", "repo:.bcode/skills")
        ])
    );
    let block = ok(run(
        &sandbox,
        Some(TOKEN),
        &["skills", "context", "fastmcp:pdf"],
    ));
    assert!(block.ends_with("\nThe PDF body.\n</skill>\n"), "{block}");
    let read = ok(run(
        &sandbox,
        Some(TOKEN),
        &["skills", "read", "fastmcp:pdf", "references/FORM.md"],
    ));
    assert_eq!(read, FORM);
}
