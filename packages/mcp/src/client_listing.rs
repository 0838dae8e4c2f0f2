//! Reading a `skills/list` page (or a `skills/get` answer) entry by entry,
//! from its JSON text: an entry that breaks the SEP's rules (no `resources`,
//! a file without `size` or with a malformed digest, a URI of another
//! scheme, more files or bytes than the SEP's limits) is refused alone,
//! with the reason; the rest of the page stands (SEP-2640: "hosts must not
//! load that entry").

use rmcp::model::{SkillResource, is_sha256_digest};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Files one skill may list: the SEP's limit every host must accept, and
/// the most a host need accept.
pub const MAX_SKILL_FILES: usize = 512;

/// Bytes all of one skill's files may hold together (their `size`s): the
/// SEP's 16 MiB.
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The scheme every URI of a skill must have.
const SKILL_SCHEME: &str = "skill://";

/// A skill's files as its entry lists them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Files {
    /// Every file, each with its digest and size.
    Listed(Vec<SkillResource>),
    /// `"dynamic"`: generated content, which cannot be verified.
    Dynamic,
}

/// One entry of a listing, as much of it as the consumer uses: taken from
/// each page before the next is asked for, so a listing costs what it
/// keeps, not what the server sent.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Listed {
    pub(crate) uri: String,
    pub(crate) name: String,
    pub(crate) description: String,
    /// The other front-matter fields as listed, as compact JSON text
    /// (parsed again only when the skill is activated).
    pub(crate) extra: String,
    pub(crate) files: Files,
}

impl Listed {
    /// The listed file of `uri`, when the entry lists its files.
    pub(crate) fn file(&self, uri: &str) -> Option<&SkillResource> {
        match &self.files {
            Files::Listed(files) => files.iter().find(|file| file.uri == uri),
            Files::Dynamic => None,
        }
    }

    /// The folder URI the skill's files are named below (`skill://pdf/`
    /// for `skill://pdf/SKILL.md`).
    pub(crate) fn base(&self) -> &str {
        self.uri.strip_suffix("SKILL.md").unwrap_or(&self.uri)
    }

    /// Whether its files cannot be verified.
    pub(crate) fn is_dynamic(&self) -> bool {
        self.files == Files::Dynamic
    }
}

/// One page of `skills/list`, each entry read or refused.
#[derive(Debug)]
pub(crate) struct Page {
    /// Each entry in listing order: read, or refused with the reason (its
    /// URI first, when it has one) and the length of its JSON text.
    pub(crate) entries: Vec<(Result<Listed, Refused>, u64)>,
    pub(crate) next_cursor: Option<String>,
    /// The page's freshness hint (SEP-2549), in milliseconds. Its
    /// `cacheScope` is not kept: `private` and `shared` both allow the one
    /// cache the consumer has, the user's own, in memory.
    pub(crate) ttl_ms: Option<u64>,
}

/// Why an entry was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    /// Its URI, when it has one that is a string.
    pub(crate) uri: Option<String>,
    pub(crate) why: EntryFault,
}

