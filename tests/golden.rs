//! Golden-file tests of whole prompt assembly: every `cases/*/case.toml` is
//! rendered through a `bcode_prompt::PromptSession` with a fixed clock, zone
//! and environment, and the result (system text, divider, request context,
//! section table, warnings, or the error) is one insta snapshot. See
//! `cases/README.md` for the case format and how to update snapshots.

// Test helpers may fail loudly; clippy.toml only covers `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use bcode_prompt::report::{AssembledPrompt, OmitReason, Placement};
use bcode_prompt::testing::{Golden, fake_facts};
use bcode_tests::copy_tree;
use serde::Deserialize;

/// The line between the system text and the request context.
const DIVIDER: &str = "=============== request context (not cached) ===============";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// RFC 3339 clock reading.
    now: String,
    /// IANA zone given as `--timezone`.
    timezone: Option<String>,
    #[serde(default)]
    git: Git,
    /// Environment variables; `[ROOT]` is replaced by the temp root. `HOME`
    /// defaults to `[ROOT]/home` so the real home is never read.
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    set: Vec<String>,
    #[serde(default)]
    skills: Vec<String>,
    prompt: Option<String>,
    /// Print the built-in base text in full instead of a one-line
    /// placeholder (the base text has its own tests).
    #[serde(default)]
    show_base: bool,
    /// A shared tree under `fixtures/<name>/` (`repo/`, `home/`) copied
    /// before the case's own `repo/` and `home/`.
    fixture: Option<String>,
    /// Extra renders of the same tree, each adding its own flags; each is
    /// shown as its section table only.
    #[serde(default)]
    variants: Vec<Variant>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Git {
    /// `none` (no repository), `unborn` (init, no commit), `commit`.
    #[serde(default)]
    mode: GitMode,
    /// Files to append a line to after the commit.
    #[serde(default)]
    modify: Vec<String>,
    /// How many untracked files to create after the commit.
    #[serde(default)]
    untracked: usize,
}

#[derive(Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum GitMode {
    #[default]
    None,
    Unborn,
    Commit,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Variant {
    name: String,
    /// Another clock reading for this variant.
    now: Option<String>,
    #[serde(default)]
    set: Vec<String>,
    skills: Option<Vec<String>>,
}

#[test]
fn golden_cases() {
    insta::glob!("cases/*/case.toml", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        let case: Case = toml::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let snapshot = run_case(path.parent().unwrap(), &case);
        insta::assert_snapshot!(snapshot);
    });
}

/// The standard fixture rendered hermetically with every fact pinned, the
/// way a team's golden test does it: the same bytes from two checkout
/// paths, whatever environment and home each render is given.
#[test]
fn hermetic_fixture_is_path_independent() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/standard");
    let render = |layout: &str, env: &[(&str, &str)]| {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().canonicalize().unwrap();
        let repo = root.join(layout);
        copy_tree(&fixture.join("repo"), &repo).unwrap();
        // A home with user skills, which a hermetic render never reads.
        copy_tree(&fixture.join("home"), &root.join("home")).unwrap();
        let mut vars: BTreeMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        vars.insert("HOME".into(), root.join("home").display().to_string());
        let text = Golden::new(&repo)
            .facts(fake_facts())
            .env(vars)
            .skill("rust-debugging")
            .render_text()
            .unwrap();
        assert!(!text.contains(&root.display().to_string()), "{text}");
        text
    };
    let a = render("repo", &[("LANG", "en_US.UTF-8"), ("TZ", "UTC")]);
    let b = render(
        "some/deeper/checkout",
        &[
            ("LANG", "de_DE.UTF-8"),
            ("TZ", "Asia/Tokyo"),
            ("CI", "true"),
            ("SHELL", "/bin/zsh"),
        ],
    );
    assert_eq!(a, b);
    insta::assert_snapshot!(a);
}

fn run_case(dir: &Path, case: &Case) -> String {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    let repo = root.join("repo");
    if let Some(fixture) = &case.fixture {
        let shared = dir.join("../../fixtures").join(fixture);
        copy_tree(&shared.join("repo"), &repo).unwrap();
        copy_tree(&shared.join("home"), &root.join("home")).unwrap();
    }
    copy_tree(&dir.join("repo"), &repo).unwrap();
    std::fs::create_dir_all(&repo).unwrap();
    copy_tree(&dir.join("home"), &root.join("home")).unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    make_git(&repo, &case.git);

    let root_text = root.display().to_string();
    let mut env: BTreeMap<String, String> = case
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.replace("[ROOT]", &root_text)))
        .collect();
    env.entry("HOME".into())
        .or_insert_with(|| format!("{root_text}/home"));

    let request = Request {
        repo: repo.clone(),
        cwd: root.clone(),
        env,
        set: case.set.clone(),
        now: parse_now(&case.now),
        timezone: case.timezone.as_deref().map(|z| z.parse().unwrap()),
        skills: case.skills.clone(),
        prompt: case.prompt.clone(),
    };

    let mut out = describe(&request, case.show_base);
    for variant in &case.variants {
        let mut request = request.clone();
        request.set.extend(variant.set.iter().cloned());
        if let Some(skills) = &variant.skills {
            request.skills = skills.clone();
        }
        if let Some(now) = &variant.now {
            request.now = parse_now(now);
        }
        let full = describe(&request, case.show_base);
        let table = match full.split_once("== sections ==\n") {
            Some((_, table)) => table,
            None => &full,
        };
        let _ = write!(
            out,
            "\n######## variant: {} ########\n# set: {:?} skills: {:?}\n{}",
            variant.name, variant.set, request.skills, table
        );
    }
    out.replace(&root_text, "[ROOT]")
}

