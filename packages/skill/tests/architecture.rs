//! Architecture invariants of ARCHITECTURE.md that can be checked by reading
//! the source: no import loops between the modules of a library crate and
//! no imports from a crate's root module (`lib.rs`) by the modules below it,
//! no library crate reading the process environment (only the CLI does),
//! and no filesystem access outside the edge modules named there.
//!
//! The sources are scanned as text with `std::fs`: a `crate::`/`super::`
//! path names a module (the longest known prefix); comments and the
//! `#[cfg(test)]` block at the end of a file are left out, because test
//! code is not part of the layering.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The library crates, by folder below the workspace root. The CLI is the
/// binary that may read the environment; `benches` and `tests` are
/// measurement and test harnesses, not libraries of the product.
const LIBRARY_CRATES: [&str; 10] = [
    "packages/text",
    "packages/fs",
    "packages/skill/models",
    "packages/config",
    "templates",
    "packages/skill",
    "packages/mcp",
    "pipeline",
    "sections",
    "prompt",
];

/// Import loops known when this test was written, in crates whose owners are
/// removing them; each is `crate folder`, then the modules of the loop in
/// the order this test reports them. Delete an entry when its loop is gone
/// (the test fails on an entry that no longer matches, so none is stale).
const KNOWN_LOOPS: &[(&str, &[&str])] = &[];

/// Modules of `bcode-skill` that may touch the filesystem (ARCHITECTURE.md,
/// "Architecture invariants"), each with the modules below it; every other
/// module takes data.
const SKILL_FS_EDGES: [&str; 12] = [
    "discover::cache::disk",
    "discover::cache::memory",
    "discover::discovery",
    "discover::freshness",
    "discover::load_pool",
    "discover::read",
    "discover::reload",
    "discover::snapshot",
    "discover::walk",
    // The relevance index's edge: it lists a skill's other files by name.
    "search::gather",
    // The relevance index in the state folder's disk cache, and the stamps
    // that vouch for its entries.
    "search::persist",
    "session::events",
];

/// Modules of `bcode-prompt-config` that may touch the filesystem: the
/// layers read the config files; the rest takes data. (`bcode-prompt-pipeline`
/// has none: it reads no file.)
const CONFIG_FS_EDGES: [&str; 1] = ["layers"];

/// Modules of `bcode-skill-mcp` that may touch the filesystem: a served
/// skill's entry (its folder listed, its files read below it) and the
/// digest cache and the client's cache of fetched files (both in the state
/// folder), the watch of the folders below served skills, and the PEM
/// file of roots a user's entry names (`ca_file`).
const MCP_FS_EDGES: [&str; 5] = ["entry", "digests", "client_cache", "follow", "client_tls"];

/// Modules of `bcode-prompt-sections` that may touch the filesystem: the
/// probes (the machine, git, the relevant-mode session sidecar) and the
/// gathering of the repository's instructions and invariants. The stages
/// (`stages::*`) never do: they are pure functions of the gathered inputs.
const SECTIONS_FS_EDGES: [&str; 12] = [
    "probe",
    "git::preflight",
    "git::overdue",
    "git::objects",
    "git::racy",
    "git::read",
    "git::status",
    "git::untracked",
    "git::watch",
    "relevant::sidecar",
    "instructions",
    "invariants",
];

/// Every crate folder of the workspace, the harnesses too (`fuzz` holds
/// the cargo-fuzz targets, `fuzz/checks` what `cargo test` replays;
/// `packages/test-support` the helpers the tests share).
const ALL_CRATES: [&str; 16] = [
    "packages/text",
    "packages/fs",
    "packages/skill/models",
    "packages/config",
    "packages/skill",
    "packages/mcp",
    "packages/test-support",
    "templates",
    "pipeline",
    "sections",
    "prompt",
    "cli",
    "benches",
    "tests",
    "fuzz",
    "fuzz/checks",
];

