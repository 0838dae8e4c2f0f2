//! Building a [`SkillRegistry`] from source roots and providers, keeping
//! what makes the next build cheap: the summary cache, the last registry
//! with the walk snapshot that vouches for it, and optionally the disk
//! cache that carries both to a later process.
//!
//! A build is a sequence of named steps (see
//! [`Discovery::build_with_providers`]): answer from the last registry when
//! nothing changed, else walk every root while loading its candidates,
//! settle the loads into the cache, add the providers' skills, resolve
//! precedence, and remember the result.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use bcode_fs::DirHandle;
use bcode_skill_models::{Diagnostic, DiagnosticCode, SkillSource, SkillSummary};

use crate::discover::cache::disk::DiskCache;
use crate::discover::cache::memory::LoadSettings;
use crate::discover::cache::memory::{Loaded, Lookup, SummaryCache, lost_load};
use crate::discover::candidate::{CacheKey, Candidate};
use crate::discover::load_pool::{Job, JobQueue, LoadPool};
use crate::discover::precedence;
use crate::discover::read::{RootConfinements, confinement_of};
use crate::discover::record::{InstructionRecord, InstructionRecords};
use crate::discover::registry::{DiscoveryOptions, RootReport, SkillRegistry};
use crate::discover::snapshot::{ConfirmedStamps, RootSnapshot, WalkSnapshot};
use crate::discover::sources::SourceRoot;
use crate::discover::walk::walk_root;
use crate::parse::skill::ParseOutcome;
use crate::provider::{self, SkillProvider};

/// Counters of the last build, for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiscoveryStats {
    /// Files the walks of the last build offered as possible skills, aliases
    /// included, whether then read or answered from the cache.
    pub candidates: usize,
    /// Instruction files opened and read.
    pub files_read: usize,
    /// Front matters parsed.
    pub files_parsed: usize,
    /// Candidates answered from the cache without reading.
    pub cache_hits: usize,
    /// The build did not walk: every stamp the last walk depended on was
    /// unchanged, so the last registry was the answer.
    pub confirmed_by_stamps: bool,
    /// That last registry came from the disk cache (another process).
    pub from_disk_cache: bool,
    /// The build was written to the disk cache.
    pub written_to_disk_cache: bool,
    /// Filesystem calls made to resolve the roots: one per folder on their
    /// paths not resolved before in this build (the repository's roots in
    /// the folders down to a deep working folder share them), so linear in
    /// the depth.
    pub root_lookups: usize,
}

/// Builds registries, keeping the summary cache between builds.
#[derive(Debug)]
pub struct Discovery {
    options: DiscoveryOptions,
    cache: SummaryCache,
    stats: DiscoveryStats,
    /// The last registry built from roots alone, with what its walk
    /// depended on: when every probe answers as before, the registry is
    /// the answer without walking at all.
    confirmed: Option<Confirmed>,
    /// The last registry built from roots alone, vouched for or not: a
    /// build that has to walk (a stamp too recent, an unreadable folder)
    /// but produces the same result returns it, so callers that compare
    /// registries ([`SkillRegistry::same_as`]) need not redo their work.
    last: Option<SkillRegistry>,
    /// Where `confirmed` survives the process, if anywhere.
    disk: Option<DiskCache>,
    /// Built once and dropped (see [`Discovery::single_build`]): nothing is
    /// kept for a next build in this process.
    single: bool,
    /// Whether builds read instruction files whole and record them (see
    /// [`Discovery::recording_instructions`]).
    recording: bool,
    /// What the last build recorded, until taken.
    records: InstructionRecords,
}

#[derive(Debug)]
struct Confirmed {
    registry: SkillRegistry,
    snapshot: WalkSnapshot,
}

