//! The whole render that the render bench and `render_ratio` measure: what
//! `bcode-prompt --repo REPO render` does on the fixture of
//! [`render_repo`](crate::render_repo) (a session opened single-turn for the
//! repository and its first, settled turn), and the `git status
//! --porcelain` subprocess it is measured against.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use bcode_prompt::machine::RuntimeMode;
use bcode_prompt::{PromptError, PromptSession, SessionOptions, SkillLifetime, Turn, TurnInput};

use crate::RenderRepo;

/// The tree and corpus sizes issue 4 names: 10,000 tracked files, 100 skills.
pub const FILES: usize = 10_000;
/// See [`FILES`].
pub const SKILLS: usize = 100;

/// `--set` flags that turn off every section that reads git.
pub const GIT_OFF: [&str; 3] = [
    "system_prompt.sections.git_revision=false",
    "system_prompt.sections.worktree_context=false",
    "system_prompt.sections.dynamic_repository_context=false",
];

/// What the CLI would ask for with `bcode-prompt --repo REPO render`, with
/// a private empty `HOME` and a fixed clock.
#[derive(Clone, Debug)]
pub struct RenderRequest {
    repo: PathBuf,
    env: BTreeMap<String, String>,
    set: Vec<String>,
    now: chrono::DateTime<chrono::Utc>,
}

/// The environment of every request: a private `HOME`, a plain `PATH`.
fn environment(home: &Path) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("HOME".to_owned(), home.display().to_string()),
        ("PATH".to_owned(), "/usr/local/bin:/usr/bin:/bin".to_owned()),
        ("SHELL".to_owned(), "/bin/bash".to_owned()),
        ("LANG".to_owned(), "C.UTF-8".to_owned()),
    ])
}

/// The request for `repo` with the extra `--set` flags `set`.
pub fn request(repo: &RenderRepo, set: &[&str]) -> RenderRequest {
    RenderRequest {
        repo: repo.root.clone(),
        env: environment(&repo.home),
        // The corpus as a configured root: a repository's own skill folder
        // may not link out of the repository.
        set: std::iter::once(format!(
            "skills.sources.paths=[{:?}]",
            repo.skills.dir.join("primary").display().to_string()
        ))
        .chain(set.iter().map(|s| (*s).to_owned()))
        .collect(),
        now: chrono::DateTime::parse_from_rfc3339("2026-11-29T19:30:00Z")
            .unwrap_or_default()
            .with_timezone(&chrono::Utc),
    }
}

/// What `bcode-prompt --repo DIR --set skills.include_user_skills=false
/// render` asks for on the nested fixture ([`crate::nested_repo`]): `dir`
/// is its root or its working folder, `home` its empty home (whose state
/// folder holds the disk cache), `set` more `--set` flags.
pub fn nested_request(dir: &Path, home: &Path, set: &[&str]) -> RenderRequest {
    RenderRequest {
        repo: dir.to_path_buf(),
        env: environment(home),
        set: std::iter::once("skills.include_user_skills=false")
            .chain(set.iter().copied())
            .map(str::to_owned)
            .collect(),
        now: chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap_or_default()
            .with_timezone(&chrono::Utc),
    }
}

/// One whole render, as `bcode-prompt render` does it.
pub fn render(request: &RenderRequest) -> Result<Turn, PromptError> {
    let mut options = SessionOptions::new(&request.repo)
        .cwd(&request.repo)
        .env(request.env.clone())
        .runtime_mode(RuntimeMode::Render)
        .skill_lifetime(SkillLifetime::SingleTurn);
    for assignment in &request.set {
        options = options.set(assignment);
    }
    let mut session = PromptSession::open_blocking(options)?;
    session.next_turn_blocking(
        TurnInput::new("fix the failing test")
            .now(request.now)
            .settle(),
    )
}

/// Renders once and prints what was produced, so a reader can see the work
/// measured; an error when the render fails or its git status hit the
/// deadline (the figure would be meaningless).
pub fn describe(label: &str, request: &RenderRequest) -> Result<(), String> {
    let rendered = render(request).map_err(|err| format!("{label}: {err}"))?;
    let prompt = &rendered.prompt;
    eprintln!(
        "{label}: system {} bytes, request context {} bytes, {} skill diagnostics",
        prompt.system.len(),
        prompt.request_context.len(),
        rendered.diagnostics.len()
    );
    for s in &prompt.sections {
        let notes = if s.notes.is_empty() {
            String::new()
        } else {
            format!("  notes: {}", s.notes.join(" | "))
        };
        eprintln!("  {:<34} {:>7} bytes{notes}", s.id, s.bytes);
    }
    for o in &prompt.omitted {
        eprintln!("  omitted {:<26} {:?}", o.id, o.reason);
    }
    if prompt.request_context.contains("timed out") || prompt.system.contains("timed out") {
        return Err(format!("{label}: the git status hit its deadline"));
    }
    Ok(())
}

/// `git status --porcelain` in the fixture, as a subprocess with no user or
/// system config; the bytes it printed.
pub fn git_status(repo: &RenderRepo) -> std::io::Result<usize> {
    let output = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&repo.root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stderr(Stdio::null())
        .output()?;
    if !output.status.success() {
        return Err(std::io::Error::other("git status failed"));
    }
    Ok(output.stdout.len())
}
