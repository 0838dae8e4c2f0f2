//! `SkillService` driven line by line as a client would on stdio (issue
//! 26, item 1; issue 39, item 5; issue 40, item 1; moved here from the
//! CLI's tests, issue 41): listings with the front matter as written and
//! every file digested, pages that never split an entry, files read as
//! text or blob and nothing outside a skill, the `search_skills` tool, and
//! what a client of 2025-11-25 sees. The service runs on the SDK's
//! transport over an in-memory pipe; what only `serve_stdio` does (bounded
//! lines, answers a client does not read, stdin's end) is tested on the
//! binary, in `cli/tests/cli_mcp.rs`.

#![cfg(feature = "client")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use std::path::{Path, PathBuf};
use std::time::Duration;

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{Discovery, DiscoveryOptions};
use bcode_skill_mcp::{SkillServer, SkillService, digest};
use bcode_test_support::write_tree as write_files;
use rmcp::ServiceExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};

/// Long enough for a loaded machine; a healthy answer takes milliseconds.
const ANSWER: Duration = Duration::from_secs(30);

/// A client writing JSON-RPC lines to a `SkillService` and reading its
/// lines back, on a runtime of its own.
struct Client {
    runtime: tokio::runtime::Runtime,
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    next_id: u64,
    /// The answer to `initialize`.
    init: Value,
}

