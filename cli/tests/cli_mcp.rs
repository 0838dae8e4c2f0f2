//! `bcode-prompt mcp` (issue 26, item 1): the registry served over MCP's
//! stdio transport with the skills extension (SEP-2640), driven here line by
//! line as a client would, including clients that misbehave: what the
//! binary's transport, state folder, config and operator messages add.
//! What the server answers is tested on `SkillService` itself, in
//! `packages/mcp/tests/server_lines.rs`.

#![cfg(feature = "mcp")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use common::{Sandbox, write_files};
use serde_json::{Value, json};

/// Long enough for a loaded machine; a healthy answer takes milliseconds.
const ANSWER: Duration = Duration::from_secs(30);

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
    /// The answer to `initialize`.
    init: Value,
}

impl Client {
    fn start(sandbox: &Sandbox, extra: &[&str]) -> Client {
        let mut client = Client::spawn(sandbox, extra);
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert_eq!(
            init["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
            json!({}),
            "{init}"
        );
        assert!(
            init["result"]["capabilities"]["resources"].is_object(),
            "{init}"
        );
        client.send_raw(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        client.init = init;
        client
    }

    /// The server started, nothing sent yet.
    fn spawn(sandbox: &Sandbox, extra: &[&str]) -> Client {
        let mut child = sandbox
            .command()
            .args(extra)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Client {
            child,
            stdin,
            lines,
            next_id: 1,
            init: Value::Null,
        }
    }

    /// A request of protocol 2026-07-28: no session, each request carries
    /// the protocol version and the client's capabilities in its `_meta`.
    fn request_2026(&mut self, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        });
        self.request(method, params)
    }

