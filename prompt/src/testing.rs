//! Golden-file helpers for Rust tests: a fixed machine ([`FakeMachine`]), a
//! complete set of pinned facts ([`fake_facts`]), a one-turn render of a
//! fixture ([`Golden`], hermetic by default) and the prompt as one text
//! ([`prompt_text`], the layout `bcode-prompt render` prints), ready for an
//! insta snapshot.
//!
//! ```
//! use bcode_prompt::testing::{Golden, fake_facts, prompt_text};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # std::fs::write(dir.path().join("BCODE.md"), "Run `cargo test` first.\n")?;
//! # let fixture = dir.path();
//! // The fixture is a repository folder checked in beside the test.
//! let turn = Golden::new(fixture)
//!     .facts(fake_facts())             // or your team's facts file: parse_facts(..)
//!     .set("skills.prompt.catalog=\"names_only\"")
//!     .prompt("fix the failing test")
//!     .render()?;
//! let text = prompt_text(&turn.prompt);
//! // insta::assert_snapshot!(text);   // the same bytes on every machine
//! assert!(text.contains(r#"location="/src/project/BCODE.md""#));
//! assert!(text.contains("Execution environment: OS family linux"));
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bcode_prompt_config::{
    GitFact, HostingFact, OsFact, PinnedHead, PinnedRuntimeMode, PinnedWorktree,
};
use bcode_prompt_sections::{Machine, OsFacts, RuntimeMode, ToolCommand};

use crate::error::PromptError;
use crate::facts::Facts;
use crate::options::{SessionOptions, SkillLifetime};
use crate::session::PromptSession;
use crate::turn::{Turn, TurnInput};

pub use crate::printed::{DIVIDER, prompt_text, write_prompt_text};

/// A machine with fixed answers (OS `Linux (Testix 1.0)` on x86_64, zone
/// `Etc/UTC`, locale `en-US`, one `rustc` version printed by `echo`), for
/// tests that still read an environment snapshot.
#[derive(Clone, Copy, Debug, Default)]
pub struct FakeMachine;

impl Machine for FakeMachine {
    fn os(&self) -> OsFacts {
        OsFacts {
            family: "linux".into(),
            version: Some("Linux (Testix 1.0)".into()),
            arch: "x86_64".into(),
        }
    }
    fn container_marker(&self) -> bool {
        false
    }
    fn system_timezone(&self) -> Option<String> {
        Some("Etc/UTC".into())
    }
    fn system_locale(&self) -> Option<String> {
        Some("en-US".into())
    }
    fn toolchain_commands(&self) -> Vec<ToolCommand> {
        // `echo` stands in for rustc: present everywhere, same output.
        vec![ToolCommand {
            name: "rustc".into(),
            program: "echo".into(),
            args: vec!["rustc 1.95.0 (fake)".into()],
        }]
    }
}

/// Every machine fact pinned, the way [`FakeMachine`] answers plus a clock,
/// a zone, a clean `main` branch, and the roots `/src/project` and
/// `/home/user`: with them, a hermetic render probes nothing.
pub fn fake_facts() -> Facts {
    Facts {
        now: Some("2025-06-15T14:30:00Z".into()),
        timezone: Some("Europe/Berlin".into()),
        shell: Some("bash".into()),
        locale: Some("en_US.UTF-8".into()),
        runtime_mode: Some(PinnedRuntimeMode::Render),
        home: Some("/home/user".into()),
        repo_root: Some("/src/project".into()),
        os: Some(OsFact {
            family: "linux".into(),
            version: Some("Linux (Testix 1.0)".into()),
            arch: "x86_64".into(),
        }),
        hosting: Some(HostingFact::default()),
        git: Some(GitFact {
            head: PinnedHead::Branch,
            branch: Some("main".into()),
            commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
            short: None,
            worktree: PinnedWorktree::Main,
            status: Vec::new(),
        }),
        toolchain: Some(vec!["rustc: rustc 1.95.0 (fake)".to_owned()]),
    }
}

