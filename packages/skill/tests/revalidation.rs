//! An unchanged tree is confirmed by stamps alone (no walk, no read), and
//! every kind of change a walk would notice makes the next build walk.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{Discovery, DiscoveryOptions, SkillRegistry, SourceRoot};
use bcode_skill_models::SourceKind;
use support::{age, past_racy_window, quick_options, report, root, write_tree};

struct Fixture {
    _tmp: tempfile::TempDir,
    base: std::path::PathBuf,
    roots: Vec<SourceRoot>,
    discovery: Discovery,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let skills = base.join("skills");
        write_tree(
            &skills,
            &[
                // A float whose shortest form reads back one unit off
                // without exact float parsing (the disk cache must not).
                (
                    "alpha/SKILL.md",
                    "---\ndescription: Alpha.\nmetadata:\n  score: 0.9042043054987173\n---\nA\n",
                ),
                ("beta/SKILL.md", "---\ndescription: Beta.\n---\nB\n"),
                ("group/gamma/SKILL.md", "---\ndescription: Gamma.\n---\nG\n"),
                ("docs/README.md", "# Just documentation\n"),
                ("flat.md", "---\ndescription: Flat.\n---\nF\n"),
            ],
        );
        write_tree(
            &base.join("elsewhere"),
            &[("linked/SKILL.md", "---\ndescription: Linked.\n---\nL\n")],
        );
        symlink(base.join("elsewhere/linked"), skills.join("linked")).unwrap();
        symlink(base.join("elsewhere/later"), skills.join("later")).unwrap();
        let roots = vec![
            root(SourceKind::UserConfig, "user-config:skills", &skills),
            root(
                SourceKind::UserConfig,
                "user-config:missing",
                &base.join("missing"),
            ),
        ];
        Fixture {
            _tmp: tmp,
            base,
            roots,
            discovery: Discovery::new(quick_options(&SkillsConfig::default())),
        }
    }

    fn skills(&self) -> std::path::PathBuf {
        self.base.join("skills")
    }

    fn build(&mut self) -> SkillRegistry {
        self.discovery.build(&self.roots)
    }

    fn confirmed(&self) -> bool {
        self.discovery.last_stats().confirmed_by_stamps
    }

    /// Ages the tree and builds twice: the first build walks and records
    /// trusted stamps, the second is confirmed by them.
    fn settle(&mut self) -> SkillRegistry {
        age(&self.base);
        past_racy_window();
        let walked = self.build();
        assert!(!self.confirmed(), "a build after a change walks");
        let confirmed = self.build();
        assert!(
            self.confirmed(),
            "an unchanged, aged tree is confirmed by stamps"
        );
        assert_eq!(self.discovery.last_stats().files_read, 0);
        assert_eq!(report(&walked, &self.base), report(&confirmed, &self.base));
        confirmed
    }

    /// After `change`, the next build walks and sees what a fresh discovery sees.
    fn changed(&mut self, what: &str) -> SkillRegistry {
        let registry = self.build();
        assert!(!self.confirmed(), "{what}: the change was not noticed");
        let fresh = Discovery::new(quick_options(&SkillsConfig::default())).build(&self.roots);
        assert_eq!(
            report(&registry, &self.base),
            report(&fresh, &self.base),
            "{what}"
        );
        registry
    }
}

fn ids(registry: &SkillRegistry) -> Vec<String> {
    registry
        .skills()
        .map(|s| s.manifest.id.to_string())
        .collect()
}

#[test]
fn an_unchanged_tree_is_confirmed_without_a_walk() {
    let mut f = Fixture::new();
    let registry = f.settle();
    assert_eq!(ids(&registry), ["alpha", "beta", "flat", "gamma", "linked"]);
    // Stays confirmed for as long as nothing changes.
    f.build();
    assert!(f.confirmed());
}

