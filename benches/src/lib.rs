//! Shared fixtures of the Bcode benchmarks: the synthetic skill corpora (the
//! Pi peer's `gen_corpus.py`, or a small built-in generator when python3 or
//! the script is missing), their source roots, and a summary of a build.
//!
//! Corpora live under the build folder, never in the sources:
//! `$BCODE_BENCH_CORPORA`, else `<target>/bench-corpora` (see
//! [`target_dir`]), and are reused between runs: generating the
//! 10,000-skill corpus takes seconds and writes 130 MB.

pub mod render;
pub mod route_eval;
pub mod sessions;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use bcode_skill::SourceRoot;
use bcode_skill_models::{SkillSource, SourceKind};

/// The Pi peer's corpus generator: `$BCODE_BENCH_GEN_CORPUS`, else
/// `<workspace>/../shared/peers/pi/gen_corpus.py` (the project's shared
/// folder beside the clone; see the workspace README).
pub fn gen_corpus_script() -> PathBuf {
    std::env::var_os("BCODE_BENCH_GEN_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/peers/pi/gen_corpus.py"),
        PathBuf::from,
    )
}

/// The seed every corpus is generated with, so both loaders see the same bytes.
pub const SEED: u64 = 1;

/// How far into the past corpus files are moved. The summary cache re-reads
/// files modified within 2 s of its last check (the racy-mtime guard), so an
/// unchanged rebuild is only measured fairly on files older than that.
const AGE: Duration = Duration::from_secs(3600);

/// Which generator produced a corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generator {
    /// `gen_corpus.py --n N --seed 1`: the same tree the Pi peer is run on.
    GenCorpus,
    /// The built-in fallback: plain, valid skills only, not comparable with Pi.
    BuiltIn,
    /// `scripts/gen_registry.py --n N --seed 1`: the shape of a public registry.
    Registry,
}

impl Generator {
    pub fn describe(self) -> &'static str {
        match self {
            Generator::GenCorpus => "gen_corpus.py (seed 1, same tree as the Pi peer)",
            Generator::BuiltIn => {
                "built-in Rust generator (python3 or gen_corpus.py unavailable; NOT comparable with Pi)"
            }
            Generator::Registry => "gen_registry.py (seed 1, shaped like a public registry)",
        }
    }
}

/// A generated corpus ready to be discovered.
#[derive(Clone, Debug)]
pub struct Corpus {
    pub n: usize,
    pub dir: PathBuf,
    pub generator: Generator,
}

impl Corpus {
    /// `<dir>/primary` then `<dir>/secondary`, as configured roots (the order
    /// Pi is given them in).
    pub fn roots(&self) -> Vec<SourceRoot> {
        roots_for(&[self.dir.join("primary"), self.dir.join("secondary")])
    }
}

/// Configured roots (`SourceKind::Config`, `config:<folder name>`) for
/// `paths`, highest precedence first.
pub fn roots_for(paths: &[PathBuf]) -> Vec<SourceRoot> {
    paths
        .iter()
        .enumerate()
        .map(|(ordinal, path)| {
            let name = path
                .file_name()
                .map_or_else(|| ordinal.to_string(), |n| n.to_string_lossy().into_owned());
            SourceRoot {
                source: SkillSource {
                    kind: SourceKind::Config,
                    label: format!("config:{name}"),
                    ordinal,
                    root: None,
                    provider: None,
                },
                path: path.clone(),
                repository: None,
                owner_check: None,
            }
        })
        .collect()
}

/// The directory holding every corpus: `$BCODE_BENCH_CORPORA`, else
/// `<target>/bench-corpora`, where the scripts in `benches/scripts` put
/// them too.
pub fn corpora_dir() -> PathBuf {
    std::env::var_os("BCODE_BENCH_CORPORA")
        .map_or_else(|| target_dir().join("bench-corpora"), PathBuf::from)
}

