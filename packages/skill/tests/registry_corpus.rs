//! Issue 14's target, held on a generated registry: a flat root of skill
//! folders with the shapes and proportions measured on a public registry
//! of about 61,000 `SKILL.md` files (ordinary skills, text after a
//! block-scalar header, values starting with an indicator, unquoted `: `,
//! folder names that are not ids, and a small share of genuinely broken
//! files). At least 99% must become skills, each recovered one with a
//! warning, and every skipped one must have an error: none silently dropped.
//!
//! The generator is deterministic. The corpus is written to a temporary
//! directory and never committed; `write_registry_corpus` (ignored) writes
//! a larger one for benchmarks or the YAML differential test
//! (`BCODE_DIFF_CORPUS`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;

use bcode_skill_models::{DiagnosticCode, Severity, SourceKind};

use bcode_prompt_config::SkillsConfig;

/// What a generated file should become.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Expect {
    /// A skill, with no warning or error.
    Valid { id: String, description: String },
    /// A skill, with a warning of this code.
    Recovered {
        id: String,
        description: String,
        code: DiagnosticCode,
    },
    /// No skill, and an error.
    Broken,
}

/// One generated `<folder>/SKILL.md`.
struct Generated {
    shape: &'static str,
    folder: String,
    text: String,
    expect: Expect,
}

/// The shapes and their share of 10,000 files. Roughly the measured
/// registry: 81% valid as written, 14.5% YAML failures whose intent is
/// clear (96% of them text after a block-scalar header), 3.5% folder names
/// that are not ids, and 0.6% broken beyond recovery.
const SHAPES: &[(&str, u32)] = &[
    // Valid as written: 8,140.
    ("plain", 3000),
    ("double_quoted", 1000),
    ("single_quoted", 250),
    ("block_literal", 1200),
    ("block_folded", 1200),
    ("rich", 800),
    ("crlf", 400),
    ("explicit_id", 290),
    // Recovered front matter: 1,450.
    ("literal_text_on_header", 406),
    ("folded_strip_text_on_header", 450),
    ("folded_text_on_header", 250),
    ("literal_strip_text_on_header", 150),
    ("text_on_header_crlf", 50),
    ("indicator_bracket", 12),
    ("indicator_bold", 12),
    ("indicator_dash", 12),
    ("indicator_brace", 12),
    ("indicator_at", 12),
    ("indicator_backtick", 12),
    ("indicator_image", 12),
    ("unquoted_colon", 60),
    // Id from `name`: 350.
    ("long_folder", 250),
    ("upper_case_folder", 60),
    ("dotted_folder", 40),
    // Broken beyond recovery: 60.
    ("unterminated", 10),
    ("no_front_matter", 10),
    ("missing_description", 10),
    ("tab_indented", 8),
    ("unclosed_quote", 8),
    ("description_list", 6),
    ("long_folder_title_name", 5),
    ("comment_or_text", 3),
];

const WORDS: &[&str] = &[
    "review",
    "commit",
    "schema",
    "deploy",
    "release",
    "diagram",
    "invoice",
    "parser",
    "cluster",
    "notebook",
    "terraform",
    "query",
    "fixture",
    "browser",
    "render",
    "archive",
    "pipeline",
    "migration",
    "tensor",
    "widget",
    "journal",
    "sprint",
    "ledger",
    "bundle",
    "lint",
];

/// A small deterministic generator (xorshift64), so the corpus needs no
/// dependency and is the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn word(&mut self) -> &'static str {
        WORDS[(self.next() % WORDS.len() as u64) as usize]
    }

    /// `count` words joined with `-`.
    fn words(&mut self, count: usize) -> String {
        (0..count)
            .map(|_| self.word())
            .collect::<Vec<_>>()
            .join("-")
    }

    /// A sentence of plain prose: letters, spaces, commas and a period.
    fn sentence(&mut self) -> String {
        let len = 5 + (self.next() % 10) as usize;
        let mut words: Vec<&str> = (0..len).map(|_| self.word()).collect();
        words[0] = "Use";
        words[1] = "when";
        let mut s = words.join(" ");
        if self.next().is_multiple_of(3) {
            s.push_str(", and ");
            s.push_str(self.word());
        }
        s.push('.');
        s
    }
}

/// The shape of file `index` of `count`: every shape at its share, spread
/// through the corpus (7,919 is coprime to 10,000, so 10,000 files hold
/// each shape exactly at its weight, and a prefix nearly so).
fn shape_of(index: usize) -> &'static str {
    let slot = (index as u64 * 7919 % 10_000) as u32;
    let mut end = 0;
    for (shape, weight) in SHAPES {
        end += weight;
        if slot < end {
            return shape;
        }
    }
    "plain"
}

fn generate(count: usize) -> Vec<Generated> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..count).map(|i| generate_one(&mut rng, i)).collect()
}

