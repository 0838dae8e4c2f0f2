//! `bcode-prompt mcp`: the registry served over MCP's stdio transport (or
//! Streamable HTTP with `--http`) with the skills extension and the
//! `search_skills` tool; the library does the serving, this is its edge
//! (the registry, the templates, the reload, the bearer token from the
//! environment, what the operator is told on stderr).

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use bcode_prompt::mcp::{DigestCache, HttpNotice, HttpOptions, SkillServer, StdioNotice};
use bcode_prompt::repository::Cache;
use bcode_prompt::skills::LiveRegistry;

use crate::cli_context::{CliContext, CliError};

/// Where the skills are served.
pub enum Transport {
    Stdio,
    Http {
        addr: std::net::SocketAddr,
        /// The environment variable holding the bearer token.
        token_env: Option<String>,
    },
}

pub fn run(context: &CliContext, transport: Transport) -> Result<ExitCode, CliError> {
    // How often the skill trees are re-checked while serving.
    let refresh_every = context.inputs.mcp_refresh();
    // Refused before anything is read: a non-loopback address without a
    // token, a token variable unset or empty.
    let http = match transport {
        Transport::Stdio => None,
        Transport::Http { addr, token_env } => {
            let mut options = HttpOptions::new(addr);
            if let Some(var) = token_env {
                let token = context.inputs.env.get(&var).cloned().unwrap_or_default();
                if token.is_empty() {
                    return Err(CliError::Usage(format!(
                        "--http-token-env {var}: the environment variable {var} is not set or empty"
                    )));
                }
                options = options.with_bearer_token(token);
            }
            if let Some(why) = options.refusal() {
                return Err(CliError::Usage(format!("--http {addr}: {why}")));
            }
            Some(options)
        }
    };
    let config = &context.workspace.config().config.skills;
    // Digests and front matter of files unchanged since the last serve
    // come from the state folder, as discovery's disk cache does; with the
    // disk cache off, the state folder still holds this run's entries (a
    // nameless scratch file), so they need not be held in memory.
    let state = context.workspace.state().cache(Cache::McpServer);
    let digests = match state {
        Some(dir) if config.disk_cache => DigestCache::open(dir),
        Some(dir) => DigestCache::scratch_in(dir),
        None => DigestCache::none(),
    }
    .with_racy_window(context.workspace.racy_window());
    // The discovery `render` uses: with `skills.disk_cache`, a start with
    // unchanged skill trees checks stamps instead of reading every skill.
    // Body-only edits need not be told apart: each entry checks the stamps
    // of its own files. When the digest cache holds no entry (a cold
    // start), each instruction file is read whole and recorded (stamp,
    // digest, front matter as written), so its entry does not read it
    // again; with entries kept, those come from there, and recording
    // would only hash files whose entries need no read.
    let mut discovery = context.workspace.discovery();
    if digests.kept() == 0 {
        discovery = discovery.recording_instructions();
    }
    let (mut live, registry) = LiveRegistry::summaries_only(
        discovery,
        if config.enabled {
            context.workspace.skill_roots()
        } else {
            eprintln!("bcode-prompt: skills are disabled (skills.enabled = false)");
            Vec::new()
        },
        Vec::new(),
    );
    // The `search_skills` tool is worded by the templates a render would
    // use (`system_prompt.templates_dir` may override `mcp/*.j2`).
    let templates = crate::skills_cmd::skill_templates(context)?;
    // A listing is as fresh as the last check of the skill trees: clients
    // of 2026-07-28 are told so (`ttlMs`).
    // The instruction files discovery has just found unchanged need not
    // be asked for their stamps again when the entries kept are checked.
    let records = live.take_records();
    let confirmed = live.confirmed_stamps();
    let server = SkillServer::with_digests(&registry, digests)
        .with_records(records)
        .with_confirmed(|path| confirmed.as_ref().and_then(|stamps| stamps.followed(path)))
        .with_cache_ttl(refresh_every)
        .with_templates(templates)
        .map_err(|err| CliError::Config(err.to_string()))?;
    for (id, why) in server.unserved() {
        eprintln!("bcode-prompt: skill `{id}` is not served: {why}");
    }
    for id in server.names_clients_refuse() {
        eprintln!(
            "bcode-prompt: skill `{id}` has a name that is not ASCII: {}",
            bcode_prompt::skills::portability::MCP_CLIENTS_REFUSE
        );
    }
    if http.is_none() {
        eprintln!(
            "bcode-prompt: serving {} skill(s) over MCP on stdin/stdout",
            server.len()
        );
    }
    // The folder watch (a watch per folder: a tenth of a second at 10,000
    // skills) is set up by the first refresh, off the path of the client's
    // first requests; it then checks stamps once, so an edit made before
    // the watch existed is still seen.
    let mut watching = false;
    let refusals = Arc::new(Refusals::default());
    let (told, reporter) = (Arc::clone(&refusals), server.clone());
    let refresh = move || {
        if !watching {
            watching = true;
            if let Err(reason) = live.watch() {
                eprintln!("bcode-prompt: skill edits are checked every half second: {reason}");
            }
        }
        told.tell(&reporter);
        live.begin_turn().map(|turn| turn.registry)
    };
    let ended = match http {
        None => bcode_prompt::mcp::run_stdio(server.clone(), refresh, refresh_every, tell_operator),
        Some(options) => {
            let count = server.len();
            bcode_prompt::mcp::run_http(
                server.clone(),
                options,
                refresh,
                refresh_every,
                move |notice| {
                    tell_http(notice, count);
                },
            )
        }
    };
    refusals.tell(&server);
    ended.map_err(|err| CliError::Usage(err.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

/// What the server notices while it serves, on stderr.
fn tell_operator(notice: StdioNotice) {
    if let StdioNotice::AnswersUnread { bytes } = notice {
        eprintln!(
            "bcode-prompt: the client has left {bytes} bytes of answers unread; no request is read until it reads them"
        );
    }
}

/// What the HTTP server notices while it serves, on stderr.
fn tell_http(notice: HttpNotice, count: usize) {
    match notice {
        HttpNotice::Listening { addr } => eprintln!(
            "bcode-prompt: serving {count} skill(s) over MCP at http://{addr}{}",
            bcode_prompt::mcp::MCP_PATH
        ),
        HttpNotice::TooManyConnections => eprintln!(
            "bcode-prompt: {} connections are open; more are answered 503",
            bcode_prompt::mcp::MAX_HTTP_CONNECTIONS
        ),
        _ => {}
    }
}

/// The skills whose files turned out not to be servable once read, told
/// to the operator once each, at a refresh or when serving ends.
#[derive(Default)]
struct Refusals(Mutex<BTreeSet<String>>);

impl Refusals {
    fn tell(&self, server: &SkillServer) {
        let mut told = match self.0.lock() {
            Ok(told) => told,
            Err(poisoned) => poisoned.into_inner(),
        };
        for (id, why) in server.refused() {
            if told.insert(id.clone()) {
                eprintln!("bcode-prompt: skill `{id}` is not served: {why}");
            }
        }
    }
}