/// What walking every root and loading its candidates produced.
struct Walked {
    /// Each slot's root, by index.
    roots: Vec<u32>,
    /// Second paths to a file already found, with the first one's slot.
    duplicates: Vec<(PathBuf, usize)>,
    /// Each slot's outcome: cache hits filled during the walk, the rest
    /// as the loaders report them.
    outcomes: Vec<Option<Filed>>,
    /// The outcomes' diagnostics, filed as they came.
    filed: FiledDiagnostics,
    /// Whether every outcome may be cached (and so vouched for): a read
    /// that failed is not.
    all_cacheable: bool,
    snapshots: Vec<RootSnapshot>,
    diagnostics: Vec<Diagnostic>,
    reports: Vec<RootReport>,
    /// Where each root's files may resolve: the loaders' reads and the
    /// registry's body reads keep to it.
    confinements: RootConfinements,
    /// What a recording build kept of each skill it read.
    records: Vec<(Arc<SkillSummary>, InstructionRecord)>,
}

impl Discovery {
    /// A discovery with an empty summary cache, no previous registry and no
    /// disk cache, so its first build walks every root.
    pub fn new(options: DiscoveryOptions) -> Self {
        Discovery {
            cache: SummaryCache::new(options.walk.racy_window),
            options,
            stats: DiscoveryStats::default(),
            confirmed: None,
            last: None,
            disk: None,
            single: false,
            recording: false,
            records: InstructionRecords::default(),
        }
    }

    /// A discovery whose builds read each instruction file they load whole
    /// (within `max_skill_file_bytes`, as ever) and record it: the stamp
    /// taken before the read, the `sha256:` digest, the front-matter fields
    /// as written ([`Discovery::take_records`]). For a host that would read
    /// the files again for these (the MCP server); a plain build reads only
    /// enough for the front matter and records nothing. A file answered
    /// without a read (an unchanged tree, the summary cache) is not
    /// recorded. The options, and so the disk cache, are the same.
    pub fn recording_instructions(mut self) -> Self {
        self.recording = true;
        self
    }

    /// Builds from now on record nothing (see
    /// [`Discovery::recording_instructions`]).
    pub(crate) fn stop_recording(&mut self) {
        self.recording = false;
    }

    /// What the last build recorded of each skill of its registry (see
    /// [`Discovery::recording_instructions`]), taken out: empty when
    /// nothing was read or recording is off.
    pub fn take_records(&mut self) -> InstructionRecords {
        std::mem::take(&mut self.records)
    }

    /// A discovery that builds once and is then dropped (a one-shot command,
    /// a single-turn session): it keeps no summary cache, no last registry
    /// and no walk snapshot in memory, which at 60,000 skills is a third of
    /// a build's peak. With a disk cache the snapshot is still taken, for
    /// the disk. Its builds are the same; only a second one costs a walk.
    pub fn single_build(mut self) -> Self {
        self.single = true;
        self
    }

    /// Keeps the last registry and its snapshot in `cache` too, so that a
    /// later process with the same options and roots is answered from it
    /// while nothing changed (see [`crate::DiskCache`]).
    pub fn with_disk_cache(mut self, cache: DiskCache) -> Self {
        self.disk = Some(cache);
        self
    }

    /// The folders the last build's answer depended on (see
    /// [`crate::discover::snapshot::WalkSnapshot::folders`]); `None` without a
    /// trusted snapshot.
    pub(crate) fn folders(&self) -> Option<std::collections::BTreeSet<std::path::PathBuf>> {
        self.confirmed.as_ref()?.snapshot.folders()
    }

