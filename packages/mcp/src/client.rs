//! Consuming the skills an MCP server publishes (SEP-2640): [`McpProvider`]
//! speaks `bcode.skill/v1` to the registry and MCP to one server.
//!
//! `list` asks `skills/list` (every page, nothing else, each page cut down
//! to what is kept before the next, the whole listing bounded in entries
//! and bytes) and gives each entry one id, same-name entries told apart by
//! their skill paths, for the catalog and `context` alike; `context` fetches a
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
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bcode_prompt_config::McpServerConfig;
use bcode_skill::{ProvidedSkill, SkillProvider, parse_document};
use bcode_skill_models::{
    Diagnostic, DiagnosticCode, InvalidSkillId, SkillContextRequest, SkillError, SkillId,
    SkillManifest, SourceKind,
};
use rmcp::RoleClient;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientRequest, Implementation, ListSkillsRequest,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ResourceContents,
    SkillResource,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, Peer, PeerRequestOptions, RunningService,
};
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::{Map, Value};

use crate::client_cache::FileCache;
use crate::client_http::EntryError;
use crate::client_listing::{Listed, MAX_SKILL_BYTES, PageFault, Refused, decode_page};
use crate::client_tap::{RawResults, Tap};
use crate::client_tls::TlsSetupError;

/// `skills/list` pages read at most; a server that keeps handing out
/// cursors past this is cut off with an error.
pub const MAX_PAGES: usize = 1000;

/// Entries one listing may hold, over all its pages. Ten times the largest
/// registry Bcode serves in its benches (10,000 skills), and far more than
/// any catalog a model could read; a server listing more is broken or
/// hostile, and keeping its entries would only cost memory.
pub const MAX_LISTED_SKILLS: usize = 100_000;

/// Bytes one listing may hold, over all its pages: the JSON text of every
/// entry as listed (its URI, front matter and every resource it names).
/// Four times the largest single message the SDK's stdio transport reads
/// (16 MiB, the size SEP-2640 asks a host to accept for one skill's
/// files), so a listing may fill several full pages, and room for 100,000
/// ordinary entries of some 600 bytes each; what a server sends past it is
/// never kept.
pub const MAX_LISTING_BYTES: u64 = 64 * 1024 * 1024;

/// Where a server whose entry names no `cwd` is started: a folder no
/// repository controls (the toolchain probes run there too), so a relative
/// command, a script named by a relative path or a `python -m` module is
/// never taken from the repository Bcode runs in.
pub const NEUTRAL_DIR: &str = "/";

/// Extra time a caller waits past the timeout for the runtime to report
/// that the timeout struck (the runtime's own timer fires first).
const GRACE: Duration = Duration::from_millis(500);

/// Why the provider could not use its server, or refused what the server
/// sent: the registry is told it as the provider's error (a diagnostic
/// naming the server). Each `reason` is the SDK's or the system's words.
#[derive(Clone, Debug, thiserror::Error)]
pub(crate) enum ClientError {
    #[error("cannot start the MCP client's runtime: {0}")]
    Runtime(Arc<std::io::Error>),
    #[error("no answer within {} ms (timeout_ms)", .0.as_millis())]
    NoAnswer(Duration),
    #[error("it does not declare the skills extension (io.modelcontextprotocol/skills)")]
    NoSkills,
    #[error("`{command}` could not be started: {reason}")]
    Start {
        command: String,
        reason: Arc<std::io::Error>,
    },
    #[error("`{command}` could not be started in `{}` (its `cwd`): {reason}", .dir.display())]
    StartIn {
        command: String,
        dir: PathBuf,
        reason: Arc<std::io::Error>,
    },
    #[error("`{command}` was started without pipes")]
    NoPipes { command: String },
    #[error("the MCP handshake with `{command}` failed: {fault}")]
    Handshake {
        command: String,
        fault: HandshakeFault,
    },
    #[error("the MCP handshake over HTTP failed: {0}")]
    HttpHandshake(String),
    #[error(transparent)]
    Entry(#[from] EntryError),
    #[error(transparent)]
    Tls(#[from] TlsSetupError),
    #[error("skills/list failed: {0}")]
    ListFailed(String),
    #[error("skills/list: {0}")]
    ListUnwritable(String),
    #[error(transparent)]
    Page(#[from] PageFault),
    #[error(
        "skills/list lists more than {} skills, the bound on one listing; none of them are used",
        MAX_LISTED_SKILLS
    )]
    TooManySkills,
    #[error(
        "skills/list sent more than {} MiB of entries, the bound on one listing; none of them are used",
        MAX_LISTING_BYTES / (1024 * 1024)
    )]
    TooManyBytes,
    #[error("skills/list handed out the cursor {0:?} twice")]
    CursorTwice(String),
    #[error("skills/list did not end within {} pages", MAX_PAGES)]
    TooManyPages,
    #[error("skills/get of `{uri}` failed: {reason}")]
    GetFailed { uri: String, reason: String },
    #[error("skills/get of `{uri}`: {reason}")]
    GetUnwritable { uri: String, reason: String },
    #[error("skills/get of `{uri}`: {fault}")]
    GetRefused { uri: String, fault: PageFault },
    #[error("skills/get of `{uri}` answered with another skill, `{other}`")]
    GetOther { uri: String, other: String },
    /// The entry `skills/get` answered cannot be a registry entry.
    #[error("{}", .0.message())]
    NotAdmitted(Box<Diagnostic>),
    #[error(
        "`{taken}` names another of its skills, and the path of `{uri}` gives no id of its own ({fault})"
    )]
    NoPathId {
        taken: SkillId,
        uri: String,
        fault: PathIdFault,
    },
    #[error("`{taken}` and `{id}` name other skills of it, so `{uri}` has no id")]
    NoFreeId {
        taken: SkillId,
        id: SkillId,
        uri: String,
    },
    #[error("it did not list `{0}`")]
    NotListed(SkillId),
    #[error("`{path}` is not a path inside the folder of `{id}` (`{base}`)")]
    OutsideFolder {
        path: String,
        id: SkillId,
        base: String,
    },
    #[error("`{uri}` is not among the files its listing names for `{id}`, so it is not read")]
    Unlisted { uri: String, id: SkillId },
    #[error("reading `{uri}` failed: {reason}")]
    ReadFailed { uri: String, reason: String },
    #[error("reading `{uri}` returned no contents for it")]
    NoContents { uri: String },
    #[error("reading `{uri}` returned contents of an unknown kind")]
    UnknownContents { uri: String },
    #[error("`{uri}` is longer than the {limit} bytes its listing says")]
    LongerThanListed { uri: String, limit: u64 },
    #[error("`{uri}` is longer than the {} MiB a skill may hold", MAX_SKILL_BYTES / (1024 * 1024))]
    LongerThanSkill { uri: String },
    #[error("`{uri}` is not valid base64: {reason}")]
    NotBase64 { uri: String, reason: String },
    /// `reason`: how the bytes differ from the listing (size or digest).
    #[error(
        "{reason}: the file changed since it was listed, so it is not used (list the skills again to pick up the change)"
    )]
    Changed { reason: String },
    #[error("`{uri}` is not UTF-8 text")]
    NotUtf8 { uri: String },
    #[error("the front matter of `{uri}`: {reason}")]
    FrontMatter { uri: String, reason: String },
    /// `fields`: each differing field's name in backticks.
    #[error(
        "the front matter of `{uri}` differs from its listing in {}; the skill is not loaded",
        .fields.join(", ")
    )]
    Differs { uri: String, fields: Vec<String> },
}

