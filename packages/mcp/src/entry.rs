//! One served skill: its SEP-2640 entry (the `SKILL.md` URI, the front
//! matter as written, every file with its `sha256:` digest) and where each
//! file really is, so `resources/read` reads only listed files, below the
//! skill's folder, through the same confinement as skill bodies.

use std::path::{Path, PathBuf};

use bcode_fs::{Confinement, FileKind, FileStamp, ListedEntry, for_each_entry};
use bcode_skill::parse::parse_document;
use bcode_skill_models::{SkillLayout, SkillSummary};
use rmcp::model::{Skill, SkillFrontmatter, SkillResource, SkillResources, sha256_digest};
use serde_json::Value;

use crate::digests::{DigestCache, Known};
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
}

/// A skill as served: the SEP-2640 entry and its files.
#[derive(Clone, Debug, PartialEq)]
pub struct ServedEntry {
    /// The entry `skills/list` and `skills/get` return.
    pub skill: Skill,
    /// The folder the files are read from.
    pub folder: PathBuf,
    /// Where they may really be: inside `folder` (canonicalised once).
    confinement: Confinement,
    /// Every listed file, by served path.
    pub files: Vec<ServedFile>,
}

impl ServedEntry {
    /// The file served as `path`, when the entry lists one.
    pub fn file(&self, path: &str) -> Option<&ServedFile> {
        self.files
            .binary_search_by(|file| file.served.as_str().cmp(path))
            .ok()
            .and_then(|at| self.files.get(at))
    }

    /// The bytes of `file`, read below the skill's folder (a link swapped
    /// in since the listing is refused).
    pub fn read(&self, file: &ServedFile) -> Result<Vec<u8>, String> {
        let max = usize::try_from(MAX_BYTES).unwrap_or(usize::MAX);
        self.confinement
            .read_bounded(&self.folder.join(&file.real), max)
            .map_err(|err| err.to_string())
    }
}

/// Why a registry skill is not served before any file is read: SEP-2640
/// serves a skill under its name, so a front-matter `name` other than the
/// id (`name: Rust Debugging` for `rust-debugging`) cannot be served, and a
/// skill provided from memory has no files.
pub fn unservable(summary: &SkillSummary) -> Option<String> {
    if summary.layout == SkillLayout::Provided {
        return Some("it is provided from memory and has no files to serve".into());
    }
    let m = &summary.manifest;
    (m.name != m.id.as_str()).then(|| {
        format!(
            "its front-matter name {:?} is not its id `{}`; SEP-2640 serves a skill under its name (set `name: {}`)",
            m.name, m.id, m.id
        )
    })
}

