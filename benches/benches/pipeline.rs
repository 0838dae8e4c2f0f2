//! Pipeline benchmarks: layered config loading (user file, repo file,
//! environment variables and `--set`), and assembling a prompt from the base
//! stage plus a few trivial stages, so the number is the pipeline's own
//! overhead (ordering, placement, accounting), not any probe's.

// A benchmark may stop loudly when its fixture cannot be built.
#![allow(clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::fs;
use std::hint::black_box;
use std::time::Duration;

use bcode_prompt_config::{BcodeConfig, ConfigInputs, load};
use bcode_prompt_pipeline::Pipeline;
use bcode_prompt_pipeline::Position;
use bcode_prompt_pipeline::{
    Placement, Section, SectionClass, SectionKind, Stage, StageContext, StageError, StageSpec,
};
use bcode_prompt_sections::BaseStage;
use bcode_templates::Templates;
use criterion::{Criterion, criterion_group, criterion_main};

/// Inputs a probe would have gathered.
struct Inputs {
    clock: String,
    skills: Vec<String>,
}

type Run = fn(&StageContext<'_, Inputs>) -> Result<Vec<Section>, StageError>;

/// A stage whose behaviour is a plain function.
struct Trivial {
    id: &'static str,
    toggle: Option<&'static str>,
    class: SectionClass,
    placement: Placement,
    run: Run,
}

impl Stage<Inputs> for Trivial {
    fn spec(&self) -> StageSpec {
        let kind = SectionKind::from_name(self.id).expect("a canonical id");
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

fn trivial(
    id: &'static str,
    class: SectionClass,
    placement: Placement,
    run: Run,
) -> Box<dyn Stage<Inputs>> {
    Box::new(Trivial {
        id,
        toggle: Some(id),
        class,
        placement,
        run,
    })
}

/// Registered out of canonical order on purpose: the pipeline sorts them.
fn stages() -> Vec<Box<dyn Stage<Inputs>>> {
    use Placement::*;
    use SectionClass::*;
    vec![
        Box::new(Trivial {
            id: "active_skill",
            toggle: None,
            class: Turn,
            placement: System,
            run: |cx| {
                Ok(cx
                    .inputs
                    .skills
                    .iter()
                    .map(|id| {
                        Section::new(&format!("active_skill:{id}"), format!("<skill {id}>\n"))
                    })
                    .collect())
            },
        }),
        trivial("user_authority", Static, System, |_| {
            Ok(vec![Section::new(
                "user_authority",
                "The user decides.\n".into(),
            )])
        }),
        trivial("current_datetime", Turn, RequestContext, |cx| {
            Ok(vec![Section::new(
                "current_datetime",
                format!("now: {}", cx.inputs.clock),
            )])
        }),
        trivial("locale", Session, RequestContext, |_| {
            Ok(vec![Section::new("locale", "locale: C.UTF-8".into())])
        }),
        trivial("skill_catalog", Session, System, |_| Ok(vec![])),
        trivial("repository_context", Session, System, |_| {
            Ok(vec![
                Section::new(
                    "repository_context:BCODE.md",
                    "Build with cargo.\n".repeat(40),
                )
                .with_source("/repo/BCODE.md"),
            ])
        }),
        Box::new(BaseStage),
    ]
}

fn config_load(c: &mut Criterion) {
    let root = tempfile::tempdir().expect("temp dir");
    let write = |relative: &str, text: &str| {
        let path = root.path().join(relative);
        fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    };
    write(
        "home/.config/bcode/bcode.toml",
        "[skills]\nmax_skill_file_bytes = 100000\n[skills.prompt]\ncatalog = \"summary\"\n\
         [skills.disabled]\nids = [\"a\", \"b\"]\n",
    );
    write(
        "repo/.bcode/bcode.toml",
        "[skills]\nmax_skill_file_bytes = 200000\n[skills.sources]\npaths = [\"shared\"]\n\
         [system_prompt.sections]\ncurrent_datetime = false\n[invariants]\nmode = \"relevant\"\n",
    );
    fs::create_dir_all(root.path().join("cwd")).expect("mkdir");
    let env = BTreeMap::from([
        (
            "HOME".to_owned(),
            root.path().join("home").display().to_string(),
        ),
        (
            "BCODE_SYSTEM_PROMPT__SECTIONS__USER_AUTHORITY".to_owned(),
            "false".to_owned(),
        ),
        (
            "BCODE_SKILLS__PROMPT__CATALOG".to_owned(),
            "names_only".to_owned(),
        ),
        ("BCODE_STATE_DIR".to_owned(), "/state".to_owned()),
        ("PATH".to_owned(), "/usr/bin:/bin".to_owned()),
    ]);
    let inputs = ConfigInputs {
        repo: root.path().join("repo"),
        cwd: root.path().join("cwd"),
        env,
        config_files: Vec::new(),
        set: vec![
            "skills.prompt.max_bytes=512".to_owned(),
            "skills.disabled.ids=[\"c\"]".to_owned(),
        ],
        host_sections: Vec::new(),
        trust_repo: false,
    };
    let loaded = load(&inputs).expect("the fixture config loads");
    eprintln!(
        "config fixture: {} explained values, {} warnings",
        loaded.explain().len(),
        loaded.warnings.len()
    );
    c.bench_function("config/load_layered", |b| {
        b.iter(|| black_box(load(black_box(&inputs))));
    });
}

fn assembly(c: &mut Criterion) {
    let templates = Templates::builtin();
    let config = BcodeConfig::default();
    let inputs = Inputs {
        clock: "2025-01-02T03:04:05Z".to_owned(),
        skills: vec!["rust".to_owned(), "go".to_owned()],
    };
    let pipeline = Pipeline::new(stages()).expect("a valid stage set");
    let cx = StageContext::new(&config, &templates, &inputs);
    let prompt = pipeline.assemble(&cx, false).expect("assembles");
    eprintln!(
        "assembly fixture: {} sections, system prompt {} bytes",
        prompt.sections.len(),
        prompt.system.len()
    );
    c.bench_function("pipeline/assemble_trivial_stages", |b| {
        b.iter(|| black_box(pipeline.assemble(black_box(&cx), false)));
    });
    c.bench_function("pipeline/new_and_assemble", |b| {
        b.iter(|| {
            let pipeline = Pipeline::new(stages()).expect("a valid stage set");
            black_box(pipeline.assemble(black_box(&cx), false))
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    targets = config_load, assembly
}
criterion_main!(benches);
