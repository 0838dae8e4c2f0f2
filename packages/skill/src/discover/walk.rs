//! The edge of discovery: walking one source root. Bounded (depth and entry
//! budgets), never leaves the root except to load a skill folder a symlink
//! points at, never follows a directory twice. It opens directories, and
//! reads at most the first 8 bytes of a `README.md` (through `read.rs`,
//! non-blocking and regular files only) to tell a skill from documentation;
//! instruction files themselves are read by the loaders.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use bcode_skill_models::{Diagnostic, DiagnosticCode, SkillLayout, SkillSource, SourceKind};

use crate::discover::candidate::Candidate;
use crate::discover::snapshot::RootSnapshot;
use crate::discover::sources::SourceRoot;
use crate::parse::skill::InstructionKind;

/// Limits and switches of a walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkOptions {
    /// `skills.follow_symlinks`: whether symlinked files and folders inside
    /// the root are followed (never out of it); skipped ones get a
    /// `symlink_skipped` diagnostic.
    pub follow_symlinks: bool,
    /// Folder levels below the root searched for skills.
    pub max_depth: usize,
    /// Directory entries looked at per root before the walk stops.
    pub max_entries: usize,
    /// Files and folders changed this close to a build are too recent for
    /// their stamps alone to vouch for them (see `snapshot.rs`); tests that
    /// build right after writing set it to zero.
    pub racy_window: std::time::Duration,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            follow_symlinks: true,
            max_depth: 12,
            max_entries: 200_000,
            racy_window: bcode_fs::RACY_WINDOW,
        }
    }
}

use bcode_fs::{
    Canonicalizer, Confinement, Escape, EscapeReason, FileInfo, FileKind, FileStamp, ListedEntry,
};

/// What walking one root found besides its candidates, which go to the
/// walk's sink as they are found.
#[derive(Debug)]
pub struct WalkResult {
    pub canonical_root: Option<PathBuf>,
    pub diagnostics: Vec<Diagnostic>,
    /// What the answer depended on, to confirm it later without a walk.
    pub(crate) snapshot: RootSnapshot,
}

struct Dir {
    logical: PathBuf,
    /// Where `logical` really is, when a symlink on the way makes it
    /// differ (`None`: the same path, the common case, with no copy).
    canonical: Option<PathBuf>,
    depth: usize,
    /// Device of this directory: with a `readdir` inode it identifies a real
    /// child folder without another `stat`.
    dev: u64,
    /// Reached through a symlink that leaves the root: only loaded when it is
    /// itself a skill folder, never searched.
    outside: bool,
}

impl Dir {
    fn canonical(&self) -> &Path {
        self.canonical.as_deref().unwrap_or(&self.logical)
    }
}

const INSTRUCTION_FILES: [(&str, InstructionKind); 3] = [
    ("SKILL.md", InstructionKind::SkillFile),
    ("skill.md", InstructionKind::SkillFile),
    ("README.md", InstructionKind::Readme),
];

