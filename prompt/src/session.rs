//! [`PromptSession`]: opened once for a repository, asked for every turn.
//!
//! The async functions never create a runtime and never block a runtime
//! thread on file or git work: that work runs on tokio's blocking pool
//! ([`tokio::task::spawn_blocking`]), holding the session's blocking state
//! behind a mutex, so a turn whose future is dropped still finishes its
//! blocking part and leaves the state consistent for the next one. Only the
//! relevant-mode selector, which is async by nature, runs on the caller's
//! task.
//!
//! Synchronous hosts call [`PromptSession::open_blocking`] and
//! [`PromptSession::next_turn_blocking`], which run the same futures on a
//! small runtime the session owns.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use bcode_prompt_config::{InvariantsConfig, LoadedConfig};
use bcode_prompt_pipeline::OmitReason;
use bcode_prompt_pipeline::SectionKind;
use bcode_prompt_pipeline::StageInfo;
use bcode_prompt_sections::{
    Decision, FocusState, InvariantCatalog, InvariantSelector, RelevantInvariants, TaskContext,
    load_sidecar, save_sidecar,
};
use bcode_skill::SkillRegistry;
use bcode_templates::Templates;

use crate::core::{Core, Opened, Prepared};
use crate::error::PromptError;
use crate::options::SessionOptions;
use crate::shared::SkillReload;
use crate::turn::{SectionFailure, Turn, TurnInput};
use crate::workspace::Workspace;

/// One agent session on one repository. See the crate docs for a loop.
pub struct PromptSession {
    core: Arc<Mutex<Core>>,
    selector: Arc<dyn InvariantSelector>,
    relevant: Option<Relevant>,
    focus: Focus,
    /// The runtime of a session opened with [`PromptSession::open_blocking`].
    blocking: Option<tokio::runtime::Runtime>,
}

/// Relevant mode's driver, with the catalog and config it was built for.
struct Relevant {
    driver: RelevantInvariants,
    catalog: Arc<InvariantCatalog>,
    config: InvariantsConfig,
    last_task: Option<TaskContext>,
    last_decision: Option<Decision>,
}

/// The relevant-mode focus kept between processes (the session sidecar).
struct Focus {
    dir: Option<PathBuf>,
    /// What the sidecar held when the session opened.
    restored: Option<FocusState>,
    /// Problems reading it, reported with the first decision.
    problems: Vec<String>,
    /// The generation last saved, so an unchanged focus is not rewritten.
    saved: Option<u64>,
}

impl std::fmt::Debug for PromptSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptSession")
            .field("selector", &self.selector)
            .field("relevant", &self.relevant.is_some())
            .field("blocking", &self.blocking.is_some())
            .finish_non_exhaustive()
    }
}

impl PromptSession {
    /// Opens a session: loads the config layers, builds the template
    /// environment and the pipeline, discovers skills once and restores the
    /// relevant-mode focus. A missing repository, an invalid config or a
    /// broken template override is a [`PromptError`].
    pub async fn open(options: SessionOptions) -> Result<PromptSession, PromptError> {
        PromptSession::open_with(None, options, false).await
    }

    /// [`PromptSession::open`] in a workspace already opened from the same
    /// `options` ([`Workspace::open`]), so a host that read its config
    /// first does not load it again.
    pub async fn open_in(
        workspace: Workspace,
        options: SessionOptions,
    ) -> Result<PromptSession, PromptError> {
        PromptSession::open_with(Some(workspace), options, false).await
    }

