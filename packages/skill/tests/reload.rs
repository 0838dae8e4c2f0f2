//! Live reload between turns: metadata checks that read no unchanged file,
//! body-only edits noticed, and a watcher that skips work on a quiet tree.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::support;

use std::fs;

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{LiveRegistry, ReloadMode, SkillSession, SkillSessionOptions, Templates};
use bcode_skill_models::SourceKind;
use support::{age, past_racy_window, quick_options, root, write_tree};

#[test]
fn metadata_check_reads_only_changed_files_and_sees_body_edits() {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(
        tmp.path(),
        &[
            ("a/SKILL.md", "---\ndescription: a\n---\nold body\n"),
            ("b/SKILL.md", "---\ndescription: b\n---\n"),
        ],
    );
    age(&tmp.path().join("a/SKILL.md"));
    age(&tmp.path().join("b/SKILL.md"));
    past_racy_window();
    let roots = vec![root(
        SourceKind::RepoBcode,
        "repo:.bcode/skills",
        tmp.path(),
    )];
    let (mut live, registry) = LiveRegistry::new(quick_options(&SkillsConfig::default()), roots);
    assert_eq!(live.mode(), ReloadMode::MetadataCheck);
    let mut session = SkillSession::new(
        registry,
        SkillSessionOptions::from_config(&SkillsConfig::default()),
        Templates::builtin(),
    );

    let quiet = live.begin_turn().unwrap();
    assert_eq!(
        live.last_stats().files_read,
        0,
        "an unchanged tree reads no skill file"
    );
    assert!(
        session
            .replace_registry(quiet.registry, &quiet.changed_files)
            .diff
            .is_empty()
    );

    // A body-only edit leaves the summary alone but is reported as changed.
    fs::write(
        tmp.path().join("a/SKILL.md"),
        "---\ndescription: a\n---\nnew, longer body\n",
    )
    .unwrap();
    fs::remove_dir_all(tmp.path().join("b")).unwrap();
    let refresh = live.begin_turn().unwrap();
    assert_eq!(live.last_stats().files_read, 1);
    let out = session.replace_registry(refresh.registry, &refresh.changed_files);
    assert_eq!(out.diff.to_string(), "~a -b");
}

#[test]
fn a_summaries_only_registry_rebuilds_on_edits_without_telling_body_edits_apart() {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(
        tmp.path(),
        &[("a/SKILL.md", "---\ndescription: a\n---\nold body\n")],
    );
    age(&tmp.path().join("a/SKILL.md"));
    past_racy_window();
    let roots = vec![root(
        SourceKind::RepoBcode,
        "repo:.bcode/skills",
        tmp.path(),
    )];
    let discovery = bcode_skill::Discovery::new(quick_options(&SkillsConfig::default()));
    let (mut live, registry) = LiveRegistry::summaries_only(discovery, roots, Vec::new());
    assert_eq!(registry.len(), 1);
    // The body edit is read (the walk's own stamps see it), but, with no
    // stamps of instruction files kept, not named as a changed file.
    fs::write(
        tmp.path().join("a/SKILL.md"),
        "---\ndescription: a\n---\nnew, longer body\n",
    )
    .unwrap();
    let refresh = live.begin_turn().unwrap();
    assert_eq!(live.last_stats().files_read, 1);
    assert!(
        refresh.changed_files.is_empty(),
        "{:?}",
        refresh.changed_files
    );
    // A summary edit still comes through as a new registry.
    fs::write(
        tmp.path().join("a/SKILL.md"),
        "---\ndescription: changed\n---\nnew, longer body\n",
    )
    .unwrap();
    let refresh = live.begin_turn().unwrap();
    let summary = refresh.registry.skills().next().unwrap();
    assert_eq!(summary.manifest.description, "changed");
}