/// Walks `root`. Missing default roots are silent; a missing configured root
/// is a warning. `started` is when the build began (stamps modified shortly
/// before it are too recent to vouch for an unchanged file).
///
/// Each candidate goes to `sink` the moment it is found, in walk order, so
/// the caller can start loading it while the walk goes on.
///
/// The walk takes a snapshot of what it saw (the stamps that vouch for its
/// answer at the next build) only when `record`: a build that is never
/// repeated needs none, and at 60,000 skills it is an eighth of the build's
/// peak memory.
///
/// `confinement` is the root's (see `RootConfinements`, which makes each
/// repository's once) and `paths` resolves the root: one for all the roots
/// of a build, so the folders the repository's roots share are resolved
/// once, not once per root (a deep working folder has four roots in each
/// folder above it).
pub fn walk_root(
    root: &SourceRoot,
    confinement: Confinement,
    options: &WalkOptions,
    started: SystemTime,
    record: bool,
    paths: &mut Canonicalizer,
    sink: &mut dyn FnMut(Candidate),
) -> WalkResult {
    let mut snapshot = RootSnapshot::new(root, started, options.racy_window);
    if !record {
        // An untrusted snapshot records nothing and vouches for nothing.
        snapshot.distrust();
    }
    let mut w = Walker {
        root,
        options,
        sink,
        result: WalkResult {
            canonical_root: None,
            diagnostics: Vec::new(),
            snapshot,
        },
        visited: HashSet::default(),
        entries_seen: 0,
        exhausted: false,
        source: None,
        confinement,
    };
    let canonical = match paths.canonicalize(&root.path) {
        Ok(path) => path,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            if matches!(root.source.kind, SourceKind::Config | SourceKind::Bundled) {
                w.warn(
                    DiagnosticCode::MissingRoot,
                    &root.path,
                    format!("skill root `{}` does not exist", root.path.display()),
                    Some("create it or remove it from skills.sources.paths"),
                );
            }
            return w.result;
        }
        Err(err) => {
            w.io_problem(&root.path, &err);
            return w.result;
        }
    };
    if let Err(escape) = w.confinement.check(&root.path, &canonical) {
        // Not searched, and not vouched for by a snapshot: the next build
        // looks again.
        w.result.snapshot.distrust();
        w.escape(&escape);
        return w.result;
    }
    let meta = match fs::metadata(&canonical) {
        Ok(meta) => {
            if let Some(check) = &root.owner_check {
                let refused = check
                    .owners
                    .check(&check.folder)
                    .and_then(|()| check.owners.check_metadata(&canonical, &meta));
                if let Err(refused) = refused {
                    // Not searched; the next build looks again.
                    w.result.snapshot.distrust();
                    w.foreign(&root.path, &refused);
                    return w.result;
                }
            }
            FileInfo::of(&meta)
        }
        Err(err) => {
            w.io_problem(&canonical, &err);
            return w.result;
        }
    };
    w.result.canonical_root = Some(canonical.clone());
    let base = if meta.is_dir() {
        canonical.as_path()
    } else {
        canonical.parent().unwrap_or(&canonical)
    };
    w.result.snapshot.set_base(&canonical, base);
    w.result.snapshot.stamp(&canonical, true, meta.stamp);
    if meta.is_file() && is_markdown(canonical.file_name()) {
        // A configured path may name a single flat skill file.
        let directory = canonical
            .parent()
            .map_or_else(|| canonical.clone(), Path::to_path_buf);
        w.candidate(
            canonical.clone(),
            directory,
            SkillLayout::Flat,
            InstructionKind::Flat,
            &meta,
        );
        return w.result;
    }
    if !meta.is_dir() {
        w.warn(
            DiagnosticCode::MissingRoot,
            &canonical,
            format!("skill root `{}` is not a directory", canonical.display()),
            Some("point the source at a directory of skills"),
        );
        return w.result;
    }
    if let Some(identity) = meta.stamp.identity() {
        w.visited.insert(identity);
    }
    let dev = meta.stamp.dev;
    w.run(Dir {
        logical: canonical,
        canonical: None,
        depth: 0,
        dev,
        outside: false,
    });
    w.result
}

struct Walker<'a> {
    root: &'a SourceRoot,
    options: &'a WalkOptions,
    sink: &'a mut dyn FnMut(Candidate),
    result: WalkResult,
    /// Folder identities already searched (device, inode): hashed with
    /// the crate's fast hasher, as they are local and many.
    visited: HashSet<(u64, u64), rustc_hash::FxBuildHasher>,
    entries_seen: usize,
    exhausted: bool,
    /// The root's source with its canonical root filled in, made once.
    source: Option<Arc<SkillSource>>,
    /// Where what the root holds may resolve: inside the repository for a
    /// repository root, anywhere but `/proc`, `/sys` and `/dev` for the
    /// user's own. Checked only for links (a real entry below a checked
    /// folder is inside it), so files that are not links cost nothing.
    confinement: Confinement,
}