    /// The stamps the last build confirmed, when it was answered from the
    /// last registry because every stamp its walk depended on answered as
    /// recorded (see [`ConfirmedStamps`]): a check of the same paths for
    /// this registry, made next, may take them from there. `None` after a
    /// build that walked.
    pub fn confirmed_stamps(&self) -> Option<ConfirmedStamps<'_>> {
        if !self.stats.confirmed_by_stamps {
            return None;
        }
        Some(ConfirmedStamps::of(&self.confirmed.as_ref()?.snapshot))
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
    /// [`crate::SkillProvider`]). A failing provider becomes a diagnostic.
    pub fn build_with_providers(
        &mut self,
        roots: &[SourceRoot],
        providers: &[Arc<dyn SkillProvider>],
    ) -> SkillRegistry {
        self.records = InstructionRecords::default();
        // A provider's answer can change without any stamp moving, so only
        // builds from roots alone may be answered from the last registry.
        if providers.is_empty()
            && let Some(registry) = self.answer_if_unchanged(roots)
        {
            return registry;
        }
        let now = SystemTime::now();
        let mut stats = DiscoveryStats::default();
        let mut walked = self.walk_and_load(roots, now, &mut stats);
        let (mut skills, all_cacheable) = self.settle_loads(&mut walked);
        let Walked {
            snapshots,
            mut diagnostics,
            reports,
            confinements,
            records,
            ..
        } = walked;
        let provided = provider::collect(
            providers,
            precedence::first_provider_ordinal(roots),
            self.options.max_skill_file_bytes,
        );
        skills.extend(provided.skills.into_iter().map(Arc::new));
        diagnostics.extend(provided.diagnostics);
        let (index, resolution) = precedence::resolve(skills, &self.options.disabled_ids);
        diagnostics.extend(resolution);
        sort_diagnostics(&mut diagnostics);
        diagnostics.dedup();
        let registry = match &self.last {
            Some(last)
                if providers.is_empty()
                    && last.holds(&index, &diagnostics, &reports, &confinements) =>
            {
                last.clone()
            }
            _ => SkillRegistry::new(
                index,
                diagnostics,
                reports,
                &self.options,
                provided.providers,
                confinements,
            ),
        };
        if !records.is_empty() {
            self.records = InstructionRecords::new(records, |summary| {
                registry
                    .get(summary.manifest.id.as_str())
                    .is_some_and(|kept| std::ptr::eq(kept, &**summary))
            });
        }
        self.last = (providers.is_empty() && !self.single).then(|| registry.clone());
        self.stats = stats;
        // A file that could not be read (often transient: EMFILE, EIO) is
        // not cached, so the next build tries again; the snapshot must not
        // vouch for this registry either, in memory or on disk.
        if providers.is_empty() && all_cacheable {
            self.remember(roots, &registry, snapshots);
        } else {
            self.confirmed = None;
        }
        registry
    }

    /// The last registry, when every stamp its walk depended on answers as
    /// before. A fresh discovery with a disk cache first takes the last
    /// registry from there.
    fn answer_if_unchanged(&mut self, roots: &[SourceRoot]) -> Option<SkillRegistry> {
        let from_disk = self.confirmed.is_none() && self.load_from_disk(roots);
        let confirmed = self.confirmed.as_ref()?;
        if !confirmed.snapshot.unchanged(roots) {
            return None;
        }
        let candidates = confirmed.snapshot.candidates();
        self.stats = DiscoveryStats {
            candidates,
            cache_hits: candidates,
            confirmed_by_stamps: true,
            from_disk_cache: from_disk,
            ..DiscoveryStats::default()
        };
        Some(confirmed.registry.clone())
    }

    /// Takes the last registry and its snapshot from the disk cache.
    fn load_from_disk(&mut self, roots: &[SourceRoot]) -> bool {
        let Some(disk) = &self.disk else {
            return false;
        };
        let Some((registry, snapshot)) = disk.load(&self.options, roots) else {
            return false;
        };
        self.confirmed = Some(Confirmed { registry, snapshot });
        true
    }