fn generate_one(rng: &mut Rng, i: usize) -> Generated {
    let shape = shape_of(i);
    let id = format!("{}-{}-{i:05}", rng.word(), rng.word());
    let s1 = rng.sentence();
    let s2 = rng.sentence();
    let body = format!("\n# {}\n\n{}\n", rng.word(), rng.sentence());
    let doc = |fields: &str| format!("---\n{fields}---\n{body}");
    // The most common front matter: this id as the name, and a description.
    let named = |description: &str| doc(&format!("name: {id}\ndescription: {description}\n"));
    let valid = |description: String| Expect::Valid {
        id: id.clone(),
        description,
    };
    let recovered = |description: String| Expect::Recovered {
        id: id.clone(),
        description,
        code: DiagnosticCode::RecoveredFrontMatter,
    };
    let from_name = |description: String| Expect::Recovered {
        id: id.clone(),
        description,
        code: DiagnosticCode::IdFromName,
    };
    let mut folder = id.clone();
    let (text, expect) = match shape {
        "plain" => (named(&s1), valid(s1.clone())),
        "double_quoted" => {
            let d = format!("Use when: {s1}");
            (
                doc(&format!("name: {id}\ndescription: \"{d}\"\n")),
                valid(d),
            )
        }
        "single_quoted" => {
            let d = format!("It's for {s1}");
            (
                doc(&format!(
                    "name: {id}\ndescription: '{}'\n",
                    d.replace('\'', "''")
                )),
                valid(d),
            )
        }
        "block_literal" => (
            doc(&format!("name: {id}\ndescription: |\n  {s1}\n  {s2}\n")),
            valid(format!("{s1}\n{s2}")),
        ),
        "block_folded" => (
            doc(&format!("name: {id}\ndescription: >-\n  {s1}\n  {s2}\n")),
            valid(format!("{s1} {s2}")),
        ),
        "rich" => (
            doc(&format!(
                "name: {id}\ndescription: {s1}\nlicense: MIT\nallowed-tools: Read Grep\nmetadata:\n  author: someone\n  version: \"1.0\"\nkeywords: [{}, {}]\n",
                rng.word(),
                rng.word()
            )),
            valid(s1.clone()),
        ),
        "crlf" => (named(&s1).replace('\n', "\r\n"), valid(s1.clone())),
        "explicit_id" => {
            folder = format!("{}-{i:05}", rng.word());
            (
                doc(&format!("id: {id}\nname: A Title\ndescription: {s1}\n")),
                valid(s1.clone()),
            )
        }
        "literal_text_on_header" => (
            doc(&format!("name: {id}\ndescription: | {s1}\n  {s2}\n")),
            recovered(format!("{s1}\n{s2}")),
        ),
        "folded_strip_text_on_header" => (
            doc(&format!("name: {id}\ndescription: >- {s1}\n  {s2}\n")),
            recovered(format!("{s1} {s2}")),
        ),
        "folded_text_on_header" => (
            doc(&format!("name: {id}\ndescription: > {s1}\n")),
            recovered(s1.clone()),
        ),
        "literal_strip_text_on_header" => (
            doc(&format!("description: |- {s1}\nname: {id}\n")),
            recovered(s1.clone()),
        ),
        "text_on_header_crlf" => (
            doc(&format!("name: {id}\ndescription: >- {s1}\n  {s2}\n")).replace('\n', "\r\n"),
            recovered(format!("{s1} {s2}")),
        ),
        "indicator_bracket" | "indicator_bold" | "indicator_dash" | "indicator_brace"
        | "indicator_at" | "indicator_backtick" | "indicator_image" => {
            let d = match shape {
                "indicator_bracket" => format!("[AUTO-INVOKE] MUST be invoked. {s1}"),
                "indicator_bold" => format!("**This applies to {}.** {s1}", rng.word()),
                "indicator_dash" => format!("- Define a {}. {s1}", rng.word()),
                "indicator_brace" => format!("{{program.description}} {s1}"),
                "indicator_at" => format!("@react-three/drei helper. {s1}"),
                "indicator_backtick" => format!("`{}` is a helper. {s1}", rng.word()),
                _ => format!("![](docs/{}.png) {s1}", rng.word()),
            };
            (named(&d), recovered(d))
        }
        "unquoted_colon" => {
            let d = format!("Use when: {s1}");
            (named(&d), recovered(d))
        }
        "long_folder" => {
            folder = format!("{}-copied-from-the-repository-title-{i:05}", rng.words(7));
            (named(&s1), from_name(s1.clone()))
        }
        "upper_case_folder" => {
            folder = format!("{}_Tools_{i:05}", rng.word().to_uppercase());
            (named(&s1), from_name(s1.clone()))
        }
        "dotted_folder" => {
            folder = format!("{}.v2.{i:05}", rng.word());
            (named(&s1), from_name(s1.clone()))
        }
        "unterminated" => (
            format!("---\nname: {id}\ndescription: {s1}\n{body}"),
            Expect::Broken,
        ),
        "no_front_matter" => (format!("# {id}\n\n{s1}\n"), Expect::Broken),
        "missing_description" => (doc(&format!("name: {id}\n")), Expect::Broken),
        "tab_indented" => (
            doc(&format!(
                "name: {id}\ndescription: {s1}\nmetadata:\n\tauthor: someone\n"
            )),
            Expect::Broken,
        ),
        "unclosed_quote" => (
            doc(&format!("name: {id}\ndescription: \"{s1}\n")),
            Expect::Broken,
        ),
        "description_list" => (
            doc(&format!(
                "name: {id}\ndescription: [{}, {}]\n",
                rng.word(),
                rng.word()
            )),
            Expect::Broken,
        ),
        "long_folder_title_name" => {
            folder = format!("{}-copied-from-the-repository-title-{i:05}", rng.words(6));
            (
                doc(&format!("name: A Title, Not An Id\ndescription: {s1}\n")),
                Expect::Broken,
            )
        }
        "comment_or_text" => (
            doc(&format!(
                "name: {id}\ndescription: [x] {s1} #tag # or a comment\n"
            )),
            Expect::Broken,
        ),
        other => panic!("no generator for shape {other}"),
    };
    Generated {
        shape,
        folder,
        text,
        expect,
    }
}

