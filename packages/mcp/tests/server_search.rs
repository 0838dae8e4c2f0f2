//! The `search_skills` tool over a served registry (issue 39, item 5): it
//! ranks only the skills `skills/list` lists, each with the URI, name and
//! description the listing gives, as the relevance index ranks them; a
//! skill refused once its files are read takes no place of the limit; and
//! after a reload it answers as a server started on the new registry.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness

use crate::common;

use std::path::Path;

use bcode_skill::index_registry;
use bcode_skill_mcp::SkillServer;
use bcode_test_support::write_tree as write;
use serde_json::{Value, json};

use common::registry;

/// Skills about PDFs: two served, one hidden from the model, one whose
/// name is not its id (never served), one whose name the SEP refuses once
/// its files are read, and one about something else.
fn pdf_skills(dir: &Path) {
    write(
        dir,
        &[
            (
                "pdf-forms/SKILL.md",
                "---\ndescription: Fill in PDF forms\nlicense: MIT\n---\nRun scripts/fill.py on the form.\n",
            ),
            ("pdf-forms/scripts/fill.py", "print('filled')\n"),
            (
                "pdf-merge/SKILL.md",
                "---\ndescription: Merge PDF files into one\n---\nConcatenate the pages.\n",
            ),
            (
                "pdf-hidden/SKILL.md",
                "---\ndescription: PDF forms, hidden\ndisable-model-invocation: true\n---\nFill forms.\n",
            ),
            (
                "titled/SKILL.md",
                "---\nname: PDF Form Titled\ndescription: Fill PDF forms\n---\nForms.\n",
            ),
            (
                "two--hyphens/SKILL.md",
                "---\ndescription: Two hyphens, and PDF forms\n---\nForms.\n",
            ),
            (
                "notes/SKILL.md",
                "---\ndescription: Meeting notes\n---\nWrite them down.\n",
            ),
        ],
    );
}

fn search(server: &SkillServer, arguments: Value) -> Value {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    let result = server
        .call_tool_blocking("search_skills", Some(&arguments))
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let structured = result.structured_content.clone().unwrap();
    // The text block carries the same JSON, for clients that read text.
    let text = &result.content[0].as_text().unwrap().text;
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), structured);
    structured
}

fn rounded(value: f32) -> f64 {
    (f64::from(value) * 10_000.0).round() / 10_000.0
}

#[test]
fn only_listed_skills_are_found_each_as_the_listing_gives_it() {
    let tmp = tempfile::tempdir().unwrap();
    pdf_skills(tmp.path());
    let registry = registry(tmp.path());
    let server = SkillServer::new(&registry);
    let found = search(&server, json!({"query": "fill in a pdf form"}));

    // What the relevance index ranks among the skills served, scored over
    // the whole registry, each result with the entry `skills/list` gives.
    let listed = server.list_skills_page(None).unwrap();
    let listing: Vec<Value> = listed
        .skills
        .iter()
        .map(|skill| serde_json::to_value(skill).unwrap())
        .collect();
    let uris: Vec<&str> = listing
        .iter()
        .map(|skill| skill["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://notes/SKILL.md",
            "skill://pdf-forms/SKILL.md",
            "skill://pdf-merge/SKILL.md"
        ]
    );
    let served = ["notes", "pdf-forms", "pdf-merge"];
    let hits = index_registry(&registry, None).search_where("fill in a pdf form", 10, &|id| {
        served.contains(&id.as_str())
    });
    let expected: Vec<Value> = hits
        .iter()
        .map(|hit| {
            let entry = listing
                .iter()
                .find(|skill| skill["frontmatter"]["name"] == hit.id.as_str())
                .unwrap();
            json!({
                "uri": entry["uri"],
                "name": entry["frontmatter"]["name"],
                "description": entry["frontmatter"]["description"],
                "score": rounded(hit.score),
                "coverage": rounded(hit.coverage),
                "matched": hit.matched,
            })
        })
        .collect();
    assert_eq!(found, json!({ "results": expected }));
    // The skill named for the task comes first, and the matched words say
    // where each was found.
    assert_eq!(found["results"][0]["uri"], "skill://pdf-forms/SKILL.md");
    assert_eq!(found["results"][1]["uri"], "skill://pdf-merge/SKILL.md");
    assert_eq!(found["results"].as_array().unwrap().len(), 2);
    assert_eq!(
        found["results"][0]["matched"],
        json!([
            {"term": "fill", "fields": ["description", "files", "body"]},
            {"term": "pdf", "fields": ["name", "description"]},
            {"term": "form", "fields": ["name", "description", "body"]},
        ])
    );
    // Nothing a repository wrote reaches the client but what the listing
    // gives: no path of this machine.
    let text = found.to_string();
    assert!(!text.contains(&*tmp.path().to_string_lossy()), "{text}");
}

#[test]
fn a_skill_refused_once_read_takes_no_place_of_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    pdf_skills(tmp.path());
    let server = SkillServer::new(&registry(tmp.path()));
    // `two--hyphens` ranks first (its name has both words) but the SEP
    // refuses its name once its entry is built: the search asks for more.
    let found = search(&server, json!({"query": "two hyphens pdf", "limit": 1}));
    let uris: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| result["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["skill://pdf-forms/SKILL.md"]);
    assert_eq!(server.refused().len(), 1);
    // Known refused now, it is left out before ranking.
    let again = search(&server, json!({"query": "two hyphens pdf", "limit": 1}));
    assert_eq!(again, found);
    let all = search(&server, json!({"query": "two hyphens pdf", "limit": 50}));
    assert_eq!(all["results"].as_array().unwrap().len(), 2);
}

#[test]
fn after_a_reload_the_search_answers_as_a_fresh_server_would() {
    let tmp = tempfile::tempdir().unwrap();
    pdf_skills(tmp.path());
    let server = SkillServer::new(&registry(tmp.path()));
    let before = search(&server, json!({"query": "terraform modules"}));
    assert_eq!(before, json!({"results": []}));
    write(
        tmp.path(),
        &[
            (
                "notes/SKILL.md",
                "---\ndescription: Meeting notes\n---\nAlso about terraform modules.\n",
            ),
            (
                "infra/SKILL.md",
                "---\ndescription: Terraform modules\n---\nPlan, then apply.\n",
            ),
        ],
    );
    std::fs::remove_dir_all(tmp.path().join("pdf-merge")).unwrap();
    let reloaded = registry(tmp.path());
    assert!(server.replace(&reloaded));
    let fresh = SkillServer::new(&reloaded);
    for query in ["terraform modules", "fill in a pdf form", "merge pdf files"] {
        let arguments = json!({"query": query});
        assert_eq!(
            search(&server, arguments.clone()),
            search(&fresh, arguments),
            "{query}"
        );
    }
    let after = search(&server, json!({"query": "terraform modules"}));
    let uris: Vec<&str> = after["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| result["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["skill://infra/SKILL.md", "skill://notes/SKILL.md"]);
}

#[test]
fn an_unknown_tool_is_a_protocol_error_and_bad_arguments_a_tool_error() {
    let tmp = tempfile::tempdir().unwrap();
    pdf_skills(tmp.path());
    let server = SkillServer::new(&registry(tmp.path()));
    let err = server.call_tool_blocking("search", None).unwrap_err();
    assert_eq!(err.code.0, -32602);
    let refused = server.call_tool_blocking("search_skills", None).unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        refused.content[0].as_text().unwrap().text,
        "`query` is required: the task to find skills for, as a string."
    );
}
