//! One served skill: its SEP-2640 entry (the `SKILL.md` URI, the front
//! matter as written, every file with its `sha256:` digest), where each file
//! really is, so `resources/read` reads only listed files below the skill's
//! folder through the same confinement as skill bodies, and the stamps
//! (every listed folder and file) that say whether the entry still holds.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use bcode_fs::{
    Confinement, DirHandle, FileKind, FileStamp, ListedEntry, ReadError, for_each_entry,
};
use bcode_skill::{InstructionRecord, parse_document};
use bcode_skill_models::{SkillLayout, SkillSummary};
use rmcp::model::{Skill, SkillFrontmatter, SkillResource, SkillResources, sha256_digest};
use serde_json::Value;

use crate::uri::{SKILL_MD, file_uri, skill_uri};

/// A skill with more files than this is not served (as the SDK's own
/// folder catalog does): hosts need not load larger ones.
pub const MAX_FILES: usize = 512;

/// A skill whose files hold more bytes than this is not served.
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Folders deeper than this inside a skill are not listed.
const MAX_DEPTH: usize = 16;

/// One served file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServedFile {
    /// Its path in the URI, relative to the skill, `/`-separated.
    pub served: String,
    /// Its path on disk, relative to the skill's folder.
    pub real: PathBuf,
    /// Its stamp when it was digested.
    pub stamp: FileStamp,
    /// `sha256:<hex>` of its bytes.
    pub digest: String,
}

/// A skill as served: the SEP-2640 front matter, its files, and the
/// stamps its listing was made at.
#[derive(Debug)]
pub struct ServedEntry {
    /// The skill's id, which its URIs carry.
    pub id: String,
    /// The folder the files are read from.
    pub folder: PathBuf,
    /// The front matter of its instruction file, as written, as the JSON
    /// object the entry sends (kept as text: parsed, it would cost several
    /// times the bytes for every skill held).
    pub frontmatter: Box<str>,
    /// Every listed file, sorted by served path (`SKILL.md` among them).
    pub files: Vec<ServedFile>,
    /// Every folder listed (relative to `folder`, `""` for itself) with
    /// its stamp before it was listed: an entry added or removed since
    /// moves it. Empty for a flat skill, which serves its one file.
    pub folders: Vec<(PathBuf, FileStamp)>,
    /// Whether no stamp was inside the racy window when the files were
    /// read, so a later run may trust the stamps (see [`Self::settled`]).
    settled: bool,
    /// Where the files may really be: inside `folder`, canonicalised on
    /// the first read (a listing from stamps reads nothing).
    confinement: OnceLock<Confinement>,
}

impl ServedEntry {
    /// An entry from its parts, as the digest cache keeps them (it keeps
    /// only settled entries).
    pub fn from_parts(
        id: String,
        folder: PathBuf,
        frontmatter: Box<str>,
        files: Vec<ServedFile>,
        folders: Vec<(PathBuf, FileStamp)>,
    ) -> ServedEntry {
        ServedEntry {
            id,
            folder,
            frontmatter,
            files,
            folders,
            settled: true,
            confinement: OnceLock::new(),
        }
    }

    /// The entry `skills/list` and `skills/get` return; `None` only when the
    /// front matter text does not read as an object with a `name` and a
    /// `description` (which an entry made here, or read back from the
    /// digest cache, always has).
    pub fn skill(&self) -> Option<Skill> {
        let frontmatter = serde_json::from_str(&self.frontmatter).ok()?;
        let files = self
            .files
            .iter()
            .map(|file| (file.served.as_str(), file.digest.clone(), file.stamp.len));
        sep_skill(&self.id, frontmatter, files)
    }

    /// The file served as `path`, when the entry lists one.
    pub fn file(&self, path: &str) -> Option<&ServedFile> {
        self.files
            .binary_search_by(|file| file.served.as_str().cmp(path))
            .ok()
            .and_then(|at| self.files.get(at))
    }

    /// The bytes of `file`, read below the skill's folder (a link swapped
    /// in since the listing is refused).
    pub fn read(&self, file: &ServedFile) -> Result<Vec<u8>, Unreadable> {
        read_below(&self.confinement, &self.folder, &file.real)
    }

