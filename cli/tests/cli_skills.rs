//! The `skills` and `config` commands as an operator runs them: the real
//! binary, a temporary repository and home, a cleared environment.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::path::Path;
use std::process::Output;

use common::{Sandbox, lossy, text, write, write_files};

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
            "<skill id=\"quiet\" name=\"quiet\" location=\"{root}/quiet/SKILL.md\">\nReferences are relative to {root}/quiet.\nSource label: user-config:skills\nInvocation arguments: some args\n\nQuiet body\n</skill>\n",
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

/// A tree that sets every field the `--json` shapes print: a skill with
/// every manifest field (nested metadata, unknown fields of every JSON
/// type, control and non-ASCII characters), a hidden one, a minimal one,
/// two folders whose names are not UTF-8 (skipped, and reported with the
/// exact bytes of their paths), and diagnostics of each severity with and
/// without a line. A skill whose own path is not UTF-8 cannot be discovered;
/// `skills_cmd`'s unit tests cover that shape.
fn rich_fixture() -> Sandbox {
    let sandbox = Sandbox::new();
    let (repo, home) = (&sandbox.repo, &sandbox.home);
    let skills = repo.join(".bcode/skills");
    write(
        &skills.join("full/SKILL.md"),
        concat!(
            "---\n",
            "id: full\n",
            "name: \"Full \\\"featured\\\" skill\"\n",
            "description: \"Tab\\tnewline\\nbell\\a unit\\x1f del\\x7f e\\u0301 \u{e9} \u{4e2d}\u{6587} \u{1f600} sep\\u2028 back\\\\slash </b>&amp;\"\n",
            "version: 2.1.0\n",
            "activation:\n  keywords: [alpha, \"b\u{e9}ta\", gamma]\n",
            "keywords: [delta]\n",
            "permissions:\n  tools: [filesystem.read, shell.run]\n",
            "allowed-tools: Bash(git:*) Read\n",
            "thinking_effort: high\n",
            "model: some-model\n",
            "license: Apache-2.0\n",
            "compatibility: \"Requires git >= 2.40\"\n",
            "metadata:\n",
            "  owner: team-a\n",
            "  priority: 3\n",
            "  ratio: 0.25\n",
            "  big: 18446744073709551615\n",
            "  neg: -7\n",
            "  exp: 1.5e300\n",
            "  flags: [true, false, null]\n",
            "  nested:\n    z: 1\n    a: \"x\\ty\"\n",
            "  empty_map: {}\n",
            "  empty_list: []\n",
            "x-custom: value\n",
            "zeta: 1.5\n",
            "alpha-extra:\n  b: [1, \"two\"]\n  a: null\n",
            "descripton: typo\n",
            "---\n",
            "Body.\n",
        ),
    );
    write_files(
        &skills,
        &[
            (
                "hidden/SKILL.md",
                "---\ndescription: Hidden\ndisable-model-invocation: true\n---\n",
            ),
            ("minimal/SKILL.md", "---\ndescription: m\n---\n"),
            (
                "badfield/SKILL.md",
                "---\ndescription: wrong types\nversion: [1, 2]\nthinking_effort: huge\n---\n",
            ),
            ("broken/SKILL.md", "---\ndescription: \"unclosed\n---\n"),
            (
                "Not_An_Id/SKILL.md",
                "---\ndescription: bad folder name\n---\n",
            ),
            ("notes/README.md", "# Just notes\n"),
            (
                "disabled-one/SKILL.md",
                "---\ndescription: turned off\n---\n",
            ),
        ],
    );
    #[cfg(unix)]
    {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        write(
            &skills.join(OsStr::from_bytes(b"caf\xe9")).join("SKILL.md"),
            "---\ndescription: Latin-1 folder\n---\n",
        );
        write(
            &skills.join(OsStr::from_bytes(b"bad\xff")).join("SKILL.md"),
            "---\ndescription: not UTF-8\n---\n",
        );
    }
    write(
        &home.join(".config/bcode/skills/full/SKILL.md"),
        "---\ndescription: shadowed by the repo\n---\n",
    );
    sandbox
}

