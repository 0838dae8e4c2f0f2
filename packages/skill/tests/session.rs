//! Skill sessions: explicit activation and its errors, suggestion ranking,
//! conservative auto-activation, event contents, and registry reloads.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use std::collections::BTreeSet;
use std::fs;

use bcode_prompt_config::{AutoActivate, SkillsConfig};
use bcode_skill::{
    ActivationReason, SessionError, SessionReply, SkillSession, SkillSessionOptions, SlashCommand,
    Templates,
};
use bcode_skill_models::{SkillError, SkillEvent, SourceKind};
use support::{build, root, write_tree};

fn skill(description: &str, keywords: &[&str], extra: &str) -> String {
    format!(
        "---\ndescription: {description}\nactivation:\n  keywords: [{}]\n{extra}---\nBody of {description}.\n",
        keywords.join(", ")
    )
}

struct Fixture {
    tmp: tempfile::TempDir,
    config: SkillsConfig,
}

impl Fixture {
    fn new(auto: AutoActivate) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        write_tree(
            tmp.path(),
            &[
                (
                    "rust-debugging/SKILL.md",
                    &skill("Rust failures", &["rust", "cargo", "clippy"], ""),
                ),
                (
                    "pr-review/SKILL.md",
                    &skill("Review pull requests", &["pull request", "review"], ""),
                ),
                ("docs/SKILL.md", &skill("Write docs", &["docs", "rust"], "")),
                (
                    "secret/SKILL.md",
                    &skill(
                        "Hidden one",
                        &["rust", "cargo"],
                        "disable-model-invocation: true\n",
                    ),
                ),
                ("off-skill/SKILL.md", &skill("Disabled", &["rust"], "")),
            ],
        );
        let mut config = SkillsConfig {
            auto_activate: auto,
            preview_max_chars: 40,
            ..SkillsConfig::default()
        };
        config.disabled.ids = vec!["off-skill".into()];
        Fixture { tmp, config }
    }

    fn session(&self) -> SkillSession {
        let registry = self.registry();
        SkillSession::new(
            registry,
            SkillSessionOptions::from_config(&self.config),
            Templates::builtin(),
        )
    }

    fn registry(&self) -> bcode_skill::SkillRegistry {
        build(
            &[root(
                SourceKind::RepoBcode,
                "repo:.bcode/skills",
                self.tmp.path(),
            )],
            &self.config,
        )
    }
}

fn activate(id: &str, args: &[&str]) -> SlashCommand {
    SlashCommand::Activate {
        id: id.into(),
        arguments: args.iter().map(|a| (*a).to_owned()).collect(),
        raw_arguments: None,
    }
}

#[test]
fn explicit_activation_events_and_errors() {
    let f = Fixture::new(AutoActivate::Suggest);
    let mut session = f.session();
    let out = session.run(&activate("rust-debugging", &["diagnose", "cargo test"]));
    let Ok(SessionReply::Activated {
        id,
        source,
        bytes,
        truncated,
        preview,
    }) = &out.reply
    else {
        panic!("{out:?}")
    };
    assert_eq!(
        (id.as_str(), source.as_str(), *truncated),
        ("rust-debugging", "repo:.bcode/skills", false)
    );
    assert_eq!(preview, "Body of Rust failures.");
    assert_eq!(
        out.events,
        vec![
            SkillEvent::SkillActivated {
                id: "rust-debugging".into(),
                source: "repo:.bcode/skills".into(),
                arguments: vec!["diagnose".into(), "cargo test".into()],
                arguments_truncated: false,
                arguments_bytes: None,
                reason: "explicit".into(),
                relevance: None,
            },
            SkillEvent::SkillContextLoaded {
                id: "rust-debugging".into(),
                source: "repo:.bcode/skills".into(),
                bytes: *bytes,
                truncated: false,
                preview: "Body of Rust failures.".into(),
            },
        ]
    );
    assert_eq!(*bytes, session.active()[0].context.text.len());

    // Hidden skills can be invoked explicitly.
    assert!(session.run(&activate("secret", &[])).reply.is_ok());
    let active: Vec<&str> = session.active().iter().map(|a| a.id.as_str()).collect();
    assert_eq!(active, ["rust-debugging", "secret"]);

    let unknown = session.run(&activate("rust-debuging", &[]));
    assert_eq!(
        unknown.reply,
        Err(SessionError::Skill(SkillError::NotFound {
            id: "rust-debuging".into(),
            suggestion: Some("rust-debugging".into())
        }))
    );
    assert_eq!(
        unknown.events,
        vec![SkillEvent::SkillInvocationFailed {
            id: "rust-debuging".into(),
            error: "no skill with id `rust-debuging`; did you mean `rust-debugging`?".into()
        }]
    );
    assert_eq!(
        session.run(&activate("off-skill", &[])).reply,
        Err(SessionError::Skill(SkillError::Disabled {
            id: "off-skill".into()
        }))
    );

    let off = session.run(&SlashCommand::Off { id: "docs".into() });
    assert_eq!(
        off.reply.unwrap_err().to_string(),
        "skill `docs` is not active; active: rust-debugging, secret"
    );
    let off = session.run(&SlashCommand::Off {
        id: "secret".into(),
    });
    assert_eq!(
        off.events,
        vec![SkillEvent::SkillDeactivated {
            id: "secret".into(),
            reason: "explicit".into()
        }]
    );
    let Ok(SessionReply::ActiveList(list)) = session.run(&SlashCommand::Active).reply else {
        panic!()
    };
    assert_eq!(
        list,
        vec![(
            bcode_skill_models::SkillId::parse("rust-debugging").unwrap(),
            vec!["diagnose".into(), "cargo test".into()],
            ActivationReason::Explicit
        )]
    );
}

