//! The relevance index in the disk cache: a later process (a fresh
//! discovery and a fresh index, nothing shared in memory) analyzes only
//! the skills whose stamps moved, a one-shot query reads the file without
//! analyzing anything, a reload re-indexes the changed skill alone, and a
//! damaged, foreign or linked cache file is ignored with a reason while
//! every answer stays the one a fresh build gives, byte for byte.

#![allow(clippy::unwrap_used, clippy::panic)]

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{Discovery, DiskCache, SkillRegistry, SourceRoot};
use bcode_skill::{LazySkillIndex, RoutingCache, RoutingStats, SearchHit, index_registry};
use bcode_skill_models::SourceKind;
use support::{age, past_racy_window, quick_options, root, write_tree};

const QUERIES: &[&str] = &[
    "terraform modules",
    "skill number 7",
    "fill acroform forms",
    "notes",
    "body 12 and body 30",
    "nothing-matches-this",
];

struct Fixture {
    _tmp: tempfile::TempDir,
    skills: PathBuf,
    cache: PathBuf,
}

impl Fixture {
    /// Forty skills, one with other files, written an hour ago and past
    /// the racy window.
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let skills = tmp.path().join("skills");
        let cache = tmp.path().join("state/cache/skills");
        let mut files: Vec<(String, String)> = (0..40)
            .map(|i| {
                (
                    format!("skill-{i:02}/SKILL.md"),
                    format!(
                        "---\nname: skill-{i:02}\ndescription: Skill number {i}.\n---\nbody {i}\n"
                    ),
                )
            })
            .collect();
        files.push(("skill-07/notes.txt".into(), "x".into()));
        files.push(("skill-03/scripts/fill_acroform.py".into(), "x".into()));
        let tree: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        write_tree(&skills, &tree);
        age(&skills);
        past_racy_window();
        Fixture {
            _tmp: tmp,
            skills,
            cache,
        }
    }

    fn roots(&self) -> Vec<SourceRoot> {
        vec![root(
            SourceKind::RepoAgents,
            "repo:.agents/skills",
            &self.skills,
        )]
    }

    fn routing(&self) -> RoutingCache {
        RoutingCache::new(
            &self.cache,
            &quick_options(&SkillsConfig::default()),
            &self.roots(),
        )
    }

    fn registry(&self) -> SkillRegistry {
        Discovery::new(quick_options(&SkillsConfig::default())).build(&self.roots())
    }

    /// A new process: a fresh discovery and a fresh index over the cache.
    fn process(&self) -> (SkillRegistry, Arc<LazySkillIndex>) {
        let registry = self.registry();
        let index = Arc::new(LazySkillIndex::with_disk_cache(self.routing()));
        index.get_or_build(&registry);
        (registry, index)
    }

    fn file(&self) -> PathBuf {
        self.cache.join(self.routing().file_name())
    }
}

fn stats(analyzed: usize, reused: usize, written: bool) -> RoutingStats {
    let mut stats = RoutingStats::default();
    stats.analyzed = analyzed;
    stats.reused = reused;
    stats.written = written;
    stats
}

/// Every query answers as an index built afresh from `registry`.
fn assert_same_answers(index: &LazySkillIndex, registry: &SkillRegistry) {
    let fresh = index_registry(registry, None);
    let built = index.get_or_build(registry);
    for query in QUERIES {
        let hits: Vec<SearchHit> = built.search(query, 50);
        assert_eq!(hits, fresh.search(query, 50), "{query}");
        // Scores are the same floats, not merely close.
        let bits = |hits: &[SearchHit]| hits.iter().map(|h| h.score.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&hits), bits(&fresh.search(query, 50)), "{query}");
    }
}

/// A one-shot search through the cache answers as a fresh build, and
/// returns what it did.
fn one_shot(f: &Fixture, registry: &SkillRegistry) -> RoutingStats {
    let fresh = index_registry(registry, None);
    let mut last = RoutingStats::default();
    for query in QUERIES {
        let (hits, stats) = f.routing().search(registry, query, 50);
        assert_eq!(hits, fresh.search(query, 50), "{query}");
        last = stats;
    }
    last
}