fn parse_now(text: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&chrono::Utc)
}

/// What one render of a case asks for.
#[derive(Clone, Debug)]
struct Request {
    repo: PathBuf,
    cwd: PathBuf,
    env: BTreeMap<String, String>,
    set: Vec<String>,
    now: chrono::DateTime<chrono::Utc>,
    timezone: Option<chrono_tz::Tz>,
    skills: Vec<String>,
    prompt: Option<String>,
}

/// One render (a session's first turn, as `bcode-prompt render` does it)
/// on the library's fake machine, reading the case's environment.
fn render(request: &Request) -> Result<bcode_prompt::Turn, bcode_prompt::PromptError> {
    let mut golden = Golden::new(&request.repo)
        .hermetic(false)
        .cwd(&request.cwd)
        .env(request.env.clone())
        .prompt(request.prompt.clone().unwrap_or_default())
        .now(request.now);
    if let Some(zone) = request.timezone {
        golden = golden.timezone(zone);
    }
    for assignment in &request.set {
        golden = golden.set(assignment);
    }
    for id in &request.skills {
        golden = golden.skill(id);
    }
    golden.render()
}

/// One render as snapshot text.
fn describe(request: &Request, show_base: bool) -> String {
    let rendered = match render(request) {
        Ok(rendered) => rendered,
        Err(err) => return format!("== error ==\n{err}\n"),
    };
    let prompt = &rendered.prompt;
    let mut out = String::new();
    out.push_str("== system ==\n");
    out.push_str(&elide_base(prompt, show_base));
    let _ = write!(out, "\n{DIVIDER}\n");
    out.push_str(&prompt.request_context);
    out.push_str("\n== sections ==\n");
    let _ = writeln!(out, "cache_boundary {}", prompt.cache_boundary);
    for s in &prompt.sections {
        let place = match s.placement {
            Placement::System => "system",
            Placement::RequestContext => "request",
            _ => "other",
        };
        let class = serde_json::to_value(s.class).unwrap();
        let _ = write!(
            out,
            "{:<34} {:<8} {:<8} {:>6}B{}",
            s.id,
            class.as_str().unwrap_or("?"),
            place,
            s.bytes,
            if s.truncated { " truncated" } else { "" }
        );
        for note in &s.notes {
            let _ = write!(out, " | {}", redact_timings(note));
        }
        out.push('\n');
    }
    for o in &prompt.omitted {
        let reason = match &o.reason {
            OmitReason::Disabled { toggle } => format!("disabled by {toggle}"),
            OmitReason::Empty => "empty".to_owned(),
            OmitReason::Failed { message } => format!("failed: {message}"),
            _ => "other".to_owned(),
        };
        let _ = writeln!(out, "omitted {:<26} {reason}", o.id);
    }
    for w in &rendered.config_warnings {
        let _ = writeln!(out, "config warning: {w}");
    }
    for w in &rendered.template_warnings {
        let _ = writeln!(out, "template warning: {w}");
    }
    for d in &rendered.diagnostics {
        let path = d.path.as_ref().map(|p| p.display().to_string());
        let _ = writeln!(
            out,
            "skill diagnostic: {} {} {}: {}",
            serde_json::to_value(d.severity)
                .unwrap()
                .as_str()
                .unwrap_or("?"),
            d.code.as_str(),
            path.unwrap_or_default(),
            d.message()
        );
    }
    out
}

/// Selector timings (`waited 3 ms; selector answered in 1 ms`) depend on
/// the machine's speed; they read as 0 ms in snapshots.
fn redact_timings(note: &str) -> String {
    let mut out = String::with_capacity(note.len());
    let mut rest = note;
    while let Some(at) = ["waited ", "answered in "]
        .iter()
        .filter_map(|word| rest.find(word).map(|i| i + word.len()))
        .min()
    {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(" ms") {
            out.push('0');
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// The system text with the built-in `base` section replaced by a
/// placeholder line; replacement text (which has a source) stays in full.
fn elide_base(prompt: &AssembledPrompt, show_base: bool) -> String {
    let mut text = prompt.system.clone();
    if show_base {
        return text;
    }
    if let Some(base) = prompt
        .sections
        .iter()
        .find(|s| s.id == "base" && s.placement == Placement::System)
        && base.sources.is_empty()
    {
        text.replace_range(
            base.range.clone(),
            &format!("[base: built-in prompt, {} bytes]", base.bytes),
        );
    }
    text
}

/// Creates the case's repository at test time (never checked in).
fn make_git(repo: &Path, git: &Git) {
    if git.mode == GitMode::None {
        return;
    }
    let mut options = git2::RepositoryInitOptions::new();
    options.initial_head("main");
    let repository = git2::Repository::init_opts(repo, &options).unwrap();
    if git.mode == GitMode::Unborn {
        return;
    }
    let mut index = repository.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repository.find_tree(index.write_tree().unwrap()).unwrap();
    let when = git2::Time::new(1_700_000_000, 0);
    let signature = git2::Signature::new("Case Author", "case@example.invalid", &when).unwrap();
    repository
        .commit(
            Some("HEAD"),
            &signature,
            &signature,
            "Initial commit",
            &tree,
            &[],
        )
        .unwrap();
    for file in &git.modify {
        let path = repo.join(file);
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        text.push_str("a local change\n");
        std::fs::write(&path, text).unwrap();
    }
    for n in 0..git.untracked {
        std::fs::write(repo.join(format!("untracked-{n:02}.txt")), "new\n").unwrap();
    }
}