    /// [`PromptSession::open`]; `inline` runs the blocking steps on the
    /// calling thread (the blocking wrappers' own thread, which may block).
    async fn open_with(
        workspace: Option<Workspace>,
        options: SessionOptions,
        inline: bool,
    ) -> Result<PromptSession, PromptError> {
        let mut options = options;
        // The session holds the selector and the event sink; the core keeps
        // the rest of the options whole.
        let selector = Arc::clone(&options.selector);
        let events = options.events.take();
        let opened = Opened::new(options);
        let (core, focus) = blocking(inline, move || {
            let focus_dir = opened
                .options
                .focus_dir
                .as_ref()
                .map(|dir| opened.options.cwd.join(dir));
            let workspace = match workspace {
                Some(workspace) => workspace,
                None => Workspace::open(&opened.options)?,
            };
            let core = Core::open(opened, workspace, events)?;
            let mut focus = Focus {
                dir: focus_dir,
                restored: None,
                problems: Vec::new(),
                saved: None,
            };
            if let Some(dir) = &focus.dir {
                match load_sidecar(dir) {
                    Ok(state) => focus.restored = state,
                    Err(problem) => focus.problems.push(format!("session sidecar: {problem}")),
                }
            }
            Ok((core, focus))
        })
        .await?;
        Ok(PromptSession {
            core: Arc::new(Mutex::new(core)),
            selector,
            relevant: None,
            focus,
            blocking: None,
        })
    }

    /// Builds one turn: picks up changes since the last turn, runs the
    /// turn's skill command or prompt, gathers every input and assembles the
    /// prompt. Nothing the turn depends on moves while it is built.
    pub async fn next_turn(&mut self, input: TurnInput) -> Result<Turn, PromptError> {
        self.next_turn_with(input, false).await
    }

    /// [`PromptSession::next_turn`]; `inline` runs the blocking steps on the
    /// calling thread (a blocking wrapper's thread: no thread hop per step).
    async fn next_turn_with(
        &mut self,
        input: TurnInput,
        inline: bool,
    ) -> Result<Turn, PromptError> {
        let core = Arc::clone(&self.core);
        let turn_input = input.clone();
        let mut prepared = blocking(inline, move || lock(&core).prepare(&turn_input)).await?;
        if let Some((catalog, config)) = prepared.relevant.take() {
            let decision = self.decide(&input, &prepared, catalog, config).await;
            prepared.gathered.relevant = Some(decision);
        } else {
            self.relevant = None;
        }
        let core = Arc::clone(&self.core);
        let dir = self.focus.dir.clone();
        let focus = self.relevant.as_ref().and_then(|r| r.driver.focus_state());
        let save = focus.filter(|state| self.focus.saved != Some(state.generation));
        let (prompt, prepared, saved) = blocking(inline, move || {
            let mut prepared = prepared;
            let saved = match (dir, save) {
                (Some(dir), Some(state)) => {
                    let result = save_sidecar(&dir, &state);
                    if let Some(decision) = &mut prepared.gathered.relevant {
                        decision.events.push(match &result {
                            Ok(()) => format!(
                                "session sidecar: saved focus #{} [{}] for the next prompt",
                                state.generation,
                                state.ids.join(", ")
                            ),
                            Err(problem) => format!("session sidecar: {problem}"),
                        });
                    }
                    result.ok().map(|()| state.generation)
                }
                _ => None,
            };
            // The catalog's accounting is read after; the inputs themselves
            // go to the assembly, which drops them before joining.
            let formatted = prepared.gathered.skill_catalog.clone();
            let gathered = std::mem::take(&mut prepared.gathered);
            let prompt = lock(&core).assemble_owned(gathered)?;
            prepared.gathered.skill_catalog = formatted;
            Ok((prompt, prepared, saved))
        })
        .await?;
        if saved.is_some() {
            self.focus.saved = saved;
        }
        let section_failures = prompt
            .omitted
            .iter()
            .filter_map(|omitted| match &omitted.reason {
                OmitReason::Failed { message } => Some(SectionFailure {
                    id: omitted.id.clone(),
                    message: message.clone(),
                }),
                _ => None,
            })
            .collect();
        // Only a catalog the prompt holds is worth a warning (the section
        // toggle can leave a formatted catalog out).
        let catalog_warnings = match &prepared.gathered.skill_catalog {
            Some(catalog)
                if prompt
                    .sections
                    .iter()
                    .any(|s| s.id == SectionKind::SkillCatalog.name()) =>
            {
                catalog.warnings()
            }
            _ => Vec::new(),
        };
        Ok(Turn {
            catalog_warnings,
            prompt,
            events: prepared.events,
            command: prepared.command,
            suggestions: prepared.suggestions,
            diagnostics: prepared.diagnostics,
            config_warnings: prepared.config_warnings,
            template_warnings: prepared.template_warnings,
            foreign_root: prepared.foreign_root,
            changes: prepared.changes,
            event_log_problems: prepared.event_log_problems,
            section_failures,
        })
    }