impl Client {
    /// Serving the skills of `skills` (with `disabled` left out), opened
    /// with `initialize` as a client of 2025-06-18 does.
    fn start(skills: &Path, disabled: &[&str]) -> Client {
        let mut config = SkillsConfig::default();
        config.disabled.ids = disabled.iter().map(|id| (*id).to_owned()).collect();
        let registry = Discovery::new(DiscoveryOptions::from_config(&config))
            .build(&[crate::common::root(skills)]);
        let server = SkillServer::new(&registry);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (client_io, server_io) = tokio::io::duplex(64 * 1024 * 1024);
        runtime.spawn(async move {
            if let Ok(running) = SkillService::new(server).serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client_io);
        let mut client = Client {
            runtime,
            write,
            lines: BufReader::new(read).lines(),
            next_id: 1,
            init: Value::Null,
        };
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

    fn send_raw(&mut self, line: &[u8]) {
        let write = &mut self.write;
        self.runtime.block_on(async {
            write.write_all(line).await.unwrap();
            write.write_all(b"\n").await.unwrap();
            write.flush().await.unwrap();
        });
    }

    /// The next message the server sends.
    fn next(&mut self) -> Value {
        let lines = &mut self.lines;
        let line = self
            .runtime
            .block_on(async { tokio::time::timeout(ANSWER, lines.next_line()).await })
            .unwrap_or_else(|_| panic!("no answer from the server"))
            .unwrap()
            .expect("the server closed its output");
        serde_json::from_str(&line).unwrap()
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
}

/// A folder of served, hidden, disabled (`off`, with [`DISABLED`]) and
/// unservable skills, and a file beside it that a link in a skill points
/// to.
struct Sandbox {
    base: tempfile::TempDir,
    skills: PathBuf,
}

const DISABLED: &[&str] = &["off"];

fn sandbox() -> Sandbox {
    let base = tempfile::tempdir().unwrap();
    let skills = base.path().join("skills");
    bcode_test_support::mcp::write_served_skills(&skills, base.path());
    Sandbox { base, skills }
}

/// The digest of the file at `path`.
fn sha256(path: &Path) -> String {
    digest(&std::fs::read(path).unwrap())
}

#[test]
fn skills_are_listed_with_front_matter_as_written_and_every_file_digested() {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox.skills, DISABLED);
    let list = client.result("skills/list", json!({}));
    assert_eq!(list.get("nextCursor"), None);
    let uris: Vec<&str> = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["uri"].as_str().unwrap())
        .collect();
    // Hidden, disabled and title-named skills are not served.
    assert_eq!(
        uris,
        [
            "skill://flat/SKILL.md",
            "skill://no-name/SKILL.md",
            "skill://pdf-tools/SKILL.md"
        ]
    );
    let pdf = &list["skills"][2];
    assert_eq!(
        pdf["frontmatter"],
        json!({"name": "pdf-tools", "description": "Work with PDFs", "license": "MIT", "metadata": {"author": "team", "version": "1.10"}, "x-custom": [1, "two"]})
    );
    let folder = sandbox.skills.join("pdf-tools");
    let expected: Vec<Value> = [
        "SKILL.md",
        "refs/guide.md",
        "refs/logo.bin",
        "scripts/run.sh",
    ]
    .iter()
    .map(|file| {
        let path = folder.join(file);
        json!({
            "uri": format!("skill://pdf-tools/{file}"),
            "digest": sha256(&path),
            "size": std::fs::metadata(&path).unwrap().len(),
        })
    })
    .collect();
    assert_eq!(pdf["resources"], json!(expected));
    // A skill without `name` is served under its id, which the open
    // specification derives from the folder.
    assert_eq!(
        list["skills"][1]["frontmatter"],
        json!({"name": "no-name", "description": "A skill without a name field"})
    );

    let got = client.result("skills/get", json!({"uri": "skill://pdf-tools/SKILL.md"}));
    assert_eq!(got["skill"], *pdf);
    for uri in [
        "skill://hidden/SKILL.md",
        "skill://off/SKILL.md",
        "skill://titled/SKILL.md",
        "skill://nope/SKILL.md",
    ] {
        assert_eq!(
            client.error_code("skills/get", json!({"uri": uri})),
            -32602,
            "{uri}"
        );
    }

    let resources = client.result("resources/list", json!({}));
    assert_eq!(
        resources["resources"][2],
        json!({"uri": "skill://pdf-tools/SKILL.md", "name": "pdf-tools", "description": "Work with PDFs", "mimeType": "text/markdown"})
    );
}

#[test]
fn files_are_read_as_text_or_blob_and_nothing_outside_a_skill_is_served() {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox.skills, DISABLED);
    let read = client.result(
        "resources/read",
        json!({"uri": "skill://pdf-tools/refs/guide.md"}),
    );
    assert_eq!(
        read["contents"],
        json!([{"uri": "skill://pdf-tools/refs/guide.md", "mimeType": "text/markdown", "text": "# Guide\n"}])
    );
    let read = client.result(
        "resources/read",
        json!({"uri": "skill://pdf-tools/refs/logo.bin"}),
    );
    assert_eq!(
        read["contents"],
        json!([{"uri": "skill://pdf-tools/refs/logo.bin", "blob": "AJ+Slv8="}])
    );
    let read = client.result("resources/read", json!({"uri": "skill://flat/SKILL.md"}));
    assert_eq!(
        read["contents"][0]["text"],
        "---\ndescription: A flat skill\n---\nFlat body.\n"
    );
    for uri in [
        "skill://pdf-tools/refs/leak.txt",
        "skill://pdf-tools/../hidden/SKILL.md",
        "skill://pdf-tools/%2e%2e/hidden/SKILL.md",
        "skill://pdf-tools/refs%2F..%2F..%2Fhidden%2FSKILL.md",
        "skill://pdf-tools/%2E%2E/%2E%2E/%2E%2E/secret.txt",
        "skill://hidden/SKILL.md",
        "skill://off/SKILL.md",
        "skill://pdf-tools/refs/missing.md",
        "skill://pdf-tools/refs",
        "file:///etc/passwd",
        "skill://pdf-tools/SKILL.md?x",
    ] {
        let answer = client.request("resources/read", json!({"uri": uri}));
        assert!(answer["error"]["code"].is_i64(), "{uri}: {answer}");
        assert!(
            !answer.to_string().contains("outside"),
            "{uri} leaked: {answer}"
        );
    }
}

