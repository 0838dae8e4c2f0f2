//! The [`Workspace`]: what one set of [`SessionOptions`] opens once and
//! every command and session starts from: the environment snapshot, the
//! repository root and working folder, the loaded config with the origin
//! of every value, the state folder with its named caches, and from them
//! the skill roots, the discovery (the registry) and the templates.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bcode_fs::{Ownership, RefusedRoot};
use bcode_prompt_config::{ConfigCheck, ConfigInputs, LoadedConfig};
use bcode_skill::{Discovery, DiscoveryOptions, SkillProvider, SourceRoot};
use bcode_templates::{OverrideFiles, Templates};

use crate::error::PromptError;
use crate::options::SessionOptions;
use crate::setup;
use crate::stamps::Stamps;
use crate::state::{Cache, StateFolder};

/// A repository as one set of options sees it, opened once: the
/// environment snapshot (empty when hermetic), the root found as git finds
/// it, who counts as the user, the loaded config and the state folder.
/// A [`crate::PromptSession`] opens one (or is given one with
/// [`crate::PromptSession::open_in`]); a command that needs no session
/// (listing skills, showing the config) uses it alone.
#[derive(Clone, Debug)]
pub struct Workspace {
    /// The inputs the config was loaded from; `repo` is the root.
    inputs: ConfigInputs,
    /// The working folder: the root, or a folder inside it.
    work: PathBuf,
    owners: Ownership,
    refused_root: Option<RefusedRoot>,
    racy_window: Duration,
    host_templates: Vec<(String, String)>,
    state: StateFolder,
    pub(crate) loaded: LoadedConfig,
    /// The config files read or looked for, stamped before reading.
    pub(crate) stamps: Stamps,
}

impl Workspace {
    /// Opens the workspace of `options`: checks the working folder, finds
    /// the repository root above it and loads the config layers. A missing
    /// folder or an invalid config is a [`PromptError`]; nothing else is
    /// read until asked for.
    pub fn open(options: &SessionOptions) -> Result<Workspace, PromptError> {
        let Located {
            inputs,
            work,
            owners,
            refused_root,
        } = Located::find(options)?;
        let (loaded, stamps) = setup::load_config(&inputs, options.racy_window)?;
        Ok(Workspace {
            state: StateFolder::of(&inputs.env),
            inputs,
            work,
            owners,
            refused_root,
            racy_window: options.racy_window,
            host_templates: options.host_templates.clone(),
            loaded,
            stamps,
        })
    }

    /// Checks the config the workspace of `options` would load, without
    /// opening it: the same environment, root and layers as
    /// [`Workspace::open`], but every layer is read and checked and its
    /// errors are reported in the [`ConfigCheck`] instead of stopping at the
    /// first (`config check`). Only a missing working folder is an error.
    pub fn check_config(options: &SessionOptions) -> Result<ConfigCheck, PromptError> {
        let located = Located::find(options)?;
        Ok(bcode_prompt_config::check(&located.inputs))
    }

    /// The same workspace with its config loaded again (the root is kept).
    pub(crate) fn reloaded(&self) -> Result<Workspace, PromptError> {
        let (loaded, stamps) = setup::load_config(&self.inputs, self.racy_window)?;
        Ok(Workspace {
            loaded,
            stamps,
            ..self.clone()
        })
    }

