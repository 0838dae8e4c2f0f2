//! The invoked-skill turn options: every row of the truth table in
//! `turn_options.rs`, plus the edge cases the table folds together.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use bcode_skill::{
    InvocationOptions, SettingOrigin, SkillTurnHints, SkillTurnPolicy, TurnOptions, TurnReason,
    skill_turn_options,
};

/// Shorthands for the reasons, so a row fits on one line.
#[derive(Clone, Copy)]
enum R {
    /// Preferred model applied (`base` to `skill-model`).
    A,
    /// Preferred model not eligible: the user selected the model.
    N,
    /// Reasoning preserved by the model-only policy.
    P,
    /// The user's reasoning kept on a model change.
    U,
    /// Inherited reasoning reset on a model change.
    Z,
    /// Thinking effort `high` applied.
    T,
}
use R::*;
use SkillTurnPolicy::{Default, ModelOnly};

fn reason(r: R) -> TurnReason {
    match r {
        A => TurnReason::PreferredModelApplied {
            from: "base".into(),
            to: "skill-model".into(),
        },
        N => TurnReason::PreferredModelNotEligible {
            preferred: "skill-model".into(),
        },
        P => TurnReason::ReasoningPreserved,
        U => TurnReason::UserReasoningKept,
        Z => TurnReason::ReasoningReset,
        T => TurnReason::ThinkingEffortApplied {
            effort: "high".into(),
        },
    }
}

struct Row {
    model_by_user: bool,
    reasoning_by_user: bool,
    preferred_model: bool,
    thinking_effort: bool,
    policy: SkillTurnPolicy,
    expected: TurnOptions,
}

#[allow(clippy::too_many_arguments)]
fn row(
    model_by_user: bool,
    reasoning_by_user: bool,
    preferred_model: bool,
    thinking_effort: bool,
    policy: SkillTurnPolicy,
    model: &str,
    effort: Option<&str>,
    summary: Option<&str>,
    reasons: &[R],
) -> Row {
    Row {
        model_by_user,
        reasoning_by_user,
        preferred_model,
        thinking_effort,
        policy,
        expected: TurnOptions {
            model: model.into(),
            reasoning_effort: effort.map(Into::into),
            reasoning_summary: summary.map(Into::into),
            reasons: reasons.iter().copied().map(reason).collect(),
        },
    }
}

fn origin(by_user: bool) -> SettingOrigin {
    if by_user {
        SettingOrigin::User
    } else {
        SettingOrigin::Default
    }
}

/// The invocation: model `base`, effort `medium`, summary `auto`.
fn invocation(model_by_user: bool, reasoning_by_user: bool) -> InvocationOptions {
    InvocationOptions {
        model: "base".into(),
        model_origin: origin(model_by_user),
        reasoning_effort: Some("medium".into()),
        reasoning_summary: Some("auto".into()),
        reasoning_origin: origin(reasoning_by_user),
    }
}

/// The skill: preferred model `skill-model`, thinking effort `high`.
fn hints(preferred_model: bool, thinking_effort: bool) -> SkillTurnHints {
    SkillTurnHints {
        model: preferred_model.then(|| "skill-model".into()),
        thinking_effort: thinking_effort.then(|| "high".into()),
    }
}