/// `text` with the sandbox's folder written `[ROOT]`, in strings and in the
/// byte arrays (`*_bytes`) that stand beside a path that is not UTF-8: there
/// the folder's bytes become one `[ROOT]` line.
fn redact(text: &str, root: &Path) -> String {
    let root_bytes = root.as_os_str().as_encoded_bytes();
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        if !line.ends_with("_bytes\": [") {
            continue;
        }
        let mut items = Vec::new();
        while let Some(item) = lines.next_if(|l| !l.trim_start().starts_with(']')) {
            items.push(item);
        }
        let values: Vec<u8> = items
            .iter()
            .map(|l| l.trim().trim_end_matches(',').parse().unwrap())
            .collect();
        let skip = if values.starts_with(root_bytes) {
            let indent = &items[0][..items[0].len() - items[0].trim_start().len()];
            out.push_str(&format!("{indent}[ROOT],\n"));
            root_bytes.len()
        } else {
            0
        };
        for item in &items[skip..] {
            out.push_str(item);
            out.push('\n');
        }
    }
    out.replace(&root.display().to_string(), "[ROOT]")
}

/// Compares `actual` with the file `cli/tests/skills_json/<name>`; with
/// `UPDATE_EXPECT=1` in the environment, rewrites the file instead.
fn check_expected(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/skills_json")
        .join(name);
    if std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("{}: {err}; run with UPDATE_EXPECT=1", path.display()));
    assert_eq!(
        actual, expected,
        "{name} differs; UPDATE_EXPECT=1 rewrites it"
    );
}

/// The exact bytes of `skills list|show|doctor --json` on a tree that sets
/// every field: the JSON shapes are a published format, so any change to
/// keys, order, escaping or layout shows here.
#[test]
fn json_output_is_byte_for_byte_the_expected_documents() {
    let f = rich_fixture();
    let missing = format!(
        "skills.sources.paths=[{:?}]",
        f.base.join("missing-root").display().to_string()
    );
    let flags = [
        "--set",
        missing.as_str(),
        "--set",
        "skills.disabled.ids=[\"disabled-one\"]",
    ];
    for (name, args) in [
        ("list.json", &["skills", "list", "--json"][..]),
        ("show.json", &["skills", "show", "full", "--json"][..]),
        ("doctor.json", &["skills", "doctor", "--json"][..]),
    ] {
        let out = run(&f, &[&flags[..], args].concat());
        assert_eq!(out.status.code(), Some(0), "{name}: {}", lossy(&out.stderr));
        check_expected(name, &redact(&text(&out.stdout), &f.base));
    }
}

#[test]
fn list_ends_with_a_diagnostics_summary_problems_or_not() {
    let clean = Sandbox::new();
    write(
        &clean.repo.join(".bcode/skills/alpha/SKILL.md"),
        "---\ndescription: First skill\n---\n",
    );
    let out = run(&clean, &["skills", "list"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout), text(&out.stderr)),
        (
            Some(0),
            "alpha  [repo:.bcode/skills]\n    First skill\n".to_owned(),
            "bcode-prompt: 1 skill; no problems in skill files\n".to_owned()
        )
    );

    let out = run(&fixture(), &["skills", "list"]);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(0),
            "bcode-prompt: 2 skills; 1 error in skill files; \
             run `bcode-prompt skills doctor` for details\n"
                .to_owned()
        )
    );
}

#[test]
fn a_missing_description_points_at_the_front_matter() {
    let f = Sandbox::new();
    write(
        &f.repo.join(".bcode/skills/later/SKILL.md"),
        "---\nname: later\nversion: 1.0.0\n---\nBody\n",
    );
    let out = run(&f, &["skills", "doctor", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<(String, String, serde_json::Value, serde_json::Value)> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let path = d["path"].as_str().unwrap();
            (
                d["code"].as_str().unwrap().to_owned(),
                path.rsplit('/').nth(1).unwrap().to_owned(),
                d["line"].clone(),
                d["column"].clone(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [(
            "missing_description".to_owned(),
            "later".to_owned(),
            serde_json::json!(1),
            serde_json::json!(1)
        )],
        "{doc:#}"
    );
}
