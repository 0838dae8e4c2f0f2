//! `serve_http` (issue 40, item 2; moved here from the CLI's tests, issue
//! 41): the same methods over MCP's Streamable HTTP transport, both
//! protocol eras, driven with a few lines of HTTP/1.1 over a socket; and
//! what it refuses: an address other than loopback without a token, a
//! request without the token, a web page's request (`Origin`), a body over
//! the bound, connections and subscriptions past their bounds.

#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bcode_skill_mcp::{
    HttpNotice, HttpOptions, HttpRefusal, MAX_HTTP_BODY_BYTES, MAX_HTTP_CONNECTIONS,
    MAX_HTTP_STREAMS, ServeError, SkillServer, serve_http,
};
use bcode_test_support::http::{Answer, headers_2026, meta_2026, send_post};
use bcode_test_support::write_tree as write_files;
use serde_json::{Value, json};

/// Long enough for a loaded machine; a healthy answer takes milliseconds.
const ANSWER: Duration = Duration::from_secs(30);

/// How often the served tree is looked at again, and the `ttlMs` a client
/// of 2026-07-28 is told (as `bcode-prompt mcp` does).
const REFRESH: Duration = Duration::from_millis(500);

/// `serve_http` on `127.0.0.1:0`, on a runtime of its own, over the skills
/// of one folder (looked at again every [`REFRESH`]); the address it told
/// and everything it told.
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    notices: Arc<Mutex<Vec<HttpNotice>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    serving: Option<std::thread::JoinHandle<Result<(), ServeError>>>,
}

impl Server {
    pub(crate) fn start(skills: &Path, token: Option<&str>) -> Server {
        let mut options = HttpOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
        if let Some(token) = token {
            options = options.with_bearer_token(token.to_owned());
        }
        let server = SkillServer::new(&common::registry(skills)).with_cache_ttl(REFRESH);
        let notices = Arc::new(Mutex::new(Vec::new()));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (told, addr) = std::sync::mpsc::channel();
        let heard = Arc::clone(&notices);
        let skills: PathBuf = skills.to_path_buf();
        let serving = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(serve_http(
                server,
                options,
                move || Some(common::registry(&skills)),
                REFRESH,
                move |notice| {
                    if let HttpNotice::Listening { addr } = &notice {
                        let _ = told.send(*addr);
                    }
                    heard.lock().unwrap().push(notice);
                },
                async move {
                    let _ = stopped.await;
                },
            ))
        });
        let addr = addr
            .recv_timeout(ANSWER)
            .expect("the server never listened");
        Server {
            addr,
            notices,
            stop: Some(stop),
            serving: Some(serving),
        }
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(self.addr).unwrap();
        stream.set_read_timeout(Some(ANSWER)).unwrap();
        stream
    }

    /// Sends a POST to /mcp on a fresh connection (closed after the
    /// answer): the status, the headers (names lowercased) and the body.
    fn post<H: AsRef<str>>(&self, headers: &[(&str, H)], body: &[u8]) -> Answer {
        let mut stream = self.connect();
        send_post(&mut stream, self.addr, "/mcp", headers, body, true);
        let mut bytes = Vec::new();
        stream.read_to_end(&mut bytes).unwrap();
        Answer::parse(&bytes)
    }

    /// A JSON-RPC request of the 2025-11-25 era (no session is needed:
    /// the server is stateless).
    fn legacy(&self, id: u64, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let answer = self.post(
            &[("MCP-Protocol-Version", "2025-11-25")],
            body.to_string().as_bytes(),
        );
        assert_eq!(answer.status, 200, "{method}: {}", answer.text());
        answer.json()
    }

    /// A JSON-RPC request of the 2026-07-28 era: its `_meta` and the
    /// standard headers.
    fn request_2026(&self, id: u64, method: &str, mut params: Value) -> Value {
        params["_meta"] = meta_2026();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let answer = self.post(&headers_2026(method), body.to_string().as_bytes());
        assert_eq!(answer.status, 200, "{method}: {}", answer.text());
        answer.json()
    }

    /// Stops serving as the operator's signal would: how serving ended.
    pub(crate) fn stop(mut self) -> Result<(), ServeError> {
        let _ = self.stop.take().unwrap().send(());
        self.serving.take().unwrap().join().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A skills folder with two served skills, one named outside ASCII.
fn skills() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "pdf-tools/SKILL.md",
                "---\nname: pdf-tools\ndescription: Work with PDFs\n---\nRead refs/guide.md.\n",
            ),
            ("pdf-tools/refs/guide.md", "# Guide\n"),
            (
                "données-csv/SKILL.md",
                "---\nname: données-csv\ndescription: Read CSV data\n---\nB.\n",
            ),
        ],
    );
    dir
}

