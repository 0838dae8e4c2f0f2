//! Consuming the skills an MCP server publishes (SEP-2640): [`McpProvider`]
//! speaks `bcode.skill/v1` to the registry and MCP to one server.
//!
//! `list` asks `skills/list` (every page, nothing else); `context` fetches a
//! skill's `SKILL.md` only when the skill is activated, checks its size and
//! digest against the listing, compares its front matter with the listing's
//! field by field, and refuses the skill on any difference. Every exchange
//! with the server, starting it included, is bounded by the entry's timeout:
//! a server that does not start, dies, hangs or answers garbage costs at
//! most that long, once, and then yields the same error (a diagnostic of the
//! registry) without being asked again.
//!
//! The provider trait is synchronous and may be called from inside a host's
//! async runtime, where blocking on another runtime would panic; so the MCP
//! client runs on a small runtime the provider owns (one worker thread,
//! started on first use), and calls wait for its answer on a channel with
//! the timeout.
//!
//! Nothing a server's skill declares grants anything: only the name, the
//! description and the body are taken, and `allowed-tools` or permission
//! fields stay advisory text in the body's front matter.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bcode_skill::{SkillProvider, parse::parse_document, provider::ProvidedSkill};
use bcode_skill_models::{
    Diagnostic, DiagnosticCode, McpServerConfig, SkillContextRequest, SkillError, SkillId,
    SkillManifest, SourceKind,
};
use rmcp::model::{
    PaginatedRequestParams, ReadResourceRequestParams, ResourceContents, Skill, SkillResource,
    SkillResources,
};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};

use crate::client_cache::FileCache;

/// `skills/list` pages read at most; a server that keeps handing out
/// cursors past this is cut off with an error.
pub const MAX_PAGES: usize = 1000;

/// Where a server whose entry names no `cwd` is started: a folder no
/// repository controls (the toolchain probes run there too), so a relative
/// command, a script named by a relative path or a `python -m` module is
/// never taken from the repository Bcode runs in.
pub const NEUTRAL_DIR: &str = "/";

/// Extra time a caller waits past the timeout for the runtime to report
/// that the timeout struck (the runtime's own timer fires first).
const GRACE: Duration = Duration::from_millis(500);

/// How to start one MCP server: a `[[skills.mcp_servers]]` entry with the
/// environment it runs in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServerSpec {
    /// The server's name (skill-id grammar): source `mcp:<name>`, ids
    /// `<name>:<skill name>`.
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its whole environment: the library never reads the process
    /// environment, so the host's snapshot is handed in (with the entry's
    /// own variables laid over it).
    pub env: BTreeMap<String, String>,
    /// The bound on starting it, one listing and one file read.
    pub timeout: Duration,
    /// The folder it is started in, as the entry's `cwd` resolves; `None`
    /// starts it in [`NEUTRAL_DIR`], never the host's working folder.
    pub dir: Option<PathBuf>,
}

impl McpServerSpec {
    /// The spec of a config entry, run in `host_env` with the entry's `env`
    /// laid over it, in `dir` (the entry's `cwd` as the host resolved it,
    /// e.g. with `LoadedConfig::mcp_server_dir`; `None`: a neutral folder).
    pub fn from_config(
        entry: &McpServerConfig,
        host_env: &BTreeMap<String, String>,
        dir: Option<PathBuf>,
    ) -> Self {
        let mut env = host_env.clone();
        env.extend(entry.env.clone());
        McpServerSpec {
            name: entry.name.clone(),
            command: entry.command.clone(),
            args: entry.args.clone(),
            env,
            timeout: Duration::from_millis(entry.timeout_ms),
            dir,
        }
    }
}

/// How the provider reaches its server.
#[derive(Debug)]
enum Link {
    /// It starts the program on first use.
    Command(McpServerSpec),
    /// The host handed in a session it holds.
    Peer(Peer<RoleClient>),
}

/// What the provider knows between calls.
#[derive(Debug, Default)]
struct State {
    /// The session it started (kept so the server lives as long as the
    /// provider; dropping it stops the server).
    running: Option<Started>,
    /// The peer requests go to.
    peer: Option<Peer<RoleClient>>,
    /// Why the server could not be reached, once it could not: not tried
    /// again, so a dead server costs its timeout once.
    failed: Option<String>,
    /// The last listing's entries, by the id they were given.
    entries: BTreeMap<SkillId, Skill>,
    /// What the last listing left out.
    diagnostics: Vec<Diagnostic>,
}

