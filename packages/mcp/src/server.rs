//! The MCP server: a registry snapshot served through the SDK's handler
//! (`skills/list`, `skills/get`, `resources/list`, `resources/read`), each
//! skill's entry built once (from the digest cache when its stamps still
//! answer), in listing order beside the first requests ([`SkillServer::warm`])
//! or by the first request that needs it (a `resources/read` lists no tree);
//! the `skills/list` page after each one answered is made while the client
//! reads that one; and a snapshot swapped in when the skill tree changes, with
//! `notifications/resources/list_changed`; what the old snapshot built is
//! handed back, so an unchanged skill is not read again. The tool
//! `search_skills` ranks the served skills with the snapshot's relevance
//! index, built by the first search and carried to the next snapshot, so a
//! reload indexes again only the skills it changed.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bcode_fs::FileStamp;
use bcode_skill::{InstructionRecord, InstructionRecords, LazySkillIndex};
use bcode_skill::{SkillRegistry, TemplateError, Templates};
use bcode_skill_models::{SkillId, SkillSummary};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, GetSkillRequestParams,
    GetSkillResult, Implementation, ListResourcesResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig, Skill,
    SkillResources, SubscriptionFilter, Tool,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::digests::{DigestCache, StoredEntry};
use crate::entry::{self, NotServed, ServedEntry, StampLooker};
use crate::tool::{self, Found, SEARCH_TOOL, SearchTool};
use crate::uri::{self, SKILL_MD};

/// Skills per `skills/list` page; an entry is never split across pages.
pub const SKILLS_PAGE: usize = 100;

/// Resources per `resources/list` page.
pub const RESOURCES_PAGE: usize = 1000;

/// A served skill (shared with the registry, not copied) and where its
/// entry is kept, built the first time a request needs it.
#[derive(Debug)]
struct Served {
    summary: Arc<SkillSummary>,
    /// The stamp of its instruction file, when the discovery that made the
    /// registry had just confirmed it (see [`SkillServer::with_confirmed`]).
    confirmed: Option<FileStamp>,
    /// What the discovery that made the registry recorded of its
    /// instruction file (see [`SkillServer::with_records`]), until the
    /// entry is built.
    recorded: Mutex<Option<Box<InstructionRecord>>>,
    entry: OnceLock<Result<StoredEntry, NotServed>>,
}

impl Served {
    fn new(summary: &Arc<SkillSummary>) -> Served {
        Served {
            summary: Arc::clone(summary),
            confirmed: None,
            recorded: Mutex::new(None),
            entry: OnceLock::new(),
        }
    }

    /// The skill's id (its summary's: no copy is kept).
    fn id(&self) -> &str {
        self.summary.manifest.id.as_str()
    }

