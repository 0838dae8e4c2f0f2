//! The `--json` documents of `skills list|show|doctor`, serialized straight
//! from the registry's own fields: nothing is copied into a
//! `serde_json::Value` first (for 60,000 skills that copying was most of
//! what `list --json` did beyond discovery).
//!
//! Each struct's fields are declared in the byte order of their keys, the
//! order in which these documents have always been printed (they used to be
//! built as `serde_json::Map`s, which sort their keys), so the bytes are the
//! same; the expected files in `tests/skills_json/` hold them.

use std::borrow::Cow;
use std::path::Path;

use bcode_prompt::skills::SkillRegistry;
use bcode_prompt::skills::{
    Diagnostic, DiagnosticCode, FieldMap, Severity, SkillLayout, SkillSummary, SourceKind,
};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// The `skills list --json` document, `{"diagnostics": [..], "skills": [..]}`,
/// written entry by entry: the command holds the registry and one entry,
/// never the whole document (60,000 skills made a document of several
/// hundred MB in memory).
pub fn list(registry: &SkillRegistry) -> impl Serialize + '_ {
    ListDocument(registry)
}

/// The `skills show --json` document: `{"diagnostics": [..], "skill": {..}}`.
pub fn show<'a>(skill: &'a SkillSummary, diagnostics: &[&'a Diagnostic]) -> impl Serialize + 'a {
    #[derive(Serialize)]
    struct ShowDocument<'a> {
        diagnostics: Vec<DiagnosticJson<'a>>,
        skill: SkillJson<'a>,
    }
    ShowDocument {
        diagnostics: diagnostics.iter().map(|d| DiagnosticJson::new(d)).collect(),
        skill: SkillJson::new(skill),
    }
}

/// The `skills doctor --json` document: `{"diagnostics": [..]}`.
pub fn doctor(diagnostics: &[Diagnostic]) -> impl Serialize + '_ {
    #[derive(Serialize)]
    struct DoctorDocument<'a> {
        diagnostics: Vec<DiagnosticJson<'a>>,
    }
    DoctorDocument {
        diagnostics: diagnostics.iter().map(DiagnosticJson::new).collect(),
    }
}

/// The flat shape of a skill in DESIGN.md: `id`, `name`, `description`,
/// `version`, `source`, `location`, `model_visible`, `keywords`, and the rest
/// of the validated metadata. Paths are strings; one that is not UTF-8 is
/// given lossily with its exact bytes beside it (see [`json_path`]).
#[derive(Serialize)]
struct SkillJson<'a> {
    argument_hint: Option<&'a str>,
    arguments: &'a [String],
    compatibility: Option<&'a str>,
    description: &'a str,
    directory: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    directory_bytes: Option<&'a [u8]>,
    extra: &'a FieldMap,
    id: &'a str,
    keywords: &'a [String],
    layout: SkillLayout,
    license: Option<&'a str>,
    location: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    location_bytes: Option<&'a [u8]>,
    metadata: &'a FieldMap,
    model: Option<&'a str>,
    model_visible: bool,
    name: &'a str,
    paths: &'a [String],
    permissions: PermissionsJson<'a>,
    source: &'a str,
    source_kind: SourceKind,
    thinking_effort: Option<&'a str>,
    user_invocable: bool,
    version: Option<&'a str>,
    when_to_use: Option<&'a str>,
}

/// `permissions` of [`SkillJson`]: both advisory tool lists.
#[derive(Serialize)]
struct PermissionsJson<'a> {
    allowed_tools: &'a [String],
    tools: &'a [String],
}

impl<'a> SkillJson<'a> {
    fn new(skill: &'a SkillSummary) -> Self {
        let m = &skill.manifest;
        let d = m.details();
        let (directory, directory_bytes) = json_path(skill.directory());
        let (location, location_bytes) = json_path(&skill.location);
        SkillJson {
            argument_hint: d.argument_hint(),
            arguments: d.arguments(),
            compatibility: d.compatibility(),
            description: &m.description,
            directory,
            directory_bytes,
            extra: d.extra(),
            id: m.id.as_str(),
            keywords: &m.activation.keywords,
            layout: skill.layout,
            license: d.license(),
            location,
            location_bytes,
            metadata: &m.metadata,
            model: d.model(),
            model_visible: skill.model_visible(),
            name: &m.name,
            paths: d.paths(),
            permissions: PermissionsJson {
                allowed_tools: d.allowed_tools(),
                tools: d.tools(),
            },
            source: &skill.source.label,
            source_kind: skill.source.kind,
            thinking_effort: d.thinking_effort(),
            user_invocable: m.user_invocable(),
            version: d.version(),
            when_to_use: d.when_to_use(),
        }
    }
}

