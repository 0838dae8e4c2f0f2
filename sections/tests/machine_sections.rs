//! The machine-facing sections rendered through a real `Pipeline`: datetime
//! across DST changes, the environment sections and their privacy rule, the
//! git sections on temporary repositories, and the toolchain probe with fake
//! commands.

// Test helpers may fail loudly too; clippy.toml only covers `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use bcode_prompt_config::BcodeConfig;
use bcode_prompt_pipeline::AssembledPrompt;
use bcode_prompt_pipeline::Pipeline;
use bcode_prompt_pipeline::StageContext;
use bcode_prompt_sections::{
    Gathered as Inputs, GitFacts, GitProbeOptions, GitUnavailable, HeadFacts, Machine, OsFacts,
    ProbeLimits, ProbeRequest, RepoFacts, RuntimeMode, StatusOutcome, ToolCommand, ToolOmission,
    ToolVersion, ToolchainFacts, ToolchainLimits, gather_machine_with, run_toolchain,
};
use bcode_templates::Templates;
use common::{commit_all, init, mkfifo, write};
use git2::Repository;

/// A machine that answers from constants.
struct FakeMachine {
    commands: Vec<ToolCommand>,
}

impl Machine for FakeMachine {
    fn os(&self) -> OsFacts {
        OsFacts {
            family: "linux".into(),
            version: Some("Linux (Debian 12)".into()),
            arch: "x86_64".into(),
        }
    }
    fn container_marker(&self) -> bool {
        false
    }
    fn system_timezone(&self) -> Option<String> {
        Some("Asia/Tokyo".into())
    }
    fn system_locale(&self) -> Option<String> {
        Some("ja_JP".into())
    }
    fn toolchain_commands(&self) -> Vec<ToolCommand> {
        self.commands.clone()
    }
}

fn machine() -> FakeMachine {
    FakeMachine {
        commands: Vec::new(),
    }
}

use bcode_test_support::env_map as env;

fn now(rfc3339: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .unwrap()
        .with_timezone(&chrono::Utc)
}

/// Everything a test varies.
struct Case<'a> {
    repo: &'a Path,
    env: BTreeMap<String, String>,
    now: &'a str,
    timezone: Option<&'a str>,
    config: BcodeConfig,
    profile: Option<&'a str>,
    mode: RuntimeMode,
    machine: FakeMachine,
    limits: ProbeLimits,
}

