//! `bcode-prompt mcp`: the registry served over MCP's stdio transport with
//! the skills extension; the library does the serving, this is its edge
//! (the registry, the reload, what the operator is told on stderr).

use std::process::ExitCode;
use std::time::Duration;

use bcode_skill::{DiscoveryOptions, LiveRegistry};
use bcode_skill_mcp::{DigestCache, SkillServer};

use crate::cli_context::{CliContext, CliError};

/// How often the skill tree is re-checked while serving.
const REFRESH: Duration = Duration::from_millis(500);

pub fn run(context: &CliContext) -> Result<ExitCode, CliError> {
    let config = &context.loaded.config.skills;
    let (mut live, registry) = LiveRegistry::new(
        DiscoveryOptions::from_config(config),
        if config.enabled {
            context.skill_roots()
        } else {
            eprintln!("bcode-prompt: skills are disabled (skills.enabled = false)");
            Vec::new()
        },
    );
    if let Err(reason) = live.watch() {
        eprintln!("bcode-prompt: skill edits are checked every half second: {reason}");
    }
    // Digests and front matter of files unchanged since the last serve
    // come from the state folder, as discovery's disk cache does.
    let digests = config
        .disk_cache
        .then(|| {
            bcode_skill_models::SourceEnv::from_vars(&|name| context.inputs.env.get(name).cloned())
                .state_dir()
        })
        .flatten()
        .map_or_else(DigestCache::none, |state| DigestCache::open(&state));
    let server = SkillServer::with_digests(&registry, digests);
    for (id, why) in server.unserved() {
        eprintln!("bcode-prompt: skill `{id}` is not served: {why}");
    }
    eprintln!(
        "bcode-prompt: serving {} skill(s) over MCP on stdin/stdout",
        server.len()
    );
    let refresh = move || live.begin_turn().map(|turn| turn.registry);
    bcode_skill_mcp::run_stdio(server, refresh, REFRESH)
        .map_err(|err| CliError::Usage(err.to_string()))?;
    Ok(ExitCode::SUCCESS)
}