    /// Where the entry is, building it first when no request has: what the
    /// digest cache holds for its instruction file when every stamp still
    /// answers (nothing read), else read from its files.
    fn stored(
        &self,
        cache: &DigestCache,
        looker: &mut StampLooker,
    ) -> Result<&StoredEntry, NotServed> {
        self.entry
            .get_or_init(|| {
                let location = &self.summary.location;
                if let Some(held) = cache.take(location)
                    && entry::unservable(&self.summary).is_none()
                    && cache.holds(
                        &held,
                        self.id(),
                        &entry::folder_of(&self.summary),
                        looker,
                        Some(cache.racy_window()),
                        self.confirmed.as_ref(),
                    )
                {
                    return Ok(held);
                }
                let recorded = match self.recorded.lock() {
                    Ok(mut recorded) => recorded.take(),
                    Err(poisoned) => poisoned.into_inner().take(),
                };
                let built = entry::build(&self.summary, cache.racy_window(), recorded.as_deref())?;
                // Only an entry a later run may keep changes what the cache
                // file should hold (a skill that cannot be served is read
                // again each start).
                if built.settled() {
                    cache.note_read();
                }
                Ok(cache.keep(location, Arc::new(built)))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The entry, built when no request has yet, read back from where it is
    /// kept.
    fn entry(
        &self,
        cache: &DigestCache,
        looker: &mut StampLooker,
    ) -> Result<Arc<ServedEntry>, NotServed> {
        let stored = self.stored(cache, looker)?;
        cache.load(stored).ok_or(NotServed::NotKept)
    }
}

/// What one registry snapshot serves: the skills the catalog could show,
/// sorted by id (the listing order; looked up by binary search, so no id
/// is copied out of the shared summaries), those left out with the
/// reason, and the registry with its relevance index (built by the first
/// search).
#[derive(Debug, Default)]
struct Snapshot {
    skills: Vec<Served>,
    unserved: Vec<(String, NotServed)>,
    registry: SkillRegistry,
    search: Arc<LazySkillIndex>,
}

impl Snapshot {
    fn of(registry: &SkillRegistry) -> Snapshot {
        let mut snapshot = Snapshot {
            registry: registry.clone(),
            ..Snapshot::default()
        };
        // Hidden skills (`disable-model-invocation`) are not in the catalog,
        // and disabled ones are not in the registry: neither is served.
        for summary in registry.shared_skills().filter(|s| s.model_visible()) {
            if let Some(why) = entry::unservable(summary) {
                snapshot
                    .unserved
                    .push((summary.manifest.id.to_string(), why));
                continue;
            }
            snapshot.skills.push(Served::new(summary));
        }
        snapshot.skills.sort_by(|a, b| a.id().cmp(b.id()));
        // A registry holds each id once; were one to come twice, the first
        // is served.
        snapshot
            .skills
            .dedup_by(|later, first| later.id() == first.id());
        snapshot
    }

    /// The served skill `id`.
    fn get(&self, id: &str) -> Option<&Served> {
        let at = self.skills.binary_search_by(|s| s.id().cmp(id)).ok()?;
        self.skills.get(at)
    }

    /// The served skills from `start`, at most `len` of them.
    fn run_from(&self, start: usize, len: usize) -> &[Served] {
        let end = start.saturating_add(len).min(self.skills.len());
        self.skills.get(start..end).unwrap_or_default()
    }

    fn len(&self) -> usize {
        self.skills.len()
    }

    /// The same skills, no entry built (the same registry, and so the
    /// same relevance index).
    fn again(&self) -> Snapshot {
        Snapshot {
            skills: self
                .skills
                .iter()
                .map(|served| Served::new(&served.summary))
                .collect(),
            unserved: self.unserved.clone(),
            registry: self.registry.clone(),
            search: Arc::clone(&self.search),
        }
    }

    /// Whether a search may return `id`: a skill served, unless its files
    /// were read and refused (`skills/list` leaves those out).
    fn searchable(&self, id: &SkillId) -> bool {
        self.get(id.as_str())
            .is_some_and(|served| !matches!(served.entry.get(), Some(Err(_))))
    }

    /// Every entry built so far, by instruction file.
    fn built(&self) -> impl Iterator<Item = (&std::path::Path, &StoredEntry)> {
        self.skills.iter().filter_map(|served| {
            let entry = served.entry.get()?.as_ref().ok()?;
            Some((&*served.summary.location, entry))
        })
    }
}

/// What [`SkillServer::follow_entries`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Followed {
    /// Some entry is not built yet: nothing was visited.
    NotBuilt,
    /// `visit` refused a folder: it stopped there.
    Refused,
    /// Every folder was visited; whether a stamp had moved.
    Visited { moved: bool },
}

/// Serves a skill registry over MCP with the skills extension. Cheap to
/// clone: clones share the snapshot.
#[derive(Clone, Debug)]
pub struct SkillServer {
    snapshot: Arc<RwLock<Arc<Snapshot>>>,
    digests: Arc<DigestCache>,
    /// The `skills/list` page after the last one answered, made while the
    /// client reads that one (see [`SkillServer::list_skills_page`]).
    ahead: Arc<Mutex<Option<Ahead>>>,
    /// See [`SkillServer::generation`].
    generation: Arc<std::sync::atomic::AtomicU64>,
    /// The `search_skills` tool, or why its text could not be rendered.
    tool: Arc<Result<SearchTool, TemplateError>>,
    /// What each `subscriptions/listen` stream follows (see
    /// [`SkillServer::announce`]).
    changes: Arc<tokio::sync::watch::Sender<Changes>>,
    /// The `ttlMs` sent with every cacheable result on 2026-07-28 and later.
    ttl_ms: u64,
}

/// What the `subscriptions/listen` streams follow: a count of the changes
/// announced, and whether serving is ending (each stream then ends with
/// its final result, so a client that closed stdin gets every answer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Changes {
    announced: u64,
    ending: bool,
}

impl Changes {
    /// Whether serving is ending.
    pub(crate) fn ending(&self) -> bool {
        self.ending
    }
}

/// A page made ahead: which snapshot, from which skill, and the skills
/// (a request that comes while it is being made waits for it).
#[derive(Debug)]
struct Ahead {
    snapshot: Weak<Snapshot>,
    start: usize,
    skills: Arc<OnceLock<Vec<Skill>>>,
}

impl SkillServer {
    /// A server of `registry`'s model-visible skills.
    pub fn new(registry: &SkillRegistry) -> SkillServer {
        SkillServer::with_digests(registry, DigestCache::none())
    }

    /// [`SkillServer::new`] taking digests and front matter from `digests`
    /// for files unchanged since it was saved, and saving it after each
    /// complete listing.
    pub fn with_digests(registry: &SkillRegistry, digests: DigestCache) -> SkillServer {
        SkillServer {
            snapshot: Arc::new(RwLock::new(Arc::new(Snapshot::of(registry)))),
            digests: Arc::new(digests),
            ahead: Arc::default(),
            generation: Arc::default(),
            tool: Arc::new(SearchTool::new(Templates::builtin())),
            changes: Arc::new(tokio::sync::watch::Sender::new(Changes::default())),
            ttl_ms: 0,
        }
    }

    /// The server taking each served instruction file's stamp from
    /// `confirmed` (the stamps the discovery that made the registry has
    /// just found unchanged: `bcode_skill::LiveRegistry::confirmed_stamps`)
    /// instead of asking the filesystem again, when it checks that an
    /// entry kept from an earlier run still holds. Only the snapshot
    /// served now takes them: a later one comes from a later check.
    pub fn with_confirmed(self, confirmed: impl Fn(&Path) -> Option<FileStamp>) -> SkillServer {
        if let Ok(mut slot) = self.snapshot.write()
            && let Some(snapshot) = Arc::get_mut(&mut slot)
        {
            for served in &mut snapshot.skills {
                served.confirmed = confirmed(&served.summary.location);
            }
        }
        self
    }