    /// The environment snapshot the workspace reads (empty when hermetic).
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.inputs.env
    }

    /// The working directory paths on the command line are relative to.
    pub fn cwd(&self) -> &Path {
        &self.inputs.cwd
    }

    /// The repository root, absolute.
    pub fn repo(&self) -> &Path {
        &self.inputs.repo
    }

    /// The working folder, absolute: the root or a folder inside it.
    pub fn work(&self) -> &Path {
        &self.work
    }

    /// Who counts as the user for the root and the folders above `work`.
    pub fn owners(&self) -> &Ownership {
        &self.owners
    }

    /// The nearest `.git` above the working folder, refused as the root
    /// because another user owns it.
    pub fn refused_root(&self) -> Option<&RefusedRoot> {
        self.refused_root.as_ref()
    }

    /// The loaded config: values, warnings and the origin of every value.
    pub fn config(&self) -> &LoadedConfig {
        &self.loaded
    }

    /// What the config was loaded from.
    pub fn config_inputs(&self) -> &ConfigInputs {
        &self.inputs
    }

    /// Stamps changed within this window are not trusted.
    pub fn racy_window(&self) -> Duration {
        self.racy_window
    }

    /// The user's state folder and its caches.
    pub fn state(&self) -> &StateFolder {
        &self.state
    }

    /// The skill roots, highest precedence first.
    pub fn skill_roots(&self) -> Vec<SourceRoot> {
        setup::skill_roots(
            &self.inputs.repo,
            &self.work,
            &self.inputs.env,
            &self.loaded,
            &self.owners,
        )
    }

    /// The discovery options of the config, with the racy window.
    pub fn discovery_options(&self) -> DiscoveryOptions {
        setup::discovery_options(&self.loaded.config.skills, self.racy_window)
    }

    /// `<state dir>/cache/skills` when `skills.disk_cache` is on and the
    /// state folder is safe to keep state in.
    pub(crate) fn disk_cache_dir(&self) -> Option<PathBuf> {
        if !self.loaded.config.skills.disk_cache {
            return None;
        }
        let dir = self.state.cache(Cache::Skills)?;
        Some(dir.path().to_path_buf())
    }

    /// The discovery a session uses, keeping its last registry in the disk
    /// cache when there is one (see [`Workspace::discovery_options`]).
    pub fn discovery(&self) -> Discovery {
        setup::discovery(self.discovery_options(), self.disk_cache_dir())
    }

    /// The routing cache a session over `roots` uses, beside the registry's
    /// disk cache and under the same switch; `None` without one.
    pub fn routing_cache(&self, roots: &[SourceRoot]) -> Option<bcode_skill::RoutingCache> {
        let dir = self.disk_cache_dir()?;
        Some(bcode_skill::RoutingCache::new(
            dir,
            &self.discovery_options(),
            roots,
        ))
    }

    /// One provider per `[[skills.mcp_servers]]` entry (none without the
    /// `mcp` feature); nothing starts until a provider is asked for skills.
    pub fn mcp_providers(&self) -> Vec<Arc<dyn SkillProvider>> {
        setup::mcp_providers(&self.loaded, &self.inputs.env, &self.state)
    }

    /// The template environment: every embedded template, the host's own
    /// and the operator's overrides.
    pub fn templates(&self) -> Result<Templates, PromptError> {
        self.templates_and_overrides()
            .map(|(templates, _)| templates)
    }

    /// [`Workspace::templates`] and the override files as applied.
    pub(crate) fn templates_and_overrides(
        &self,
    ) -> Result<(Templates, OverrideFiles), PromptError> {
        setup::templates_and_overrides(&self.loaded, &self.host_templates)
    }

    /// Where the git probe remembers what its status learns, when the state
    /// folder is safe to keep it in.
    pub(crate) fn git_cache(&self) -> Option<bcode_prompt_sections::GitCache> {
        let dir = self.state.cache(Cache::Git)?;
        Some(bcode_prompt_sections::GitCache {
            dir: dir.path().to_path_buf(),
            racy_window: self.racy_window,
            user_git_files: bcode_prompt_sections::GitCache::user_git_files(&self.inputs.env),
        })
    }
}

/// Where the workspace of a set of options is, before its config is read:
/// the config inputs with the root found as git finds it, the working
/// folder, who counts as the user and a root refused on the way.
struct Located {
    inputs: ConfigInputs,
    work: PathBuf,
    owners: Ownership,
    refused_root: Option<RefusedRoot>,
}

impl Located {
    /// Checks the working folder of `options` and finds the root above it.
    fn find(options: &SessionOptions) -> Result<Located, PromptError> {
        let mut env = options.env.clone();
        if options.hermetic {
            // A hermetic workspace reads nothing from the environment: no
            // user config or skills, no `BCODE_*` layer, no state folder.
            env.clear();
        }
        let given = options.cwd.join(&options.repo);
        match std::fs::metadata(&given) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(PromptError::Repository {
                    path: given,
                    detail: "not a folder".to_owned(),
                });
            }
            Err(err) => {
                return Err(PromptError::Repository {
                    path: given,
                    detail: err.to_string(),
                });
            }
        }
        // The folder given may be any folder inside a repository: its root
        // (trust, config, git, invariants) is found as git finds it.
        let work = bcode_text::lexical(&given);
        let mut inputs = options.config_inputs(&work);
        inputs.env = env;
        let (found, owners) = setup::repository_root(&work, &inputs);
        inputs.repo = found.root;
        Ok(Located {
            inputs,
            work,
            owners,
            refused_root: found.refused,
        })
    }
}