#[test]
fn listings_are_paged_without_splitting_an_entry() {
    let skills = tempfile::tempdir().unwrap();
    let files: Vec<(String, String)> = (0..250)
        .map(|n| {
            (
                format!("s{n:03}/SKILL.md"),
                format!("---\ndescription: Skill {n}\n---\nBody {n}.\n"),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write_files(skills.path(), &files);
    let mut client = Client::start(skills.path(), &[]);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let page = client.result("skills/list", params);
        pages += 1;
        for skill in page["skills"].as_array().unwrap() {
            assert_eq!(skill["resources"].as_array().unwrap().len(), 1);
            seen.push(skill["uri"].as_str().unwrap().to_owned());
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = (0..250)
        .map(|n| format!("skill://s{n:03}/SKILL.md"))
        .collect();
    assert_eq!(seen, expected);
    assert_eq!(
        client.error_code("skills/list", json!({"cursor": "nonsense"})),
        -32602
    );
    let mut resources = 0;
    let page = client.result("resources/list", json!({}));
    resources += page["resources"].as_array().unwrap().len();
    assert_eq!(resources, 250);
}

/// Issue 39, item 5: the server declares tools and lists one,
/// `search_skills`, whose schemas say what it takes and what it answers.
#[test]
fn the_search_skills_tool_is_listed_with_its_schemas() {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox.skills, DISABLED);
    // The tool set never changes: no `notifications/tools/list_changed`.
    assert_eq!(
        client.init["result"]["capabilities"]["tools"],
        json!({}),
        "{}",
        client.init
    );
    let tools = client.result("tools/list", json!({}));
    let tool = &tools["tools"][0];
    assert_eq!(tools["tools"].as_array().unwrap().len(), 1, "{tools}");
    assert!(
        tool["description"]
            .as_str()
            .unwrap()
            .starts_with("Find the skills of this registry that fit a task, best match first."),
        "{tool}"
    );
    let fields = json!(["name", "description", "keywords", "files", "body"]);
    assert_eq!(
        *tool,
        json!({
            "name": "search_skills",
            "description": tool["description"],
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "minLength": 1,
                        "description": "The task to find skills for: a few words or a sentence, such as the user's request (\"fill in this PDF form\", \"write release notes from the git log\"). At most 65536 bytes.",
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 50,
                        "default": 10,
                        "description": "How many skills to return at most, best first: 1 to 50; 10 when not given.",
                    },
                },
                "required": ["query"],
                "additionalProperties": false,
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "uri": {"type": "string"},
                                "name": {"type": "string"},
                                "description": {"type": "string"},
                                "score": {"type": "number"},
                                "coverage": {"type": "number", "minimum": 0, "maximum": 1},
                                "matched": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "term": {"type": "string"},
                                            "fields": {"type": "array", "items": {"type": "string", "enum": fields}},
                                        },
                                        "required": ["term", "fields"],
                                    },
                                },
                            },
                            "required": ["uri", "name", "description", "score", "coverage", "matched"],
                        },
                    },
                },
                "required": ["results"],
            },
            "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false},
        })
    );
}

/// The `search_skills` answer: its structured content, checked to be the
/// same JSON as its text block.
fn searched(client: &mut Client, arguments: Value) -> Value {
    let result = client.result(
        "tools/call",
        json!({"name": "search_skills", "arguments": arguments}),
    );
    assert_eq!(result["isError"], false, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(result["content"][0]["type"], "text");
    let structured = result["structuredContent"].clone();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), structured);
    structured
}

