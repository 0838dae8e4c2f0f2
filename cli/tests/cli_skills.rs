//! The `skills` and `config` commands as an operator runs them: the real
//! binary, a temporary repository and home, a cleared environment.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use std::path::Path;
use std::process::Output;

use common::{Sandbox, text, write, write_files};

/// A repository skill, a broken one, a user copy it shadows and a hidden one.
fn fixture() -> Sandbox {
    let sandbox = Sandbox::new();
    let (repo, home) = (&sandbox.repo, &sandbox.home);
    write_files(
        repo,
        &[
            (
                ".bcode/skills/alpha/SKILL.md",
                "---\nname: Alpha\ndescription: First skill\nversion: 1.0.0\nactivation:\n  keywords: [one, two]\n---\n# Alpha\nDo alpha things.\n",
            ),
            (
                ".bcode/skills/broken/SKILL.md",
                "---\ndescription: \"unclosed\n---\n",
            ),
        ],
    );
    write_files(
        home,
        &[
            (
                ".config/bcode/skills/alpha/SKILL.md",
                "---\ndescription: shadowed by the repo\n---\n",
            ),
            (
                ".config/bcode/skills/quiet/SKILL.md",
                "---\ndescription: Hidden from the model\ndisable-model-invocation: true\n---\nQuiet body\n",
            ),
        ],
    );
    sandbox
}

fn run(f: &Sandbox, args: &[&str]) -> Output {
    f.command()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn list_json_has_the_documented_shape() {
    let f = fixture();
    let out = run(&f, &["skills", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let skills = doc["skills"].as_array().unwrap();
    let ids: Vec<&str> = skills.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["alpha", "quiet"]);
    let alpha = &skills[0];
    assert_eq!(alpha["name"], "Alpha");
    assert_eq!(alpha["description"], "First skill");
    assert_eq!(alpha["version"], "1.0.0");
    assert_eq!(alpha["source"], "repo:.bcode/skills");
    assert_eq!(
        alpha["location"],
        f.repo
            .join(".bcode/skills/alpha/SKILL.md")
            .display()
            .to_string()
    );
    assert_eq!(alpha["model_visible"], true);
    assert_eq!(alpha["keywords"], serde_json::json!(["one", "two"]));
    assert_eq!(skills[1]["model_visible"], false);
    assert_eq!(skills[1]["source"], "user-config:skills");
    let codes: Vec<(&str, &str)> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["severity"].as_str().unwrap(), d["code"].as_str().unwrap()))
        .collect();
    // Sorted by path: the shadowed file under home/ comes before repo/.
    assert_eq!(
        codes,
        [("info", "shadowed"), ("error", "malformed_front_matter")]
    );
}

#[test]
fn doctor_strict_exits_1_on_errors_and_renders_an_excerpt() {
    let f = fixture();
    let out = run(&f, &["skills", "doctor", "--strict"]);
    assert_eq!(out.status.code(), Some(1));
    let broken = f.repo.join(".bcode/skills/broken/SKILL.md");
    assert_eq!(
        text(&out.stdout),
        format!(
            "info[shadowed]: skill `alpha` from user-config:skills is shadowed by the one from repo:.bcode/skills at `{}`
  --> {}
error[malformed_front_matter]: YAML front matter is invalid: unclosed quote; the skill is skipped
  --> {}:2:14
  |
2 | description: \"unclosed
  |              ^
  = hint: quote values that contain `: ` or start with a special character, and indent with spaces
",
            f.repo.join(".bcode/skills/alpha/SKILL.md").display(),
            f.home.join(".config/bcode/skills/alpha/SKILL.md").display(),
            broken.display(),
        )
    );
    assert_eq!(
        text(&out.stderr),
        "bcode-prompt: 2 skills; 1 error, 1 info\n"
    );
    assert_eq!(run(&f, &["skills", "doctor"]).status.code(), Some(0));
}

