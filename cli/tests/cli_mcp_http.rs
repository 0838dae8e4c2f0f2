//! `bcode-prompt mcp --http ADDR` (issue 40, item 2): the arguments that
//! refuse an address other than loopback without a token; a listing over
//! HTTP that is the bytes the binary writes on stdio; the official
//! TypeScript client over both transports. What the server does over HTTP
//! (both eras, tokens, `Origin`, bounds) is tested on `serve_http` itself,
//! in `packages/mcp/tests/server_http.rs`.

#![cfg(feature = "mcp")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::time::Duration;

use bcode_test_support::http::{Answer, headers_2026, meta_2026, send_post};
use common::{Sandbox, write_files};
use serde_json::{Value, json};

/// Long enough for a loaded machine; a healthy answer takes milliseconds.
const ANSWER: Duration = Duration::from_secs(30);

/// A running `bcode-prompt mcp --http 127.0.0.1:0` and the address it told.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(sandbox: &Sandbox) -> Server {
        let mut child = sandbox
            .command()
            .args(["mcp", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let addr = loop {
            let line = lines
                .next()
                .expect("the server ended before serving")
                .unwrap();
            if let Some(at) = line.split(" at http://").nth(1) {
                break at.trim_end_matches("/mcp").parse().unwrap();
            }
        };
        // Nothing more is read; a thread drains the rest so the server
        // never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Server { child, addr }
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

    /// A JSON-RPC request of the 2026-07-28 era: its `_meta` and the
    /// standard headers.
    fn request_2026(&self, id: u64, method: &str, mut params: Value) -> Value {
        params["_meta"] = meta_2026();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let answer = self.post(&headers_2026(method), body.to_string().as_bytes());
        assert_eq!(answer.status, 200, "{method}: {}", answer.text());
        answer.json()
    }

    /// Stops the server as an operator would (`SIGTERM`): its exit code.
    fn stop(mut self) -> Option<i32> {
        std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        let deadline = std::time::Instant::now() + ANSWER;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "still running after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A repository with two served skills, one named outside ASCII.
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    write_files(
        &sandbox.repo.join(".bcode/skills"),
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
    sandbox
}

/// The arguments' check: serving elsewhere than loopback needs
/// `--http-token-env` naming a variable that is set (what the server then
/// asks of requests is tested with `serve_http` in
/// `packages/mcp/tests/server_http.rs`).
#[test]
fn an_address_other_than_loopback_needs_a_token_variable_that_is_set() {
    let sandbox = sandbox();
    let out = sandbox.run(&["mcp", "--http", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().last().unwrap(),
        "bcode-prompt: --http 0.0.0.0:0: 0.0.0.0:0 is not a loopback address: serving there needs a bearer token every client must send"
    );
    let out = sandbox.run(&[
        "mcp",
        "--http",
        "0.0.0.0:0",
        "--http-token-env",
        "BCODE_TEST_TOKEN",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "--http-token-env BCODE_TEST_TOKEN: the environment variable BCODE_TEST_TOKEN is not set or empty"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `bcode-prompt mcp` session on stdio, its answers kept as the lines
/// written.
struct StdioSession {
    child: Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl StdioSession {
    /// Started and opened with `initialize` of 2025-11-25, as the HTTP
    /// requests below name their era.
    fn start(sandbox: &Sandbox) -> StdioSession {
        let mut child = sandbox
            .command()
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        let mut session = StdioSession {
            child,
            stdin,
            lines,
        };
        session.ask(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"},
            }})
            .to_string(),
        );
        session.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        session
    }

    fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The line answering `request`.
    fn ask(&mut self, request: &str) -> String {
        self.send(request);
        self.lines.recv_timeout(ANSWER).unwrap()
    }
}

impl Drop for StdioSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Issue 40's speed line: a plain `skills/list` over HTTP is answered in
/// front of the SDK's service. Its answers are the bytes stdio writes for
/// the same requests, and the bytes the SDK's service writes (a weighted
/// `Accept` sends the request to the SDK), page after page by the cursors
/// given; a cursor refused, an unknown method and a request of 2026-07-28
/// still reach the SDK and are answered as on stdio; `Host` and `Origin`
/// are still refused.
#[test]
fn a_listing_over_http_is_the_bytes_of_stdio_and_of_the_sdk() {
    let sandbox = sandbox();
    let skills: Vec<(String, String)> = (0..bcode_skill_mcp::SKILLS_PAGE + 20)
        .map(|n| {
            (
                format!("s{n:03}/SKILL.md"),
                format!("---\nname: s{n:03}\ndescription: Skill {n}\n---\nBody.\n"),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = skills
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    write_files(&sandbox.repo.join(".bcode/skills"), &files);
    let server = Server::start(&sandbox);
    let mut stdio = StdioSession::start(&sandbox);
    let legacy = [("MCP-Protocol-Version", "2025-11-25")];
    let to_sdk = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Accept", "application/json;q=0.9, text/event-stream"),
    ];

    let mut cursor: Option<String> = None;
    let mut pages = 0;
    for id in 1.. {
        let mut params = json!({});
        if let Some(cursor) = &cursor {
            params["cursor"] = json!(cursor);
        }
        let request =
            json!({"jsonrpc": "2.0", "id": id, "method": "skills/list", "params": params})
                .to_string();
        let over_http = server.post(&legacy, request.as_bytes());
        assert_eq!(over_http.status, 200, "{}", over_http.text());
        assert_eq!(over_http.header("content-type"), Some("application/json"));
        assert_eq!(over_http.text(), stdio.ask(&request));
        let through_sdk = server.post(&to_sdk, request.as_bytes());
        assert_eq!(through_sdk.status, 200, "{}", through_sdk.text());
        assert_eq!(through_sdk.text(), over_http.text());
        pages += 1;
        cursor = over_http.json()["result"]["nextCursor"]
            .as_str()
            .map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(pages, 2);

    for request in [
        json!({"jsonrpc": "2.0", "id": "c", "method": "skills/list", "params": {"cursor": "nope"}}),
        json!({"jsonrpc": "2.0", "id": "m", "method": "skills/nope", "params": {}}),
    ] {
        let request = request.to_string();
        let over_http = server.post(&legacy, request.as_bytes());
        let answer = over_http.json();
        assert!(answer["error"]["code"].is_i64(), "{answer}");
        assert_eq!(
            answer,
            serde_json::from_str::<Value>(&stdio.ask(&request)).unwrap()
        );
    }
    let newer = server.request_2026(9, "skills/list", json!({}));
    assert_eq!(newer["result"]["cacheScope"], "private", "{newer}");

    let list = br#"{"jsonrpc":"2.0","id":1,"method":"skills/list"}"#;
    let from_page = server.post(&[("Origin", "http://localhost:3000")], list);
    assert_eq!(from_page.status, 403, "{}", from_page.text());
    let mut stream = server.connect();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: attacker.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        list.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(list).unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    assert_eq!(Answer::parse(&bytes).status, 403);
    drop(stdio);
    assert_eq!(server.stop(), Some(0));
}

/// The `node_modules` folder holding the pinned TypeScript MCP SDK that
/// `.ci/run` installs under the build folder (`BCODE_MCP_NODE_MODULES`);
/// `None` (the test then says so and passes) when it is not set up,
/// unless `BCODE_REQUIRE_MCP_CLIENT` is.
fn node_with_the_ts_sdk() -> Option<String> {
    let modules = std::env::var("BCODE_MCP_NODE_MODULES").ok();
    if modules.is_none() {
        assert!(
            std::env::var_os("BCODE_REQUIRE_MCP_CLIENT").is_none(),
            "BCODE_REQUIRE_MCP_CLIENT is set but BCODE_MCP_NODE_MODULES is not"
        );
        eprintln!(
            "skipped: set BCODE_MCP_NODE_MODULES to a node_modules with @modelcontextprotocol/sdk (.ci/run does)"
        );
    }
    modules
}

/// Issue 40, item 8: the official TypeScript SDK's client (1.32.2, which
/// speaks the protocol up to 2025-11-25) lists, gets and reads every file
/// over stdio and over Streamable HTTP, and both transports tell it the
/// same.
#[test]
fn the_typescript_sdk_client_lists_gets_and_reads_over_stdio_and_http() {
    let Some(modules) = node_with_the_ts_sdk() else {
        return;
    };
    let sandbox = sandbox();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_clients/ts_sdk.mjs");
    let run = |args: &[&str]| -> Value {
        let out = std::process::Command::new("node")
            .arg(&script)
            .arg(&modules)
            .args(args)
            .env("HOME", &sandbox.home)
            .env("BCODE_STATE_DIR", &sandbox.state)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let binary = env!("CARGO_BIN_EXE_bcode-prompt");
    let repo = sandbox.repo.to_str().unwrap();
    let mut stdio = run(&["stdio", binary, repo]);
    let server = Server::start(&sandbox);
    let url = format!("http://{}/mcp", server.addr);
    let mut http = run(&["http", &url]);
    assert_eq!(server.stop(), Some(0));

    assert_eq!(http["protocolVersion"], "2025-11-25");
    assert_eq!(
        stdio["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/skills": {}})
    );
    assert_eq!(stdio["unknownError"], -32602);
    let skills = stdio["skills"]["skills"].as_array().unwrap().clone();
    assert_eq!(skills.len(), 2, "{stdio}");
    assert_eq!(stdio["get"]["skill"], skills[0]);
    assert_eq!(
        stdio["read"],
        json!({
            "skill://donn%C3%A9es-csv/SKILL.md": "---\nname: données-csv\ndescription: Read CSV data\n---\nB.\n",
            "skill://pdf-tools/SKILL.md": "---\nname: pdf-tools\ndescription: Work with PDFs\n---\nRead refs/guide.md.\n",
            "skill://pdf-tools/refs/guide.md": "# Guide\n",
        })
    );
    assert_eq!(
        stdio["resources"],
        json!([
            "skill://donn%C3%A9es-csv/SKILL.md",
            "skill://pdf-tools/SKILL.md"
        ])
    );
    // Everything but the transport's own report is the same over HTTP.
    for seen in [&mut stdio, &mut http] {
        seen.as_object_mut().unwrap().remove("protocolVersion");
    }
    assert_eq!(stdio, http);
}