/// The checks over [`ALL_CRATES`] see every crate: it is the workspace's
/// members and the excluded cargo-fuzz crate, no more and no fewer.
#[test]
fn all_crates_are_the_workspace_members() {
    let manifest = fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let members = manifest
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap();
    let mut listed: BTreeSet<&str> = members
        .lines()
        .filter_map(|line| line.trim().strip_prefix('"'))
        .filter_map(|line| line.strip_suffix("\","))
        .collect();
    listed.insert("fuzz");
    assert_eq!(listed, ALL_CRATES.into_iter().collect::<BTreeSet<_>>());
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One source file of a crate: its module path (`""` for `lib.rs`,
/// `session::commands` for `src/session/commands.rs`) and its code.
struct Source {
    module: String,
    code: String,
}

fn sources(krate: &str) -> Vec<Source> {
    let src = workspace().join(krate).join("src");
    let mut files = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                // `src/bin` holds binaries, each its own crate.
                if path.file_name().is_some_and(|n| n != "bin") {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(&src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts == ["lib"] {
                parts.clear();
            } else if parts == ["main"] {
                return None;
            }
            Some(Source {
                module: parts.join("::"),
                code: code_of(&fs::read_to_string(&path).unwrap()),
            })
        })
        .collect()
}

/// The code of a file without comments and without its test module.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        let code = match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The path segments after each `crate::` or `super::` in `code`, grouped
/// imports (`crate::{a, b::c}`) expanded, with how many `super`s led there
/// (`None`: from the crate root).
fn paths(code: &str) -> Vec<(Option<usize>, Vec<String>)> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    for keyword in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(keyword) {
            let start = from + at;
            from = start + keyword.len();
            let before = start.checked_sub(1).map(|i| bytes[i]);
            if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$') {
                continue;
            }
            if before == Some(b':') {
                // The second `super` of `super::super::`, counted below.
                continue;
            }
            let mut supers = (keyword == "super::").then_some(1);
            let mut rest = &code[from..];
            while let Some(after) = rest.strip_prefix("super::") {
                supers = supers.map(|n| n + 1);
                rest = after;
            }
            for path in expand(rest) {
                found.push((supers, path));
            }
        }
    }
    found
}

/// `a::b::C`, or every path of a group `{a, b::{c, d}}`, as segments.
fn expand(rest: &str) -> Vec<Vec<String>> {
    let mut segments = Vec::new();
    let mut rest = rest;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut end = group.len();
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let inner = &group[..end];
            let mut out = Vec::new();
            let mut depth = 0;
            let mut piece = String::new();
            for c in inner.chars().chain([',']) {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        for tail in expand(piece.trim()) {
                            let mut path = segments.clone();
                            path.extend(tail);
                            out.push(path);
                        }
                        piece.clear();
                        continue;
                    }
                    _ => {}
                }
                piece.push(c);
            }
            return out;
        }
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len == 0 {
            break;
        }
        segments.push(rest[..len].to_owned());
        match rest[len..].strip_prefix("::") {
            Some(after) => rest = after,
            None => break,
        }
    }
    if segments.is_empty() || segments == ["self"] {
        Vec::new()
    } else {
        vec![segments]
    }
}

/// What one module imports: the modules it names, and whether it names an
/// item of the crate root.
fn imports(source: &Source, modules: &BTreeSet<String>) -> (BTreeSet<String>, Vec<String>) {
    let own: Vec<&str> = if source.module.is_empty() {
        Vec::new()
    } else {
        source.module.split("::").collect()
    };
    let mut targets = BTreeSet::new();
    let mut from_root = Vec::new();
    for (supers, path) in paths(&source.code) {
        let base = match supers {
            None => 0,
            Some(n) => match own.len().checked_sub(n) {
                Some(base) => base,
                None => continue,
            },
        };
        let mut full: Vec<&str> = own[..base].to_vec();
        full.extend(path.iter().map(String::as_str).filter(|s| *s != "self"));
        // The longest prefix that is a module is the module named.
        let module = (0..=full.len())
            .rev()
            .map(|n| full[..n].join("::"))
            .find(|m| m.is_empty() || modules.contains(m))
            .unwrap_or_default();
        if module.is_empty() {
            if !source.module.is_empty() && supers.is_none() {
                from_root.push(path.join("::"));
            }
        } else if module != source.module && !source.module.starts_with(&(module.clone() + "::")) {
            targets.insert(module);
        }
    }
    (targets, from_root)
}

