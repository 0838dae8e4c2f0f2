//! The edges a session opens with: the layered config (and the files it
//! came from), the one template environment with the operator's overrides
//! and the host's templates, the skill roots and a discovery with the disk
//! cache. Everything is read from the options' environment snapshot.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bcode_fs::{Confinement, Ownership, RepositoryRoot};
use bcode_prompt_config::{ConfigInputs, LoadedConfig, Origin};
use bcode_skill::{
    ConfiguredRoot, Discovery, DiscoveryOptions, DiskCache, RootsInput, SourceEnv, SourceRoot,
    source_roots,
};
use bcode_templates::{
    OverrideFiles, TemplateWarning, Templates, USER_DECIDED_TEMPLATES, read_overrides,
};

use crate::error::PromptError;
use crate::stamps::Stamps;
use crate::state::{Cache, StateFolder};

/// Loads the config and stamps every file it read or would read.
pub(crate) fn load_config(
    inputs: &ConfigInputs,
    racy_window: std::time::Duration,
) -> Result<(LoadedConfig, Stamps), PromptError> {
    // Stamped before reading: a write between the two shows up as a change.
    let stamps = Stamps::of(bcode_prompt_config::config_files(inputs), racy_window);
    let loaded = bcode_prompt_config::load(inputs)?;
    Ok((loaded, stamps))
}

/// The template environment: every embedded template, the host's own, and
/// the operator's overrides from `system_prompt.templates_dir`.
pub fn templates(
    loaded: &LoadedConfig,
    host: &[(String, String)],
) -> Result<Templates, PromptError> {
    templates_and_overrides(loaded, host).map(|(templates, _)| templates)
}

/// [`templates`], and the override files as applied (those the trust line
/// refused moved to `refused`), with every path read: a session stamps
/// them, and compares them to know whether an edit changed anything.
pub(crate) fn templates_and_overrides(
    loaded: &LoadedConfig,
    host: &[(String, String)],
) -> Result<(Templates, OverrideFiles), PromptError> {
    let mut read = match loaded.templates_dir() {
        Some(dir) => read_overrides(&dir, &templates_confinement(loaded))?,
        None => OverrideFiles::default(),
    };
    let from_repo = matches!(
        loaded.origin("system_prompt.templates_dir"),
        Some(Origin::RepoFile { .. })
    );
    if from_repo && !loaded.trust().is_trusted() {
        let (refused, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut read.overrides)
            .into_iter()
            .partition(|o| USER_DECIDED_TEMPLATES.contains(&o.name.as_str()));
        read.overrides = kept;
        read.refused
            .extend(refused.into_iter().map(|o| TemplateWarning::NotTrusted {
                name: o.name,
                file: o.file,
            }));
    }
    let templates = Templates::with_host(host.to_vec(), read.overrides.clone())?
        .with_warnings(read.refused.clone());
    Ok((templates, read))
}

/// Where override files may resolve: a folder the repository's own config
/// names is the repository's, confined to it (trusted or not); one the
/// user names may link anywhere but `/proc`, `/sys` and `/dev`.
fn templates_confinement(loaded: &LoadedConfig) -> Confinement {
    match loaded.origin("system_prompt.templates_dir") {
        Some(Origin::RepoFile { path }) => match path.parent().and_then(Path::parent) {
            Some(repo) => Confinement::within(repo),
            None => Confinement::anywhere_but_system(),
        },
        _ => Confinement::anywhere_but_system(),
    }
}

/// The repository root of the working folder `work` (absolute) as git
/// finds it, and who counts as the user: the process's effective user,
/// trusting the folders the user's layers of `inputs` list in
/// `trust.safe_directories` (read here, before the root is known; the
/// inputs' `repo` is not used). A root above `work` that another user owns
/// is refused (see `bcode_fs::repository_root`); the same [`Ownership`]
/// then decides the folders between the root and `work`.
pub(crate) fn repository_root(work: &Path, inputs: &ConfigInputs) -> (RepositoryRoot, Ownership) {
    let safe = bcode_prompt_config::safe_directories(inputs);
    let owners = Ownership::of_process(safe.any, &safe.folders);
    (bcode_fs::repository_root(work, &owners), owners)
}

