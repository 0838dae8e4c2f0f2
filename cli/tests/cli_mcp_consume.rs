//! Consuming skills from MCP servers (issue 26, items 2 and 3): a
//! `bcode-prompt` whose user config lists `bcode-prompt --repo OTHER mcp`
//! (this very binary) as a `[[skills.mcp_servers]]` entry shows the other
//! repository's skills as `other:<name>` from `mcp:other`, loads their
//! bodies on activation only and refuses a file that changed since it was
//! listed. An untrusted repository cannot add a server. Issue 38: a server
//! starts in a neutral folder or its entry's `cwd`, never the repository; a
//! listing is bounded in bytes, in a process of bounded memory (and
//! entries, in `packages/mcp/tests/client_provider.rs`); same-name skills
//! of one server are one entry each, everywhere. Servers that fail, and
//! bad entries, are tested on the provider itself
//! (`packages/mcp/tests/client_spawned.rs`).

// Helpers outside `#[test]` functions are test code too; clippy's
// allow-*-in-tests settings only cover `#[test]` items and `cfg(test)`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;
use bcode_test_support::mcp::{fake_server, sh_quote};

use std::path::{Path, PathBuf};

use common::{Sandbox, digest, ok, write};
use serde_json::{Value, json};

/// The timeout every entry of these tests gets.
const TIMEOUT_MS: u64 = 1500;

const PDF: &str = "---\nname: pdf\ndescription: Reads PDFs.\nlicense: MIT\n---\nThe PDF body.\n";

/// A sandbox with one local skill (`local`) and a user config listing
/// `servers` (TOML written after `[[skills.mcp_servers]]` headers).
fn consumer(servers: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/local/SKILL.md"),
        "---\nname: local\ndescription: A local skill.\n---\nLocal body.\n",
    );
    write(&sandbox.home.join(".config/bcode/bcode.toml"), servers);
    sandbox
}

/// The other repository, served by this binary, with its skill `pdf`.
fn other(sandbox: &Sandbox) -> (PathBuf, String) {
    let other = sandbox.base.join("other");
    write(&other.join(".bcode/skills/pdf/SKILL.md"), PDF);
    let entry = server(
        "other",
        env!("CARGO_BIN_EXE_bcode-prompt"),
        &["--repo", &other.display().to_string(), "mcp"],
    );
    (other, entry)
}

/// One `[[skills.mcp_servers]]` entry.
fn server(name: &str, command: &str, args: &[&str]) -> String {
    server_with_timeout(name, command, args, TIMEOUT_MS)
}

fn server_with_timeout(name: &str, command: &str, args: &[&str], timeout_ms: u64) -> String {
    format!(
        "[[skills.mcp_servers]]\nname = {}\ncommand = {}\nargs = {}\ntimeout_ms = {timeout_ms}\n",
        Value::from(name),
        Value::from(command),
        Value::from(args.to_vec())
    )
}

/// `skills list --json`, as `(skills, diagnostics)`: each skill's id,
/// name, description, source and location.
fn list(sandbox: &Sandbox) -> (Vec<Value>, Vec<Value>) {
    listing(&ok(sandbox.run(&["skills", "list", "--json"])))
}

/// The skills and diagnostics of a `skills list --json` answer.
fn listing(out: &str) -> (Vec<Value>, Vec<Value>) {
    let listing: Value = serde_json::from_str(out).unwrap();
    let skills = listing["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skill| {
            json!({
                "id": skill["id"],
                "name": skill["name"],
                "description": skill["description"],
                "source": skill["source"],
                "location": skill["location"],
            })
        })
        .collect();
    (skills, listing["diagnostics"].as_array().unwrap().clone())
}

fn local(sandbox: &Sandbox) -> Value {
    json!({
        "id": "local",
        "name": "local",
        "description": "A local skill.",
        "source": "repo:.bcode/skills",
        "location": sandbox.repo.join(".bcode/skills/local/SKILL.md").display().to_string(),
    })
}