#[test]
fn a_fresh_tree_is_walked_every_time() {
    let mut f = Fixture::new();
    // The real window (two seconds): the tree was written just now.
    f.discovery = Discovery::new(DiscoveryOptions::from_config(&SkillsConfig::default()));
    let first = f.build();
    let second = f.build();
    // Stamps inside the racy window cannot vouch for the files: they are
    // walked and re-read, but their content hashes spare the parse.
    assert!(!f.confirmed());
    assert_eq!(f.discovery.last_stats().files_parsed, 0);
    // The same result is the same registry, so a host sees nothing changed.
    assert!(second.same_as(&first));
    fs::write(
        f.skills().join("beta/SKILL.md"),
        "---\ndescription: Beta, edited.\n---\n",
    )
    .unwrap();
    let third = f.build();
    assert!(!third.same_as(&second));
    assert_eq!(
        third.get("beta").unwrap().manifest.description,
        "Beta, edited."
    );
}

#[test]
fn edits_are_noticed_even_with_the_old_mtime_put_back() {
    let mut f = Fixture::new();
    f.settle();
    let file = f.skills().join("alpha/SKILL.md");
    let old = fs::metadata(&file).unwrap().modified().unwrap();
    // Same length, same mtime: only the change time moves.
    fs::write(&file, "---\ndescription: Alfa.\n---\nA\n").unwrap();
    fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let registry = f.changed("in-place edit");
    assert_eq!(registry.get("alpha").unwrap().manifest.description, "Alfa.");
}