#[test]
fn a_watcher_skips_quiet_turns_and_notices_new_skills() {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(
        tmp.path(),
        &[("skills/a/SKILL.md", "---\ndescription: a\n---\n")],
    );
    past_racy_window();
    let roots = vec![
        root(
            SourceKind::RepoGeneric,
            "repo:skills",
            &tmp.path().join("skills"),
        ),
        root(
            SourceKind::RepoBcode,
            "repo:.bcode/skills",
            &tmp.path().join(".bcode/skills"),
        ),
    ];
    // No racy window: files written a moment ago would otherwise keep the
    // walk from vouching for its folders, and a watcher needs that list.
    let (mut live, _) = LiveRegistry::new(quick_options(&SkillsConfig::default()), roots);
    live.watch().unwrap();
    assert_eq!(live.mode(), ReloadMode::Watching);
    assert!(live.begin_turn().is_none(), "a quiet tree costs nothing");
    assert!(live.begin_turn().is_none(), "a quiet tree costs nothing");

    // No waiting: the watch is read at the turn start, and the kernel
    // queued the event before the write returned.
    write_tree(
        tmp.path(),
        &[("skills/b/SKILL.md", "---\ndescription: b\n---\n")],
    );
    let refresh = live.begin_turn().expect("the watch reported the new skill");
    let ids: Vec<&str> = refresh.registry.ids().collect();
    assert_eq!(ids, ["a", "b"]);
    assert!(live.begin_turn().is_none(), "quiet again");
}

/// The debounced watcher reported an edit only after its timeout, on a
/// thread of its own: an edit made just before a turn started could miss
/// that turn. The watch is now read at the turn start, so every edit that
/// finished before it is in the turn, round after round with no pause.
#[test]
fn a_watch_sees_every_edit_finished_before_the_turn_start() {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(
        tmp.path(),
        &[("skills/a/SKILL.md", "---\ndescription: a0\n---\nbody\n")],
    );
    past_racy_window();
    let roots = vec![root(
        SourceKind::RepoGeneric,
        "repo:skills",
        &tmp.path().join("skills"),
    )];
    let (mut live, _) = LiveRegistry::new(quick_options(&SkillsConfig::default()), roots);
    live.watch().unwrap();
    assert!(live.begin_turn().is_none());
    for round in 1..=30 {
        let description = format!("a{round}");
        fs::write(
            tmp.path().join("skills/a/SKILL.md"),
            format!("---\ndescription: {description}\n---\nbody\n"),
        )
        .unwrap();
        let refresh = live.begin_turn().expect("the edit is in this turn");
        assert_eq!(
            refresh.registry.get("a").unwrap().manifest.description,
            description
        );
        assert!(live.begin_turn().is_none(), "round {round}: quiet again");
    }
}

/// A root that does not exist yet is watched through its nearest existing
/// ancestor, for new entries only: an edit of a file beside it costs
/// nothing, and creating the root (and a skill in it) is noticed.
#[test]
fn a_missing_root_is_noticed_when_it_appears() {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(tmp.path(), &[("README.txt", "hello\n")]);
    past_racy_window();
    let roots = vec![root(
        SourceKind::RepoBcode,
        "repo:.bcode/skills",
        &tmp.path().join(".bcode/skills"),
    )];
    let (mut live, registry) = LiveRegistry::new(quick_options(&SkillsConfig::default()), roots);
    assert_eq!(registry.ids().count(), 0);
    live.watch().unwrap();
    assert_eq!(live.mode(), ReloadMode::Watching);
    assert!(live.begin_turn().is_none());
    fs::write(tmp.path().join("README.txt"), "edited\n").unwrap();
    assert!(live.begin_turn().is_none(), "an edit beside the root");
    // `.bcode` first: the watch moves down to it, then sees `skills`.
    fs::create_dir(tmp.path().join(".bcode")).unwrap();
    let refresh = live.begin_turn().expect("a new entry");
    assert_eq!(refresh.registry.ids().count(), 0);
    write_tree(
        tmp.path(),
        &[(".bcode/skills/new/SKILL.md", "---\ndescription: n\n---\n")],
    );
    let refresh = live.begin_turn().expect("the root and its skill");
    assert_eq!(refresh.registry.ids().collect::<Vec<_>>(), ["new"]);
}

/// A folder first watched as a missing root's ancestor (new entries only)
/// and then depended on by the walk (it holds a root that is one skill
/// file) is watched fully from then on: an edit of that file is seen. The
/// folder watch used to keep the first, weaker watch.
#[test]
fn an_ancestor_watch_becomes_a_full_watch_when_the_walk_needs_it() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().canonicalize().unwrap().join("a");
    fs::create_dir_all(&folder).unwrap();
    past_racy_window();
    let roots = vec![
        root(
            SourceKind::UserConfig,
            "user-config:tool",
            &folder.join("tool.md"),
        ),
        root(
            SourceKind::UserConfig,
            "user-config:skills",
            &folder.join("skills"),
        ),
    ];
    let (mut live, registry) = LiveRegistry::new(quick_options(&SkillsConfig::default()), roots);
    assert_eq!(registry.ids().count(), 0);
    live.watch().unwrap();
    assert!(live.begin_turn().is_none());

    fs::write(folder.join("tool.md"), "---\ndescription: one\n---\n").unwrap();
    let refresh = live.begin_turn().expect("the new file is a new entry");
    assert_eq!(refresh.registry.ids().collect::<Vec<_>>(), ["tool"]);
    past_racy_window();
    // The stamp check after new watches finds nothing new.
    let _ = live.begin_turn();
    assert!(live.begin_turn().is_none(), "quiet");
    assert_eq!(live.mode(), ReloadMode::Watching);

    fs::write(
        folder.join("tool.md"),
        "---\ndescription: two, longer\n---\n",
    )
    .unwrap();
    let refresh = live.begin_turn().expect("the edit of the file is seen");
    assert_eq!(
        refresh.registry.get("tool").unwrap().manifest.description,
        "two, longer"
    );
}