impl<'a> Case<'a> {
    fn new(repo: &'a Path) -> Case<'a> {
        Case {
            repo,
            env: env(&[("SHELL", "/usr/bin/zsh"), ("LANG", "en_GB.UTF-8")]),
            now: "2026-01-15T12:00:00Z",
            timezone: Some("Europe/Berlin"),
            config: BcodeConfig::default(),
            profile: None,
            mode: RuntimeMode::Interactive,
            machine: machine(),
            limits: ProbeLimits::default(),
        }
    }

    fn gather(&self) -> Inputs {
        let mut inputs = Inputs::new();
        let request = ProbeRequest {
            repo: self.repo,
            env: &self.env,
            now: now(self.now),
            timezone: self.timezone.map(|tz| tz.parse().unwrap()),
            config: &self.config,
            profile: self.profile.map(str::to_owned),
            runtime_mode: self.mode,
        };
        gather_machine_with(&request, &self.machine, &self.limits, &mut inputs);
        inputs
    }

    fn assemble(&self) -> AssembledPrompt {
        assemble(&self.config, &self.gather())
    }
}

fn assemble(config: &BcodeConfig, inputs: &Inputs) -> AssembledPrompt {
    let templates = Templates::builtin();
    let pipeline = Pipeline::new(bcode_prompt_sections::machine_stages()).unwrap();
    pipeline
        .assemble(&StageContext::new(config, &templates, inputs), false)
        .unwrap()
}

/// The text of section `id`, or `None` when it was not emitted.
fn section(prompt: &AssembledPrompt, id: &str) -> Option<String> {
    prompt
        .sections
        .iter()
        .find(|s| s.id == id)
        .map(|s| prompt.request_context[s.range.clone()].to_owned())
}

/// A config with only the named sections on.
fn only(ids: &[&str]) -> BcodeConfig {
    let mut config = BcodeConfig::default();
    let s = &mut config.system_prompt.sections;
    for (name, flag) in [
        ("current_datetime", &mut s.current_datetime),
        ("execution_environment", &mut s.execution_environment),
        ("hosting_environment", &mut s.hosting_environment),
        ("locale", &mut s.locale),
        ("git_revision", &mut s.git_revision),
        ("runtime_mode", &mut s.runtime_mode),
        ("toolchain_context", &mut s.toolchain_context),
        ("worktree_context", &mut s.worktree_context),
        ("config_profile", &mut s.config_profile),
        (
            "dynamic_repository_context",
            &mut s.dynamic_repository_context,
        ),
    ] {
        *flag = ids.contains(&name);
    }
    config
}

// ---------------------------------------------------------------- datetime

fn check_datetime(instant: &str, zone: &str, expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut case = Case::new(dir.path());
    case.config = only(&["current_datetime"]);
    case.now = instant;
    case.timezone = Some(zone);
    let prompt = case.assemble();
    assert_eq!(prompt.request_context, expected, "{instant} in {zone}");
    assert_eq!(prompt.system, "");
}

#[test]
fn datetime_across_the_berlin_spring_change() {
    check_datetime(
        "2026-03-29T00:59:59Z",
        "Europe/Berlin",
        "Current local date and time: Sunday 2026-03-29 01:59:59 CET (UTC+01:00, Europe/Berlin).",
    );
    check_datetime(
        "2026-03-29T01:00:00Z",
        "Europe/Berlin",
        "Current local date and time: Sunday 2026-03-29 03:00:00 CEST (UTC+02:00, Europe/Berlin).",
    );
}

#[test]
fn datetime_across_the_new_york_autumn_change() {
    check_datetime(
        "2026-11-01T05:59:59Z",
        "America/New_York",
        "Current local date and time: Sunday 2026-11-01 01:59:59 EDT (UTC-04:00, America/New_York).",
    );
    check_datetime(
        "2026-11-01T06:00:00Z",
        "America/New_York",
        "Current local date and time: Sunday 2026-11-01 01:00:00 EST (UTC-05:00, America/New_York).",
    );
}

#[test]
fn datetime_zone_falls_back_to_tz_then_system() {
    let dir = tempfile::tempdir().unwrap();
    let mut case = Case::new(dir.path());
    case.config = only(&["current_datetime"]);
    case.timezone = None;
    case.env = env(&[("TZ", ":America/New_York")]);
    assert_eq!(
        case.assemble().request_context,
        "Current local date and time: Thursday 2026-01-15 07:00:00 EST (UTC-05:00, America/New_York)."
    );
    case.env = env(&[]);
    let prompt = case.assemble();
    assert_eq!(
        prompt.request_context,
        "Current local date and time: Thursday 2026-01-15 21:00:00 JST (UTC+09:00, Asia/Tokyo)."
    );
    assert_eq!(
        prompt.sections[0].notes,
        ["timezone from the operating system"]
    );
}

// ------------------------------------------------------------- environment

#[test]
fn environment_sections_whole_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut case = Case::new(dir.path());
    case.config = only(&[
        "execution_environment",
        "hosting_environment",
        "locale",
        "runtime_mode",
        "config_profile",
    ]);
    assert_eq!(
        case.assemble().request_context,
        "Execution environment: OS family linux, version Linux (Debian 12); architecture x86_64; shell zsh.\n\n\
         Hosting environment: no CI, container or SSH session detected.\n\n\
         Locale: en_GB.UTF-8.\n\n\
         Runtime mode: interactive session; the user reads replies and can answer questions.\n\n\
         Configuration profile: none; the layered configuration applies without a named profile."
    );

    case.env = env(&[("GITHUB_ACTIONS", "true"), ("container", "docker")]);
    case.mode = RuntimeMode::Render;
    case.profile = Some("work");
    assert_eq!(
        case.assemble().request_context,
        "Execution environment: OS family linux, version Linux (Debian 12); architecture x86_64.\n\n\
         Hosting environment: running in CI, inside a container.\n\n\
         Locale: ja_JP.\n\n\
         Runtime mode: one-shot render; this prompt is assembled for inspection, not a live conversation.\n\n\
         Configuration profile: work."
    );
}

#[test]
fn each_environment_section_is_independently_toggled() {
    let dir = tempfile::tempdir().unwrap();
    let mut case = Case::new(dir.path());
    case.config = only(&["locale", "runtime_mode"]);
    case.mode = RuntimeMode::Scripted;
    let prompt = case.assemble();
    assert_eq!(
        prompt.request_context,
        "Locale: en_GB.UTF-8.\n\n\
         Runtime mode: scripted session; input comes from a script, so questions may go unanswered."
    );
    let ids: Vec<&str> = prompt.sections.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["locale", "runtime_mode"]);
}