/// A `bcode.skill/v1` provider relaying one MCP server's skills.
#[derive(Debug)]
pub struct McpProvider {
    name: String,
    timeout: Duration,
    link: Link,
    cache: Option<FileCache>,
    runtime: OnceLock<Result<tokio::runtime::Runtime, String>>,
    state: Mutex<State>,
}

impl McpProvider {
    /// A provider that starts `spec`'s program the first time the registry
    /// asks for its skills. `cache` is the folder fetched files are kept in
    /// (`None`: no cache, as when the state folder was refused).
    pub fn spawn(spec: McpServerSpec, cache: Option<PathBuf>) -> McpProvider {
        McpProvider {
            name: spec.name.clone(),
            timeout: spec.timeout,
            link: Link::Command(spec),
            cache: cache.map(FileCache::new),
            runtime: OnceLock::new(),
            state: Mutex::new(State::default()),
        }
    }

    /// A provider over a session the host already holds (on any runtime):
    /// requests go through `peer`, each bounded by `timeout`.
    pub fn from_peer(
        name: impl Into<String>,
        peer: Peer<RoleClient>,
        timeout: Duration,
        cache: Option<PathBuf>,
    ) -> McpProvider {
        McpProvider {
            name: name.into(),
            timeout,
            link: Link::Peer(peer),
            cache: cache.map(FileCache::new),
            runtime: OnceLock::new(),
            state: Mutex::new(State::default()),
        }
    }

    fn fail(&self, reason: impl Into<String>) -> SkillError {
        SkillError::Provider {
            provider: self.name.clone(),
            reason: format!("MCP server `{}`: {}", self.name, reason.into()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Runs `work` on the provider's runtime, bounded by the timeout.
    fn run<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, String>> + Send + 'static,
    ) -> Result<T, String> {
        let runtime = self
            .runtime
            .get_or_init(|| {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("bcode-mcp")
                    .enable_all()
                    .build()
                    .map_err(|err| format!("cannot start the MCP client's runtime: {err}"))
            })
            .as_ref()
            .map_err(Clone::clone)?;
        let timeout = self.timeout;
        let (answer, answered) = std::sync::mpsc::sync_channel(1);
        runtime.spawn(async move {
            // Dropping `work` at the timeout (here, on the runtime) drops
            // whatever it started, a half-started server included.
            let result = match tokio::time::timeout(timeout, work).await {
                Ok(result) => result,
                Err(_) => Err(no_answer(timeout)),
            };
            let _ = answer.send(result);
        });
        answered
            .recv_timeout(timeout + GRACE)
            .unwrap_or_else(|_| Err(no_answer(timeout)))
    }

    /// The peer, starting the server when that was not tried yet.
    fn peer(&self, state: &mut State) -> Result<Peer<RoleClient>, String> {
        if let Some(why) = &state.failed {
            return Err(why.clone());
        }
        if let Some(peer) = &state.peer {
            return Ok(peer.clone());
        }
        let connected = match &self.link {
            Link::Peer(peer) => Ok((None, peer.clone())),
            Link::Command(spec) => self.run(start(spec.clone())).map(|started| {
                let peer = started.running.peer().clone();
                (Some(started), peer)
            }),
        };
        match connected {
            Ok((_, peer)) if !declares_skills(&peer) => {
                let why = NO_SKILLS.to_owned();
                state.failed = Some(why.clone());
                Err(why)
            }
            Ok((running, peer)) => {
                state.running = running;
                state.peer = Some(peer.clone());
                Ok(peer)
            }
            Err(why) => {
                state.failed = Some(why.clone());
                Err(why)
            }
        }
    }

    /// The listing entry of `id` and its `SKILL.md` resource.
    fn entry(&self, id: &SkillId) -> Result<(Skill, SkillResource), SkillError> {
        let state = self.state();
        let skill = state
            .entries
            .get(id)
            .cloned()
            .ok_or_else(|| self.fail(format!("it did not list `{id}`")))?;
        let resource = skill_md(&skill)
            .cloned()
            .ok_or_else(|| self.fail(format!("its entry for `{id}` lists no `{}`", skill.uri)))?;
        Ok((skill, resource))
    }

    /// The bytes of `resource`: from the cache while its digest matches,
    /// else read from the server, checked, and cached.
    fn fetch(&self, resource: &SkillResource) -> Result<Vec<u8>, SkillError> {
        if let Some(bytes) = self
            .cache
            .as_ref()
            .and_then(|cache| cache.get(&self.name, resource))
        {
            return Ok(bytes);
        }
        let peer = {
            let mut state = self.state();
            self.peer(&mut state).map_err(|why| self.fail(why))?
        };
        let uri = resource.uri.clone();
        let limit = resource.size;
        let bytes = self
            .run(async move {
                let result = peer
                    .read_resource(ReadResourceRequestParams::new(uri.clone()))
                    .await
                    .map_err(|err| format!("reading `{uri}` failed: {err}"))?;
                contents_of(&uri, result.contents, limit)
            })
            .map_err(|why| self.fail(why))?;
        resource.verify(&bytes).map_err(|err| {
            self.fail(format!(
                "{err}: the file changed since it was listed, so it is not used (list the skills again to pick up the change)"
            ))
        })?;
        if let Some(cache) = &self.cache {
            cache.put(&self.name, resource, &bytes);
        }
        Ok(bytes)
    }
}

impl Drop for McpProvider {
    fn drop(&mut self) {
        let state = std::mem::take(match self.state.get_mut() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        });
        if let Some(Ok(runtime)) = self.runtime.take() {
            // The session's parts stop the server when dropped, and they
            // need their runtime for that; dropping the runtime itself
            // would block, which an async host's thread may not do.
            let (done, dropped) = std::sync::mpsc::sync_channel::<()>(1);
            runtime.spawn(async move {
                drop(state);
                let _ = done.send(());
            });
            let _ = dropped.recv_timeout(GRACE);
            runtime.shutdown_background();
        }
    }
}

impl SkillProvider for McpProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn source_kind(&self) -> SourceKind {
        SourceKind::Mcp
    }