/// What breaks the SEP's rules in one entry of a listing: the entry alone
/// is refused. `kind` is what JSON value stood where another was due.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EntryFault {
    #[error("the entry is not a JSON object")]
    NotAnObject,
    #[error("its `uri` is {kind}, not a string")]
    UriNotText { kind: &'static str },
    #[error("it has no `uri`")]
    NoUri,
    #[error(transparent)]
    Scheme(#[from] SchemeFault),
    #[error("its URI does not name a `SKILL.md`")]
    NotSkillMd,
    #[error("its `frontmatter` is {kind}, not an object")]
    FrontMatterNotObject { kind: &'static str },
    #[error("it has no `frontmatter`")]
    NoFrontMatter,
    #[error("its front matter's `{key}` is {kind}, not a string")]
    FieldNotText { key: String, kind: &'static str },
    #[error("its front matter has no `{key}`")]
    NoField { key: String },
    #[error("it has no `resources`, which the SEP requires (a list of its files, or \"dynamic\")")]
    NoResources,
    #[error("its `resources` is {kind}, neither a list of its files nor \"dynamic\"")]
    ResourcesKind { kind: &'static str },
    #[error("it lists {count} files, more than the {MAX_SKILL_FILES} a skill may have")]
    TooManyFiles { count: usize },
    /// `number` counts from 1.
    #[error("its file #{number} is not an object")]
    FileNotObject { number: usize },
    #[error("its file #{number} has no `uri`")]
    FileWithoutUri { number: usize },
    #[error("its file `{file}` has a `digest` that is not `sha256:` and 64 lowercase hex digits")]
    BadDigest { file: String },
    #[error("its file `{file}` has no `digest`")]
    NoDigest { file: String },
    #[error("its file `{file}` has a `size` that is not a whole number of bytes")]
    BadSize { file: String },
    #[error("its file `{file}` has no `size`")]
    NoSize { file: String },
    #[error("its file `{file}`: {scheme}")]
    FileScheme { file: String, scheme: SchemeFault },
    #[error("its file `{file}` is not below the skill's folder `{base}`")]
    NotBelow { file: String, base: String },
    #[error("its files hold more than the {} MiB a skill may hold", MAX_SKILL_BYTES / (1024 * 1024))]
    TooManyBytes,
    #[error("its `resources` do not list `{uri}` itself, so the file could not be checked")]
    SkillMdUnlisted { uri: String },
}

/// Why a URI is not a `skill://` URI.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SchemeFault {
    #[error("its URI has the scheme `{0}`, not `skill`")]
    Other(String),
    #[error("its URI has no scheme, not `skill`")]
    None,
}

/// What is wrong with a `skills/list` page or a `skills/get` answer as a
/// whole: none of it is used. `method` names which.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PageFault {
    /// `reason`: the JSON parser's words.
    #[error("its {method} result is not a JSON object ({reason})")]
    NotAnObject {
        method: &'static str,
        reason: String,
    },
    /// `found` is the value as JSON text.
    #[error("its result has `resultType` {found}, which a skills listing cannot have")]
    ResultType { found: String },
    #[error("its skills/list result has no `skills` list")]
    NoSkills,
    #[error("its skills/list result's `skills` is not a list")]
    SkillsNotList,
    #[error("its skills/list result's `nextCursor` is {kind}, not a string")]
    CursorKind { kind: &'static str },
    #[error("its skills/get result has no `skill`")]
    NoSkill,
    /// The one entry of a `skills/get` answer.
    #[error(transparent)]
    Entry(EntryFault),
}

#[derive(Deserialize)]
struct WirePage<'a> {
    #[serde(borrow)]
    skills: Option<&'a RawValue>,
    #[serde(rename = "nextCursor")]
    next_cursor: Option<Value>,
    #[serde(rename = "ttlMs")]
    ttl_ms: Option<Value>,
    #[serde(rename = "resultType")]
    result_type: Option<Value>,
}

/// Reads one `skills/list` result; `Err` says what is wrong with the page
/// as a whole (an entry's faults are the entry's).
pub(crate) fn decode_page(text: &str) -> Result<Page, PageFault> {
    let page: WirePage<'_> = serde_json::from_str(text).map_err(|err| PageFault::NotAnObject {
        method: "skills/list",
        reason: err.to_string(),
    })?;
    check_result_type(page.result_type.as_ref())?;
    let skills = page.skills.ok_or(PageFault::NoSkills)?;
    let skills: Vec<&RawValue> =
        serde_json::from_str(skills.get()).map_err(|_| PageFault::SkillsNotList)?;
    let next_cursor = match page.next_cursor {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(cursor),
        Some(other) => {
            return Err(PageFault::CursorKind { kind: kind(&other) });
        }
    };
    Ok(Page {
        entries: skills
            .into_iter()
            .map(|raw| (decode_entry(raw), raw.get().len() as u64))
            .collect(),
        next_cursor,
        ttl_ms: page.ttl_ms.as_ref().and_then(Value::as_u64),
    })
}

