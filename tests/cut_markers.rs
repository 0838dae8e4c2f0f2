//! Every cut is marked, always: for every section with a configurable limit
//! and every value of that limit from 0 (which cuts everything) up to one
//! that leaves the section whole, the rendered section is either exactly
//! the uncut one or carries its truncation marker. A section cut away
//! without a marker, or cut silently to an empty body, fails.

// Test helpers may fail loudly; clippy.toml only covers `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bcode_prompt::machine::RuntimeMode;
use bcode_prompt::report::{AssembledPrompt, SectionReport};
use bcode_prompt::testing::FakeMachine;
use bcode_prompt::{PromptSession, SessionOptions, SkillLifetime, TurnInput};
use bcode_tests::copy_tree;

/// One limit under test: the config key, the ids of the sections it bounds
/// (an id, or a prefix ending in `:`), the marker text every cut of them
/// carries, and the skills to activate so those sections exist.
struct Limited {
    key: &'static str,
    sections: &'static [&'static str],
    marker: &'static str,
    skills: &'static [&'static str],
}

const LIMITS: [Limited; 6] = [
    Limited {
        key: "system_prompt.repository_instructions_max_chars",
        sections: &["repository_context:"],
        marker: "[truncated: ",
        skills: &[],
    },
    Limited {
        key: "system_prompt.repository_invariants_max_chars",
        sections: &["repository_invariants"],
        marker: "[truncated: ",
        skills: &[],
    },
    Limited {
        key: "system_prompt.git_status_max_chars",
        sections: &["dynamic_repository_context"],
        marker: "[truncated: ",
        skills: &[],
    },
    Limited {
        key: "skills.max_context_bytes",
        sections: &["active_skill:"],
        marker: "skill body truncated",
        skills: &["rust-debugging", "review-checklist"],
    },
    Limited {
        key: "skills.prompt.max_description_chars",
        sections: &["skill_catalog"],
        marker: "…</description>",
        skills: &[],
    },
    Limited {
        key: "skills.prompt.max_bytes",
        sections: &["skill_catalog"],
        // Every wording of the catalog's final line names its limit.
        marker: "(skills.prompt.max_bytes)",
        skills: &[],
    },
];

/// The fixture: the golden tests' standard tree (instructions, invariants,
/// skills of every source) in a git repository with untracked files.
struct Fixture {
    _temp: tempfile::TempDir,
    root: PathBuf,
    repo: PathBuf,
}

fn fixture() -> Fixture {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    let repo = root.join("repo");
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/standard");
    copy_tree(&shared.join("repo"), &repo).unwrap();
    copy_tree(&shared.join("home"), &root.join("home")).unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    let mut options = git2::RepositoryInitOptions::new();
    options.initial_head("main");
    git2::Repository::init_opts(&repo, &options).unwrap();
    for n in 0..6 {
        std::fs::write(repo.join(format!("untracked-{n:02}.txt")), "new\n").unwrap();
    }
    Fixture {
        _temp: temp,
        root,
        repo,
    }
}

fn render(fixture: &Fixture, set: Option<String>, skills: &[&str]) -> AssembledPrompt {
    let env: BTreeMap<String, String> = [
        ("HOME", fixture.root.join("home").display().to_string()),
        (
            "BCODE_STATE_DIR",
            fixture.root.join("state").display().to_string(),
        ),
        ("LANG", "en_US.UTF-8".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let mut options = SessionOptions::new(&fixture.repo)
        .cwd(&fixture.root)
        .env(env)
        .machine(Arc::new(FakeMachine))
        .runtime_mode(RuntimeMode::Render)
        .skill_lifetime(SkillLifetime::SingleTurn)
        // No disk cache: every render here is a fresh process's first.
        .set("skills.disk_cache=false")
        .set("skills.prompt.include_keywords=true");
    if let Some(set) = set {
        options = options.set(&set);
    }
    let mut session = PromptSession::open_blocking(options).unwrap();
    let now = chrono::DateTime::parse_from_rfc3339("2025-06-15T14:30:00Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let mut input = TurnInput::new("").now(now);
    for id in skills {
        input = input.activate((*id).to_owned());
    }
    session.next_turn_blocking(input).unwrap().prompt
}

/// The text of every section `limited` bounds, by id.
fn bounded_sections<'a>(
    prompt: &'a AssembledPrompt,
    limited: &Limited,
) -> BTreeMap<&'a str, &'a str> {
    prompt
        .sections
        .iter()
        .filter(|s| {
            limited
                .sections
                .iter()
                .any(|id| match id.strip_suffix(':') {
                    Some(stage) => s.id.strip_prefix(stage).is_some_and(|r| r.starts_with(':')),
                    None => s.id == *id,
                })
        })
        .map(|s: &SectionReport| (s.id.as_str(), section_text(prompt, s)))
        .collect()
}

fn section_text<'a>(prompt: &'a AssembledPrompt, section: &SectionReport) -> &'a str {
    let part = match section.placement {
        bcode_prompt::report::Placement::System => &prompt.system,
        _ => &prompt.request_context,
    };
    &part[section.range.clone()]
}

/// Limits up to this are all tried: past every marker's own size.
const DENSE_UP_TO: usize = 320;
/// Above [`DENSE_UP_TO`], every this many units (a prime, so the limits
/// fall at varied offsets within entries and lines).
const STRIDE: usize = 23;