/// The `skills search --json` document: `{"diagnostics": [..], "query":
/// "..", "results": [..]}`, each result `id`, `name`, `description`,
/// `source`, `location` (as in `skills list`), `score`, `coverage` and
/// `matched` (the query's terms the skill has, with the fields).
pub fn search<'a>(
    query: &'a str,
    hits: &'a [bcode_prompt::skills::SearchHit],
    registry: &'a SkillRegistry,
) -> impl Serialize + 'a {
    #[derive(Serialize)]
    struct SearchDocument<'a> {
        diagnostics: Vec<DiagnosticJson<'a>>,
        query: &'a str,
        results: Vec<ResultJson<'a>>,
    }
    #[derive(Serialize)]
    struct ResultJson<'a> {
        coverage: f64,
        description: &'a str,
        id: &'a str,
        location: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        location_bytes: Option<&'a [u8]>,
        matched: &'a [bcode_prompt::skills::MatchedTerm],
        name: &'a str,
        score: f64,
        source: &'a str,
    }
    SearchDocument {
        diagnostics: registry
            .diagnostics()
            .iter()
            .map(DiagnosticJson::new)
            .collect(),
        query,
        results: hits
            .iter()
            .filter_map(|hit| {
                let skill = registry.get(hit.id.as_str())?;
                let (location, location_bytes) = json_path(&skill.location);
                Some(ResultJson {
                    coverage: rounded(hit.coverage),
                    description: &skill.manifest.description,
                    id: skill.manifest.id.as_str(),
                    location,
                    location_bytes,
                    matched: &hit.matched,
                    name: &skill.manifest.name,
                    score: rounded(hit.score),
                    source: &skill.source.label,
                })
            })
            .collect(),
    }
}

/// A score with four decimals: enough to order by, and the same bytes on
/// every machine (an `f32`'s last digits are noise in JSON).
fn rounded(value: f32) -> f64 {
    (f64::from(value) * 10_000.0).round() / 10_000.0
}

/// A diagnostic with the fields of its struct, except that a `path` that is
/// not UTF-8 is given as [`json_path`] gives it (serde refuses such a path,
/// which used to end the command).
#[derive(Serialize)]
struct DiagnosticJson<'a> {
    code: DiagnosticCode,
    column: Option<u32>,
    field: Option<&'a str>,
    hint: Option<Cow<'a, str>>,
    line: Option<u32>,
    message: Cow<'a, str>,
    path: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path_bytes: Option<&'a [u8]>,
    severity: Severity,
    skill_id: Option<&'a str>,
}

impl<'a> DiagnosticJson<'a> {
    fn new(d: &'a Diagnostic) -> Self {
        let (path, path_bytes) = match d.path.as_deref().map(json_path) {
            Some((text, bytes)) => (Some(text), bytes),
            None => (None, None),
        };
        DiagnosticJson {
            code: d.code,
            column: d.column,
            field: d.field.as_deref(),
            hint: d.hint(),
            line: d.line,
            message: d.message(),
            path,
            path_bytes,
            severity: d.severity,
            skill_id: d.skill_id(),
        }
    }
}

/// A path as a JSON string. A path that is not UTF-8 (a folder with a
/// Latin-1 name) cannot be one exactly: the string is then the lossy text
/// (U+FFFD for each bad sequence) and the second value the path's exact
/// bytes, printed as `<key>_bytes`, an array of numbers, so nothing is lost.
/// The `_bytes` field is absent for every UTF-8 path.
fn json_path(path: &Path) -> (Cow<'_, str>, Option<&[u8]>) {
    match path.to_str() {
        Some(text) => (Cow::Borrowed(text), None),
        // On Unix these are the path's bytes as the kernel holds them.
        None => (
            path.to_string_lossy(),
            Some(path.as_os_str().as_encoded_bytes()),
        ),
    }
}

/// See [`list`].
struct ListDocument<'r>(&'r SkillRegistry);

impl Serialize for ListDocument<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let registry = self.0;
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry(
            "diagnostics",
            &Streamed(|| registry.diagnostics().iter().map(DiagnosticJson::new)),
        )?;
        map.serialize_entry(
            "skills",
            &Streamed(|| registry.skills().map(SkillJson::new)),
        )?;
        map.end()
    }
}

/// A JSON array of what an iterator yields, each entry made only when it is
/// written.
struct Streamed<F>(F);

impl<F, I> Serialize for Streamed<F>
where
    F: Fn() -> I,
    I: Iterator<Item: Serialize>,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}
