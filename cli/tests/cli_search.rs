//! `bcode-prompt skills search`: the skills that best fit a task, best
//! first, as text or one JSON document (the DESIGN.md contract), the query
//! from the words given or from stdin, bounded, and an empty query refused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

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

/// Options after the query are options, as `skills search [QUERY...]
/// [--limit N] [--json]` reads, not words of the task; a word that starts
/// with `-` goes after `--`.
#[test]
fn options_after_the_query_are_options() {
    let sandbox = sandbox();
    let before = ok(sandbox.run(&["skills", "search", "--limit", "1", "--json", "pdf", "forms"]));
    let after = ok(sandbox.run(&["skills", "search", "pdf", "forms", "--limit", "1", "--json"]));
    assert_eq!(after, before);
    let json: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(json["query"], "pdf forms");
    assert_eq!(json["results"].as_array().unwrap().len(), 1);
    let dashed = ok(sandbox.run(&["skills", "search", "--json", "--", "pdf", "-forms"]));
    let json: serde_json::Value = serde_json::from_str(&dashed).unwrap();
    assert_eq!(json["query"], "pdf -forms");
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

/// The routing cache file `search` keeps in the state folder, if any.
fn routing_file(sandbox: &Sandbox) -> Option<std::path::PathBuf> {
    let dir = sandbox.state.join("cache/skills");
    std::fs::read_dir(dir).ok()?.find_map(|entry| {
        let path = entry.unwrap().path();
        let name = path.file_name()?.to_str()?.to_owned();
        (name.starts_with("routing-") && name.ends_with(".idx")).then_some(path)
    })
}

fn search_json(sandbox: &Sandbox, extra: &[&str]) -> (String, String) {
    let mut args = extra.to_vec();
    args.extend([
        "skills",
        "search",
        "--json",
        "fill",
        "component",
        "stories",
        "pdf",
    ]);
    let out = sandbox.run(&args);
    common::assert_exit_0(&out);
    (text(&out.stdout), text(&out.stderr))
}

#[test]
fn the_routing_cache_answers_byte_for_byte_as_no_cache() {
    let sandbox = sandbox().short_racy_window();
    common::age(&sandbox.repo);
    common::past_racy_window();
    let (without, _) = search_json(&sandbox, &["--set", "skills.disk_cache=false"]);
    assert_eq!(routing_file(&sandbox), None, "written with the cache off");
    let (first, _) = search_json(&sandbox, &[]);
    let file = routing_file(&sandbox).expect("the routing cache was not written");
    let written = std::fs::metadata(&file).unwrap().modified().unwrap();
    let (second, stderr) = search_json(&sandbox, &[]);
    assert_eq!(stderr, "");
    assert_eq!(first, without);
    assert_eq!(second, without);
    // The second process read the file and had nothing to write.
    assert_eq!(
        std::fs::metadata(&file).unwrap().modified().unwrap(),
        written
    );
}

#[cfg(unix)]
#[test]
fn a_link_in_place_of_the_routing_cache_is_not_followed() {
    let sandbox = sandbox().short_racy_window();
    common::age(&sandbox.repo);
    common::past_racy_window();
    let (expected, _) = search_json(&sandbox, &[]);
    let file = routing_file(&sandbox).unwrap();
    let victim = sandbox.base.join("victim.idx");
    std::fs::rename(&file, &victim).unwrap();
    let before = std::fs::read(&victim).unwrap();
    std::os::unix::fs::symlink(&victim, &file).unwrap();
    let (out, stderr) = search_json(&sandbox, &[]);
    assert_eq!(out, expected);
    let name = file.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        stderr,
        format!(
            "bcode-prompt: warning: the routing cache `{name}` was not used (`{}` is a symbolic link; \
             files in the state folder are never opened through links); it is rebuilt\n",
            file.display()
        )
    );
    assert_eq!(std::fs::read(&victim).unwrap(), before);
    assert!(!std::fs::symlink_metadata(&file).unwrap().is_symlink());
}