/// With more probes than one thread checks (about one per skill), the
/// check is split across threads: an edit in the first or the last part of
/// the tree is noticed all the same.
#[test]
fn a_tree_checked_on_several_threads_notices_an_edit_in_any_part() {
    let mut f = Fixture::new();
    let many: Vec<(String, String)> = (0..2000)
        .map(|i| {
            (
                format!("many/s{i:04}/SKILL.md"),
                format!("---\ndescription: Skill {i}.\n---\n"),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = many.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    write_tree(&f.skills(), &files);
    assert_eq!(f.settle().skills().count(), 2005);
    for edited in ["s0000", "s1999"] {
        fs::write(
            f.skills().join(format!("many/{edited}/SKILL.md")),
            "---\ndescription: Edited.\n---\n",
        )
        .unwrap();
        let registry = f.changed(edited);
        assert_eq!(
            registry.get(edited).unwrap().manifest.description,
            "Edited."
        );
        f.settle();
    }
}

#[test]
fn added_and_removed_skills_are_noticed() {
    let mut f = Fixture::new();
    f.settle();
    write_tree(
        &f.skills(),
        &[("delta/SKILL.md", "---\ndescription: D.\n---\n")],
    );
    assert!(ids(&f.changed("new folder at the root")).contains(&"delta".to_owned()));

    f.settle();
    write_tree(
        &f.skills(),
        &[("group/SKILL.md", "---\ndescription: Group.\n---\n")],
    );
    let registry = f.changed("SKILL.md added to a listed folder");
    // The group became a skill; its nested folder is now an inert resource.
    assert!(ids(&registry).contains(&"group".to_owned()));
    assert!(!ids(&registry).contains(&"gamma".to_owned()));

    f.settle();
    fs::remove_dir_all(f.skills().join("beta")).unwrap();
    assert!(!ids(&f.changed("removed folder")).contains(&"beta".to_owned()));
}

#[test]
fn links_documentation_and_roots_are_watched_too() {
    let mut f = Fixture::new();
    f.settle();
    fs::write(
        f.base.join("elsewhere/linked/SKILL.md"),
        "---\ndescription: Relinked.\n---\n",
    )
    .unwrap();
    let registry = f.changed("edit behind a symlinked folder");
    assert_eq!(
        registry.get("linked").unwrap().manifest.description,
        "Relinked."
    );

    f.settle();
    write_tree(
        &f.base.join("elsewhere"),
        &[("later/SKILL.md", "---\ndescription: Later.\n---\n")],
    );
    assert!(ids(&f.changed("dangling link now resolves")).contains(&"later".to_owned()));

    f.settle();
    fs::write(
        f.skills().join("docs/README.md"),
        "---\ndescription: Now a skill.\n---\n",
    )
    .unwrap();
    assert!(ids(&f.changed("README gained front matter")).contains(&"docs".to_owned()));

    f.settle();
    write_tree(
        &f.base.join("missing"),
        &[("epsilon/SKILL.md", "---\ndescription: E.\n---\n")],
    );
    assert!(ids(&f.changed("missing root created")).contains(&"epsilon".to_owned()));
}

#[test]
fn other_roots_mean_a_walk() {
    let mut f = Fixture::new();
    f.settle();
    f.roots.pop();
    f.changed("a root dropped");
}

// ------------------------------------------------------------ disk cache

fn with_disk(cache: &Path, config: &SkillsConfig) -> Discovery {
    Discovery::new(quick_options(config)).with_disk_cache(bcode_skill::DiskCache::new(cache))
}

/// A fixture old enough to vouch for, built once into a disk cache:
/// the cache folder, the config and what that build found.
fn built_into_disk_cache(f: &Fixture) -> (std::path::PathBuf, SkillsConfig, SkillRegistry) {
    age(&f.base);
    past_racy_window();
    let config = SkillsConfig::default();
    let cache = f.base.join("state/cache");
    let walked = with_disk(&cache, &config).build(&f.roots);
    (cache, config, walked)
}

fn summaries(registry: &SkillRegistry) -> Vec<bcode_skill_models::SkillSummary> {
    registry.skills().cloned().collect()
}

#[test]
fn another_process_is_answered_from_the_disk_cache_while_nothing_changes() {
    let f = Fixture::new();
    age(&f.base);
    past_racy_window();
    let cache = f.base.join("state/cache");
    let config = SkillsConfig::default();
    let mut first = with_disk(&cache, &config);
    let walked = first.build(&f.roots);
    assert!(first.last_stats().written_to_disk_cache);
    assert!(!first.last_stats().from_disk_cache);

    // A new Discovery stands for a new process.
    let mut second = with_disk(&cache, &config);
    let loaded = second.build(&f.roots);
    let stats = second.last_stats();
    assert!(stats.from_disk_cache && stats.confirmed_by_stamps);
    assert_eq!(stats.files_read, 0);
    assert_eq!(summaries(&loaded), summaries(&walked));
    assert_eq!(loaded.diagnostics(), walked.diagnostics());
    assert_eq!(loaded.roots(), walked.roots());
    assert_eq!(report(&loaded, &f.base), report(&walked, &f.base));
    // Read back, the skills of one root share one source, as walked ones do.
    for registry in [&walked, &loaded] {
        let skills: Vec<_> = registry.skills().collect();
        for pair in skills.windows(2) {
            if pair[0].source == pair[1].source {
                assert!(std::sync::Arc::ptr_eq(&pair[0].source, &pair[1].source));
            }
        }
    }

    // Other options are another entry: no answer from this one.
    let mut disabled = SkillsConfig::default();
    disabled.disabled.ids = vec!["alpha".into()];
    let mut third = with_disk(&cache, &disabled);
    let registry = third.build(&f.roots);
    assert!(!third.last_stats().from_disk_cache);
    assert!(registry.get("alpha").is_none());
}

#[test]
fn a_change_or_a_damaged_file_means_a_walk_and_a_fresh_entry() {
    let f = Fixture::new();
    age(&f.base);
    past_racy_window();
    let cache = f.base.join("state/cache");
    let config = SkillsConfig::default();
    with_disk(&cache, &config).build(&f.roots);

    fs::write(
        f.skills().join("beta/SKILL.md"),
        "---\ndescription: Beta, edited.\n---\n",
    )
    .unwrap();
    let mut after_edit = with_disk(&cache, &config);
    let registry = after_edit.build(&f.roots);
    assert!(!after_edit.last_stats().confirmed_by_stamps);
    assert_eq!(
        registry.get("beta").unwrap().manifest.description,
        "Beta, edited."
    );

    // Damage every cache file: it is ignored, the walk answers, and a
    // readable entry replaces it.
    age(&f.base);
    past_racy_window();
    for entry in fs::read_dir(&cache).unwrap() {
        fs::write(entry.unwrap().path(), "{not json").unwrap();
    }
    let mut damaged = with_disk(&cache, &config);
    let registry = damaged.build(&f.roots);
    assert!(!damaged.last_stats().from_disk_cache);
    assert!(damaged.last_stats().written_to_disk_cache);
    assert_eq!(
        registry.get("beta").unwrap().manifest.description,
        "Beta, edited."
    );
    let mut next = with_disk(&cache, &config);
    next.build(&f.roots);
    assert!(next.last_stats().from_disk_cache);
}

#[test]
fn a_linked_folder_moving_inside_the_root_is_noticed() {
    // skills/L -> base/p/A, base/p -> base/ext: L leads outside the root,
    // to a folder that is not a skill, so it is not searched.
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let skills = base.join("skills");
    write_tree(
        &skills,
        &[("alpha/SKILL.md", "---\ndescription: Alpha.\n---\n")],
    );
    fs::create_dir_all(skills.join(".store")).unwrap();
    write_tree(
        &base.join("ext"),
        &[("A/s1/SKILL.md", "---\ndescription: S1.\n---\n")],
    );
    symlink(base.join("ext"), base.join("p")).unwrap();
    symlink(base.join("p/A"), skills.join("L")).unwrap();
    let roots = [root(SourceKind::UserConfig, "user-config:skills", &skills)];
    let mut discovery = Discovery::new(quick_options(&SkillsConfig::default()));
    past_racy_window();
    assert_eq!(ids(&discovery.build(&roots)), ["alpha"]);

    // Move the target inside the root and point p at it: the folder L
    // reaches keeps its inode and stamps, but is now inside and searched.
    fs::rename(base.join("ext"), skills.join(".store/ext")).unwrap();
    fs::remove_file(base.join("p")).unwrap();
    symlink(skills.join(".store/ext"), base.join("p")).unwrap();
    let registry = discovery.build(&roots);
    assert!(!discovery.last_stats().confirmed_by_stamps);
    assert_eq!(ids(&registry), ["alpha", "s1"]);
}

/// Rewrites every cache file through JSON values (so its members come
/// out in another order): every stored skill goes through `tamper`, which
/// also gets the file's sources, which the skills name by index. A file is
/// JSON lines: the header (with the sources and the count of skills)
/// first, one line per skill last.
fn tamper_disk_cache(
    cache: &Path,
    tamper: &dyn Fn(&mut serde_json::Value, &mut Vec<serde_json::Value>),
) {
    for entry in fs::read_dir(cache).unwrap() {
        let path = entry.unwrap().path();
        let text = fs::read_to_string(&path).unwrap();
        let mut lines: Vec<serde_json::Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let mut sources = lines[0]["sources"].as_array().unwrap().clone();
        let skills = lines[0]["skills"].as_u64().unwrap() as usize;
        let first_skill = lines.len() - skills;
        for skill in &mut lines[first_skill..] {
            tamper(skill, &mut sources);
        }
        lines[0]["sources"] = sources.into();
        let mut out = String::new();
        for line in &lines {
            out.push_str(&serde_json::to_string(line).unwrap());
            out.push('\n');
        }
        fs::write(&path, out).unwrap();
    }
}

#[test]
fn a_disk_cache_entry_pointing_outside_its_root_is_not_trusted() {
    let f = Fixture::new();
    age(&f.base);
    past_racy_window();
    let config = SkillsConfig::default();
    let outside = f.base.join("elsewhere/secret.md");
    fs::write(&outside, "not a skill\n").unwrap();
    let escapes = [
        // Plainly elsewhere, and a path that only looks inside the root.
        outside.clone(),
        f.skills().join("../elsewhere/secret.md"),
    ];
    for (i, location) in escapes.iter().enumerate() {
        let cache = f.base.join(format!("state/cache-{i}"));
        let walked = with_disk(&cache, &config).build(&f.roots);
        let location = location.display().to_string();
        tamper_disk_cache(&cache, &|skill, _| {
            if skill["manifest"]["id"] == "alpha" {
                skill["location"] = location.clone().into();
            }
        });
        let mut tampered = with_disk(&cache, &config);
        let registry = tampered.build(&f.roots);
        assert!(
            !tampered.last_stats().from_disk_cache,
            "{location}: a summary outside its root was trusted"
        );
        assert_eq!(summaries(&registry), summaries(&walked), "{location}");
    }
}

#[test]
fn a_disk_cache_entry_claiming_another_root_is_not_trusted() {
    let f = Fixture::new();
    let (cache, config, walked) = built_into_disk_cache(&f);
    let elsewhere = f.base.join("elsewhere").display().to_string();
    tamper_disk_cache(&cache, &|skill, sources| {
        if skill["manifest"]["id"] == "beta" {
            // The location is under the root it now claims, but that is not
            // a root this build walked.
            let index = skill["source"].as_u64().unwrap() as usize;
            let mut claimed = sources[index].clone();
            claimed["root"] = elsewhere.clone().into();
            sources.push(claimed);
            skill["source"] = (sources.len() - 1).into();
            skill["location"] = format!("{elsewhere}/linked/SKILL.md").into();
        }
    });
    let mut tampered = with_disk(&cache, &config);
    let registry = tampered.build(&f.roots);
    assert!(!tampered.last_stats().from_disk_cache);
    assert_eq!(summaries(&registry), summaries(&walked));
}

#[test]
fn a_disk_cache_entry_naming_a_source_that_is_not_there_is_not_used() {
    let f = Fixture::new();
    let (cache, config, walked) = built_into_disk_cache(&f);
    // Rewritten through a JSON value (members in another order), the file
    // still answers.
    tamper_disk_cache(&cache, &|_, _| {});
    let mut rewritten = with_disk(&cache, &config);
    assert_eq!(summaries(&rewritten.build(&f.roots)), summaries(&walked));
    assert!(rewritten.last_stats().from_disk_cache);
    tamper_disk_cache(&cache, &|skill, sources| {
        skill["source"] = (sources.len() + 7).into();
    });
    let mut tampered = with_disk(&cache, &config);
    let registry = tampered.build(&f.roots);
    assert!(!tampered.last_stats().from_disk_cache);
    assert_eq!(summaries(&registry), summaries(&walked));
}

#[test]
fn a_disk_cache_file_cut_short_or_run_long_is_not_used() {
    let f = Fixture::new();
    let (cache, config, walked) = built_into_disk_cache(&f);
    let file = fs::read_dir(&cache)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let whole = fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = whole.lines().collect();
    assert!(lines.len() > 3, "a header, a snapshot and the skills");
    let snapshot = lines.iter().position(|l| l.contains("\"bulk\"")).unwrap();
    let last = lines[lines.len() - 1];
    let damaged = [
        // The last skill missing, or its line without its newline.
        lines[..lines.len() - 1].join("\n") + "\n",
        whole.trim_end().to_owned(),
        // One skill more than the header says.
        format!("{whole}{last}\n"),
        // A piece of the snapshot's bulk missing.
        [&lines[..=snapshot], &lines[snapshot + 2..]]
            .concat()
            .join("\n")
            + "\n",
    ];
    for text in damaged {
        fs::write(&file, &text).unwrap();
        let mut discovery = with_disk(&cache, &config);
        let registry = discovery.build(&f.roots);
        assert!(
            !discovery.last_stats().from_disk_cache,
            "a damaged file answered:\n{text}"
        );
        assert_eq!(summaries(&registry), summaries(&walked));
    }
    // The build that ignored it wrote a whole file again.
    let mut next = with_disk(&cache, &config);
    next.build(&f.roots);
    assert!(next.last_stats().from_disk_cache);
}