    fn send_raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message the server sends.
    fn next(&mut self) -> Value {
        match self.lines.recv_timeout(ANSWER) {
            Ok(line) => serde_json::from_str(&line).unwrap(),
            Err(err) => panic!("no answer from the server: {err:?}"),
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(line.to_string().as_bytes());
        loop {
            let message = self.next();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn result(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request(method, params);
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    fn error_code(&mut self, method: &str, params: Value) -> i64 {
        let answer = self.request(method, params);
        answer["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("{method}: expected an error, got {answer}"))
    }

    /// Closes stdin and waits for the exit: `(code, stderr)`.
    fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + ANSWER;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut stderr = String::new();
                use std::io::Read;
                self.child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut stderr)
                    .unwrap();
                return (status.code(), stderr);
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the server did not exit after its client closed stdin"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    format!("sha256:{}", text.split_whitespace().next().unwrap())
}

/// A repository with served, hidden, disabled and unservable skills.
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    let skills = sandbox.repo.join(".bcode/skills");
    bcode_test_support::mcp::write_served_skills(&skills, &sandbox.base);
    write_files(
        &sandbox.repo.join(".bcode"),
        &[("bcode.toml", "[skills.disabled]\nids = [\"off\"]\n")],
    );
    sandbox
}

/// A skill whose files turn out not to be servable once read (here a name
/// the SDK's own check refuses) is left out of the listing, and the
/// operator is told which and why, as for those refused up front (here a
/// name that is not the id).
#[test]
fn a_skill_refused_once_read_is_named_to_the_operator() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    write_files(
        &sandbox.repo.join(".bcode/skills"),
        &[
            ("ok/SKILL.md", "---\ndescription: Fine\n---\nB.\n"),
            (
                "two--hyphens/SKILL.md",
                "---\ndescription: Two hyphens in a row\n---\nB.\n",
            ),
            (
                "titled/SKILL.md",
                "---\nname: Titled Skill\ndescription: Named with a title\n---\nB.\n",
            ),
        ],
    );
    let mut client = Client::start(&sandbox, &[]);
    let list = client.result("skills/list", json!({}));
    let uris: Vec<&str> = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| skill["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["skill://ok/SKILL.md"]);
    assert_eq!(
        client.error_code(
            "skills/get",
            json!({"uri": "skill://two--hyphens/SKILL.md"})
        ),
        -32602
    );
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let told: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("skill `two--hyphens` is not served: "))
        .collect();
    assert_eq!(told.len(), 1, "told once: {stderr}");
    assert!(told[0].contains("hyphen"), "{stderr}");
    assert!(!stderr.contains("skill `ok` is not served"), "{stderr}");
    assert!(
        stderr.contains("skill `titled` is not served: its front-matter name \"Titled Skill\" is not its id `titled`"),
        "{stderr}"
    );
}

#[test]
fn a_changed_skill_tree_is_announced() {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox, &[]);
    let before = client.result("skills/list", json!({}));
    assert_eq!(before["skills"].as_array().unwrap().len(), 3);
    write_files(
        &sandbox.repo.join(".bcode/skills"),
        &[("added/SKILL.md", "---\ndescription: Added later\n---\nB.\n")],
    );
    loop {
        let message = client.next();
        if message["method"] == "notifications/resources/list_changed" {
            break;
        }
    }
    let after = client.result("skills/get", json!({"uri": "skill://added/SKILL.md"}));
    assert_eq!(after["skill"]["frontmatter"]["description"], "Added later");
    client.finish();
}

#[test]
fn a_misbehaving_client_gets_errors_and_the_server_goes_on() {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox, &[]);
    client.send_raw(b"this is not json");
    let answer = client.next();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert_eq!(answer["id"], Value::Null);
    client.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"ping\xff\"}");
    assert_eq!(client.next()["error"]["code"], -32700);
    // Longer than the 16 MiB a request may be: dropped as it arrives.
    let mut huge =
        b"{\"jsonrpc\":\"2.0\",\"id\":98,\"method\":\"ping\",\"params\":{\"x\":\"".to_vec();
    huge.resize(huge.len() + 17 * 1024 * 1024, b'a');
    huge.extend_from_slice(b"\"}}");
    client.send_raw(&huge);
    assert_eq!(client.next()["error"]["code"], -32600);
    assert_eq!(client.error_code("skills/teleport", json!({})), -32601);
    assert_eq!(client.error_code("skills/get", json!({})), -32602);
    assert_eq!(client.error_code("skills/get", json!({"uri": 7})), -32602);
    assert_eq!(
        client.error_code("tools/call", json!({"arguments": {}})),
        -32602
    );
    assert_eq!(
        client.error_code(
            "tools/call",
            json!({"name": "search_skills", "arguments": "pdf"})
        ),
        -32602
    );
    // Still serving.
    let list = client.result("skills/list", json!({}));
    assert_eq!(list["skills"].as_array().unwrap().len(), 3);
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_client_that_disappears_ends_the_server() {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox, &[]);
    // A request in flight, then the client is gone: stdin closed and
    // nobody reading stdout.
    client.send_raw(br#"{"jsonrpc":"2.0","id":50,"method":"skills/list","params":{}}"#);
    let Client {
        mut child,
        stdin,
        lines,
        ..
    } = client;
    drop(lines);
    drop(stdin);
    let deadline = std::time::Instant::now() + ANSWER;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.code().is_some(), "killed by a signal: {status}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still running");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The Python interpreter with the official MCP SDK (`mcp` on PyPI) that
/// `.ci/run` installs under the build folder; `None` (the test then says so
/// and passes) when it is not set up, unless `BCODE_REQUIRE_MCP_CLIENT` is.
fn python_with_mcp() -> Option<String> {
    let python = std::env::var("BCODE_MCP_PYTHON").ok();
    if python.is_none() {
        assert!(
            std::env::var_os("BCODE_REQUIRE_MCP_CLIENT").is_none(),
            "BCODE_REQUIRE_MCP_CLIENT is set but BCODE_MCP_PYTHON is not"
        );
        eprintln!(
            "skipped: set BCODE_MCP_PYTHON to a Python with the `mcp` package (.ci/run does)"
        );
    }
    python
}

