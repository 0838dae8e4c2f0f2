//! Hostile and unusual filesystems: symlink loops, dangling links, FIFOs,
//! links leaving the root, oversized and non-UTF-8 files, and the cache.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use std::fs;
use std::os::unix::fs::symlink;
use std::time::{Duration, SystemTime};

use bcode_prompt_config::SkillsConfig;
use bcode_skill::Discovery;
use bcode_skill_models::SourceKind;
use bcode_test_support::mkfifo;
use support::{build, past_racy_window, quick_options, report, root, write_tree};

fn discover(dir: &std::path::Path, config: &SkillsConfig) -> String {
    discover_under(dir, dir, config)
}

/// Discovers root `dir`, reporting paths relative to `base`.
fn discover_under(dir: &std::path::Path, base: &std::path::Path, config: &SkillsConfig) -> String {
    report(
        &build(
            &[root(SourceKind::UserConfig, "user-config:skills", dir)],
            config,
        ),
        base,
    )
}

#[test]
fn symlink_loops_dangling_links_and_aliases() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path();
    write_tree(
        base,
        &[("root/real/SKILL.md", "---\ndescription: real\n---\n")],
    );
    let root_dir = base.join("root");
    symlink(".", root_dir.join("loop-to-root")).unwrap();
    fs::create_dir(root_dir.join("trap")).unwrap();
    symlink("..", root_dir.join("trap/up")).unwrap();
    symlink("missing-target", root_dir.join("dangling")).unwrap();
    symlink("self-a", root_dir.join("self-b")).unwrap();
    symlink("self-b", root_dir.join("self-a")).unwrap();
    symlink("real", root_dir.join("alias")).unwrap();
    assert_eq!(
        discover_under(&root_dir, base, &SkillsConfig::default()),
        "skill real name=\"real\" <user-config:skills> [ROOT]/root/real/SKILL.md
info duplicate_path [ROOT]/root/alias `[ROOT]/root/alias` is a second path to a folder already searched
warning dangling_symlink [ROOT]/root/dangling symlink `[ROOT]/root/dangling` points to `missing-target`, which does not exist | fix or remove the link
warning symlink_loop [ROOT]/root/loop-to-root symlink `[ROOT]/root/loop-to-root` points to `[ROOT]/root`, which contains it; the loop was not followed | remove the link, or point it at a folder outside this tree
warning symlink_loop [ROOT]/root/self-a symlink `[ROOT]/root/self-a` is part of a loop and was not followed | remove the link that points back at itself
warning symlink_loop [ROOT]/root/self-b symlink `[ROOT]/root/self-b` is part of a loop and was not followed | remove the link that points back at itself
warning symlink_loop [ROOT]/root/trap/up symlink `[ROOT]/root/trap/up` points to `[ROOT]/root`, which contains it; the loop was not followed | remove the link, or point it at a folder outside this tree
"
    );
}

#[test]
fn a_second_path_to_a_skill_file_is_named_with_the_first_and_loaded_once() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path();
    write_tree(
        base,
        &[
            ("root/a/SKILL.md", "---\ndescription: one file\n---\n"),
            ("root/c/.keep", ""),
        ],
    );
    let root_dir = base.join("root");
    // A second name for the skill file.
    fs::hard_link(root_dir.join("a/SKILL.md"), root_dir.join("c/SKILL.md")).unwrap();
    let found = discover_under(&root_dir, base, &SkillsConfig::default());
    assert!(
        found.contains(
            "info duplicate_path [ROOT]/root/c/SKILL.md `[ROOT]/root/c/SKILL.md` is a second path to `[ROOT]/root/a/SKILL.md`, already loaded"
        ),
        "{found}"
    );
    assert_eq!(found.matches("skill a ").count(), 1, "{found}");
    assert_eq!(
        found.lines().filter(|l| l.starts_with("skill ")).count(),
        1,
        "{found}"
    );
}