/// Why the handshake with a started program failed.
#[derive(Clone, Debug, thiserror::Error)]
pub(crate) enum HandshakeFault {
    #[error("sending server/discover failed: {0}")]
    Send(Arc<std::io::Error>),
    #[error("reading the answer to server/discover failed: {0}")]
    Read(Arc<std::io::Error>),
    #[error("it closed its output before answering server/discover")]
    Closed,
    /// The SDK's own handshake failed, in its words.
    #[error("{0}")]
    Sdk(String),
}

/// Why a skill's path gives it no id of its own.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PathIdFault {
    #[error(transparent)]
    Uri(#[from] crate::uri::UriError),
    #[error("it has no path segments before the name")]
    NoSegments,
    #[error(transparent)]
    Id(#[from] InvalidSkillId),
}

/// How to reach one MCP server: a `[[skills.mcp_servers]]` entry with the
/// environment it runs in.
#[derive(Clone, PartialEq, Eq)]
pub struct McpServerSpec {
    /// The server's name (skill-id grammar): source `mcp:<name>`, ids
    /// `<name>:<skill name>`.
    pub name: String,
    /// A program to start, or a URL to reach.
    pub endpoint: McpEndpoint,
    /// The host's environment snapshot (for a program, with the entry's own
    /// variables laid over it; for a URL, where its headers' `${env:NAME}`
    /// are taken from): the library never reads the process environment.
    pub env: BTreeMap<String, String>,
    /// The bound on starting it, one listing and one file read.
    pub timeout: Duration,
    /// Whether its skills listed with `"dynamic"` files are loaded.
    pub allow_dynamic: bool,
}

/// Where an entry's server is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpEndpoint {
    /// A program speaking MCP on its standard input and output.
    Command {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// The folder it is started in, as the entry's `cwd` resolves;
        /// `None` starts it in [`NEUTRAL_DIR`], never the host's working
        /// folder.
        dir: Option<PathBuf>,
    },
    /// A server reached over Streamable HTTP.
    Url {
        /// Its endpoint (`http://127.0.0.1:8080/mcp`).
        url: String,
        /// The headers sent with every request, as written: each
        /// `${env:NAME}` is taken from the spec's `env` when the server is
        /// first reached, and its value is never shown.
        headers: BTreeMap<String, String>,
        /// For an `https` URL, a PEM file of roots trusted on top of the
        /// built-in ones (Mozilla's), e.g. a private server's own CA.
        /// Nothing turns the certificate's check off.
        ca_file: Option<PathBuf>,
    },
}

impl std::fmt::Debug for McpServerSpec {
    /// The environment's values are left out: they may hold secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServerSpec")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("timeout", &self.timeout)
            .field("allow_dynamic", &self.allow_dynamic)
            .finish()
    }
}