    fn list(&self) -> Result<Vec<ProvidedSkill>, SkillError> {
        let mut state = self.state();
        let listed = match (&self.link, &state.peer, &state.failed) {
            // Starting the server and its first listing share one timeout,
            // so a server that answers the handshake and then hangs costs
            // no more than one that never answers.
            (Link::Command(spec), None, None) => {
                self.run(start_and_list(spec.clone()))
                    .map(|(started, listed)| {
                        state.peer = Some(started.running.peer().clone());
                        state.running = Some(started);
                        listed
                    })
            }
            _ => self
                .peer(&mut state)
                .and_then(|peer| self.run(list_all(peer))),
        };
        let listed = match listed {
            Ok(listed) => listed,
            Err(why) => {
                // A server that failed or stopped answering is not asked
                // again.
                state.failed = Some(why.clone());
                state.peer = None;
                return Err(self.fail(why));
            }
        };
        state.entries.clear();
        state.diagnostics.clear();
        let mut provided = Vec::with_capacity(listed.len());
        for skill in listed {
            match self.admit(&skill) {
                Ok(entry) => {
                    state.entries.insert(entry.manifest.id.clone(), skill);
                    provided.push(entry);
                }
                Err(diagnostic) => state.diagnostics.push(*diagnostic),
            }
        }
        Ok(provided)
    }

    fn list_diagnostics(&self) -> Vec<Diagnostic> {
        self.state().diagnostics.clone()
    }

    fn describe(&self, id: &SkillId) -> Result<(SkillManifest, Vec<Diagnostic>), SkillError> {
        let (skill, _) = self.entry(id)?;
        let manifest = self
            .admit(&skill)
            .map_err(|d| self.fail(d.message))?
            .manifest;
        Ok((manifest, Vec::new()))
    }

    fn context(&self, request: &SkillContextRequest) -> Result<String, SkillError> {
        let (skill, resource) = self.entry(&request.id)?;
        let bytes = self.fetch(&resource)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| self.fail(format!("`{}` is not UTF-8 text", skill.uri)))?;
        let document = parse_document(&text)
            .map_err(|err| self.fail(format!("the front matter of `{}`: {err}", skill.uri)))?;
        let differences = front_matter_differences(&skill, document.fields);
        if !differences.is_empty() {
            return Err(self.fail(format!(
                "the front matter of `{}` differs from its listing in {}; the skill is not loaded",
                skill.uri,
                differences.join(", ")
            )));
        }
        Ok(document.body)
    }
}