/// One settled turn of a fixture, as `bcode-prompt render` builds it:
/// hermetic unless told otherwise, on [`FakeMachine`] behind the facts.
#[derive(Clone, Debug)]
pub struct Golden {
    repo: PathBuf,
    cwd: Option<PathBuf>,
    facts: Facts,
    hermetic: bool,
    env: BTreeMap<String, String>,
    set: Vec<String>,
    config_files: Vec<PathBuf>,
    skills: Vec<String>,
    prompt: String,
    now: Option<chrono::DateTime<chrono::Utc>>,
    timezone: Option<chrono_tz::Tz>,
}

impl Golden {
    /// A hermetic render of the repository folder `repo` with no facts
    /// pinned yet (add them with [`Golden::facts`]).
    pub fn new(repo: impl Into<PathBuf>) -> Golden {
        Golden {
            repo: repo.into(),
            cwd: None,
            facts: Facts::default(),
            hermetic: true,
            env: BTreeMap::new(),
            set: Vec::new(),
            config_files: Vec::new(),
            skills: Vec::new(),
            prompt: String::new(),
            now: None,
            timezone: None,
        }
    }

    /// The pinned facts (replacing earlier ones).
    pub fn facts(mut self, facts: Facts) -> Golden {
        self.facts = facts;
        self
    }

    /// Not hermetic: the environment snapshot ([`Golden::env`]) is read and
    /// unpinned facts come from [`FakeMachine`].
    pub fn hermetic(mut self, hermetic: bool) -> Golden {
        self.hermetic = hermetic;
        self
    }

    /// The environment snapshot (read only when not hermetic).
    pub fn env(mut self, env: BTreeMap<String, String>) -> Golden {
        self.env = env;
        self
    }

    /// The folder relative paths resolve against.
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Golden {
        self.cwd = Some(cwd.into());
        self
    }

    /// One `key.path=value` config assignment, as the CLI's `--set`.
    pub fn set(mut self, assignment: impl Into<String>) -> Golden {
        self.set.push(assignment.into());
        self
    }

    /// A config file layered above the repository's, as `--config`.
    pub fn config_file(mut self, path: impl Into<PathBuf>) -> Golden {
        self.config_files.push(path.into());
        self
    }

    /// Activates a skill for the turn, as `--skill`.
    pub fn skill(mut self, id: impl Into<String>) -> Golden {
        self.skills.push(id.into());
        self
    }

    /// The user's prompt of the turn.
    pub fn prompt(mut self, text: impl Into<String>) -> Golden {
        self.prompt = text.into();
        self
    }

    /// The turn's clock (wins over the pinned `now`).
    pub fn now(mut self, now: chrono::DateTime<chrono::Utc>) -> Golden {
        self.now = Some(now);
        self
    }

    /// The turn's zone (wins over the pinned `timezone`).
    pub fn timezone(mut self, zone: chrono_tz::Tz) -> Golden {
        self.timezone = Some(zone);
        self
    }

    /// The session options this render opens with.
    pub fn session_options(&self) -> SessionOptions {
        let mut options = SessionOptions::new(&self.repo)
            .env(self.env.clone())
            .machine(Arc::new(FakeMachine))
            .runtime_mode(RuntimeMode::Render)
            .skill_lifetime(SkillLifetime::SingleTurn)
            .facts(self.facts.clone())
            .hermetic(self.hermetic);
        if let Some(cwd) = &self.cwd {
            options = options.cwd(cwd);
        }
        for file in &self.config_files {
            options = options.config_file(file);
        }
        for assignment in &self.set {
            options = options.set(assignment);
        }
        options
    }

    /// Opens a session and builds its one settled turn.
    pub fn render(&self) -> Result<Turn, PromptError> {
        let mut session = PromptSession::open_blocking(self.session_options())?;
        let mut input = TurnInput::new(self.prompt.clone());
        if let Some(now) = self.now {
            input = input.now(now);
        }
        if let Some(zone) = self.timezone {
            input = input.timezone(zone);
        }
        for id in &self.skills {
            input = input.activate(id.clone());
        }
        session.next_turn_blocking(input.settle())
    }

    /// [`Golden::render`] as [`prompt_text`].
    pub fn render_text(&self) -> Result<String, PromptError> {
        Ok(prompt_text(&self.render()?.prompt))
    }

    /// The repository folder.
    pub fn repo(&self) -> &Path {
        &self.repo
    }
}
