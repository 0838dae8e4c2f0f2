//! Issue 24, item 8: front matter of thousands of short keys is held to
//! the front-matter budget in TOML as in YAML (the skill is skipped with
//! one `front_matter_too_complex` error), and a file within the budget
//! costs one pass for all its diagnostics' lines and reports a bounded
//! number of them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use std::time::Duration;

use bcode_skill::{ParseOutcome, parse_skill};

/// The file bound discovery reads skills within.
const FILE_BOUND: usize = 256 * 1024;

/// Generous: the budget makes this a few milliseconds; before it, 25,000
/// keys took over 5 s in a release build, tens of seconds in a debug one.
const DEADLINE: Duration = Duration::from_secs(10);

/// Parses `text` on a thread of its own under a watchdog: a parse still
/// running at [`DEADLINE`] fails the test (a hang guard, not a stopwatch).
fn parse(text: &str) -> ParseOutcome {
    let origin = support::registry_origin("flood");
    let text = text.to_owned();
    let (done, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(parse_skill(&origin, text.as_bytes()));
    });
    outcome
        .recv_timeout(DEADLINE)
        .unwrap_or_else(|_| panic!("the parse ran past {DEADLINE:?}"))
}

/// A skill file: `fence`, a description, `keys` short unknown keys, `fence`.
fn flood(fence: &str, keys: usize) -> String {
    let toml = fence == "+++";
    let mut text = if toml {
        format!("{fence}\ndescription = \"d\"\n")
    } else {
        format!("{fence}\ndescription: d\n")
    };
    for i in 0..keys {
        text.push_str(&if toml {
            format!("k{i:x}=1\n")
        } else {
            format!("k{i:x}: v\n")
        });
    }
    text.push_str(&format!("{fence}\nBody.\n"));
    assert!(text.len() <= FILE_BOUND, "{} bytes", text.len());
    text
}

/// One line per diagnostic: `severity code line:col [field] message`.
fn report(outcome: &ParseOutcome) -> Vec<String> {
    outcome
        .diagnostics
        .iter()
        .map(|d| {
            format!(
                "{} {} {}:{} [{}] {}",
                d.severity,
                d.code,
                d.line.unwrap_or(0),
                d.column.unwrap_or(0),
                d.field.as_deref().unwrap_or(""),
                d.message()
            )
        })
        .collect()
}

#[test]
fn toml_front_matter_of_25000_keys_is_over_the_budget() {
    let outcome = parse(&flood("+++", 25_000));
    assert!(outcome.skill.is_none());
    // The root table, the description's key and value, then 4,998 keys
    // with their values make 9,999 nodes; the next key (`k1386`, line 5,001)
    // is node 10,000 and its value the one too many, as in YAML.
    assert_eq!(
        report(&outcome),
        [
            "error front_matter_too_complex 5001:7 [] TOML front matter is invalid: it has more than 10000 keys, values, tables and arrays (the front-matter budget); the skill is skipped"
        ]
    );
}

#[test]
fn yaml_front_matter_of_25000_keys_is_over_the_budget() {
    let outcome = parse(&flood("---", 25_000));
    assert!(outcome.skill.is_none());
    assert_eq!(
        report(&outcome),
        [
            "error front_matter_too_complex 5001:8 [] YAML front matter is invalid: budget breached: Nodes { nodes: 10001 }; the skill is skipped"
        ]
    );
}

/// Just within the budget the skill loads, every unknown key is kept, and
/// the diagnostics name twenty of them and count the rest; so do unknown
/// keys under `activation`.
#[test]
fn front_matter_within_the_budget_reports_a_bounded_number_of_fields() {
    for fence in ["+++", "---"] {
        let outcome = parse(&flood(fence, 4_998));
        let skill = outcome.skill.as_ref().expect(fence);
        assert_eq!(skill.manifest.details().extra().len(), 4_998, "{fence}");
        let report = report(&outcome);
        // Keys sort as text: `k0`, `k1`, `k10`, `k100`, `k1000`, ...
        let mut sorted: Vec<usize> = (0..4_998).collect();
        sorted.sort_by_key(|i| format!("k{i:x}"));
        let mut expected: Vec<String> = sorted[..20]
            .iter()
            .map(|i| {
                format!(
                    "info unknown_field {}:1 [k{i:x}] unknown field `k{i:x}` is kept but not used by Bcode",
                    i + 3
                )
            })
            .collect();
        let first_rest = sorted[20];
        expected.push(format!(
            "info unknown_field {}:1 [k{first_rest:x}] 4978 more unknown fields are not listed one by one; the first is `k{first_rest:x}`",
            first_rest + 3
        ));
        assert_eq!(report, expected, "{fence}");
    }
}

#[test]
fn unknown_keys_under_activation_are_bounded_too() {
    let mut text = String::from("---\ndescription: d\nactivation:\n");
    for i in 0..100 {
        text.push_str(&format!("  a{i:02}: v\n"));
    }
    text.push_str("---\nBody.\n");
    let outcome = parse(&text);
    assert!(outcome.skill.is_some());
    let mut expected: Vec<String> = (0..20)
        .map(|i| format!("info unknown_field 3:1 [activation.a{i:02}] unknown field `activation.a{i:02}` is ignored"))
        .collect();
    expected.push("info unknown_field 3:1 [activation.a20] 80 more unknown fields are not listed one by one; the first is `activation.a20`".into());
    assert_eq!(report(&outcome), expected);
}