#[test]
fn the_official_python_sdk_client_lists_gets_and_reads_every_file() {
    let Some(python) = python_with_mcp() else {
        return;
    };
    let sandbox = sandbox();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_clients/python_sdk.py");
    let out = Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_bcode-prompt"))
        .arg(&sandbox.repo)
        .env("HOME", &sandbox.home)
        .env("BCODE_STATE_DIR", &sandbox.state)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        seen["extensions"],
        json!({"io.modelcontextprotocol/skills": {}})
    );
    assert_eq!(seen["resources_capability"], true);
    assert_eq!(seen["unknown_error"], -32602);
    let skills = seen["skills"]["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 3, "{seen}");
    assert_eq!(seen["get"]["skill"], skills[0]);
    assert_eq!(
        seen["resources"],
        json!([
            "skill://flat/SKILL.md",
            "skill://no-name/SKILL.md",
            "skill://pdf-tools/SKILL.md"
        ])
    );
    // Every listed file was read back byte for byte, and its digest is the
    // file's own.
    let skills_root = sandbox.repo.join(".bcode/skills");
    let mut files = 0;
    for skill in skills {
        for resource in skill["resources"].as_array().unwrap() {
            let uri = resource["uri"].as_str().unwrap();
            let (id, file) = uri["skill://".len()..].split_once('/').unwrap();
            let path = if id == "flat" {
                skills_root.join("flat.md")
            } else {
                skills_root.join(id).join(file)
            };
            assert_eq!(resource["digest"], sha256(&path), "{uri}");
            let bytes = std::fs::read(&path).unwrap();
            let read = seen["read"][uri].as_str().unwrap();
            match std::str::from_utf8(&bytes) {
                Ok(text) => assert_eq!(read, text, "{uri}"),
                Err(_) => assert_eq!(read, "AJ+Slv8=", "{uri}"),
            }
            files += 1;
        }
    }
    assert_eq!(files, 6);
}

/// The digest of `uri` in a full `skills/list` of a fresh server.
/// Every file a `skills/list` result lists: URI and digest.
fn digests_in(list: &Value) -> BTreeMap<String, String> {
    list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|skill| skill["resources"].as_array().unwrap().iter())
        .map(|resource| {
            let uri = resource["uri"].as_str().unwrap().to_owned();
            (uri, resource["digest"].as_str().unwrap().to_owned())
        })
        .collect()
}

/// Every listed file's URI and digest, from a fresh server.
fn listed_digests(sandbox: &Sandbox) -> BTreeMap<String, String> {
    let mut client = Client::start(sandbox, &[]);
    let digests = digests_in(&client.result("skills/list", json!({})));
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    digests
}

fn listed_digest(sandbox: &Sandbox, uri: &str) -> String {
    listed_digests(sandbox).remove(uri).unwrap()
}

#[test]
fn digests_of_unchanged_files_come_from_the_state_folder_and_a_change_is_read() {
    let sandbox = sandbox().short_racy_window();
    let skills = sandbox.repo.join(".bcode/skills");
    let guide = skills.join("pdf-tools/refs/guide.md");
    common::age(&skills);
    // `age` sets the modification times back; the status-change times stay
    // new, and a stamp within the racy window is never trusted.
    common::past_racy_window();
    let uri = "skill://pdf-tools/refs/guide.md";
    assert_eq!(listed_digest(&sandbox, uri), sha256(&guide));
    // The cache is consulted: a digest planted for the unchanged file is
    // what the next server lists, so it did not read the file.
    let cache = sandbox.state.join("cache/mcp-server/digests.jsonl");
    let text = std::fs::read_to_string(&cache).unwrap();
    let planted = format!("sha256:{}", "0".repeat(64));
    // One line per served skill; the planted digest goes on the guide's
    // file of `pdf-tools`.
    let edited: Vec<String> = text
        .lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).unwrap();
            if record["id"] == "pdf-tools" {
                for file in record["files"].as_array_mut().unwrap() {
                    if file[0] == "refs/guide.md" {
                        file[3] = json!(planted);
                    }
                }
            }
            record.to_string()
        })
        .collect();
    assert_eq!(edited.len(), 3, "{text}");
    assert!(edited.iter().any(|line| line.contains(&planted)), "{text}");
    std::fs::write(&cache, edited.join("\n") + "\n").unwrap();
    assert_eq!(listed_digest(&sandbox, uri), planted);
    // A file added to a listed folder moves the folder's stamp: the skill
    // is listed from its files again (the planted digest is gone), and a
    // file removed drops out.
    let added = skills.join("pdf-tools/refs/added.md");
    std::fs::write(&added, "# Added\n").unwrap();
    let listed = listed_digests(&sandbox);
    assert_eq!(
        (
            listed.get("skill://pdf-tools/refs/added.md"),
            listed.get(uri)
        ),
        (Some(&sha256(&added)), Some(&sha256(&guide)))
    );
    std::fs::remove_file(&added).unwrap();
    assert!(!listed_digests(&sandbox).contains_key("skill://pdf-tools/refs/added.md"));
    // A changed file is read again, whatever the cache says.
    std::fs::write(&guide, "# Guide, edited\n").unwrap();
    assert_eq!(listed_digest(&sandbox, uri), sha256(&guide));
    // So is one changed again within the racy window, with the same size.
    std::fs::write(&guide, "# Guide, EDITED\n").unwrap();
    assert_eq!(listed_digest(&sandbox, uri), sha256(&guide));
}