/// Builds the entry of `summary`: lists its folder (a flat skill: its one
/// file), reads and digests every file (or takes what `cache` knows of it
/// at its stamp), and takes the front matter from the instruction file as
/// written.
pub fn build(summary: &SkillSummary, cache: &DigestCache) -> Result<ServedEntry, String> {
    if let Some(why) = unservable(summary) {
        return Err(why);
    }
    let id = summary.manifest.id.as_str();
    let instruction = summary
        .location
        .file_name()
        .map(PathBuf::from)
        .ok_or_else(|| "the skill has no instruction file".to_owned())?;
    let folder = match summary.layout {
        SkillLayout::Folder => summary.directory().to_path_buf(),
        _ => summary
            .location
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    };
    let mut files = vec![ServedFile {
        served: SKILL_MD.to_owned(),
        real: instruction.clone(),
    }];
    if summary.layout == SkillLayout::Folder {
        list_folder(&folder, Path::new(""), 0, &instruction, &mut files)?;
    }
    files.sort_by(|a, b| a.served.cmp(&b.served));
    files.dedup_by(|a, b| a.served == b.served);
    let mut entry = ServedEntry {
        skill: Skill::new(
            skill_uri(id),
            SkillFrontmatter::new(id, ""),
            SkillResources::Files(Vec::new()),
        ),
        confinement: Confinement::within(&folder),
        folder,
        files,
    };
    let mut total = 0u64;
    let mut resources = Vec::with_capacity(entry.files.len());
    let mut frontmatter = None;
    for file in &entry.files {
        let path = entry.folder.join(&file.real);
        let stamp = std::fs::symlink_metadata(&path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|meta| FileStamp::of(&meta));
        let instruction = file.served == SKILL_MD;
        let known = stamp
            .as_ref()
            .and_then(|stamp| cache.lookup(&path, stamp))
            .filter(|known| !instruction || known.front_matter.is_some());
        let uri = file_uri(id, &file.served);
        if let (Some(known), Some(stamp)) = (known, stamp) {
            total += stamp.len;
            if instruction {
                frontmatter = known
                    .front_matter
                    .and_then(|value| serde_json::from_value(value).ok());
            }
            resources.push(SkillResource::new(uri, known.digest, stamp.len));
        } else {
            let bytes = entry.read(file).map_err(|err| {
                format!("its file `{}` cannot be read: {err}", file.real.display())
            })?;
            total += bytes.len() as u64;
            let resource = SkillResource::from_bytes(uri, &bytes);
            let mut front = None;
            if instruction {
                let parsed = front_matter(id, &bytes)?;
                front = serde_json::to_value(&parsed).ok();
                frontmatter = Some(parsed);
            }
            if let Some(stamp) = stamp {
                cache.remember(
                    &path,
                    Known {
                        stamp,
                        digest: resource.digest.clone(),
                        front_matter: front,
                    },
                );
            }
            resources.push(resource);
        }
        if total > MAX_BYTES {
            return Err(format!("its files hold more than {MAX_BYTES} bytes"));
        }
    }
    let frontmatter = frontmatter.ok_or_else(|| "it has no SKILL.md".to_owned())?;
    entry.skill = Skill::new(skill_uri(id), frontmatter, SkillResources::Files(resources));
    entry
        .skill
        .validate()
        .map_err(|err| format!("its entry breaks SEP-2640: {err}"))?;
    Ok(entry)
}

/// The digest of `bytes` as SEP-2640 writes it (`sha256:<hex>`).
pub fn digest(bytes: &[u8]) -> String {
    sha256_digest(bytes)
}

/// The front matter of the instruction file, every field as written. A
/// file without `name` gets the id, as the open specification derives it
/// from the folder.
fn front_matter(id: &str, bytes: &[u8]) -> Result<SkillFrontmatter, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "its SKILL.md is not UTF-8".to_owned())?;
    let document = parse_document(text).map_err(|err| format!("its front matter: {err}"))?;
    let mut fields = document.fields;
    let name = match fields.remove("name") {
        None | Some(Value::Null) => id.to_owned(),
        Some(Value::String(name)) => name,
        Some(other) => return Err(format!("its `name` is not a string: {other}")),
    };
    let description = match fields.remove("description") {
        Some(Value::String(description)) => description,
        _ => return Err("its `description` is not a string".to_owned()),
    };
    let mut frontmatter = SkillFrontmatter::new(name, description);
    for (key, value) in fields {
        frontmatter = frontmatter.with_field(key, value);
    }
    Ok(frontmatter)
}

/// Adds the files below `folder/relative` to `files`. Links are not
/// followed (a link could lead out of the folder) and hidden entries are
/// skipped, as the SDK's own folder catalog does.
fn list_folder(
    folder: &Path,
    relative: &Path,
    depth: usize,
    instruction: &Path,
    files: &mut Vec<ServedFile>,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let mut entries: Vec<ListedEntry> = Vec::new();
    for_each_entry(&folder.join(relative), &mut |entry| {
        if let Ok(entry) = entry {
            entries.push(entry);
        }
        true
    })
    .map_err(|err| format!("its folder cannot be listed: {err}"))?;
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    for entry in entries {
        let Ok(name) = entry.name else { continue };
        if name.starts_with('.') {
            continue;
        }
        let path = relative.join(&name);
        match entry.kind {
            FileKind::Dir => list_folder(folder, &path, depth + 1, instruction, files)?,
            FileKind::File if path == instruction => {}
            FileKind::File => {
                if files.len() >= MAX_FILES {
                    return Err(format!("it has more than {MAX_FILES} files"));
                }
                let served = path
                    .components()
                    .map(|part| part.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                // A second file named `SKILL.md` beside a `skill.md`
                // instruction file: the instruction file is the one served.
                if served != SKILL_MD {
                    files.push(ServedFile { served, real: path });
                }
            }
            _ => {}
        }
    }
    Ok(())
}
