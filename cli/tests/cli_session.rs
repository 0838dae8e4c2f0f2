//! An end-to-end skill session driven through stdin, its transcript and its
//! durable event log checked line by line.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::fs;

use common::{Sandbox, write};

fn session(sandbox: &Sandbox, script: &str, args: &[&str]) -> (i32, String) {
    let out = sandbox.run_session("e2e", args, script.as_bytes());
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn a_piped_session_records_every_event() {
    let sandbox = Sandbox::new();
    let (repo, state) = (&sandbox.repo, &sandbox.state);
    let skills = repo.join(".bcode/skills");
    write(
        &skills.join("rust-debugging/SKILL.md"),
        "---\ndescription: Rust failures\nactivation:\n  keywords: [rust, cargo]\n---\nCheck cargo output first.\n",
    );
    write(
        &skills.join("docs/SKILL.md"),
        "---\ndescription: Write docs\nactivation:\n  keywords: [docs]\n---\nDocs body.\n",
    );
    let script = "/skills\nmy rust build fails\n/accept\n/skill active\n/skill docs chapter \"two words\"\n/skill off docs\n/skill nope\n/bogus\n/quit\nignored after quit\n";
    let (code, transcript) = session(&sandbox, script, &[]);
    assert_eq!(code, 0);
    let log = state.join("sessions/e2e/events.jsonl");
    let root = skills.display();
    let rust_bytes = format!(
        "<skill id=\"rust-debugging\" name=\"rust-debugging\" location=\"{root}/rust-debugging/SKILL.md\">\nReferences are relative to {root}/rust-debugging.\nSource label: repo:.bcode/skills\n\nCheck cargo output first.\n</skill>"
    )
    .len();
    let docs_bytes = format!(
        "<skill id=\"docs\" name=\"docs\" location=\"{root}/docs/SKILL.md\">\nReferences are relative to {root}/docs.\nSource label: repo:.bcode/skills\nInvocation arguments: chapter two words\n\nDocs body.\n</skill>"
    )
    .len();
    assert_eq!(
        transcript,
        format!(
            "Skill session e2e (2 skills; auto-activation: suggest). Events: {}
> /skills
  docs [repo:.bcode/skills]: Write docs
  rust-debugging [repo:.bcode/skills]: Rust failures
> my rust build fails
Suggested skill `rust-debugging` (matched rust): /accept rust-debugging to activate, /dismiss to ignore.
(prompt noted; this CLI has no model: /render shows what the turn would send)
> /accept
Loaded skill `rust-debugging` from repo:.bcode/skills ({rust_bytes} bytes).
┌ skill context: rust-debugging
│ Check cargo output first.
└
> /skill active
  rust-debugging (accepted suggestion: rust)
> /skill docs chapter \"two words\"
Loaded skill `docs` from repo:.bcode/skills ({docs_bytes} bytes).
┌ skill context: docs
│ Docs body.
└
> /skill off docs
Deactivated skill `docs`.
> /skill nope
error: no skill with id `nope`
> /bogus
error: unknown command `/bogus` (usage: /skills | /skill <id> [args...] | /skill active | /skill off <id> | /accept | /dismiss | /touched | /render | /help | /quit)
> /quit
",
            log.display(),
        )
    );
    // The log, line by line (timestamps are the only varying field).
    let lines: Vec<serde_json::Value> = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["at"].as_str().unwrap().ends_with('Z'));
            v.as_object_mut().unwrap().remove("at");
            v
        })
        .collect();
    let expected = serde_json::json!([
        {"seq": 0, "event": "SkillSuggested", "id": "rust-debugging", "source": "repo:.bcode/skills", "matched_keywords": ["rust"]},
        {"seq": 1, "event": "SkillActivated", "id": "rust-debugging", "source": "repo:.bcode/skills", "arguments": [], "reason": "accepted suggestion: matched rust"},
        {"seq": 2, "event": "SkillContextLoaded", "id": "rust-debugging", "source": "repo:.bcode/skills", "bytes": rust_bytes, "truncated": false, "preview": "Check cargo output first."},
        {"seq": 3, "event": "SkillActivated", "id": "docs", "source": "repo:.bcode/skills", "arguments": ["chapter", "two words"], "reason": "explicit"},
        {"seq": 4, "event": "SkillContextLoaded", "id": "docs", "source": "repo:.bcode/skills", "bytes": docs_bytes, "truncated": false, "preview": "Docs body."},
        {"seq": 5, "event": "SkillDeactivated", "id": "docs", "reason": "explicit"},
        {"seq": 6, "event": "SkillInvocationFailed", "id": "nope", "error": "no skill with id `nope`"},
    ]);
    assert_eq!(serde_json::Value::Array(lines), expected);

    // A second run appends to the same log after a torn last line (a crash).
    let mut text = fs::read_to_string(&log).unwrap();
    text.push_str("{\"seq\":7,\"event\":\"SkillAct");
    fs::write(&log, text).unwrap();
    write(
        &skills.join("added/SKILL.md"),
        "---\ndescription: Added later\n---\nNew.\n",
    );
    let (code, transcript) = session(&sandbox, "/skill docs\nanother prompt\n", &[]);
    assert_eq!(code, 0);
    assert!(transcript.contains("Loaded skill `docs`"), "{transcript}");
    let outcome = bcode_skill::read_events(&log).unwrap();
    assert_eq!(
        outcome.problems.len(),
        1,
        "the torn line is reported, not fatal: {:?}",
        outcome.problems
    );
    let tail: Vec<String> = outcome
        .events
        .iter()
        .skip(7)
        .map(|r| {
            serde_json::to_value(&r.event).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(tail, ["SkillActivated", "SkillContextLoaded"]);
}

#[test]
fn live_reload_between_turns_in_a_session() {
    let sandbox = Sandbox::new();
    let (repo, state) = (&sandbox.repo, &sandbox.state);
    let skills = repo.join(".bcode/skills");
    write(
        &skills.join("one/SKILL.md"),
        "---\ndescription: One\n---\nOne.\n",
    );
    write(
        &skills.join("two/SKILL.md"),
        "---\ndescription: Two\n---\nTwo.\n",
    );
    let mut session = sandbox.live_session("reload");
    session.send("/skill one");
    session.read_until("└");
    session.send("first prompt");
    let first = session.read_until("(prompt noted");
    assert!(!first.contains("Skills changed"), "{first}");

    // Between turns: one vanishes while active, two changes, three appears.
    fs::remove_dir_all(skills.join("one")).unwrap();
    fs::write(
        skills.join("two/SKILL.md"),
        "---\ndescription: Two, edited\n---\nTwo.\n",
    )
    .unwrap();
    write(
        &skills.join("three/SKILL.md"),
        "---\ndescription: Three\n---\nThree.\n",
    );
    session.send("second prompt");
    let second = session.read_until("(prompt noted");
    assert_eq!(
        second,
        "> second prompt\nSkills changed: +three ~two -one\n(prompt noted; this CLI has no model: /render shows what the turn would send)\n"
    );
    session.send("/skill active");
    assert_eq!(
        session.read_until("one"),
        "> /skill active\n  one (explicit)\n",
        "a vanished active skill stays active"
    );
    // The next turn still carries the block loaded before the file vanished.
    session.send("/render");
    // The body line of the block is the last thing the render prints
    // before its closing tag.
    let mut render = session.read_until("One.");
    render.push_str(&session.read_until("</skill>"));
    let root = skills.display();
    assert!(
        render.contains(&format!("<skill id=\"one\" name=\"one\" location=\"{root}/one/SKILL.md\">\nReferences are relative to {root}/one.\nSource label: repo:.bcode/skills\n\nOne.\n</skill>")),
        "{render}"
    );
    assert!(
        render.contains("Runtime mode: scripted session"),
        "{render}"
    );
    assert_eq!(session.finish(), Some(0));

    let events = bcode_skill::read_events(&state.join("sessions/reload/events.jsonl")).unwrap();
    let reloaded: Vec<serde_json::Value> = events
        .events
        .iter()
        .map(|r| serde_json::to_value(&r.event).unwrap())
        .filter(|e| e["event"] == "SkillsReloaded")
        .collect();
    assert_eq!(
        reloaded,
        [
            serde_json::json!({"event": "SkillsReloaded", "added": ["three"], "changed": ["two"], "removed": ["one"]})
        ]
    );
}

#[test]
fn render_in_a_session_shows_active_blocks_with_their_arguments() {
    let sandbox = Sandbox::new();
    let repo = &sandbox.repo;
    write(
        &repo.join(".bcode/skills/docs/SKILL.md"),
        "---\ndescription: Write docs\n---\nDocs body.\n",
    );
    let (code, transcript) = session(
        &sandbox,
        "/skill docs chapter \"two words\"\n/render\n",
        &[],
    );
    assert_eq!(code, 0);
    let root = repo.join(".bcode/skills").display().to_string();
    let block = format!(
        "<skill id=\"docs\" name=\"docs\" location=\"{root}/docs/SKILL.md\">\nReferences are relative to {root}/docs.\nSource label: repo:.bcode/skills\nInvocation arguments: chapter two words\n\nDocs body.\n</skill>"
    );
    let (_, after_divider) = transcript
        .split_once("===== request-only context")
        .expect("the render has a request-only part");
    assert!(after_divider.contains(&block), "{transcript}");
}

/// The session loads the config once: its warnings are on stderr once, at
/// the start, and a config edited during the session has its own warnings
/// shown with the turn that notices the edit.
#[test]
fn config_warnings_at_the_start_and_after_an_edit() {
    let sandbox = Sandbox::new();
    let config = sandbox.repo.join(".bcode/bcode.toml");
    write(&config, "[skills]\nenabeld = false\n");
    let mut session = sandbox.live_session("warnings");
    session.send("first prompt");
    session.read_until("(prompt noted");
    // A later edit that changes a value (a turn reports the config's
    // warnings when the config it uses changed) and makes another mistake.
    write(
        &config,
        "[skills.prompt]\ncatalog = \"names_only\"\nmax_byte = 3\n",
    );
    session.send("second prompt");
    session.read_until("(prompt noted");
    let (code, stderr) = session.finish_with_stderr();
    assert_eq!(code, Some(0), "{stderr}");
    let first = "unknown key `skills.enabeld` (ignored); did you mean `skills.enabled`?";
    let second =
        "unknown key `skills.prompt.max_byte` (ignored); did you mean `skills.prompt.max_bytes`?";
    assert_eq!(stderr.matches(first).count(), 1, "{stderr}");
    assert_eq!(stderr.matches(second).count(), 1, "{stderr}");
    assert!(
        stderr.find(first) < stderr.find(second),
        "the start's warning comes first: {stderr}"
    );
}

/// A template override added during the session is picked up by the next
/// turn, and its warning shown once, with that turn.
#[test]
fn a_template_override_added_mid_session_has_its_warning_shown_once() {
    let sandbox = Sandbox::new();
    let templates = sandbox.repo.join("prompt-templates");
    fs::create_dir_all(&templates).unwrap();
    write(
        &sandbox.repo.join(".bcode/bcode.toml"),
        &format!(
            "[system_prompt]\ntemplates_dir = \"{}\"\n",
            templates.display()
        ),
    );
    let mut session = sandbox.live_session("templates");
    session.send("first prompt");
    session.read_until("(prompt noted");
    write(&templates.join("no-such-template.j2"), "x");
    session.send("second prompt");
    session.read_until("(prompt noted");
    session.send("third prompt");
    session.read_until("(prompt noted");
    let (code, stderr) = session.finish_with_stderr();
    assert_eq!(code, Some(0), "{stderr}");
    let warning = "there is no template named `no-such-template.j2`";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
}

/// A keyword matches the prompt's other forms of its word: `panic` in
/// "cargo test panics", `pull request` in "review my pull requests".
#[test]
fn keywords_match_word_forms() {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".bcode/skills");
    write(
        &skills.join("rust-panics/SKILL.md"),
        "---\ndescription: Rust panics\nactivation:\n  keywords: [panic]\n---\nRead the backtrace.\n",
    );
    write(
        &skills.join("review/SKILL.md"),
        "---\ndescription: Reviews\nactivation:\n  keywords: [pull request]\n---\nReview.\n",
    );
    let (code, transcript) = session(
        &sandbox,
        "cargo test panics\nreview my pull requests\nthe panicked thread\nno match: panel pulls\n",
        &[],
    );
    assert_eq!(code, 0);
    let events = sandbox.state.join("sessions/e2e/events.jsonl");
    assert_eq!(
        transcript,
        format!(
            "Skill session e2e (2 skills; auto-activation: suggest). Events: {}
> cargo test panics
Suggested skill `rust-panics` (matched panic): /accept rust-panics to activate, /dismiss to ignore.
(prompt noted; this CLI has no model: /render shows what the turn would send)
> review my pull requests
Suggested skill `review` (matched pull request): /accept review to activate, /dismiss to ignore.
(prompt noted; this CLI has no model: /render shows what the turn would send)
> the panicked thread
Suggested skill `rust-panics` (matched panic): /accept rust-panics to activate, /dismiss to ignore.
(prompt noted; this CLI has no model: /render shows what the turn would send)
> no match: panel pulls
(prompt noted; this CLI has no model: /render shows what the turn would send)
",
            events.display()
        )
    );
}

