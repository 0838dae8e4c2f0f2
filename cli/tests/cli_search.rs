//! `bcode-prompt skills search`: the skills that best fit a task, best
//! first, as text or one JSON document (the DESIGN.md contract), the query
//! from the words given or from stdin, bounded, and an empty query refused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::process::Stdio;

use common::{Sandbox, ok, text, write_files};

fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    write_files(
        &sandbox.repo,
        &[
            (
                ".agents/skills/storybook/SKILL.md",
                "---\nname: storybook\ndescription: Write and maintain component stories.\n---\nUse CSF3.\n",
            ),
            (
                ".agents/skills/pdf-forms/SKILL.md",
                "---\nname: pdf-forms\ndescription: Fill in PDF forms.\nmetadata:\n  tags: [acroform]\n---\nRun the script.\n",
            ),
            (".agents/skills/pdf-forms/scripts/fill.py", "print()\n"),
        ],
    );
    sandbox
}

#[test]
fn the_json_document_names_each_result_and_why() {
    let sandbox = sandbox();
    let out = ok(sandbox.run(&["skills", "search", "--json", "fill", "an", "acroform"]));
    let location = sandbox
        .repo
        .join(".agents/skills/pdf-forms/SKILL.md")
        .display()
        .to_string();
    let expected = serde_json::json!({
        "diagnostics": [],
        "query": "fill an acroform",
        "results": [{
            "coverage": 1.0,
            "description": "Fill in PDF forms.",
            "id": "pdf-forms",
            "location": location,
            "matched": [
                {"term": "fill", "fields": ["description", "files"]},
                {"term": "acroform", "fields": ["keywords"]},
            ],
            "name": "pdf-forms",
            "score": serde_json::from_str::<serde_json::Value>(&out).unwrap()["results"][0]["score"],
            "source": "repo:.agents/skills",
        }],
    });
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out).unwrap(),
        expected
    );
}

#[test]
fn the_text_lists_best_first_within_the_limit() {
    let sandbox = sandbox();
    let out = ok(sandbox.run(&[
        "skills",
        "search",
        "component",
        "stories",
        "and",
        "pdf",
        "forms",
    ]));
    let ids: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with(' '))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{out}");
    let limited = ok(sandbox.run(&["skills", "search", "--limit", "1", "pdf", "forms"]));
    assert!(limited.starts_with("pdf-forms  "), "{limited}");
    assert_eq!(limited.lines().filter(|l| !l.starts_with(' ')).count(), 1);
    assert!(limited.contains("    matched: pdf (name, description); forms (name, description)"));
}

#[test]
fn a_long_task_comes_on_stdin() {
    let sandbox = sandbox();
    for args in [
        &["skills", "search", "--json"][..],
        &["skills", "search", "--json", "-"],
    ] {
        let mut child = sandbox
            .command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let task = format!(
            "{}\nplease write storybook stories\n",
            "context line\n".repeat(20_000)
        );
        let mut stdin = child.stdin.take().unwrap();
        std::thread::spawn(move || stdin.write_all(task.as_bytes()));
        let out = ok(child.wait_with_output().unwrap());
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(json["results"][0]["id"], "storybook", "{args:?}");
    }
}

#[test]
fn no_query_is_a_usage_error_and_no_match_is_not() {
    let sandbox = sandbox();
    let out = sandbox
        .command()
        .args(["skills", "search", "-"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("`skills search` needs a query"),
        "{}",
        text(&out.stderr)
    );
    let out = sandbox.run(&["skills", "search", "kubernetes"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(text(&out.stderr).contains("no skill matches the query"));
}