impl McpServerSpec {
    /// The spec of a config entry, run in `host_env` with the entry's `env`
    /// laid over it, in `dir` (the entry's `cwd` as the host resolved it,
    /// e.g. with `LoadedConfig::mcp_server_dir`; `None`: a neutral folder);
    /// or, for an entry naming `url`, reached with its headers, their
    /// variables taken from `host_env`, trusting the roots of `ca_file`
    /// (the entry's `ca_file` as the host resolved it, e.g. with
    /// `LoadedConfig::mcp_server_ca_file`) besides the built-in ones. (The
    /// config's loading has checked that an entry names exactly one of
    /// `command` and `url`; an entry naming neither is given an empty
    /// command, which fails to start.)
    pub fn from_config(
        entry: &McpServerConfig,
        host_env: &BTreeMap<String, String>,
        dir: Option<PathBuf>,
        ca_file: Option<PathBuf>,
    ) -> Self {
        let mut env = host_env.clone();
        let endpoint = match (&entry.url, &entry.command) {
            (Some(url), _) => McpEndpoint::Url {
                url: url.clone(),
                headers: entry.headers.clone(),
                ca_file,
            },
            (None, command) => {
                env.extend(entry.env.clone());
                McpEndpoint::Command {
                    command: command.clone().unwrap_or_default(),
                    args: entry.args.clone(),
                    dir,
                }
            }
        };
        McpServerSpec {
            name: entry.name.clone(),
            endpoint,
            env,
            timeout: Duration::from_millis(entry.timeout_ms),
            allow_dynamic: entry.allow_dynamic,
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
    /// The raw skills answers of the server the provider started (none for
    /// a session the host handed in: its answers are read as the SDK
    /// decoded them).
    raw: Option<RawResults>,
    /// Why the server could not be reached, once it could not: not tried
    /// again, so a dead server costs its timeout once.
    failed: Option<ClientError>,
    /// The last listing's entries, by the id they were given: one id, one
    /// entry, for the catalog, `describe` and `context` alike.
    entries: BTreeMap<SkillId, Admitted>,
    /// What the last listing left out.
    diagnostics: Vec<Diagnostic>,
    /// Until when the last listing is fresh (its `ttlMs`); `None`: ask
    /// again each time.
    fresh_until: Option<std::time::Instant>,
}

/// What the registry is given of the admitted entries.
fn provided(entries: &BTreeMap<SkillId, Admitted>) -> Vec<ProvidedSkill> {
    entries
        .values()
        .map(|entry| ProvidedSkill {
            manifest: entry.manifest(),
            body_bytes: entry
                .listed
                .file(&entry.listed.uri)
                .and_then(|file| usize::try_from(file.size).ok()),
        })
        .collect()
}

/// A `bcode.skill/v1` provider relaying one MCP server's skills.
#[derive(Debug)]
pub struct McpProvider {
    name: String,
    /// The values its headers take from the environment (and the headers
    /// whole), struck from every message it makes: a server may echo what
    /// it was sent into an error, and no diagnostic shows a token.
    secrets: Vec<String>,
    timeout: Duration,
    allow_dynamic: bool,
    link: Link,
    cache: Option<FileCache>,
    runtime: OnceLock<Result<tokio::runtime::Runtime, ClientError>>,
    state: Mutex<State>,
}

impl McpProvider {
    /// A provider that starts `spec`'s program the first time the registry
    /// asks for its skills. `cache` is the folder fetched files are kept in
    /// (`None`: no cache, as when the state folder was refused).
    pub fn spawn(spec: McpServerSpec, cache: Option<PathBuf>) -> McpProvider {
        McpProvider {
            name: spec.name.clone(),
            secrets: match &spec.endpoint {
                McpEndpoint::Url { headers, .. } => crate::client_http::secrets(headers, &spec.env),
                McpEndpoint::Command { .. } => Vec::new(),
            },
            timeout: spec.timeout,
            allow_dynamic: spec.allow_dynamic,
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
            secrets: Vec::new(),
            timeout,
            allow_dynamic: true,
            link: Link::Peer(peer),
            cache: cache.map(FileCache::new),
            runtime: OnceLock::new(),
            state: Mutex::new(State::default()),
        }
    }

    /// Whether skills that list their files as `"dynamic"` (no digest
    /// vouches for them) are loaded: yes unless told otherwise, as for a
    /// server entry that does not say; `false` leaves them out, as a
    /// server entry's `allow_dynamic = false` does.
    pub fn allow_dynamic(mut self, allow: bool) -> McpProvider {
        self.allow_dynamic = allow;
        self
    }

    fn fail(&self, reason: ClientError) -> SkillError {
        let reason = match reason {
            // Its diagnostic names the server already.
            ClientError::NotAdmitted(diagnostic) => diagnostic.message().into_owned(),
            other => format!("MCP server `{}`: {other}", self.name),
        };
        SkillError::Provider {
            provider: self.name.clone(),
            reason: crate::client_http::redact(reason, &self.secrets),
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
        work: impl Future<Output = Result<T, ClientError>> + Send + 'static,
    ) -> Result<T, ClientError> {
        let runtime = self
            .runtime
            .get_or_init(|| {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("bcode-mcp")
                    .enable_all()
                    .build()
                    .map_err(|err| ClientError::Runtime(Arc::new(err)))
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
                Err(_) => Err(ClientError::NoAnswer(timeout)),
            };
            let _ = answer.send(result);
        });
        answered
            .recv_timeout(timeout + GRACE)
            .unwrap_or_else(|_| Err(ClientError::NoAnswer(timeout)))
    }

    /// The peer, starting the server when that was not tried yet.
    fn peer(&self, state: &mut State) -> Result<Peer<RoleClient>, ClientError> {
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
                state.failed = Some(ClientError::NoSkills);
                Err(ClientError::NoSkills)
            }
            Ok((running, peer)) => {
                state.raw = running.as_ref().map(|started| started.raw.clone());
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

    /// The server's name and the `skill://` folder the files of skill `id`
    /// are named below (`skill://pdf/`), as its listing entry gives it: a
    /// host tells the model these with the skill's `SKILL.md`, so that
    /// `references/FORM.md` resolves to `skill://pdf/references/FORM.md`
    /// and is read through [`McpProvider::read_file`].
    pub fn skill_base(&self, id: &SkillId) -> Result<(String, String), SkillError> {
        let entry = self.entry(id)?;
        Ok((self.name.clone(), entry.listed.base().to_owned()))
    }

    /// Reads the supporting file `path` (relative to the skill's folder,
    /// as the model reads it in `SKILL.md`: `references/FORM.md`) of skill
    /// `id`, now, not before (SEP-2640: "never in advance"): from the cache
    /// while it matches the listing, else from the server, checked against
    /// the entry's size and digest. A path that could climb, or a file the
    /// entry does not list, is refused without asking the server. A skill
    /// listed as `"dynamic"` is read unverified (the caller is told by
    /// [`McpProvider::is_dynamic`]).
    pub fn read_file(&self, id: &SkillId, path: &str) -> Result<Vec<u8>, SkillError> {
        let entry = self.entry(id)?;
        let listed = &entry.listed;
        if path.is_empty()
            || path.starts_with('/')
            || path
                .split('/')
                .any(|segment| segment.is_empty() || segment == "." || segment == "..")
            || path.contains(['\\', '?', '#'])
        {
            return Err(self.fail(ClientError::OutsideFolder {
                path: path.to_owned(),
                id: id.clone(),
                base: listed.base().to_owned(),
            }));
        }
        let uri = format!("{}{path}", listed.base());
        if listed.is_dynamic() {
            return self.fetch_unverified(&uri);
        }
        match listed.file(&uri) {
            Some(file) => {
                let file = file.clone();
                self.fetch(&file)
            }
            None => Err(self.fail(ClientError::Unlisted {
                uri,
                id: id.clone(),
            })),
        }
    }

    /// Whether skill `id` lists its files as `"dynamic"`: generated content
    /// that no digest vouches for, which a host may decline.
    pub fn is_dynamic(&self, id: &SkillId) -> Result<bool, SkillError> {
        Ok(self.entry(id)?.listed.is_dynamic())
    }

    /// Loads a skill given only its `SKILL.md` URI (SEP-2640: hosts must
    /// support it), listed or not: asks `skills/get`, checks the entry as a
    /// listing's, and keeps it under the id it would get in the listing
    /// (its plain `<server>:<name>` unless another skill holds it, then its
    /// path id). Returns that id; [`SkillProvider::context`] then loads it.
    pub fn load_uri(&self, uri: &str) -> Result<SkillId, SkillError> {
        let (peer, raw) = {
            let mut state = self.state();
            let peer = self.peer(&mut state).map_err(|why| self.fail(why))?;
            (peer, state.raw.clone())
        };
        let wanted = uri.to_owned();
        let text = self
            .run(async move { get_skill(&peer, raw.as_ref(), wanted).await })
            .map_err(|why| self.fail(why))?;
        let listed = crate::client_listing::decode_get(&text).map_err(|fault| {
            self.fail(ClientError::GetRefused {
                uri: uri.to_owned(),
                fault,
            })
        })?;
        if listed.uri != uri {
            return Err(self.fail(ClientError::GetOther {
                uri: uri.to_owned(),
                other: listed.uri,
            }));
        }
        let mut state = self.state();
        if let Some((id, _)) = state
            .entries
            .iter()
            .find(|(_, entry)| entry.listed.uri == uri)
        {
            let id = id.clone();
            if let Some(entry) = state.entries.get_mut(&id) {
                entry.listed = listed;
            }
            return Ok(id);
        }
        let mut entry = self
            .admit(listed)
            .map_err(|diagnostic| self.fail(ClientError::NotAdmitted(diagnostic)))?;
        if state.entries.contains_key(&entry.id) {
            let id = path_id(&self.name, &entry.listed).map_err(|fault| {
                self.fail(ClientError::NoPathId {
                    taken: entry.id.clone(),
                    uri: uri.to_owned(),
                    fault,
                })
            })?;
            if state.entries.contains_key(&id) {
                return Err(self.fail(ClientError::NoFreeId {
                    taken: entry.id.clone(),
                    id,
                    uri: uri.to_owned(),
                }));
            }
            entry.id = id;
        }
        let id = entry.id.clone();
        state.entries.insert(id.clone(), entry);
        Ok(id)
    }

    /// The admitted listing entry of `id`.
    fn entry(&self, id: &SkillId) -> Result<Admitted, SkillError> {
        self.state()
            .entries
            .get(id)
            .cloned()
            .ok_or_else(|| self.fail(ClientError::NotListed(id.clone())))
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
                    .map_err(|err| ClientError::ReadFailed {
                        uri: uri.clone(),
                        reason: err.to_string(),
                    })?;
                contents_of(&uri, result.contents, limit)
            })
            .map_err(|why| self.fail(why))?;
        resource.verify(&bytes).map_err(|err| {
            self.fail(ClientError::Changed {
                reason: err.to_string(),
            })
        })?;
        if let Some(cache) = &self.cache {
            cache.put(&self.name, resource, &bytes);
        }
        Ok(bytes)
    }

    /// The bytes of `uri` of a skill whose files are `"dynamic"`: read
    /// each time, never cached (nothing says when they change), and
    /// bounded by the SEP's limit on a skill's files, but not verifiable.
    fn fetch_unverified(&self, uri: &str) -> Result<Vec<u8>, SkillError> {
        let peer = {
            let mut state = self.state();
            self.peer(&mut state).map_err(|why| self.fail(why))?
        };
        let uri = uri.to_owned();
        self.run(async move {
            let result = peer
                .read_resource(ReadResourceRequestParams::new(uri.clone()))
                .await
                .map_err(|err| ClientError::ReadFailed {
                    uri: uri.clone(),
                    reason: err.to_string(),
                })?;
            let bytes = contents_of(&uri, result.contents, MAX_SKILL_BYTES)?;
            if bytes.len() as u64 > MAX_SKILL_BYTES {
                return Err(ClientError::LongerThanSkill { uri });
            }
            Ok(bytes)
        })
        .map_err(|why| self.fail(why))
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
        // A listing is used again, unasked, while the server's `ttlMs`
        // says it is fresh (SEP-2549). Its `cacheScope` asks nothing more
        // of this cache, which is the user's own, in memory.
        if state.failed.is_none()
            && let Some(until) = state.fresh_until
            && std::time::Instant::now() < until
        {
            return Ok(provided(&state.entries));
        }
        let listed = match (&self.link, &state.peer, &state.failed) {
            // Starting the server and its first listing share one timeout,
            // so a server that answers the handshake and then hangs costs
            // no more than one that never answers.
            (Link::Command(spec), None, None) => {
                self.run(start_and_list(spec.clone()))
                    .map(|(started, listed)| {
                        state.peer = Some(started.running.peer().clone());
                        state.raw = Some(started.raw.clone());
                        state.running = Some(started);
                        listed
                    })
            }
            _ => {
                let raw = state.raw.clone();
                self.peer(&mut state)
                    .and_then(|peer| self.run(list_all(peer, raw)))
            }
        };
        let listed = match listed {
            Ok(listed) => listed,
            Err(why) => {
                // A server that failed or stopped answering is not asked
                // again.
                state.failed = Some(why.clone());
                state.peer = None;
                state.raw = None;
                return Err(self.fail(why));
            }
        };
        state.fresh_until = listed
            .ttl_ms
            .filter(|ttl| *ttl > 0)
            .and_then(|ttl| std::time::Instant::now().checked_add(Duration::from_millis(ttl)));
        let (entries, diagnostics) = self.admit_all(listed.entries);
        state.entries = entries;
        state.diagnostics = diagnostics;
        Ok(provided(&state.entries))
    }

    fn list_diagnostics(&self) -> Vec<Diagnostic> {
        self.state().diagnostics.clone()
    }

    fn describe(&self, id: &SkillId) -> Result<(SkillManifest, Vec<Diagnostic>), SkillError> {
        Ok((self.entry(id)?.manifest(), Vec::new()))
    }

    fn resource_base(&self, id: &SkillId) -> Option<String> {
        self.skill_base(id).ok().map(|(_, base)| base)
    }

    fn read_file(&self, id: &SkillId, path: &str) -> Result<Vec<u8>, SkillError> {
        McpProvider::read_file(self, id, path)
    }

    fn context(&self, request: &SkillContextRequest) -> Result<String, SkillError> {
        let entry = self.entry(&request.id)?;
        let skill = &entry.listed;
        let bytes = match skill.file(&skill.uri) {
            Some(skill_md) => self.fetch(skill_md)?,
            None => self.fetch_unverified(&skill.uri)?,
        };
        let text = String::from_utf8(bytes).map_err(|_| {
            self.fail(ClientError::NotUtf8 {
                uri: skill.uri.clone(),
            })
        })?;
        let document = parse_document(&text).map_err(|err| {
            self.fail(ClientError::FrontMatter {
                uri: skill.uri.clone(),
                reason: err.to_string(),
            })
        })?;
        let differences = front_matter_differences(skill, document.fields);
        if !differences.is_empty() {
            return Err(self.fail(ClientError::Differs {
                uri: skill.uri.clone(),
                fields: differences,
            }));
        }
        Ok(document.body)
    }
}

impl McpProvider {
    /// The entries of a listing by the ids they get, and what was left out.
    ///
    /// A name is a label, not an identity (SEP-2640: the pair of server and
    /// URI is): two entries may share one (`skill://git-workflow/SKILL.md`
    /// and `skill://acme/git-workflow/SKILL.md`). Of the entries of one
    /// name, the one with the shortest skill path (then the smallest URI)
    /// keeps `<server>:<name>`, whatever order the server lists them in;
    /// every other one is named by its skill path, its segments joined by
    /// `--` (`<server>:acme--git-workflow`), since `/` cannot be in an id
    /// and the open specification forbids `--` in a name, so no plain name
    /// takes it. An entry whose path gives no valid id of its own, or
    /// an id another entry holds, is left out with a diagnostic, never
    /// dropped in silence; an entry listed again under the same URI is one
    /// entry (the first listed), with a diagnostic.
    fn admit_all(
        &self,
        listed: Vec<Result<Listed, Refused>>,
    ) -> (BTreeMap<SkillId, Admitted>, Vec<Diagnostic>) {
        let mut diagnostics = Vec::new();
        let mut uris = std::collections::BTreeSet::new();
        let mut by_name: BTreeMap<SkillId, Vec<Admitted>> = BTreeMap::new();
        for skill in listed {
            let skill = match skill {
                Ok(skill) => skill,
                Err(refused) => {
                    diagnostics.push(self.left_out(
                        DiagnosticCode::ProviderFailed,
                        match refused.uri {
                            Some(uri) => format!("its skill `{uri}` is left out: {}", refused.why),
                            None => format!("an entry of its listing is left out: {}", refused.why),
                        },
                    ));
                    continue;
                }
            };
            if !uris.insert(skill.uri.clone()) {
                diagnostics.push(self.left_out(
                    DiagnosticCode::DuplicateId,
                    format!(
                        "it lists `{}` more than once; the first entry is used",
                        skill.uri
                    ),
                ));
                continue;
            }
            match self.admit(skill) {
                Ok(entry) => {
                    if entry.listed.is_dynamic() {
                        diagnostics.push(self.left_out(
                            DiagnosticCode::InvalidField,
                            format!(
                                "its skill `{}` lists its files as \"dynamic\": no digest vouches for them, so they are loaded unverified (`allow_dynamic = false` leaves such skills out)",
                                entry.listed.uri
                            ),
                        ));
                    }
                    by_name.entry(entry.id.clone()).or_default().push(entry)
                }
                Err(diagnostic) => diagnostics.push(*diagnostic),
            }
        }
        let mut entries = BTreeMap::new();
        let mut others = Vec::new();
        for (id, mut group) in by_name {
            group.sort_by(|a, b| {
                (path_depth(&a.listed.uri), &a.listed.uri)
                    .cmp(&(path_depth(&b.listed.uri), &b.listed.uri))
            });
            let mut group = group.into_iter();
            if let Some(first) = group.next() {
                entries.insert(id, first);
            }
            others.extend(group);
        }
        // The plain ids are all given first, so whether a path id is free
        // never depends on the order the names sort in.
        for mut entry in others {
            let plain = entry.id.clone();
            let id = match path_id(&self.name, &entry.listed) {
                Ok(id) if !entries.contains_key(&id) => id,
                Ok(id) => {
                    diagnostics.push(self.left_out(
                        DiagnosticCode::DuplicateId,
                        format!(
                            "its skill `{}` is left out: `{plain}` names another of its skills, and the id its path gives, `{id}`, is taken too",
                            entry.listed.uri
                        ),
                    ));
                    continue;
                }
                Err(why) => {
                    diagnostics.push(self.left_out(
                        DiagnosticCode::DuplicateId,
                        format!(
                            "its skill `{}` is left out: `{plain}` names another of its skills, and its path gives no id of its own ({why})",
                            entry.listed.uri
                        ),
                    ));
                    continue;
                }
            };
            entry.id = id.clone();
            entries.insert(id, entry);
        }
        (entries, diagnostics)
    }