    /// Walks every root in precedence order; each candidate is looked up in
    /// the cache as it is found and, when it must be read, loaded on the
    /// pool's workers while the walk goes on.
    fn walk_and_load(
        &mut self,
        roots: &[SourceRoot],
        now: SystemTime,
        stats: &mut DiscoveryStats,
    ) -> Walked {
        let queue = JobQueue::new(LoadSettings {
            max_bytes: self.options.max_skill_file_bytes,
            now,
            racy_window: self.options.walk.racy_window,
            record: self.recording,
        });
        self.cache.begin_build();
        let mut intake = Intake {
            cache: &mut self.cache,
            stats,
            seen_files: HashMap::default(),
            now,
            all_cacheable: true,
            keep_keys: !self.single,
            roots: Vec::new(),
            keys: Vec::new(),
            outcomes: Vec::new(),
            filed: FiledDiagnostics::default(),
            duplicates: Vec::new(),
            root_handle: None,
            confinements: RootConfinements::of(roots),
            records: Vec::new(),
        };
        let mut snapshots = Vec::with_capacity(roots.len());
        let mut diagnostics = Vec::new();
        let mut reports = Vec::with_capacity(roots.len());
        let walk_options = &self.options.walk;
        // The snapshot vouches for the registry at the next build, or in a
        // later process through the disk cache.
        let record = !self.single || self.disk.is_some();
        std::thread::scope(|scope| {
            let mut pool = LoadPool::new(scope, &queue, bcode_fs::worker_threads());
            // One for every root: the folders the repository's roots share
            // are resolved once.
            let mut paths = bcode_fs::Canonicalizer::new();
            for (index, root) in roots.iter().enumerate() {
                let confinement = intake
                    .confinements
                    .at(index)
                    .unwrap_or_else(|| confinement_of(root));
                let walked = walk_root(
                    root,
                    confinement,
                    walk_options,
                    now,
                    record,
                    &mut paths,
                    &mut |candidate| {
                        intake.accept(index, candidate, &mut pool);
                        // Filed as they come, so no result waits in a list.
                        for (slot, loaded) in pool.ready() {
                            intake.receive(slot, loaded);
                        }
                    },
                );
                intake.stats.root_lookups = paths.calls();
                snapshots.push(walked.snapshot);
                diagnostics.extend(walked.diagnostics);
                reports.push(RootReport {
                    label: root.source.label.clone(),
                    path: root.path.clone(),
                    canonical: walked.canonical_root,
                    skills_found: 0,
                });
            }
            for (slot, loaded) in pool.finish() {
                intake.receive(slot, loaded);
            }
        });
        Walked {
            all_cacheable: intake.all_cacheable,
            roots: intake.roots,
            duplicates: intake.duplicates,
            outcomes: intake.outcomes,
            filed: intake.filed,
            snapshots,
            diagnostics,
            reports,
            confinements: intake.confinements,
            records: intake.records,
        }
    }

    /// Fills every slot the loaders left empty, names the second paths,
    /// and collects the skills in walk order, counting them per root.
    /// Returns whether every outcome may be cached (and so vouched for).
    fn settle_loads(&mut self, walked: &mut Walked) -> (Vec<Arc<SkillSummary>>, bool) {
        let mut all_cacheable = walked.all_cacheable;
        // A slot still empty was submitted but its worker died with it:
        // the file is not known any more, its root is.
        for (slot, (outcome, root)) in walked.outcomes.iter_mut().zip(&walked.roots).enumerate() {
            if outcome.is_none() {
                all_cacheable = false;
                let root = walked.reports.get(*root as usize).map(|r| r.path.as_path());
                *outcome = Some(
                    walked
                        .filed
                        .file(slot, lost_load(root.unwrap_or(Path::new(""))).outcome),
                );
            }
        }
        for (location, first) in std::mem::take(&mut walked.duplicates) {
            let first = walked
                .outcomes
                .get(first)
                .and_then(Option::as_ref)
                .and_then(Filed::location);
            walked.diagnostics.push(duplicate_path(&location, first));
        }
        let mut skills = Vec::with_capacity(walked.roots.len());
        let walk = std::mem::take(&mut walked.diagnostics);
        walked.diagnostics = std::mem::take(&mut walked.filed).in_walk_order(walk);
        for (root, outcome) in walked.roots.iter().zip(&mut walked.outcomes) {
            if let Some(Filed::Skill(skill)) = outcome.take() {
                if let Some(report) = walked.reports.get_mut(*root as usize) {
                    report.skills_found += 1;
                }
                skills.push(skill);
            }
        }
        self.cache.end_build();
        (skills, all_cacheable)
    }