#[test]
fn unknown_ids_and_bad_config_exit_2_with_a_clear_message() {
    let f = fixture();
    let out = run(&f, &["skills", "show", "alpah"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "bcode-prompt: no skill with id `alpah`; did you mean `alpha`?; `bcode-prompt skills list` shows every skill\n"
    );
    let out = run(
        &f,
        &["--set", "skills.prompt.catalog=sumary", "skills", "catalog"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("bcode-prompt: --set skills.prompt.catalog=sumary: invalid value for `skills.prompt.catalog`: \"sumary\""), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
}

#[test]
fn catalog_hides_hidden_skills_and_respects_off() {
    let f = fixture();
    let out = run(&f, &["skills", "catalog"]);
    assert_eq!(out.status.code(), Some(0));
    let catalog = text(&out.stdout);
    assert!(
        catalog.contains("<id>alpha</id>") && !catalog.contains("quiet"),
        "{catalog}"
    );
    assert!(
        catalog.ends_with("</available_skills>"),
        "printed exactly as injected: {catalog:?}"
    );
    let toggled = run(
        &f,
        &[
            "--set",
            "system_prompt.sections.skill_catalog=false",
            "skills",
            "catalog",
        ],
    );
    assert_eq!(
        (toggled.status.code(), text(&toggled.stdout)),
        (Some(0), String::new())
    );
    let off = run(
        &f,
        &[
            "--set",
            "skills.prompt.catalog=\"off\"",
            "skills",
            "catalog",
        ],
    );
    assert_eq!(
        (off.status.code(), text(&off.stdout)),
        (Some(0), String::new())
    );
    // Hidden skills can still be invoked explicitly.
    let out = run(&f, &["skills", "context", "quiet", "some", "args"]);
    assert_eq!(out.status.code(), Some(0));
    let quiet = f.home.join(".config/bcode/skills");
    assert_eq!(
        text(&out.stdout),
        format!(
            "<skill id=\"quiet\" name=\"quiet\" location=\"{root}/quiet/SKILL.md\">\nReferences are relative to {root}/quiet.\nSource label: user-config:skills\nSkill resource root: {root}\nInvocation arguments: some args\n\nQuiet body\n</skill>\n",
            root = quiet.display()
        )
    );
}

#[test]
fn config_explain_names_the_origin_of_each_value() {
    let f = fixture();
    write(
        &f.repo.join(".bcode/bcode.toml"),
        "[skills.prompt]\ninclude_keywords = true\n",
    );
    let out = run(
        &f,
        &[
            "--set",
            "skills.prompt.max_bytes=9000",
            "config",
            "explain",
            "skills.prompt",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "skills.prompt.catalog = \"summary\"  # default
skills.prompt.context_window_tokens = 200000  # default
skills.prompt.include_keywords = true  # repo file {}:2
skills.prompt.include_sources = true  # default
skills.prompt.max_bytes = 9000  # --set skills.prompt.max_bytes=9000
skills.prompt.max_description_chars = (unset)  # default
skills.prompt.warn_percent = 25  # default
",
            f.repo.join(".bcode/bcode.toml").display()
        )
    );
}

#[test]
fn every_source_in_precedence_order() {
    let sandbox = Sandbox::new();
    let (repo, state) = (&sandbox.repo, &sandbox.state);
    let xdg = sandbox.base.join("xdg-config");
    let skill = |dir: &Path, id: &str| {
        write(
            &dir.join(id).join("SKILL.md"),
            &format!("---\ndescription: {id} skill\n---\n"),
        )
    };
    let roots = [
        ("repo:.bcode/skills", repo.join(".bcode/skills")),
        ("repo:skills", repo.join("skills")),
        ("repo-compat:.claude/skills", repo.join(".claude/skills")),
        ("user-config:skills", xdg.join("bcode/skills")),
        ("user-state:skills", state.join("skills")),
        ("config:../team-skills", repo.join("team-skills")),
    ];
    for (n, (_, dir)) in roots.iter().enumerate() {
        skill(dir, &format!("only-{n}"));
        skill(dir, "shared");
    }
    // Relative to the file that set it: <repo>/.bcode/../team-skills.
    write(
        &repo.join(".bcode/bcode.toml"),
        "[skills.sources]\npaths = [\"../team-skills\"]\n",
    );
    let out = sandbox
        .command()
        .env("XDG_CONFIG_HOME", &xdg)
        .args(["skills", "list", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let got: Vec<(String, String)> = doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_owned(),
                s["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let mut expected: Vec<(String, String)> = roots
        .iter()
        .enumerate()
        .map(|(n, (label, _))| (format!("only-{n}"), (*label).to_owned()))
        .collect();
    expected.push(("shared".into(), "repo:.bcode/skills".into()));
    assert_eq!(got, expected);
    // Every lower copy of `shared` is reported as shadowed by the highest one.
    let shadowed: Vec<String> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "shadowed")
        .map(|d| {
            d["message"]
                .as_str()
                .unwrap()
                .split(" is shadowed")
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    let mut expected_shadowed: Vec<String> = roots[1..]
        .iter()
        .map(|(label, _)| format!("skill `shared` from {label}"))
        .collect();
    expected_shadowed.sort();
    let mut shadowed_sorted = shadowed.clone();
    shadowed_sorted.sort();
    assert_eq!(shadowed_sorted, expected_shadowed);
    // Switching sources off removes them.
    let out = sandbox
        .command()
        .env("XDG_CONFIG_HOME", &xdg)
        .args([
            "--set",
            "skills.include_user_skills=false",
            "--set",
            "skills.include_compat_claude_skills=false",
            "skills",
            "list",
            "--json",
        ])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let labels: std::collections::BTreeSet<String> = doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["source"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        labels,
        ["config:../team-skills", "repo:.bcode/skills", "repo:skills"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    );
}