    fn left_out(&self, code: DiagnosticCode, message: String) -> Diagnostic {
        Diagnostic::warning(
            code,
            crate::client_http::redact(
                format!("MCP server `{}`: {message}", self.name),
                &self.secrets,
            ),
        )
    }

    /// A listed skill as a registry entry under its plain id
    /// (`<server>:<name>`), or why it cannot be one.
    fn admit(&self, skill: Listed) -> Result<Admitted, Box<Diagnostic>> {
        let name = &skill.name;
        let id = SkillId::namespaced(&self.name, name).map_err(|err| {
            Box::new(self.left_out(
                DiagnosticCode::InvalidId,
                format!("its skill {name:?} ({}) is left out: {err}", skill.uri),
            ))
        })?;
        if skill.is_dynamic() && !self.allow_dynamic {
            return Err(Box::new(self.left_out(
                DiagnosticCode::Disabled,
                format!(
                    "its skill `{}` is left out: it lists its files as \"dynamic\", which no digest vouches for, and its entry says `allow_dynamic = false`",
                    skill.uri
                ),
            )));
        }
        Ok(Admitted { id, listed: skill })
    }
}

/// A listed skill the registry has: the id it was given and its entry.
#[derive(Clone, Debug)]
struct Admitted {
    id: SkillId,
    listed: Listed,
}

impl Admitted {
    /// What the registry knows of it: only the name and the description
    /// are taken from the server (see the module's last paragraph).
    fn manifest(&self) -> SkillManifest {
        let mut manifest = SkillManifest::new(self.id.clone());
        manifest.name = self.listed.name.clone();
        manifest.description = self.listed.description.clone();
        manifest
    }
}

/// How deep a URI's skill path is, for ordering entries of one name: the
/// shortest path keeps the plain id.
fn path_depth(uri: &str) -> usize {
    uri.matches('/').count()
}

/// The id of a skill named by its skill path: `<server>:<segment>--...--<name>`
/// (`skill://acme/git-workflow/SKILL.md` gives `<server>:acme--git-workflow`),
/// or why there is none.
fn path_id(server: &str, skill: &Listed) -> Result<SkillId, PathIdFault> {
    let mut segments = crate::uri::skill_path(&skill.uri).map_err(PathIdFault::Uri)?;
    // The last segment is the skill's folder; the listed name stands for it
    // as it does for the plain id.
    segments.pop();
    if segments.is_empty() {
        return Err(PathIdFault::NoSegments);
    }
    segments.push(skill.name.clone());
    Ok(SkillId::namespaced(server, &segments.join("--"))?)
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

/// A session with a server the provider started, its process and its
/// process group.
#[derive(Debug)]
struct Started {
    running: RunningService<RoleClient, ClientConfig>,
    raw: RawResults,
    /// The program, for a `command` entry (none over HTTP).
    _child: Option<ChildProcess>,
    _group: Group,
}

/// The started program, kept so that it is reaped; the group's kill stops
/// it.
struct ChildProcess(#[allow(dead_code)] Box<dyn process_wrap::tokio::ChildWrapper>);

impl std::fmt::Debug for ChildProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChildProcess")
    }
}

/// What the consumer tells a server about itself: its name and version,
/// and that it speaks the skills extension (SEP-2133: clients advertise the
/// extensions they support, and some servers serve skills only to a client
/// that does).
fn client_config() -> ClientConfig {
    let mut capabilities = ClientCapabilities::default();
    capabilities.extensions = Some(BTreeMap::from([(
        rmcp::model::SKILLS_EXTENSION_ID.to_owned(),
        Map::new(),
    )]));
    ClientConfig::new(
        capabilities,
        Implementation::new("bcode-prompt", env!("CARGO_PKG_VERSION")),
    )
}

/// The id of the consumer's own `server/discover` probe: a string, so no
/// id the SDK counts from 0 can be taken for it.
const PROBE_ID: &str = "bcode-discover";

/// Which protocol era a server speaks: asks `server/discover` on protocol
/// 2026-07-28 over the server's pipes, before the SDK takes them, and
/// reads lines until its answer. A result means the 2026-07-28 era
/// (servers that serve skills only there, as FastMCP's and
/// `agentskills-mcp-server` are, are reached); an error, the 2025-11-25
/// era (`initialize`), as JSON-RPC has a server of that era answer a
/// method it does not know. The SDK's own fallback gives up on a discovery
/// after a fixed 10 s, then sends `initialize` while the late answer is
/// still coming, which fails a server that takes longer to start (Python
/// with FastMCP's imports on a busy machine); this probe waits as long as
/// the entry's timeout, which bounds it with the rest of the start. Lines
/// that are not its answer (a log notice, say) are skipped, each read
/// within the SDK's bound on a line.
async fn probe<R, W>(read: &mut R, write: &mut W) -> Result<bool, HandshakeFault>
where
    R: tokio::io::AsyncBufRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
    let config = client_config();
    let meta = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": ProtocolVersion::V_2026_07_28,
        "io.modelcontextprotocol/clientInfo": config.client_info,
        "io.modelcontextprotocol/clientCapabilities": config.capabilities,
    });
    // Written in the order JSON-RPC messages usually are, for servers that
    // read them less than fully.
    let mut line = format!(
        r#"{{"jsonrpc":"2.0","id":"{PROBE_ID}","method":"server/discover","params":{{"_meta":{meta}}}}}"#
    )
    .into_bytes();
    line.push(b'\n');
    let sending = |err| HandshakeFault::Send(Arc::new(err));
    write.write_all(&line).await.map_err(sending)?;
    write.flush().await.map_err(sending)?;
    #[derive(serde::Deserialize)]
    struct Answer {
        id: Option<Value>,
        result: Option<serde::de::IgnoredAny>,
        error: Option<serde::de::IgnoredAny>,
    }
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = crate::client_tap::MAX_LINE as u64 + 1;
        let read_len = (&mut *read)
            .take(limit)
            .read_until(b'\n', &mut line)
            .await
            .map_err(|err| HandshakeFault::Read(Arc::new(err)))?;
        if read_len == 0 {
            return Err(HandshakeFault::Closed);
        }
        if read_len as u64 >= limit && line.last() != Some(&b'\n') {
            // Past the bound: the rest of the line is skipped, unread.
            loop {
                line.clear();
                let more = (&mut *read)
                    .take(limit)
                    .read_until(b'\n', &mut line)
                    .await
                    .map_err(|err| HandshakeFault::Read(Arc::new(err)))?;
                if more == 0 || line.last() == Some(&b'\n') {
                    break;
                }
            }
            continue;
        }
        let Ok(answer) = serde_json::from_slice::<Answer>(&line) else {
            continue;
        };
        if answer.id != Some(Value::String(PROBE_ID.to_owned())) {
            continue;
        }
        match (answer.result, answer.error) {
            (Some(_), _) => return Ok(true),
            (None, Some(_)) => return Ok(false),
            (None, None) => continue,
        }
    }
}