/// Reads one `skills/get` result: its one entry, or what is wrong.
pub(crate) fn decode_get(text: &str) -> Result<Listed, PageFault> {
    #[derive(Deserialize)]
    struct WireGet<'a> {
        #[serde(borrow)]
        skill: Option<&'a RawValue>,
        #[serde(rename = "resultType")]
        result_type: Option<Value>,
    }
    let got: WireGet<'_> = serde_json::from_str(text).map_err(|err| PageFault::NotAnObject {
        method: "skills/get",
        reason: err.to_string(),
    })?;
    check_result_type(got.result_type.as_ref())?;
    let skill = got.skill.ok_or(PageFault::NoSkill)?;
    decode_entry(skill).map_err(|refused| PageFault::Entry(refused.why))
}

/// A result other than `complete` (SEP-2322) asks for more than a listing
/// is: this consumer has nothing to answer it with.
fn check_result_type(result_type: Option<&Value>) -> Result<(), PageFault> {
    match result_type {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(kind)) if kind == "complete" => Ok(()),
        Some(other) => Err(PageFault::ResultType {
            found: other.to_string(),
        }),
    }
}

#[derive(Deserialize)]
struct WireEntry {
    uri: Option<Value>,
    frontmatter: Option<Value>,
    resources: Option<Value>,
}

/// Reads one entry, or says why it cannot be loaded.
pub(crate) fn decode_entry(raw: &RawValue) -> Result<Listed, Refused> {
    let entry: WireEntry = serde_json::from_str(raw.get()).map_err(|_| Refused {
        uri: None,
        why: EntryFault::NotAnObject,
    })?;
    let uri = match entry.uri {
        Some(Value::String(uri)) => uri,
        Some(other) => {
            return Err(Refused {
                uri: None,
                why: EntryFault::UriNotText { kind: kind(&other) },
            });
        }
        None => {
            return Err(Refused {
                uri: None,
                why: EntryFault::NoUri,
            });
        }
    };
    let refuse = |why: EntryFault| Refused {
        uri: Some(uri.clone()),
        why,
    };
    check_skill_uri(&uri).map_err(|fault| refuse(fault.into()))?;
    if !uri.ends_with("/SKILL.md") {
        return Err(refuse(EntryFault::NotSkillMd));
    }
    let mut frontmatter = match entry.frontmatter {
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(refuse(EntryFault::FrontMatterNotObject {
                kind: kind(&other),
            }));
        }
        None => return Err(refuse(EntryFault::NoFrontMatter)),
    };
    let name = text_field(&mut frontmatter, "name").map_err(&refuse)?;
    let description = text_field(&mut frontmatter, "description").map_err(&refuse)?;
    let files = match entry.resources {
        None => return Err(refuse(EntryFault::NoResources)),
        Some(Value::String(marker)) if marker == "dynamic" => Files::Dynamic,
        Some(Value::Array(files)) => Files::Listed(read_files(&uri, files).map_err(&refuse)?),
        Some(other) => {
            return Err(refuse(EntryFault::ResourcesKind { kind: kind(&other) }));
        }
    };
    Ok(Listed {
        extra: serde_json::to_string(&frontmatter).unwrap_or_default(),
        uri,
        name,
        description,
        files,
    })
}

/// `skill://` or why not, naming the scheme a URI has instead.
fn check_skill_uri(uri: &str) -> Result<(), SchemeFault> {
    if uri.starts_with(SKILL_SCHEME) {
        return Ok(());
    }
    Err(match uri.split_once(':') {
        Some((scheme, _)) if !scheme.is_empty() && !scheme.contains('/') => {
            SchemeFault::Other(scheme.to_owned())
        }
        _ => SchemeFault::None,
    })
}

/// A front-matter field that must be a string, taken out of the map.
fn text_field(frontmatter: &mut Map<String, Value>, key: &str) -> Result<String, EntryFault> {
    match frontmatter.remove(key) {
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(EntryFault::FieldNotText {
            key: key.to_owned(),
            kind: kind(&other),
        }),
        None => Err(EntryFault::NoField {
            key: key.to_owned(),
        }),
    }
}