#[test]
fn a_second_process_reads_the_cache_and_analyzes_nothing() {
    let f = Fixture::new();
    let (registry, first) = f.process();
    assert_eq!(first.stats(), stats(40, 0, true));
    assert_same_answers(&first, &registry);
    let (registry, second) = f.process();
    assert_eq!(second.stats(), stats(0, 40, false));
    assert_same_answers(&second, &registry);
    // A one-shot query reads its terms from the file and analyzes nothing.
    assert_eq!(one_shot(&f, &registry), stats(0, 40, false));
}

/// A first one-shot search writes the index a run of skills at a time and
/// merges the runs: the file is byte for byte the one a whole index in
/// memory writes, its answers are a fresh build's, and the next process
/// reuses every entry.
#[test]
fn a_first_search_writes_in_runs_the_file_a_whole_index_writes() {
    let f = Fixture::new();
    let registry = f.registry();
    let fresh = index_registry(&registry, None);
    // 40 skills in runs of 7: six runs, the last one short.
    let (hits, first) = f
        .routing()
        .with_run_size(7)
        .search(&registry, "terraform modules", 50);
    assert_eq!(hits, fresh.search("terraform modules", 50));
    assert_eq!(first, stats(40, 0, true));
    let in_runs = std::fs::read(f.file()).unwrap();
    std::fs::remove_file(f.file()).unwrap();
    let (_, whole) = f.process();
    assert_eq!(whole.stats(), stats(40, 0, true));
    assert_eq!(std::fs::read(f.file()).unwrap(), in_runs);
    assert_eq!(one_shot(&f, &registry), stats(0, 40, false));
}

#[test]
fn a_new_process_analyzes_only_the_skills_that_changed() {
    let f = Fixture::new();
    f.process();
    // One body changes, one skill is added, one removed, and a file is
    // added below another skill's `scripts/`.
    write_tree(
        &f.skills,
        &[
            (
                "skill-07/SKILL.md",
                "---\nname: skill-07\ndescription: Skill number 7.\n---\nnow about terraform\n",
            ),
            (
                "skill-99/SKILL.md",
                "---\nname: skill-99\ndescription: New.\n---\nterraform modules\n",
            ),
            ("skill-03/scripts/notes_helper.sh", "x"),
        ],
    );
    std::fs::remove_dir_all(f.skills.join("skill-12")).unwrap();
    past_racy_window();
    let registry = f.registry();
    // The one-shot path sees entries that no longer hold: it brings the
    // file up to date, analyzing the three changed skills alone.
    let (hits, one) = f.routing().search(&registry, "notes", 10);
    assert_eq!(hits, index_registry(&registry, None).search("notes", 10));
    assert_eq!(one, stats(3, 37, true));
    let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["skill-07", "skill-03"]);
    // And the next process analyzes nothing.
    let (registry, next) = f.process();
    assert_eq!(next.stats(), stats(0, 40, false));
    assert_same_answers(&next, &registry);
}

#[test]
fn a_skill_written_inside_the_racy_window_is_analyzed_again_until_it_settles() {
    let f = Fixture::new();
    write_tree(
        &f.skills,
        &[(
            "skill-05/SKILL.md",
            "---\nname: skill-05\ndescription: Skill number 5.\n---\nfresh words\n",
        )],
    );
    // Built at once: skill-05's stamp is inside the racy window, so its
    // entry cannot vouch for it.
    let (_, first) = f.process();
    assert_eq!(first.stats(), stats(40, 0, true));
    past_racy_window();
    let (_, second) = f.process();
    assert_eq!(second.stats(), stats(1, 39, true));
    let (registry, third) = f.process();
    assert_eq!(third.stats(), stats(0, 40, false));
    assert_same_answers(&third, &registry);
}