#[test]
fn listing_includes_hidden_skills_and_marks_active_ones() {
    let f = Fixture::new(AutoActivate::Suggest);
    let mut session = f.session();
    session.run(&activate("docs", &[]));
    let Ok(SessionReply::Listing(list)) = session.run(&SlashCommand::List).reply else {
        panic!()
    };
    let rows: Vec<(&str, bool, bool)> = list
        .iter()
        .map(|l| (l.id.as_str(), l.model_visible, l.active))
        .collect();
    assert_eq!(
        rows,
        [
            ("docs", true, true),
            ("pr-review", true, false),
            ("rust-debugging", true, false),
            ("secret", false, false)
        ]
    );
}

#[test]
fn suggestions_are_ranked_word_bounded_and_never_hidden() {
    let f = Fixture::new(AutoActivate::Suggest);
    let mut session = f.session();
    let out = session
        .on_prompt("Please REVIEW this Pull Request: cargo clippy fails in Rust; trustworthy docs");
    let ranked: Vec<(&str, usize, Vec<String>)> = out
        .suggestions
        .iter()
        .map(|s| (s.id.as_str(), s.score, s.matched_keywords.clone()))
        .collect();
    assert_eq!(
        ranked,
        vec![
            (
                "pr-review",
                3,
                vec!["pull request".to_string(), "review".to_string()]
            ),
            (
                "rust-debugging",
                3,
                vec![
                    "rust".to_string(),
                    "cargo".to_string(),
                    "clippy".to_string()
                ]
            ),
            ("docs", 2, vec!["docs".to_string(), "rust".to_string()]),
        ]
    );
    assert!(
        out.activated.is_empty() && session.active().is_empty(),
        "suggest mode never activates"
    );
    assert_eq!(out.events.len(), 3);
    assert_eq!(
        out.events[0],
        SkillEvent::SkillSuggested {
            id: "pr-review".into(),
            source: "repo:.bcode/skills".into(),
            matched_keywords: vec!["pull request".into(), "review".into()],
            matched_paths: Vec::new(),
            relevance: None,
        }
    );
    // Word boundaries: "trust" is not "rust"; "pull" alone is not "pull request".
    assert!(
        session
            .on_prompt("trust the pull of gravity")
            .suggestions
            .is_empty()
    );
}