/// The file list of the skill at `uri`, checked against the SEP: each file
/// a `skill://` URI below the skill's folder with a `sha256:` digest and a
/// `size`, `SKILL.md` among them, within the SEP's limits.
fn read_files(uri: &str, files: Vec<Value>) -> Result<Vec<SkillResource>, EntryFault> {
    if files.len() > MAX_SKILL_FILES {
        return Err(EntryFault::TooManyFiles { count: files.len() });
    }
    let base = uri.strip_suffix("SKILL.md").unwrap_or(uri);
    let mut read = Vec::with_capacity(files.len());
    let mut total: u64 = 0;
    for (at, file) in files.into_iter().enumerate() {
        let Value::Object(mut file) = file else {
            return Err(EntryFault::FileNotObject { number: at + 1 });
        };
        let file_uri = match file.remove("uri") {
            Some(Value::String(file_uri)) => file_uri,
            _ => return Err(EntryFault::FileWithoutUri { number: at + 1 }),
        };
        let digest = match file.remove("digest") {
            Some(Value::String(digest)) if is_sha256_digest(&digest) => digest,
            Some(_) => return Err(EntryFault::BadDigest { file: file_uri }),
            None => return Err(EntryFault::NoDigest { file: file_uri }),
        };
        let size = match file.remove("size") {
            Some(size) => size.as_u64().ok_or_else(|| EntryFault::BadSize {
                file: file_uri.clone(),
            })?,
            None => return Err(EntryFault::NoSize { file: file_uri }),
        };
        if !file_uri.starts_with(base) || file_uri.len() == base.len() {
            if let Err(scheme) = check_skill_uri(&file_uri) {
                return Err(EntryFault::FileScheme {
                    file: file_uri,
                    scheme,
                });
            }
            return Err(EntryFault::NotBelow {
                file: file_uri,
                base: base.to_owned(),
            });
        }
        total = total.saturating_add(size);
        if total > MAX_SKILL_BYTES {
            return Err(EntryFault::TooManyBytes);
        }
        read.push(SkillResource::new(file_uri, digest, size));
    }
    if !read.iter().any(|file| file.uri == uri) {
        return Err(EntryFault::SkillMdUnlisted {
            uri: uri.to_owned(),
        });
    }
    Ok(read)
}