    /// The server taking each served instruction file's stamp, digest and
    /// front matter from `records` (what the discovery that made the
    /// registry recorded: `bcode_skill::Discovery::recording_instructions`)
    /// instead of reading the file again, while the stamp it has now is the
    /// recorded one and vouches: a cold start reads each `SKILL.md` once.
    /// A record goes with the very summary its read made; each is dropped
    /// once its entry is built. Only the snapshot served now takes them.
    pub fn with_records(self, records: InstructionRecords) -> SkillServer {
        if records.is_empty() {
            return self;
        }
        if let Ok(mut slot) = self.snapshot.write()
            && let Some(snapshot) = Arc::get_mut(&mut slot)
        {
            for (summary, record) in records {
                let Ok(at) = snapshot
                    .skills
                    .binary_search_by(|s| s.id().cmp(summary.manifest.id.as_str()))
                else {
                    continue;
                };
                if let Some(served) = snapshot.skills.get_mut(at)
                    && Arc::ptr_eq(&served.summary, &summary)
                {
                    served.recorded = Mutex::new(Some(Box::new(record)));
                }
            }
        }
        self
    }

    /// The server telling clients of protocol 2026-07-28 and later that a
    /// listing (and a file it lists) may be taken as fresh for `ttl`: the
    /// `ttlMs` of every cacheable result, with `cacheScope: "private"` (what
    /// is served is one user's skills). Without it, `ttlMs` is 0. A
    /// `bcode-prompt mcp` passes the interval at which it checks the skill
    /// trees, the time an edit may take to show.
    pub fn with_cache_ttl(mut self, ttl: std::time::Duration) -> SkillServer {
        self.ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// Tells every open `subscriptions/listen` stream that the list of
    /// skills changed (`notifications/resources/list_changed`, tagged with
    /// the stream's subscription id). A session opened with `initialize`
    /// has no such stream: its transport tells it directly.
    pub fn announce(&self) {
        self.changes.send_modify(|changes| {
            changes.announced = changes.announced.wrapping_add(1);
        });
    }

    /// Ends every `subscriptions/listen` stream, open or opened later, with
    /// its final result: serving is ending.
    pub fn end_subscriptions(&self) {
        self.changes.send_modify(|changes| changes.ending = true);
    }

    /// Follows [`SkillServer::announce`] and
    /// [`SkillServer::end_subscriptions`] (for a transport that tells its
    /// client itself).
    pub(crate) fn follow_changes(&self) -> tokio::sync::watch::Receiver<Changes> {
        self.changes.subscribe()
    }

    /// How many `subscriptions/listen` streams are open.
    pub fn subscriptions(&self) -> usize {
        self.changes.receiver_count()
    }

    /// The server with the `search_skills` tool worded by `templates` (an
    /// operator's overrides of `templates/mcp/`); an error when one of them
    /// does not render.
    pub fn with_templates(mut self, templates: Templates) -> Result<SkillServer, TemplateError> {
        self.tool = Arc::new(Ok(SearchTool::new(templates)?));
        Ok(self)
    }

    /// Writes the digest cache (after a listing, and when serving ends).
    pub fn save_digests(&self) {
        let snapshot = self.current();
        self.digests.save(snapshot.built());
    }

    /// Serves `registry` from now on; whether what is served changed (then
    /// the caller tells the client the list changed).
    pub fn replace(&self, registry: &SkillRegistry) -> bool {
        self.swap(Snapshot::of(registry), true)
    }

    /// Serves the same skills again, each entry checked against its stamps
    /// when next needed: after an edit that leaves every summary as it was
    /// (a file in `refs/`, a script beside `SKILL.md`), so the listing's
    /// digests follow the files.
    pub fn recheck(&self) {
        let again = self.current().again();
        self.swap(again, false);
    }

    /// A count of the snapshots served so far: it moves on every
    /// [`SkillServer::replace`] and [`SkillServer::recheck`].
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Calls `visit` with every folder a served skill's entry lists (its
    /// own and those below it; for a flat skill the folder holding its
    /// file), which a watch must cover for every edit that moves a digest
    /// to be seen, one entry read back at a time (nothing is collected; a
    /// folder may come more than once), then checks that entry's stamps:
    /// a change made before its folders were visited is found by the check,
    /// one made after by the watch. No file is read, and a stamp inside the
    /// racy window counts as unmoved (this asks whether anything is known
    /// to have moved, not whether a later run may trust it).
    pub(crate) fn follow_entries(&self, visit: &mut dyn FnMut(&Path) -> bool) -> Followed {
        let snapshot = self.current();
        if snapshot
            .skills
            .iter()
            .any(|served| served.entry.get().is_none())
        {
            return Followed::NotBuilt;
        }
        let mut looker = StampLooker::default();
        let mut moved = false;
        for (_, stored) in snapshot.built() {
            let Some(entry) = self.digests.load(stored) else {
                moved = true; // read again at the recheck
                continue;
            };
            let own = entry.folders.is_empty().then_some(entry.folder.as_path());
            let below = entry
                .folders
                .iter()
                .map(|(relative, _)| entry.folder.join(relative));
            for folder in own.map(Path::to_path_buf).into_iter().chain(below) {
                if !visit(&folder) {
                    return Followed::Refused;
                }
            }
            moved = moved || !entry.unmoved(&mut looker);
        }
        Followed::Visited { moved }
    }

    /// Serves `next` from now on; with `follow`, its relevance index starts
    /// from the current one (see [`LazySkillIndex::following`]) unless the
    /// registry is the very same, whose index it shares.
    fn swap(&self, mut next: Snapshot, follow: bool) -> bool {
        let mut slot = match self.snapshot.write() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        };
        if follow {
            next.search = if next.registry.same_as(&slot.registry) {
                Arc::clone(&slot.search)
            } else {
                Arc::new(LazySkillIndex::following(
                    Arc::clone(&slot.search),
                    slot.registry.clone(),
                ))
            };
        }
        // What the old registry's skills built is handed back: a skill
        // whose stamps still answer is not read again. Not an entry read
        // inside the racy window: a file changed again within its clock
        // tick after the read would still answer with the same stamp.
        for (location, entry) in slot.built().filter(|(_, entry)| entry.settled()) {
            self.digests.hold(location, entry.clone());
        }
        let same = slot.len() == next.len()
            && slot
                .skills
                .iter()
                .zip(&next.skills)
                .all(|(old, new)| old.summary == new.summary);
        *slot = Arc::new(next);
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        !same
    }