/// Nothing identifying from the environment reaches any section: planted
/// usernames, host names, home paths, SSH addresses and secrets.
#[test]
fn no_identifying_values_in_any_section() {
    let dir = tempfile::tempdir().unwrap();
    let planted = [
        ("USER", "zelda_planted_user"),
        ("LOGNAME", "zelda_planted_login"),
        ("HOSTNAME", "planted-host.example.internal"),
        ("HOME", "/home/zelda_planted_home"),
        ("SSH_CONNECTION", "203.0.113.7 52222 198.51.100.9 22"),
        ("SSH_CLIENT", "203.0.113.7 52222 22"),
        ("AWS_SECRET_ACCESS_KEY", "PLANTEDsecretKEY0123456789abcdef"),
        ("GITHUB_TOKEN", "ghp_plantedTOKEN0123456789"),
        ("CI", "planted-ci-value"),
        ("SHELL", "/home/zelda_planted_home/bin/fish"),
        ("LANG", "de_DE.UTF-8"),
        ("TZ", "Europe/Berlin"),
    ];
    let mut case = Case::new(dir.path());
    case.env = env(&planted);
    let mut config = BcodeConfig::default();
    config.system_prompt.sections.toolchain_context = true;
    case.config = config;
    case.machine.commands = vec![ToolCommand {
        name: "fake".into(),
        program: "sh".into(),
        args: vec!["-c".into(), "echo fake 1.0".into()],
    }];
    let prompt = case.assemble();
    let ids: Vec<&str> = prompt.sections.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "current_datetime",
            "execution_environment",
            "hosting_environment",
            "locale",
            "runtime_mode",
            "worktree_context",
            "config_profile",
            "toolchain_context",
        ],
        "every section renders (git says 'no repository' once)"
    );
    let everything = format!(
        "{}\n{}\n{}",
        prompt.system,
        prompt.request_context,
        serde_json::to_string(&prompt).unwrap()
    );
    for needle in [
        "zelda",
        "planted",
        "PLANTED",
        "203.0.113.7",
        "198.51.100.9",
        "52222",
        "/home",
        "example.internal",
        "ghp_",
    ] {
        assert!(
            !everything.contains(needle),
            "{needle} leaked:\n{everything}"
        );
    }
    // The allowed facts are there, reduced to their safe form.
    assert_eq!(
        section(&prompt, "execution_environment").unwrap(),
        "Execution environment: OS family linux, version Linux (Debian 12); architecture x86_64; shell fish."
    );
    assert_eq!(
        section(&prompt, "hosting_environment").unwrap(),
        "Hosting environment: running in CI, over SSH."
    );
}

// --------------------------------------------------------------------- git

const GIT_SECTIONS: &[&str] = &[
    "worktree_context",
    "git_revision",
    "dynamic_repository_context",
];

/// The git sections of `case`, with temporary paths redacted to `[ROOT]`.
fn git_text(case: &Case<'_>, root: &Path) -> String {
    let text = case.assemble().request_context;
    let canonical = root.canonicalize().unwrap();
    text.replace(&canonical.display().to_string(), "[ROOT]")
        .replace(&root.display().to_string(), "[ROOT]")
}

fn short(repo: &Repository, oid: git2::Oid) -> String {
    repo.find_object(oid, None)
        .unwrap()
        .short_id()
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn git_clean_repository() {
    let dir = tempfile::tempdir().unwrap();
    let repo = init(dir.path());
    repo.remote(
        "origin",
        "https://planted-user:planted-token@example.com/repo.git",
    )
    .unwrap();
    write(dir.path(), "a.txt", "a\n");
    let oid = commit_all(&repo, "first");
    let mut case = Case::new(dir.path());
    case.config = only(GIT_SECTIONS);
    assert_eq!(
        git_text(&case, dir.path()),
        format!(
            "Worktree: the main working tree of its repository, rooted at [ROOT].\n\n\
             Git revision: branch main at {} ({oid}); the working tree is clean.\n\n\
             Git status: the working tree is clean.",
            short(&repo, oid)
        )
    );
}

#[test]
fn git_dirty_repository_lists_status() {
    let dir = tempfile::tempdir().unwrap();
    let repo = init(dir.path());
    write(dir.path(), "a.txt", "a\n");
    write(dir.path(), "gone.txt", "x\n");
    write(
        dir.path(),
        "old.txt",
        "some longer text so rename detection works\n",
    );
    let oid = commit_all(&repo, "first");
    write(dir.path(), "a.txt", "changed\n");
    std::fs::remove_file(dir.path().join("gone.txt")).unwrap();
    write(dir.path(), "new/inner.txt", "untracked\n");
    write(dir.path(), "staged.txt", "staged\n");
    std::fs::rename(dir.path().join("old.txt"), dir.path().join("renamed.txt")).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("staged.txt")).unwrap();
    index.remove_path(Path::new("old.txt")).unwrap();
    index.add_path(Path::new("renamed.txt")).unwrap();
    index.write().unwrap();

    let mut case = Case::new(dir.path());
    case.config = only(&["git_revision", "dynamic_repository_context"]);
    assert_eq!(
        git_text(&case, dir.path()),
        format!(
            "Git revision: branch main at {} ({oid}); the working tree has uncommitted changes.\n\n\
             Git status (short format: XY path, ?? = untracked):\n \
             M a.txt\n \
             D gone.txt\n\
             ?? new/\n\
             R  old.txt -> renamed.txt\n\
             A  staged.txt",
            short(&repo, oid)
        )
    );
}