    /// Keeps `registry` with the snapshot of its walk for the next build,
    /// and writes both to the disk cache when there is one.
    fn remember(
        &mut self,
        roots: &[SourceRoot],
        registry: &SkillRegistry,
        snapshots: Vec<RootSnapshot>,
    ) {
        let snapshot = WalkSnapshot::new(snapshots, self.stats.candidates);
        if let Some(disk) = &self.disk {
            self.stats.written_to_disk_cache =
                disk.store(&self.options, roots, registry, &snapshot);
        }
        if !self.single {
            self.confirmed = Some(Confirmed {
                registry: registry.clone(),
                snapshot,
            });
        }
    }
}

/// What a build does with each candidate the walk finds, in walk order:
/// drop second paths to a file already seen, answer from the cache, or
/// submit a load.
struct Intake<'a> {
    cache: &'a mut SummaryCache,
    stats: &'a mut DiscoveryStats,
    /// File identity to the slot of the first candidate with it.
    seen_files: HashMap<(u64, u64), usize, rustc_hash::FxBuildHasher>,
    /// When the build started (the cache's verification time).
    now: SystemTime,
    /// No outcome so far must stay out of the cache.
    all_cacheable: bool,
    /// Whether the build keeps a summary cache, and so each slot's key.
    keep_keys: bool,
    /// Each slot's root index.
    roots: Vec<u32>,
    /// Each slot's cache key, when kept.
    keys: Vec<CacheKey>,
    /// Filled now for cache hits, after loading for the rest.
    outcomes: Vec<Option<Filed>>,
    /// The outcomes' diagnostics, filed as they come.
    filed: FiledDiagnostics,
    /// Second paths to a file already found, with the first one's slot
    /// (named once its outcome is known).
    duplicates: Vec<(PathBuf, usize)>,
    /// The last root's handle, shared by its candidates (they share one
    /// source), so files are opened relative to it.
    root_handle: Option<(Arc<SkillSource>, Option<Arc<DirHandle>>)>,
    /// Each root's confinement, which its handle keeps reads to.
    confinements: RootConfinements,
    /// What a recording build kept of each skill it read.
    records: Vec<(Arc<SkillSummary>, InstructionRecord)>,
}

impl Intake<'_> {
    /// Files what a loader produced for `slot`: in its slot, and in the
    /// cache when the build keeps one.
    fn receive(&mut self, slot: usize, mut loaded: Loaded) {
        self.all_cacheable &= loaded.cacheable;
        if let Some(record) = loaded.record.take()
            && let Some(skill) = &loaded.outcome.skill
        {
            self.records.push((Arc::clone(skill), *record));
        }
        self.stats.files_read += usize::from(loaded.read);
        self.stats.files_parsed += usize::from(loaded.parsed);
        self.stats.cache_hits += usize::from(loaded.reused);
        if let Some(key) = self.keys.get(slot) {
            self.cache.store(key, &loaded, self.now);
        }
        if let Some(outcome) = self.outcomes.get_mut(slot) {
            *outcome = Some(self.filed.file(slot, loaded.outcome));
        }
    }

    fn accept(&mut self, root_index: usize, candidate: Candidate, pool: &mut LoadPool<'_, '_>) {
        self.stats.candidates += 1;
        if let Some(identity) = candidate.stamp.identity() {
            if let Some(&first) = self.seen_files.get(&identity) {
                self.duplicates.push((candidate.origin.location, first));
                return;
            }
            self.seen_files.insert(identity, self.roots.len());
        }
        let slot = self.roots.len();
        self.roots
            .push(u32::try_from(root_index).unwrap_or(u32::MAX));
        if self.keep_keys {
            self.keys.push(CacheKey::of(&candidate));
        }
        let prior = match self.cache.lookup(&candidate) {
            Lookup::Hit(outcome) => {
                self.stats.cache_hits += 1;
                let filed = self.filed.file(slot, outcome);
                self.outcomes.push(Some(filed));
                return;
            }
            Lookup::Verify(prior) => Some(prior),
            Lookup::Miss => None,
        };
        let root = self.root_handle(&candidate.origin.source);
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
            .map(|handle| Arc::new(handle.confined(self.confinements.of_source(source))));
        self.root_handle = Some((Arc::clone(source), handle.clone()));
        handle
    }
}