    /// The skills the catalog shows that cannot be served, with the reason
    /// (for the operator: `bcode-prompt mcp` prints them).
    pub fn unserved(&self) -> Vec<(String, NotServed)> {
        self.current().unserved.clone()
    }

    /// The skills whose files, once read, cannot be served (an entry the
    /// SDK's check refuses, a file too large or unreadable), with the
    /// reason: `skills/list` leaves them out and `skills/get` answers with
    /// the reason. Only entries built so far are looked at, none is read.
    pub fn refused(&self) -> Vec<(String, NotServed)> {
        let snapshot = self.current();
        snapshot
            .skills
            .iter()
            .filter_map(|served| match served.entry.get()? {
                Err(why) => Some((served.id().to_owned(), why.clone())),
                Ok(_) => None,
            })
            .collect()
    }

    /// The ids of the served skills that common MCP clients refuse, by
    /// their id (the `skill://` URI's segment) or their name (see
    /// [`bcode_skill::mcp_clients_refuse`]), in listing order.
    pub fn names_clients_refuse(&self) -> Vec<String> {
        use bcode_skill::mcp_clients_refuse;
        self.current()
            .skills
            .iter()
            .filter(|served| {
                mcp_clients_refuse(served.id()) || mcp_clients_refuse(&served.summary.manifest.name)
            })
            .map(|served| served.id().to_owned())
            .collect()
    }

    /// How many skills are served.
    pub fn len(&self) -> usize {
        self.current().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.current().skills.is_empty()
    }