impl Walker<'_> {
    fn run(&mut self, root: Dir) {
        let mut stack = vec![root];
        while let Some(mut dir) = stack.pop() {
            if self.exhausted {
                break;
            }
            let mut children = self.visit(&mut dir);
            children.reverse();
            if stack.is_empty() {
                stack = children;
            } else {
                stack.extend(children);
            }
            // A flat registry's root has 60,000 folders, 4 MB of stack
            // that would otherwise stay allocated until the walk ends,
            // while the loaded skills pile up.
            if stack.capacity() > 1024 && stack.len() < stack.capacity() / 4 {
                stack.shrink_to(stack.len() * 2);
            }
        }
    }

    /// Handles one directory; returns the subdirectories to search, in order.
    /// A folder found to be a skill gives its path to the candidate (it is
    /// not used again).
    fn visit(&mut self, dir: &mut Dir) -> Vec<Dir> {
        // Fast path: most folders under a root are skill folders with a
        // SKILL.md, found with one stat and no directory listing.
        if let Some(found) = self.instruction_by_stat(dir)
            && found
        {
            return Vec::new();
        }
        // Only a folder found to be a skill gives its path away, and it is
        // not listed.
        debug_assert!(!dir.logical.as_os_str().is_empty());
        let entries = match self.list(&dir.logical, dir.depth) {
            Some(entries) => entries,
            None => return Vec::new(),
        };
        // A root may itself be a skill folder, but only through SKILL.md or
        // skill.md: a root README.md describes the root and is a flat file.
        let fallbacks = if dir.depth == 0 {
            &INSTRUCTION_FILES[1..2]
        } else {
            &INSTRUCTION_FILES[1..]
        };
        for (name, kind) in fallbacks {
            if entries.iter().any(|(n, _, _)| n == name) && self.try_instruction(dir, name, *kind) {
                return Vec::new();
            }
        }
        // Not a skill folder: a file that is one only in another case or
        // spelling is a mistake worth naming (other agents accept some of
        // these; a silent skip loses the skill).
        if dir.depth > 0 {
            for (name, kind, _) in &entries {
                if *kind != FileKind::Dir && is_misnamed_instruction(name) {
                    self.warn(
                        DiagnosticCode::MisnamedSkillFile,
                        &joined(&dir.logical, name),
                        format!(
                            "`{name}` is named like a skill's instruction file, but only SKILL.md, skill.md or a README.md with front matter make a folder a skill; it was not loaded"
                        ),
                        Some("rename it to SKILL.md"),
                    );
                }
            }
        }
        if dir.outside {
            self.warn(
                DiagnosticCode::PathEscape,
                &dir.logical,
                format!(
                    "`{}` links outside the skill root to `{}`, which is not a skill folder; it was not searched",
                    dir.logical.display(),
                    dir.canonical().display()
                ),
                Some("link each skill folder individually, or add the target to skills.sources.paths"),
            );
            return Vec::new();
        }
        // Real entries before symlinks, so that when a folder and a link to it
        // sit side by side the folder is the one searched and the link is the
        // reported alias, whatever their names.
        let (real, links): (Vec<_>, Vec<_>) = entries
            .into_iter()
            .partition(|(_, t, _)| *t != FileKind::Symlink);
        let mut children = Vec::new();
        for (name, file_type, ino) in real.into_iter().chain(links) {
            if name.starts_with('.') || name == "node_modules" {
                continue;
            }
            let path = joined(&dir.logical, &name);
            if file_type == FileKind::Dir {
                // A real folder: `readdir` already said what it is, and its
                // inode with the parent's device identifies it (no `stat`).
                let identity = (dir.dev != 0 || ino != 0).then_some((dir.dev, ino));
                if let Some(child) = self.child_dir(dir, &name, path, identity, dir.dev, false) {
                    children.push(child);
                }
                continue;
            }
            // Below the root only folders matter; a plain file there is an
            // inert resource, not worth a `stat`.
            if file_type != FileKind::Symlink
                && (dir.depth > 0 || !is_markdown(Some(OsStr::new(&name))))
            {
                continue;
            }
            let Some((meta, via_link)) = self.resolve(&path, file_type, None) else {
                continue;
            };
            if meta.is_dir() {
                let stamp = meta.stamp;
                if let Some(child) =
                    self.child_dir(dir, &name, path, stamp.identity(), stamp.dev, via_link)
                {
                    children.push(child);
                }
            } else if dir.depth == 0 && is_markdown(Some(OsStr::new(&name))) {
                if meta.is_file() {
                    let directory = dir.logical.clone();
                    self.candidate(
                        path,
                        directory,
                        SkillLayout::Flat,
                        InstructionKind::Flat,
                        &meta,
                    );
                } else {
                    self.special(&path);
                }
            }
        }
        // All children share this folder's path: order by what follows it
        // (comparing whole paths spent most of the time in the prefix).
        let skip = dir.logical.as_os_str().len();
        children.sort_by(|a, b| {
            let a = a.logical.as_os_str().as_encoded_bytes();
            let b = b.logical.as_os_str().as_encoded_bytes();
            a.get(skip..).cmp(&b.get(skip..))
        });
        children
    }

    /// `Some(true)` when `SKILL.md` made the folder a skill (or claimed it:
    /// a special file named SKILL.md is reported and the folder left alone),
    /// `Some(false)`/`None` when the folder must be listed.
    fn instruction_by_stat(&mut self, dir: &mut Dir) -> Option<bool> {
        let path = joined(&dir.logical, "SKILL.md");
        // A missing SKILL.md needs no probe: the folder is listed next, and
        // its own stamp moves when one appears.
        let link_meta = match fs::symlink_metadata(&path) {
            Ok(meta) => FileInfo::of(&meta),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return None,
            // Anything else (no permission, I/O) is reported, never taken
            // for "no SKILL.md" in silence; the folder is listed.
            Err(err) => {
                self.io_problem(&path, &err);
                return None;
            }
        };
        self.result.snapshot.stamp(&path, false, link_meta.stamp);
        Some(self.accept_instruction(dir, path, link_meta, InstructionKind::SkillFile))
    }

    fn try_instruction(&mut self, dir: &mut Dir, name: &str, kind: InstructionKind) -> bool {
        let path = joined(&dir.logical, name);
        match fs::symlink_metadata(&path) {
            Ok(meta) => {
                let meta = FileInfo::of(&meta);
                self.result.snapshot.stamp(&path, false, meta.stamp);
                self.accept_instruction(dir, path, meta, kind)
            }
            Err(err) => {
                self.io_problem(&path, &err);
                false
            }
        }
    }

    fn accept_instruction(
        &mut self,
        dir: &mut Dir,
        path: PathBuf,
        link_meta: FileInfo,
        kind: InstructionKind,
    ) -> bool {
        let Some((meta, _)) = self.resolve(&path, link_meta.kind, Some(link_meta)) else {
            return kind == InstructionKind::SkillFile;
        };
        if !meta.is_file() {
            if !meta.is_dir() {
                self.special(&path);
                return true;
            }
            return false;
        }
        if kind == InstructionKind::Readme && !starts_with_front_matter(&path) {
            self.info(
                DiagnosticCode::NotASkill,
                &path,
                "README.md without front matter is documentation; the folder is searched for skills".into(),
            );
            return false;
        }
        // The folder is a skill and is not searched further: its path
        // moves into the candidate.
        let directory = std::mem::take(&mut dir.logical);
        self.candidate(path, directory, SkillLayout::Folder, kind, &meta);
        true
    }

    /// The metadata an entry stands for, following a symlink when allowed.
    /// `None` (with a diagnostic where useful) when it must be skipped.
    /// `known` is the entry's own (`lstat`) metadata when the caller already
    /// has it, which saves a second `stat` of the same path.
    fn resolve(
        &mut self,
        path: &Path,
        file_type: FileKind,
        known: Option<FileInfo>,
    ) -> Option<(FileInfo, bool)> {
        if file_type != FileKind::Symlink {
            if let Some(meta) = known {
                return Some((meta, false));
            }
            return match fs::symlink_metadata(path) {
                Ok(meta) => {
                    let meta = FileInfo::of(&meta);
                    self.result.snapshot.stamp(path, false, meta.stamp);
                    Some((meta, false))
                }
                Err(err) => {
                    self.io_problem(path, &err);
                    None
                }
            };
        }
        if !self.options.follow_symlinks {
            self.info(
                DiagnosticCode::SymlinkSkipped,
                path,
                format!(
                    "symlink `{}` was not followed (skills.follow_symlinks = false)",
                    path.display()
                ),
            );
            return None;
        }
        let followed = fs::metadata(path).map(|meta| FileInfo::of(&meta));
        match &followed {
            Ok(meta) => self.result.snapshot.stamp(path, true, meta.stamp),
            Err(err) => self.result.snapshot.error(path, true, err),
        }
        match followed {
            // A linked folder is checked where its target is resolved
            // (`child_dir`); a linked file here.
            Ok(meta) if meta.is_file() => self.admit_file_link(path).then_some((meta, true)),
            Ok(meta) => Some((meta, true)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                let target = fs::read_link(path)
                    .map(|t| t.display().to_string())
                    .unwrap_or_default();
                self.warn(
                    DiagnosticCode::DanglingSymlink,
                    path,
                    format!(
                        "symlink `{}` points to `{target}`, which does not exist",
                        path.display()
                    ),
                    Some("fix or remove the link"),
                );
                None
            }
            Err(err) if is_loop_error(&err) => {
                self.warn(
                    DiagnosticCode::SymlinkLoop,
                    path,
                    format!(
                        "symlink `{}` is part of a loop and was not followed",
                        path.display()
                    ),
                    Some("remove the link that points back at itself"),
                );
                None
            }
            Err(err) => {
                self.io_problem(path, &err);
                None
            }
        }
    }

    fn child_dir(
        &mut self,
        dir: &Dir,
        name: &str,
        path: PathBuf,
        identity: Option<(u64, u64)>,
        dev: u64,
        via_link: bool,
    ) -> Option<Dir> {
        if dir.depth + 1 > self.options.max_depth {
            self.warn(
                DiagnosticCode::ScanLimit,
                &path,
                format!(
                    "`{}` is deeper than {} levels below the root and was not searched",
                    path.display(),
                    self.options.max_depth
                ),
                Some("move skills closer to the root"),
            );
            return None;
        }
        let canonical = if via_link {
            match fs::canonicalize(&path) {
                Ok(c) => {
                    self.result.snapshot.link(&path, &c);
                    Some(c)
                }
                Err(err) => {
                    self.io_problem(&path, &err);
                    return None;
                }
            }
        } else {
            dir.canonical.as_ref().map(|c| c.join(name))
        };
        if let Some(canonical) = canonical.as_ref().filter(|_| via_link)
            && let Err(escape) = self.confinement.check(&path, canonical)
        {
            self.escape(&escape);
            return None;
        }
        if let Some(canonical) = canonical.as_ref().filter(|_| via_link)
            && dir.canonical().starts_with(canonical)
        {
            self.warn(
                DiagnosticCode::SymlinkLoop,
                &path,
                format!(
                    "symlink `{}` points to `{}`, which contains it; the loop was not followed",
                    path.display(),
                    canonical.display()
                ),
                Some("remove the link, or point it at a folder outside this tree"),
            );
            return None;
        }
        if let Some(identity) = identity
            && !self.visited.insert(identity)
        {
            self.info(
                DiagnosticCode::DuplicatePath,
                &path,
                format!(
                    "`{}` is a second path to a folder already searched",
                    path.display()
                ),
            );
            return None;
        }
        // Only a link can lead outside: a real child of a folder inside the
        // root is inside too.
        let outside = dir.outside
            || (via_link
                && self
                    .result
                    .canonical_root
                    .as_ref()
                    .zip(canonical.as_ref())
                    .is_some_and(|(root, canonical)| !canonical.starts_with(root)));
        Some(Dir {
            logical: path,
            canonical,
            depth: dir.depth + 1,
            dev,
            outside,
        })
    }

    /// The entries of a directory: name, type and inode (0 where the
    /// platform has none), sorted by name bytes.
    fn list(&mut self, path: &Path, depth: usize) -> Option<Vec<(String, FileKind, u64)>> {
        // The folder's stamp, taken before its entries are read, vouches for
        // the listing later (the root's was taken by `walk_root`).
        if depth > 0 {
            match fs::metadata(path) {
                Ok(meta) => self.result.snapshot.stamp(path, true, FileStamp::of(&meta)),
                Err(err) => {
                    self.io_problem(path, &err);
                    return None;
                }
            }
        }
        let mut entries = Vec::new();
        let listed = bcode_fs::for_each_entry(path, &mut |entry| {
            self.entries_seen += 1;
            if self.entries_seen > self.options.max_entries {
                if !self.exhausted {
                    self.exhausted = true;
                    self.result.snapshot.distrust();
                    self.warn(
                        DiagnosticCode::ScanLimit,
                        path,
                        format!("stopped after {} directory entries under this root", self.options.max_entries),
                        Some("keep skill roots small; point skills.sources.paths at skill folders, not at large trees"),
                    );
                }
                return false;
            }
            match entry {
                Ok(ListedEntry {
                    name: Ok(name),
                    kind,
                    ino,
                }) => entries.push((name, kind, ino)),
                Ok(ListedEntry { name: Err(raw), .. }) => self.warn(
                    DiagnosticCode::Unreadable,
                    &path.join(&raw),
                    format!("file name {raw:?} is not valid UTF-8 and was skipped"),
                    Some("rename it"),
                ),
                Err(err) => self.io_problem(path, &err),
            }
            true
        });
        if let Err(err) = listed {
            self.io_problem(path, &err);
            return None;
        }
        // Names in one folder are unique, so an unstable sort is as
        // deterministic and, on readdir's hash order, much cheaper.
        entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        Some(entries)
    }

    fn candidate(
        &mut self,
        path: PathBuf,
        directory: PathBuf,
        layout: SkillLayout,
        kind: InstructionKind,
        meta: &FileInfo,
    ) {
        let source = self.source();
        (self.sink)(Candidate::new(
            source, path, directory, layout, kind, meta.stamp,
        ));
    }

    /// The root's source with its canonical root filled in: one per root,
    /// shared by its candidates.
    fn source(&mut self) -> Arc<SkillSource> {
        match &self.source {
            Some(source) => Arc::clone(source),
            None => {
                let mut source = self.root.source.clone();
                source.root.clone_from(&self.result.canonical_root);
                let source = Arc::new(source);
                self.source = Some(Arc::clone(&source));
                source
            }
        }
    }

    /// Whether the file a symlink at `path` leads to may be read; a
    /// refusal is a `path_escape` warning.
    fn admit_file_link(&mut self, path: &Path) -> bool {
        match fs::canonicalize(path) {
            Ok(real) => match self.confinement.check(path, &real) {
                Ok(()) => true,
                Err(escape) => {
                    self.escape(&escape);
                    false
                }
            },
            Err(err) => {
                self.io_problem(path, &err);
                false
            }
        }
    }

    /// The `path_escape` warning of a link that leads where this root may
    /// not reach, naming the link and its target.
    fn escape(&mut self, escape: &Escape) {
        let (message, hint) = match &escape.reason {
            EscapeReason::Outside { root } => (
                format!(
                    "`{}` leads to `{}`, outside the repository `{}`; it was not followed",
                    escape.path.display(),
                    escape.target.display(),
                    root.display()
                ),
                "a repository's skills must lie inside it; add the target to skills.sources.paths in your user config to use it",
            ),
            EscapeReason::System => (
                format!(
                    "`{}` leads to `{}`, under /proc, /sys or /dev; it was not followed",
                    escape.path.display(),
                    escape.target.display()
                ),
                "remove the link",
            ),
        };
        self.warn(
            DiagnosticCode::PathEscape,
            &escape.path,
            message,
            Some(hint),
        );
    }

    fn special(&mut self, path: &Path) {
        self.warn(
            DiagnosticCode::SpecialFile,
            path,
            format!(
                "`{}` is not a regular file (a FIFO, socket or device) and was not opened",
                path.display()
            ),
            Some("replace it with a regular file"),
        );
    }

    /// A repository's root above the working folder that is not the
    /// user's: another user may have put it there for them.
    fn foreign(&mut self, root: &Path, refused: &bcode_fs::NotOwned) {
        self.warn(
            DiagnosticCode::ForeignOwner,
            root,
            format!(
                "skills in `{}` are not loaded: {refused}, and it is above the working folder",
                root.display()
            ),
            Some(
                "if you trust that folder, add it to `trust.safe_directories` in your user config",
            ),
        );
    }

    fn io_problem(&mut self, path: &Path, err: &io::Error) {
        self.result.snapshot.distrust();
        let code = if is_loop_error(err) {
            DiagnosticCode::SymlinkLoop
        } else {
            DiagnosticCode::Unreadable
        };
        self.warn(
            code,
            path,
            format!("cannot read `{}`: {err}", path.display()),
            None,
        );
    }

    fn warn(&mut self, code: DiagnosticCode, path: &Path, message: String, hint: Option<&str>) {
        let mut d = Diagnostic::warning(code, message).with_path(path);
        if let Some(hint) = hint {
            d = d.with_hint(hint);
        }
        self.result.diagnostics.push(d);
    }

    fn info(&mut self, code: DiagnosticCode, path: &Path, message: String) {
        self.result
            .diagnostics
            .push(Diagnostic::info(code, message).with_path(path));
    }
}