    /// Tells relevant mode that the final assistant message of the turn was
    /// committed: a background re-evaluation of the focus starts now (it
    /// never delays anything; the next turn uses its answer if it is there).
    /// `answer` is added to the task the selector sees. Call it from inside
    /// the runtime; without one the re-evaluation is skipped and reported.
    pub fn commit_turn(&mut self, answer: &str) {
        if let Some(relevant) = &mut self.relevant
            && let Some(task) = &relevant.last_task
        {
            let mut task = task.clone();
            if !answer.is_empty() {
                task.text.push_str("\n\n");
                task.text.push_str(answer);
            }
            relevant.driver.on_final_assistant_turn_committed(&task);
        }
    }

    /// Waits for background re-evaluations (each up to its deadline) and
    /// saves the focus they settle on to the session sidecar: for hosts that
    /// end a process after a turn, so the next process starts from it.
    pub async fn finish_background(&mut self) -> Result<(), PromptError> {
        self.finish_background_with(false).await
    }

    async fn finish_background_with(&mut self, inline: bool) -> Result<(), PromptError> {
        let Some(relevant) = &mut self.relevant else {
            return Ok(());
        };
        relevant.driver.finish_background().await;
        let (Some(dir), Some(state)) = (self.focus.dir.clone(), relevant.driver.focus_state())
        else {
            return Ok(());
        };
        if self.focus.saved == Some(state.generation) {
            return Ok(());
        }
        let generation = state.generation;
        let saved = blocking(inline, move || Ok(save_sidecar(&dir, &state))).await?;
        if saved.is_ok() {
            self.focus.saved = Some(generation);
        }
        Ok(())
    }

    /// The effective configuration with its origins.
    pub fn config(&self) -> LoadedConfig {
        lock(&self.core).loaded().clone()
    }

    /// The current skill registry (shared; cheap to clone).
    pub fn registry(&self) -> SkillRegistry {
        lock(&self.core).registry().clone()
    }

    /// The skills that best fit `query` (a task, in words), best first, at
    /// most `limit`, each with its score and why it ranked: what a host
    /// gives its model as a "find a skill" tool. Searches the registry of
    /// the last turn (or of the opening); the relevance index is built on
    /// the first search of a registry, and after a reload only the skills
    /// that changed are indexed again. Hidden skills are included: filter
    /// on [`SkillRegistry::get`] and `model_visible()` for a model's tool.
    pub fn search(&self, query: &str, limit: usize) -> Vec<bcode_skill::SearchHit> {
        lock(&self.core).search(query, limit)
    }

    /// How skill edits are noticed between turns, and why no folder watch
    /// covers the roots when none does (for a host or operator to show).
    pub fn skill_reload(&self) -> SkillReload {
        lock(&self.core).skill_reload()
    }

    /// What this session's git reads have cost: reads started, turns that
    /// used the last read's facts (nothing had changed), turns that waited
    /// for a read still running (see `GitSession`); the type is
    /// [`crate::git::GitSessionStats`].
    pub fn git_stats(&self) -> bcode_prompt_sections::GitSessionStats {
        lock(&self.core).git_stats()
    }