/// The build folder: `$CARGO_TARGET_DIR` (a relative one taken from the
/// workspace root, as the documented commands run there); else the one
/// this binary was built into (the nearest folder above it holding cargo's
/// `CACHEDIR.TAG`), so `target-bench/release/sessions_scale` run by hand
/// finds the corpora that `cargo bench` made; else `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().unwrap_or(manifest);
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|dir| !dir.is_empty()) {
        return workspace.join(dir);
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.ancestors()
                .skip(1)
                .find(|folder| folder.join("CACHEDIR.TAG").is_file())
                .map(Path::to_path_buf)
        })
        .unwrap_or_else(|| workspace.join("target"))
}

/// The corpus of `n` skills: reused when complete, else generated with
/// `gen_corpus.py` or, failing that, the built-in generator. Its files are
/// then dated an hour back (see `AGE`).
pub fn corpus(n: usize) -> io::Result<Corpus> {
    let base = corpora_dir();
    fs::create_dir_all(&base)?;
    let dir = base.join(format!("n{n}"));
    // gen_corpus.py writes MANIFEST.json last, so its presence means complete.
    let corpus = if dir.join("MANIFEST.json").is_file() || run_gen_corpus(n, &dir) {
        Corpus {
            n,
            dir,
            generator: Generator::GenCorpus,
        }
    } else {
        let dir = base.join(format!("builtin-n{n}"));
        if !dir.join(BUILTIN_DONE).is_file() {
            builtin_corpus(n, &dir)?;
        }
        Corpus {
            n,
            dir,
            generator: Generator::BuiltIn,
        }
    };
    age_files(&corpus.dir)?;
    Ok(corpus)
}

fn run_gen_corpus(n: usize, out: &Path) -> bool {
    let script = gen_corpus_script();
    if !script.is_file() {
        return false;
    }
    let status = Command::new("python3")
        .arg(&script)
        .args(["--n", &n.to_string(), "--seed", &SEED.to_string(), "--out"])
        .arg(out)
        .arg("--force")
        .stdout(std::process::Stdio::null())
        .status();
    matches!(status, Ok(s) if s.success()) && out.join("MANIFEST.json").is_file()
}

/// Moves the modification time of every regular file under `dir` that is
/// younger than `AGE` an hour back, then waits out the racy window. Symlinks are skipped (their targets
/// are files of the same tree).
pub fn age_files(dir: &Path) -> io::Result<()> {
    let past = SystemTime::now() - AGE;
    let mut touched = false;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in fs::read_dir(&current)? {
            let entry = entry?;
            let meta = entry.path().symlink_metadata()?;
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() && meta.modified().is_ok_and(|m| m > past) {
                fs::File::options()
                    .write(true)
                    .open(entry.path())?
                    .set_modified(past)?;
                touched = true;
            }
        }
    }
    // Setting an mtime back makes the ctime now, and discovery trusts no
    // stamp changed within its two-second racy window: wait it out once.
    if touched {
        std::thread::sleep(std::time::Duration::from_millis(2100));
    }
    Ok(())
}

const BUILTIN_DONE: &str = "BUILTIN_COMPLETE";

/// A deterministic xorshift generator: enough to vary sizes and words.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: [&str; 24] = [
    "the", "file", "project", "skill", "config", "render", "check", "table", "chart", "schema",
    "value", "output", "input", "error", "release", "review", "build", "test", "query", "cache",
    "index", "stream", "always", "first",
];

/// `n` plain skills in `primary/` (every 50th also in `secondary/`, losing to
/// the primary one), descriptions of 80–300 chars and bodies of 2–20 KiB,
/// like the normal entries of `gen_corpus.py`.
fn builtin_corpus(n: usize, dir: &Path) -> io::Result<()> {
    if dir.exists() {
        fs::remove_dir_all(dir)?;
    }
    fs::create_dir_all(dir.join("secondary"))?;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ SEED);
    let sentence = |rng: &mut Rng, words: usize| {
        let mut s = String::new();
        for i in 0..words {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(WORDS[rng.below(WORDS.len())]);
        }
        s.push('.');
        s
    };
    for i in 0..n {
        let name = format!("builtin-skill-{i:05}");
        let mut description = format!("Handles {name} tasks. Use when");
        let target = 80 + rng.below(221);
        while description.len() < target {
            description.push(' ');
            description.push_str(&sentence(&mut rng, 6));
        }
        description.truncate(300);
        let mut text =
            format!("---\nname: {name}\ndescription: \"{description}\"\n---\n\n# {name}\n\n");
        let body = 2048 + rng.below(18 * 1024);
        while text.len() < body {
            let _ = writeln!(text, "{}\n", sentence(&mut rng, 14));
        }
        let skill_dir = dir.join("primary").join(&name);
        fs::create_dir_all(&skill_dir)?;
        fs::write(skill_dir.join("SKILL.md"), &text)?;
        if i % 50 == 0 {
            let copy = dir.join("secondary").join(&name);
            fs::create_dir_all(&copy)?;
            fs::write(copy.join("SKILL.md"), &text)?;
        }
    }
    fs::write(dir.join(BUILTIN_DONE), "")
}