#[test]
fn links_leaving_the_root_load_skill_folders_only() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path();
    write_tree(
        base,
        &[
            (
                "store/nix-skill/SKILL.md",
                "---\ndescription: lives in a store\n---\n",
            ),
            (
                "store/big-tree/a/SKILL.md",
                "---\ndescription: must not be found\n---\n",
            ),
            (
                "store/file-skill.md",
                "---\ndescription: a linked flat skill\n---\n",
            ),
            ("root/.keep", ""),
        ],
    );
    let root_dir = base.join("root");
    symlink(base.join("store/nix-skill"), root_dir.join("nix-skill")).unwrap();
    symlink(base.join("store/big-tree"), root_dir.join("big-tree")).unwrap();
    symlink(base.join("store/file-skill.md"), root_dir.join("linked.md")).unwrap();
    assert_eq!(
        discover_under(&root_dir, base, &SkillsConfig::default()),
        "skill linked name=\"linked\" <user-config:skills> [ROOT]/root/linked.md
skill nix-skill name=\"nix-skill\" <user-config:skills> [ROOT]/root/nix-skill/SKILL.md
warning path_escape [ROOT]/root/big-tree `[ROOT]/root/big-tree` links outside the skill root to `[ROOT]/store/big-tree`, which is not a skill folder; it was not searched | link each skill folder individually, or add the target to skills.sources.paths
"
    );
    let no_follow = SkillsConfig {
        follow_symlinks: false,
        ..SkillsConfig::default()
    };
    assert_eq!(
        discover_under(&root_dir, base, &no_follow),
        "info symlink_skipped [ROOT]/root/big-tree symlink `[ROOT]/root/big-tree` was not followed (skills.follow_symlinks = false)
info symlink_skipped [ROOT]/root/linked.md symlink `[ROOT]/root/linked.md` was not followed (skills.follow_symlinks = false)
info symlink_skipped [ROOT]/root/nix-skill symlink `[ROOT]/root/nix-skill` was not followed (skills.follow_symlinks = false)
"
    );
}

#[test]
fn fifos_are_never_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path();
    write_tree(
        base,
        &[
            ("fifo-skill/.keep", ""),
            ("ok/SKILL.md", "---\ndescription: fine\n---\n"),
        ],
    );
    mkfifo(&base.join("fifo-skill/SKILL.md"));
    mkfifo(&base.join("pipe.md"));
    // Were either FIFO opened for reading, this test would hang forever.
    assert_eq!(
        discover(base, &SkillsConfig::default()),
        "skill ok name=\"ok\" <user-config:skills> [ROOT]/ok/SKILL.md
warning special_file [ROOT]/fifo-skill/SKILL.md `[ROOT]/fifo-skill/SKILL.md` is not a regular file (a FIFO, socket or device) and was not opened | replace it with a regular file
warning special_file [ROOT]/pipe.md `[ROOT]/pipe.md` is not a regular file (a FIFO, socket or device) and was not opened | replace it with a regular file
"
    );
}

#[test]
fn oversized_and_non_utf8_files() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path();
    let big = format!("---\ndescription: big\n---\n{}", "x".repeat(300 * 1024));
    write_tree(
        base,
        &[
            ("big/SKILL.md", &big),
            ("small/SKILL.md", "---\ndescription: fine\n---\n"),
        ],
    );
    fs::write(
        base.join("bad-front/SKILL.md").tap_mkdir(),
        b"---\ndescription: caf\xE9\n---\n",
    )
    .unwrap();
    fs::write(
        base.join("bad-body/SKILL.md").tap_mkdir(),
        b"---\ndescription: good front matter\n---\nline one\n\xFF\xFE\n",
    )
    .unwrap();
    let registry = build(
        &[root(SourceKind::UserConfig, "user-config:skills", base)],
        &SkillsConfig::default(),
    );
    assert_eq!(
        report(&registry, base),
        "skill bad-body name=\"bad-body\" <user-config:skills> [ROOT]/bad-body/SKILL.md
skill small name=\"small\" <user-config:skills> [ROOT]/small/SKILL.md
error invalid_utf8 [ROOT]/bad-front/SKILL.md:2:17 front matter is not valid UTF-8; the skill is skipped | save the file as UTF-8
error file_too_large [ROOT]/big/SKILL.md the skill file is 307225 bytes; skills.max_skill_file_bytes is 262144; the skill is skipped | move long material into resource files next to SKILL.md, or raise skills.max_skill_file_bytes
"
    );
    // The body is only read when needed; the deep check finds the bad one.
    let deep: Vec<String> = registry
        .check_bodies()
        .iter()
        .map(|d| format!("{} {}", d.code, d.message()))
        .collect();
    assert_eq!(deep, vec!["invalid_utf8 skill `bad-body` could not be loaded: the body is not valid UTF-8 (body line 2); save the file as UTF-8".to_string()]);
}

trait TapMkdir {
    fn tap_mkdir(self) -> Self;
}