    /// Whether every folder and file still answers with the stamp the
    /// entry was made at, racy or not: whether anything is known to have
    /// moved since.
    pub fn unmoved(&self, looker: &mut StampLooker) -> bool {
        stamps_answer(looker, &self.folder, self.recorded(), None, None)
    }

    /// Every stamp the entry recorded: its folders', then its files'.
    pub(crate) fn recorded(&self) -> impl Iterator<Item = Recorded<'_>> {
        let folders = self.folders.iter().map(|(relative, stamp)| Recorded {
            served: None,
            relative,
            kind: FileKind::Dir,
            stamp: *stamp,
        });
        let files = self.files.iter().map(|file| Recorded {
            served: Some(&file.served),
            relative: &file.real,
            kind: FileKind::File,
            stamp: file.stamp,
        });
        folders.chain(files)
    }

    /// Whether a later run may trust the entry's stamps: none was inside
    /// the racy window when the files were read (a file changed again
    /// within its clock tick after the read would keep its stamp).
    pub fn settled(&self) -> bool {
        self.settled
    }
}

/// One stamp an entry recorded: a folder's (`served` is `None`) or a
/// file's, where it is below the skill's folder, and what it was.
pub(crate) struct Recorded<'a> {
    /// The served path of a file (`SKILL.md` for the instruction file).
    pub(crate) served: Option<&'a str>,
    /// Its path below the skill's folder (`""` for the folder itself).
    pub(crate) relative: &'a Path,
    /// A folder or a file.
    pub(crate) kind: FileKind,
    /// The stamp recorded.
    pub(crate) stamp: FileStamp,
}

/// Whether every stamp in `recorded` still answers (looked up through
/// `looker`, below `folder`), and (with `racy`) none is inside the window
/// before the time given. The instruction file's stamp is not asked for
/// again when it is `confirmed`: discovery has just found it unchanged
/// (a stamp it confirmed is the one the file has now, compared whole).
pub(crate) fn stamps_answer<'a>(
    looker: &mut StampLooker,
    folder: &Path,
    recorded: impl IntoIterator<Item = Recorded<'a>>,
    racy: Option<(SystemTime, Duration)>,
    confirmed: Option<&FileStamp>,
) -> bool {
    let Some(base) = looker.base_of(folder) else {
        return false;
    };
    recorded.into_iter().all(|one| {
        if racy.is_some_and(|(now, window)| !bcode_fs::vouches(&one.stamp, now, window)) {
            return false;
        }
        if one.served == Some(SKILL_MD) && confirmed == Some(&one.stamp) {
            return true;
        }
        looker.stamp(&base.join(one.relative), one.kind) == Some(one.stamp)
    })
}

/// The SEP-2640 entry of the skill `id`: its front matter (which must hold
/// a `name` and a `description` string) and its files (served path,
/// digest, length).
pub fn sep_skill<S: AsRef<str>>(
    id: &str,
    frontmatter: serde_json::Map<String, Value>,
    files: impl Iterator<Item = (S, String, u64)>,
) -> Option<Skill> {
    // Read as a map, then split: the SDK's type flattens the other
    // fields, which serde reads through a buffered copy of each.
    let mut extra = frontmatter;
    let mut text = |key: &str| match extra.remove(key) {
        Some(Value::String(text)) => Some(text),
        _ => None,
    };
    let (name, description) = (text("name")?, text("description")?);
    let mut frontmatter = SkillFrontmatter::new(name, description);
    frontmatter.extra = extra;
    let resources = files
        .map(|(served, digest, len)| SkillResource::new(file_uri(id, served.as_ref()), digest, len))
        .collect();
    Some(Skill::new(
        skill_uri(id),
        frontmatter,
        SkillResources::Files(resources),
    ))
}

/// Looks stamps up relative to one held folder (the one holding the last
/// skill's folder): ten thousand skills below one root cost ten thousand
/// short lookups, not ten thousand walks of the root's path.
#[derive(Debug, Default)]
pub struct StampLooker {
    handle: Option<DirHandle>,
}