/// The note for `location`, a second path (a link) to the file found first
/// at `first`: the file is loaded once.
fn duplicate_path(location: &Path, first: Option<&Path>) -> Diagnostic {
    let first = first.map(|p| p.display().to_string()).unwrap_or_default();
    Diagnostic::info(
        DiagnosticCode::DuplicatePath,
        format!(
            "`{}` is a second path to `{first}`, already loaded",
            location.display(),
        ),
    )
    .with_path(location)
}

/// What a build keeps of one file's outcome until it is settled: its
/// skill, else the file its diagnostics name (which a second path to it
/// names too). The diagnostics themselves are filed apart, as they come
/// ([`FiledDiagnostics`]).
enum Filed {
    Skill(Arc<SkillSummary>),
    NoSkill(Option<Arc<Path>>),
}

impl Filed {
    /// The file it is about.
    fn location(&self) -> Option<&Path> {
        match self {
            Filed::Skill(skill) => Some(&skill.location),
            Filed::NoSkill(path) => path.as_deref(),
        }
    }
}

/// Every outcome's diagnostics in one list, in the order the outcomes
/// came, each with its slot, to be put in walk order once the build is
/// settled. A list per file, appended to one list at the end, held every
/// diagnostic twice at the build's peak (one allocation a file, then the
/// whole list: 13 MB at 57,000 diagnostics).
#[derive(Default)]
struct FiledDiagnostics {
    list: Vec<Diagnostic>,
    /// The slot of each diagnostic in `list`.
    slots: Vec<u32>,
}

impl FiledDiagnostics {
    /// Files `outcome`'s diagnostics under `slot` (taken out of the shared
    /// outcome when no cache holds it too) and keeps the rest of it.
    fn file(&mut self, slot: usize, outcome: Arc<ParseOutcome>) -> Filed {
        // More slots than a u32 counts are not walked (the walk's entry
        // budget is far lower); if they were, only their order would suffer.
        let slot = u32::try_from(slot).unwrap_or(u32::MAX);
        let (skill, diagnostics) = match Arc::try_unwrap(outcome) {
            Ok(outcome) => (outcome.skill, outcome.diagnostics),
            Err(shared) => (shared.skill.clone(), shared.diagnostics.clone()),
        };
        let filed = match skill {
            Some(skill) => Filed::Skill(skill),
            None => Filed::NoSkill(diagnostics.iter().find_map(|d| d.path.clone())),
        };
        self.slots
            .extend(std::iter::repeat_n(slot, diagnostics.len()));
        self.list.extend(diagnostics);
        filed
    }

    /// `first`, then every filed diagnostic in slot order (a slot's in the
    /// order its outcome gave them), moved in place rather than copied.
    fn in_walk_order(self, first: Vec<Diagnostic>) -> Vec<Diagnostic> {
        let FiledDiagnostics { mut list, slots } = self;
        // `order[k]`: the filed position of the diagnostic that goes k-th.
        // Stable, so a slot's diagnostics keep their order.
        let mut order: Vec<usize> = (0..list.len()).collect();
        order.sort_by_key(|&at| slots.get(at).copied().unwrap_or(u32::MAX));
        drop(slots);
        permute(&mut list, order);
        list.splice(0..0, first);
        list
    }
}