/// `Skill.md`, `SKILLS.md`, `skill.MD` and the like: an instruction file's
/// name in another case or with an `s`, but not one the walk recognises.
fn is_misnamed_instruction(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    (lower == "skill.md" || lower == "skills.md") && name != "SKILL.md" && name != "skill.md"
}

fn is_markdown(name: Option<&OsStr>) -> bool {
    name.and_then(OsStr::to_str).is_some_and(|n| {
        n.len() > 3
            && n.is_char_boundary(n.len() - 3)
            && n[n.len() - 3..].eq_ignore_ascii_case(".md")
    })
}

fn is_loop_error(err: &io::Error) -> bool {
    err.raw_os_error() == Some(libc::ELOOP)
}

/// Whether a README starts with a front-matter delimiter (after any BOM).
/// Reads at most 8 bytes, through the same non-blocking open as skill files.
fn starts_with_front_matter(path: &Path) -> bool {
    let Ok(head) = crate::discover::read::read_head(path, 8) else {
        return false;
    };
    let head = head
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(&head);
    head.starts_with(b"---") || head.starts_with(b"+++")
}

/// `dir` joined with `name`, allocated to its exact length. `Path::join`
/// doubles the buffer when it adds the separator, and these paths live on
/// in every summary: exact ones are 4.5 MB less at 60,000 skills.
fn joined(dir: &Path, name: impl AsRef<OsStr>) -> PathBuf {
    let name = name.as_ref();
    let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.len());
    path.push(dir);
    path.push(name);
    path
}
