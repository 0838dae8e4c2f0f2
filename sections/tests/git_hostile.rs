//! The git probe against damaged and hostile repositories (issues 12 and
//! 24): truncated loose commit, tree and blob objects, a tree spelling out
//! too many paths, FIFOs and huge sparse files where git reads files, and
//! `.git` files or `core.worktree` naming another checkout. Every probe
//! answers within its deadline, says what went wrong in its section, leaves
//! no worker spinning, and a repository that hung a worker does not get
//! another one.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
#![cfg(unix)] // FIFOs are a Unix fact

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use bcode_prompt_config::BcodeConfig;
use bcode_prompt_pipeline::Pipeline;
use bcode_prompt_pipeline::StageContext;
use bcode_prompt_sections::{
    Gathered, GitFacts, GitProbeOptions, GitUnavailable, HeadFacts, RepoFacts, StatusOutcome,
    WorktreeFacts, read_git, start_git_read,
};
use bcode_templates::Templates;
use common::{commit_all, init, mkfifo, write};
use git2::{Repository, RepositoryInitOptions};

/// A short deadline, so a hang costs the test a fraction of a second.
const DEADLINE: Duration = Duration::from_millis(400);

fn options() -> GitProbeOptions {
    GitProbeOptions {
        deadline: DEADLINE,
        ..GitProbeOptions::default()
    }
}

/// How long a test waits for a probe before it calls it hung. Generous on
/// purpose: it catches a hang, never measures speed (the deadline a read
/// kept shows in its outcome, `TimedOut { deadline_ms: 400 }`).
const HUNG: Duration = Duration::from_secs(60);

/// A deadline no test waits out: a read with it that answers at all did not
/// wait for its deadline, which is what the "answered at once" checks need
/// (with no stopwatch: a read that waited would be caught by [`HUNG`]).
const NEVER: Duration = Duration::from_secs(3600);

/// Runs `probe` on a thread of its own and returns its answer, failing the
/// test if none comes within [`HUNG`].
fn answered(what: &str, probe: impl FnOnce() -> GitFacts + Send + 'static) -> GitFacts {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(probe());
    });
    rx.recv_timeout(HUNG)
        .unwrap_or_else(|_| panic!("{what}: no answer within {HUNG:?}"))
}

/// Reads `path` with the short deadline; a hang fails the test.
fn timed_read(path: &Path) -> GitFacts {
    let path = path.to_owned();
    answered("a read with a 400 ms deadline", move || {
        read_git(&path, &options())
    })
}

/// Reads `path` with a deadline of an hour: an answer shows the probe did
/// not wait (for a worker still running, a FIFO, a file too big to read).
fn read_without_waiting(path: &Path) -> GitFacts {
    let path = path.to_owned();
    let options = GitProbeOptions {
        deadline: NEVER,
        ..GitProbeOptions::default()
    };
    answered("a read that must not wait", move || {
        read_git(&path, &options)
    })
}

/// A canonical temporary folder and a repository with one commit in
/// `repo/` below it.
fn committed() -> (tempfile::TempDir, PathBuf, git2::Oid) {
    let tmp = tempfile::tempdir().unwrap();
    let repo_dir = tmp.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir(&repo_dir).unwrap();
    let repo = init(&repo_dir);
    write(&repo_dir, "a.txt", "a\n");
    let oid = commit_all(&repo, "first");
    (tmp, repo_dir, oid)
}

/// Puts a FIFO where `repo_dir`'s pack index would be: opening the
/// repository then blocks until [`release_and_remove`] frees it. Returns the
/// FIFO.
fn hold_open(repo_dir: &Path) -> PathBuf {
    let pack = repo_dir.join(".git/objects/pack/pack-0123456789012345678901234567890123456789");
    std::fs::create_dir_all(pack.parent().unwrap()).unwrap();
    std::fs::write(pack.with_extension("pack"), b"PACK").unwrap();
    let object = pack.with_extension("idx");
    mkfifo(&object);
    object
}

/// Opens the FIFO at `path` for writing (a reader is blocked in `open`, so
/// this does not wait), removes it and closes it, so that reader sees an
/// empty file and goes on, and nothing opens the FIFO again.
fn release_and_remove(path: &Path) {
    let writer = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    std::fs::remove_file(path).unwrap();
    drop(writer);
}

