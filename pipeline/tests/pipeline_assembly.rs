//! Assembly: canonical order, placement, the cache boundary and its
//! stability, per-section accounting, omissions, error policy and
//! determinism. The base stage's own modes are tested with it, in
//! `sections/tests/base_stage.rs`.

// Test helpers may fail loudly too; clippy.toml only covers `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bcode_prompt_config::{BcodeConfig, PromptMode};
use bcode_prompt_pipeline::AssembledPrompt;
use bcode_prompt_pipeline::Position;
use bcode_prompt_pipeline::{AssembleError, Pipeline, PipelineError};
use bcode_prompt_pipeline::{
    Placement, Section, SectionClass, SectionKind, Stage, StageContext, StageError, StageSpec,
};
use bcode_templates::{EMBEDDED, Templates};
use serde_json::json;

/// Turn inputs, as probes would gather them.
#[derive(Default)]
struct Inputs {
    clock: Option<&'static str>,
    git: Option<&'static str>,
    skills: Option<Vec<&'static str>>,
}

impl Inputs {
    fn new() -> Inputs {
        Inputs::default()
    }
}

/// The gathered value, or the error that omits the section.
fn need<'a, T>(value: &'a Option<T>, what: &str) -> Result<&'a T, StageError> {
    value.as_ref().ok_or_else(|| StageError::Degraded {
        message: format!("{what} was not gathered"),
    })
}