/// Counts that make two loaders' results comparable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildSummary {
    pub skills: usize,
    pub model_visible: usize,
    pub diagnostics: usize,
    pub by_severity: BTreeMap<String, usize>,
    pub by_code: BTreeMap<String, usize>,
}

impl BuildSummary {
    pub fn of(registry: &bcode_skill::SkillRegistry) -> Self {
        let mut summary = BuildSummary {
            skills: registry.len(),
            model_visible: registry.skills().filter(|s| s.model_visible()).count(),
            diagnostics: registry.diagnostics().len(),
            ..BuildSummary::default()
        };
        for d in registry.diagnostics() {
            *summary
                .by_severity
                .entry(d.severity.to_string())
                .or_default() += 1;
            *summary
                .by_code
                .entry(d.code.as_str().to_owned())
                .or_default() += 1;
        }
        summary
    }
}

/// `{"a":1,"b":2}` for a map of counts (keys are plain identifiers).
pub fn json_counts(map: &BTreeMap<String, usize>) -> String {
    let body: Vec<String> = map.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", body.join(","))
}

/// The value of a `--rounds N` flag: a positive number, or `None`.
pub fn rounds_value(value: Option<String>) -> Option<usize> {
    value.and_then(|n| n.parse().ok()).filter(|&n| n > 0)
}

/// The median of `samples` (sorted in place); 0 when empty.
pub fn median(samples: &mut [f64]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len().is_multiple_of(2) {
        (samples[mid - 1] + samples[mid]) / 2.0
    } else {
        samples[mid]
    }
}

/// Peak resident set size of this process in KiB (`VmHWM`), where the
/// platform reports it.
pub fn peak_rss_kib() -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

// ---------------------------------------------------------------------------
// The full-render fixture: a repository with skills, invariants, AGENTS.md
// and a large git working tree with a non-empty status.
// ---------------------------------------------------------------------------

/// Bumped whenever the layout below changes, so a stale cache is not reused.
const RENDER_REPO_VERSION: u32 = 2;

/// Written next to the repository once it is complete.
const RENDER_REPO_DONE: &str = "COMPLETE";

/// A repository prepared for whole-render benchmarks.
#[derive(Clone, Debug)]
pub struct RenderRepo {
    /// The working tree (`<cache>/repo`).
    pub root: PathBuf,
    /// An empty folder to use as `HOME`, so no user config or user skills
    /// leak into the render.
    pub home: PathBuf,
    /// The skill corpus; renders take its `primary` root as a configured
    /// root (`skills.sources.paths`).
    pub skills: Corpus,
    /// Tracked files in the commit.
    pub tracked_files: usize,
    /// Lines of `git status --porcelain` (modified, deleted, untracked).
    pub status_lines: usize,
}