    fn current(&self) -> Arc<Snapshot> {
        match self.snapshot.read() {
            Ok(slot) => Arc::clone(&slot),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Builds every served skill's entry, in listing order, a page at a
    /// time across the worker threads, blocking: what a client listing
    /// every page will ask for. [`serve_stdio`](crate::serve_stdio) runs it
    /// beside the first requests, so pages find their entries built (a page
    /// asked for first builds its own, each entry once).
    pub fn warm(&self) {
        let snapshot = self.current();
        let pages: Vec<&[Served]> = snapshot.skills.chunks(SKILLS_PAGE).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let threads = bcode_fs::worker_threads().clamp(1, pages.len().max(1));
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    let mut looker = StampLooker::default();
                    while let Some(page) =
                        pages.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        for served in *page {
                            let _ = served.stored(&self.digests, &mut looker);
                        }
                    }
                });
            }
        });
    }

    /// One `skills/list` page from `cursor`, blocking (files are read).
    /// A client that lists one page usually asks for the next: that page is
    /// made on a thread of its own while the client reads this one, and the
    /// request for it takes it (or waits for it) instead of making it again.
    pub fn list_skills_page(&self, cursor: Option<&str>) -> Result<ListSkillsResult, McpError> {
        let snapshot = self.current();
        let start = page_start(cursor, snapshot.len())?;
        let made = self.take_ahead(&snapshot, start, false);
        Ok(self.answer_page(&snapshot, start, made))
    }

    /// The page from `cursor` when it was made ahead and is finished, and
    /// is not the last (whose answer writes the digest cache): answered
    /// without blocking, so the handler need not hand the request to a
    /// blocking thread. `None` otherwise.
    pub fn ready_skills_page(&self, cursor: Option<&str>) -> Option<ListSkillsResult> {
        let snapshot = self.current();
        let start = page_start(cursor, snapshot.len()).ok()?;
        if start + SKILLS_PAGE >= snapshot.len() {
            return None;
        }
        let made = self.take_ahead(&snapshot, start, true)?;
        Some(self.answer_page(&snapshot, start, Some(made)))
    }

    /// The `skills/list` page from `cursor` as every transport answers it:
    /// at once when it was made ahead ([`SkillServer::ready_skills_page`]),
    /// else made off the async workers.
    pub(crate) async fn skills_page(
        &self,
        cursor: Option<String>,
    ) -> Result<ListSkillsResult, McpError> {
        match self.ready_skills_page(cursor.as_deref()) {
            Some(page) => Ok(page),
            None => {
                let server = self.clone();
                blocking(move || server.list_skills_page(cursor.as_deref())).await
            }
        }
    }

    /// The answer for the page from `start`, from `made` when it was made
    /// ahead; the next page is started ahead.
    fn answer_page(
        &self,
        snapshot: &Arc<Snapshot>,
        start: usize,
        made: Option<Arc<OnceLock<Vec<Skill>>>>,
    ) -> ListSkillsResult {
        let end = (start + SKILLS_PAGE).min(snapshot.len());
        if end < snapshot.len() {
            self.make_ahead(snapshot, end);
        }
        let skills = match made {
            Some(page) => {
                page.get_or_init(|| self.page_skills(snapshot, start));
                // Taken, not copied, once the thread that made it let go.
                match Arc::try_unwrap(page) {
                    Ok(page) => page.into_inner().unwrap_or_default(),
                    Err(page) => page.get().cloned().unwrap_or_default(),
                }
            }
            None => self.page_skills(snapshot, start),
        };
        let mut result = ListSkillsResult::with_all_items(skills);
        result.next_cursor = (end < snapshot.len()).then(|| end.to_string());
        if result.next_cursor.is_none() {
            self.digests.save(snapshot.built());
        }
        result
    }

    /// The skills of the page from `start`, building their entries first.
    /// A skill whose files cannot be served is left out of the listing;
    /// `skills/get` names the reason.
    fn page_skills(&self, snapshot: &Snapshot, start: usize) -> Vec<Skill> {
        let page = snapshot.run_from(start, SKILLS_PAGE);
        build_entries(page, &self.digests);
        let mut looker = StampLooker::default();
        let stored: Vec<&StoredEntry> = page
            .iter()
            .filter_map(|served| served.stored(&self.digests, &mut looker).ok())
            .collect();
        self.digests.skills(&stored).into_iter().flatten().collect()
    }

    /// The page made ahead from `start` of `snapshot`, if that is the one
    /// (and, when `finished` is asked for, only if it is made; otherwise it
    /// stays where it is).
    fn take_ahead(
        &self,
        snapshot: &Arc<Snapshot>,
        start: usize,
        finished: bool,
    ) -> Option<Arc<OnceLock<Vec<Skill>>>> {
        let mut ahead = match self.ahead.lock() {
            Ok(ahead) => ahead,
            Err(poisoned) => poisoned.into_inner(),
        };
        if finished
            && ahead
                .as_ref()
                .is_none_or(|made| made.skills.get().is_none())
        {
            return None;
        }
        let made = ahead.take()?;
        let same =
            made.start == start && std::ptr::eq(made.snapshot.as_ptr(), Arc::as_ptr(snapshot));
        same.then_some(made.skills)
    }

    /// Starts making the page from `start` of `snapshot` on another thread
    /// (the runtime's blocking pool when there is one); nothing when no
    /// thread can be had.
    fn make_ahead(&self, snapshot: &Arc<Snapshot>, start: usize) {
        let skills = Arc::new(OnceLock::new());
        let (server, page, snapshot_now) =
            (self.clone(), Arc::clone(&skills), Arc::clone(snapshot));
        let make = move || {
            page.get_or_init(|| server.page_skills(&snapshot_now, start));
        };
        let spawned = match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                drop(runtime.spawn_blocking(make));
                true
            }
            Err(_) => std::thread::Builder::new()
                .name("bcode-mcp-page".into())
                .spawn(make)
                .is_ok(),
        };
        if spawned {
            let mut ahead = match self.ahead.lock() {
                Ok(ahead) => ahead,
                Err(poisoned) => poisoned.into_inner(),
            };
            *ahead = Some(Ahead {
                snapshot: Arc::downgrade(snapshot),
                start,
                skills,
            });
        }
    }

    /// The `skills/get` answer for `uri`, blocking; `-32602` for a skill not
    /// served.
    pub fn get_skill_blocking(&self, uri: &str) -> Result<GetSkillResult, McpError> {
        let (id, path) = uri::parse(uri).map_err(|err| invalid(uri, &err.to_string()))?;
        if path != SKILL_MD {
            return Err(invalid(uri, "a skill is named by its SKILL.md"));
        }
        let entry = self.entry(uri, &id)?;
        let skill = entry
            .skill()
            .ok_or_else(|| invalid(uri, "its front matter does not read back"))?;
        Ok(GetSkillResult::new(respelled(skill, uri)))
    }

    /// The `resources/read` answer for `uri`, blocking: the file's bytes,
    /// as text when they are UTF-8 without NUL, else a base64 blob.
    pub fn read_resource_blocking(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        let (id, path) = uri::parse(uri).map_err(|err| not_found(uri, &err.to_string()))?;
        let entry = self
            .entry(uri, &id)
            .map_err(|_| not_found(uri, "no such skill"))?;
        let file = entry
            .file(&path)
            .ok_or_else(|| not_found(uri, "the skill lists no such file"))?;
        let bytes = entry
            .read(file)
            .map_err(|err| McpError::resource_not_found(err.about(uri), None))?;
        let mime = mime_type(&file.served);
        let contents = match String::from_utf8(bytes) {
            Ok(text) if !text.contains('\0') => ResourceContents::text(text, uri),
            Ok(text) => ResourceContents::blob(STANDARD.encode(text.as_bytes()), uri),
            Err(err) => ResourceContents::blob(STANDARD.encode(err.as_bytes()), uri),
        };
        let contents = match mime {
            Some(mime) => contents.with_mime_type(mime),
            None => contents,
        };
        Ok(ReadResourceResult::new(vec![contents]))
    }

    /// The `search_skills` tool as `tools/list` gives it; an internal error
    /// when its text could not be rendered.
    pub fn search_tool(&self) -> Result<Tool, McpError> {
        match self.tool.as_ref() {
            Ok(tool) => Ok(tool.definition.clone()),
            Err(why) => Err(McpError::internal_error(why.to_string(), None)),
        }
    }

    /// The `tools/call` answer for `name` with `arguments`, blocking (the
    /// first search builds the relevance index; a skill found whose entry
    /// is not built yet has its files read, as `skills/list` would).
    /// `-32602` for a tool other than `search_skills`; arguments a model
    /// can correct are a tool result marked `isError`.
    pub fn call_tool_blocking(
        &self,
        name: &str,
        arguments: Option<&rmcp::model::JsonObject>,
    ) -> Result<CallToolResult, McpError> {
        if name != SEARCH_TOOL {
            return Err(McpError::invalid_params(
                format!("unknown tool: this server has one tool, `{SEARCH_TOOL}`"),
                None,
            ));
        }
        let search = self
            .tool
            .as_ref()
            .as_ref()
            .map_err(|why| McpError::internal_error(why.to_string(), None))?;
        match tool::arguments(arguments) {
            Ok(args) => Ok(tool::answer(&self.search(&args.query, args.limit))),
            Err(refusal) => search
                .refused(&refusal)
                .map_err(|err| McpError::internal_error(err.to_string(), None)),
        }
    }

    /// The served skills that best fit `query`, best first, at most
    /// `limit`: the skills `skills/list` lists, each as it lists it. A
    /// skill ranked whose files turn out to be refused once read is
    /// passed over, and the search asks for more until `limit` are found
    /// or none is left.
    fn search(&self, query: &str, limit: usize) -> Vec<Found> {
        let snapshot = self.current();
        let index = snapshot.search.get_or_build(&snapshot.registry);
        let keep = |id: &SkillId| snapshot.searchable(id);
        let mut looker = StampLooker::default();
        let mut asked = limit;
        loop {
            let hits = index.search_where(query, asked, &keep);
            let exhausted = hits.len() < asked;
            let mut found = Vec::with_capacity(limit);
            for hit in hits {
                let skill = snapshot
                    .get(hit.id.as_str())
                    .and_then(|served| served.stored(&self.digests, &mut looker).ok())
                    .and_then(|stored| self.digests.skill(stored));
                if let Some(skill) = skill {
                    found.push(Found { skill, hit });
                    if found.len() == limit {
                        return found;
                    }
                }
            }
            if exhausted {
                return found;
            }
            asked = asked.saturating_mul(2);
        }
    }

    /// One `resources/list` page: every served skill's `SKILL.md` (its
    /// other files are listed by its entry).
    pub fn list_resources_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourcesResult, McpError> {
        let snapshot = self.current();
        let start = page_start(cursor, snapshot.len())?;
        let end = (start + RESOURCES_PAGE).min(snapshot.len());
        let resources = snapshot
            .run_from(start, RESOURCES_PAGE)
            .iter()
            .map(|served| {
                let m = &served.summary.manifest;
                Resource::new(uri::skill_uri(m.id.as_str()), m.id.to_string())
                    .with_description(m.description.clone())
                    .with_mime_type("text/markdown")
            })
            .collect();
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = (end < snapshot.len()).then(|| end.to_string());
        Ok(result)
    }

    fn entry(&self, uri: &str, id: &str) -> Result<Arc<ServedEntry>, McpError> {
        let snapshot = self.current();
        let served = snapshot
            .get(id)
            .ok_or_else(|| invalid(uri, "no skill is served under this name"))?;
        served
            .entry(&self.digests, &mut StampLooker::default())
            .map_err(|why| invalid(uri, &why.to_string()))
    }
}