impl McpProvider {
    /// The registry entry of a listed skill, or why it cannot be one.
    fn admit(&self, skill: &Skill) -> Result<ProvidedSkill, Box<Diagnostic>> {
        let name = &skill.frontmatter.name;
        let refuse = |code, message: String| {
            Box::new(Diagnostic::warning(
                code,
                format!("MCP server `{}`: {message}", self.name),
            ))
        };
        let id = SkillId::namespaced(&self.name, name).map_err(|err| {
            refuse(
                DiagnosticCode::InvalidId,
                format!("its skill {name:?} ({}) is left out: {err}", skill.uri),
            )
        })?;
        let Some(resource) = skill_md(skill) else {
            return Err(refuse(
                DiagnosticCode::ProviderFailed,
                format!(
                    "its skill `{id}` is left out: its entry lists no digest for `{}`, so the file could not be checked",
                    skill.uri
                ),
            ));
        };
        let mut manifest = SkillManifest::new(id);
        manifest.name = name.clone();
        manifest.description = skill.frontmatter.description.clone();
        Ok(ProvidedSkill {
            manifest,
            body_bytes: usize::try_from(resource.size).ok(),
        })
    }
}

/// A started server's process group, killed (at once, not on a task that
/// a shutting-down runtime might never run) when this is dropped: when the
/// handshake fails or times out, and when the provider goes.
#[derive(Debug)]
struct Group(Option<u32>);

impl Drop for Group {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.0.and_then(|pid| i32::try_from(pid).ok())
            && let Some(pid) = rustix::process::Pid::from_raw(pid)
        {
            // The group may be gone already; then there is nothing to do.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

/// A session with a server the provider started, and its process group.
#[derive(Debug)]
struct Started {
    running: RunningService<RoleClient, ()>,
    _group: Group,
}

/// Starts the server of `spec` and completes the MCP handshake.
async fn start(spec: McpServerSpec) -> Result<Started, String> {
    let dir = spec.dir.as_deref().unwrap_or(Path::new(NEUTRAL_DIR));
    let mut command = tokio::process::Command::new(&spec.command);
    command
        .args(&spec.args)
        .current_dir(dir)
        .env_clear()
        .envs(&spec.env)
        // Whatever happens to the session, the server does not outlive it.
        .kill_on_drop(true);
    let command = process_wrap::tokio::CommandWrap::from(command);
    #[cfg(unix)]
    let command = {
        let mut command = command;
        command.wrap(process_wrap::tokio::ProcessGroup::leader());
        command
    };
    let (transport, _) = TokioChildProcess::builder(command)
        // The server's own messages are not ours to print.
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| match &spec.dir {
            Some(dir) => format!(
                "`{}` could not be started in `{}` (its `cwd`): {err}",
                spec.command,
                dir.display()
            ),
            None => format!("`{}` could not be started: {err}", spec.command),
        })?;
    let group = Group(transport.id());
    let running = ()
        .serve(transport)
        .await
        .map_err(|err| format!("the MCP handshake with `{}` failed: {err}", spec.command))?;
    Ok(Started {
        running,
        _group: group,
    })
}

const NO_SKILLS: &str = "it does not declare the skills extension (io.modelcontextprotocol/skills)";

/// Whether the server declared SEP-2640 in its handshake.
fn declares_skills(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.supports_skills())
}

/// Starts the server of `spec` and reads its whole listing. On any error
/// the started server is dropped here, which kills its process group.
async fn start_and_list(spec: McpServerSpec) -> Result<(Started, Vec<Skill>), String> {
    let started = start(spec).await?;
    let peer = started.running.peer().clone();
    if !declares_skills(&peer) {
        return Err(NO_SKILLS.to_owned());
    }
    let listed = list_all(peer).await?;
    Ok((started, listed))
}

