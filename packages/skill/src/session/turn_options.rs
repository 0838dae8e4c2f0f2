//! The execution options of an invoked-skill turn, decided by one pure
//! function, [`skill_turn_options`], from what the invocation captured at
//! admission and what the skill asks for.
//!
//! # Rules
//!
//! 1. A skill's preferred `model` applies only when the invocation's model was
//!    not an explicit user selection. Provenance is tracked per setting, so a
//!    user who changed only reasoning settings has not selected the model and
//!    the preferred model still applies.
//! 2. When the preferred model replaces the invocation's model, the policy
//!    decides what happens to the reasoning settings, which were chosen for
//!    the previous model:
//!    - [`SkillTurnPolicy::ModelOnly`]: the skill changes only the model; the
//!      invocation's reasoning effort and summary are preserved.
//!    - [`SkillTurnPolicy::Default`]: inherited reasoning settings reset to
//!      the new model's provider defaults (`None`), since levels valid for one
//!      model may not be for another; reasoning the user chose is kept.
//! 3. A skill's explicit `thinking_effort` overrides the effort for that turn,
//!    under either policy and whoever chose the invocation's effort. The
//!    reasoning summary is never set by a skill.
//!
//! Rule 2's reset under the default policy is our reading of the spec, which
//! only says what the model-only policy preserves.
//!
//! # Truth table
//!
//! "Thinking" is the skill's `thinking_effort`; "inv." the invocation's value.
//!
//! | model chosen by user | skill `model` | policy     | reasoning chosen by user | model     | effort                 | summary |
//! |----------------------|---------------|------------|--------------------------|-----------|------------------------|---------|
//! | yes                  | any           | any        | any                      | inv.      | thinking, else inv.    | inv.    |
//! | no                   | none or same  | any        | any                      | inv.      | thinking, else inv.    | inv.    |
//! | no                   | other         | model-only | any                      | preferred | thinking, else inv.    | inv.    |
//! | no                   | other         | default    | yes                      | preferred | thinking, else inv.    | inv.    |
//! | no                   | other         | default    | no                       | preferred | thinking, else `None`  | `None`  |
//!
//! Every decision is also returned as a [`TurnReason`] for events and traces.

use bcode_skill_models::SkillManifest;

/// Who chose a setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettingOrigin {
    /// A default, the config or a profile: nobody picked it for this session.
    Default,
    /// The user selected it explicitly (for example with a model picker).
    User,
    /// A skill set it for an earlier turn.
    Skill,
}

/// The provider-neutral execution options an invocation captured at
/// admission time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvocationOptions {
    /// The model the invocation would run on, as the host names it.
    pub model: String,
    /// Who chose `model`; only a [`SettingOrigin::User`] choice stops a
    /// skill's preferred model.
    pub model_origin: SettingOrigin,
    /// The reasoning effort level, as the provider spells it; `None` means
    /// the provider's default.
    pub reasoning_effort: Option<String>,
    /// The reasoning summary setting, as the provider spells it; `None`
    /// means the provider's default.
    pub reasoning_summary: Option<String>,
    /// Who chose the reasoning effort and summary. Kept apart from
    /// `model_origin` because changing reasoning is not selecting a model.
    pub reasoning_origin: SettingOrigin,
}

/// What a skill's manifest asks for its turns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillTurnHints {
    /// The reasoning effort the skill asks for (front matter
    /// `thinking_effort`); it overrides the invocation's for the turn.
    pub thinking_effort: Option<String>,
    /// The preferred model.
    pub model: Option<String>,
}

impl SkillTurnHints {
    /// The hints a skill's front matter declares (`thinking_effort` and
    /// `model`).
    pub fn from_manifest(manifest: &SkillManifest) -> Self {
        SkillTurnHints {
            thinking_effort: manifest.details().thinking_effort().map(str::to_owned),
            model: manifest.details().model().map(str::to_owned),
        }
    }
}

/// How far a skill's turn settings reach.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkillTurnPolicy {
    /// The skill may change the model; inherited reasoning settings follow
    /// the new model's defaults.
    #[default]
    Default,
    /// The skill changes only the model; the invocation's reasoning settings
    /// are preserved.
    ModelOnly,
}

/// Why an effective option differs from (or equals) the invocation's.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TurnReason {
    /// The skill's preferred model replaced the invocation's.
    PreferredModelApplied {
        /// The invocation's model, replaced for this turn.
        from: String,
        /// The skill's preferred model, now in use.
        to: String,
    },
    /// The user selected the current model explicitly, so the skill's
    /// preferred model was not applied.
    PreferredModelNotEligible {
        /// The model the skill asked for and did not get.
        preferred: String,
    },
    /// The preferred model is already the current model.
    PreferredModelAlreadyCurrent,
    /// The model changed and the model-only policy kept the invocation's
    /// reasoning settings.
    ReasoningPreserved,
    /// The model changed and the user's own reasoning settings were kept.
    UserReasoningKept,
    /// The model changed and inherited reasoning settings were reset to the
    /// new model's defaults.
    ReasoningReset,
    /// The skill's `thinking_effort` set the effort for this turn.
    ThinkingEffortApplied {
        /// The effort the skill set, as it wrote it.
        effort: String,
    },
}

/// The options of one invoked-skill turn, with the reasons for them in the
/// order the rules were applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnOptions {
    /// The model to run the turn on: the skill's preferred one when it was
    /// eligible, else the invocation's.
    pub model: String,
    /// The reasoning effort for the turn; `None` means the model's provider
    /// default.
    pub reasoning_effort: Option<String>,
    /// The reasoning summary for the turn; `None` means the model's provider
    /// default. A skill never sets it.
    pub reasoning_summary: Option<String>,
    /// Every decision the rules made, in the order applied, for events and
    /// traces.
    pub reasons: Vec<TurnReason>,
}

/// Applies the rules of the module documentation.
pub fn skill_turn_options(
    invocation: &InvocationOptions,
    hints: &SkillTurnHints,
    policy: SkillTurnPolicy,
) -> TurnOptions {
    let mut reasons = Vec::new();
    let mut model = invocation.model.clone();
    let mut effort = invocation.reasoning_effort.clone();
    let mut summary = invocation.reasoning_summary.clone();

    if let Some(preferred) = &hints.model {
        if invocation.model_origin == SettingOrigin::User {
            reasons.push(TurnReason::PreferredModelNotEligible {
                preferred: preferred.clone(),
            });
        } else if *preferred == invocation.model {
            reasons.push(TurnReason::PreferredModelAlreadyCurrent);
        } else {
            reasons.push(TurnReason::PreferredModelApplied {
                from: invocation.model.clone(),
                to: preferred.clone(),
            });
            model = preferred.clone();
            match policy {
                SkillTurnPolicy::ModelOnly => reasons.push(TurnReason::ReasoningPreserved),
                SkillTurnPolicy::Default if invocation.reasoning_origin == SettingOrigin::User => {
                    reasons.push(TurnReason::UserReasoningKept);
                }
                SkillTurnPolicy::Default => {
                    effort = None;
                    summary = None;
                    reasons.push(TurnReason::ReasoningReset);
                }
            }
        }
    }

    if let Some(thinking) = &hints.thinking_effort {
        effort = Some(thinking.clone());
        reasons.push(TurnReason::ThinkingEffortApplied {
            effort: thinking.clone(),
        });
    }

    TurnOptions {
        model,
        reasoning_effort: effort,
        reasoning_summary: summary,
        reasons,
    }
}