/// The repository of `files` tracked files and the `skills`-skill corpus,
/// reused from `<corpora>/render-v1-f<files>-s<skills>` when complete.
///
/// Layout: `src/pNN/mNN/fNNN.rs` (20 × 10 × `files / 200` files of 0.2–1 KiB),
/// `AGENTS.md` and ten invariants in `.bcode/invariants/` (the corpus's
/// `primary` root is given as a configured root: a repository's own skill
/// folder may not link out of it), all committed with file mtimes an
/// hour back (so neither git nor libgit2 sees racily clean entries). Then
/// every 40th file gets a line appended (modified, size changed), every
/// 500th is deleted, 100 new files and 10 new folders are left untracked.
pub fn render_repo(files: usize, skills: usize) -> io::Result<RenderRepo> {
    let corpus = corpus(skills)?;
    let base = corpora_dir().join(format!("render-v{RENDER_REPO_VERSION}-f{files}-s{skills}"));
    let root = base.join("repo");
    let home = base.join("home");
    if !base.join(RENDER_REPO_DONE).is_file() {
        if base.exists() {
            fs::remove_dir_all(&base)?;
        }
        fs::create_dir_all(&home)?;
        build_render_repo(&root, files)?;
        fs::write(base.join(RENDER_REPO_DONE), "")?;
    }
    let status = git(&root, &["status", "--porcelain"])?;
    let tracked = git(&root, &["ls-files"])?;
    Ok(RenderRepo {
        root,
        home,
        skills: corpus,
        tracked_files: tracked.lines().count(),
        status_lines: status.lines().count(),
    })
}