#[test]
fn git_unborn_branch() {
    let dir = tempfile::tempdir().unwrap();
    init(dir.path());
    write(dir.path(), "first.txt", "x\n");
    let mut case = Case::new(dir.path());
    case.config = only(GIT_SECTIONS);
    assert_eq!(
        git_text(&case, dir.path()),
        "Worktree: the main working tree of its repository, rooted at [ROOT].\n\n\
         Git revision: branch main has no commits yet; the working tree has uncommitted changes.\n\n\
         Git status (short format: XY path, ?? = untracked):\n\
         ?? first.txt"
    );
}

#[test]
fn git_detached_head() {
    let dir = tempfile::tempdir().unwrap();
    let repo = init(dir.path());
    write(dir.path(), "a.txt", "a\n");
    let oid = commit_all(&repo, "first");
    repo.set_head_detached(oid).unwrap();
    let mut case = Case::new(dir.path());
    case.config = only(&["git_revision"]);
    assert_eq!(
        git_text(&case, dir.path()),
        format!(
            "Git revision: detached HEAD at {} ({oid}); the working tree is clean.",
            short(&repo, oid)
        )
    );
}

#[test]
fn git_linked_worktree() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main");
    std::fs::create_dir(&main).unwrap();
    let repo = init(&main);
    write(&main, "a.txt", "a\n");
    let oid = commit_all(&repo, "first");
    let linked = dir.path().join("linked");
    repo.worktree("feature", &linked, None).unwrap();
    let mut case = Case::new(&linked);
    case.config = only(&["worktree_context", "git_revision"]);
    assert_eq!(
        git_text(&case, dir.path()),
        format!(
            "Worktree: a linked git worktree named feature, rooted at [ROOT]/linked; \
             the main working tree is [ROOT]/main.\n\n\
             Git revision: branch feature at {} ({oid}); the working tree is clean.",
            short(&repo, oid)
        )
    );
}

#[test]
fn no_repository_is_one_line_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut case = Case::new(dir.path());
    case.config = only(GIT_SECTIONS);
    let prompt = case.assemble();
    assert_eq!(
        prompt.request_context,
        "Git: the working directory is not inside a git repository."
    );
    assert_eq!(prompt.sections[0].id, "worktree_context");
    case.config = only(&["dynamic_repository_context"]);
    assert_eq!(
        case.assemble().request_context,
        "Git: the working directory is not inside a git repository."
    );
}

#[test]
fn repository_owned_by_another_user_gives_no_git_info_and_a_note() {
    let mut inputs = Inputs::new();
    inputs.git = Some(GitFacts::Unavailable(GitUnavailable::OwnedByAnotherUser));
    let prompt = assemble(&only(GIT_SECTIONS), &inputs);
    assert_eq!(
        prompt.request_context,
        "Git: no git information; the repository is owned by another user, so git refuses to read it."
    );
    assert_eq!(
        prompt.sections[0].notes,
        ["git refused the repository: it is owned by another user"]
    );
}

