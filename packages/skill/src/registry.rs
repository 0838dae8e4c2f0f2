//! The registry: building the index from source roots (through the cache),
//! and answering lookups. Bodies are not part of the index; `body` loads one
//! on demand.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use bcode_skill_models::{
    Diagnostic, DiagnosticCode, SkillError, SkillId, SkillLayout, SkillSummary, SkillsConfig,
    SourceKind,
};

use crate::cache::{DiscoveryStats, Loaded, Lookup, Prior, SummaryCache, failed_load, load_fresh};
use crate::front_matter::{self, Split};
use crate::parse::ParseOutcome;
use crate::persist::DiskCache;
use crate::precedence;
use crate::provider::{self, ProviderSet, SkillProvider};
use crate::read::{ReadError, read_all};
use crate::snapshot::WalkSnapshot;
use crate::sources::SourceRoot;
use crate::walk::{Candidate, WalkOptions, walk_root};
use bcode_fs::DirHandle;

/// Everything discovery needs besides the roots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoveryOptions {
    pub walk: WalkOptions,
    pub max_skill_file_bytes: usize,
    pub disabled_ids: BTreeSet<String>,
}

impl DiscoveryOptions {
    pub fn from_config(config: &SkillsConfig) -> Self {
        DiscoveryOptions {
            walk: WalkOptions {
                follow_symlinks: config.follow_symlinks,
                ..WalkOptions::default()
            },
            max_skill_file_bytes: config.max_skill_file_bytes,
            disabled_ids: config.disabled.ids.iter().cloned().collect(),
        }
    }
}

/// A source root as discovery saw it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RootReport {
    pub label: String,
    pub path: PathBuf,
    /// `None` when the root does not exist.
    pub canonical: Option<PathBuf>,
    pub skills_found: usize,
}

/// Builds registries, keeping the summary cache between builds.
#[derive(Debug)]
pub struct Discovery {
    options: DiscoveryOptions,
    cache: SummaryCache,
    stats: DiscoveryStats,
    /// The last registry built from roots alone, with a digest of what the
    /// walk found. When a rebuild finds the same files, unchanged, it is the
    /// answer (same inputs, same registry) and precedence is not redone.
    last: Option<(u64, SkillRegistry)>,
    /// What the walk behind `last` depended on: when every probe answers
    /// as before, `last` is the answer without walking at all.
    snapshot: Option<WalkSnapshot>,
    /// Where `last` and `snapshot` survive the process, if anywhere.
    disk: Option<DiskCache>,
}

impl Discovery {
    pub fn new(options: DiscoveryOptions) -> Self {
        Discovery {
            cache: SummaryCache::new(options.walk.racy_window),
            options,
            stats: DiscoveryStats::default(),
            last: None,
            snapshot: None,
            disk: None,
        }
    }

    /// Keeps the last registry and its snapshot in `cache` too, so that a
    /// later process with the same options and roots is answered from it
    /// while nothing changed (see [`crate::persist`]).
    pub fn with_disk_cache(mut self, cache: DiskCache) -> Self {
        self.disk = Some(cache);
        self
    }

    /// Counters of the last [`Discovery::build`].
    pub fn last_stats(&self) -> DiscoveryStats {
        self.stats
    }

    /// Walks `roots` (highest precedence first) and builds the registry.
    /// Never fails: every problem is a diagnostic.
    pub fn build(&mut self, roots: &[SourceRoot]) -> SkillRegistry {
        self.build_with_providers(roots, &[])
    }