/// `skill` with its URI spelled as `asked`, which names the same skill
/// (it decoded to the same id): `skill://données-csv/SKILL.md` typed
/// unencoded asks for what is listed as `skill://donn%C3%A9es-csv/SKILL.md`.
/// The SDK refuses, as an internal error, an entry whose URI is not the
/// one asked for, so the entry answers in the asker's spelling: its URI,
/// and the base of every file's (the files' own paths stay as listed; a
/// read takes either spelling).
fn respelled(mut skill: Skill, asked: &str) -> Skill {
    if skill.uri == asked {
        return skill;
    }
    let base = |uri: &str| uri.strip_suffix(SKILL_MD).map(str::len);
    let (Some(listed_base), Some(asked_base)) = (base(&skill.uri), base(asked)) else {
        return skill;
    };
    let asked_prefix = asked.get(..asked_base).unwrap_or_default();
    if let SkillResources::Files(files) = &mut skill.resources {
        for file in files {
            if let Some(rest) = file.uri.get(listed_base..) {
                file.uri = format!("{asked_prefix}{rest}");
            }
        }
    }
    skill.uri = asked.to_owned();
    skill
}

/// Whether `context` speaks protocol 2026-07-28 or later, whose cacheable
/// results carry `ttlMs` and `cacheScope`.
fn caching_era(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Builds the entries of `page` not built yet, on the worker threads the
/// skill walk uses: each entry reads and digests every file of its skill,
/// and a page of them is most of what a `skills/list` costs.
fn build_entries(page: &[Served], digests: &DigestCache) {
    let threads = bcode_fs::worker_threads().min(page.len());
    // Built already (by the warm-up, or an earlier listing): no threads.
    if threads <= 1 || page.iter().all(|served| served.entry.get().is_some()) {
        return;
    }
    let chunk = page.len().div_ceil(threads);
    std::thread::scope(|scope| {
        for part in page.chunks(chunk) {
            scope.spawn(move || {
                let mut looker = StampLooker::default();
                for served in part {
                    let _ = served.stored(digests, &mut looker);
                }
            });
        }
    });
}

/// The index a cursor names; `0` without one.
fn page_start(cursor: Option<&str>, len: usize) -> Result<usize, McpError> {
    match cursor {
        None => Ok(0),
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|at| *at <= len)
            .ok_or_else(|| McpError::invalid_params(format!("unknown cursor {cursor:?}"), None)),
    }
}

fn invalid(uri: &str, why: &str) -> McpError {
    McpError::invalid_params(format!("{uri}: {why}"), None)
}

fn not_found(uri: &str, why: &str) -> McpError {
    McpError::resource_not_found(format!("{uri}: {why}"), None)
}

/// The MIME type of a served file, by its extension.
fn mime_type(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "py" => "text/x-python",
        "sh" => "application/x-sh",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "rs" => "text/x-rust",
        "html" | "htm" => "text/html",
        "csv" => "text/csv",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ => return None,
    })
}

