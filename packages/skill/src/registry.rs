//! The registry: building the index from source roots (through the cache),
//! and answering lookups. Bodies are not part of the index; `body` loads one
//! on demand.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use bcode_skill_models::{
    Diagnostic, DiagnosticCode, SkillError, SkillId, SkillLayout, SkillSource, SkillSummary,
    SkillsConfig, SourceKind,
};

use crate::cache::{DiscoveryStats, Lookup, SummaryCache, failed_load};
use crate::front_matter::{self, Split};
use crate::load_pool::{Job, JobQueue, LoadPool, LoadSettings};
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
        let queue = JobQueue::new(LoadSettings {
            max_bytes: self.options.max_skill_file_bytes,
            now,
            racy_window: self.options.walk.racy_window,
        });
        let mut intake = Intake {
            cache: &mut self.cache,
            stats: &mut stats,
            seen_files: HashMap::default(),
            candidates: Vec::new(),
            outcomes: Vec::new(),
            duplicates: Vec::new(),
            root_handle: None,
        };
        let walk_options = &self.options.walk;
        // Walk every root in precedence order; each candidate is looked up
        // in the cache as it is found and, when it must be read, loaded on
        // the pool's workers while the walk goes on.
        let (dispatched, results) = std::thread::scope(|scope| {
            let mut pool = LoadPool::new(scope, &queue, bcode_fs::worker_threads());
            for (index, root) in roots.iter().enumerate() {
                let walked = walk_root(root, walk_options, now, &mut |candidate| {
                    intake.accept(index, candidate, &mut pool);
                });
                snapshots.push(walked.snapshot);
                diagnostics.extend(walked.diagnostics);
                diagnostics.append(&mut intake.duplicates);
                reports.push(RootReport {
                    label: root.source.label.clone(),
                    path: root.path.clone(),
                    canonical: walked.canonical_root,
                    skills_found: 0,
                });
            }
            (pool.dispatched(), pool.finish())
        });
        let Intake {
            candidates,
            mut outcomes,
            ..
        } = intake;
        let digest = walk_digest(&reports, &candidates, &diagnostics);
        // Nothing to read, the same files as last time, and no provider
        // whose answer could have changed: the last registry is the answer.
        if dispatched == 0
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
        // A file that could not be read (often transient: EMFILE, EIO) is
        // not cached, so the next build tries again; the snapshot must not
        // vouch for this registry either, in memory or on disk.
        let mut all_cacheable = true;
        self.cache.reserve(results.len());
        for (slot, loaded) in results {
            all_cacheable &= loaded.cacheable;
            stats.files_read += usize::from(loaded.read);
            stats.files_parsed += usize::from(loaded.parsed);
            stats.cache_hits += usize::from(loaded.reused);
            self.cache.store(&candidates[slot].1, &loaded, now);
            outcomes[slot] = Some(loaded.outcome);
        }
        // A slot still empty was submitted but its worker died: its file
        // becomes a diagnostic, like a load that panicked.
        for (outcome, (_, candidate)) in outcomes.iter_mut().zip(&candidates) {
            if outcome.is_none() {
                all_cacheable = false;
                *outcome = Some(failed_load(candidate).outcome);
            }
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
    candidates: &[(usize, Arc<Candidate>)],
    diagnostics: &[Diagnostic],
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = rustc_hash::FxHasher::default();
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

/// What a build does with each candidate the walk finds, in walk order:
/// drop second paths to a file already seen, answer from the cache, or
/// submit a load.
struct Intake<'a> {
    cache: &'a mut SummaryCache,
    stats: &'a mut DiscoveryStats,
    /// File identity to the slot of the first candidate with it.
    seen_files: HashMap<(u64, u64), usize, rustc_hash::FxBuildHasher>,
    /// Every kept candidate with its root's index, by slot.
    candidates: Vec<(usize, Arc<Candidate>)>,
    /// Filled now for cache hits, after loading for the rest.
    outcomes: Vec<Option<Arc<ParseOutcome>>>,
    /// `duplicate_path` diagnostics of the root being walked.
    duplicates: Vec<Diagnostic>,
    /// The last root's handle, shared by its candidates (they share one
    /// source), so files are opened relative to it.
    root_handle: Option<(Arc<SkillSource>, Option<Arc<DirHandle>>)>,
}

impl Intake<'_> {
    fn accept(&mut self, root_index: usize, candidate: Candidate, pool: &mut LoadPool<'_, '_>) {
        self.stats.candidates += 1;
        if let Some(identity) = candidate.stamp.identity() {
            if let Some(&first) = self.seen_files.get(&identity) {
                self.duplicates.push(
                    Diagnostic::info(
                        DiagnosticCode::DuplicatePath,
                        format!(
                            "`{}` is a second path to `{}`, already loaded",
                            candidate.origin.location.display(),
                            self.candidates[first].1.origin.location.display()
                        ),
                    )
                    .with_path(&candidate.origin.location),
                );
                return;
            }
            self.seen_files.insert(identity, self.candidates.len());
        }
        let slot = self.candidates.len();
        let prior = match self.cache.lookup(&candidate) {
            Lookup::Hit(outcome) => {
                self.stats.cache_hits += 1;
                self.candidates.push((root_index, Arc::new(candidate)));
                self.outcomes.push(Some(outcome));
                return;
            }
            Lookup::Verify(prior) => Some(prior),
            Lookup::Miss => None,
        };
        let root = self.root_handle(&candidate.origin.source);
        let candidate = Arc::new(candidate);
        self.candidates.push((root_index, Arc::clone(&candidate)));
        self.outcomes.push(None);
        pool.submit(Job {
            slot,
            candidate,
            root,
            prior,
        });
    }

    /// The held-open root of `source`, opened on its first load.
    fn root_handle(&mut self, source: &Arc<SkillSource>) -> Option<Arc<DirHandle>> {
        if let Some((known, handle)) = &self.root_handle
            && Arc::ptr_eq(known, source)
        {
            return handle.clone();
        }
        let handle = source
            .root
            .as_deref()
            .and_then(|root| DirHandle::open(root).ok())
            .map(Arc::new);
        self.root_handle = Some((Arc::clone(source), handle.clone()));
        handle
    }
}