/// Skills with no Bcode field (a monorepo's `.agents/skills`: `name`,
/// `description`, a body) are suggested for the task they describe, the
/// suggestion says which words matched, and its events record the
/// relevance index's score (the one `skills search` shows) and matched
/// words; chat suggests nothing.
#[test]
fn skills_without_bcode_fields_are_suggested_by_relevance() {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".agents/skills");
    write(
        &skills.join("storybook/SKILL.md"),
        "---\nname: storybook\ndescription: Use when writing or reviewing Storybook stories for React components.\n---\nGive every story a title and args.\n",
    );
    write(
        &skills.join("changelog-writing/SKILL.md"),
        "---\nname: changelog-writing\ndescription: Write a changelog entry once a feature is ready to merge.\n---\nOne entry per user-visible change.\n",
    );
    let (code, transcript) = session(
        &sandbox,
        "write storybook stories\n/accept\nthanks, that looks good\n",
        &[],
    );
    assert_eq!(code, 0);
    let events = sandbox.state.join("sessions/e2e/events.jsonl");
    let root = skills.display();
    let bytes = format!(
        "<skill id=\"storybook\" name=\"storybook\" location=\"{root}/storybook/SKILL.md\">\nReferences are relative to {root}/storybook.\nSource label: repo:.agents/skills\n\nGive every story a title and args.\n</skill>"
    )
    .len();
    assert_eq!(
        transcript,
        format!(
            "Skill session e2e (2 skills; auto-activation: suggest). Events: {}
> write storybook stories
Suggested skill `storybook` (matched write, storybook, stories): /accept storybook to activate, /dismiss to ignore.
(prompt noted; this CLI has no model: /render shows what the turn would send)
> /accept
Loaded skill `storybook` from repo:.agents/skills ({bytes} bytes).
┌ skill context: storybook
│ Give every story a title and args.
└
> thanks, that looks good
(prompt noted; this CLI has no model: /render shows what the turn would send)
",
            events.display()
        )
    );
    // The score is the one `skills search` gives the same task.
    let search = sandbox.run(&["skills", "search", "--json", "write storybook stories"]);
    let search: serde_json::Value = serde_json::from_slice(&search.stdout).unwrap();
    assert_eq!(search["results"][0]["id"], "storybook");
    let score = search["results"][0]["score"].clone();
    assert!(score.as_f64().unwrap() > 0.0, "{search}");
    let relevance = serde_json::json!({
        "score": score,
        "coverage": 1.0,
        "matched": [
            {"term": "write", "fields": ["description"]},
            {"term": "storybook", "fields": ["name", "description"]},
            {"term": "stories", "fields": ["description", "body"]},
        ],
    });
    let logged: Vec<serde_json::Value> = fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("at");
            v
        })
        .collect();
    assert_eq!(
        serde_json::Value::Array(logged),
        serde_json::json!([
            {"seq": 0, "event": "SkillSuggested", "id": "storybook", "source": "repo:.agents/skills", "matched_keywords": [], "relevance": relevance},
            {"seq": 1, "event": "SkillActivated", "id": "storybook", "source": "repo:.agents/skills", "arguments": [], "reason": "accepted suggestion: matched write, storybook, stories", "relevance": relevance},
            {"seq": 2, "event": "SkillContextLoaded", "id": "storybook", "source": "repo:.agents/skills", "bytes": bytes, "truncated": false, "preview": "Give every story a title and args."},
        ])
    );
}

#[test]
fn skills_with_words_lists_the_best_fits_first() {
    let sandbox = Sandbox::new();
    let skills = sandbox.repo.join(".agents/skills");
    write(
        &skills.join("storybook/SKILL.md"),
        "---\nname: storybook\ndescription: Use when writing or reviewing Storybook stories.\n---\nGive every story a title.\n",
    );
    write(
        &skills.join("changelog-writing/SKILL.md"),
        "---\nname: changelog-writing\ndescription: Write a changelog entry.\n---\nOne entry per change.\n",
    );
    let (code, transcript) = session(
        &sandbox,
        "/skills review storybook stories\n/skills kubernetes\n",
        &[],
    );
    assert_eq!(code, 0);
    let listed: Vec<&str> = transcript
        .lines()
        .skip_while(|l| *l != "> /skills review storybook stories")
        .skip(1)
        .take_while(|l| !l.starts_with("> "))
        .collect();
    assert_eq!(listed.len(), 1, "{transcript}");
    assert!(listed[0].contains("storybook"), "{transcript}");
    assert!(
        transcript.contains("> /skills kubernetes\nNo skills available."),
        "{transcript}"
    );
}