/// Starts the server of `spec` (or reaches it over HTTP) and completes the
/// MCP handshake.
async fn start(spec: McpServerSpec) -> Result<Started, ClientError> {
    match &spec.endpoint {
        McpEndpoint::Command { command, args, dir } => {
            start_command(command, args, dir.as_deref(), &spec.env).await
        }
        McpEndpoint::Url {
            url,
            headers,
            ca_file,
        } => connect_http(url, headers, ca_file.as_deref(), &spec.env).await,
    }
}

/// Reaches the server at `url` over Streamable HTTP and completes the
/// handshake: `server/discover` on protocol 2026-07-28, and `initialize`
/// when the server answers that it does not know it (the 2025-11-25 era).
/// The server is already running, so the SDK's own fallback serves: its
/// fixed 10 s wait for a discovery never outlasts the entry's timeout,
/// which bounds the whole start. An `https` URL is reached over TLS,
/// trusting the built-in roots and those of `ca_file`.
async fn connect_http(
    url: &str,
    headers: &BTreeMap<String, String>,
    ca_file: Option<&Path>,
    env: &BTreeMap<String, String>,
) -> Result<Started, ClientError> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let endpoint = crate::client_http::Endpoint::parse(url)?;
    let headers = crate::client_http::resolve_headers(headers, env)?;
    let tls = if endpoint.is_tls() {
        Some(crate::client_tls::client_config(ca_file)?)
    } else {
        None
    };
    let raw = RawResults::default();
    let client = crate::client_http::HttpClient::new(endpoint, tls, raw.clone());
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(headers)
        .max_concurrent_requests(4)
        .max_json_response_size(crate::client_http::MAX_ANSWER_BYTES)
        .max_sse_event_size(crate::client_http::MAX_ANSWER_BYTES);
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    };
    let running = client_config()
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .map_err(|err| ClientError::HttpHandshake(handshake_error(&err)))?;
    Ok(Started {
        running,
        raw,
        _child: None,
        _group: Group(None),
    })
}