fn loose_object(repo_dir: &Path, oid: git2::Oid) -> PathBuf {
    let hex = oid.to_string();
    repo_dir
        .join(".git/objects")
        .join(&hex[..2])
        .join(&hex[2..])
}

/// The git sections rendered from `facts`, with `root` shown as `[ROOT]`,
/// and the notes of every section.
fn render(facts: GitFacts, root: &Path) -> (String, Vec<String>) {
    let mut config = BcodeConfig::default();
    let sections = &mut config.system_prompt.sections;
    sections.worktree_context = true;
    sections.git_revision = true;
    sections.dynamic_repository_context = true;
    let mut inputs = Gathered::new();
    inputs.git = Some(facts);
    let templates = Templates::builtin();
    let pipeline = Pipeline::new(bcode_prompt_sections::machine_stages()).unwrap();
    let prompt = pipeline
        .assemble(&StageContext::new(&config, &templates, &inputs), false)
        .unwrap();
    let text = prompt
        .request_context
        .replace(&root.display().to_string(), "[ROOT]");
    let notes = prompt
        .sections
        .iter()
        .flat_map(|s| s.notes.iter().cloned())
        .map(|n| n.replace(&root.display().to_string(), "[ROOT]"))
        .collect();
    (text, notes)
}

/// What a crash during `git commit` leaves: HEAD's loose commit object cut
/// short. libgit2 spins forever reading it, and used to do so on the calling
/// thread while it abbreviated HEAD's id. Now the id is abbreviated from the
/// object names alone, the status scan (which must read the commit) times
/// out on its worker, and the next probe starts no second scan.
#[test]
fn truncated_head_commit_object_does_not_hang() {
    let (_tmp, repo_dir, oid) = committed();
    let object = loose_object(&repo_dir, oid);
    let bytes = std::fs::read(&object).unwrap();
    std::fs::remove_file(&object).unwrap();
    std::fs::write(&object, &bytes[..bytes.len() / 2]).unwrap();
    let facts = timed_read(&repo_dir);
    let GitFacts::Repository(repo) = &facts else {
        panic!("{facts:?}");
    };
    let short = &oid.to_string()[..7];
    assert_eq!(
        repo.head,
        HeadFacts::Branch {
            name: "main".into(),
            commit: bcode_prompt_sections::CommitId {
                short: short.to_owned(),
                full: oid.to_string(),
            },
        }
    );
    // The status scan would spin forever inflating the cut object (libgit2
    // loops on a truncated stream); the object is inflated first, so the
    // scan never starts and no worker is left spinning.
    let StatusOutcome::Failed { detail } = &repo.status else {
        panic!("{:?}", repo.status);
    };
    assert!(
        detail.starts_with(&format!("the HEAD commit object {oid} cannot be inflated")),
        "{detail}"
    );
    let (text, notes) = render(facts.clone(), &repo_dir);
    assert!(
        text.contains(&format!(
            "Git revision: branch main at {short} ({oid}); whether the working tree has changes is unknown."
        )),
        "{text}"
    );
    assert!(
        notes.iter().any(|n| n.contains("cannot be inflated")),
        "{notes:?}"
    );
    let again = read_without_waiting(&repo_dir);
    assert!(matches!(
        again,
        GitFacts::Repository(RepoFacts {
            status: StatusOutcome::Failed { .. },
            ..
        })
    ));
}

/// A FIFO at each file git opens on the way to `HEAD` is refused before
/// any thread starts (no wait at all), and the section names the file.
#[test]
fn fifo_at_a_git_file_is_refused_without_waiting() {
    for file in [
        ".git/config",
        ".git/packed-refs",
        ".git/refs/heads/main",
        ".git/HEAD",
        ".git/objects/info/alternates",
    ] {
        let (_tmp, repo_dir, _) = committed();
        mkfifo(&repo_dir.join(file));
        let facts = read_without_waiting(&repo_dir);
        assert_eq!(
            facts,
            GitFacts::Unavailable(GitUnavailable::NotAFile {
                path: file.to_owned()
            }),
            "{file}"
        );
        let (text, notes) = render(facts, &repo_dir);
        assert_eq!(
            text,
            format!(
                "Git: no git information; {file} is not a regular file, so the repository was not read."
            )
        );
        assert_eq!(
            notes,
            [format!(
                "{file} is not a regular file; the repository was not opened"
            )]
        );
    }
}