type Run = fn(&StageContext<'_, Inputs>) -> Result<Vec<Section>, StageError>;

/// A stage whose behaviour is a plain function, standing in for the
/// sections crate.
struct TestStage {
    id: &'static str,
    toggle: Option<&'static str>,
    class: SectionClass,
    placement: Placement,
    run: Run,
}

impl Stage<Inputs> for TestStage {
    fn spec(&self) -> StageSpec {
        // A canonical place, as the sections crate's stages have; an id
        // that names no section keeps a place too, so the pipeline's check
        // of the id is what the tests see.
        let kind = SectionKind::from_name(self.id).unwrap_or(SectionKind::Locale);
        let spec = StageSpec::host(self.id, self.class, self.placement, Position::At(kind));
        match self.toggle {
            Some(toggle) => spec.with_toggle(toggle),
            None => spec.without_toggle(),
        }
    }
    fn render(&self, cx: &StageContext<'_, Inputs>) -> Result<Vec<Section>, StageError> {
        (self.run)(cx)
    }
}

/// The `base` section as the sections crate's `BaseStage` writes it in
/// `mode = "replace"`: the configured text, verbatim, from the canonical
/// spec of `base` (no toggle).
struct ReplacedBase;

impl Stage<Inputs> for ReplacedBase {
    fn spec(&self) -> StageSpec {
        SectionKind::Base.spec()
    }
    fn render(&self, cx: &StageContext<'_, Inputs>) -> Result<Vec<Section>, StageError> {
        let text = cx.config.system_prompt.text.clone();
        Ok(vec![
            Section::new("base", text).with_source("system_prompt.text"),
        ])
    }
}

fn stage(
    id: &'static str,
    class: SectionClass,
    placement: Placement,
    run: Run,
) -> Box<dyn Stage<Inputs>> {
    Box::new(TestStage {
        id,
        toggle: Some(id),
        class,
        placement,
        run,
    })
}

/// The stage set used by most tests, deliberately registered out of order.
fn stages() -> Vec<Box<dyn Stage<Inputs>>> {
    use Placement::*;
    use SectionClass::*;
    vec![
        Box::new(TestStage {
            id: "active_skill",
            toggle: None,
            class: Turn,
            placement: System,
            run: |cx| {
                let skills = need(&cx.inputs.skills, "active skills")?;
                Ok(skills
                    .iter()
                    .map(|id| Section::new(&format!("active_skill:{id}"), format!("<skill {id}>")))
                    .collect())
            },
        }),
        stage("user_authority", Static, System, |_| {
            Ok(vec![Section::new("user_authority", "AUTH\n\n".into())])
        }),
        stage("dynamic_repository_context", Turn, System, |cx| {
            let git = need(&cx.inputs.git, "git status")?;
            Ok(vec![
                Section::new("dynamic_repository_context", format!("git: {git}"))
                    .with_source("git status --porcelain"),
            ])
        }),
        stage("current_datetime", Turn, RequestContext, |cx| {
            let clock = need(&cx.inputs.clock, "the clock")?;
            Ok(vec![Section::new(
                "current_datetime",
                format!("now: {clock}"),
            )])
        }),
        stage("execution_environment", Session, RequestContext, |_| {
            Err(StageError::Degraded {
                message: "os probe failed".into(),
            })
        }),
        stage("locale", Session, RequestContext, |_| {
            Ok(vec![Section::new("locale", "locale: C".into())])
        }),
        stage("skill_catalog", Session, System, |_| Ok(vec![])),
        stage("repository_context", Session, System, |_| {
            Ok(vec![
                Section::new("repository_context:BCODE.md", "bcode".into())
                    .with_source("/repo/BCODE.md")
                    .with_note("read whole"),
                Section::new("repository_context:AGENTS.md", "  \n".into())
                    .with_source("/repo/AGENTS.md"),
            ])
        }),
        Box::new(ReplacedBase),
    ]
}

fn config() -> BcodeConfig {
    let mut config = BcodeConfig::default();
    config.system_prompt.mode = PromptMode::Replace;
    config.system_prompt.text = "BASE\n".into();
    config.system_prompt.sections.locale = false;
    config
}

fn inputs(clock: &'static str, git: &'static str, skills: Vec<&'static str>) -> Inputs {
    Inputs {
        clock: Some(clock),
        git: Some(git),
        skills: Some(skills),
    }
}

fn templates() -> Templates {
    Templates::embedded(&[EMBEDDED]).unwrap()
}

fn assemble_with(
    stages: Vec<Box<dyn Stage<Inputs>>>,
    config: &BcodeConfig,
    templates: &Templates,
    inputs: &Inputs,
) -> Result<AssembledPrompt, AssembleError> {
    let pipeline = Pipeline::new(stages).unwrap();
    pipeline.assemble(&StageContext::new(config, templates, inputs), false)
}

fn assemble(inputs: &Inputs) -> AssembledPrompt {
    assemble_with(stages(), &config(), &templates(), inputs).unwrap()
}

#[test]
fn sections_are_ordered_placed_and_accounted_for() {
    let prompt = assemble(&inputs(
        "2025-01-02T03:04:05Z",
        "M a.rs",
        vec!["rust", "go"],
    ));
    // Stable sections first in canonical order, then turn sections: git
    // status ranks before repository instructions but is moved behind them.
    let system = "BASE\n\nbcode\n\nAUTH\n\ngit: M a.rs\n\n<skill rust>\n\n<skill go>";
    let report = |id: &str, class: &str, start: usize, end: usize, sources: &[&str]| {
        json!({
            "id": id, "class": class, "placement": "system",
            "bytes": end - start, "chars": end - start,
            "range": {"start": start, "end": end},
            "truncated": false, "truncations": [], "sources": sources,
            "template": null, "notes": [],
        })
    };
    let mut bcode = report(
        "repository_context:BCODE.md",
        "session",
        6,
        11,
        &["/repo/BCODE.md"],
    );
    bcode["notes"] = json!(["read whole"]);
    let base = report("base", "static", 0, 4, &["system_prompt.text"]);
    let expected = json!({
        "system": system,
        "request_context": "now: 2025-01-02T03:04:05Z",
        "cache_boundary": 17,
        "sections": [
            base,
            bcode,
            report("user_authority", "static", 13, 17, &[]),
            report("dynamic_repository_context", "turn", 19, 30, &["git status --porcelain"]),
            report("active_skill:rust", "turn", 32, 44, &[]),
            report("active_skill:go", "turn", 46, 56, &[]),
            {
                "id": "current_datetime", "class": "turn", "placement": "request_context",
                "bytes": 25, "chars": 25, "range": {"start": 0, "end": 25},
                "truncated": false, "truncations": [], "sources": [],
                "template": null, "notes": [],
            },
        ],
        "omitted": [
            {"id": "execution_environment", "class": "session", "placement": "request_context",
             "reason": "failed", "message": "os probe failed"},
            {"id": "locale", "class": "session", "placement": "request_context",
             "reason": "disabled", "toggle": "locale"},
            {"id": "repository_context:AGENTS.md", "class": "session", "placement": "system",
             "reason": "empty"},
            {"id": "skill_catalog", "class": "session", "placement": "system",
             "reason": "empty"},
        ],
    });
    assert_eq!(serde_json::to_value(&prompt).unwrap(), expected);
    assert_eq!(
        &prompt.system[..prompt.cache_boundary],
        "BASE\n\nbcode\n\nAUTH"
    );
    assert_eq!(
        prompt
            .section_at(Placement::System, 20)
            .map(|s| s.id.as_str()),
        Some("dynamic_repository_context")
    );
    assert_eq!(prompt.section_at(Placement::System, 18), None);
}

#[test]
fn turn_inputs_never_change_a_byte_before_the_cache_boundary() {
    let variants = [
        inputs("2025-01-02T03:04:05Z", "M a.rs", vec!["rust"]),
        inputs("2031-12-31T23:59:59+14:00", "", vec![]),
        inputs(
            "1999-01-01T00:00:00Z",
            "?? new.rs\n M b.rs\nD  c.rs",
            vec!["a", "b", "c"],
        ),
    ];
    let prompts: Vec<AssembledPrompt> = variants.iter().map(assemble).collect();
    let first = &prompts[0];
    for other in &prompts[1..] {
        assert_eq!(other.cache_boundary, first.cache_boundary);
        assert_eq!(
            other.system.as_bytes()[..other.cache_boundary],
            first.system.as_bytes()[..first.cache_boundary]
        );
        // The turn inputs did change the prompt, after the boundary.
        assert_ne!(other.system, first.system);
        assert_ne!(other.request_context, first.request_context);
    }
}

#[test]
fn boundary_is_zero_without_stable_sections_and_the_end_without_turn_ones() {
    let turn_only = vec![stage(
        "dynamic_repository_context",
        SectionClass::Turn,
        Placement::System,
        |_| {
            Ok(vec![Section::new(
                "dynamic_repository_context",
                "git".into(),
            )])
        },
    )];
    let inputs = Inputs::new();
    let prompt = assemble_with(turn_only, &config(), &templates(), &inputs).unwrap();
    assert_eq!((prompt.system.as_str(), prompt.cache_boundary), ("git", 0));

    let base = vec![Box::new(ReplacedBase) as Box<dyn Stage<Inputs>>];
    let prompt = assemble_with(base, &config(), &templates(), &inputs).unwrap();
    assert_eq!((prompt.system.as_str(), prompt.cache_boundary), ("BASE", 4));
}

#[test]
fn same_inputs_give_the_same_bytes_whatever_the_registration_order() {
    let a = assemble(&inputs("2025-01-02T03:04:05Z", "M a.rs", vec!["rust"]));
    let b = assemble(&inputs("2025-01-02T03:04:05Z", "M a.rs", vec!["rust"]));
    let mut reversed = stages();
    reversed.reverse();
    let c = assemble_with(
        reversed,
        &config(),
        &templates(),
        &inputs("2025-01-02T03:04:05Z", "M a.rs", vec!["rust"]),
    )
    .unwrap();
    assert_eq!(a, b);
    assert_eq!(a, c);
}

#[test]
fn a_missing_input_omits_only_that_section() {
    let partial = Inputs {
        clock: Some("now"),
        skills: Some(vec![]),
        ..Inputs::new()
    };
    let prompt = assemble(&partial);
    assert_eq!(prompt.system, "BASE\n\nbcode\n\nAUTH");
    let failures: Vec<(&str, String)> = prompt
        .failures()
        .map(|o| {
            (
                o.id.as_str(),
                serde_json::to_value(o).unwrap()["message"].to_string(),
            )
        })
        .collect();
    assert_eq!(
        failures,
        [
            ("execution_environment", "\"os probe failed\"".to_owned()),
            (
                "dynamic_repository_context",
                "\"git status was not gathered\"".to_owned()
            ),
        ]
    );
}

#[test]
fn stage_bugs_are_errors_not_panics() {
    let check_new = |stages: Vec<Box<dyn Stage<Inputs>>>, expected: PipelineError| {
        assert_eq!(Pipeline::new(stages).unwrap_err(), expected);
    };
    let ok: Run = |_| Ok(vec![]);
    check_new(
        vec![stage("weather", SectionClass::Turn, Placement::System, ok)],
        PipelineError::UnknownStage {
            id: "weather".into(),
        },
    );
    check_new(
        vec![Box::new(TestStage {
            id: "locale",
            toggle: Some("lokale"),
            class: SectionClass::Session,
            placement: Placement::RequestContext,
            run: ok,
        })],
        PipelineError::UnknownToggle {
            stage: "locale".into(),
            toggle: "lokale".into(),
        },
    );
    check_new(
        vec![Box::new(ReplacedBase), Box::new(ReplacedBase)],
        PipelineError::DuplicateStage { id: "base".into() },
    );

    // A `locale` stage running `run`, alone: the error assembling it.
    let locale_error = |run: Run| {
        assemble_with(
            vec![stage(
                "locale",
                SectionClass::Session,
                Placement::RequestContext,
                run,
            )],
            &BcodeConfig::default(),
            &templates(),
            &Inputs::new(),
        )
        .unwrap_err()
    };
    let foreign: Run = |_| Ok(vec![Section::new("locale_extra", "x".into())]);
    let err = locale_error(foreign);
    assert_eq!(
        err,
        AssembleError::ForeignSectionId {
            stage: "locale".into(),
            section: "locale_extra".into()
        }
    );

    let twice: Run = |_| {
        Ok(vec![
            Section::new("locale:a", "x".into()),
            Section::new("locale:a", "y".into()),
        ])
    };
    let err = locale_error(twice);
    assert_eq!(
        err,
        AssembleError::DuplicateSection {
            section: "locale:a".into()
        }
    );
}

#[test]
fn describe_lists_stages_in_canonical_order_with_their_settings() {
    let pipeline = Pipeline::new(stages()).unwrap();
    let ids: Vec<(String, bool)> = pipeline
        .describe(&config())
        .into_iter()
        .map(|info| (info.id, info.enabled))
        .collect();
    let expected = [
        ("base", true),
        ("current_datetime", true),
        ("execution_environment", true),
        ("locale", false),
        ("dynamic_repository_context", true),
        ("repository_context", true),
        ("skill_catalog", true),
        ("user_authority", true),
        ("active_skill", true),
    ];
    let expected: Vec<(String, bool)> = expected
        .iter()
        .map(|(id, on)| ((*id).to_owned(), *on))
        .collect();
    assert_eq!(ids, expected);
}

#[test]
fn a_pipeline_and_its_templates_can_be_shared_across_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Pipeline<Inputs>>();
    shareable::<Templates>();
}