/// The SDK's handshake error in words a user can act on: its fallback
/// error names neither failure, and its transport error names the
/// transport's Rust type.
fn handshake_error(err: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError;
    match err {
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => format!(
            "server/discover was refused, and then initialize: {}",
            handshake_error(fallback)
        ),
        ClientInitializeError::TransportError { error, context } => {
            format!("{} ({context})", error.error)
        }
        err => err.to_string(),
    }
}

/// Starts the program `command` and completes the MCP handshake.
async fn start_command(
    command_name: &str,
    args: &[String],
    dir: Option<&Path>,
    env: &BTreeMap<String, String>,
) -> Result<Started, ClientError> {
    let spec_command = command_name;
    let shown_dir = dir;
    let dir = dir.unwrap_or(Path::new(NEUTRAL_DIR));
    let mut command = tokio::process::Command::new(command_name);
    command
        .args(args)
        .current_dir(dir)
        .env_clear()
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // The server's own messages are not ours to print.
        .stderr(Stdio::null())
        // Whatever happens to the session, the server does not outlive it.
        .kill_on_drop(true);
    let mut command = process_wrap::tokio::CommandWrap::from(command);
    #[cfg(unix)]
    command.wrap(process_wrap::tokio::ProcessGroup::leader());
    let mut child = command.spawn().map_err(|err| match shown_dir {
        Some(dir) => ClientError::StartIn {
            command: spec_command.to_owned(),
            dir: dir.to_path_buf(),
            reason: Arc::new(err),
        },
        None => ClientError::Start {
            command: spec_command.to_owned(),
            reason: Arc::new(err),
        },
    })?;
    let group = Group(child.id());
    let (Some(stdin), Some(stdout)) = (
        child.inner_mut().stdin().take(),
        child.inner_mut().stdout().take(),
    ) else {
        return Err(ClientError::NoPipes {
            command: spec_command.to_owned(),
        });
    };
    let mut stdin = stdin;
    let mut stdout = tokio::io::BufReader::new(stdout);
    let handshake = |fault| ClientError::Handshake {
        command: spec_command.to_owned(),
        fault,
    };
    let modern = probe(&mut stdout, &mut stdin).await.map_err(handshake)?;
    let (config, lifecycle) = if modern {
        (
            client_config(),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
    } else {
        (
            client_config().with_protocol_version(ProtocolVersion::V_2025_11_25),
            ClientLifecycleMode::Initialize,
        )
    };
    let raw = RawResults::default();
    let transport =
        AsyncRwTransport::<RoleClient, _, _>::new_client(Tap::new(stdout, raw.clone()), stdin);
    let running = config
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .map_err(|err| handshake(HandshakeFault::Sdk(err.to_string())))?;
    Ok(Started {
        running,
        raw,
        _child: Some(ChildProcess(child)),
        _group: group,
    })
}

/// Whether the server declared SEP-2640 in its handshake.
fn declares_skills(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.supports_skills())
}