impl StampLooker {
    /// The path of `folder` relative to the held folder, opening its
    /// parent first when another folder is held.
    fn base_of(&mut self, folder: &Path) -> Option<PathBuf> {
        let parent = folder.parent()?;
        if self.handle.as_ref().map(DirHandle::path) != Some(parent) {
            self.handle = DirHandle::open(parent).ok();
        }
        folder.file_name().map(PathBuf::from)
    }

    /// The stamp of `relative` (below the held folder) when it is (not a
    /// link to) a `kind`.
    fn stamp(&self, relative: &Path, kind: FileKind) -> Option<FileStamp> {
        let info = self.handle.as_ref()?.info(relative, false).ok()?;
        (info.kind == kind).then_some(info.stamp)
    }
}

/// Why a registry skill is not served before any file is read: SEP-2640
/// serves a skill under its name, so a front-matter `name` other than the
/// id (`name: Rust Debugging` for `rust-debugging`) cannot be served, and a
/// skill provided from memory has no files.
pub fn unservable(summary: &SkillSummary) -> Option<NotServed> {
    if summary.layout == SkillLayout::Provided {
        return Some(NotServed::Provided);
    }
    let m = &summary.manifest;
    (m.name != m.id.as_str()).then(|| NotServed::NameIsNotId {
        name: m.name.clone(),
        id: m.id.to_string(),
    })
}

/// The folder a skill's files are served from: a folder skill's own, a
/// flat skill's parent (it serves its one file).
pub fn folder_of(summary: &SkillSummary) -> PathBuf {
    match summary.layout {
        SkillLayout::Folder => summary.directory().to_path_buf(),
        _ => summary
            .location
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    }
}

/// The entry of `summary` read from its files: its folder listed (a flat
/// skill: its one file), every file read and digested, and the front
/// matter taken from the instruction file as written. The instruction file
/// is not read again when `recorded` (what the discovery that made the
/// summary recorded of it) still holds: the stamp taken now is the one
/// recorded, and it vouches. (Whether an entry kept from before still
/// holds is the digest cache's question: [`crate::DigestCache::holds`].)
pub fn build(
    summary: &SkillSummary,
    racy_window: Duration,
    recorded: Option<&InstructionRecord>,
) -> Result<ServedEntry, NotServed> {
    if let Some(why) = unservable(summary) {
        return Err(why);
    }
    let instruction = summary
        .location
        .file_name()
        .map(PathBuf::from)
        .ok_or(NotServed::NoInstructionFile)?;
    read_entry(
        summary.manifest.id.as_str(),
        folder_of(summary),
        &instruction,
        summary.layout == SkillLayout::Folder,
        racy_window,
        recorded,
    )
}