/// Runs `work` (which reads files) off the async workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, McpError> + Send + 'static,
) -> Result<T, McpError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|err| Err(McpError::internal_error(err.to_string(), None)))
}

impl ServerHandler for SkillServer {
    fn get_info(&self) -> ServerConfig {
        let mut config = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_skills()
                // One tool, `search_skills`, that never changes: no
                // `notifications/tools/list_changed` is ever sent.
                .enable_tools()
                .build(),
        );
        config.server_info = Implementation::new("bcode-prompt", env!("CARGO_PKG_VERSION"));
        config
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        let cursor = request.and_then(|r| r.cursor);
        let mut page = self.skills_page(cursor).await?;
        if caching_era(&context) {
            (page.ttl_ms, page.cache_scope) = (Some(self.ttl_ms), Some(CacheScope::Private));
        }
        Ok(page)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        let server = self.clone();
        let mut got = blocking(move || server.get_skill_blocking(&request.uri)).await?;
        if caching_era(&context) {
            (got.ttl_ms, got.cache_scope) = (Some(self.ttl_ms), Some(CacheScope::Private));
        }
        Ok(got)
    }

    /// The one notice this server sends, `notifications/resources/list_changed`;
    /// the SDK acknowledges the subscription with what was both asked for
    /// and accepted, so nothing else is ever sent on it.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(
            SubscriptionFilter::builder()
                .resources_list_changed()
                .build(),
        )
    }

    /// Follows the announced changes until the client cancels the
    /// subscription or serving ends (then the SDK sends the final result).
    /// A client that did not ask for list changes gets nothing on it.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let mut changes = self.changes.subscribe();
        let wanted = context.accepted().resources_list_changed == Some(true);
        loop {
            if changes.borrow_and_update().ending {
                return Ok(());
            }
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                moved = changes.changed() => {
                    if moved.is_err() {
                        return Ok(());
                    }
                }
            }
            if changes.borrow().ending {
                return Ok(());
            }
            if wanted && context.sink().notify_resource_list_changed().await.is_err() {
                return Ok(());
            }
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(vec![self.search_tool()?]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == SEARCH_TOOL)
            .then(|| self.search_tool().ok())
            .flatten()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let server = self.clone();
        blocking(move || server.call_tool_blocking(&request.name, request.arguments.as_ref()))
            .await
            .map(Into::into)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let cursor = request.and_then(|r| r.cursor);
        let mut page = self.list_resources_page(cursor.as_deref())?;
        if caching_era(&context) {
            (page.ttl_ms, page.cache_scope) = (Some(self.ttl_ms), Some(CacheScope::Private));
        }
        Ok(page)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let server = self.clone();
        let mut read = blocking(move || server.read_resource_blocking(&request.uri)).await?;
        if caching_era(&context) {
            (read.ttl_ms, read.cache_scope) = (Some(self.ttl_ms), Some(CacheScope::Private));
        }
        Ok(read.into())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn write_skill(dir: &Path, id: &str, body: &str) {
        std::fs::create_dir_all(dir.join(id)).unwrap();
        std::fs::write(
            dir.join(id).join("SKILL.md"),
            format!("---\ndescription: Skill {id}\n---\n{body}\n"),
        )
        .unwrap();
    }

    /// A tree of every kind of skill an entry takes front matter from: one
    /// without `name`, one with fields the SDK's type does not name (nested
    /// too), one with files beside it, a flat one, and one with TOML front
    /// matter; aged, and past the test racy window.
    fn varied_tree(dir: &Path) {
        bcode_test_support::write_tree(
            dir,
            &[
                (
                    "plain/SKILL.md",
                    "---\ndescription: Skill without a name\n---\nBody.\n",
                ),
                (
                    "extra/SKILL.md",
                    "---\nname: extra\ndescription: \"Extra: fields\"\nlicense: MIT\nversion: 1.5\ncount: 12\nmetadata:\n  owner: \"ü team\"\n  tags: [a, b]\nallowed-tools: Read Grep\n---\nBody.\n",
                ),
                (
                    "files/SKILL.md",
                    "---\ndescription: With files\n---\nSee refs.\n",
                ),
                ("files/refs/guide.md", "A guide.\n"),
                ("files/scripts/run.sh", "echo run\n"),
                (
                    "flat.md",
                    "---\nname: flat\ndescription: A flat skill\n---\nFlat body.\n",
                ),
                (
                    "tomlish/SKILL.md",
                    "+++\ndescription = \"TOML front matter\"\nlicense = \"MIT\"\n+++\nBody.\n",
                ),
            ],
        );
        bcode_test_support::age(dir);
        bcode_test_support::past_racy_window();
    }

    fn quick_discovery() -> bcode_skill::Discovery {
        let mut options = bcode_skill::DiscoveryOptions::from_config(
            &bcode_prompt_config::SkillsConfig::default(),
        );
        options.walk.racy_window = bcode_test_support::TEST_RACY_WINDOW;
        bcode_skill::Discovery::new(options)
    }

    /// Every `skills/list` page of `server`, as the bytes a client gets.
    fn listing(server: &SkillServer) -> String {
        let mut pages = Vec::new();
        let mut cursor = None;
        loop {
            let page = server.list_skills_page(cursor.as_deref()).unwrap();
            pages.push(serde_json::to_string(&page).unwrap());
            cursor = page.next_cursor;
            if cursor.is_none() {
                return pages.join("\n");
            }
        }
    }

    fn quick_digests() -> DigestCache {
        DigestCache::none().with_racy_window(bcode_test_support::TEST_RACY_WINDOW)
    }

    /// Issue 41, item 2: a cold start reads each `SKILL.md` once. The
    /// recording discovery reads each file (whole); the server takes the
    /// stamp, digest and front matter from its records and reads none
    /// again; and the listing is the very bytes a server that read every
    /// file itself sends.
    #[test]
    fn a_cold_start_reads_each_instruction_file_once() {
        let tmp = tempfile::tempdir().unwrap();
        varied_tree(tmp.path());
        let mut recording = quick_discovery().recording_instructions();
        let registry = registry(tmp.path(), &mut recording);
        assert_eq!(registry.len(), 5, "{:?}", registry.diagnostics());
        assert_eq!(recording.last_stats().files_read, 5);
        let records = recording.take_records();
        assert_eq!(records.len(), 5);
        assert!(recording.take_records().is_empty(), "taken once");

        let before = entry::tests::instruction_reads_below(tmp.path());
        let served = SkillServer::with_digests(&registry, quick_digests()).with_records(records);
        let recorded = listing(&served);
        assert_eq!(
            entry::tests::instruction_reads_below(tmp.path()),
            before,
            "no SKILL.md read again"
        );

        let mut plain = quick_discovery();
        let again = self::registry(tmp.path(), &mut plain);
        assert!(plain.take_records().is_empty(), "recording is opt-in");
        let read = SkillServer::with_digests(&again, quick_digests());
        assert_eq!(listing(&read), recorded);
        assert_eq!(
            entry::tests::instruction_reads_below(tmp.path()),
            before + 5,
            "without records, each read again"
        );
        for wanted in [
            r#""name":"plain","description":"Skill without a name""#,
            r#""count":12,"license":"MIT","metadata":{"owner":"ü team","tags":["a","b"]},"version":1.5"#,
            "skill://flat/SKILL.md",
            "skill://files/refs/guide.md",
            r#""description":"TOML front matter","license":"MIT""#,
        ] {
            assert!(recorded.contains(wanted), "{wanted} not in {recorded}");
        }
    }

    /// A `SKILL.md` changed between discovery and serving moves its stamp:
    /// the server reads it again and lists its new digest and front
    /// matter, never the recorded ones.
    #[test]
    fn an_instruction_file_changed_since_discovery_is_read_again() {
        let tmp = tempfile::tempdir().unwrap();
        varied_tree(tmp.path());
        let mut recording = quick_discovery().recording_instructions();
        let registry = registry(tmp.path(), &mut recording);
        let records = recording.take_records();
        assert_eq!(records.len(), 5);
        let changed = "---\ndescription: Changed since\n---\nNew body.\n";
        std::fs::write(tmp.path().join("plain/SKILL.md"), changed).unwrap();

        let before = entry::tests::instruction_reads_below(tmp.path());
        let served = SkillServer::with_digests(&registry, quick_digests()).with_records(records);
        let listed = listing(&served);
        assert_eq!(
            entry::tests::instruction_reads_below(tmp.path()),
            before + 1,
            "only the changed file is read"
        );
        assert!(listed.contains("Changed since"), "{listed}");
        assert!(!listed.contains("Skill without a name"), "{listed}");
        assert!(
            listed.contains(&entry::digest(changed.as_bytes())),
            "{listed}"
        );
    }

    fn registry(dir: &Path, discovery: &mut bcode_skill::Discovery) -> SkillRegistry {
        let root = bcode_skill::SourceRoot {
            source: bcode_skill_models::SkillSource {
                kind: bcode_skill_models::SourceKind::RepoBcode,
                label: "repo:.bcode/skills".into(),
                ordinal: 0,
                root: None,
                provider: None,
            },
            path: dir.to_path_buf(),
            repository: None,
            owner_check: None,
        };
        discovery.build(&[root])
    }

    /// A snapshot's relevance index is shared while its registry is the
    /// very same (a recheck, a reload that changed nothing) and otherwise
    /// starts from the last one, so only what changed is indexed again.
    #[test]
    fn the_relevance_index_follows_the_snapshots() {
        let tmp = tempfile::tempdir().unwrap();
        write_skill(tmp.path(), "alpha", "Alpha body.");
        write_skill(tmp.path(), "beta", "Beta body.");
        let mut discovery =
            bcode_skill::Discovery::new(bcode_skill::DiscoveryOptions::from_config(
                &bcode_prompt_config::SkillsConfig::default(),
            ));
        let first = registry(tmp.path(), &mut discovery);
        let server = SkillServer::new(&first);
        let index = Arc::clone(&server.current().search);
        assert!(index.get().is_none(), "not built before a search");
        assert_eq!(server.search("alpha", 10).len(), 1);
        assert!(index.get().is_some());

        server.recheck();
        assert!(Arc::ptr_eq(&server.current().search, &index));
        assert!(!server.replace(&first));
        assert!(Arc::ptr_eq(&server.current().search, &index));

        write_skill(tmp.path(), "beta", "Beta body, now about gamma.");
        let second = registry(tmp.path(), &mut discovery);
        assert!(!second.same_as(&first));
        server.replace(&second);
        let followed = Arc::clone(&server.current().search);
        assert!(!Arc::ptr_eq(&followed, &index));
        assert!(followed.get().is_none(), "built by the first search only");
        let found: Vec<String> = server
            .search("gamma", 10)
            .into_iter()
            .map(|found| found.skill.uri)
            .collect();
        assert_eq!(found, ["skill://beta/SKILL.md"]);
    }
}