fn result_uris(found: &Value) -> Vec<String> {
    found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| result["uri"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn search_skills_ranks_the_skill_named_for_the_task_first_with_its_listed_uri() {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox.skills, DISABLED);
    let found = searched(
        &mut client,
        json!({"query": "extract the text of these pdf files"}),
    );
    let first = &found["results"][0];
    assert_eq!(found["results"].as_array().unwrap().len(), 1, "{found}");
    assert_eq!(
        *first,
        json!({
            "uri": "skill://pdf-tools/SKILL.md",
            "name": "pdf-tools",
            "description": "Work with PDFs",
            "score": first["score"],
            "coverage": first["coverage"],
            // `PDFs` is no plural of `pdf` to the English stemmer.
            "matched": [{"term": "pdf", "fields": ["name"]}],
        })
    );
    // Rounded to four decimals, so the same bytes on every machine.
    let score = first["score"].to_string();
    let decimals = score.split_once('.').map_or(0, |(_, after)| after.len());
    assert!(
        first["score"].as_f64().unwrap() > 0.0 && decimals <= 4,
        "{score}"
    );
    // The URI is the one `skills/list` gives, and it reads.
    let list = client.result("skills/list", json!({}));
    assert_eq!(list["skills"][2]["uri"], first["uri"]);
    let read = client.result("resources/read", json!({"uri": first["uri"]}));
    assert_eq!(read["contents"][0]["uri"], first["uri"]);
    // Skills hidden from the model, disabled, or not served under their
    // name are never found, whatever the query names.
    let none = searched(&mut client, json!({"query": "hidden disabled titled"}));
    assert_eq!(none, json!({"results": []}));
    // The limit is honoured; without one, every match (up to ten) comes.
    let both = searched(&mut client, json!({"query": "a flat skill"}));
    assert_eq!(
        result_uris(&both),
        ["skill://flat/SKILL.md", "skill://no-name/SKILL.md"]
    );
    let one = searched(&mut client, json!({"query": "a flat skill", "limit": 1}));
    assert_eq!(one["results"], json!([both["results"][0]]));
    // No path of this machine is in any answer.
    for answer in [&found, &both] {
        let text = answer.to_string();
        assert!(
            !text.contains(&*sandbox.base.path().to_string_lossy()),
            "{text}"
        );
    }
}

#[test]
fn search_skills_refuses_bad_arguments_as_a_tool_error_and_an_unknown_tool_as_a_protocol_error() {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox.skills, DISABLED);
    let long = "pdf ".repeat(20_000);
    for (arguments, told) in [
        (
            json!({}),
            "`query` is required: the task to find skills for, as a string.",
        ),
        (
            json!({"query": ["pdf"]}),
            "`query` must be a string (the task to find skills for), not an array.",
        ),
        (
            json!({"query": "  "}),
            "`query` is empty: describe the task in a few words.",
        ),
        (
            json!({"query": long}),
            "`query` is 80000 bytes, over the limit of 65536: describe the task in fewer words.",
        ),
        (
            json!({"query": "pdf", "limit": 0}),
            "`limit` must be an integer from 1 to 50 (10 when not given), not 0.",
        ),
        (
            json!({"query": "pdf", "limit": 500}),
            "`limit` must be an integer from 1 to 50 (10 when not given), not 500.",
        ),
        (
            json!({"query": "pdf", "limit": "3"}),
            "`limit` must be an integer from 1 to 50 (10 when not given), not a string.",
        ),
        (
            json!({"query": "pdf", "max": 3}),
            "search_skills takes only the arguments `query` and `limit`.",
        ),
    ] {
        let result = client.result(
            "tools/call",
            json!({"name": "search_skills", "arguments": arguments}),
        );
        assert_eq!(
            result,
            json!({"content": [{"type": "text", "text": told}], "isError": true}),
            "{arguments}"
        );
    }
    // No arguments at all: the same as an empty object.
    let result = client.result("tools/call", json!({"name": "search_skills"}));
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        client.error_code(
            "tools/call",
            json!({"name": "search", "arguments": {"query": "pdf"}})
        ),
        -32602
    );
    // A `tools/call` that is no call (no `name`, `arguments` not an
    // object) is refused by `serve_stdio`'s own reading of the line: see
    // `a_misbehaving_client_gets_errors_and_the_server_goes_on` in
    // `cli/tests/cli_mcp.rs`.
    // Still serving.
    let found = searched(&mut client, json!({"query": "pdf"}));
    assert_eq!(result_uris(&found), ["skill://pdf-tools/SKILL.md"]);
}

/// Issue 40, item 1: a client of 2025-11-25 sees the server as before: no
/// caching attributes, no `resultType`, and `subscriptions/listen` is not
/// a method of its era.
#[test]
fn a_2025_client_sees_no_2026_fields() {
    let sandbox = sandbox();
    let mut client = Client::start(&sandbox.skills, DISABLED);
    let list = client.result("skills/list", json!({}));
    assert_eq!(list.get("ttlMs"), None, "{list}");
    assert_eq!(list.get("cacheScope"), None, "{list}");
    assert_eq!(list.get("resultType"), None, "{list}");
    let got = client.result("skills/get", json!({"uri": "skill://pdf-tools/SKILL.md"}));
    assert_eq!(got.get("ttlMs"), None, "{got}");
    assert_eq!(
        client.error_code(
            "subscriptions/listen",
            json!({"notifications": {"resourcesListChanged": true}})
        ),
        -32601
    );
}