#[test]
fn with_the_disk_cache_off_nothing_is_kept_but_everything_is_served() {
    let sandbox = sandbox().short_racy_window();
    let skills = sandbox.repo.join(".bcode/skills");
    let guide = skills.join("pdf-tools/refs/guide.md");
    common::age(&skills);
    common::past_racy_window();
    let mut client = Client::start(&sandbox, &["--set", "skills.disk_cache=false"]);
    let listed = digests_in(&client.result("skills/list", json!({})));
    assert_eq!(listed["skill://pdf-tools/refs/guide.md"], sha256(&guide));
    // Entries this run read are held in a nameless scratch file: the file
    // reads back whole, and no cache file is left behind.
    let read = client.result(
        "resources/read",
        json!({"uri": "skill://pdf-tools/refs/guide.md"}),
    );
    assert_eq!(
        read["contents"][0]["text"].as_str().unwrap().as_bytes(),
        std::fs::read(&guide).unwrap()
    );
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let folder = sandbox.state.join("cache/mcp-server");
    let left: Vec<_> = std::fs::read_dir(&folder)
        .map(|entries| entries.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn an_edit_below_a_skill_folder_is_announced_and_listed() {
    let sandbox = sandbox().short_racy_window();
    let guide = sandbox.repo.join(".bcode/skills/pdf-tools/refs/guide.md");
    let digest = |list: &Value| digests_in(list).remove("skill://pdf-tools/refs/guide.md");
    let mut client = Client::start(&sandbox, &[]);
    let before = client.result("skills/list", json!({}));
    assert_eq!(digest(&before), Some(sha256(&guide)));
    // `refs/` is below the skill's folder: the registry's watch does not
    // see it, the server's own watch of its entries' folders does (or, for
    // an edit made before that watch, its first check of every stamp).
    std::fs::write(&guide, "# Guide, edited below the skill's folder\n").unwrap();
    loop {
        let message = client.next();
        if message["method"] == "notifications/resources/list_changed" {
            break;
        }
    }
    let after = client.result("skills/list", json!({}));
    assert_eq!(digest(&after), Some(sha256(&guide)));
    let read = client.result(
        "resources/read",
        json!({"uri": "skill://pdf-tools/refs/guide.md"}),
    );
    assert_eq!(
        read["contents"][0]["text"],
        "# Guide, edited below the skill's folder\n"
    );
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

/// Lists, waits three refreshes of a sandbox with a short one (the
/// server's watch of its entries' folders is set up and its first check of
/// every stamp done, so only that watch can see what follows), rewrites
/// `file` keeping every summary as it was, and expects `list_changed` and
/// the new digest listed under `uri`.
fn an_edit_keeping_the_summary_is_announced(sandbox: &Sandbox, file: &Path, uri: &str, text: &str) {
    let mut client = Client::start(sandbox, &[]);
    let before = digests_in(&client.result("skills/list", json!({})));
    assert_eq!(before.get(uri), Some(&sha256(file)));
    std::thread::sleep(4 * common::TEST_MCP_REFRESH);
    std::fs::write(file, text).unwrap();
    loop {
        let message = client.next();
        if message["method"] == "notifications/resources/list_changed" {
            break;
        }
    }
    let after = digests_in(&client.result("skills/list", json!({})));
    assert_eq!(after.get(uri), Some(&sha256(file)));
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn an_edit_of_a_file_beside_skill_md_is_announced_and_listed() {
    let sandbox = sandbox().short_racy_window().short_mcp_refresh();
    let script = sandbox.repo.join(".bcode/skills/pdf-tools/run.py");
    std::fs::write(&script, "print('one')\n").unwrap();
    an_edit_keeping_the_summary_is_announced(
        &sandbox,
        &script,
        "skill://pdf-tools/run.py",
        "print('two')\n",
    );
}

#[test]
fn a_body_edit_of_a_flat_skill_is_announced_and_listed() {
    let sandbox = sandbox().short_racy_window().short_mcp_refresh();
    let flat = sandbox.repo.join(".bcode/skills/flat.md");
    let body = "---\ndescription: A flat skill\n---\nAnother body.\n";
    an_edit_keeping_the_summary_is_announced(&sandbox, &flat, "skill://flat/SKILL.md", body);
}

/// A repository with one skill, `big`, whose `refs/big.txt` holds `len`
/// bytes of text.
fn big_file_sandbox(len: usize) -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    let text = "a".repeat(len);
    write_files(
        &sandbox.repo.join(".bcode/skills"),
        &[
            ("big/SKILL.md", "---\ndescription: Big\n---\nB.\n"),
            ("big/refs/big.txt", &text),
        ],
    );
    sandbox
}

/// `bcode-prompt mcp` in `sandbox` with its data segment (`ulimit -d`, what
/// the allocator can take) held to `kib` KiB, every stream piped, after
/// `initialize` was answered (its answer read here).
fn start_limited(
    sandbox: &Sandbox,
    kib: u64,
) -> (Child, ChildStdin, BufReader<std::process::ChildStdout>) {
    let inner = sandbox.command();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -d {kib} && exec \"$@\""))
        .arg("sh")
        .arg(inner.get_program())
        .args(inner.get_args())
        .arg("mcp")
        .env_clear()
        .envs(
            inner
                .get_envs()
                .filter_map(|(key, value)| Some((key, value?))),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let answer = next_answer(&mut stdout);
    assert_eq!(answer["id"], 0, "{answer}");
    (child, stdin, stdout)
}

/// The lines of `stderr` as they come, on a thread (`None` once it ends).
fn stderr_lines(child: &mut Child) -> Receiver<Option<String>> {
    let stderr = child.stderr.take().unwrap();
    let (send, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if send.send(Some(line)).is_err() {
                return;
            }
        }
        let _ = send.send(None);
    });
    lines
}