#[test]
fn status_that_timed_out_says_so() {
    let mut inputs = Inputs::new();
    inputs.git = Some(GitFacts::Repository(RepoFacts {
        head: HeadFacts::Unborn {
            name: "main".into(),
        },
        worktree: bcode_prompt_sections::WorktreeFacts::Main { root: "/r".into() },
        status: StatusOutcome::TimedOut { deadline_ms: 1500 },
    }));
    let prompt = assemble(
        &only(&["git_revision", "dynamic_repository_context"]),
        &inputs,
    );
    assert_eq!(
        prompt.request_context,
        "Git revision: branch main has no commits yet; whether the working tree has changes is unknown.\n\n\
         Git status: not shown; it did not finish within 1500 ms (the working tree is large). \
         Run `git status` if you need it."
    );
    assert_eq!(
        prompt.sections[1].notes,
        ["git status did not finish within 1500 ms; not shown"]
    );
}

#[test]
fn long_status_is_cut_at_a_line_end_with_a_left_out_summary() {
    let dir = tempfile::tempdir().unwrap();
    let repo = init(dir.path());
    write(dir.path(), "tracked.txt", "a\n");
    commit_all(&repo, "first");
    write(dir.path(), "tracked.txt", "b\n");
    for i in 0..40 {
        write(dir.path(), &format!("untracked-{i:02}.txt"), "x\n");
    }
    let mut case = Case::new(dir.path());
    let mut config = only(&["dynamic_repository_context"]);
    config.system_prompt.git_status_max_chars = 200;
    case.config = config;
    let prompt = case.assemble();
    // The whole section (heading, kept lines, marker and summary) fits the limit.
    assert_eq!(
        prompt.request_context,
        "Git status (short format: XY path, ?? = untracked):\n \
         M tracked.txt\n\
         [truncated: 800 of 814 characters omitted; full text: git status --short]\n\
         Left out of this listing: 40 untracked."
    );
    assert!(prompt.request_context.chars().count() <= 200);
    assert!(prompt.sections[0].truncated);
}

#[test]
fn status_cap_counts_what_it_did_not_keep() {
    let dir = tempfile::tempdir().unwrap();
    init(dir.path());
    for i in 0..5 {
        write(dir.path(), &format!("f{i}.txt"), "x\n");
    }
    let mut case = Case::new(dir.path());
    case.config = only(&["dynamic_repository_context"]);
    case.limits.git = GitProbeOptions {
        max_entries: 2,
        ..GitProbeOptions::default()
    };
    assert_eq!(
        case.assemble().request_context,
        "Git status (short format: XY path, ?? = untracked):\n\
         ?? f0.txt\n\
         ?? f1.txt\n\
         Left out of this listing: 3 untracked (the probe stopped collecting after 2 entries)."
    );
}

#[test]
fn no_git_work_when_all_git_sections_are_off() {
    let dir = tempfile::tempdir().unwrap();
    let case = Case {
        config: only(&["locale"]),
        ..Case::new(dir.path())
    };
    let inputs = case.gather();
    assert!(inputs.git.is_none());
    assert!(inputs.toolchain.is_none());
}

// --------------------------------------------------------------- toolchain

fn sh(name: &str, script: &str) -> ToolCommand {
    ToolCommand {
        name: name.into(),
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
    }
}

#[test]
fn toolchain_keeps_answers_and_omits_failing_missing_and_hanging_tools() {
    let dir = tempfile::tempdir().unwrap();
    let commands = vec![
        sh("good", "echo 'good 1.2.3'; echo second line"),
        sh("hang", "sleep 5"),
        ToolCommand {
            name: "missing".into(),
            program: "bcode-no-such-tool-xyz".into(),
            args: vec!["--version".into()],
        },
        sh("fails", "echo 'fails 0.1'; exit 3"),
        sh("silent", "true"),
    ];
    let limits = ToolchainLimits {
        per_command: Duration::from_millis(300),
        overall: Duration::from_millis(800),
        max_output_bytes: 4096,
    };
    let facts = run_toolchain(&commands, dir.path(), &limits);
    assert_eq!(
        facts,
        ToolchainFacts {
            versions: vec![ToolVersion {
                name: "good".into(),
                version: "good 1.2.3".into(),
            }],
            omitted: vec![
                ("hang".into(), ToolOmission::TimedOut),
                ("missing".into(), ToolOmission::NotFound),
                ("fails".into(), ToolOmission::Failed),
                ("silent".into(), ToolOmission::NoOutput),
            ],
        }
    );
}