fn write_corpus(root: &Path, corpus: &[Generated]) {
    for g in corpus {
        let dir = root.join(&g.folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), &g.text).unwrap();
    }
}

#[test]
fn generated_registry_becomes_skills() {
    const COUNT: usize = 3000;
    let corpus = generate(COUNT);
    let dir = tempfile::tempdir().unwrap();
    let root = support::canonical(dir.path());
    write_corpus(&root, &corpus);
    let registry = support::build(
        &[support::root(SourceKind::RepoBcode, "registry", &root)],
        &SkillsConfig::default(),
    );

    let skills: BTreeMap<_, _> = registry.skills().map(|s| (s.location.clone(), s)).collect();
    let mut diagnostics: BTreeMap<_, Vec<_>> = BTreeMap::new();
    for d in registry.diagnostics() {
        diagnostics.entry(d.path.clone()).or_default().push(d);
    }
    let mut problems = Vec::new();
    let mut per_shape: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for g in &corpus {
        let location = root.join(&g.folder).join("SKILL.md");
        let skill = skills.get(location.as_path());
        let found = diagnostics
            .get(&Some(std::sync::Arc::from(location.as_path())))
            .cloned()
            .unwrap_or_default();
        let has = |severity| found.iter().any(|d| d.severity == severity);
        let entry = per_shape.entry(g.shape).or_default();
        entry.0 += 1;
        entry.1 += usize::from(skill.is_some());
        let read = skill.map(|s| (s.manifest.id.to_string(), s.manifest.description.clone()));
        let ok = match &g.expect {
            Expect::Valid { id, description } => {
                read == Some((id.clone(), description.clone()))
                    && !has(Severity::Error)
                    && !has(Severity::Warning)
            }
            Expect::Recovered {
                id,
                description,
                code,
            } => {
                read == Some((id.clone(), description.clone()))
                    && !has(Severity::Error)
                    && found
                        .iter()
                        .any(|d| d.severity == Severity::Warning && d.code == *code)
            }
            Expect::Broken => skill.is_none() && has(Severity::Error),
        };
        if !ok {
            problems.push(format!(
                "{} ({}): expected {:?}, read {read:?}, diagnostics {found:#?}",
                g.folder, g.shape, g.expect
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let share = skills.len() as f64 / COUNT as f64;
    eprintln!(
        "{} of {COUNT} files became skills ({:.2}%); per shape (files, skills): {per_shape:?}",
        skills.len(),
        share * 100.0
    );
    assert!(share >= 0.99, "only {:.2}% became skills", share * 100.0);
    // Every shape is present, so each is checked above.
    assert_eq!(per_shape.len(), SHAPES.len(), "{per_shape:?}");
}

/// The shapes hold their weights exactly over 10,000 files.
#[test]
fn shapes_hold_their_shares() {
    assert_eq!(SHAPES.iter().map(|(_, w)| w).sum::<u32>(), 10_000);
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for i in 0..10_000 {
        *counts.entry(shape_of(i)).or_default() += 1;
    }
    let expected: BTreeMap<&str, u32> = SHAPES.iter().copied().collect();
    assert_eq!(counts, expected);
}

/// Writes a corpus for benchmarks or the differential test:
/// `BCODE_REGISTRY_CORPUS_OUT=<dir> [BCODE_REGISTRY_CORPUS_COUNT=61000]
/// cargo test -p bcode-skill --test skill registry_corpus -- --ignored`.
#[test]
#[ignore = "writes a corpus where asked; a tool, not a check"]
fn write_registry_corpus() {
    let Ok(out) = std::env::var("BCODE_REGISTRY_CORPUS_OUT") else {
        eprintln!("set BCODE_REGISTRY_CORPUS_OUT to a directory");
        return;
    };
    let count = std::env::var("BCODE_REGISTRY_CORPUS_COUNT")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(61_000);
    write_corpus(Path::new(&out), &generate(count));
}