#[test]
fn both_eras_list_get_and_read_over_http() {
    let skills = skills();
    let server = Server::start(skills.path(), None);
    let init = server.legacy(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(
        init["result"]["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/skills": {}}),
        "{init}"
    );
    let legacy = server.legacy(2, "skills/list", json!({}));
    let uris: Vec<&str> = legacy["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://donn%C3%A9es-csv/SKILL.md",
            "skill://pdf-tools/SKILL.md"
        ]
    );
    assert_eq!(legacy["result"].get("ttlMs"), None, "{legacy}");

    let discover = server.request_2026(3, "server/discover", json!({}));
    assert_eq!(
        discover["result"]["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/skills": {}}),
        "{discover}"
    );
    let list = server.request_2026(4, "skills/list", json!({}));
    assert_eq!(list["result"]["skills"], legacy["result"]["skills"]);
    assert_eq!(
        [&list["result"]["ttlMs"], &list["result"]["cacheScope"]],
        [&json!(500), &json!("private")],
        "{list}"
    );
    let got = server.request_2026(
        5,
        "skills/get",
        json!({"uri": "skill://données-csv/SKILL.md"}),
    );
    assert_eq!(
        got["result"]["skill"]["uri"], "skill://données-csv/SKILL.md",
        "{got}"
    );
    let read = server.legacy(
        6,
        "resources/read",
        json!({"uri": "skill://pdf-tools/refs/guide.md"}),
    );
    assert_eq!(read["result"]["contents"][0]["text"], "# Guide\n", "{read}");
    // A malformed request is answered as on stdio.
    let bad = server.post(
        &[] as &[(&str, &str)],
        b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\"}",
    );
    assert_eq!(bad.status, 400);
    assert_eq!(
        bad.json()["error"]["message"],
        "initialize is missing params.protocolVersion (a string), params.capabilities (an object), params.clientInfo (an object)"
    );
    server.stop().unwrap();
}

#[test]
fn a_subscription_hears_changes_tagged_with_its_id() {
    let skills = skills();
    let server = Server::start(skills.path(), None);
    let mut stream = server.connect();
    let body = json!({"jsonrpc": "2.0", "id": "watch", "method": "subscriptions/listen", "params": {
        "_meta": meta_2026(),
        "notifications": {"resourcesListChanged": true, "toolsListChanged": true},
    }});
    send_post(
        &mut stream,
        server.addr,
        "/mcp",
        &headers_2026("subscriptions/listen"),
        body.to_string().as_bytes(),
        true,
    );
    let mut events = BufReader::new(stream);
    let mut next_event = || loop {
        let mut line = String::new();
        assert!(events.read_line(&mut line).unwrap() > 0, "the stream ended");
        if let Some(data) = line.strip_prefix("data: ")
            && let Ok(value) = serde_json::from_str::<Value>(data.trim_end())
        {
            return value;
        }
    };
    assert_eq!(
        next_event(),
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "watch"},
            "notifications": {"resourcesListChanged": true},
        }})
    );
    write_files(
        skills.path(),
        &[("added/SKILL.md", "---\ndescription: Added later\n---\nB.\n")],
    );
    assert_eq!(
        next_event(),
        json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "watch"},
        }})
    );
    server.stop().unwrap();
}