/// Lists, reads and digests a skill's files (the instruction file from
/// `recorded` while that holds).
fn read_entry(
    id: &str,
    folder: PathBuf,
    instruction: &Path,
    whole_folder: bool,
    racy_window: Duration,
    recorded: Option<&InstructionRecord>,
) -> Result<ServedEntry, NotServed> {
    let mut listed = vec![(SKILL_MD.to_owned(), instruction.to_path_buf())];
    let mut folders = Vec::new();
    if whole_folder {
        list_folder(
            &folder,
            Path::new(""),
            0,
            instruction,
            &mut listed,
            &mut folders,
        )?;
    }
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    listed.dedup_by(|a, b| a.0 == b.0);
    let confinement = OnceLock::new();
    let mut total = 0u64;
    let mut files = Vec::with_capacity(listed.len());
    let mut frontmatter = None;
    for (served, real) in listed {
        // The stamp is taken before the read: a change after it moves the
        // stamp, so the next run reads the file again.
        let stamp = bcode_fs::own_stamp_of(&folder.join(&real), FileKind::File)
            .ok_or_else(|| NotServed::NotRegular { file: real.clone() })?;
        if served == SKILL_MD
            && let Some(recorded) = recorded.filter(|recorded| {
                *recorded.stamp() == stamp
                    && bcode_fs::vouches(&stamp, SystemTime::now(), racy_window)
            })
        {
            total += stamp.len;
            if total > MAX_BYTES {
                return Err(NotServed::TooLarge);
            }
            let fields = serde_json::from_str(recorded.fields())
                .map_err(|err| NotServed::FrontMatter(err.to_string()))?;
            frontmatter = Some(front_matter_text(id, fields)?);
            files.push(ServedFile {
                digest: recorded.digest(),
                served,
                real,
                stamp,
            });
            continue;
        }
        #[cfg(test)]
        if served == SKILL_MD {
            tests::note_instruction_read(&folder.join(&real));
        }
        let bytes =
            read_below(&confinement, &folder, &real).map_err(|fault| NotServed::Unreadable {
                uri: file_uri(id, &served),
                fault,
            })?;
        total += bytes.len() as u64;
        if total > MAX_BYTES {
            return Err(NotServed::TooLarge);
        }
        if served == SKILL_MD {
            frontmatter = Some(front_matter_text(id, document_fields(&bytes)?)?);
        }
        let stamp = FileStamp {
            len: bytes.len() as u64,
            ..stamp
        };
        files.push(ServedFile {
            digest: sha256_digest(&bytes),
            served,
            real,
            stamp,
        });
    }
    let frontmatter = frontmatter.ok_or(NotServed::NoSkillMd)?;
    let now = SystemTime::now();
    let settled = folders
        .iter()
        .map(|(_, stamp)| stamp)
        .chain(files.iter().map(|file| &file.stamp))
        .all(|stamp| bcode_fs::vouches(stamp, now, racy_window));
    let entry = ServedEntry {
        id: id.to_owned(),
        folder,
        frontmatter,
        files,
        folders,
        settled,
        confinement,
    };
    entry
        .skill()
        .ok_or(NotServed::NoReadBack)?
        .validate()
        .map_err(|err| NotServed::BreaksSep(err.to_string()))?;
    Ok(entry)
}

/// Why a listed file could not be read, in words that name no path of
/// this machine and no link's target: clients see them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unreadable {
    /// It resolves outside the skill's folder (a link swapped in since the
    /// listing), or into `/proc`, `/sys` or `/dev`.
    Outside,
    /// It could not be read for another reason, given.
    Failed(String),
}

impl Unreadable {
    fn of(err: &ReadError) -> Unreadable {
        if err.escape().is_some() {
            return Unreadable::Outside;
        }
        match err {
            // The system's own words carry no path; other errors might,
            // so only their kind is told.
            ReadError::Io(io) if io.raw_os_error().is_none() => {
                Unreadable::Failed(io.kind().to_string())
            }
            other => Unreadable::Failed(other.to_string()),
        }
    }

    /// The sentence that says so of the file `uri`.
    pub fn about(&self, uri: &str) -> String {
        match self {
            Unreadable::Outside => format!("refused: {uri} resolves outside the skill's folder"),
            Unreadable::Failed(why) => format!("{uri} cannot be read: {why}"),
        }
    }
}