#[test]
fn auto_activation_is_bounded_and_audited() {
    let f = Fixture::new(AutoActivate::On);
    let mut session = f.session();
    let out = session.on_prompt("review the pull request; cargo clippy on rust; update the docs");
    assert_eq!(
        out.activated.iter().map(|i| i.as_str()).collect::<Vec<_>>(),
        ["pr-review", "rust-debugging"]
    );
    // The third match is over the per-prompt bound: suggested, not applied.
    assert_eq!(
        out.suggestions
            .iter()
            .map(|s| s.id.as_str())
            .collect::<Vec<_>>(),
        ["docs"]
    );
    let reasons: Vec<String> = out
        .events
        .iter()
        .filter_map(|e| match e {
            SkillEvent::SkillActivated { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        [
            "auto: matched pull request, review",
            "auto: matched rust, cargo, clippy"
        ]
    );
    // A single one-word match stays a suggestion, and active skills are not suggested again.
    let mut fresh = f.session();
    let out = fresh.on_prompt("rust");
    assert!(out.activated.is_empty());
    assert_eq!(
        out.suggestions
            .iter()
            .map(|s| s.id.as_str())
            .collect::<Vec<_>>(),
        ["docs", "rust-debugging"]
    );
    assert!(
        session
            .on_prompt("rust cargo clippy")
            .suggestions
            .iter()
            .all(|s| s.id.as_str() != "rust-debugging")
    );
    // Off mode: nothing at all.
    let mut off = Fixture::new(AutoActivate::Off).session();
    assert_eq!(
        off.on_prompt("review the pull request"),
        bcode_skill::PromptOutcome::default()
    );
}

#[test]
fn previews_in_events_are_bounded() {
    let f = Fixture::new(AutoActivate::Suggest);
    fs::write(
        f.tmp.path().join("docs/SKILL.md"),
        format!("---\ndescription: d\n---\n{}", "long text ".repeat(500)),
    )
    .unwrap();
    let mut session = f.session();
    let out = session.run(&activate("docs", &[]));
    let SkillEvent::SkillContextLoaded { preview, bytes, .. } = &out.events[1] else {
        panic!()
    };
    assert_eq!(preview.chars().count(), 40);
    assert!(preview.ends_with("… [4983 more characters]"), "{preview}");
    assert!(*bytes > 5000);
}

#[test]
fn reload_reports_a_diff_and_keeps_vanished_active_skills() {
    let f = Fixture::new(AutoActivate::Suggest);
    let mut session = f.session();
    session.run(&activate("docs", &[]));
    session.run(&activate("rust-debugging", &["x"]));
    let old_docs_context = session.active()[0].context.text.clone();

    fs::remove_dir_all(f.tmp.path().join("docs")).unwrap();
    write_tree(
        f.tmp.path(),
        &[("new-skill/SKILL.md", &skill("New", &["new"], ""))],
    );
    fs::write(
        f.tmp.path().join("rust-debugging/SKILL.md"),
        skill("Rust failures, edited", &["rust"], ""),
    )
    .unwrap();
    let out = session.replace_registry(f.registry(), &BTreeSet::new());
    assert_eq!(out.diff.to_string(), "+new-skill ~rust-debugging -docs");
    assert_eq!(
        out.events[0],
        SkillEvent::SkillsReloaded {
            added: vec!["new-skill".into()],
            changed: vec!["rust-debugging".into()],
            removed: vec!["docs".into()]
        }
    );
    // The changed active skill got fresh context; the vanished one kept its last.
    assert!(
        matches!(&out.events[1], SkillEvent::SkillContextLoaded { id, .. } if id == "rust-debugging")
    );
    assert!(
        session.active()[1]
            .context
            .text
            .contains("Rust failures, edited")
    );
    assert_eq!(
        (
            session.active()[0].context.text.clone(),
            session.active()[0].file_missing
        ),
        (old_docs_context, true)
    );
    assert_eq!(out.diagnostics.len(), 1);
    assert_eq!(out.diagnostics[0].code.as_str(), "removed_while_active");

    // Nothing changed: no events, empty diff; a body-only edit reported by the caller counts as changed.
    let out = session.replace_registry(f.registry(), &BTreeSet::new());
    assert!(out.diff.is_empty() && out.events.is_empty());
    let out = session.replace_registry(f.registry(), &BTreeSet::from(["new-skill".to_string()]));
    assert_eq!(out.diff.to_string(), "~new-skill");
}

#[test]
fn a_model_only_skill_is_refused_to_the_user_and_allowed_to_the_model() {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(
        tmp.path(),
        &[(
            "release-bot/SKILL.md",
            "---\ndescription: Cut a release\nuser-invocable: false\n---\nTag it.\n",
        )],
    );
    let registry = build(
        &[root(
            SourceKind::RepoBcode,
            "repo:.bcode/skills",
            tmp.path(),
        )],
        &SkillsConfig::default(),
    );
    let mut session = SkillSession::new(
        registry,
        SkillSessionOptions::from_config(&SkillsConfig::default()),
        Templates::builtin(),
    );
    let refused = ActivationReason::Accepted {
        matched_keywords: vec!["release".into()],
        matched_paths: Vec::new(),
        relevance: None,
    };
    for reason in [ActivationReason::Explicit, refused] {
        let out = session.activate("release-bot", &[], reason);
        assert_eq!(
            out.reply,
            Err(SessionError::Skill(SkillError::NotUserInvocable {
                id: "release-bot".into()
            }))
        );
        assert!(session.active().is_empty());
    }
    let out = session.activate("release-bot", &[], ActivationReason::Model);
    assert!(out.reply.is_ok(), "{:?}", out.reply);
    assert_eq!(session.active()[0].reason, ActivationReason::Model);
}