/// The next answer on `stdout`, past any notification.
fn next_answer(stdout: &mut impl BufRead) -> Value {
    loop {
        let mut line = String::new();
        assert_ne!(stdout.read_line(&mut line).unwrap(), 0, "stdout ended");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message.get("id").is_some() {
            return message;
        }
    }
}

fn read_request(id: u64, uri: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}})
        .to_string()
}

/// Issue 38, item 6: a client that sends request after request and never
/// reads its answers made the server read on and hold every answer (300
/// reads of a 4 MiB file passed 1 GiB). Now reading stops once 16 MiB of
/// answers wait unread, the operator is told, and the server stays within
/// a data segment of 512 MiB that the old one burst.
#[test]
fn a_client_that_never_reads_holds_the_server_to_a_bounded_backlog() {
    let sandbox = big_file_sandbox(4 * 1024 * 1024);
    let (mut child, mut stdin, mut stdout) = start_limited(&sandbox, 512 * 1024);
    let stderr = stderr_lines(&mut child);
    // 300 requests fit in the pipe to the server: they are all there to be
    // read, whether the server reads them or not.
    let requests: String = (1..=300)
        .map(|id| read_request(id, "skill://big/refs/big.txt") + "\n")
        .collect();
    stdin.write_all(requests.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let told = loop {
        match stderr.recv_timeout(ANSWER) {
            Ok(Some(line)) if line.contains("answers unread") => break line,
            Ok(Some(_)) => {}
            Ok(None) => panic!("the server ended: {:?}", child.wait()),
            Err(err) => panic!("nothing on stderr: {err:?}"),
        }
    };
    assert!(
        told.starts_with("bcode-prompt: the client has left ")
            && told.ends_with(" bytes of answers unread; no request is read until it reads them"),
        "{told}"
    );
    // What was held is answered whole once the client reads.
    for _ in 0..3 {
        let answer = next_answer(&mut stdout);
        let text = answer["result"]["contents"][0]["text"].as_str().unwrap();
        assert_eq!(text.len(), 4 * 1024 * 1024, "{}", answer["id"]);
    }
    assert_eq!(child.try_wait().unwrap(), None, "the server stopped");
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Issue 38, item 7: one 16 MB request line (`ping` with a huge `params`
/// array) took the server to 1.5 GB, parsed twice with both copies alive.
/// Now a line is scanned without building anything, refused when it holds
/// more values than any request needs, and parsed once; a 4 MiB line of
/// two million values is answered within a data segment of 192 MiB.
#[test]
fn a_request_line_of_millions_of_values_is_refused_within_bounded_memory() {
    let sandbox = big_file_sandbox(16);
    let (mut child, mut stdin, mut stdout) = start_limited(&sandbox, 192 * 1024);
    let mut line = br#"{"jsonrpc":"2.0","id":7,"method":"ping","params":["#.to_vec();
    for _ in 0..2 * 1024 * 1024 - 1 {
        line.extend_from_slice(b"0,");
    }
    line.extend_from_slice(b"0]}\n");
    stdin.write_all(&line).unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":8,"method":"ping"}}"#).unwrap();
    drop(stdin);
    let answers = [next_answer(&mut stdout), next_answer(&mut stdout)];
    assert_eq!(
        answers,
        [
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": "the request holds more than 100000 JSON values"}}),
            json!({"jsonrpc": "2.0", "id": 8, "result": {}}),
        ]
    );
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// Issue 38, item 8: requests sent all at once and followed by the end of
/// stdin lost answers (up to all of them): the process exited before its
/// writer had written them. Every request read is now answered, and every
/// answer written, before the server exits.
#[test]
fn every_request_read_before_stdin_ends_is_answered_before_the_server_exits() {
    let sandbox = big_file_sandbox(1024 * 1024);
    let mut client = Client::start(&sandbox, &[]);
    let requests: Vec<String> = (1..=20)
        .map(|id| read_request(id, "skill://big/refs/big.txt"))
        .collect();
    for request in &requests {
        client.send_raw(request.as_bytes());
    }
    let Client {
        mut child,
        stdin,
        lines,
        ..
    } = client;
    drop(stdin);
    let mut answered = Vec::new();
    while let Ok(line) = lines.recv_timeout(ANSWER) {
        let answer: Value = serde_json::from_str(&line).unwrap();
        if answer.get("id").is_none() {
            continue; // a notification
        }
        let text = answer["result"]["contents"][0]["text"].as_str().unwrap();
        assert_eq!(text.len(), 1024 * 1024, "{}", answer["id"]);
        answered.push(answer["id"].as_u64().unwrap());
    }
    answered.sort_unstable();
    assert_eq!(answered, (1..=20).collect::<Vec<u64>>());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// Issue 39, item 5, through the official MCP Python SDK's client: the
/// tool is listed, a call routes a task to the skill named for it (the
/// SDK checked the structured content against the listed output schema),
/// the URI it gives reads, bad arguments are a tool error the model sees,
/// and an unknown tool is the protocol's error.
#[test]
fn the_official_python_sdk_client_routes_a_task_through_search_skills() {
    let Some(python) = python_with_mcp() else {
        return;
    };
    let sandbox = sandbox();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_clients/python_sdk_search.py");
    let out = Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_bcode-prompt"))
        .arg(&sandbox.repo)
        .arg("extract the text of these pdf files")
        .env("HOME", &sandbox.home)
        .env("BCODE_STATE_DIR", &sandbox.state)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(seen["tools_capability"], json!({}), "{seen}");
    let names: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search_skills"]);
    let found = &seen["found"];
    assert_eq!(found["is_error"], false, "{seen}");
    let results = found["structured"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{seen}");
    assert_eq!(results[0]["uri"], "skill://pdf-tools/SKILL.md");
    assert_eq!(results[0]["name"], "pdf-tools");
    assert_eq!(results[0]["description"], "Work with PDFs");
    let text: Value = serde_json::from_str(found["text"][0].as_str().unwrap()).unwrap();
    assert_eq!(text, found["structured"]);
    assert_eq!(
        seen["first_read"].as_str().unwrap().as_bytes(),
        std::fs::read(sandbox.repo.join(".bcode/skills/pdf-tools/SKILL.md")).unwrap()
    );
    assert_eq!(
        seen["refused"],
        json!({"is_error": true, "text": ["`limit` must be an integer from 1 to 50 (10 when not given), not 0."]})
    );
    assert_eq!(seen["unknown_error"], -32602);
}

/// The tool's sentences are templates: the operator's
/// `system_prompt.templates_dir` rewords them, and one that does not
/// render stops the start with a config error naming it.
#[test]
fn the_operators_templates_word_search_skills() {
    let sandbox = sandbox();
    let templates = sandbox.base.join("templates");
    write_files(
        &templates,
        &[(
            "mcp/search_skills.j2",
            "Route each task to a skill first.\n",
        )],
    );
    let set = format!("system_prompt.templates_dir={}", templates.display());
    let mut client = Client::start(&sandbox, &["--set", &set]);
    let tools = client.result("tools/list", json!({}));
    assert_eq!(
        tools["tools"][0]["description"],
        "Route each task to a skill first."
    );
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    write_files(
        &templates,
        &[("mcp/search_skills.j2", "Route {{ nowhere }}.\n")],
    );
    let out = sandbox
        .command()
        .args(["--set", &set, "mcp"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("template `mcp/search_skills.j2` overridden by ")
            && stderr.contains("undefined value: `nowhere` is undefined"),
        "{stderr}"
    );
}

/// Issue 40, item 1: a client of protocol 2026-07-28 finds the server with
/// `server/discover` (the skills extension declared there), gets listings
/// with the caching attributes (item 3), and hears of a change only on the
/// `subscriptions/listen` stream it opened: acknowledged with what it asked
/// for and the server sends, each notice tagged with the subscription, and
/// the stream ended with its final result when the client closes stdin.
#[test]
fn a_2026_client_discovers_lists_with_cache_hints_and_hears_changes_on_its_subscription() {
    let sandbox = sandbox();
    let mut client = Client::spawn(&sandbox, &[]);
    let discover = client.request_2026("server/discover", json!({}));
    let found = &discover["result"];
    assert_eq!(
        found["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/skills": {}}),
        "{discover}"
    );
    assert_eq!(
        found["capabilities"]["resources"],
        json!({"listChanged": true}),
        "{discover}"
    );
    let versions = found["supportedVersions"].as_array().unwrap();
    assert!(versions.contains(&json!("2026-07-28")), "{discover}");
    assert!(versions.contains(&json!("2025-11-25")), "{discover}");

    let list = client.request_2026("skills/list", json!({}))["result"].clone();
    assert_eq!(list["resultType"], "complete", "{list}");
    assert_eq!(list["ttlMs"], 500, "{list}");
    assert_eq!(list["cacheScope"], "private", "{list}");
    let pdf = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|skill| skill["uri"] == "skill://pdf-tools/SKILL.md")
        .unwrap()
        .clone();
    let guide = pdf["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|file| file["uri"] == "skill://pdf-tools/refs/guide.md")
        .unwrap();
    assert_eq!(guide["size"], "# Guide\n".len(), "{pdf}");
    let got = client.request_2026("skills/get", json!({"uri": "skill://pdf-tools/SKILL.md"}));
    assert_eq!(
        [
            &got["result"]["ttlMs"],
            &got["result"]["cacheScope"],
            &got["result"]["resultType"]
        ],
        [&json!(500), &json!("private"), &json!("complete")],
        "{got}"
    );
    assert_eq!(got["result"]["skill"], pdf);
    let read = client.request_2026(
        "resources/read",
        json!({"uri": "skill://pdf-tools/refs/guide.md"}),
    );
    assert_eq!(read["result"]["ttlMs"], 500, "{read}");
    assert_eq!(read["result"]["contents"][0]["text"], "# Guide\n", "{read}");

    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let listen = json!({"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen", "params": {
        "_meta": meta,
        "notifications": {"resourcesListChanged": true, "toolsListChanged": true, "promptsListChanged": true},
    }});
    client.send_raw(listen.to_string().as_bytes());
    let acknowledged = client.next();
    assert_eq!(
        acknowledged,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "sub-1"},
            "notifications": {"resourcesListChanged": true},
        }})
    );
    write_files(
        &sandbox.repo.join(".bcode/skills"),
        &[("added/SKILL.md", "---\ndescription: Added later\n---\nB.\n")],
    );
    // The first notice is the subscription's: none is sent untagged (a
    // session without `initialize` never asked for one).
    let notice = client.next();
    assert_eq!(
        notice,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed", "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "sub-1"},
        }})
    );
    let after = client.request_2026("skills/get", json!({"uri": "skill://added/SKILL.md"}));
    assert_eq!(
        after["result"]["skill"]["frontmatter"]["description"], "Added later",
        "{after}"
    );
    drop(client.stdin.take());
    let mut rest = Vec::new();
    while let Ok(line) = client.lines.recv_timeout(ANSWER) {
        rest.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    let ended: Vec<&Value> = rest.iter().filter(|m| m["id"] == "sub-1").collect();
    assert_eq!(ended.len(), 1, "{rest:?}");
    assert_eq!(ended[0]["result"]["resultType"], "complete", "{rest:?}");
    assert_eq!(
        ended[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "sub-1",
        "{rest:?}"
    );
    assert!(
        rest.iter()
            .all(|m| m["method"] != "notifications/resources/list_changed"
                || m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"),
        "{rest:?}"
    );
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
}

/// A repository with one skill named outside ASCII.
fn non_ascii_sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.repo.join(".git")).unwrap();
    write_files(
        &sandbox.repo.join(".bcode/skills"),
        &[
            (
                "données-csv/SKILL.md",
                "---\nname: données-csv\ndescription: Read CSV data\n---\nSee refs/a b.md.\n",
            ),
            ("données-csv/refs/a b.md", "# A\n"),
            ("plain/SKILL.md", "---\ndescription: Plain\n---\nB.\n"),
        ],
    );
    sandbox
}