/// A FIFO where the checks do not look (a pack index, which libgit2 opens
/// to abbreviate HEAD's id) holds the worker in `open`: the probe times
/// out, the next probe starts no second worker, and once the first one
/// ends the repository reads again.
#[test]
fn a_hung_open_is_remembered_until_its_worker_ends() {
    let (_tmp, repo_dir, _) = committed();
    let object = hold_open(&repo_dir);
    assert_eq!(
        timed_read(&repo_dir),
        GitFacts::Unavailable(GitUnavailable::TimedOut { deadline_ms: 400 })
    );
    // Answered without waiting out a second deadline (how fast is not a
    // test's to measure).
    let again = read_without_waiting(&repo_dir);
    assert_eq!(again, GitFacts::Unavailable(GitUnavailable::StillRunning));
    let (text, notes) = render(again, &repo_dir);
    assert_eq!(
        text,
        "Git: no git information; an earlier read of the repository has not finished."
    );
    assert_eq!(notes.len(), 1);
    // The worker reads an empty object and ends; the next probe is fresh.
    release_and_remove(&object);
    wait_until_fresh(&repo_dir);
}

/// A read started before other work counts its deadline from its start:
/// collected after the deadline, a hung read answers at once that it timed
/// out, and a healthy one gives the facts that arrived in time.
#[test]
fn a_started_read_counts_its_deadline_from_its_start() {
    let (_tmp, healthy, oid) = committed();
    let run = start_git_read(&healthy, &options());
    std::thread::sleep(DEADLINE + Duration::from_millis(100));
    let GitFacts::Repository(repo) = run.finish() else {
        panic!("the healthy repository was not read");
    };
    assert_eq!(
        repo.head,
        HeadFacts::Branch {
            name: "main".into(),
            commit: bcode_prompt_sections::CommitId {
                short: oid.to_string()[..7].to_owned(),
                full: oid.to_string(),
            },
        }
    );
    assert!(
        matches!(repo.status, StatusOutcome::Done(_)),
        "{:?}",
        repo.status
    );

    let (_tmp, hung, _) = committed();
    let object = hold_open(&hung);
    let run = start_git_read(&hung, &options());
    std::thread::sleep(DEADLINE + Duration::from_millis(100));
    // Collected on a thread under a watchdog: a finish that waited another
    // whole deadline fails here, without a stopwatch.
    let (done, collected) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(run.finish());
    });
    assert_eq!(
        collected
            .recv_timeout(DEADLINE)
            .unwrap_or_else(|_| panic!("waited another {DEADLINE:?} past the deadline")),
        GitFacts::Unavailable(GitUnavailable::TimedOut { deadline_ms: 400 })
    );
    release_and_remove(&object);
    wait_until_fresh(&hung);
}

/// A started read dropped without waiting (a turn that failed after
/// starting it) leaves its worker remembered: the next read of a hung
/// repository starts no second worker.
#[test]
fn a_started_read_dropped_unwaited_is_remembered() {
    let (_tmp, hung, _) = committed();
    let object = hold_open(&hung);
    drop(start_git_read(&hung, &options()));
    assert_eq!(
        read_without_waiting(&hung),
        GitFacts::Unavailable(GitUnavailable::StillRunning),
        "waited out a deadline again"
    );
    release_and_remove(&object);
    wait_until_fresh(&hung);
}