/// Why a skill is not served: found before any file is read
/// (`unservable`), or once its files were read. The words name no path
/// of this machine outside the skill's folder: `skills/get` answers with
/// them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotServed {
    /// A skill provided from memory has no files.
    #[error("it is provided from memory and has no files to serve")]
    Provided,
    /// SEP-2640 serves a skill under its name, and its name is not its id.
    #[error(
        "its front-matter name {name:?} is not its id `{id}`; SEP-2640 serves a skill under its name (set `name: {id}`)"
    )]
    NameIsNotId {
        /// The front matter's name.
        name: String,
        /// The skill's id.
        id: String,
    },
    /// Its location names no file.
    #[error("the skill has no instruction file")]
    NoInstructionFile,
    /// A file of its folder is not (or no longer) a regular file.
    #[error("its file `{}` is not a regular file", .file.display())]
    NotRegular {
        /// The file, relative to the skill's folder.
        file: PathBuf,
    },
    /// A file could not be read.
    #[error("{}", .fault.about(.uri))]
    Unreadable {
        /// The file's `skill://` URI.
        uri: String,
        /// Why.
        fault: Unreadable,
    },
    /// Its files hold more than [`MAX_BYTES`].
    #[error("its files hold more than {MAX_BYTES} bytes")]
    TooLarge,
    /// Its folder holds more than [`MAX_FILES`] files.
    #[error("it has more than {MAX_FILES} files")]
    TooManyFiles,
    /// Its instruction file is not UTF-8.
    #[error("its SKILL.md is not UTF-8")]
    NotUtf8,
    /// Its front matter does not parse (the parser's words).
    #[error("its front matter: {0}")]
    FrontMatter(String),
    /// Its `name` is not a string (the value as JSON).
    #[error("its `name` is not a string: {0}")]
    NameNotText(String),
    /// Its `description` is missing or not a string.
    #[error("its `description` is not a string")]
    DescriptionNotText,
    /// Its front matter cannot be written as JSON (the writer's words).
    #[error("its front matter cannot be sent: {0}")]
    Unsendable(String),
    /// No file of it is its `SKILL.md`.
    #[error("it has no SKILL.md")]
    NoSkillMd,
    /// Its front matter, written as JSON, does not read back.
    #[error("its front matter does not read back")]
    NoReadBack,
    /// The SDK's check of the entry refuses it (its words).
    #[error("its entry breaks SEP-2640: {0}")]
    BreaksSep(String),
    /// A folder of it is not (or no longer) a folder.
    #[error("its folder `{}` is not a folder", .folder.display())]
    NotAFolder {
        /// The folder, relative to the skill's folder.
        folder: PathBuf,
    },
    /// A folder of it cannot be listed (the system's words).
    #[error("its folder cannot be listed: {0}")]
    Unlistable(String),
    /// Its entry was kept in the digest cache and cannot be read back.
    #[error("its entry cannot be read back from the digest cache")]
    NotKept,
}

/// `folder/relative` read through the folder's confinement, made on first
/// use.
fn read_below(
    confinement: &OnceLock<Confinement>,
    folder: &Path,
    relative: &Path,
) -> Result<Vec<u8>, Unreadable> {
    let max = usize::try_from(MAX_BYTES).unwrap_or(usize::MAX);
    confinement
        .get_or_init(|| Confinement::within(folder))
        .read_bounded(&folder.join(relative), max)
        .map_err(|err| Unreadable::of(&err))
}

/// The digest of `bytes` as SEP-2640 writes it (`sha256:<hex>`).
pub fn digest(bytes: &[u8]) -> String {
    sha256_digest(bytes)
}

/// The front-matter fields of the instruction file's `bytes`, as written.
fn document_fields(bytes: &[u8]) -> Result<serde_json::Map<String, Value>, NotServed> {
    let text = std::str::from_utf8(bytes).map_err(|_| NotServed::NotUtf8)?;
    let document = parse_document(text).map_err(|err| NotServed::FrontMatter(err.to_string()))?;
    Ok(document.fields)
}

/// The front matter the entry sends, as JSON text, from the instruction
/// file's `fields` (as written, from the file or from discovery's record
/// of it: the same text either way).
fn front_matter_text(
    id: &str,
    fields: serde_json::Map<String, Value>,
) -> Result<Box<str>, NotServed> {
    let parsed = front_matter(id, fields)?;
    let text =
        serde_json::to_string(&parsed).map_err(|err| NotServed::Unsendable(err.to_string()))?;
    Ok(text.into_boxed_str())
}

/// The front matter of the instruction file, every field as written. A
/// file without `name` gets the id, as the open specification derives it
/// from the folder.
fn front_matter(
    id: &str,
    mut fields: serde_json::Map<String, Value>,
) -> Result<SkillFrontmatter, NotServed> {
    let name = match fields.remove("name") {
        None | Some(Value::Null) => id.to_owned(),
        Some(Value::String(name)) => name,
        Some(other) => return Err(NotServed::NameNotText(other.to_string())),
    };
    let description = match fields.remove("description") {
        Some(Value::String(description)) => description,
        _ => return Err(NotServed::DescriptionNotText),
    };
    let mut frontmatter = SkillFrontmatter::new(name, description);
    for (key, value) in fields {
        frontmatter = frontmatter.with_field(key, value);
    }
    Ok(frontmatter)
}