    /// A past tool call as plain text, for history a host replays as text
    /// (a model or provider that cannot take the call back as a structured
    /// tool call): the `tool_call_fallback.j2` template with `name` and the
    /// arguments as compact JSON, cut on a grapheme boundary with the
    /// truncation marker past `model.tool_output.fallback_argument_chars`
    /// (default 6,000). `arguments` is only read: the call as stored stays
    /// whole.
    pub fn tool_call_fallback(
        &self,
        name: &str,
        arguments: &serde_json::Value,
    ) -> Result<String, PromptError> {
        let core = lock(&self.core);
        let config = &core.loaded().config.model.tool_output;
        Ok(crate::fallback::format_tool_call(
            core.templates(),
            config,
            name,
            arguments,
        )?)
    }

    /// The template environment (shared).
    pub fn templates(&self) -> Arc<Templates> {
        Arc::clone(lock(&self.core).templates())
    }

    /// Every stage as configured: id, toggle, class, placement, template,
    /// limit (what `--explain` shows before anything runs).
    pub fn stages(&self) -> Vec<StageInfo> {
        lock(&self.core).describe()
    }

    /// The relevant-mode decision of this turn.
    async fn decide(
        &mut self,
        input: &TurnInput,
        prepared: &Prepared,
        catalog: Arc<InvariantCatalog>,
        config: InvariantsConfig,
    ) -> Decision {
        let rebuild = self
            .relevant
            .as_ref()
            .is_none_or(|r| !Arc::ptr_eq(&r.catalog, &catalog) || r.config != config);
        if rebuild {
            let previous = self.relevant.take();
            let mut driver = RelevantInvariants::new(
                config.clone(),
                Arc::clone(&catalog),
                Arc::clone(&self.selector),
            );
            // A rebuilt driver (a changed catalog or config) keeps the focus
            // of the old one; the first one starts from the sidecar.
            match previous.as_ref().and_then(|p| p.driver.focus_state()) {
                Some(state) => driver.restore(&state),
                None => {
                    if let Some(state) = self.focus.restored.take() {
                        driver.restore(&state);
                    }
                }
            }
            self.relevant = Some(Relevant {
                driver,
                catalog,
                config,
                last_task: previous.as_ref().and_then(|p| p.last_task.clone()),
                last_decision: None,
            });
        }
        let Some(relevant) = self.relevant.as_mut() else {
            return Decision::fallback_without_runtime("relevant mode is not running");
        };
        let mut decision = match &prepared.task {
            Some(text) => {
                let task = TaskContext::new(text, &input.touched_paths);
                let decision = relevant.driver.selection_for_prompt(&task).await;
                if input.settle && self.focus.dir.is_some() {
                    relevant.driver.on_final_assistant_turn_committed(&task);
                    relevant.driver.finish_background().await;
                }
                relevant.last_task = Some(task);
                decision
            }
            // A command turn is not a new prompt: the focus of the last one
            // holds (or the first selection runs with an empty task).
            None => match &relevant.last_decision {
                Some(decision) => decision.clone(),
                None => {
                    let task = TaskContext::new("", &input.touched_paths);
                    relevant.driver.selection_for_prompt(&task).await
                }
            },
        };
        decision.events.append(&mut self.focus.problems);
        relevant.last_decision = Some(decision.clone());
        decision
    }

    /// [`PromptSession::open`] for a synchronous host: runs it on a small
    /// runtime the session keeps for its later blocking calls. Works from a
    /// plain `main` and from inside a runtime (it then waits on a helper
    /// thread rather than nesting runtimes).
    pub fn open_blocking(options: SessionOptions) -> Result<PromptSession, PromptError> {
        PromptSession::open_blocking_with(None, options)
    }

    /// [`PromptSession::open_in`] for a synchronous host.
    pub fn open_in_blocking(
        workspace: Workspace,
        options: SessionOptions,
    ) -> Result<PromptSession, PromptError> {
        PromptSession::open_blocking_with(Some(workspace), options)
    }