/// Serving elsewhere than loopback needs a token (the CLI's own check of
/// `--http` and `--http-token-env` is in `cli/tests/cli_mcp_http.rs`), and
/// then every request must carry it.
#[test]
fn an_address_other_than_loopback_needs_a_token_and_requests_must_carry_it() {
    let skills = skills();
    let anywhere = SocketAddr::from(([0, 0, 0, 0], 0));
    let refused = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(serve_http(
            SkillServer::new(&common::registry(skills.path())),
            HttpOptions::new(anywhere),
            || None,
            REFRESH,
            |_| {},
            std::future::pending(),
        ));
    let Err(ServeError::Refused(refusal)) = refused else {
        panic!("served without a token: {refused:?}");
    };
    assert_eq!(refusal, HttpRefusal::NotLoopback { addr: anywhere });
    assert_eq!(
        refusal.to_string(),
        "0.0.0.0:0 is not a loopback address: serving there needs a bearer token every client must send"
    );

    let server = Server::start(skills.path(), Some("s3cret-token"));
    let list = br#"{"jsonrpc":"2.0","id":1,"method":"skills/list"}"#;
    for given in [None, Some("Bearer wrong-token!"), Some("s3cret-token")] {
        let headers: Vec<(&str, &str)> = given
            .map(|value| ("Authorization", value))
            .into_iter()
            .collect();
        let refused = server.post(&headers, list);
        assert_eq!(refused.status, 401, "{given:?}");
        assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
    }
    let answered = server.post(&[("Authorization", "Bearer s3cret-token")], list);
    assert_eq!(answered.status, 200, "{}", answered.text());
    assert_eq!(
        answered.json()["result"]["skills"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    server.stop().unwrap();
}

#[test]
fn web_pages_large_bodies_and_other_paths_are_refused() {
    let skills = skills();
    let server = Server::start(skills.path(), None);
    let list = br#"{"jsonrpc":"2.0","id":1,"method":"skills/list"}"#;
    let from_page = server.post(&[("Origin", "http://localhost:3000")], list);
    assert_eq!(from_page.status, 403, "{}", from_page.text());
    let mut huge = br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":""#.to_vec();
    huge.resize(huge.len() + MAX_HTTP_BODY_BYTES, b'a');
    huge.extend_from_slice(b"\"}}");
    assert_eq!(server.post(&[] as &[(&str, &str)], &huge).status, 413);
    let mut stream = server.connect();
    send_post(
        &mut stream,
        server.addr,
        "/other",
        &[] as &[(&str, &str)],
        list,
        true,
    );
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    assert_eq!(Answer::parse(&bytes).status, 404);
    // A rebound DNS name is not this server.
    let mut stream = server.connect();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: attacker.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        .unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    assert_eq!(Answer::parse(&bytes).status, 403);
    // Still serving.
    assert_eq!(server.post(&[] as &[(&str, &str)], list).status, 200);
    server.stop().unwrap();
}

/// Connections and open subscriptions are bounded, counted: past either
/// bound the next is answered 503 at once (not left waiting), and the
/// operator is told once; a closed connection frees its place.
#[test]
fn connections_and_subscriptions_are_bounded() {
    let skills = skills();
    let server = Server::start(skills.path(), None);
    let mut streams = Vec::new();
    for n in 0..MAX_HTTP_STREAMS {
        let mut stream = server.connect();
        let body = json!({"jsonrpc": "2.0", "id": n, "method": "subscriptions/listen", "params": {
            "_meta": meta_2026(), "notifications": {"resourcesListChanged": true},
        }});
        send_post(
            &mut stream,
            server.addr,
            "/mcp",
            &headers_2026("subscriptions/listen"),
            body.to_string().as_bytes(),
            true,
        );
        // Open once its head came back.
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        streams.push(reader);
    }
    let body = json!({"jsonrpc": "2.0", "id": "one-more", "method": "subscriptions/listen", "params": {
        "_meta": meta_2026(), "notifications": {"resourcesListChanged": true},
    }});
    let refused = server.post(
        &headers_2026("subscriptions/listen"),
        body.to_string().as_bytes(),
    );
    assert_eq!(refused.status, 503, "{}", refused.text());
    drop(streams);

    // Idle connections up to the bound; the next is refused. The
    // subscriptions' connections may still be closing, and an idle
    // connection may meet its header timeout on a slow machine: each time
    // a probe is still served, one more idle connection goes in front of
    // the next probe (the server accepts in the order connections came),
    // until exactly the bound is held.
    let mut idle: Vec<TcpStream> = (0..MAX_HTTP_CONNECTIONS)
        .map(|_| server.connect())
        .collect();
    let list = br#"{"jsonrpc":"2.0","id":1,"method":"skills/list"}"#;
    let deadline = std::time::Instant::now() + ANSWER;
    loop {
        let answer = server.post(&[] as &[(&str, &str)], list);
        if answer.status == 503 {
            assert_eq!(answer.text(), "too many connections; try again later\n");
            break;
        }
        assert_eq!(answer.status, 200, "{}", answer.text());
        assert!(std::time::Instant::now() < deadline, "never refused");
        idle.push(server.connect());
    }
    drop(idle);
    let deadline = std::time::Instant::now() + ANSWER;
    while server.post(&[] as &[(&str, &str)], list).status != 200 {
        assert!(std::time::Instant::now() < deadline, "never served again");
        std::thread::sleep(Duration::from_millis(20));
    }
    let told = server.notices.lock().unwrap().clone();
    let addr = server.addr;
    server.stop().unwrap();
    assert_eq!(
        told,
        [
            HttpNotice::Listening { addr },
            HttpNotice::TooManyConnections
        ]
    );
}