    /// [`Discovery::build`] plus the skills of `providers`, which rank as
    /// bundled after every bundled root, in the order given (see
    /// [`crate::provider`]). A failing provider becomes a diagnostic.
    pub fn build_with_providers(
        &mut self,
        roots: &[SourceRoot],
        providers: &[Arc<dyn SkillProvider>],
    ) -> SkillRegistry {
        let mut from_disk = false;
        if providers.is_empty()
            && self.last.is_none()
            && let Some(disk) = &self.disk
            && let Some((registry, snapshot)) = disk.load(&self.options, roots)
        {
            // No walk digest: a walk after a change builds afresh.
            self.last = Some((0, registry));
            self.snapshot = Some(snapshot);
            from_disk = true;
        }
        if providers.is_empty()
            && let Some((_, registry)) = &self.last
            && let Some(snapshot) = &self.snapshot
            && snapshot.unchanged(roots)
        {
            let skills = registry.len();
            self.stats = DiscoveryStats {
                candidates: snapshot.candidates(),
                cache_hits: snapshot.candidates(),
                confirmed_by_stamps: true,
                from_disk_cache: from_disk,
                ..DiscoveryStats::default()
            };
            debug_assert!(skills <= snapshot.candidates());
            return registry.clone();
        }
        let mut stats = DiscoveryStats::default();
        let now = SystemTime::now();
        let mut snapshots = Vec::with_capacity(roots.len());
        let mut diagnostics = Vec::new();
        let mut reports = Vec::new();
        self.cache.begin_build();
        let mut seen_files: HashMap<(u64, u64), PathBuf> = HashMap::new();
        // Walk every root first; each candidate remembers its root.
        let mut candidates: Vec<(usize, Candidate)> = Vec::new();
        for (index, root) in roots.iter().enumerate() {
            let walked = walk_root(root, &self.options.walk, now);
            snapshots.push(walked.snapshot);
            diagnostics.extend(walked.diagnostics);
            for candidate in walked.candidates {
                stats.candidates += 1;
                if let Some(identity) = candidate.stamp.identity() {
                    if let Some(first) = seen_files.get(&identity) {
                        diagnostics.push(
                            Diagnostic::info(
                                DiagnosticCode::DuplicatePath,
                                format!(
                                    "`{}` is a second path to `{}`, already loaded",
                                    candidate.origin.location.display(),
                                    first.display()
                                ),
                            )
                            .with_path(&candidate.origin.location),
                        );
                        continue;
                    }
                    seen_files.insert(identity, candidate.origin.location.clone());
                }
                candidates.push((index, candidate));
            }
            reports.push(RootReport {
                label: root.source.label.clone(),
                path: root.path.clone(),
                canonical: walked.canonical_root,
                skills_found: 0,
            });
        }
        // Cache hits need no I/O; everything else is read and parsed on
        // worker threads (each job touches only its own file).
        let digest = walk_digest(&reports, &candidates, &diagnostics);
        let mut outcomes: Vec<Option<Arc<ParseOutcome>>> = vec![None; candidates.len()];
        let mut jobs = Vec::new();
        for (slot, (_, candidate)) in candidates.iter().enumerate() {
            match self.cache.lookup(candidate) {
                Lookup::Hit(outcome) => {
                    stats.cache_hits += 1;
                    outcomes[slot] = Some(outcome);
                }
                Lookup::Verify(prior) => jobs.push((slot, Some(prior))),
                Lookup::Miss => jobs.push((slot, None)),
            }
        }
        // Nothing to read, the same files as last time, and no provider
        // whose answer could have changed: the last registry is the answer.
        if jobs.is_empty()
            && providers.is_empty()
            && let Some((last_digest, registry)) = &self.last
            && *last_digest == digest
        {
            self.cache.end_build();
            self.stats = stats;
            let registry = registry.clone();
            self.snapshot = Some(WalkSnapshot::new(snapshots, stats.candidates));
            return registry;
        }
        let max_bytes = self.options.max_skill_file_bytes;
        // A file that could not be read (often transient: EMFILE, EIO) is
        // not cached, so the next build tries again; the snapshot must not
        // vouch for this registry either, in memory or on disk.
        let mut all_cacheable = true;
        for (slot, loaded) in load_in_parallel(
            &candidates,
            jobs,
            max_bytes,
            now,
            self.options.walk.racy_window,
        ) {
            all_cacheable &= loaded.cacheable;
            stats.files_read += usize::from(loaded.read);
            stats.files_parsed += usize::from(loaded.parsed);
            stats.cache_hits += usize::from(loaded.reused);
            self.cache.store(&candidates[slot].1, &loaded, now);
            outcomes[slot] = Some(loaded.outcome);
        }
        let mut loaded = Vec::with_capacity(candidates.len());
        for ((root_index, _), outcome) in candidates.iter().zip(outcomes) {
            let Some(outcome) = outcome else { continue };
            diagnostics.extend(outcome.diagnostics.iter().cloned());
            if let Some(skill) = &outcome.skill {
                reports[*root_index].skills_found += 1;
                loaded.push(Arc::clone(skill));
            }
        }
        self.cache.end_build();
        let first_ordinal = roots
            .iter()
            .filter(|r| r.source.kind == SourceKind::Bundled)
            .map(|r| r.source.ordinal.saturating_add(1))
            .max()
            .unwrap_or(0);
        let provided =
            provider::collect(providers, first_ordinal, self.options.max_skill_file_bytes);
        loaded.extend(provided.skills.into_iter().map(Arc::new));
        diagnostics.extend(provided.diagnostics);
        let (skills, resolution) = precedence::resolve(loaded, &self.options.disabled_ids);
        diagnostics.extend(resolution);
        diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        diagnostics.dedup();
        self.stats = stats;
        let registry = SkillRegistry {
            skills: Arc::new(skills),
            diagnostics: Arc::new(diagnostics),
            roots: reports,
            max_skill_file_bytes: self.options.max_skill_file_bytes,
            disabled_ids: self.options.disabled_ids.clone(),
            providers: provided.providers,
        };
        self.last = providers.is_empty().then(|| (digest, registry.clone()));
        self.snapshot = (providers.is_empty() && all_cacheable)
            .then(|| WalkSnapshot::new(snapshots, stats.candidates));
        if let (Some(disk), Some(snapshot)) = (&self.disk, &self.snapshot) {
            self.stats.written_to_disk_cache =
                disk.store(&self.options, roots, &registry, snapshot);
        }
        registry
    }
}