/// Every page of `skills/list`.
async fn list_all(peer: Peer<RoleClient>) -> Result<Vec<Skill>, String> {
    let mut skills = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..MAX_PAGES {
        let page = peer
            .list_skills(Some(
                PaginatedRequestParams::default().with_cursor(cursor.clone()),
            ))
            .await
            .map_err(|err| format!("skills/list failed: {err}"))?;
        skills.extend(page.skills);
        match page.next_cursor {
            None => return Ok(skills),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(format!("skills/list handed out the cursor {next:?} twice"));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(format!("skills/list did not end within {MAX_PAGES} pages"))
}

/// The bytes `resources/read` returned for `uri`, refused past `limit`
/// (the size the listing promised) before decoding.
fn contents_of(uri: &str, contents: Vec<ResourceContents>, limit: u64) -> Result<Vec<u8>, String> {
    let content = contents
        .into_iter()
        .find(|content| match content {
            ResourceContents::TextResourceContents { uri: at, .. }
            | ResourceContents::BlobResourceContents { uri: at, .. } => at == uri,
            _ => false,
        })
        .ok_or_else(|| format!("reading `{uri}` returned no contents for it"))?;
    let too_long = |len: usize| {
        (len as u64 > limit.saturating_mul(4) / 3 + 4)
            .then(|| format!("`{uri}` is longer than the {limit} bytes its listing says"))
    };
    match content {
        ResourceContents::TextResourceContents { text, .. } => match too_long(text.len()) {
            Some(why) => Err(why),
            None => Ok(text.into_bytes()),
        },
        ResourceContents::BlobResourceContents { blob, .. } => match too_long(blob.len()) {
            Some(why) => Err(why),
            None => STANDARD
                .decode(blob.as_bytes())
                .map_err(|err| format!("`{uri}` is not valid base64: {err}")),
        },
        _ => Err(format!(
            "reading `{uri}` returned contents of an unknown kind"
        )),
    }
}

/// The `SKILL.md` resource of a listed skill.
fn skill_md(skill: &Skill) -> Option<&SkillResource> {
    match &skill.resources {
        SkillResources::Files(files) => files.iter().find(|file| file.uri == skill.uri),
        _ => None,
    }
}

/// The front-matter fields on which `file` (as parsed from the fetched
/// `SKILL.md`) and the listing disagree, each named with backticks. A file
/// without `name` takes the name its URI gives, as the open specification
/// derives a name from the folder.
fn front_matter_differences(skill: &Skill, mut file: Map<String, Value>) -> Vec<String> {
    if !file.contains_key("name")
        && let Some(name) = rmcp::model::skill_name_from_uri(&skill.uri)
    {
        file.insert("name".to_owned(), Value::String(name.to_owned()));
    }
    let mut listed = skill.frontmatter.extra.clone();
    listed.insert(
        "name".to_owned(),
        Value::String(skill.frontmatter.name.clone()),
    );
    listed.insert(
        "description".to_owned(),
        Value::String(skill.frontmatter.description.clone()),
    );
    let keys: std::collections::BTreeSet<&String> = file.keys().chain(listed.keys()).collect();
    keys.into_iter()
        .filter(|key| file.get(*key) != listed.get(*key))
        .map(|key| format!("`{key}`"))
        .collect()
}

fn no_answer(timeout: Duration) -> String {
    format!("no answer within {} ms (timeout_ms)", timeout.as_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(extra: &[(&str, Value)]) -> Skill {
        let mut frontmatter = rmcp::model::SkillFrontmatter::new("pdf", "Reads PDFs.");
        for (key, value) in extra {
            frontmatter = frontmatter.with_field(*key, value.clone());
        }
        Skill::new(
            "skill://pdf/SKILL.md",
            frontmatter,
            SkillResources::Files(vec![SkillResource::from_bytes(
                "skill://pdf/SKILL.md",
                b"x",
            )]),
        )
    }

    fn fields(text: &str) -> Map<String, Value> {
        parse_document(text).map(|d| d.fields).unwrap_or_default()
    }

    #[test]
    fn front_matter_is_compared_field_by_field() {
        let skill = listed(&[("license", Value::String("MIT".into()))]);
        assert_eq!(
            front_matter_differences(
                &skill,
                fields("---\nname: pdf\ndescription: Reads PDFs.\nlicense: MIT\n---\nbody\n")
            ),
            Vec::<String>::new()
        );
        // No `name`: the URI's name stands in.
        assert_eq!(
            front_matter_differences(
                &skill,
                fields("---\ndescription: Reads PDFs.\nlicense: MIT\n---\nbody\n")
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            front_matter_differences(
                &skill,
                fields("---\nname: pdf\ndescription: Writes PDFs.\nallowed-tools: Bash\n---\n")
            ),
            vec!["`allowed-tools`", "`description`", "`license`"]
        );
    }

    #[test]
    fn contents_are_bounded_and_decoded() {
        let uri = "skill://pdf/SKILL.md";
        let text = |t: &str| ResourceContents::text(t, uri);
        assert_eq!(contents_of(uri, vec![text("abc")], 3), Ok(b"abc".to_vec()));
        assert_eq!(
            contents_of(uri, vec![ResourceContents::blob("YWJj", uri)], 3),
            Ok(b"abc".to_vec())
        );
        assert_eq!(
            contents_of(uri, vec![text(&"a".repeat(100))], 3),
            Err(format!(
                "`{uri}` is longer than the 3 bytes its listing says"
            ))
        );
        assert_eq!(
            contents_of(
                uri,
                vec![ResourceContents::text("a", "skill://other/SKILL.md")],
                3
            ),
            Err(format!("reading `{uri}` returned no contents for it"))
        );
    }
}