/// The skill roots of the repository at `repo` seen from the working folder
/// `work` (the root itself, or a folder inside it), highest precedence
/// first, from the config and the environment snapshot. The repository's
/// roots in folders above `work` are searched only where `owners` takes
/// them for the user's.
pub(crate) fn skill_roots(
    repo: &Path,
    work: &Path,
    env: &BTreeMap<String, String>,
    loaded: &LoadedConfig,
    owners: &Ownership,
) -> Vec<SourceRoot> {
    let source_env = SourceEnv::from_map(env);
    let configured: Vec<ConfiguredRoot> = loaded
        .configured_skill_roots()
        .into_iter()
        .map(|root| ConfiguredRoot {
            written: root.written,
            resolved: root.resolved,
        })
        .collect();
    source_roots(RootsInput {
        repo,
        work,
        env: &source_env,
        config: &loaded.config.skills,
        configured: &configured,
        bundled: &[],
        owners: Some(owners),
    })
}

/// A discovery with the config's options; with a disk cache folder (see
/// `Workspace::discovery`) it keeps its last registry there, so a new process
/// with unchanged skill trees checks stamps instead of reading every skill
/// file.
pub(crate) fn discovery(options: DiscoveryOptions, disk_cache: Option<PathBuf>) -> Discovery {
    let discovery = Discovery::new(options);
    match disk_cache {
        Some(dir) => discovery.with_disk_cache(DiskCache::new(dir)),
        None => discovery,
    }
}

/// The discovery options of the config, with the host's racy window
/// (`bcode_fs::RACY_WINDOW` unless a test shortens it).
pub(crate) fn discovery_options(
    config: &bcode_prompt_config::SkillsConfig,
    racy_window: std::time::Duration,
) -> DiscoveryOptions {
    let mut options = DiscoveryOptions::from_config(config);
    options.walk.racy_window = racy_window;
    options
}

/// One provider per `[[skills.mcp_servers]]` entry of the config (none
/// without the `mcp` feature): each relays the skills its MCP server
/// publishes, as source `mcp:<name>`. Nothing starts here: a server is
/// started the first time its provider is asked for skills, so an empty
/// list costs nothing, not even a thread. Each server runs with the host's
/// environment snapshot and the entry's `env`, in the folder its `cwd`
/// names or else a neutral one (never the working folder, which may be the
/// repository's); a `url` entry's server is reached with its headers, their
/// `${env:NAME}` taken from the same snapshot; files fetched from it are
/// cached in `<state dir>/cache/mcp` when the state folder is safe to use
/// (see `bcode_fs::StateDir`), else not cached.
pub(crate) fn mcp_providers(
    loaded: &LoadedConfig,
    env: &BTreeMap<String, String>,
    state: &StateFolder,
) -> Vec<std::sync::Arc<dyn bcode_skill::SkillProvider>> {
    #[cfg(feature = "mcp")]
    {
        let servers = &loaded.config.skills.mcp_servers;
        if servers.is_empty() {
            return Vec::new();
        }
        let cache = state.cache(Cache::Mcp).map(|dir| dir.path().to_path_buf());
        servers
            .iter()
            .map(|entry| {
                let dir = loaded.mcp_server_dir(entry);
                let ca_file = loaded.mcp_server_ca_file(entry);
                let spec = bcode_skill_mcp::McpServerSpec::from_config(entry, env, dir, ca_file);
                std::sync::Arc::new(bcode_skill_mcp::McpProvider::spawn(spec, cache.clone()))
                    as std::sync::Arc<dyn bcode_skill::SkillProvider>
            })
            .collect()
    }
    #[cfg(not(feature = "mcp"))]
    {
        let _ = (loaded, env, state);
        Vec::new()
    }
}