/// Adds the files below `folder/relative` to `files` (served path, real
/// path) and each folder listed, with its stamp, to `folders`. Links are
/// not followed (a link could lead out of the folder) and hidden entries
/// are skipped, as the SDK's own folder catalog does.
fn list_folder(
    folder: &Path,
    relative: &Path,
    depth: usize,
    instruction: &Path,
    files: &mut Vec<(String, PathBuf)>,
    folders: &mut Vec<(PathBuf, FileStamp)>,
) -> Result<(), NotServed> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let here = folder.join(relative);
    // Stamped before it is listed: an entry added or removed after the
    // stamp moves it.
    let stamp =
        bcode_fs::own_stamp_of(&here, FileKind::Dir).ok_or_else(|| NotServed::NotAFolder {
            folder: relative.to_path_buf(),
        })?;
    folders.push((relative.to_path_buf(), stamp));
    let mut entries: Vec<ListedEntry> = Vec::new();
    for_each_entry(&here, &mut |entry| {
        if let Ok(entry) = entry {
            entries.push(entry);
        }
        true
    })
    .map_err(|err| NotServed::Unlistable(err.to_string()))?;
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    for entry in entries {
        let Ok(name) = entry.name else { continue };
        if name.starts_with('.') {
            continue;
        }
        let path = relative.join(&name);
        match entry.kind {
            FileKind::Dir => list_folder(folder, &path, depth + 1, instruction, files, folders)?,
            FileKind::File if path == instruction => {}
            FileKind::File => {
                if files.len() >= MAX_FILES {
                    return Err(NotServed::TooManyFiles);
                }
                let served = path
                    .components()
                    .map(|part| part.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                // A second file named `SKILL.md` beside a `skill.md`
                // instruction file: the instruction file is the one served.
                if served != SKILL_MD {
                    files.push((served, path));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Every instruction file the entry builder has read, in this test
    /// process (tests look for their own temporary folders only: others run
    /// beside them).
    static INSTRUCTION_READS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

    pub(crate) fn note_instruction_read(path: &Path) {
        if let Ok(mut reads) = INSTRUCTION_READS.lock() {
            reads.push(path.to_path_buf());
        }
    }

    /// How many times the entry builder has read instruction files below
    /// `folder`.
    pub(crate) fn instruction_reads_below(folder: &Path) -> usize {
        INSTRUCTION_READS
            .lock()
            .map(|reads| reads.iter().filter(|path| path.starts_with(folder)).count())
            .unwrap_or(0)
    }

    /// Issue 38, item 16: what a client is told of an unreadable file
    /// names neither the file's path on this machine nor where a link
    /// leads; other reasons keep the system's words, which name no path.
    #[test]
    fn unreadable_files_are_told_without_a_path_of_the_machine() {
        let uri = "skill://a/refs/x.md";
        let escape = |reason| {
            ReadError::from(bcode_fs::Escape {
                path: PathBuf::from("/home/someone/repo/.bcode/skills/a/refs/x.md"),
                target: PathBuf::from("/home/someone/.ssh/id_ed25519"),
                reason,
            })
        };
        let outside = bcode_fs::EscapeReason::Outside {
            root: PathBuf::from("/home/someone/repo/.bcode/skills/a"),
        };
        let told: Vec<String> = [
            escape(outside),
            escape(bcode_fs::EscapeReason::System),
            ReadError::Io(std::io::Error::from_raw_os_error(13)),
            ReadError::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "/home/someone/repo: odd",
            )),
            ReadError::NotRegular,
        ]
        .iter()
        .map(|err| Unreadable::of(err).about(uri))
        .collect();
        assert_eq!(
            told,
            [
                "refused: skill://a/refs/x.md resolves outside the skill's folder",
                "refused: skill://a/refs/x.md resolves outside the skill's folder",
                "skill://a/refs/x.md cannot be read: Permission denied (os error 13)",
                "skill://a/refs/x.md cannot be read: invalid data",
                "skill://a/refs/x.md cannot be read: not a regular file (a FIFO, socket, device or directory)",
            ]
        );
    }
}