#[test]
fn a_servers_skills_are_listed_loaded_and_catalogued_under_its_name() {
    let sandbox = consumer("");
    let (_, entry) = other(&sandbox);
    write(&sandbox.home.join(".config/bcode/bcode.toml"), &entry);
    let (skills, diagnostics) = list(&sandbox);
    assert_eq!(diagnostics, Vec::<Value>::new());
    assert_eq!(
        skills,
        [
            local(&sandbox),
            json!({
                "id": "other:pdf",
                "name": "pdf",
                "description": "Reads PDFs.",
                "source": "mcp:other",
                "location": "bcode-provider://other/other:pdf",
            }),
        ]
    );

    let block = ok(sandbox.run(&["skills", "context", "other:pdf"]));
    assert_eq!(
        block,
        "<skill id=\"other:pdf\" name=\"pdf\" location=\"bcode-provider://other/other:pdf\">\n\
         References are relative to skill://pdf/.\n\
         Source label: mcp:other\n\
         \n\
         The PDF body.\n\
         </skill>\n"
    );
    // The fetched file is kept in the state folder, keyed by server and URI.
    let cached: Vec<PathBuf> = std::fs::read_dir(sandbox.state.join("cache/mcp"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(cached.len(), 1, "{cached:?}");
    assert_eq!(std::fs::read_to_string(&cached[0]).unwrap(), PDF);

    let catalog = ok(sandbox.run(&["skills", "catalog"]));
    let skills = &catalog[catalog.find("<available_skills>").unwrap()..];
    assert_eq!(
        skills,
        format!(
            "<available_skills>\n  <skill>\n    <id>local</id>\n    <name>local</name>\n    \
             <description>A local skill.</description>\n    <location>{}</location>\n    \
             <source>repo:.bcode/skills</source>\n  </skill>\n  <skill>\n    <id>other:pdf</id>\n    \
             <name>pdf</name>\n    <description>Reads PDFs.</description>\n    \
             <location>bcode-provider://other/other:pdf</location>\n    <source>mcp:other</source>\n  \
             </skill>\n</available_skills>",
            sandbox.repo.join(".bcode/skills/local/SKILL.md").display()
        )
    );
    let render = ok(sandbox.run(&["render", "--skill", "other:pdf"]));
    assert!(render.contains("<id>other:pdf</id>"), "{render}");
    assert!(render.contains("The PDF body.\n</skill>"), "{render}");
}

/// A skill file changed after the listing (same size, other bytes): its
/// activation is refused with a message naming the URI and the digests,
/// and recorded as `SkillInvocationFailed`; the local skill loads.
#[test]
fn a_file_changed_after_listing_is_refused_at_activation() {
    let sandbox = consumer("");
    let (other, entry) = other(&sandbox);
    write(&sandbox.home.join(".config/bcode/bcode.toml"), &entry);

    let mut session = sandbox.live_session("changed");
    session.send("/skills");
    session.send("/skill local");
    let listed = session.read_until("└");
    assert!(
        listed.contains("  other:pdf [mcp:other]: Reads PDFs.\n"),
        "{listed}"
    );
    let changed = PDF.replace("The PDF body.", "The PDF BODY.");
    std::fs::write(other.join(".bcode/skills/pdf/SKILL.md"), &changed).unwrap();
    session.send("/skill other:pdf");
    let refused = session.read_until("error:");
    let expected_error = format!(
        "skill provider `other` failed: MCP server `other`: skill://pdf/SKILL.md has digest {}, \
         the manifest says {}: the file changed since it was listed, so it is not used \
         (list the skills again to pick up the change)",
        digest(changed.as_bytes()),
        digest(PDF.as_bytes())
    );
    assert_eq!(
        refused,
        format!("> /skill other:pdf\nerror: {expected_error}\n")
    );
    let (code, stderr) = session.finish_with_stderr();
    assert_eq!(code, Some(0), "{stderr}");

    let events = events(&sandbox.state.join("sessions/changed/events.jsonl"));
    assert_eq!(
        events,
        [
            json!({"event": "SkillActivated", "id": "local"}),
            json!({"event": "SkillContextLoaded", "id": "local"}),
            json!({"event": "SkillInvocationFailed", "id": "other:pdf", "error": expected_error}),
        ]
    );
}

/// Each event of a session log: its kind, id and error, if any.
fn events(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|line| {
            let event: Value = serde_json::from_str(line).unwrap();
            let mut kept = json!({"event": event["event"], "id": event["id"]});
            if let Some(error) = event.get("error") {
                kept["error"] = error.clone();
            }
            kept
        })
        .collect()
}

/// An untrusted repository's `[[skills.mcp_servers]]` starts nothing: the
/// entry is dropped with the usual warning, and its program never runs.
#[test]
fn an_untrusted_repositorys_servers_are_ignored_with_a_warning() {
    let sandbox = consumer("");
    let marker = sandbox.base.join("started");
    write(
        &sandbox.repo.join(".bcode/bcode.toml"),
        &server(
            "evil",
            "sh",
            &["-c", &format!("touch {}", marker.display())],
        ),
    );
    let out = sandbox.run(&["skills", "list", "--json"]);
    let stderr = common::lossy(&out.stderr);
    let listing: Value = serde_json::from_str(&ok(out)).unwrap();
    let ids: Vec<&Value> = listing["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["id"])
        .collect();
    assert_eq!(ids, [&json!("local")]);
    assert_eq!(listing["diagnostics"], json!([]));
    assert!(!marker.exists(), "the repository's server was started");
    let warning = format!(
        "repo file {}:1: `skills.mcp_servers = [{{ args = [\"-c\", \"touch {}\"], command = \"sh\", name = \"evil\", timeout_ms = {TIMEOUT_MS} }}]` \
         ignored: it starts programs or sends the user's headers to servers (the MCP servers whose skills it would add); the repository is not trusted",
        sandbox.repo.join(".bcode/bcode.toml").display(),
        marker.display()
    );
    assert!(stderr.contains(&warning), "{stderr}");
}

/// Issue 38, item 4: a server starts in the folder its entry's `cwd` names
/// (here `~/tools`), else in a neutral one (`/`), never the folder Bcode
/// runs in. Run from inside a repository holding its own `serve.sh`, the
/// entry `sh serve.sh` (as `python3 -m skillsrv` would take the
/// repository's `skillsrv.py`) runs the user's script or none, never the
/// repository's; a `cwd` that is no folder is named in the diagnostic.
#[test]
fn a_server_starts_in_its_cwd_or_a_neutral_folder_never_the_repository() {
    let sandbox = consumer("");
    let other = sandbox.base.join("other");
    write(&other.join(".bcode/skills/pdf/SKILL.md"), PDF);
    let hijacked = sandbox.base.join("hijacked");
    write(
        &sandbox.repo.join("serve.sh"),
        &format!("touch {}\n", sh_quote(&hijacked.display().to_string())),
    );
    let (tools_pwd, plain_pwd) = (
        sandbox.base.join("tools-pwd"),
        sandbox.base.join("plain-pwd"),
    );
    write(
        &sandbox.home.join("tools/serve.sh"),
        &format!(
            "pwd > {}\nexec {} --repo {} mcp\n",
            sh_quote(&tools_pwd.display().to_string()),
            sh_quote(env!("CARGO_BIN_EXE_bcode-prompt")),
            sh_quote(&other.display().to_string())
        ),
    );
    let plain_script = format!(
        "pwd > {}; exec sh serve.sh",
        sh_quote(&plain_pwd.display().to_string())
    );
    let config = format!(
        "{}cwd = \"~/tools\"\n{}{}cwd = \"~/missing\"\n",
        server("other", "sh", &["serve.sh"]),
        server("plain", "sh", &["-c", &plain_script]),
        server("nowhere", "sh", &["serve.sh"]),
    );
    write(&sandbox.home.join(".config/bcode/bcode.toml"), &config);

    let out = sandbox
        .command()
        .current_dir(&sandbox.repo)
        .args(["skills", "list", "--json"])
        .output()
        .unwrap();
    assert!(!hijacked.exists(), "the repository's serve.sh ran");
    assert_eq!(
        std::fs::read_to_string(&tools_pwd).unwrap(),
        format!("{}\n", sandbox.home.join("tools").display())
    );
    assert_eq!(std::fs::read_to_string(&plain_pwd).unwrap(), "/\n");
    // `cwd` is a known key: no warning about it.
    let stderr = common::lossy(&out.stderr);
    assert!(!stderr.contains("cwd"), "{stderr}");
    let listing: Value = serde_json::from_str(&ok(out)).unwrap();
    let ids: Vec<&Value> = listing["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["id"])
        .collect();
    assert_eq!(ids, [&json!("local"), &json!("other:pdf")]);
    let mut messages: Vec<&str> = listing["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    messages.sort_unstable();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(
        messages[0],
        format!(
            "skill provider `nowhere` failed: MCP server `nowhere`: `sh` could not be started in `{}` (its `cwd`): No such file or directory (os error 2)",
            sandbox.home.join("missing").display()
        )
    );
    // `sh serve.sh` finds no `/serve.sh`, exits, and the handshake fails;
    // the rest of the message is the SDK's account of the closed pipe.
    assert!(
        messages[1]
            .starts_with("skill provider `plain` failed: MCP server `plain`: the MCP handshake with `sh` failed: "),
        "{}",
        messages[1]
    );
}

/// A listing entry of the skill at `uri` whose `SKILL.md` is `body`.
fn entry(uri: &str, name: &str, description: &str, body: &str) -> Value {
    json!({
        "uri": uri,
        "frontmatter": {"name": name, "description": description},
        "resources": [{"uri": uri, "digest": digest(body.as_bytes()), "size": body.len()}],
    })
}

/// Issue 38, item 15 (and the rule issue 40 asks for): a server listing
/// two skills named `git-workflow` (`skill://acme/git-workflow/SKILL.md`
/// first, then `skill://git-workflow/SKILL.md`) and the second's URI
/// again. The shorter path keeps `srv:git-workflow`, the other is
/// `srv:acme--git-workflow`, the repeated URI is one entry with a warning,
/// and the listing, `skills show` and `skills context` agree on each.
#[test]
fn same_name_skills_of_one_server_are_one_entry_each_everywhere() {
    let sandbox = consumer("");
    let acme_uri = "skill://acme/git-workflow/SKILL.md";
    let plain_uri = "skill://git-workflow/SKILL.md";
    let acme = "---\nname: git-workflow\ndescription: Acme's workflow.\n---\nThe Acme body.\n";
    let plain = "---\nname: git-workflow\ndescription: The plain workflow.\n---\nThe plain body.\n";
    let listing = json!({"skills": [
        entry(acme_uri, "git-workflow", "Acme's workflow.", acme),
        entry(plain_uri, "git-workflow", "The plain workflow.", plain),
        entry(plain_uri, "git-workflow", "A third workflow.", "other bytes"),
    ]});
    let script = fake_server(
        &sandbox.base,
        "twins",
        &format!("      printf '%s' {}", sh_quote(&listing.to_string())),
        &[(acme_uri, acme), (plain_uri, plain)],
    );
    write(
        &sandbox.home.join(".config/bcode/bcode.toml"),
        &server("srv", "sh", &[&script.display().to_string()]),
    );

    let (skills, diagnostics) = list(&sandbox);
    let remote = |id: &str, description: &str| {
        json!({
            "id": id,
            "name": "git-workflow",
            "description": description,
            "source": "mcp:srv",
            "location": format!("bcode-provider://srv/{id}"),
        })
    };
    assert_eq!(
        skills,
        [
            local(&sandbox),
            remote("srv:acme--git-workflow", "Acme's workflow."),
            remote("srv:git-workflow", "The plain workflow."),
        ]
    );
    let diagnostics: Vec<Value> = diagnostics
        .iter()
        .map(|d| json!({"code": d["code"], "severity": d["severity"], "message": d["message"]}))
        .collect();
    assert_eq!(
        diagnostics,
        [json!({
            "code": "duplicate_id",
            "severity": "warning",
            "message": "MCP server `srv`: it lists `skill://git-workflow/SKILL.md` more than once; the first entry is used",
        })]
    );

    for (id, description, body, base) in [
        (
            "srv:git-workflow",
            "The plain workflow.",
            "The plain body.",
            "skill://git-workflow/",
        ),
        (
            "srv:acme--git-workflow",
            "Acme's workflow.",
            "The Acme body.",
            "skill://acme/git-workflow/",
        ),
    ] {
        let shown: Value =
            serde_json::from_str(&ok(sandbox.run(&["skills", "show", id, "--json"]))).unwrap();
        let skill = &shown["skill"];
        assert_eq!(
            (&skill["id"], &skill["name"], &skill["description"]),
            (&json!(id), &json!("git-workflow"), &json!(description)),
            "{shown}"
        );
        assert_eq!(shown["diagnostics"], json!([]), "{shown}");
        let block = ok(sandbox.run(&["skills", "context", id]));
        let location = format!("bcode-provider://srv/{id}");
        assert_eq!(
            block,
            format!(
                "<skill id=\"{id}\" name=\"git-workflow\" location=\"{location}\">\n\
                 References are relative to {base}.\n\
                 Source label: mcp:srv\n\
                 \n\
                 {body}\n\
                 </skill>\n"
            )
        );
    }
}

/// Issue 38, item 9: a server whose `skills/list` hands out page after
/// page of some 15 MB each (one entry with a long description) is cut off
/// once the listing passes `MAX_LISTING_BYTES` (64 MiB), reported with a
/// diagnostic naming the bound, and none of its entries are kept. The
/// command runs under a 1 GB address-space limit, far below the 15 GB
/// the server would send in its 1,000 pages.
#[test]
fn a_listing_past_its_byte_bound_is_refused_within_bounded_memory() {
    let sandbox = consumer("");
    let pages = sandbox.base.join("pages");
    let digest = digest(b"x");
    let list = format!(
        r#"      n=$((n + 1)); echo "$n" >> {pages}
      printf '{{"skills":[{{"uri":"skill://p%s/SKILL.md","frontmatter":{{"name":"p%s","description":"' "$n" "$n"
      head -c 15000000 /dev/zero | tr '\0' a
      printf '"}},"resources":[{{"uri":"skill://p%s/SKILL.md","digest":"{digest}","size":1}}]}}],"nextCursor":"c%s"}}' "$n" "$n""#,
        pages = sh_quote(&pages.display().to_string()),
    );
    let script = fake_server(&sandbox.base, "big", &list, &[]);
    write(
        &sandbox.home.join(".config/bcode/bcode.toml"),
        &server_with_timeout("big", "sh", &[&script.display().to_string()], 60_000),
    );
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1000000 && exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_bcode-prompt"))
        .arg("--repo")
        .arg(&sandbox.repo)
        .args(["skills", "list", "--json"])
        .env_clear()
        .env("HOME", &sandbox.home)
        .env("BCODE_STATE_DIR", &sandbox.state)
        .output()
        .unwrap();
    let listing: Value = serde_json::from_str(&ok(out)).unwrap();
    let ids: Vec<&Value> = listing["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["id"])
        .collect();
    assert_eq!(ids, [&json!("local")]);
    let messages: Vec<&Value> = listing["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["message"])
        .collect();
    assert_eq!(
        messages,
        [&json!(
            "skill provider `big` failed: MCP server `big`: skills/list sent more than 64 MiB of entries, the bound on one listing; none of them are used"
        )]
    );
    // The fifth page (75 MB in all) passes the bound; no page is asked for
    // after it.
    let served = std::fs::read_to_string(&pages).unwrap();
    assert_eq!(served, "1\n2\n3\n4\n5\n");
}

/// The Python with FastMCP (4.1.6) and `agentskills-mcp-server` (0.7.0)
/// that `.ci/run` installs under the build folder; `None` (the test then
/// says so and passes) when it is not set up, unless
/// `BCODE_REQUIRE_MCP_CLIENT` is.
fn python_with_servers() -> Option<String> {
    let python = std::env::var("BCODE_MCP_SERVERS_PYTHON").ok();
    if python.is_none() {
        assert!(
            std::env::var_os("BCODE_REQUIRE_MCP_CLIENT").is_none(),
            "BCODE_REQUIRE_MCP_CLIENT is set but BCODE_MCP_SERVERS_PYTHON is not"
        );
        eprintln!(
            "skipped: set BCODE_MCP_SERVERS_PYTHON to a Python with fastmcp 4.1.6 and \
             agentskills-mcp-server 0.7.0 (.ci/run does)"
        );
    }
    python
}

const FORM: &str = "Fill the form.\n";

/// Starting Python with either server's imports takes seconds on a busy
/// machine; the bound is still one start, not a hang.
const OUTSIDE_TIMEOUT_MS: u64 = 60_000;

/// The skills folder both outside servers serve: `pdf`, with a
/// supporting file.
fn outside_skills(sandbox: &Sandbox) -> PathBuf {
    let skills = sandbox.base.join("served");
    write(&skills.join("pdf/SKILL.md"), PDF);
    write(&skills.join("pdf/references/FORM.md"), FORM);
    skills
}

/// Issue 40, items 1 and 8: the skills servers written elsewhere that
/// install from PyPI serve skills only on protocol 2026-07-28, reached by
/// `server/discover`; the consumer lists their skill, and loads its body
/// verified against the listing.
#[test]
fn the_skills_servers_written_elsewhere_are_consumed() {
    let Some(python) = python_with_servers() else {
        return;
    };
    let sandbox = consumer("");
    let skills = outside_skills(&sandbox);
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_servers");
    let config = sandbox.base.join("agentskills.json");
    write(
        &config,
        &json!({
            "name": "agentskills",
            "skills": [{"id": "pdf", "provider": "fs", "options": {"root": skills}}],
        })
        .to_string(),
    );
    let servers = [
        (
            "fastmcp",
            vec![
                scripts.join("fastmcp_skills.py").display().to_string(),
                skills.display().to_string(),
            ],
        ),
        (
            "agentskills",
            vec![
                "-m".to_owned(),
                "agentskills_mcp_server".to_owned(),
                "--config".to_owned(),
                config.display().to_string(),
            ],
        ),
    ];
    for (name, args) in servers {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        write(
            &sandbox.home.join(".config/bcode/bcode.toml"),
            &server_with_timeout(name, &python, &args, OUTSIDE_TIMEOUT_MS),
        );
        let (listed, diagnostics) = list(&sandbox);
        assert_eq!(diagnostics, Vec::<Value>::new(), "{name}");
        let id = format!("{name}:pdf");
        let location = format!("bcode-provider://{name}/{id}");
        // Sorted by id: both names sort before `local`.
        assert_eq!(
            listed,
            [
                json!({
                    "id": id,
                    "name": "pdf",
                    "description": "Reads PDFs.",
                    "source": format!("mcp:{name}"),
                    "location": location,
                }),
                local(&sandbox),
            ],
            "{name}"
        );
        let block = ok(sandbox.run(&["skills", "context", &id]));
        assert!(
            block.starts_with(&format!(
                "<skill id=\"{id}\" name=\"pdf\" location=\"{location}\">\n\
                 References are relative to skill://pdf/.\n\
                 Source label: mcp:{name}\n"
            )),
            "{name}: {block}"
        );
        assert!(
            block.ends_with("\nThe PDF body.\n</skill>\n"),
            "{name}: {block}"
        );
        // Item 5: the supporting file the body names is read through the
        // consumer, on demand, verified against the listing.
        let read = ok(sandbox.run(&["skills", "read", &id, "references/FORM.md"]));
        assert_eq!(read, FORM, "{name}");
    }
}

/// Issue 40, item 5: `skills read ID PATH` reads a supporting file of an
/// MCP skill through its server (verified against the listing, as a
/// `SKILL.md` is), only the files its listing names: a path that could
/// climb or a file the listing does not name is refused without asking;
/// a folder skill's files are not read through it.
#[test]
fn a_supporting_file_is_read_through_the_consumer_and_verified() {
    let sandbox = consumer("");
    let (other, entry) = other(&sandbox);
    write(
        &other.join(".bcode/skills/pdf/references/FORM.md"),
        "Fill the form.\n",
    );
    write(&sandbox.home.join(".config/bcode/bcode.toml"), &entry);
    let read = |path: &str| sandbox.run(&["skills", "read", "other:pdf", path]);
    assert_eq!(ok(read("references/FORM.md")), "Fill the form.\n");
    let refused = |path: &str| {
        let out = read(path);
        assert_eq!(out.status.code(), Some(2), "{path}");
        String::from_utf8(out.stderr).unwrap()
    };
    assert_eq!(
        refused("../../etc/passwd"),
        "bcode-prompt: skill provider `other` failed: MCP server `other`: `../../etc/passwd` is not a path inside the folder of `other:pdf` (`skill://pdf/`)\n"
    );
    assert_eq!(
        refused("references/NONE.md"),
        "bcode-prompt: skill provider `other` failed: MCP server `other`: `skill://pdf/references/NONE.md` is not among the files its listing names for `other:pdf`, so it is not read\n"
    );
    let local = sandbox.run(&["skills", "read", "local", "SKILL.md"]);
    assert_eq!(local.status.code(), Some(2));
}