/// Runs `git` in `dir` with a fixed identity and no user or system config,
/// returning stdout; a failing command is an error.
pub fn git(dir: &Path, args: &[&str]) -> io::Result<String> {
    let output = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
            // No gc left running in the background after a large commit.
            "-c",
            "gc.auto=0",
        ])
        .args(args)
        .output()?;
    if !output.status.success() {
        return Err(io::Error::other(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn build_render_repo(root: &Path, files: usize) -> io::Result<()> {
    fs::create_dir_all(root.join(".bcode/invariants"))?;
    let mut rng = Rng(0xD1B5_4A32_D192_ED03 ^ SEED);
    let per_module = files.div_ceil(200).max(1);
    let mut paths = Vec::with_capacity(files);
    'outer: for p in 0..20 {
        for m in 0..10 {
            let dir = root.join(format!("src/p{p:02}/m{m:02}"));
            fs::create_dir_all(&dir)?;
            for f in 0..per_module {
                if paths.len() == files {
                    break 'outer;
                }
                let path = dir.join(format!("f{f:03}.rs"));
                let mut text = format!("//! File {p}/{m}/{f}.\n\n");
                let size = 200 + rng.below(800);
                while text.len() < size {
                    let _ = writeln!(text, "// {}", WORDS[rng.below(WORDS.len())].repeat(4));
                }
                fs::write(&path, text)?;
                paths.push(path);
            }
        }
    }
    fs::write(root.join("AGENTS.md"), AGENTS_MD)?;
    for i in 0..10 {
        fs::write(
            root.join(format!(".bcode/invariants/{i:02}-rule-{i}.md")),
            invariant_text(i),
        )?;
    }
    age_files(root)?;
    git(root, &["init", "-q"])?;
    git(root, &["add", "-A"])?;
    git(root, &["commit", "-q", "-m", "bench tree"])?;

    for (i, path) in paths.iter().enumerate() {
        if i % 500 == 7 {
            fs::remove_file(path)?;
        } else if i % 40 == 0 {
            let mut text = fs::read_to_string(path)?;
            text.push_str("// changed by the benchmark fixture\n");
            fs::write(path, text)?;
        }
    }
    for i in 0..100 {
        let dir = root.join(format!("src/p{:02}/m{:02}", i % 20, (i / 20) % 10));
        fs::write(dir.join(format!("new_{i:03}.rs")), "//! Untracked.\n")?;
    }
    for i in 0..10 {
        let dir = root.join(format!("src/p{i:02}/scratch"));
        fs::create_dir_all(&dir)?;
        for j in 0..5 {
            fs::write(dir.join(format!("s{j}.txt")), "scratch\n")?;
        }
    }
    // One status run lets git refresh the index's stat data, so every later
    // run (ours through libgit2, and `git status`) starts from the same index.
    git(root, &["status", "--porcelain"])?;
    Ok(())
}

// ---------------------------------------------------------------------------
// The nested-render fixture (issue 25 item 7): a repository with a
// registry-shaped `.agents/skills` at its root, rendered from the root and
// from a folder three levels down.
// ---------------------------------------------------------------------------

/// The working folder of the nested renders, relative to the root.
pub const NESTED_WORK: &str = "a/b/c";

/// The skills of the folders between the root and [`NESTED_WORK`] (folder,
/// source kind folder in it, skill name), so every kind of working-folder
/// root is walked (and cached) by a nested render.
pub const NESTED_SKILLS: [(&str, &str, &str); 4] = [
    ("a", ".bcode/skills", "pkg-a-helper"),
    ("a/b", "skills", "pkg-b-helper"),
    ("a/b/c", ".agents/skills", "pkg-c-helper"),
    ("a/b/c", ".claude/skills", "pkg-c-compat"),
];

/// The registry-shaped corpus generator beside the scripts.
pub fn gen_registry_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen_registry.py")
}

/// `gen_registry.py --n n --seed 1 --out out --root root --force`; an error
/// when python3 or the script fails or leaves no `MANIFEST.json`.
fn run_gen_registry(n: usize, out: &Path, root: &str) -> io::Result<()> {
    let status = Command::new("python3")
        .arg(gen_registry_script())
        .args(["--n", &n.to_string(), "--seed", &SEED.to_string()])
        .arg("--out")
        .arg(out)
        .args(["--root", root, "--force"])
        .stdout(std::process::Stdio::null())
        .status()?;
    if !status.success() || !out.join("MANIFEST.json").is_file() {
        return Err(io::Error::other(format!(
            "gen_registry.py failed ({status}) for {}",
            out.display()
        )));
    }
    Ok(())
}

/// The registry-shaped corpus of `n` skills (`gen_registry.py --n n --seed
/// 1`, one flat root `primary`), in `<corpora>/registry<n>` where
/// `scripts/scale.py` puts it too: reused when complete, else generated.
/// There is no built-in fallback (the shape is the point): without python3
/// this is an error, and the benches that use it say so and skip.
pub fn registry_corpus(n: usize) -> io::Result<Corpus> {
    let dir = corpora_dir().join(format!("registry{n}"));
    if !dir.join("MANIFEST.json").is_file() {
        run_gen_registry(n, &dir, "primary")?;
    }
    age_files(&dir)?;
    Ok(Corpus {
        n,
        dir,
        generator: Generator::Registry,
    })
}

/// A repository prepared for the nested renders.
#[derive(Clone, Debug)]
pub struct NestedRepo {
    /// The repository root.
    pub root: PathBuf,
    /// `<root>/a/b/c`.
    pub work: PathBuf,
    /// An empty folder to use as `HOME` (its state folder holds the disk cache).
    pub home: PathBuf,
    /// Which generator wrote the root's skills.
    pub generator: &'static str,
}

/// The repository of `scripts/scale.py --nested`, reused from
/// `<corpora>/nested-registry<skills>` when complete (the same layout as
/// that script builds, so either may make it): `gen_registry.py --n skills
/// --seed 1` as the root's `.agents/skills`, one skill in each folder of
/// [`NESTED_SKILLS`], `AGENTS.md` at the root and a source file in each of
/// `a`, `a/b`, `a/b/c`, committed with file times an hour back. Without
/// python3 the root's skills come from the built-in generator, in
/// `<corpora>/nested-builtin<skills>`.
pub fn nested_repo(skills: usize) -> io::Result<NestedRepo> {
    let corpora = corpora_dir();
    let registry = corpora.join(format!("nested-registry{skills}"));
    let builtin = corpora.join(format!("nested-builtin{skills}"));
    let (base, generator) = if registry.join(RENDER_REPO_DONE).is_file() {
        (registry, "gen_registry.py (seed 1)")
    } else if builtin.join(RENDER_REPO_DONE).is_file() {
        (builtin, "built-in Rust generator (python3 unavailable)")
    } else {
        build_nested_repo(skills, &registry, &builtin)?
    };
    let root = base.join("repo");
    let home = base.join("home");
    fs::create_dir_all(&home)?;
    Ok(NestedRepo {
        work: root.join(NESTED_WORK),
        root,
        home,
        generator,
    })
}

fn build_nested_repo(
    skills: usize,
    registry: &Path,
    builtin: &Path,
) -> io::Result<(PathBuf, &'static str)> {
    for base in [registry, builtin] {
        if base.exists() {
            fs::remove_dir_all(base)?;
        }
    }
    let generated = run_gen_registry(skills, &registry.join("repo"), ".agents/skills").is_ok();
    let (base, generator) = if generated {
        let repo = registry.join("repo");
        fs::rename(repo.join("MANIFEST.json"), registry.join("MANIFEST.json"))?;
        (registry.to_path_buf(), "gen_registry.py (seed 1)")
    } else {
        builtin_corpus(skills, &builtin.join("gen"))?;
        fs::create_dir_all(builtin.join("repo/.agents"))?;
        fs::rename(
            builtin.join("gen/primary"),
            builtin.join("repo/.agents/skills"),
        )?;
        fs::remove_dir_all(builtin.join("gen"))?;
        (
            builtin.to_path_buf(),
            "built-in Rust generator (python3 unavailable)",
        )
    };
    let root = base.join("repo");
    fs::write(
        root.join("AGENTS.md"),
        "# Agent instructions\n\nBuild with `make`, test with `make test`.\n",
    )?;
    for (package, kind, name) in NESTED_SKILLS {
        let skill = root.join(package).join(kind).join(name);
        fs::create_dir_all(&skill)?;
        fs::write(
            skill.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Helps with the package under {package}. \
                 Use when working there.\n---\n\n# Package helper\n\nRun the package's tests first.\n"
            ),
        )?;
    }
    for (i, folder) in ["a", "a/b", "a/b/c"].iter().enumerate() {
        let src = root.join(folder).join("src");
        fs::create_dir_all(&src)?;
        fs::write(
            src.join("main.rs"),
            format!("//! Package {i}.\nfn main() {{}}\n"),
        )?;
    }
    age_files(&root)?;
    git(&root, &["init", "-q"])?;
    git(&root, &["add", "-A"])?;
    git(&root, &["commit", "-q", "-m", "nested fixture"])?;
    // Packed, as a clone is: libgit2 reads the 20,000 loose trees and blobs
    // of a fresh commit one file each (1.5 s a render, measured).
    git(&root, &["repack", "-adq"])?;
    git(&root, &["status", "--porcelain"])?;
    fs::write(base.join(RENDER_REPO_DONE), "")?;
    Ok((base, generator))
}