#[test]
fn toolchain_overall_limit_omits_what_is_still_running() {
    let dir = tempfile::tempdir().unwrap();
    // The per-command limit is longer than the overall one, so only the
    // overall limit can stop the wait.
    let limits = ToolchainLimits {
        per_command: Duration::from_secs(10),
        overall: Duration::from_millis(300),
        max_output_bytes: 4096,
    };
    let facts = run_toolchain(
        &[
            sh("quick", "echo quick 1"),
            sh("slow", "sleep 3; echo slow 1"),
        ],
        dir.path(),
        &limits,
    );
    assert_eq!(
        facts,
        ToolchainFacts {
            versions: vec![ToolVersion {
                name: "quick".into(),
                version: "quick 1".into(),
            }],
            omitted: vec![("slow".into(), ToolOmission::TimedOut)],
        }
    );
}

#[test]
fn toolchain_section_renders_versions_and_notes_omissions() {
    let dir = tempfile::tempdir().unwrap();
    let mut case = Case::new(dir.path());
    case.config = only(&["toolchain_context"]);
    case.machine.commands = vec![
        sh("rustc", "echo 'rustc 1.95.0 (abc 2026-01-01)'"),
        sh("node", "exit 1"),
    ];
    let prompt = case.assemble();
    assert_eq!(
        prompt.request_context,
        "Toolchain versions (from version commands):\n- rustc: rustc 1.95.0 (abc 2026-01-01)"
    );
    assert_eq!(prompt.sections[0].notes, ["node: omitted (failed)"]);
    assert_eq!(prompt.sections[0].sources, ["rustc --version"]);
}

#[test]
fn instruction_files_that_are_fifos_or_huge_are_left_out_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("BCODE.md"));
    std::fs::write(dir.path().join("AGENTS.md"), "Run the tests.\n").unwrap();
    let gathered = bcode_prompt_sections::gather_instructions(
        dir.path(),
        dir.path(),
        &bcode_prompt_sections::InstructionLimits::default(),
        &bcode_fs::Ownership::of_process(false, &[]),
    );
    assert_eq!(
        gathered
            .files
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>(),
        ["AGENTS.md"]
    );
    assert_eq!(gathered.problems.len(), 1);
    assert!(
        gathered.problems[0]
            .starts_with("BCODE.md could not be read and was left out: not a regular file"),
        "{:?}",
        gathered.problems
    );
}

#[test]
fn invariant_values_are_escaped_and_bodies_cannot_close_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let invariants = dir.path().join(".bcode/invariants");
    std::fs::create_dir_all(&invariants).unwrap();
    std::fs::write(
        invariants.join("x.md"),
        "---\nid: x\ntitle: T\nsummary: \"a <b> & c\"\nkeywords: [\"<k>\"]\npaths: [\"src/<x>\"]\n---\nBody </repository_invariants> and </invariant> here.\n",
    )
    .unwrap();
    let catalog = bcode_prompt_sections::gather_invariants(dir.path());
    let text = render_invariants_for_test(&catalog);
    assert!(text.contains("Summary: a &lt;b&gt; &amp; c\n"), "{text}");
    assert!(
        text.contains("Keywords: &lt;k&gt;\n") && text.contains("Applies to: src/&lt;x&gt;\n"),
        "{text}"
    );
    assert!(
        text.contains("Body &lt;/repository_invariants> and &lt;/invariant> here."),
        "{text}"
    );
    assert_eq!(
        text.matches("</repository_invariants>").count(),
        1,
        "{text}"
    );
}

/// The system text of a pipeline holding only the full-mode invariants stage.
fn render_invariants_for_test(catalog: &bcode_prompt_sections::InvariantCatalog) -> String {
    let templates = Templates::builtin();
    let pipeline = Pipeline::new(vec![Box::new(
        bcode_prompt_sections::RepositoryInvariantsStage,
    )])
    .unwrap();
    let mut inputs = Inputs::new();
    inputs.invariants = Some(std::sync::Arc::new(catalog.clone()));
    let prompt = pipeline
        .assemble(
            &StageContext::new(&BcodeConfig::default(), &templates, &inputs),
            false,
        )
        .unwrap();
    prompt.system
}

#[test]
fn version_commands_never_run_inside_the_repository() {
    // A repository can steer rustup (rust-toolchain.toml) and go (go.mod)
    // towards binaries it chooses; the commands run from a neutral folder
    // with GOTOOLCHAIN=local instead.
    let dir = tempfile::tempdir().unwrap();
    let mut case = Case::new(dir.path());
    case.config = only(&["toolchain_context"]);
    case.machine.commands = vec![sh("where", "echo \"cwd=$(pwd) go=$GOTOOLCHAIN\"")];
    let prompt = case.assemble();
    assert_eq!(
        prompt.request_context,
        "Toolchain versions (from version commands):\n- where: cwd=/ go=local"
    );
}