/// What kind of JSON value `value` is, for a message.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const DIGEST: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

    fn entry(value: Value) -> Result<Listed, Refused> {
        let text = serde_json::to_string(&value).unwrap();
        let raw: Box<RawValue> = serde_json::from_str(&text).unwrap();
        decode_entry(&raw)
    }

    fn refused(value: Value) -> String {
        entry(value).unwrap_err().why.to_string()
    }

    fn skill(resources: Value) -> Value {
        json!({
            "uri": "skill://pdf/SKILL.md",
            "frontmatter": {"name": "pdf", "description": "Reads PDFs.", "license": "MIT"},
            "resources": resources,
        })
    }

    fn file(uri: &str, size: u64) -> Value {
        json!({"uri": uri, "digest": DIGEST, "size": size})
    }

    #[test]
    fn a_good_entry_is_read_whole() {
        assert_eq!(
            entry(skill(json!([
                file("skill://pdf/SKILL.md", 10),
                file("skill://pdf/references/FORM.md", 4)
            ]))),
            Ok(Listed {
                uri: "skill://pdf/SKILL.md".to_owned(),
                name: "pdf".to_owned(),
                description: "Reads PDFs.".to_owned(),
                extra: "{\"license\":\"MIT\"}".to_owned(),
                files: Files::Listed(vec![
                    SkillResource::new("skill://pdf/SKILL.md", DIGEST, 10),
                    SkillResource::new("skill://pdf/references/FORM.md", DIGEST, 4),
                ]),
            })
        );
        assert_eq!(
            entry(skill(json!("dynamic"))).map(|listed| listed.files),
            Ok(Files::Dynamic)
        );
    }

    #[test]
    fn each_fault_of_an_entry_is_named() {
        let mut no_resources = skill(json!([]));
        no_resources.as_object_mut().unwrap().remove("resources");
        assert_eq!(
            refused(no_resources),
            "it has no `resources`, which the SEP requires (a list of its files, or \"dynamic\")"
        );
        assert_eq!(
            refused(skill(json!("generated"))),
            "its `resources` is a string, neither a list of its files nor \"dynamic\""
        );
        assert_eq!(
            refused(skill(
                json!([{"uri": "skill://pdf/SKILL.md", "digest": DIGEST}])
            )),
            "its file `skill://pdf/SKILL.md` has no `size`"
        );
        assert_eq!(
            refused(skill(
                json!([{"uri": "skill://pdf/SKILL.md", "digest": "md5:00", "size": 1}])
            )),
            "its file `skill://pdf/SKILL.md` has a `digest` that is not `sha256:` and 64 lowercase hex digits"
        );
        assert_eq!(
            refused(skill(json!([file("skill://pdf/other.md", 1)]))),
            "its `resources` do not list `skill://pdf/SKILL.md` itself, so the file could not be checked"
        );
        assert_eq!(
            refused(skill(json!([
                file("skill://pdf/SKILL.md", 1),
                file("https://example.invalid/x", 1)
            ]))),
            "its file `https://example.invalid/x`: its URI has the scheme `https`, not `skill`"
        );
        assert_eq!(
            refused(skill(json!([
                file("skill://pdf/SKILL.md", 1),
                file("skill://other/x", 1)
            ]))),
            "its file `skill://other/x` is not below the skill's folder `skill://pdf/`"
        );
        let mut https = skill(json!([file("https://x/SKILL.md", 1)]));
        https["uri"] = json!("https://x/SKILL.md");
        assert_eq!(
            entry(https.clone()),
            Err(Refused {
                uri: Some("https://x/SKILL.md".to_owned()),
                why: EntryFault::Scheme(SchemeFault::Other("https".to_owned()))
            })
        );
        let mut no_name = skill(json!([file("skill://pdf/SKILL.md", 1)]));
        no_name["frontmatter"]
            .as_object_mut()
            .unwrap()
            .remove("name");
        assert_eq!(refused(no_name), "its front matter has no `name`");
        assert_eq!(
            refused(https),
            "its URI has the scheme `https`, not `skill`"
        );
        assert_eq!(
            entry(json!({"frontmatter": {}})),
            Err(Refused {
                uri: None,
                why: EntryFault::NoUri
            })
        );
    }

    #[test]
    fn the_seps_limits_are_held_and_reached() {
        let files = |count: usize, size: u64| {
            let mut files = vec![file("skill://pdf/SKILL.md", size)];
            files.extend((1..count).map(|at| file(&format!("skill://pdf/f{at}"), size)));
            Value::Array(files)
        };
        // At the limits, the entry loads.
        assert!(entry(skill(files(MAX_SKILL_FILES, 1))).is_ok());
        assert!(entry(skill(files(2, MAX_SKILL_BYTES / 2))).is_ok());
        assert_eq!(
            refused(skill(files(MAX_SKILL_FILES + 1, 1))),
            "it lists 513 files, more than the 512 a skill may have"
        );
        assert_eq!(
            refused(skill(files(2, MAX_SKILL_BYTES / 2 + 1))),
            "its files hold more than the 16 MiB a skill may hold"
        );
    }

    #[test]
    fn a_page_stands_when_one_entry_is_bad() {
        let page = json!({
            "resultType": "complete",
            "ttlMs": 60000,
            "cacheScope": "shared",
            "nextCursor": "2",
            "skills": [
                skill(json!([file("skill://pdf/SKILL.md", 1)])),
                skill(json!([{"uri": "skill://pdf/SKILL.md", "digest": DIGEST}])),
            ],
        });
        let page = decode_page(&page.to_string()).unwrap();
        assert_eq!(page.next_cursor.as_deref(), Some("2"));
        assert_eq!(page.ttl_ms, Some(60000));
        let read: Vec<bool> = page.entries.iter().map(|(e, _)| e.is_ok()).collect();
        assert_eq!(read, vec![true, false]);
        assert_eq!(
            decode_page("{\"resultType\":\"input_required\",\"skills\":[]}")
                .unwrap_err()
                .to_string(),
            "its result has `resultType` \"input_required\", which a skills listing cannot have"
        );
        assert_eq!(
            decode_page("{\"tools\":[]}").unwrap_err().to_string(),
            "its skills/list result has no `skills` list"
        );
        assert_eq!(
            decode_page("{\"skills\":{}}").unwrap_err().to_string(),
            "its skills/list result's `skills` is not a list"
        );
    }
}
