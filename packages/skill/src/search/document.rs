//! What of a skill the relevance index reads, field by field: the pure
//! half of indexing. The edge (`search::gather`) supplies the body and the
//! names of the skill's other files; everything else is in its summary.

use bcode_skill_models::SkillSummary;
use serde::Serialize;
use serde_json::Value;

/// A field of a skill, weighted apart by the ranking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SearchField {
    /// The id and the display name.
    Name,
    /// `description` and `when_to_use`.
    Description,
    /// `activation.keywords`, `metadata` keywords, tags and category, and
    /// `argument-hint`.
    Keywords,
    /// The paths of the skill's other files (`scripts/fill_form.py`).
    Files,
    /// The instruction text after the front matter.
    Body,
}

impl SearchField {
    /// Every field, in index order.
    pub const ALL: [SearchField; FIELDS] = [
        SearchField::Name,
        SearchField::Description,
        SearchField::Keywords,
        SearchField::Files,
        SearchField::Body,
    ];

    /// The field's position in per-field arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name `--json` and `render --explain` show.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchField::Name => "name",
            SearchField::Description => "description",
            SearchField::Keywords => "keywords",
            SearchField::Files => "files",
            SearchField::Body => "body",
        }
    }
}

/// How many fields there are.
pub const FIELDS: usize = 5;

/// `metadata` keys whose values describe what a skill is about. The Agent
/// Skills standard leaves `metadata` free-form; these are the names
/// registries and the portability lint's hint use for keywords.
const METADATA_KEYWORD_KEYS: &[&str] = &["category", "keywords", "tags", "topics"];

/// The text of each field of one skill, as the index reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillText {
    /// By [`SearchField::index`].
    pub fields: [String; FIELDS],
}

impl SkillText {
    /// The fields of `skill`, with its `body` (none for a skill whose body
    /// is not fetched ahead of need, as an MCP server's) and the paths of
    /// its other files, relative to its folder.
    pub fn of(skill: &SkillSummary, body: Option<&str>, files: &[String]) -> SkillText {
        let mut text = SkillText::with_body(skill, None, files);
        if let Some(body) = body {
            text.fields[SearchField::Body.index()].push_str(body);
        }
        text
    }

    /// [`SkillText::of`] taking the body it keeps, so a body read for the
    /// index is not copied again.
    pub fn with_body(skill: &SkillSummary, body: Option<String>, files: &[String]) -> SkillText {
        let manifest = &skill.manifest;
        let details = manifest.details();
        let mut text = SkillText::default();
        let [name, description, keywords, file_names, body_text] = &mut text.fields;
        name.push_str(manifest.id.as_str());
        if manifest.name != manifest.id.as_str() {
            name.push('\n');
            name.push_str(&manifest.name);
        }
        description.push_str(&manifest.description);
        if let Some(when) = details.when_to_use() {
            description.push('\n');
            description.push_str(when);
        }
        for keyword in &manifest.activation.keywords {
            keywords.push_str(keyword);
            keywords.push('\n');
        }
        for key in METADATA_KEYWORD_KEYS {
            if let Some(value) = manifest.metadata.get(key) {
                push_value(keywords, value);
            }
        }
        if let Some(hint) = details.argument_hint() {
            keywords.push_str(hint);
            keywords.push('\n');
        }
        for file in files {
            file_names.push_str(file);
            file_names.push('\n');
        }
        if let Some(body) = body {
            *body_text = body;
        }
        text
    }
}

/// The text of a `metadata` value: a scalar as written, a list's items, a
/// map's values.
fn push_value(out: &mut String, value: &Value) {
    match value {
        Value::String(text) => {
            out.push_str(text);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|item| push_value(out, item)),
        Value::Object(map) => map.values().for_each(|item| push_value(out, item)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}