#[test]
fn a_reload_in_a_session_analyzes_only_the_skill_that_changed() {
    for with_disk in [true, false] {
        let f = Fixture::new();
        let mut discovery = Discovery::new(quick_options(&SkillsConfig::default()));
        let before = discovery.build(&f.roots());
        let index = Arc::new(if with_disk {
            LazySkillIndex::with_disk_cache(f.routing())
        } else {
            LazySkillIndex::new()
        });
        index.get_or_build(&before);
        assert_eq!(index.stats().analyzed, 40);
        write_tree(
            &f.skills,
            &[(
                "skill-21/SKILL.md",
                "---\nname: skill-21\ndescription: Skill number 21.\n---\nterraform now\n",
            )],
        );
        past_racy_window();
        let after = discovery.build(&f.roots());
        let next = LazySkillIndex::following(Arc::clone(&index), before);
        next.get_or_build(&after);
        assert_eq!(next.stats(), stats(1, 39, with_disk), "disk: {with_disk}");
        assert_same_answers(&next, &after);
        if with_disk {
            // What the session wrote is what a new process reads.
            let (registry, later) = f.process();
            assert_eq!(later.stats(), stats(0, 40, false));
            assert_same_answers(&later, &registry);
        }
    }
}

/// Damages the cache file with `damage`, then checks that a new process
/// ignores it with a reason, answers as a fresh build and writes a good
/// file again, which the process after uses.
fn check_ignored(f: &Fixture, damage: &dyn Fn(&Path), reason: &str) {
    f.process();
    damage(&f.file());
    let registry = f.registry();
    let index = LazySkillIndex::with_disk_cache(f.routing());
    index.get_or_build(&registry);
    let stats = index.stats();
    let ignored = stats
        .ignored
        .clone()
        .unwrap_or_else(|| panic!("{reason}: not ignored"));
    assert!(ignored.contains(reason), "{reason}: {ignored}");
    assert_eq!((stats.analyzed, stats.written), (40, true), "{reason}");
    assert_same_answers(&index, &registry);
    let (registry, next) = f.process();
    assert_eq!(next.stats().ignored, None, "{reason}");
    assert_same_answers(&next, &registry);
}

#[test]
fn a_damaged_cache_file_is_ignored_with_a_reason_and_rebuilt() {
    let f = Fixture::new();
    let cut = |path: &Path| {
        let len = std::fs::metadata(path).unwrap().len();
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
    };
    check_ignored(&f, &cut, "cut short");
    let long = |path: &Path| {
        let mut bytes = std::fs::read(path).unwrap();
        bytes.extend_from_slice(b"more");
        std::fs::write(path, bytes).unwrap();
    };
    check_ignored(&f, &long, "run long");
    let foreign = |path: &Path| {
        let mut bytes = std::fs::read(path).unwrap();
        bytes[8] = bytes[8].wrapping_add(1);
        std::fs::write(path, bytes).unwrap();
    };
    check_ignored(&f, &foreign, "this version reads 1");
    let garbage = |path: &Path| std::fs::write(path, b"{\"not\": \"an index\"}").unwrap();
    check_ignored(&f, &garbage, "cut short");
    let oversized = |path: &Path| {
        // Sparse: nothing of it is read.
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_len(600 * 1024 * 1024)
            .unwrap();
    };
    check_ignored(&f, &oversized, "more than the limit");
}

#[test]
fn every_flipped_byte_of_the_cache_file_is_caught() {
    let f = Fixture::new();
    f.process();
    let good = std::fs::read(f.file()).unwrap();
    let registry = f.registry();
    let fresh = index_registry(&registry, None);
    let expected: Vec<Vec<SearchHit>> = QUERIES.iter().map(|q| fresh.search(q, 50)).collect();
    // About 150 bytes, spread over every section.
    let step = (good.len() / 150).max(1);
    let mut at = 0;
    while at < good.len() {
        let mut bad = good.clone();
        bad[at] ^= 0x21;
        std::fs::write(f.file(), &bad).unwrap();
        // A one-shot query never answers wrong: what it reads is checked.
        for (query, expected) in QUERIES.iter().zip(&expected) {
            let (hits, _) = f.routing().search(&registry, query, 50);
            assert_eq!(&hits, expected, "byte {at}: {query}");
            std::fs::write(f.file(), &bad).unwrap();
        }
        // Reading the whole file catches every flipped byte.
        let index = LazySkillIndex::with_disk_cache(f.routing());
        let built = index.get_or_build(&registry);
        assert!(
            index.stats().ignored.is_some(),
            "byte {at} of {}",
            good.len()
        );
        for (query, expected) in QUERIES.iter().zip(&expected) {
            assert_eq!(&built.search(query, 50), expected, "byte {at}: {query}");
        }
        at += step;
    }
}