impl TapMkdir for std::path::PathBuf {
    fn tap_mkdir(self) -> Self {
        fs::create_dir_all(self.parent().unwrap()).unwrap();
        self
    }
}

#[test]
fn scan_limits_stop_runaway_trees() {
    let tmp = tempfile::tempdir().unwrap();
    let deep = (0..15)
        .map(|i| format!("d{i}"))
        .collect::<Vec<_>>()
        .join("/");
    write_tree(
        tmp.path(),
        &[(
            &format!("{deep}/SKILL.md"),
            "---\ndescription: too deep\n---\n",
        )],
    );
    let out = discover(tmp.path(), &SkillsConfig::default());
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with("warning scan_limit [ROOT]/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12 "),
        "{out}"
    );
}

#[test]
fn unchanged_rebuild_reads_no_skill_file() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path();
    let files: Vec<(String, String)> = (0..20)
        .map(|i| {
            (
                format!("s{i}/SKILL.md"),
                format!("---\ndescription: skill {i}\n---\nBody {i}\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write_tree(base, &refs);
    // Age the files past the racy window, as any file not written this second is.
    let old = SystemTime::now() - Duration::from_secs(60);
    for (rel, _) in &files {
        fs::File::options()
            .write(true)
            .open(base.join(rel))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    past_racy_window();
    let roots = [root(SourceKind::UserConfig, "user-config:skills", base)];
    let mut discovery = Discovery::new(quick_options(&SkillsConfig::default()));
    let first = discovery.build(&roots);
    assert_eq!(
        (
            discovery.last_stats().files_read,
            discovery.last_stats().files_parsed
        ),
        (20, 20)
    );
    let second = discovery.build(&roots);
    assert_eq!(discovery.last_stats().files_read, 0);
    assert_eq!(discovery.last_stats().cache_hits, 20);
    assert_eq!(report(&first, base), report(&second, base));

    // A changed file is noticed (size differs) and only it is read again.
    fs::write(
        base.join("s3/SKILL.md"),
        "---\ndescription: skill three, edited\n---\n",
    )
    .unwrap();
    let third = discovery.build(&roots);
    assert_eq!(
        (
            discovery.last_stats().files_read,
            discovery.last_stats().files_parsed
        ),
        (1, 1)
    );
    assert_eq!(
        third.get("s3").unwrap().manifest.description,
        "skill three, edited"
    );

    // Same size and mtime but different bytes: the racy check re-reads
    // recently modified files and compares content hashes.
    fs::write(
        base.join("s4/SKILL.md"),
        "---\ndescription: skill 4\n---\nBody 4\n",
    )
    .unwrap();
    let _ = discovery.build(&roots);
    fs::write(
        base.join("s4/SKILL.md"),
        "---\ndescription: skill X\n---\nBody 4\n",
    )
    .unwrap();
    let fifth = discovery.build(&roots);
    assert_eq!(fifth.get("s4").unwrap().manifest.description, "skill X");
}

#[test]
fn missing_configured_roots_and_unreadable_names_are_reported() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path();
    write_tree(base, &[("ok/SKILL.md", "---\ndescription: fine\n---\n")]);
    // A file name that is not UTF-8 cannot be shown to the model or matched.
    let bad_name = base.join(std::ffi::OsStr::from_bytes(b"caf\xE9.md"));
    fs::write(&bad_name, "---\ndescription: latin-1 name\n---\n").unwrap();
    let roots = [
        root(
            SourceKind::Config,
            "config:../missing",
            &base.join("missing"),
        ),
        root(
            SourceKind::RepoGeneric,
            "repo:skills",
            &base.join("also-missing"),
        ),
        root(SourceKind::UserConfig, "user-config:skills", base),
    ];
    let registry = support::build(&roots, &SkillsConfig::default());
    assert_eq!(
        report(&registry, base),
        "skill ok name=\"ok\" <user-config:skills> [ROOT]/ok/SKILL.md
warning unreadable [ROOT]/caf\u{fffd}.md file name \"caf\\xE9.md\" is not valid UTF-8 and was skipped | rename it
warning missing_root [ROOT]/missing skill root `[ROOT]/missing` does not exist | create it or remove it from skills.sources.paths
"
    );
}

/// A working folder hundreds of levels deep (issue 38, item 10): the
/// repository has four roots in every folder from the root down to it, and
/// each used to be resolved whole (one `readlink` per component: hundreds
/// of thousands of calls at depth 400, each walking a path as long as the
/// depth). The folders the roots share are resolved once in a build now:
/// one call per folder, one per root's first missing component.
#[test]
fn a_deep_working_folder_resolves_each_folder_once() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = support::canonical(tmp.path());
    let depth = 400;
    let work = (0..depth).fold(repo.clone(), |path, _| path.join("d"));
    fs::create_dir_all(&work).unwrap();
    write_tree(
        &repo,
        &[(".bcode/skills/top/SKILL.md", "---\ndescription: top\n---\n")],
    );
    let (env, config) = (bcode_skill::SourceEnv::default(), SkillsConfig::default());
    let roots = bcode_skill::source_roots(bcode_skill::RootsInput {
        repo: &repo,
        work: &work,
        env: &env,
        config: &config,
        configured: &[],
        bundled: &[],
        owners: None,
    });
    assert_eq!(roots.len(), 4 * (depth + 1));
    let mut discovery = Discovery::new(quick_options(&config));
    let registry = discovery.build(&roots);
    let ids: Vec<&str> = registry.ids().collect();
    assert_eq!(ids, ["top"]);
    // The root's own components, then per folder itself and the first
    // component of each of its four roots; `.bcode/skills` exists at the
    // root (two more).
    let bound = repo.components().count() + 5 * (depth + 1) + 2;
    let lookups = discovery.last_stats().root_lookups;
    assert!(lookups <= bound, "{lookups} lookups, more than {bound}");
}

/// Seen as another user (issue 38, item 5): the repository's skill roots
/// in folders above the working folder are not searched, each existing one
/// a `foreign_owner` warning naming the folder's owner; the working
/// folder's own roots are; a trusted folder's are too.
#[cfg(unix)]
#[test]
fn skill_roots_above_the_working_folder_that_another_user_owns_are_not_searched() {
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    let repo = support::canonical(tmp.path());
    let skill = |d: &str| format!("---\ndescription: {d}\n---\n");
    write_tree(
        &repo,
        &[
            (".bcode/skills/top/SKILL.md", &skill("top")),
            ("a/.agents/skills/mid/SKILL.md", &skill("mid")),
            ("a/b/.bcode/skills/here/SKILL.md", &skill("here")),
        ],
    );
    let work = repo.join("a/b");
    let me = fs::metadata(&repo).unwrap().uid();
    let other = me.wrapping_add(4242);
    let (env, config) = (bcode_skill::SourceEnv::default(), SkillsConfig::default());
    let build_as = |owners: &bcode_fs::Ownership| {
        let roots = bcode_skill::source_roots(bcode_skill::RootsInput {
            repo: &repo,
            work: &work,
            env: &env,
            config: &config,
            configured: &[],
            bundled: &[],
            owners: Some(owners),
        });
        Discovery::new(quick_options(&config)).build(&roots)
    };
    let registry = build_as(&bcode_fs::Ownership::of_user(other, false, &[]));
    let ids: Vec<&str> = registry.ids().collect();
    assert_eq!(ids, ["here"]);
    let foreign: Vec<(String, String)> = registry
        .diagnostics()
        .iter()
        .filter(|d| d.code.as_str() == "foreign_owner")
        .map(|d| {
            (
                d.path.clone().unwrap().display().to_string(),
                d.message().into_owned(),
            )
        })
        .collect();
    let refused = |root: &str, folder: &std::path::Path| {
        let root = repo.join(root).display().to_string();
        let message = format!(
            "skills in `{root}` are not loaded: `{}` belongs to uid {me}, not to this user \
             (uid {other}), and it is above the working folder",
            folder.display()
        );
        (root, message)
    };
    assert_eq!(
        foreign,
        [
            refused(".bcode/skills", &repo),
            refused("a/.agents/skills", &repo.join("a")),
        ]
    );
    let registry = build_as(&bcode_fs::Ownership::of_user(
        other,
        false,
        std::slice::from_ref(&repo),
    ));
    let mut ids: Vec<&str> = registry.ids().collect();
    ids.sort_unstable();
    assert_eq!(ids, ["here", "mid", "top"]);
}

/// Issue 41, item 2: a recording discovery keeps, for each skill of its
/// registry, the stamp taken before the read, the `sha256:` digest of the
/// whole file and the front-matter fields as `parse_document` gives them;
/// a plain one keeps nothing, a file inside the racy window is not
/// recorded (its stamp cannot vouch for its bytes), nor a skill another
/// root shadows, nor what a rebuild answers from its cache.
#[test]
fn a_recording_discovery_keeps_what_the_mcp_server_would_read() {
    use sha2::Digest;
    let tmp = tempfile::tempdir().unwrap();
    let body = "x".repeat(5000);
    let long = format!("---\ndescription: Long body\nlicense: MIT\n---\n{body}\n");
    write_tree(
        tmp.path(),
        &[
            ("first/long/SKILL.md", long.as_str()),
            ("first/toml/SKILL.md", "+++\ndescription = \"T\"\n+++\n"),
            ("first/flat.md", "---\ndescription: Flat\n---\n"),
            ("second/long/SKILL.md", "---\ndescription: Shadowed\n---\n"),
        ],
    );
    support::age(tmp.path());
    past_racy_window();
    let roots = [
        root(
            SourceKind::RepoBcode,
            "repo:.bcode/skills",
            &tmp.path().join("first"),
        ),
        root(
            SourceKind::UserConfig,
            "user-config:skills",
            &tmp.path().join("second"),
        ),
    ];
    let options = quick_options(&SkillsConfig::default());

    let mut plain = Discovery::new(options.clone());
    assert_eq!(plain.build(&roots).len(), 3);
    assert!(plain.take_records().is_empty());

    let mut recording = Discovery::new(options.clone()).recording_instructions();
    let registry = recording.build(&roots);
    assert_eq!(recording.last_stats().files_read, 4);
    let records: Vec<_> = recording.take_records().into_iter().collect();
    let ids: Vec<&str> = records
        .iter()
        .map(|(summary, _)| summary.manifest.id.as_str())
        .collect();
    assert_eq!(ids, ["flat", "long", "toml"]);
    for (summary, record) in &records {
        let kept = registry.get(summary.manifest.id.as_str()).unwrap();
        assert!(std::ptr::eq(kept, &**summary), "the registry's own summary");
        let bytes = fs::read(&summary.location).unwrap();
        let own = fs::symlink_metadata(&summary.location).unwrap();
        assert_eq!(*record.stamp(), bcode_fs::FileStamp::of(&own));
        assert_eq!(record.stamp().len, bytes.len() as u64);
        let hex: String = sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(record.digest(), format!("sha256:{hex}"));
        let document = bcode_skill::parse_document(std::str::from_utf8(&bytes).unwrap()).unwrap();
        assert_eq!(
            record.fields(),
            serde_json::to_string(&document.fields).unwrap()
        );
    }
    // The unchanged files are answered from the summary cache (not read,
    // not recorded); the new one is read, but inside the racy window.
    fs::write(
        tmp.path().join("first/new.md"),
        "---\ndescription: New\n---\n",
    )
    .unwrap();
    assert_eq!(recording.build(&roots).len(), 4);
    assert_eq!(recording.last_stats().files_read, 1);
    assert!(recording.take_records().is_empty());

    // A file just written is inside the real window too: not recorded.
    fs::write(
        tmp.path().join("first/toml/SKILL.md"),
        "+++\ndescription = \"U\"\n+++\n",
    )
    .unwrap();
    let mut strict = Discovery::new(bcode_skill::DiscoveryOptions::from_config(
        &SkillsConfig::default(),
    ))
    .recording_instructions();
    assert_eq!(strict.build(&roots).len(), 4);
    assert_eq!(strict.last_stats().files_read, 5);
    let recorded: Vec<String> = strict
        .take_records()
        .into_iter()
        .map(|(summary, _)| summary.manifest.id.to_string())
        .collect();
    assert!(!recorded.iter().any(|id| id == "toml"), "{recorded:?}");

    // A live registry records its first build only: once its records are
    // taken, a reload reads what changed as a plain build does.
    let recording = Discovery::new(options).recording_instructions();
    let (mut live, _) =
        bcode_skill::LiveRegistry::with_discovery(recording, roots.to_vec(), vec![]);
    assert!(!live.take_records().is_empty());
    past_racy_window();
    fs::write(
        tmp.path().join("first/flat.md"),
        "---\ndescription: Flat, edited\n---\n",
    )
    .unwrap();
    past_racy_window();
    assert!(live.begin_turn().is_some());
    // The edited file, and those that were racy at the first build.
    assert!(live.last_stats().files_read >= 1);
    assert!(live.take_records().is_empty());
}