    fn open_blocking_with(
        workspace: Option<Workspace>,
        options: SessionOptions,
    ) -> Result<PromptSession, PromptError> {
        let runtime = blocking_runtime()?;
        let mut session = run_on(&runtime, PromptSession::open_with(workspace, options, true))??;
        session.blocking = Some(runtime);
        Ok(session)
    }

    /// [`PromptSession::next_turn`] for a synchronous host (on the
    /// session's own runtime; see [`PromptSession::open_blocking`]).
    pub fn next_turn_blocking(&mut self, input: TurnInput) -> Result<Turn, PromptError> {
        let runtime = self.take_runtime()?;
        let result = run_on(&runtime, self.next_turn_with(input, true));
        self.blocking = Some(runtime);
        result?
    }

    /// [`PromptSession::finish_background`] for a synchronous host.
    pub fn finish_background_blocking(&mut self) -> Result<(), PromptError> {
        let runtime = self.take_runtime()?;
        let result = run_on(&runtime, self.finish_background_with(true));
        self.blocking = Some(runtime);
        result?
    }

    /// The session's own runtime, or a new one for a session opened with
    /// the async [`PromptSession::open`].
    fn take_runtime(&mut self) -> Result<tokio::runtime::Runtime, PromptError> {
        match self.blocking.take() {
            Some(runtime) => Ok(runtime),
            None => blocking_runtime(),
        }
    }
}

impl Drop for PromptSession {
    fn drop(&mut self) {
        // Dropping a runtime inside another runtime's context panics; a
        // session opened blocking and dropped inside async code must not.
        if let Some(runtime) = self.blocking.take() {
            runtime.shutdown_background();
        }
    }
}

/// The runtime of the blocking wrappers: current-thread (no worker thread
/// to start for a one-shot render); background selector work progresses
/// while a blocking call runs, and `settle` turns wait for it.
fn blocking_runtime() -> Result<tokio::runtime::Runtime, PromptError> {
    tokio::runtime::Builder::new_current_thread()
        .thread_name("bcode-prompt")
        .enable_time()
        .build()
        .map_err(|err| PromptError::Runtime {
            detail: err.to_string(),
        })
}

/// Runs `future` to completion on `runtime`, from a plain thread or from
/// inside another runtime (then on a scoped helper thread, since a runtime
/// cannot block a thread that is already driving one).
fn run_on<F>(runtime: &tokio::runtime::Runtime, future: F) -> Result<F::Output, PromptError>
where
    F: std::future::Future + Send,
    F::Output: Send,
{
    if tokio::runtime::Handle::try_current().is_err() {
        return Ok(runtime.block_on(future));
    }
    std::thread::scope(|scope| {
        scope
            .spawn(|| runtime.block_on(future))
            .join()
            .map_err(|_| PromptError::Runtime {
                detail: "the turn's thread panicked".to_owned(),
            })
    })
}

/// Runs blocking work on tokio's blocking pool, or on the calling thread
/// when `inline` (a blocking wrapper's thread: nothing else runs on it). A
/// panic in it is an error of this call, not of the host.
async fn blocking<T, F>(inline: bool, work: F) -> Result<T, PromptError>
where
    F: FnOnce() -> Result<T, PromptError> + Send + 'static,
    T: Send + 'static,
{
    if inline {
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|_| {
            Err(PromptError::Runtime {
                detail: "a blocking step panicked".to_owned(),
            })
        });
    }
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(err) => Err(PromptError::Runtime {
            detail: if err.is_panic() {
                "a blocking step panicked".to_owned()
            } else {
                err.to_string()
            },
        }),
    }
}

/// The blocking state, even after a panic in an earlier step (the state a
/// panic leaves is still consistent: every step replaces whole values).
fn lock(core: &Mutex<Core>) -> MutexGuard<'_, Core> {
    core.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
