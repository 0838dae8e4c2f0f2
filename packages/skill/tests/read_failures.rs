//! A skill file that could not be read (here: no file descriptor left, as
//! under EMFILE) is not vouched for by the snapshot: once the failure is
//! gone, the next build reads it. One test in its own process, because it
//! lowers the process's open-file limit.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside test fns

mod support;

use bcode_prompt_config::SkillsConfig;
use bcode_skill::Discovery;
use bcode_skill_models::SourceKind;
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use support::{past_racy_window, quick_options, root, write_tree};

/// A limit that leaves exactly one descriptor to open: new descriptors
/// take the lowest free number and the limit bounds that number. While the
/// listing below is open every number under the first free one is taken;
/// once it closes, its own is the only free one under it.
fn one_free_descriptor() -> u64 {
    let open: std::collections::BTreeSet<u64> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    (0..).find(|n| !open.contains(n)).unwrap()
}

#[test]
fn a_transient_read_failure_is_retried_by_the_next_build() {
    let tmp = tempfile::tempdir().unwrap();
    write_tree(
        tmp.path(),
        &[
            ("a/SKILL.md", "---\ndescription: A.\n---\n"),
            ("b/SKILL.md", "---\ndescription: B.\n---\n"),
        ],
    );
    past_racy_window();
    let roots = [root(
        SourceKind::UserConfig,
        "user-config:skills",
        tmp.path(),
    )];
    let mut discovery = Discovery::new(quick_options(&SkillsConfig::default()));

    // One descriptor: enough to list the root, or to hold it open, but not
    // to open a skill file too. The walk succeeds and every read fails.
    let saved = getrlimit(Resource::Nofile);
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(one_free_descriptor()),
            maximum: saved.maximum,
        },
    )
    .unwrap();
    let starved = discovery.build(&roots);
    setrlimit(Resource::Nofile, saved).unwrap();
    assert_eq!(starved.len(), 0, "{:#?}", starved.diagnostics());
    assert!(!starved.diagnostics().is_empty());

    let recovered = discovery.build(&roots);
    assert!(!discovery.last_stats().confirmed_by_stamps);
    assert_eq!(recovered.len(), 2, "{:#?}", recovered.diagnostics());
}