/// Repository instructions of a realistic size (~1.5 KiB).
pub const AGENTS_MD: &str = "# Agent instructions\n\n\
This repository is a benchmark fixture. Build with `cargo build`, test with\n\
`cargo test --workspace`, and keep every change small and reviewed.\n\n\
## Conventions\n\n\
- Every module starts with a `//!` line saying what it is for.\n\
- The core takes data, not paths; I/O lives at the edge.\n\
- Parsing never fails; it reports typed diagnostics.\n\
- Use `BTreeMap` for anything that reaches the output, so bytes are stable.\n\
- Comments say why, in full sentences; names say what.\n\n\
## Testing\n\n\
Golden tests are data under `tests/cases/`; update snapshots with\n\
`cargo insta test --accept` and read the diff before committing.\n\
Timings belong in benchmarks, never in tests with a stopwatch.\n\n\
## Commits\n\n\
Commit only files you own, with a message that says why. Never commit a\n\
state that does not build.\n";

fn invariant_text(i: usize) -> String {
    let topic = WORDS[(i * 5) % WORDS.len()];
    let other = WORDS[(i * 7 + 3) % WORDS.len()];
    format!(
        "---\nid: rule-{i}\ntitle: Rule {i} about the {topic}\n\
         summary: The {topic} code keeps its {other} handling in one place and documents why.\n\
         keywords: [{topic}, {other}]\npaths: [\"src/p{i:02}/**\"]\n---\n\
         The {topic} modules under `src/p{i:02}/` route every {other} through one\n\
         function, so a reviewer can find and change the policy in a single place.\n\
         Tests cover the policy as data, and a change to it names the reason in the\n\
         commit message. Nothing outside this folder reaches into its internals.\n"
    )
}