/// Sorts `diagnostics` as a stable sort by [`Diagnostic::sort_key`] would,
/// moving each in place: `sort_by` borrows room for the whole list
/// (6 MB at 57,000 diagnostics) and this only a position for each.
fn sort_diagnostics(diagnostics: &mut [Diagnostic]) {
    let mut order: Vec<usize> = (0..diagnostics.len()).collect();
    order.sort_by(|&a, &b| {
        let key = |at: usize| diagnostics.get(at).map(Diagnostic::sort_key);
        key(a).cmp(&key(b))
    });
    permute(diagnostics, order);
}

/// Reorders `items` so the k-th is the one that was at `order[k]`, by
/// swaps along each cycle (`order` must hold each position once).
fn permute<T>(items: &mut [T], mut order: Vec<usize>) {
    for start in 0..order.len() {
        let mut at = start;
        // A position whose item is in place points at itself.
        while let Some(from) = order.get_mut(at).map(|from| std::mem::replace(from, at)) {
            if from == start || from >= items.len() {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bcode_skill_models::{DiagnosticCode, Severity};

    fn note(path: &str, message: &str) -> Diagnostic {
        Diagnostic::warning(DiagnosticCode::InvalidField, message).with_path(path)
    }

    #[test]
    fn permuting_gathers_each_item_from_its_position() {
        for order in [
            vec![],
            vec![0],
            vec![2, 0, 1],
            vec![1, 0, 3, 2, 4],
            vec![4, 3, 2, 1, 0],
            vec![3, 4, 0, 2, 1],
        ] {
            let items: Vec<usize> = (10..10 + order.len()).collect();
            let gathered: Vec<usize> = order.iter().map(|&at| items[at]).collect();
            let mut permuted = items.clone();
            permute(&mut permuted, order);
            assert_eq!(permuted, gathered);
        }
    }

    #[test]
    fn diagnostics_sort_as_a_stable_sort_would() {
        // Equal keys (path and message) with different hints keep their
        // order, as `sort_by` keeps it.
        let given = vec![
            note("/b", "x"),
            note("/a", "y").with_hint("first"),
            note("/a", "x"),
            note("/a", "y").with_hint("second"),
            Diagnostic::new(Severity::Info, DiagnosticCode::Disabled, "z"),
            note("/a", "y").with_hint("third"),
        ];
        let mut expected = given.clone();
        expected.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        let mut sorted = given;
        sort_diagnostics(&mut sorted);
        assert_eq!(sorted, expected);
        let hints: Vec<String> = sorted
            .iter()
            .filter_map(|d| d.hint().map(|h| h.into_owned()))
            .collect();
        assert_eq!(hints, ["first", "second", "third"]);
    }

    #[test]
    fn filed_diagnostics_come_back_in_walk_order_after_the_walks() {
        let outcome = |path: &str, messages: &[&str]| {
            Arc::new(ParseOutcome {
                skill: None,
                not_a_skill: false,
                diagnostics: messages.iter().map(|m| note(path, m)).collect(),
            })
        };
        let mut filed = FiledDiagnostics::default();
        // Slots 2, 0, 1 come in that order; slot 1 has none.
        let third = filed.file(2, outcome("/c", &["c1", "c2"]));
        let first = filed.file(0, outcome("/a", &["a1", "a2", "a3"]));
        let second = filed.file(1, outcome("/b", &[]));
        assert_eq!(
            [third.location(), first.location(), second.location()],
            [Some(Path::new("/c")), Some(Path::new("/a")), None]
        );
        let all = filed.in_walk_order(vec![note("/w", "walk")]);
        let messages: Vec<String> = all.iter().map(|d| d.message().into_owned()).collect();
        assert_eq!(messages, ["walk", "a1", "a2", "a3", "c1", "c2"]);
    }
}