/// The indexed skills of a session or request, with the diagnostics of the
/// build that produced them.
#[derive(Clone, Debug, Default)]
pub struct SkillRegistry {
    /// Shared: registries are immutable, so clones (a session swapping
    /// registries, an unchanged rebuild) cost nothing.
    skills: Arc<BTreeMap<SkillId, Arc<SkillSummary>>>,
    diagnostics: Arc<Vec<Diagnostic>>,
    roots: Vec<RootReport>,
    max_skill_file_bytes: usize,
    disabled_ids: BTreeSet<String>,
    /// The providers that served skills, for loading their bodies.
    providers: ProviderSet,
}

impl SkillRegistry {
    /// A registry from what a build produced (for [`crate::persist`]).
    pub(crate) fn from_parts(
        skills: BTreeMap<SkillId, Arc<SkillSummary>>,
        diagnostics: Vec<Diagnostic>,
        roots: Vec<RootReport>,
        options: &DiscoveryOptions,
    ) -> Self {
        SkillRegistry {
            skills: Arc::new(skills),
            diagnostics: Arc::new(diagnostics),
            roots,
            max_skill_file_bytes: options.max_skill_file_bytes,
            disabled_ids: options.disabled_ids.clone(),
            providers: ProviderSet::default(),
        }
    }

    /// An empty registry (skills disabled).
    pub fn empty() -> Self {
        SkillRegistry::default()
    }

    /// Every available skill, by id (hidden ones included).
    pub fn skills(&self) -> impl Iterator<Item = &SkillSummary> {
        self.skills.values().map(|s| &**s)
    }

    pub fn len(&self) -> usize {
        self.skills.len()
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    pub fn get(&self, id: &str) -> Option<&SkillSummary> {
        let id = SkillId::parse(id).ok()?;
        self.skills.get(&id).map(|s| &**s)
    }

    /// A skill by id, or why it is not available (unknown, disabled).
    pub fn lookup(&self, id: &str) -> Result<&SkillSummary, SkillError> {
        if let Some(skill) = self.get(id) {
            return Ok(skill);
        }
        if self.disabled_ids.contains(id) {
            return Err(SkillError::Disabled { id: id.to_owned() });
        }
        Err(SkillError::NotFound { id: id.to_owned() })
    }

    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Diagnostics about one skill: those with its id or its file.
    pub fn diagnostics_for(&self, skill: &SkillSummary) -> Vec<&Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| {
                d.skill_id.as_deref() == Some(skill.manifest.id.as_str())
                    || d.path.as_deref() == Some(skill.location.as_path())
            })
            .collect()
    }

    pub fn roots(&self) -> &[RootReport] {
        &self.roots
    }

    pub(crate) fn providers(&self) -> &ProviderSet {
        &self.providers
    }

    /// The ids of all skills, for near-miss suggestions.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.skills.keys().map(SkillId::as_str)
    }

    /// Loads the body of a skill: the text after its front matter, with CRLF
    /// turned into LF and surrounding blank lines removed. Reads the file now
    /// (bounded by `max_skill_file_bytes`), so an edit since discovery shows.
    /// A provider skill's body comes from its provider, bounded the same way.
    pub fn body(&self, skill: &SkillSummary) -> Result<String, SkillError> {
        if skill.layout == SkillLayout::Provided {
            return provider::provided_body(&self.providers, skill, self.max_skill_file_bytes)
                .map(|body| normalize_body(&body));
        }
        let load_error = |reason: String| SkillError::Load {
            id: skill.manifest.id.to_string(),
            reason,
        };
        let bytes = read_all(&skill.location, self.max_skill_file_bytes).map_err(|err| {
            load_error(match err {
                ReadError::TooLarge { len, max } => {
                    format!("the file is {len} bytes; skills.max_skill_file_bytes is {max}")
                }
                ReadError::NotRegular => "the file is not a regular file".into(),
                ReadError::Io(err) => err.to_string(),
            })
        })?;
        let offset = match front_matter::split(&bytes) {
            Split::Block { body_offset, .. } | Split::None { body_offset } => body_offset,
            Split::Unterminated { .. } => {
                return Err(load_error("the front matter is no longer closed".into()));
            }
        };
        let body = std::str::from_utf8(&bytes[offset..]).map_err(|err| {
            let before = &bytes[offset..offset + err.valid_up_to()];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            load_error(format!(
                "the body is not valid UTF-8 (body line {line}); save the file as UTF-8"
            ))
        })?;
        Ok(normalize_body(body))
    }

    /// Registry-level diagnostics for a deep check (`skills doctor`): loads
    /// every body and reports the ones that cannot be used.
    pub fn check_bodies(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for skill in self.skills() {
            if let Err(err) = self.body(skill) {
                let code = if err.to_string().contains("UTF-8") {
                    DiagnosticCode::InvalidUtf8
                } else {
                    DiagnosticCode::Unreadable
                };
                out.push(
                    Diagnostic::error(code, err.to_string())
                        .with_path(&skill.location)
                        .with_skill(skill.manifest.id.as_str()),
                );
            }
        }
        out
    }
}