/// Renders `limited` at every limit from 0 up to one that cuts nothing and
/// returns the failures as readable lines.
fn check(fixture: &Fixture, limited: &Limited) -> Vec<String> {
    let whole = render(fixture, None, limited.skills);
    let uncut = bounded_sections(&whole, limited);
    assert!(!uncut.is_empty(), "{}: no section to bound", limited.key);
    // The largest section (in bytes, which is at least its characters)
    // plus a margin is a limit that cuts nothing. Every limit is tried up
    // to well past the size of any marker (where "cuts everything" turns
    // into "keeps some"), then every few units up to the top.
    let top = uncut.values().map(|t| t.len()).max().unwrap_or(0) + 8;
    let limits = (0..=top.min(DENSE_UP_TO))
        .chain((DENSE_UP_TO..top).step_by(STRIDE))
        .chain([top]);
    let mut failures = Vec::new();
    for limit in limits {
        let prompt = render(
            fixture,
            Some(format!("{}={limit}", limited.key)),
            limited.skills,
        );
        let cut = bounded_sections(&prompt, limited);
        for (id, whole_text) in &uncut {
            match cut.get(id) {
                None => failures.push(format!(
                    "{}={limit}: section `{id}` is gone, with no marker",
                    limited.key
                )),
                Some(text) if text == whole_text || text.contains(limited.marker) => {}
                Some(text) => failures.push(format!(
                    "{}={limit}: section `{id}` was cut without its marker:\n{text}",
                    limited.key
                )),
            }
        }
        if limit == top && cut != uncut {
            failures.push(format!(
                "{}={limit} still cuts: raise the top of the range",
                limited.key
            ));
        }
    }
    failures
}

fn check_limit(key: &str) {
    let limited = LIMITS.iter().find(|l| l.key == key).unwrap();
    let failures = check(&fixture(), limited);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_limit_covers_a_limited_section() {
    // Keeps the list honest: one entry per limit key a stage reports.
    let keys: Vec<&str> = LIMITS.iter().map(|l| l.key).collect();
    assert_eq!(
        keys,
        [
            "system_prompt.repository_instructions_max_chars",
            "system_prompt.repository_invariants_max_chars",
            "system_prompt.git_status_max_chars",
            "skills.max_context_bytes",
            "skills.prompt.max_description_chars",
            "skills.prompt.max_bytes",
        ]
    );
}

#[test]
fn repository_instructions_cuts_are_marked() {
    check_limit("system_prompt.repository_instructions_max_chars");
}

#[test]
fn repository_invariants_cuts_are_marked() {
    check_limit("system_prompt.repository_invariants_max_chars");
}

#[test]
fn git_status_cuts_are_marked() {
    check_limit("system_prompt.git_status_max_chars");
}

#[test]
fn active_skill_cuts_are_marked() {
    check_limit("skills.max_context_bytes");
}

#[test]
fn catalog_description_cuts_are_marked() {
    check_limit("skills.prompt.max_description_chars");
}

#[test]
fn catalog_cuts_are_marked() {
    check_limit("skills.prompt.max_bytes");
}

/// `system_prompt.repository_instructions_total_max_chars` bounds the
/// instruction files together: at every total, the files placed are the
/// first ones in order, all whole but the last, which is whole or carries
/// the marker; and when a file is left out, the last one placed carries the
/// marker (the model always learns where the total cut).
#[test]
fn repository_instructions_total_cuts_are_marked() {
    let key = "system_prompt.repository_instructions_total_max_chars";
    let limited = Limited {
        key,
        sections: &["repository_context:"],
        marker: "[truncated: ",
        skills: &[],
    };
    let fixture = fixture();
    let whole = render(&fixture, None, &[]);
    let uncut: Vec<(&str, &str)> = bounded_sections(&whole, &limited).into_iter().collect();
    assert_eq!(uncut.len(), 2, "{uncut:?}");
    // Map order is by id; placing order is the prompt's.
    let order = |sections: &mut Vec<(&str, &str)>, prompt: &AssembledPrompt| {
        sections.sort_by_key(|(id, _)| prompt.sections.iter().position(|s| s.id == *id));
    };
    let mut uncut = uncut;
    order(&mut uncut, &whole);
    let top: usize = uncut.iter().map(|(_, t)| t.len()).sum::<usize>() + 8;
    let mut failures = Vec::new();
    for total in (0..=top.min(DENSE_UP_TO)).chain((DENSE_UP_TO..top).step_by(STRIDE)) {
        let prompt = render(&fixture, Some(format!("{key}={total}")), &[]);
        let mut placed: Vec<(&str, &str)> =
            bounded_sections(&prompt, &limited).into_iter().collect();
        order(&mut placed, &prompt);
        let Some((last, rest)) = placed.split_last() else {
            failures.push(format!(
                "{key}={total}: no instructions at all, not even a marker"
            ));
            continue;
        };
        let prefix = uncut.get(..placed.len()).unwrap_or(&[]);
        let ids_match = prefix
            .iter()
            .map(|(id, _)| id)
            .eq(placed.iter().map(|(id, _)| id));
        let rest_whole = rest.iter().zip(prefix).all(|(a, b)| a.1 == b.1);
        let last_ok = prefix.last().is_some_and(|(_, text)| *text == last.1)
            || last.1.contains(limited.marker);
        let marked_when_short = placed.len() == uncut.len() || last.1.contains(limited.marker);
        if !(ids_match && rest_whole && last_ok && marked_when_short) {
            failures.push(format!("{key}={total}: placed {placed:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