/// A FIFO `.gitignore` in the working tree holds the status scan: the
/// revision still shows, the status times out, and the next probe reads
/// `HEAD` again without starting a second scan.
#[test]
fn a_hung_status_scan_is_not_started_again() {
    let (_tmp, repo_dir, oid) = committed();
    let ignore = repo_dir.join(".gitignore");
    mkfifo(&ignore);
    let facts = timed_read(&repo_dir);
    let GitFacts::Repository(repo) = &facts else {
        panic!("{facts:?}");
    };
    assert_eq!(repo.status, StatusOutcome::TimedOut { deadline_ms: 400 });
    assert!(
        matches!(&repo.head, HeadFacts::Branch { name, commit } if name == "main" && commit.full == oid.to_string())
    );
    let again = read_without_waiting(&repo_dir);
    let GitFacts::Repository(repo) = &again else {
        panic!("{again:?}");
    };
    assert_eq!(repo.status, StatusOutcome::StillRunning);
    let (text, notes) = render(again.clone(), &repo_dir);
    assert!(
        text.ends_with(
            "Git status: not shown; an earlier status scan has not finished. \
             Run `git status` if you need it."
        ),
        "{text}"
    );
    assert!(notes.iter().any(|n| n.contains("earlier git status scan")));
    release_and_remove(&ignore);
    wait_until_fresh(&repo_dir);
}