fn normalize_body(body: &str) -> String {
    let body = if body.contains('\r') {
        body.replace("\r\n", "\n")
    } else {
        body.to_owned()
    };
    let trimmed_start = body.trim_start_matches(['\n', ' ', '\t']);
    // Keep indentation of the first line: only whole blank lines are dropped.
    let start = body.len() - trimmed_start.len();
    let line_start = body[..start].rfind('\n').map_or(0, |i| i + 1);
    body[line_start..].trim_end().to_owned()
}

/// A digest of what a walk found: roots, every candidate's file identity,
/// metadata and origin, and the walk's own diagnostics. Equal digests with
/// every file answered by the cache mean an identical registry.
fn walk_digest(
    reports: &[RootReport],
    candidates: &[(usize, Candidate)],
    diagnostics: &[Diagnostic],
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = crate::fxhash::FxHasher::default();
    for report in reports {
        report.label.hash(&mut hasher);
        report
            .canonical
            .as_deref()
            .map(std::path::Path::as_os_str)
            .hash(&mut hasher);
    }
    for (root, candidate) in candidates {
        root.hash(&mut hasher);
        candidate.stamp.hash(&mut hasher);
        candidate.origin_key.hash(&mut hasher);
    }
    for d in diagnostics {
        d.code.hash(&mut hasher);
        d.path
            .as_deref()
            .map(std::path::Path::as_os_str)
            .hash(&mut hasher);
        d.message.hash(&mut hasher);
    }
    hasher.finish()
}

/// Loads `jobs` (candidate slot, prior cached outcome) on up to
/// `available_parallelism` threads; small batches stay on this thread. A
/// worker that panics (a parser bug) costs only its own files, which become
/// `unreadable` diagnostics.
fn load_in_parallel(
    candidates: &[(usize, Candidate)],
    jobs: Vec<(usize, Option<Prior>)>,
    max_bytes: usize,
    now: SystemTime,
    racy_window: std::time::Duration,
) -> Vec<(usize, Loaded)> {
    const PER_THREAD_MIN: usize = 64;
    let threads = crate::worker_threads().min(jobs.len().div_ceil(PER_THREAD_MIN).max(1));
    // Each root held open, so files are opened relative to it (a shorter
    // path walk in the kernel than from `/`, per file).
    let mut roots: HashMap<&std::path::Path, Option<DirHandle>> = HashMap::new();
    for (slot, _) in &jobs {
        if let Some(root) = &candidates[*slot].1.origin.source.root {
            roots
                .entry(root.as_path())
                .or_insert_with(|| DirHandle::open(root).ok());
        }
    }
    let run = |chunk: Vec<(usize, Option<Prior>)>| -> Vec<(usize, Loaded)> {
        chunk
            .into_iter()
            .map(|(slot, prior)| {
                let candidate = &candidates[slot].1;
                let root = candidate
                    .origin
                    .source
                    .root
                    .as_deref()
                    .and_then(|root| roots.get(root)?.as_ref());
                (
                    slot,
                    load_fresh(root, candidate, max_bytes, now, racy_window, prior),
                )
            })
            .collect()
    };
    if threads <= 1 {
        return run(jobs);
    }
    // Interleave jobs so each thread gets a similar mix of small and large files.
    let mut chunks: Vec<Vec<(usize, Option<Prior>)>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, job) in jobs.into_iter().enumerate() {
        chunks[i % threads].push(job);
    }
    let mut out = Vec::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let slots: Vec<usize> = chunk.iter().map(|(slot, _)| *slot).collect();
                (slots, scope.spawn(move || run(chunk)))
            })
            .collect();
        for (slots, handle) in handles {
            match handle.join() {
                Ok(loaded) => out.extend(loaded),
                Err(_) => out.extend(
                    slots
                        .into_iter()
                        .map(|slot| (slot, failed_load(&candidates[slot].1))),
                ),
            }
        }
    });
    out
}