#[cfg(unix)]
#[test]
fn a_link_in_place_of_the_cache_file_is_neither_read_nor_written_through() {
    let f = Fixture::new();
    f.process();
    let elsewhere = f._tmp.path().join("elsewhere.idx");
    std::fs::rename(f.file(), &elsewhere).unwrap();
    let before = std::fs::read(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, f.file()).unwrap();
    let registry = f.registry();
    let index = LazySkillIndex::with_disk_cache(f.routing());
    index.get_or_build(&registry);
    let stats = index.stats();
    assert!(
        stats
            .ignored
            .as_deref()
            .unwrap()
            .contains("is a symbolic link"),
        "{stats:?}"
    );
    assert_eq!((stats.analyzed, stats.written), (40, true));
    assert_same_answers(&index, &registry);
    // The link was replaced, not written through.
    assert_eq!(std::fs::read(&elsewhere).unwrap(), before);
    assert!(!std::fs::symlink_metadata(f.file()).unwrap().is_symlink());
}

/// A search right after a discovery that its stamps confirmed takes each
/// skill's file and folder stamps from that confirmation
/// ([`Discovery::confirmed_stamps`]), linked ones too, and still sees what
/// the discovery's stamps do not cover: a name added or removed below a
/// skill's `scripts/`, in a linked skill as in any other.
#[test]
fn a_search_after_a_confirmed_discovery_still_sees_changed_supporting_files() {
    let f = Fixture::new();
    let elsewhere = f.skills.parent().unwrap().join("elsewhere");
    write_tree(
        &elsewhere,
        &[
            (
                "linked/SKILL.md",
                "---\nname: linked\ndescription: A linked skill.\n---\nlinked body\n",
            ),
            ("linked/scripts/deploy_linked.sh", "x"),
            (
                "file-target.md",
                "---\nname: file-linked\ndescription: Linked file.\n---\nfile body\n",
            ),
        ],
    );
    std::os::unix::fs::symlink(elsewhere.join("linked"), f.skills.join("linked")).unwrap();
    std::fs::create_dir(f.skills.join("file-linked")).unwrap();
    std::os::unix::fs::symlink(
        elsewhere.join("file-target.md"),
        f.skills.join("file-linked/SKILL.md"),
    )
    .unwrap();
    age(&f.skills);
    age(&elsewhere);
    past_racy_window();
    let search = |query: &str| {
        let mut discovery = Discovery::new(quick_options(&SkillsConfig::default()))
            .with_disk_cache(DiskCache::new(&f.cache));
        let registry = discovery.build(&f.roots());
        assert_eq!(registry.len(), 42);
        let confirmed = discovery.confirmed_stamps();
        let (hits, stats) = f
            .routing()
            .search_confirmed(&registry, confirmed.as_ref(), query, 50);
        let fresh = index_registry(&registry, None).search(query, 50);
        assert_eq!(hits, fresh, "{query}");
        let ids: Vec<String> = hits.iter().map(|h| h.id.as_str().to_owned()).collect();
        (confirmed.is_some(), stats, ids)
    };
    // The first process walks and writes both caches; the second is
    // confirmed and analyzes nothing: every stamp taken from the
    // confirmation (a linked one included) is the one stored.
    assert!(!search("deploy").0);
    let (confirmed, second, ids) = search("deploy linked");
    assert!(confirmed);
    assert_eq!(second, stats(0, 42, false));
    assert_eq!(ids.first().map(String::as_str), Some("linked"));
    // Names added and removed below `scripts/`: the discovery's stamps do
    // not move, the routing cache's do.
    write_tree(&f.skills, &[("skill-03/scripts/deploy_helper.sh", "x")]);
    std::fs::remove_file(elsewhere.join("linked/scripts/deploy_linked.sh")).unwrap();
    past_racy_window();
    let (confirmed, third, ids) = search("deploy");
    assert!(confirmed);
    assert_eq!(third, stats(2, 40, true));
    assert_eq!(ids, ["skill-03"]);
    let (confirmed, fourth, _) = search("deploy");
    assert!(confirmed);
    assert_eq!(fourth, stats(0, 42, false));
}