/// Probes until the remembered worker has ended and a full read happens.
fn wait_until_fresh(repo_dir: &Path) {
    for _ in 0..50 {
        match read_git(repo_dir, &options()) {
            GitFacts::Unavailable(GitUnavailable::StillRunning) => {}
            GitFacts::Repository(RepoFacts {
                status: StatusOutcome::StillRunning,
                ..
            }) => {}
            _ => return,
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the remembered worker never ended");
}

/// A `.git` file naming another repository's git folder: nothing of that
/// repository (branch, commit, status) is described.
#[test]
fn git_file_naming_another_repository_is_reported_not_described() {
    let (tmp, other, _) = committed();
    let mine = tmp.path().canonicalize().unwrap().join("mine");
    std::fs::create_dir(&mine).unwrap();
    write(
        &mine,
        ".git",
        &format!("gitdir: {}\n", other.join(".git").display()),
    );
    let facts = timed_read(&mine);
    assert_eq!(
        facts,
        GitFacts::Unavailable(GitUnavailable::ForeignWorkTree {
            root: mine.display().to_string(),
            work_tree: other.display().to_string(),
        })
    );
    // From a folder below, too.
    std::fs::create_dir_all(mine.join("deep/er")).unwrap();
    assert!(matches!(
        timed_read(&mine.join("deep/er")),
        GitFacts::Unavailable(GitUnavailable::ForeignWorkTree { .. })
    ));
    let base = tmp.path().canonicalize().unwrap();
    let (text, notes) = render(facts, &base);
    assert_eq!(
        text,
        "Git: no git information; this folder's git metadata belongs to a working tree \
         elsewhere, so that repository is not described."
    );
    assert_eq!(
        notes,
        [
            "the git folder found at [ROOT]/mine belongs to the work tree [ROOT]/repo; \
          that repository is not described"
        ]
    );
}

/// A `.git` file naming another checkout's linked-worktree folder, and a
/// repository whose `core.worktree` points away, are refused the same way.
#[test]
fn borrowed_worktree_folder_and_core_worktree_are_reported() {
    let (tmp, main, _) = committed();
    let base = tmp.path().canonicalize().unwrap();
    let repo = Repository::open(&main).unwrap();
    repo.worktree("feature", &base.join("linked"), None)
        .unwrap();
    let mine = base.join("mine");
    std::fs::create_dir(&mine).unwrap();
    write(
        &mine,
        ".git",
        &format!(
            "gitdir: {}\n",
            main.join(".git/worktrees/feature").display()
        ),
    );
    assert!(matches!(
        timed_read(&mine),
        GitFacts::Unavailable(GitUnavailable::ForeignWorkTree { work_tree, .. })
            if work_tree == base.join("linked").display().to_string()
    ));
    let pointed = base.join("pointed");
    std::fs::create_dir(&pointed).unwrap();
    let r = init(&pointed);
    r.config()
        .unwrap()
        .set_str("core.worktree", main.to_str().unwrap())
        .unwrap();
    assert!(matches!(
        timed_read(&pointed),
        GitFacts::Unavailable(GitUnavailable::ForeignWorkTree { .. })
    ));
}

/// Legitimate `.git` files still work: a linked worktree and a submodule
/// (whose git folder lives in the superproject and names it back through
/// `core.worktree`).
#[test]
fn linked_worktrees_and_submodules_still_read() {
    let (tmp, main, oid) = committed();
    let base = tmp.path().canonicalize().unwrap();
    let repo = Repository::open(&main).unwrap();
    let linked = base.join("linked");
    repo.worktree("feature", &linked, None).unwrap();
    let GitFacts::Repository(facts) = timed_read(&linked.join(".")) else {
        panic!("the linked worktree was not read");
    };
    assert!(matches!(facts.worktree, WorktreeFacts::Linked { .. }));
    assert!(matches!(&facts.head, HeadFacts::Branch { name, .. } if name == "feature"));
    assert_eq!(
        facts.status,
        StatusOutcome::Done(Default::default()),
        "the linked worktree is clean"
    );

    // A submodule as `git submodule add` lays it out.
    let sub = main.join("sub");
    let module = main.join(".git/modules/sub");
    std::fs::create_dir_all(&sub).unwrap();
    let cloned = Repository::init_opts(
        &module,
        RepositoryInitOptions::new().bare(true).initial_head("main"),
    )
    .unwrap();
    let config = &mut cloned.config().unwrap();
    config.set_bool("core.bare", false).unwrap();
    config.set_str("core.worktree", "../../../sub").unwrap();
    write(&sub, ".git", "gitdir: ../.git/modules/sub\n");
    let sub_repo = Repository::open(&sub).unwrap();
    write(&sub, "s.txt", "s\n");
    let sub_oid = commit_all(&sub_repo, "sub");
    let GitFacts::Repository(facts) = timed_read(&sub) else {
        panic!("the submodule was not read");
    };
    assert_eq!(
        facts.worktree,
        WorktreeFacts::Main {
            root: sub.display().to_string()
        }
    );
    assert!(
        matches!(&facts.head, HeadFacts::Branch { commit, .. } if commit.full == sub_oid.to_string())
    );
    assert_ne!(sub_oid, oid);
}

/// The peak resident memory of this process so far, in bytes.
fn peak_memory() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    kib * 1024
}

/// A sparse file of `len` bytes at `path` (no disk blocks, all zeros).
fn sparse(path: &Path, len: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = std::fs::File::create(path).unwrap();
    file.set_len(len).unwrap();
}

/// Huge sparse git metadata (issue 24, item 6): libgit2 reads each of these
/// files whole, and the deadline only ends the wait, not the read, so a
/// 4 GiB sparse index grew the process by 4 GiB. Each is now refused by its
/// size from `stat` before libgit2 opens the repository, at once, with the
/// file and its limit in the note, and the process stays small.
#[test]
fn huge_sparse_git_metadata_is_refused_by_its_size() {
    const HUGE: u64 = 4 << 30;
    for (file, limit) in [
        (".git/index", "128 MiB"),
        (".git/config", "1 MiB"),
        (".git/HEAD", "64 KiB"),
        (".git/objects/info/alternates", "64 KiB"),
        (".git/packed-refs", "64 MiB"),
        (".git/refs/heads/main", "64 KiB"),
        (".git/included.config", "1 MiB"),
        (".git", "64 KiB"),
    ] {
        let (_tmp, repo_dir, _) = committed();
        if file == ".git" {
            // A `.git` file in a folder of its own, as a linked worktree has.
            let mine = repo_dir.parent().unwrap().join("mine");
            std::fs::create_dir(&mine).unwrap();
            sparse(&mine.join(".git"), HUGE);
            check_refused(&mine, file, limit, HUGE);
            continue;
        }
        if file == ".git/included.config" {
            let config = repo_dir.join(".git/config");
            let mut text = std::fs::read_to_string(&config).unwrap();
            text.push_str("[include]\n\tpath = included.config\n");
            std::fs::write(&config, text).unwrap();
        }
        sparse(&repo_dir.join(file), HUGE);
        check_refused(&repo_dir, file, limit, HUGE);
    }
    let peak = peak_memory();
    assert!(peak < 200 << 20, "the process peaked at {peak} bytes");
}

/// Reads `dir`, expecting it refused at once because `file` is `len` bytes.
fn check_refused(dir: &Path, file: &str, limit: &str, len: u64) {
    let facts = read_without_waiting(dir);
    let detail = format!(
        "{file} is {len} bytes, more than the {limit} git is let read of it; \
         the repository was not opened"
    );
    assert_eq!(
        facts,
        GitFacts::Unavailable(GitUnavailable::Unreadable {
            detail: detail.clone()
        }),
        "{file}"
    );
    let (text, notes) = render(facts, dir);
    assert_eq!(
        text,
        "Git: no git information; the repository could not be read."
    );
    assert_eq!(notes, [format!("git error: {detail}")]);
}

#[cfg(target_os = "linux")]
/// The scheduler state of each probe worker thread of this process (`R`
/// running or runnable, `S` sleeping, `D` in the disk ...), by thread id.
fn worker_states() -> Vec<(String, char)> {
    let mut states = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.starts_with("bcode-git") {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // The state is the first field after the parenthesised name.
        let state = stat[stat.rfind(')').unwrap() + 2..].chars().next().unwrap();
        states.push((task.file_name().to_string_lossy().into_owned(), state));
    }
    states
}

/// Checks that no probe worker is left spinning: a spinning thread is
/// running or waiting for a processor (`R`) whenever it is looked at,
/// however loaded the machine, while an idle one (ended, or blocked on
/// another test's FIFO) sleeps. Thirty looks 10 ms apart: a worker seen
/// `R` in every one spins. No clock is read and no second is waited.
fn assert_no_worker_spins() {
    #[cfg(target_os = "linux")]
    {
        let mut always_running: Option<Vec<String>> = None;
        for _ in 0..30 {
            let running: Vec<String> = worker_states()
                .into_iter()
                .filter(|(_, state)| *state == 'R')
                .map(|(id, _)| id)
                .collect();
            always_running = Some(match always_running {
                None => running,
                Some(before) => before
                    .into_iter()
                    .filter(|id| running.contains(id))
                    .collect(),
            });
            std::thread::sleep(Duration::from_millis(10));
        }
        let spinning = always_running.unwrap_or_default();
        assert!(spinning.is_empty(), "probe workers {spinning:?} spin");
    }
}

/// Cuts the loose object of `oid` in `repo_dir` to half its size, as a
/// crash before the file system wrote all of it leaves it.
fn truncate_loose(repo_dir: &Path, oid: git2::Oid) {
    let object = loose_object(repo_dir, oid);
    let bytes = std::fs::read(&object).unwrap();
    std::fs::remove_file(&object).unwrap();
    std::fs::write(&object, &bytes[..bytes.len() / 2]).unwrap();
}

/// A truncated loose object of a *subtree* (issue 24, item 5): `git status`
/// says clean, but libgit2's status scan spun forever inflating it, and the
/// check of the last round covered only HEAD's commit and root tree. Every
/// loose tree reachable from HEAD is now inflated first: the read says
/// which tree is damaged, the scan never starts, and no worker spins.
#[test]
fn truncated_subtree_object_is_a_note_not_a_spinning_worker() {
    let (_tmp, repo_dir, _) = committed();
    write(&repo_dir, "sub/deep/b.txt", "b\n");
    let repo = Repository::open(&repo_dir).unwrap();
    let oid = commit_all(&repo, "second");
    let root = repo.find_commit(oid).unwrap().tree().unwrap();
    let sub = root.get_name("sub").unwrap().to_object(&repo).unwrap();
    let deep = sub.as_tree().unwrap().get_name("deep").unwrap().id();
    drop((sub, root));
    truncate_loose(&repo_dir, deep);
    let facts = timed_read(&repo_dir);
    let GitFacts::Repository(facts) = facts else {
        panic!("{facts:?}");
    };
    let StatusOutcome::Failed { detail } = &facts.status else {
        panic!("{:?}", facts.status);
    };
    assert!(
        detail.starts_with(&format!(
            "the tree object of sub/deep in HEAD, {deep} cannot be inflated"
        )),
        "{detail}"
    );
    assert!(
        matches!(&facts.head, HeadFacts::Branch { commit, .. } if commit.full == oid.to_string())
    );
    assert_no_worker_spins();
}

/// A truncated loose blob (issue 24, item 5): the status scan never
/// inflates a blob to compare files, but its search for staged renames
/// does, and spun forever on a cut-short one. Here `a.txt` is staged as
/// deleted and a similar file as added; the deleted side's loose blob is
/// cut short, and the read says so instead of starting the scan.
#[test]
fn truncated_blob_of_a_staged_rename_is_a_note_not_a_spinning_worker() {
    let (_tmp, repo_dir, _) = committed();
    let text = "line\n".repeat(200);
    write(&repo_dir, "a.txt", &text);
    let repo = Repository::open(&repo_dir).unwrap();
    let oid = commit_all(&repo, "second");
    let blob = repo
        .find_commit(oid)
        .unwrap()
        .tree()
        .unwrap()
        .get_name("a.txt")
        .unwrap()
        .id();
    truncate_loose(&repo_dir, blob);
    // A clean tree never reads the blob: the status is read as usual.
    let GitFacts::Repository(facts) = timed_read(&repo_dir) else {
        panic!("the repository was not read");
    };
    assert_eq!(facts.status, StatusOutcome::Done(Default::default()));
    std::fs::remove_file(repo_dir.join("a.txt")).unwrap();
    write(&repo_dir, "z.txt", &format!("{text}more\n"));
    let mut index = repo.index().unwrap();
    index.remove_path(Path::new("a.txt")).unwrap();
    index.add_path(Path::new("z.txt")).unwrap();
    index.write().unwrap();
    let GitFacts::Repository(facts) = timed_read(&repo_dir) else {
        panic!("the repository was not read");
    };
    let StatusOutcome::Failed { detail } = &facts.status else {
        panic!("{:?}", facts.status);
    };
    assert!(
        detail.starts_with(&format!(
            "the blob object {blob} of a.txt cannot be inflated"
        )),
        "{detail}"
    );
    assert_no_worker_spins();
}

/// A tree naming one folder under many names, nested (issue 24's "no
/// unbounded work"): eight levels of ten names each spell out 10^8 paths
/// from nine small trees, and comparing HEAD with the index walked them
/// all, for hours and gigabytes. The check counts the paths a tree spells
/// out before the scan starts and says it is too many; packed, as a clone
/// brings it, the same.
#[test]
fn a_tree_spelling_out_too_many_paths_is_not_scanned() {
    let (_tmp, repo_dir, first) = committed();
    let repo = Repository::open(&repo_dir).unwrap();
    let blob = repo.blob(b"x\n").unwrap();
    let mut tree = {
        let mut builder = repo.treebuilder(None).unwrap();
        builder.insert("x.txt", blob, 0o100644).unwrap();
        builder.write().unwrap()
    };
    for _ in 0..8 {
        let mut builder = repo.treebuilder(None).unwrap();
        for i in 0..10 {
            builder.insert(format!("d{i}"), tree, 0o040000).unwrap();
        }
        tree = builder.write().unwrap();
    }
    let sig = git2::Signature::new(
        "Planted Author",
        "planted@example.com",
        &git2::Time::new(0, 0),
    )
    .unwrap();
    let parent = repo.find_commit(first).unwrap();
    let bomb = repo
        .commit(
            Some("HEAD"),
            &sig,
            &sig,
            "bomb",
            &repo.find_tree(tree).unwrap(),
            &[&parent],
        )
        .unwrap();
    let expected = StatusOutcome::Failed {
        detail: "HEAD's tree spells out more than 2000000 paths, more than a status scan is \
                 started for"
            .to_owned(),
    };
    let GitFacts::Repository(facts) = timed_read(&repo_dir) else {
        panic!("the repository was not read");
    };
    assert_eq!(facts.status, expected);
    assert!(
        matches!(&facts.head, HeadFacts::Branch { commit, .. } if commit.full == bomb.to_string())
    );
    // Packed, with no loose object left, as a clone brings it.
    let objects = repo_dir.join(".git/objects");
    let mut pack = repo.packbuilder().unwrap();
    // Object by object: `insert_commit` would walk every path.
    let mut ids = Vec::new();
    repo.odb()
        .unwrap()
        .foreach(|oid| {
            ids.push(*oid);
            true
        })
        .unwrap();
    for oid in ids {
        pack.insert_object(oid, None).unwrap();
    }
    pack.write(&objects.join("pack"), 0o644).unwrap();
    drop(pack);
    for fanout in std::fs::read_dir(&objects).unwrap().flatten() {
        if fanout.file_name().len() == 2 {
            std::fs::remove_dir_all(fanout.path()).unwrap();
        }
    }
    let GitFacts::Repository(facts) = timed_read(&repo_dir) else {
        panic!("the packed repository was not read");
    };
    assert_eq!(facts.status, expected);
    assert_no_worker_spins();
}

/// A submodule as `git submodule add` lays it out, checked out at `sub`
/// and staged in `main`'s index; returns its commit.
fn add_submodule(main: &Path, files: &[(&str, &str)]) -> git2::Oid {
    let sub = main.join("sub");
    let module = main.join(".git/modules/sub");
    std::fs::create_dir_all(&sub).unwrap();
    let cloned = Repository::init_opts(
        &module,
        RepositoryInitOptions::new().bare(true).initial_head("main"),
    )
    .unwrap();
    let config = &mut cloned.config().unwrap();
    config.set_bool("core.bare", false).unwrap();
    config.set_str("core.worktree", "../../../sub").unwrap();
    write(&sub, ".git", "gitdir: ../.git/modules/sub\n");
    let sub_repo = Repository::open(&sub).unwrap();
    for (name, text) in files {
        write(&sub, name, text);
    }
    let oid = commit_all(&sub_repo, "sub");
    let repo = Repository::open(main).unwrap();
    common::stage_gitlink(&repo, "sub", oid);
    oid
}

/// The status scan opens every checked-out submodule and compares its
/// HEAD, index and working tree, so a submodule's huge sparse index grew
/// the process by its size and a truncated tree in it spun the worker. Each
/// submodule now gets the same checks as the repository itself.
#[test]
fn a_damaged_submodule_is_a_note_not_a_read() {
    let (_tmp, main, _) = committed();
    add_submodule(&main, &[("s.txt", "s\n")]);
    let GitFacts::Repository(facts) = timed_read(&main) else {
        panic!("the repository was not read");
    };
    assert!(
        matches!(&facts.status, StatusOutcome::Done(status) if status.total.added == 1),
        "{:?}",
        facts.status
    );
    let index = main.join(".git/modules/sub/index");
    std::fs::File::create(&index)
        .unwrap()
        .set_len(4 << 30)
        .unwrap();
    let GitFacts::Repository(facts) = timed_read(&main) else {
        panic!("the repository was not read");
    };
    assert_eq!(
        facts.status,
        StatusOutcome::Failed {
            detail: "in the submodule sub: ../.git/modules/sub/index is 4294967296 bytes, \
                     more than the 128 MiB git is let read of it; the repository was not opened"
                .to_owned()
        }
    );
    assert!(peak_memory() < 200 << 20);
    assert_no_worker_spins();
}

/// A truncated loose tree in a submodule is found as in the repository.
#[test]
fn a_truncated_tree_in_a_submodule_is_a_note_not_a_spinning_worker() {
    let (_tmp, main, _) = committed();
    let sub_oid = add_submodule(&main, &[("d/s.txt", "s\n")]);
    let module = Repository::open(main.join("sub")).unwrap();
    let tree = module
        .find_commit(sub_oid)
        .unwrap()
        .tree()
        .unwrap()
        .get_name("d")
        .unwrap()
        .id();
    let hex = tree.to_string();
    let object = main
        .join(".git/modules/sub/objects")
        .join(&hex[..2])
        .join(&hex[2..]);
    let bytes = std::fs::read(&object).unwrap();
    std::fs::remove_file(&object).unwrap();
    std::fs::write(&object, &bytes[..bytes.len() / 2]).unwrap();
    let GitFacts::Repository(facts) = timed_read(&main) else {
        panic!("the repository was not read");
    };
    let StatusOutcome::Failed { detail } = &facts.status else {
        panic!("{:?}", facts.status);
    };
    assert!(
        detail.starts_with(&format!(
            "in the submodule sub: the tree object of d in HEAD, {tree} cannot be inflated"
        )),
        "{detail}"
    );
    assert_no_worker_spins();
}