/// Columns: model chosen by user, reasoning chosen by user (the
/// "only reasoning changed" case is `false, true`), skill has a preferred
/// model, skill has a thinking effort, policy → model, effort, summary, reasons.
#[rustfmt::skip]
fn table() -> Vec<Row> {
    vec![
        row(true , true , true , true , ModelOnly, "base"       , Some("high")  , Some("auto"), &[N, T]),
        row(true , true , true , true , Default  , "base"       , Some("high")  , Some("auto"), &[N, T]),
        row(true , true , true , false, ModelOnly, "base"       , Some("medium"), Some("auto"), &[N]),
        row(true , true , true , false, Default  , "base"       , Some("medium"), Some("auto"), &[N]),
        row(true , true , false, true , ModelOnly, "base"       , Some("high")  , Some("auto"), &[T]),
        row(true , true , false, true , Default  , "base"       , Some("high")  , Some("auto"), &[T]),
        row(true , true , false, false, ModelOnly, "base"       , Some("medium"), Some("auto"), &[]),
        row(true , true , false, false, Default  , "base"       , Some("medium"), Some("auto"), &[]),
        row(true , false, true , true , ModelOnly, "base"       , Some("high")  , Some("auto"), &[N, T]),
        row(true , false, true , true , Default  , "base"       , Some("high")  , Some("auto"), &[N, T]),
        row(true , false, true , false, ModelOnly, "base"       , Some("medium"), Some("auto"), &[N]),
        row(true , false, true , false, Default  , "base"       , Some("medium"), Some("auto"), &[N]),
        row(true , false, false, true , ModelOnly, "base"       , Some("high")  , Some("auto"), &[T]),
        row(true , false, false, true , Default  , "base"       , Some("high")  , Some("auto"), &[T]),
        row(true , false, false, false, ModelOnly, "base"       , Some("medium"), Some("auto"), &[]),
        row(true , false, false, false, Default  , "base"       , Some("medium"), Some("auto"), &[]),
        // Only reasoning was changed by the user: the model is still eligible.
        row(false, true , true , true , ModelOnly, "skill-model", Some("high")  , Some("auto"), &[A, P, T]),
        row(false, true , true , true , Default  , "skill-model", Some("high")  , Some("auto"), &[A, U, T]),
        row(false, true , true , false, ModelOnly, "skill-model", Some("medium"), Some("auto"), &[A, P]),
        row(false, true , true , false, Default  , "skill-model", Some("medium"), Some("auto"), &[A, U]),
        row(false, true , false, true , ModelOnly, "base"       , Some("high")  , Some("auto"), &[T]),
        row(false, true , false, true , Default  , "base"       , Some("high")  , Some("auto"), &[T]),
        row(false, true , false, false, ModelOnly, "base"       , Some("medium"), Some("auto"), &[]),
        row(false, true , false, false, Default  , "base"       , Some("medium"), Some("auto"), &[]),
        row(false, false, true , true , ModelOnly, "skill-model", Some("high")  , Some("auto"), &[A, P, T]),
        row(false, false, true , true , Default  , "skill-model", Some("high")  , None        , &[A, Z, T]),
        row(false, false, true , false, ModelOnly, "skill-model", Some("medium"), Some("auto"), &[A, P]),
        row(false, false, true , false, Default  , "skill-model", None          , None        , &[A, Z]),
        row(false, false, false, true , ModelOnly, "base"       , Some("high")  , Some("auto"), &[T]),
        row(false, false, false, true , Default  , "base"       , Some("high")  , Some("auto"), &[T]),
        row(false, false, false, false, ModelOnly, "base"       , Some("medium"), Some("auto"), &[]),
        row(false, false, false, false, Default  , "base"       , Some("medium"), Some("auto"), &[]),
    ]
}

#[test]
fn every_row_of_the_truth_table() {
    let table = table();
    // Every combination of the five inputs appears exactly once.
    let mut keys: Vec<_> = table
        .iter()
        .map(|r| {
            (
                r.model_by_user,
                r.reasoning_by_user,
                r.preferred_model,
                r.thinking_effort,
                r.policy == ModelOnly,
            )
        })
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 32);
    for (index, r) in table.iter().enumerate() {
        let actual = skill_turn_options(
            &invocation(r.model_by_user, r.reasoning_by_user),
            &hints(r.preferred_model, r.thinking_effort),
            r.policy,
        );
        assert_eq!(actual, r.expected, "row {index}");
    }
}

#[test]
fn preferred_model_equal_to_current_changes_nothing() {
    let mut hints = hints(true, false);
    hints.model = Some("base".into());
    let actual = skill_turn_options(&invocation(false, false), &hints, Default);
    assert_eq!(
        actual,
        TurnOptions {
            model: "base".into(),
            reasoning_effort: Some("medium".into()),
            reasoning_summary: Some("auto".into()),
            reasons: vec![TurnReason::PreferredModelAlreadyCurrent],
        }
    );
}

#[test]
fn a_model_set_by_an_earlier_skill_is_not_a_user_selection() {
    let mut invocation = invocation(false, false);
    invocation.model_origin = SettingOrigin::Skill;
    let actual = skill_turn_options(&invocation, &hints(true, false), ModelOnly);
    assert_eq!(
        actual,
        TurnOptions {
            model: "skill-model".into(),
            reasoning_effort: Some("medium".into()),
            reasoning_summary: Some("auto".into()),
            reasons: vec![reason(A), reason(P)],
        }
    );
}

#[test]
fn hints_come_from_the_manifest() {
    let manifest: bcode_skill_models::SkillManifest = serde_json::from_value(serde_json::json!({
        "id": "x", "name": "X", "description": "d", "version": null,
        "activation": {"keywords": []},
        "permissions": {"tools": [], "allowed_tools": []},
        "disable_model_invocation": false,
        "thinking_effort": "high", "model": "skill-model",
        "license": null, "compatibility": null, "metadata": {}, "extra": {}
    }))
    .unwrap();
    assert_eq!(SkillTurnHints::from_manifest(&manifest), hints(true, true));
}