/// Issue 40, item 6: `skills/get` of a URI typed unencoded answers the skill
/// (in the spelling asked; the SDK called the listed spelling an internal
/// error, -32603), and a read takes either spelling. Item 7: the operator
/// is told on start that common MCP clients refuse the name.
#[test]
fn a_non_ascii_uri_typed_unencoded_answers_the_skill_and_the_operator_is_warned() {
    let sandbox = non_ascii_sandbox();
    let mut client = Client::start(&sandbox, &[]);
    let list = client.result("skills/list", json!({}));
    assert_eq!(
        list["skills"][0]["uri"], "skill://donn%C3%A9es-csv/SKILL.md",
        "{list}"
    );
    let asked = "skill://données-csv/SKILL.md";
    let got = client.request("skills/get", json!({"uri": asked}));
    assert!(got.get("error").is_none(), "{got}");
    let skill = &got["result"]["skill"];
    assert_eq!(skill["uri"], asked);
    assert_eq!(skill["frontmatter"]["name"], "données-csv");
    let files: Vec<&str> = skill["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "skill://données-csv/SKILL.md",
            "skill://données-csv/refs/a%20b.md"
        ]
    );
    for uri in [
        asked,
        "skill://données-csv/refs/a%20b.md",
        "skill://donn%c3%a9es-csv/refs/a%20b.md",
    ] {
        let read = client.result("resources/read", json!({"uri": uri}));
        assert_eq!(read["contents"][0]["uri"], uri, "{read}");
    }
    // Unknown, in either spelling: invalid params.
    assert_eq!(
        client.error_code("skills/get", json!({"uri": "skill://données-xls/SKILL.md"})),
        -32602
    );
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let warned: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("not ASCII"))
        .collect();
    assert_eq!(
        warned,
        [format!(
            "bcode-prompt: skill `données-csv` has a name that is not ASCII: {}",
            bcode_skill::MCP_CLIENTS_REFUSE
        )],
        "{stderr}"
    );
}