#[test]
fn ranges_hold_wherever_the_largest_section_sits() {
    // The largest section's buffer becomes the joined text; whichever
    // section that is (first, middle, last), every range must still slice
    // out exactly that section, and the text must be the plain join.
    let long: &'static str = "0123456789".repeat(40).leak();
    for (base, git, skills) in [
        (long, "M a.rs", vec!["rust"]),
        ("BASE\n", long, vec!["rust"]),
        ("BASE\n", "M a.rs", vec!["rust", long]),
        ("BASE\n", "M a.rs", vec![]),
    ] {
        let mut config = config();
        config.system_prompt.text = base.to_owned();
        let prompt = assemble_with(
            stages(),
            &config,
            &templates(),
            &inputs("2025-01-02T03:04:05Z", git, skills.clone()),
        )
        .unwrap();
        let mut expected = vec![base.trim_end().to_owned(), "bcode".into(), "AUTH".into()];
        expected.push(format!("git: {git}"));
        expected.extend(skills.iter().map(|id| format!("<skill {id}>")));
        assert_eq!(prompt.system, expected.join("\n\n"));
        let system: Vec<_> = prompt
            .sections
            .iter()
            .filter(|s| s.placement == Placement::System)
            .collect();
        assert_eq!(system.len(), expected.len());
        for (report, text) in system.iter().zip(&expected) {
            assert_eq!(&prompt.system[report.range.clone()], text, "{}", report.id);
            assert_eq!(report.bytes, text.len());
            assert_eq!(report.chars, text.chars().count());
        }
    }
}