/// Every import loop of a module graph, each reported once, starting at its
/// smallest module.
fn loops(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    for start in graph.keys() {
        // Depth-first search for paths back to `start` through modules
        // larger than it (so each loop is found from its smallest module).
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        while let Some((node, path)) = stack.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if next == start {
                    found.insert(path.clone());
                } else if next > start && !path.contains(next) && path.len() < 8 {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    found
}

#[test]
fn no_library_crate_has_an_import_loop_or_an_upward_import() {
    let mut problems = Vec::new();
    let mut known_seen = BTreeSet::new();
    for krate in LIBRARY_CRATES {
        let sources = sources(krate);
        let modules: BTreeSet<String> = sources.iter().map(|s| s.module.clone()).collect();
        let mut graph = BTreeMap::new();
        for source in &sources {
            let (targets, from_root) = imports(source, &modules);
            for item in from_root {
                problems.push(format!(
                    "{krate}: `{}` imports `crate::{item}` from the crate root (import it from the module that defines it)",
                    source.module
                ));
            }
            graph.insert(source.module.clone(), targets);
        }
        for cycle in loops(&graph) {
            let known = KNOWN_LOOPS.iter().position(|(k, m)| {
                *k == krate && m.iter().copied().eq(cycle.iter().map(String::as_str))
            });
            match known {
                Some(index) => {
                    known_seen.insert(index);
                }
                None => problems.push(format!("{krate}: import loop {}", cycle.join(" -> "))),
            }
        }
    }
    for (index, (krate, modules)) in KNOWN_LOOPS.iter().enumerate() {
        if !known_seen.contains(&index) {
            problems.push(format!(
                "{krate}: the known loop {} is gone: remove it from KNOWN_LOOPS",
                modules.join(" -> ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn only_the_cli_reads_the_process_environment() {
    let mut problems = Vec::new();
    for krate in LIBRARY_CRATES {
        for source in sources(krate) {
            for call in ["env::var(", "env::var_os(", "env::vars(", "env::vars_os("] {
                if source.code.contains(call) {
                    problems.push(format!(
                        "{krate}: `{}` calls `{call}..)`; take the value from the caller (the CLI injects a snapshot)",
                        source.module
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Issue 41 item 2: one notion of an unchanged file. Whether a recorded
/// stamp may be believed (the racy rule) and what a file's stamp is now
/// are `bcode_fs`'s (`freshness.rs`): no other crate applies the racy rule
/// itself or writes its own `stamp_of`.
#[test]
fn only_bcode_fs_judges_whether_a_file_changed() {
    let mut problems = Vec::new();
    for krate in ALL_CRATES
        .into_iter()
        .filter(|krate| *krate != "packages/fs")
    {
        if !workspace().join(krate).join("src").is_dir() {
            continue;
        }
        for source in sources(krate) {
            for call in [".is_racy(", "fn stamp_of("] {
                if source.code.contains(call) {
                    problems.push(format!(
                        "{krate}: `{}` calls `{call}..`; use `bcode_fs::vouches`, `recheck` or `stamp_of`",
                        source.module
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Whether `code` uses a filesystem API: `std::fs` (or `fs::` after it was
/// imported), `File`, a directory handle, or one of `bcode-fs`'s readers.
fn touches_filesystem(code: &str) -> Option<&'static str> {
    const APIS: [&str; 9] = [
        "fs::",
        "File::",
        "OpenOptions",
        "DirHandle",
        "for_each_entry",
        "read_bounded",
        "read_head",
        "open_regular",
        "canonicalize(",
    ];
    APIS.into_iter().find(|api| {
        code.match_indices(api).any(|(at, _)| {
            let (head, tail) = (&code[..at], &code[at + api.len()..]);
            if head.ends_with("bcode_") {
                // `bcode_fs::FileStamp` names a type, not a call.
                return ![
                    "FileStamp",
                    "FileInfo",
                    "FileKind",
                    "worker_threads",
                    "Ownership",
                ]
                .iter()
                .any(|t| tail.starts_with(t));
            }
            !head
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    })
}

#[test]
fn only_the_edge_modules_touch_the_filesystem() {
    let mut problems = Vec::new();
    for krate in ["packages/text", "packages/skill/models"] {
        for source in sources(krate) {
            if let Some(api) = touches_filesystem(&source.code) {
                problems.push(format!(
                    "{krate}: `{}` uses `{api}`: this crate does no I/O",
                    source.module
                ));
            }
        }
    }
    for source in sources("packages/skill") {
        let module = source.module.as_str();
        let is_edge = SKILL_FS_EDGES.iter().any(|edge| {
            module
                .strip_prefix(edge)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        });
        if let Some(api) = touches_filesystem(&source.code)
            && !is_edge
        {
            problems.push(format!(
                "packages/skill: `{}` uses `{api}`; only the edge modules in ARCHITECTURE.md touch the filesystem",
                source.module
            ));
        }
    }
    for (krate, edges, known) in [
        ("packages/config", &CONFIG_FS_EDGES[..], &[][..]),
        ("pipeline", &[][..], &[][..]),
        ("sections", &SECTIONS_FS_EDGES[..], &[][..]),
        ("packages/mcp", &MCP_FS_EDGES[..], &[][..]),
    ] {
        let mut known_seen = BTreeSet::new();
        for source in sources(krate) {
            let module = source.module.as_str();
            let Some(api) = touches_filesystem(&source.code) else {
                continue;
            };
            if known.contains(&module) {
                known_seen.insert(module.to_owned());
            } else if !edges.contains(&module) {
                problems.push(format!(
                    "{krate}: `{module}` uses `{api}`; only the edge modules in ARCHITECTURE.md touch the filesystem"
                ));
            }
        }
        for module in known {
            if !known_seen.contains(*module) {
                problems.push(format!(
                    "{krate}: `{module}` no longer touches the filesystem: remove it from the known list"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_scanner_sees_loops_and_groups() {
    let modules: BTreeSet<String> = ["a", "b", "b::c"].iter().map(|s| (*s).to_owned()).collect();
    let a = Source {
        module: "a".into(),
        code: code_of("use crate::{b::{c::X, Y}, Z};\n// use crate::nothing;\n"),
    };
    let (targets, from_root) = imports(&a, &modules);
    assert_eq!(targets, BTreeSet::from(["b".to_owned(), "b::c".to_owned()]));
    assert_eq!(from_root, ["Z"]);
    let c = Source {
        module: "b::c".into(),
        code: code_of(
            "use super::super::a::f;\nfn g() { super::h(); }\n#[cfg(test)]\nmod tests { use crate::a; }\n",
        ),
    };
    let (targets, _) = imports(&c, &modules);
    assert_eq!(targets, BTreeSet::from(["a".to_owned()]));
    let graph = BTreeMap::from([
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]);
    assert_eq!(
        loops(&graph),
        BTreeSet::from([vec!["a".to_owned(), "b".to_owned()]])
    );
    assert_eq!(
        touches_filesystem("let m = std::fs::metadata(p);"),
        Some("fs::")
    );
    assert_eq!(touches_filesystem("use bcode_fs::FileStamp;"), None);
    assert_eq!(
        touches_filesystem("bcode_fs::read_bounded(p, 1)"),
        Some("fs::")
    );
}

/// Every file or folder ARCHITECTURE.md names in backticks exists: a path
/// from the workspace root, a path inside a crate folder or its `src/`, or
/// (a bare `name.rs`) a module file of some crate. Names outside the
/// workspace (`../shared/...`), placeholders (`<repo>/...`), home and
/// absolute paths, and key paths are not files of this repository.
#[test]
fn every_file_architecture_md_names_exists() {
    let root = workspace();
    let text = fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let crates: Vec<PathBuf> = ALL_CRATES.iter().map(|krate| root.join(krate)).collect();
    let mut module_files = BTreeSet::new();
    for krate in &crates {
        let mut stack = vec![krate.join("src")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                if entry.file_type().unwrap().is_dir() {
                    stack.push(entry.path());
                } else {
                    module_files.insert(entry.file_name().to_string_lossy().into_owned());
                }
            }
        }
    }
    let looks_like_a_file = |name: &str| {
        let file_like = name.contains('/')
            || [".rs", ".md", ".toml", ".j2", ".json", ".py", ".sh"]
                .iter()
                .any(|ext| name.ends_with(ext));
        file_like
            && !name.starts_with("../")
            && !name.starts_with('/')
            && !name.starts_with('~')
            && !name.starts_with('$')
            && !name.starts_with("<")
            // The provider interface's id, and files of the user's
            // repository the code reads, not files of this one.
            && !["bcode.skill/v1", "BCODE.md", "AGENTS.md", "SKILL.md"].contains(&name)
            && !name.contains(['<', ' ', '=', '*', ':', '$'])
    };
    let mut missing = Vec::new();
    for (index, piece) in text.split('`').enumerate() {
        if index % 2 == 0 || !looks_like_a_file(piece) {
            continue;
        }
        let name = piece.trim_end_matches('/');
        let found = root.join(name).exists()
            || crates
                .iter()
                .any(|krate| krate.join(name).exists() || krate.join("src").join(name).exists())
            || (!name.contains('/') && module_files.contains(name));
        if !found {
            missing.push(piece.to_owned());
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names files that do not exist: {missing:?}"
    );
}

/// Crates that gather their integration tests into one binary turn cargo's
/// discovery off (`autotests = false`), so a new file in `tests/` would be
/// compiled by nothing and its tests would pass by never running. Each
/// `tests/*.rs` of such a crate is a `[[test]]` target's path or a module
/// (`mod name;`) of one.
#[test]
fn every_integration_test_file_of_a_gathering_crate_is_compiled() {
    let root = workspace();
    let mut gathering = 0;
    for krate in ALL_CRATES {
        let dir = root.join(krate);
        let Ok(manifest) = fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        if !manifest
            .lines()
            .any(|line| line.trim() == "autotests = false")
        {
            continue;
        }
        gathering += 1;
        let targets: Vec<String> = manifest
            .lines()
            .filter_map(|line| line.trim().strip_prefix("path = \"tests/"))
            .filter_map(|rest| rest.strip_suffix('"'))
            .map(str::to_owned)
            .collect();
        let mut compiled: BTreeSet<String> = targets.iter().cloned().collect();
        for target in &targets {
            let code = fs::read_to_string(dir.join("tests").join(target)).unwrap();
            for line in code.lines() {
                if let Some(module) = line
                    .trim()
                    .strip_prefix("mod ")
                    .and_then(|m| m.strip_suffix(';'))
                {
                    compiled.insert(format!("{module}.rs"));
                }
            }
        }
        let mut left_out = Vec::new();
        for entry in fs::read_dir(dir.join("tests")).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".rs") && !compiled.contains(&name) {
                left_out.push(format!("{krate}/tests/{name}"));
            }
        }
        assert_eq!(
            left_out,
            Vec::<String>::new(),
            "files no test target compiles"
        );
    }
    assert_eq!(
        gathering, 7,
        "crates that gather their tests (update when one is added)"
    );
}

/// The crates a manifest names in its normal dependency tables
/// (`[dependencies]` and `[target.'..'.dependencies]`, not the dev or build
/// ones): the key of each `name = ..` or `name.workspace = ..` line.
fn normal_dependencies(manifest: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut normal = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            normal = line == "[dependencies]"
                || (line.starts_with("[target.") && line.ends_with("'.dependencies]"));
            continue;
        }
        if !normal || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let key = line.split(['=', '.']).next().unwrap_or_default().trim();
        names.insert(key.to_owned());
    }
    names
}

/// The workspace's own crates: those `[workspace.dependencies]` finds by
/// `path`.
fn workspace_crates() -> BTreeSet<String> {
    let manifest = fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    manifest
        .lines()
        .filter(|line| line.contains("path = "))
        .filter_map(|line| line.split('=').next())
        .map(|name| name.trim().to_owned())
        .collect()
}

#[test]
fn the_manifest_scan_tells_normal_dependencies_apart() {
    let manifest = "[package]\nname = \"x\"\n\n[dependencies]\n# why\na.workspace = true\nb = { version = \"1\" }\n\n[target.'cfg(unix)'.dependencies]\nc = \"1\"\n\n[build-dependencies]\nd = \"1\"\n\n[dev-dependencies]\ne.workspace = true\n\n[target.'cfg(unix)'.dev-dependencies]\nf = \"1\"\n";
    let expected: BTreeSet<String> = ["a", "b", "c"].map(str::to_owned).into();
    assert_eq!(normal_dependencies(manifest), expected);
}

/// The CLI is wired through the façade: its one workspace dependency is
/// `bcode-prompt`, whose `Workspace` every command starts from and which
/// re-exports by name what the CLI uses (its tests may use more).
#[test]
fn the_cli_depends_on_the_facade_crate_alone() {
    assert_eq!(workspace_dependencies("cli"), ["bcode-prompt"]);
}

/// The workspace crates that the crate in folder `krate` depends on (its
/// normal dependencies), in name order.
fn workspace_dependencies(krate: &str) -> Vec<String> {
    let workspace_crates = workspace_crates();
    assert!(
        workspace_crates.contains("bcode-skill"),
        "{workspace_crates:?}"
    );
    let manifest = fs::read_to_string(workspace().join(krate).join("Cargo.toml")).unwrap();
    normal_dependencies(&manifest)
        .intersection(&workspace_crates)
        .cloned()
        .collect()
}

/// The configuration sits below the skills and the prompt pipeline: its
/// crate takes nothing of theirs (`bcode-skill` takes `[skills]` from it),
/// so a config type never pulls in discovery, stages or templates.
#[test]
fn the_config_crate_depends_only_on_leaf_crates() {
    assert_eq!(
        workspace_dependencies("packages/config"),
        ["bcode-fs", "bcode-skill-models", "bcode-text"]
    );
}

/// The room (top-level module) a module belongs to: `discover` for
/// `discover::cache::disk`, `""` for the crate root.
fn room(module: &str) -> String {
    module.split("::").next().unwrap_or_default().to_owned()
}

/// Loops between the rooms of `bcode-skill` (its top-level modules) known
/// when this test was written, as the test reports them: issue 41 item 3
/// (the parser importing session and context code, `discover` and
/// `provider` each needing the other) is removing them. Delete an entry
/// when its loop is gone; a new loop fails.
const KNOWN_ROOM_LOOPS: [&str; 11] = [
    "context -> discover -> parse",
    "context -> discover -> parse -> session",
    "context -> discover -> provider -> parse",
    "context -> discover -> provider -> parse -> session",
    "context -> parse",
    "context -> parse -> session",
    "discover -> parse -> session",
    "discover -> parse -> session -> search",
    "discover -> provider",
    "discover -> provider -> parse -> session",
    "discover -> provider -> parse -> session -> search",
];

/// Rooms of `bcode-skill` (ARCHITECTURE.md's folders) import each other one
/// way: a room that needs another's records and is needed by it belongs in
/// it (the caches, which `discover` fills and reads, live inside it).
#[test]
fn no_room_of_the_skill_crate_imports_one_that_imports_it() {
    let sources = sources("packages/skill");
    let modules: BTreeSet<String> = sources.iter().map(|s| s.module.clone()).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for source in &sources {
        let from = room(&source.module);
        let (targets, _) = imports(source, &modules);
        let rooms = graph.entry(from.clone()).or_default();
        rooms.extend(targets.iter().map(|t| room(t)).filter(|r| *r != from));
    }
    let found: Vec<String> = loops(&graph)
        .into_iter()
        .map(|cycle| cycle.join(" -> "))
        .collect();
    assert_eq!(found, KNOWN_ROOM_LOOPS);
}