/// A skill folder reached through a symlink that leaves its root (the Nix /
/// Home Manager layout) used to force a stamp check at every turn, since
/// the root's watcher does not see inside the link's target. The target is
/// watched too now: a quiet tree costs nothing, and an edit inside the
/// target is still noticed.
#[test]
fn a_watcher_covers_skill_folders_that_links_lead_out_of_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let (root_dir, store) = (base.join("root"), base.join("store"));
    write_tree(
        &store,
        &[("nixed/SKILL.md", "---\ndescription: n\n---\nold\n")],
    );
    fs::create_dir_all(&root_dir).unwrap();
    std::os::unix::fs::symlink(store.join("nixed"), root_dir.join("nixed")).unwrap();
    age(&store.join("nixed/SKILL.md"));
    past_racy_window();
    let roots = vec![root(
        SourceKind::UserConfig,
        "user-config:skills",
        &root_dir,
    )];
    let (mut live, registry) = LiveRegistry::new(quick_options(&SkillsConfig::default()), roots);
    assert_eq!(registry.ids().collect::<Vec<_>>(), ["nixed"]);
    assert_eq!(live.mode(), ReloadMode::MetadataCheck);
    live.watch().unwrap();
    assert_eq!(live.mode(), ReloadMode::Watching);
    assert!(live.begin_turn().is_none(), "a quiet tree is not checked");

    fs::write(
        store.join("nixed/SKILL.md"),
        "---\ndescription: n, edited\n---\nnew\n",
    )
    .unwrap();
    let refresh = live
        .begin_turn()
        .expect("the edit behind the link is noticed");
    assert_eq!(
        refresh.registry.get("nixed").unwrap().manifest.description,
        "n, edited"
    );
}

/// The watcher took one inotify watch per folder of every root, resources
/// and all, with no budget. It now takes one per folder the walk depended
/// on, and over a budget it declines with a note: the registry then checks
/// stamps at each turn, and still notices changes.
#[test]
fn a_watcher_over_its_folder_budget_falls_back_to_stamp_checks() {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(
        tmp.path(),
        &[
            ("a/SKILL.md", "---\ndescription: a\n---\n"),
            ("b/SKILL.md", "---\ndescription: b\n---\n"),
            ("c/SKILL.md", "---\ndescription: c\n---\n"),
        ],
    );
    past_racy_window();
    let roots = vec![root(
        SourceKind::RepoBcode,
        "repo:.bcode/skills",
        tmp.path(),
    )];
    let (mut live, _) = LiveRegistry::new(quick_options(&SkillsConfig::default()), roots);
    let note = live.watch_within(3).unwrap_err();
    assert_eq!(
        note,
        "4 folders under the skill roots is over the watch budget of 3; checking stamps at each turn"
    );
    assert_eq!(live.mode(), ReloadMode::MetadataCheck);
    assert_eq!(live.fallback_reason(), Some(note.as_str()));
    fs::write(tmp.path().join("a/SKILL.md"), "---\ndescription: a2\n---\n").unwrap();
    let refresh = live.begin_turn().expect("a stamp check at every turn");
    assert_eq!(
        refresh.registry.get("a").unwrap().manifest.description,
        "a2"
    );
    // Within budget the same tree is watched.
    let roots = vec![root(
        SourceKind::RepoBcode,
        "repo:.bcode/skills",
        tmp.path(),
    )];
    past_racy_window();
    let (mut live, _) = LiveRegistry::new(quick_options(&SkillsConfig::default()), roots);
    live.watch_within(4).unwrap();
    assert_eq!(live.mode(), ReloadMode::Watching);
}
