//! The catalog size an operator is warned about: `render` and `skills
//! catalog` warn on stderr when the catalog alone takes more than
//! `skills.prompt.warn_percent` of `skills.prompt.context_window_tokens`,
//! naming the keys that bound it; `render --json` carries the warning in the
//! catalog section's notes; a budget that brings the catalog under the
//! share silences it; a budgeted catalog always ends with its final line,
//! and a limit that leaves room for no skill is warned about.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use common::{Sandbox, text, write};

/// Forty repository skills, about 10 KB of catalog.
fn forty() -> Sandbox {
    let sandbox = Sandbox::new();
    for i in 0..40 {
        write(
            &sandbox
                .repo
                .join(format!(".bcode/skills/skill-{i:02}/SKILL.md")),
            &format!(
                "---\ndescription: Use when the task needs skill {i}; {}\n---\nBody.\n",
                "it explains every step of the work. ".repeat(3)
            ),
        );
    }
    sandbox
}

/// A 4,000-token window at the default 25%: 1,000 tokens, 4,000 bytes.
const SMALL_WINDOW: [&str; 2] = ["--set", "skills.prompt.context_window_tokens=4000"];

const WARNING: &str = "bcode-prompt: warning: the skill catalog alone is about ";

#[test]
fn a_catalog_over_its_share_of_the_window_is_warned_about_on_stderr() {
    let f = forty();
    for command in [&["skills", "catalog"][..], &["render"][..]] {
        let args: Vec<&str> = SMALL_WINDOW.iter().chain(command).copied().collect();
        let out = f.run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        let line = err
            .lines()
            .find(|l| l.starts_with(WARNING))
            .unwrap_or_else(|| panic!("{command:?}: no warning in {err}"));
        for words in [
            "more than 25% of a 4000-token context window",
            "skills.prompt.max_bytes (for example 4000)",
            "skills.prompt.max_description_chars",
            "or route instead: skills.routing.enabled = true",
        ] {
            assert!(line.contains(words), "{line}");
        }
        // The default window takes this catalog without a word.
        let quiet = f.run(command);
        assert!(
            !text(&quiet.stderr).contains(WARNING),
            "{}",
            text(&quiet.stderr)
        );
        // So does a budget under the share, or the warning turned off.
        for set in [
            "skills.prompt.max_bytes=3000",
            "skills.prompt.warn_percent=0",
        ] {
            let args: Vec<&str> = SMALL_WINDOW
                .iter()
                .chain(&["--set", set])
                .chain(command)
                .copied()
                .collect();
            let out = f.run(&args);
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            assert!(
                !text(&out.stderr).contains(WARNING),
                "{set}: {}",
                text(&out.stderr)
            );
        }
    }
}

#[test]
fn render_json_carries_the_warning_in_the_catalog_notes() {
    let f = forty();
    let args: Vec<&str> = SMALL_WINDOW
        .iter()
        .chain(&["render", "--json"])
        .copied()
        .collect();
    let out = f.run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let catalog = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "skill_catalog")
        .unwrap();
    let notes: Vec<&str> = catalog["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(
            |n| n.starts_with("warning: the skill catalog alone is about")
                && n.contains("skills.prompt.max_bytes")
        ),
        "{notes:?}"
    );
    // With the catalog section off there is nothing to warn about.
    let args: Vec<&str> = SMALL_WINDOW
        .iter()
        .chain(&[
            "--set",
            "system_prompt.sections.skill_catalog=false",
            "render",
        ])
        .copied()
        .collect();
    let out = f.run(&args);
    assert!(
        !text(&out.stderr).contains(WARNING),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_budgeted_catalog_always_ends_with_its_final_line() {
    let f = forty();
    for max in ["3000", "500", "0"] {
        let set = format!("skills.prompt.max_bytes={max}");
        let out = f.run(&["--set", &set, "skills", "catalog"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let catalog = text(&out.stdout);
        assert!(
            catalog.contains(&format!(
                "the catalog is limited to {max} bytes (skills.prompt.max_bytes)"
            )) || catalog.contains(&format!(
                "the skill catalog is limited to {max} bytes (skills.prompt.max_bytes)"
            )),
            "{catalog}"
        );
        assert!(
            catalog.contains(&f.repo.join(".bcode/skills").display().to_string()),
            "the line names the root: {catalog}"
        );
        assert!(
            text(&out.stderr).contains("skills left out"),
            "{}",
            text(&out.stderr)
        );
        // A limit that leaves room for no skill says so.
        let no_room = format!(
            "bcode-prompt: warning: skills.prompt.max_bytes = {max} leaves room for none of the 40 skills"
        );
        assert_eq!(
            max != "3000",
            text(&out.stderr).contains(&no_room),
            "{}",
            text(&out.stderr)
        );
    }
    // `render` too.
    let out = f.run(&["--set", "skills.prompt.max_bytes=10", "render"]);
    assert!(
        text(&out.stderr)
            .contains("skills.prompt.max_bytes = 10 leaves room for none of the 40 skills"),
        "{}",
        text(&out.stderr)
    );
}

/// A session warns once, at its first turn, not at every turn.
#[test]
fn a_session_warns_about_its_catalog_once() {
    let f = forty();
    let out = f.run_session("size", &SMALL_WINDOW, b"hello\nagain\n/quit\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(err.matches(WARNING).count(), 1, "{err}");
}