/// Starts the server of `spec` and reads its whole listing. On any error
/// the started server is dropped here, which kills its process group.
async fn start_and_list(spec: McpServerSpec) -> Result<(Started, Listing), ClientError> {
    let started = start(spec).await?;
    let peer = started.running.peer().clone();
    if !declares_skills(&peer) {
        return Err(ClientError::NoSkills);
    }
    let listed = list_all(peer, Some(started.raw.clone())).await?;
    Ok((started, listed))
}

/// A whole listing: every entry read or refused, and the freshness the
/// server gave it.
#[derive(Debug, Default)]
struct Listing {
    entries: Vec<Result<Listed, Refused>>,
    /// The smallest `ttlMs` of its pages; `None` when a page gave none.
    ttl_ms: Option<u64>,
}

/// Every page of `skills/list`, each entry cut down to what is kept before
/// the next page is asked for. A listing past [`MAX_PAGES`],
/// [`MAX_LISTED_SKILLS`] or [`MAX_LISTING_BYTES`] is an error and none of
/// it is used: a cut listing would show whichever skills came first, and
/// could give a name's plain id to an entry the rest would have taken it
/// from. (Each page is one message, which the SDK's transport reads only up
/// to 16 MiB; a longer one is dropped unanswered, so it costs the timeout.)
async fn list_all(peer: Peer<RoleClient>, raw: Option<RawResults>) -> Result<Listing, ClientError> {
    let mut listing = Listing::default();
    let mut ttl: Option<Option<u64>> = None;
    let mut bytes: u64 = 0;
    let mut cursor: Option<String> = None;
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..MAX_PAGES {
        let page = list_page(&peer, raw.as_ref(), cursor.clone()).await?;
        let page = decode_page(&page)?;
        // The listing is fresh as long as its least fresh page.
        ttl = Some(match ttl {
            None => page.ttl_ms,
            Some(before) => before.zip(page.ttl_ms).map(|(a, b)| a.min(b)),
        });
        for (entry, len) in page.entries {
            if listing.entries.len() >= MAX_LISTED_SKILLS {
                return Err(ClientError::TooManySkills);
            }
            bytes = bytes.saturating_add(len);
            if bytes > MAX_LISTING_BYTES {
                return Err(ClientError::TooManyBytes);
            }
            listing.entries.push(entry);
        }
        match page.next_cursor {
            None => {
                listing.ttl_ms = ttl.flatten();
                return Ok(listing);
            }
            Some(next) if !seen.insert(next.clone()) => {
                return Err(ClientError::CursorTwice(next));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(ClientError::TooManyPages)
}

/// The JSON text of one `skills/list` result: as the server sent it when
/// the tap kept it, else as the SDK decoded it.
async fn list_page(
    peer: &Peer<RoleClient>,
    raw: Option<&RawResults>,
    cursor: Option<String>,
) -> Result<String, ClientError> {
    let request = ClientRequest::ListSkillsRequest(ListSkillsRequest {
        method: Default::default(),
        params: Some(PaginatedRequestParams::default().with_cursor(cursor)),
        extensions: Default::default(),
    });
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(|err| ClientError::ListFailed(err.to_string()))?;
    let id = serde_json::to_string(&handle.id).unwrap_or_default();
    let answer = handle
        .await_response()
        .await
        .map_err(|err| ClientError::ListFailed(err.to_string()));
    if let Some(text) = raw.and_then(|raw| raw.take(&id)) {
        return Ok(text.get().to_owned());
    }
    let answer = answer?;
    serde_json::to_string(&answer).map_err(|err| ClientError::ListUnwritable(err.to_string()))
}

/// The JSON text of the `skills/get` result for `uri`: as the server sent
/// it when the tap kept it, else as the SDK decoded it.
async fn get_skill(
    peer: &Peer<RoleClient>,
    raw: Option<&RawResults>,
    uri: String,
) -> Result<String, ClientError> {
    let request = ClientRequest::GetSkillRequest(rmcp::model::GetSkillRequest::new(
        rmcp::model::GetSkillRequestParams::new(uri.clone()),
    ));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(|err| ClientError::GetFailed {
            uri: uri.clone(),
            reason: err.to_string(),
        })?;
    let id = serde_json::to_string(&handle.id).unwrap_or_default();
    let answer = handle
        .await_response()
        .await
        .map_err(|err| ClientError::GetFailed {
            uri: uri.clone(),
            reason: err.to_string(),
        });
    if let Some(text) = raw.and_then(|raw| raw.take(&id)) {
        return Ok(text.get().to_owned());
    }
    let answer = answer?;
    serde_json::to_string(&answer).map_err(|err| ClientError::GetUnwritable {
        uri,
        reason: err.to_string(),
    })
}

/// The bytes `resources/read` returned for `uri`, refused past `limit`
/// (the size the listing promised) before decoding.
fn contents_of(
    uri: &str,
    contents: Vec<ResourceContents>,
    limit: u64,
) -> Result<Vec<u8>, ClientError> {
    let content = contents
        .into_iter()
        .find(|content| match content {
            ResourceContents::TextResourceContents { uri: at, .. }
            | ResourceContents::BlobResourceContents { uri: at, .. } => at == uri,
            _ => false,
        })
        .ok_or_else(|| ClientError::NoContents {
            uri: uri.to_owned(),
        })?;
    let too_long = |len: usize| {
        (len as u64 > limit.saturating_mul(4) / 3 + 4).then(|| ClientError::LongerThanListed {
            uri: uri.to_owned(),
            limit,
        })
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
                .map_err(|err| ClientError::NotBase64 {
                    uri: uri.to_owned(),
                    reason: err.to_string(),
                }),
        },
        _ => Err(ClientError::UnknownContents {
            uri: uri.to_owned(),
        }),
    }
}

/// The front-matter fields on which `file` (as parsed from the fetched
/// `SKILL.md`) and the listing disagree, each named with backticks. A file
/// without `name` takes the name its URI gives, as the open specification
/// derives a name from the folder.
fn front_matter_differences(skill: &Listed, mut file: Map<String, Value>) -> Vec<String> {
    if !file.contains_key("name")
        && let Some(name) = rmcp::model::skill_name_from_uri(&skill.uri)
    {
        file.insert("name".to_owned(), Value::String(name.to_owned()));
    }
    let mut listed: Map<String, Value> = serde_json::from_str(&skill.extra).unwrap_or_default();
    listed.insert("name".to_owned(), Value::String(skill.name.clone()));
    listed.insert(
        "description".to_owned(),
        Value::String(skill.description.clone()),
    );
    let keys: std::collections::BTreeSet<&String> = file.keys().chain(listed.keys()).collect();
    keys.into_iter()
        .filter(|key| file.get(*key) != listed.get(*key))
        .map(|key| format!("`{key}`"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_listing::Files;

    fn entry(uri: &str, name: &str, description: &str, extra: Map<String, Value>) -> Listed {
        Listed {
            uri: uri.to_owned(),
            name: name.to_owned(),
            description: description.to_owned(),
            extra: serde_json::to_string(&extra).unwrap(),
            files: Files::Listed(vec![SkillResource::from_bytes(uri, b"x")]),
        }
    }

    fn listed(extra: &[(&str, Value)]) -> Listed {
        let extra = extra
            .iter()
            .map(|(key, value)| ((*key).to_owned(), value.clone()))
            .collect();
        entry("skill://pdf/SKILL.md", "pdf", "Reads PDFs.", extra)
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

    /// The ids `srv`'s listing of `(uri, name)` entries gives, with the
    /// URI each names, and the messages of what was left out.
    fn ids(listing: &[(&str, &str)]) -> (Vec<(String, String)>, Vec<String>) {
        let provider = McpProvider::spawn(
            McpServerSpec {
                name: "srv".to_owned(),
                endpoint: McpEndpoint::Command {
                    command: "unused".to_owned(),
                    args: Vec::new(),
                    dir: None,
                },
                env: BTreeMap::new(),
                timeout: Duration::from_secs(1),
                allow_dynamic: true,
            },
            None,
        );
        let listed = listing
            .iter()
            .map(|(uri, name)| Ok(entry(uri, name, "A skill.", Map::new())))
            .collect();
        let (entries, diagnostics) = provider.admit_all(listed);
        (
            entries
                .into_iter()
                .map(|(id, entry)| (id.to_string(), entry.listed.uri))
                .collect(),
            diagnostics
                .iter()
                .map(|d| d.message().into_owned())
                .collect(),
        )
    }

    #[test]
    fn same_name_entries_are_told_apart_by_their_paths_in_any_listing_order() {
        let mut listing = vec![
            ("skill://acme/git-workflow/SKILL.md", "git-workflow"),
            ("skill://x/acme/git-workflow/SKILL.md", "git-workflow"),
            ("skill://git-workflow/SKILL.md", "git-workflow"),
            ("skill://git-workflow/SKILL.md", "git-workflow"),
            ("skill://Acme/pdf/SKILL.md", "pdf"),
            ("skill://pdf/SKILL.md", "pdf"),
            ("skill://team/review/SKILL.md", "review"),
            ("skill://other/review/SKILL.md", "review"),
            ("skill://team--review/SKILL.md", "team--review"),
        ];
        let expected = (
            [
                ("srv:acme--git-workflow", "skill://acme/git-workflow/SKILL.md"),
                ("srv:git-workflow", "skill://git-workflow/SKILL.md"),
                ("srv:pdf", "skill://pdf/SKILL.md"),
                ("srv:review", "skill://other/review/SKILL.md"),
                ("srv:team--review", "skill://team--review/SKILL.md"),
                ("srv:x--acme--git-workflow", "skill://x/acme/git-workflow/SKILL.md"),
            ]
            .map(|(id, uri)| (id.to_owned(), uri.to_owned()))
            .to_vec(),
            vec![
                "MCP server `srv`: it lists `skill://git-workflow/SKILL.md` more than once; the first entry is used".to_owned(),
                "MCP server `srv`: its skill `skill://Acme/pdf/SKILL.md` is left out: `srv:pdf` names another of its skills, and its path gives no id of its own (the id contains 'A'; only lowercase letters, digits and hyphens are allowed)".to_owned(),
                "MCP server `srv`: its skill `skill://team/review/SKILL.md` is left out: `srv:review` names another of its skills, and the id its path gives, `srv:team--review`, is taken too".to_owned(),
            ],
        );
        // The shortest path keeps the plain id, then the smallest URI
        // (`other/review` before `team/review`); a path id a plain one
        // holds (`team--review`, a name the open specification forbids but
        // a server may list) leaves the entry out, said so.
        assert_eq!(ids(&listing), expected);
        // Listed the other way round, every id stays.
        listing.reverse();
        assert_eq!(ids(&listing), expected);
    }

    #[test]
    fn contents_are_bounded_and_decoded() {
        let uri = "skill://pdf/SKILL.md";
        let text = |t: &str| ResourceContents::text(t, uri);
        let contents_of =
            |contents, limit| contents_of(uri, contents, limit).map_err(|err| err.to_string());
        assert_eq!(contents_of(vec![text("abc")], 3), Ok(b"abc".to_vec()));
        assert_eq!(
            contents_of(vec![ResourceContents::blob("YWJj", uri)], 3),
            Ok(b"abc".to_vec())
        );
        assert_eq!(
            contents_of(vec![text(&"a".repeat(100))], 3),
            Err(format!(
                "`{uri}` is longer than the 3 bytes its listing says"
            ))
        );
        assert_eq!(
            contents_of(
                vec![ResourceContents::text("a", "skill://other/SKILL.md")],
                3
            ),
            Err(format!("reading `{uri}` returned no contents for it"))
        );
    }
}
