//! Skill bodies read after the walk (issue 24, item 12): swapping a
//! `SKILL.md` for a link to an outside file between the walk and the body
//! read leaked the outside body (3 of 400 racing tries), because the body
//! was re-opened by path with no confinement. A body is now read through its
//! root's confinement: a repository's skill must still resolve inside the
//! repository, and no root's skill under `/proc`, `/sys` or `/dev`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
#![cfg(target_os = "linux")]

use crate::support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{RootsInput, SkillRegistry, source_roots};
use bcode_skill_models::{DiagnosticCode, LoadCause, SkillError, SourceEnv};
use support::{build, write_tree};

const SKILL: &str = "---\ndescription: a skill\n---\nthe real body\n";
const SECRET: &str = "---\ndescription: SECRET\n---\nSECRET BODY\n";

/// The registry of a repository at `base/repo` and a home at `base/home`.
fn registry(base: &Path) -> SkillRegistry {
    let env = SourceEnv {
        home: Some(base.join("home")),
        ..SourceEnv::default()
    };
    let config = SkillsConfig::default();
    let roots = source_roots(RootsInput {
        repo: &base.join("repo"),
        work: &base.join("repo"),
        env: &env,
        config: &config,
        configured: &[],
        bundled: &[],
        owners: None,
    });
    build(&roots, &config)
}

/// Replaces `file` by a link to `target` in one rename, as an attacker
/// racing the read would.
fn swap_for_link(file: &Path, target: &Path) {
    let temporary = file.with_extension("swap");
    symlink(target, &temporary).unwrap();
    fs::rename(&temporary, file).unwrap();
}

fn sandbox() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    write_tree(
        &base,
        &[
            ("secret/SKILL.md", SECRET),
            ("repo/.bcode/skills/alpha/SKILL.md", SKILL),
            (
                "repo/docs/other/SKILL.md",
                "---\ndescription: d\n---\ninside\n",
            ),
            ("home/.config/bcode/skills/mine/SKILL.md", SKILL),
        ],
    );
    (dir, base)
}

#[test]
fn a_repository_skill_swapped_for_an_outside_link_after_the_walk_is_refused() {
    let (_dir, base) = sandbox();
    let registry = registry(&base);
    let skill = registry.get("alpha").unwrap().clone();
    assert_eq!(registry.body(&skill).unwrap(), "the real body");

    let secret = base.join("secret/SKILL.md");
    swap_for_link(&skill.location, &secret);
    let message = format!(
        "`{}` resolves to `{}`, outside `{}`",
        skill.location.display(),
        secret.display(),
        base.join("repo").display()
    );
    let refused = SkillError::Load {
        id: "alpha".into(),
        cause: LoadCause::PathEscape {
            message: message.clone(),
        },
    };
    assert_eq!(registry.body(&skill).unwrap_err(), refused);
    assert_eq!(registry.load_current(&skill).unwrap_err(), refused);
    let checked: Vec<(DiagnosticCode, String)> = registry
        .check_bodies()
        .into_iter()
        .map(|d| (d.code, d.message().into_owned()))
        .collect();
    assert_eq!(
        checked,
        [(
            DiagnosticCode::PathEscape,
            format!("skill `alpha` could not be loaded: {message}")
        )]
    );

    // A link that stays inside the repository is read, as the walk allows.
    swap_for_link(&skill.location, Path::new("../../../docs/other/SKILL.md"));
    assert_eq!(registry.body(&skill).unwrap(), "inside");
}

/// The user's own roots may link anywhere (the Nix / Home Manager case),
/// but never into `/proc`, `/sys` or `/dev`, later reads included.
#[test]
fn a_user_skill_may_be_swapped_for_an_outside_link_but_not_for_proc() {
    let (_dir, base) = sandbox();
    let registry = registry(&base);
    let skill = registry.get("mine").unwrap().clone();
    swap_for_link(&skill.location, &base.join("secret/SKILL.md"));
    assert_eq!(registry.body(&skill).unwrap(), "SECRET BODY");

    swap_for_link(&skill.location, Path::new("/proc/self/environ"));
    let err = registry.body(&skill).unwrap_err();
    assert_eq!(
        err,
        SkillError::Load {
            id: "mine".into(),
            cause: LoadCause::PathEscape {
                message: format!(
                    "`{}` resolves to `/proc/{}/environ`, under /proc, /sys or /dev",
                    skill.location.display(),
                    std::process::id()
                ),
            },
        }
    );
}

/// The race itself: a thread swaps the file for the outside link and back
/// while the body is read; no read may ever return the outside body. The
/// reads go on until the swapper has swapped 400 times and the reader has
/// met the link at least once, so the race is really run.
#[test]
fn racing_swaps_never_leak_the_outside_body() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (_dir, base) = sandbox();
    let registry = registry(&base);
    let skill = registry.get("alpha").unwrap().clone();
    let location = skill.location.clone();
    let secret = base.join("secret/SKILL.md");
    // The real file, kept inside the repository to link back to.
    let real = base.join("repo/real-alpha.md");
    fs::write(&real, SKILL).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                swap_for_link(&location, &secret);
                swap_for_link(&location, &real);
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let (mut reads, mut met_the_link) = (0u32, false);
    while reads < 400 || swaps.load(Ordering::Relaxed) < 400 || !met_the_link {
        reads += 1;
        assert!(reads < 1_000_000, "the race never happened");
        match registry.body(&skill) {
            Ok(body) => assert_eq!(body, "the real body", "read {reads}"),
            Err(SkillError::Load {
                cause: LoadCause::PathEscape { .. },
                ..
            }) => met_the_link = true,
            // The instant between the two names of a rename.
            Err(SkillError::Load {
                cause: LoadCause::Io { .. },
                ..
            }) => {}
            Err(other) => panic!("unexpected {other}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
}

/// The same race against discovery itself: the walk sees a regular
/// `SKILL.md`, and a loader reads it a moment later on a worker thread. The
/// loader opens it through the root's confinement too, so the outside
/// file's front matter never becomes the skill's description (the
/// catalog's text). Builds go on until the swapper has swapped 200 times
/// and some build met the link.
#[test]
fn racing_swaps_never_leak_outside_front_matter_into_a_build() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (_dir, base) = sandbox();
    let location = base.join("repo/.bcode/skills/alpha/SKILL.md");
    let secret = base.join("secret/SKILL.md");
    let real = base.join("repo/real-alpha.md");
    fs::write(&real, SKILL).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps, location) = (Arc::clone(&stop), Arc::clone(&swaps), location.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                swap_for_link(&location, &secret);
                swap_for_link(&location, &real);
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let (mut builds, mut met_the_link) = (0u32, false);
    while builds < 200 || swaps.load(Ordering::Relaxed) < 200 || !met_the_link {
        builds += 1;
        assert!(builds < 100_000, "the race never happened");
        let registry = registry(&base);
        if let Some(skill) = registry.get("alpha") {
            assert_eq!(skill.manifest.description, "a skill", "build {builds}");
        }
        met_the_link |= registry
            .diagnostics()
            .iter()
            .any(|d| d.path.as_deref() == Some(location.as_path()));
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
}
