//! Validating a front-matter mapping into a [`SkillManifest`]: known fields
//! checked and normalised, unknown fields kept and reported, every problem a
//! diagnostic. Identical for YAML and TOML.

use bcode_skill_models::{
    Details, Diagnostic, DiagnosticCode, FieldMap, SkillActivation, SkillDetails, SkillId,
    SkillManifest, SkillPermissionHints,
};
use serde_json::{Map, Value};

use crate::parse::yaml::kind_name;
use crate::session::path_triggers::{GlobRefusal, MAX_GLOB_BYTES, MAX_GLOBS_PER_SKILL, check_glob};
use bcode_text::closest;

/// Every field the validator understands, for unknown-field suggestions.
pub const KNOWN_FIELDS: &[&str] = &[
    "id",
    "name",
    "description",
    "version",
    "activation",
    "keywords",
    "permissions",
    "disable_model_invocation",
    "disable-model-invocation",
    "thinking_effort",
    "model",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
    "paths",
    "user-invocable",
    "argument-hint",
    "when_to_use",
    "arguments",
];

/// Reasoning efforts a skill may request for its turns.
pub const THINKING_EFFORTS: &[&str] = &["none", "minimal", "low", "medium", "high", "xhigh"];

/// Unknown fields reported one by one; the rest share one diagnostic, so
/// a file of thousands of keys (within the front-matter budget) cannot
/// flood the diagnostics every command keeps and prints.
const UNKNOWN_FIELD_DIAGNOSTICS: usize = 20;

/// Agent Skills caps descriptions at 1024 characters; longer ones still load.
const DESCRIPTION_SOFT_LIMIT: usize = 1024;
/// Agent Skills caps `compatibility` at 500 characters; longer ones still load.
const COMPATIBILITY_SOFT_LIMIT: usize = 500;

/// Validates `map`. `inferred_id` is the folder name or file stem; `line_of`
/// finds the file line where a top-level key is written. Diagnostics carry
/// field and line but no path (the caller adds it).
pub fn validate(
    map: Map<String, Value>,
    inferred_id: &str,
    line_of: &dyn Fn(&str) -> Option<u32>,
) -> (Option<SkillManifest>, Vec<Diagnostic>) {
    let mut v = Validator {
        diagnostics: Vec::new(),
        line_of,
        unknown: UnknownFields::default(),
    };
    // One pass sorts the fields into their slots (sixteen lookups by name
    // in the map were a visible share of loading 10,000 skills); the
    // checks then run in a fixed order, so diagnostics come out as before.
    let mut known = KnownFields::default();
    let mut unknown = Vec::new();
    for (key, value) in map {
        let slot = match key.as_str() {
            "id" => &mut known.id,
            "name" => &mut known.name,
            "description" => &mut known.description,
            "version" => &mut known.version,
            "activation" => &mut known.activation,
            "keywords" => &mut known.keywords,
            "permissions" => &mut known.permissions,
            "allowed-tools" => &mut known.allowed_tools,
            "disable_model_invocation" => &mut known.hidden,
            "disable-model-invocation" => &mut known.hidden_kebab,
            "thinking_effort" => &mut known.thinking_effort,
            "model" => &mut known.model,
            "license" => &mut known.license,
            "compatibility" => &mut known.compatibility,
            "metadata" => &mut known.metadata,
            "paths" => &mut known.paths,
            "user-invocable" => &mut known.user_invocable,
            "argument-hint" => &mut known.argument_hint,
            "when_to_use" => &mut known.when_to_use,
            "arguments" => &mut known.arguments,
            _ => {
                unknown.push((key, value));
                continue;
            }
        };
        *slot = Some(value);
    }

    let id = v.id(known.id, inferred_id, known.name.as_ref());
    let name = v.text_field(known.name, "name");
    let description = v.description(known.description);
    let version = v.text_field(known.version, "version");
    let mut keywords = v.keywords(known.activation);
    keywords.extend(v.string_list(known.keywords, "keywords"));
    dedup_in_order(&mut keywords);
    let tools = v.permissions(known.permissions);
    let allowed_tools = v.allowed_tools(known.allowed_tools);
    let hidden = v.hidden(known.hidden, known.hidden_kebab);
    let thinking_effort = v.thinking_effort(known.thinking_effort);
    let model = v.text_field(known.model, "model");
    let license = v.text_field(known.license, "license");
    let compatibility = v.text_field(known.compatibility, "compatibility");
    v.portable_limits(id.as_ref(), compatibility.as_deref());
    let metadata = v.metadata(known.metadata);
    let paths = v.paths(known.paths);
    let user_invocable = known
        .user_invocable
        .and_then(|value| v.flag(value, "user-invocable"));
    let argument_hint = v.argument_hint(known.argument_hint);
    let when_to_use = v.text_field(known.when_to_use, "when_to_use");
    let (arguments, problems) = crate::context::arguments::declared_names(known.arguments);
    problems.into_iter().for_each(|d| v.push(d, "arguments"));

    let mut extra = FieldMap::new();
    for (key, value) in unknown {
        let mut d = Diagnostic::info(
            DiagnosticCode::UnknownField,
            format!("unknown field `{key}` is kept but not used by Bcode"),
        )
        .with_field(key.clone());
        if v.unknown.shown < UNKNOWN_FIELD_DIAGNOSTICS
            && let Some(known) = closest(&key, KNOWN_FIELDS.iter().copied())
        {
            d = d.with_hint(format!("did you mean `{known}`?"));
        }
        v.unknown_field(d, &key);
        extra.insert(key, value);
    }
    v.unknown_fields_summary();

    let (Some(id), Some(description)) = (id, description) else {
        return (None, v.diagnostics);
    };
    let name = name
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| id.to_string());
    let manifest = SkillManifest {
        id,
        name,
        description,
        activation: SkillActivation { keywords },
        disable_model_invocation: hidden,
        metadata,
        details: Details::default(),
    }
    .with_details(SkillDetails {
        version,
        permissions: SkillPermissionHints {
            tools,
            allowed_tools,
        },
        thinking_effort,
        model,
        license,
        compatibility,
        paths,
        user_invocable,
        argument_hint,
        when_to_use,
        arguments,
        extra,
    });
    (Some(manifest), v.diagnostics)
}

/// `s` without surrounding whitespace, reusing its allocation: nearly every
/// value is already trimmed, and copying each one was a visible share of
/// loading 10,000 skills.
fn trimmed(mut s: String) -> String {
    let end = s.trim_end().len();
    s.truncate(end);
    let start = s.len() - s.trim_start().len();
    if start > 0 {
        s.drain(..start);
    }
    s
}

/// The recognised top-level fields, taken out of the front-matter map.
#[derive(Default)]
struct KnownFields {
    id: Option<Value>,
    name: Option<Value>,
    description: Option<Value>,
    version: Option<Value>,
    activation: Option<Value>,
    keywords: Option<Value>,
    permissions: Option<Value>,
    allowed_tools: Option<Value>,
    hidden: Option<Value>,
    hidden_kebab: Option<Value>,
    thinking_effort: Option<Value>,
    model: Option<Value>,
    license: Option<Value>,
    compatibility: Option<Value>,
    metadata: Option<Value>,
    paths: Option<Value>,
    user_invocable: Option<Value>,
    argument_hint: Option<Value>,
    when_to_use: Option<Value>,
    arguments: Option<Value>,
}

struct Validator<'a> {
    diagnostics: Vec<Diagnostic>,
    line_of: &'a dyn Fn(&str) -> Option<u32>,
    unknown: UnknownFields,
}

/// The unknown fields reported so far, and those only counted.
#[derive(Default)]
struct UnknownFields {
    shown: usize,
    /// How many were left unreported, and the first of them (its field
    /// and the key whose line it is on).
    hidden: usize,
    first_hidden: Option<(String, String)>,
}

impl Validator<'_> {
    /// Reports an unknown field, up to [`UNKNOWN_FIELD_DIAGNOSTICS`] of
    /// them; the rest are counted for [`Self::unknown_fields_summary`].
    fn unknown_field(&mut self, diagnostic: Diagnostic, line_key: &str) {
        if self.unknown.shown < UNKNOWN_FIELD_DIAGNOSTICS {
            self.unknown.shown += 1;
            self.push(diagnostic, line_key);
            return;
        }
        self.unknown.hidden += 1;
        if self.unknown.first_hidden.is_none() {
            let field = diagnostic.field.unwrap_or_default().into_owned();
            self.unknown.first_hidden = Some((field, line_key.to_owned()));
        }
    }

    /// One diagnostic for the unknown fields not reported one by one.
    fn unknown_fields_summary(&mut self) {
        let Some((field, line_key)) = self.unknown.first_hidden.take() else {
            return;
        };
        let more = self.unknown.hidden;
        let d = Diagnostic::info(
            DiagnosticCode::UnknownField,
            format!("{more} more unknown fields are not listed one by one; the first is `{field}`"),
        )
        .with_field(field);
        self.push(d, &line_key);
    }

    fn push(&mut self, diagnostic: Diagnostic, field: &str) {
        let diagnostic = match (self.line_of)(field) {
            Some(line) => diagnostic.with_position(line, Some(1)),
            None => diagnostic,
        };
        self.diagnostics.push(diagnostic);
    }

    fn invalid(&mut self, field: &str, severity_error: bool, message: String, hint: &str) {
        let d = if severity_error {
            Diagnostic::error(DiagnosticCode::InvalidField, message)
        } else {
            Diagnostic::warning(DiagnosticCode::InvalidField, message)
        };
        self.push(d.with_field(field.to_owned()).with_hint(hint), field);
    }

    /// The id: the `id` field, else the inferred folder name or file stem,
    /// else (with a warning) a `name` that is itself a valid id.
    fn id(
        &mut self,
        value: Option<Value>,
        inferred: &str,
        name: Option<&Value>,
    ) -> Option<SkillId> {
        let (raw, from_front_matter) = match value {
            None | Some(Value::Null) => (inferred.to_owned(), false),
            Some(Value::String(s)) => (trimmed(s), true),
            Some(other) => {
                let message = format!("`id` must be a string, found {}", kind_name(&other));
                self.push(
                    Diagnostic::error(DiagnosticCode::InvalidId, message)
                        .with_field("id")
                        .with_hint(
                            "write the id as a string of lowercase letters, digits and hyphens",
                        ),
                    "id",
                );
                return None;
            }
        };
        match SkillId::check(&raw) {
            // Checked: the string becomes the id without a copy.
            Ok(()) => SkillId::try_from(raw).ok(),
            Err(why) => {
                if !from_front_matter && let Some(id) = self.id_from_name(&raw, &why, name) {
                    return Some(id);
                }
                let origin = if from_front_matter {
                    "the `id` field"
                } else {
                    "the folder or file name (no `id` field)"
                };
                let mut hint =
                    String::from("ids use lowercase letters, digits and hyphens, at most 64");
                if let Some(suggestion) = SkillId::suggest(&raw) {
                    hint = if from_front_matter {
                        format!("{hint}; for example `id: {suggestion}`")
                    } else {
                        format!(
                            "{hint}; add `id: {suggestion}` to the front matter or rename the file"
                        )
                    };
                }
                self.push(
                    Diagnostic::error(
                        DiagnosticCode::InvalidId,
                        format!("invalid skill id {raw:?} from {origin}: {why}"),
                    )
                    .with_field("id")
                    .with_hint(hint),
                    "id",
                );
                None
            }
        }
    }

    /// Registries hold folders named after a title or a long slug
    /// (`My_Skill`, `tools.v2`, 70 bytes) whose front matter's `name` is a
    /// valid id: the author's intent is that id.
    fn id_from_name(
        &mut self,
        inferred: &str,
        why: &impl std::fmt::Display,
        name: Option<&Value>,
    ) -> Option<SkillId> {
        let name = name?.as_str()?.trim();
        let id = SkillId::parse(name).ok()?;
        self.push(
            Diagnostic::warning(
                DiagnosticCode::IdFromName,
                format!(
                    "the folder or file name {inferred:?} is not a valid skill id ({why}) and there is no `id` field; the `name` field's {name:?} is used as the id"
                ),
            )
            .with_field("id")
            .with_hint(format!(
                "rename the folder or file to `{id}`, or add `id: {id}` to the front matter"
            )),
            "name",
        );
        Some(id)
    }

    /// A scalar text field; numbers and booleans are accepted as their text
    /// with a warning (a YAML `version: 1.0` is a number).
    fn text_field(&mut self, value: Option<Value>, field: &str) -> Option<String> {
        match value? {
            Value::Null => None,
            Value::String(s) => Some(trimmed(s)),
            Value::Number(n) if field == "version" => Some(n.to_string()),
            other @ (Value::Number(_) | Value::Bool(_)) => {
                let text = other.to_string();
                self.invalid(
                    field,
                    false,
                    format!(
                        "`{field}` should be a string, found {}; using {text:?}",
                        kind_name(&other)
                    ),
                    &format!("quote the value: {field}: \"{text}\""),
                );
                Some(text)
            }
            other => {
                self.invalid(
                    field,
                    false,
                    format!(
                        "`{field}` must be a string, found {}; ignored",
                        kind_name(&other)
                    ),
                    "write a single string value",
                );
                None
            }
        }
    }

    fn description(&mut self, value: Option<Value>) -> Option<String> {
        let text = match value {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => trimmed(s),
            Some(other @ (Value::Number(_) | Value::Bool(_))) => {
                let text = other.to_string();
                self.invalid(
                    "description",
                    false,
                    format!(
                        "`description` should be a string, found {}; using {text:?}",
                        kind_name(&other)
                    ),
                    "quote the description",
                );
                text
            }
            Some(other) => {
                self.invalid(
                    "description",
                    true,
                    format!(
                        "`description` must be a string, found {}; the skill is skipped",
                        kind_name(&other)
                    ),
                    "write the description as one string; use `description: >-` for several lines",
                );
                return None;
            }
        };
        if text.is_empty() {
            self.push(
                Diagnostic::error(
                    DiagnosticCode::MissingDescription,
                    "the skill has no description, so the model cannot tell when to use it; the skill is skipped",
                )
                .with_field("description")
                .with_hint("add `description: <what it does and when to use it>` to the front matter"),
                "description",
            );
            return None;
        }
        let chars = text.chars().count();
        if chars > DESCRIPTION_SOFT_LIMIT {
            self.push(
                Diagnostic::warning(
                    DiagnosticCode::InvalidField,
                    format!("`description` is {chars} characters; Agent Skills allows {DESCRIPTION_SOFT_LIMIT}"),
                )
                .with_field("description")
                .with_hint("shorten it; put details in the body"),
                "description",
            );
        }
        Some(text)
    }

    /// What the open Agent Skills specification rejects but Bcode loads:
    /// consecutive hyphens in an id, a `compatibility` over its limit.
    fn portable_limits(&mut self, id: Option<&SkillId>, compatibility: Option<&str>) {
        if let Some(id) = id.filter(|id| id.as_str().contains("--")) {
            // Kept as the id alone, rendered when shown: a registry that
            // mirrors repositories names most folders `owner--repo--skill`.
            self.push(Diagnostic::consecutive_hyphens(id.as_str()), "id");
        }
        let chars = compatibility.map_or(0, |text| text.chars().count());
        if chars > COMPATIBILITY_SOFT_LIMIT {
            self.push(
                Diagnostic::warning(
                    DiagnosticCode::InvalidField,
                    format!(
                        "`compatibility` is {chars} characters; Agent Skills allows {COMPATIBILITY_SOFT_LIMIT}"
                    ),
                )
                .with_field("compatibility")
                .with_hint("name only the environments the skill needs"),
                "compatibility",
            );
        }
    }

    fn string_list(&mut self, value: Option<Value>, field: &str) -> Vec<String> {
        let items = match value {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::String(s)) => s.split(',').map(str::to_owned).collect(),
            Some(Value::Array(items)) => {
                let mut out = Vec::new();
                for item in items {
                    match item {
                        Value::String(s) => out.push(s),
                        Value::Number(n) => out.push(n.to_string()),
                        other => self.invalid(
                            field,
                            false,
                            format!(
                                "`{field}` items must be strings, found {}; item ignored",
                                kind_name(&other)
                            ),
                            "write each item as a string",
                        ),
                    }
                }
                out
            }
            Some(other) => {
                self.invalid(
                    field,
                    false,
                    format!(
                        "`{field}` must be a list of strings, found {}; ignored",
                        kind_name(&other)
                    ),
                    "write a list, e.g. [a, b]",
                );
                return Vec::new();
            }
        };
        items
            .into_iter()
            .map(trimmed)
            .filter(|s| !s.is_empty())
            .collect()
    }

    fn keywords(&mut self, activation: Option<Value>) -> Vec<String> {
        match activation {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(mut table)) => {
                let keywords = self.string_list(table.remove("keywords"), "activation.keywords");
                for key in table.keys() {
                    self.unknown_field(
                        Diagnostic::info(
                            DiagnosticCode::UnknownField,
                            format!("unknown field `activation.{key}` is ignored"),
                        )
                        .with_field(format!("activation.{key}")),
                        "activation",
                    );
                }
                keywords
            }
            Some(other) => {
                self.invalid(
                    "activation",
                    false,
                    format!(
                        "`activation` must be a mapping, found {}; ignored",
                        kind_name(&other)
                    ),
                    "write `activation:` with a `keywords:` list under it",
                );
                Vec::new()
            }
        }
    }

    fn permissions(&mut self, value: Option<Value>) -> Vec<String> {
        match value {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(mut table)) => {
                let tools = self.string_list(table.remove("tools"), "permissions.tools");
                for key in table.keys() {
                    self.unknown_field(
                        Diagnostic::info(
                            DiagnosticCode::UnknownField,
                            format!("unknown field `permissions.{key}` is ignored"),
                        )
                        .with_field(format!("permissions.{key}")),
                        "permissions",
                    );
                }
                tools
            }
            Some(other) => {
                self.invalid(
                    "permissions",
                    false,
                    format!(
                        "`permissions` must be a mapping, found {}; ignored",
                        kind_name(&other)
                    ),
                    "write `permissions:` with a `tools:` list under it",
                );
                Vec::new()
            }
        }
    }

    /// Agent Skills writes `allowed-tools` as one space-separated string.
    fn allowed_tools(&mut self, value: Option<Value>) -> Vec<String> {
        match value {
            Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
            other => self.string_list(other, "allowed-tools"),
        }
    }

    fn hidden(&mut self, snake: Option<Value>, kebab: Option<Value>) -> bool {
        let snake = snake.and_then(|v| self.flag(v, "disable_model_invocation"));
        let kebab = kebab.and_then(|v| self.flag(v, "disable-model-invocation"));
        if let (Some(a), Some(b)) = (snake, kebab)
            && a != b
        {
            self.invalid(
                    "disable_model_invocation",
                    false,
                    "`disable_model_invocation` and `disable-model-invocation` disagree; the skill is hidden from the model".into(),
                    "keep one spelling",
                );
        }
        snake.unwrap_or(false) || kebab.unwrap_or(false)
    }

    fn flag(&mut self, value: Value, field: &str) -> Option<bool> {
        match value {
            Value::Bool(b) => Some(b),
            Value::Null => None,
            Value::String(s)
                if s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("false") =>
            {
                let b = s.eq_ignore_ascii_case("true");
                self.invalid(
                    field,
                    false,
                    format!("`{field}` should be a boolean, found the string {s:?}; read as {b}"),
                    &format!("write `{field}: {b}` without quotes"),
                );
                Some(b)
            }
            other => {
                self.invalid(
                    field,
                    false,
                    format!(
                        "`{field}` must be true or false, found {}; ignored",
                        kind_name(&other)
                    ),
                    &format!("write `{field}: true`"),
                );
                None
            }
        }
    }

    fn thinking_effort(&mut self, value: Option<Value>) -> Option<String> {
        match value? {
            Value::Null => None,
            Value::String(s)
                if THINKING_EFFORTS.contains(&s.trim().to_ascii_lowercase().as_str()) =>
            {
                Some(s.trim().to_ascii_lowercase())
            }
            other => {
                self.invalid(
                    "thinking_effort",
                    false,
                    format!(
                        "`thinking_effort` must be one of {}, found {other}; ignored",
                        THINKING_EFFORTS.join(", ")
                    ),
                    "use one of the listed efforts",
                );
                None
            }
        }
    }

    /// `paths`: a list of globs, or one string of them separated by commas
    /// (as Claude Code accepts). A glob that does not parse or is longer
    /// than [`MAX_GLOB_BYTES`], and every glob after the
    /// [`MAX_GLOBS_PER_SKILL`]th, is reported (`invalid_paths_glob`) and
    /// left out; the others still apply.
    fn paths(&mut self, value: Option<Value>) -> Vec<String> {
        let mut globs = self.string_list(value, "paths");
        if globs.len() > MAX_GLOBS_PER_SKILL {
            self.paths_glob(
                format!(
                    "`paths` has {} globs; only the first {MAX_GLOBS_PER_SKILL} are used",
                    globs.len()
                ),
                "cover several paths with one glob, such as `src/**` or `*.{ts,tsx}`",
            );
            globs.truncate(MAX_GLOBS_PER_SKILL);
        }
        let mut kept = Vec::with_capacity(globs.len());
        for (n, glob) in globs.into_iter().enumerate() {
            match check_glob(&glob) {
                Ok(_) => kept.push(glob),
                Err(GlobRefusal::TooLong(bytes)) => self.paths_glob(
                    format!(
                        "`paths` glob {} is {bytes} bytes; a glob longer than {MAX_GLOB_BYTES} bytes is ignored",
                        n + 1
                    ),
                    "shorten it: name a folder (`src/api`) or use `**` and `*` rather than spelling paths out",
                ),
                Err(GlobRefusal::Invalid(why)) => self.paths_glob(
                    format!("`paths` glob {glob:?} is not a valid glob ({why}); it is ignored"),
                    "write globs such as `src/**/*.rs` or `*.md`",
                ),
            }
        }
        kept
    }

    /// A `paths` glob left out: a warning, the skill still loads.
    fn paths_glob(&mut self, message: String, hint: &str) {
        let d = Diagnostic::warning(DiagnosticCode::InvalidPathsGlob, message);
        self.push(d.with_field("paths").with_hint(hint), "paths");
    }

    /// `argument-hint` is text such as `[file] [format]`; YAML reads an
    /// unquoted `[file]` as a list, which is put back as the author wrote it.
    fn argument_hint(&mut self, value: Option<Value>) -> Option<String> {
        match value {
            Some(Value::Array(items))
                if items
                    .iter()
                    .all(|item| !item.is_array() && !item.is_object()) =>
            {
                let words: Vec<String> = items
                    .iter()
                    .map(|item| match item {
                        Value::String(s) => s.trim().to_owned(),
                        other => other.to_string(),
                    })
                    .collect();
                Some(format!("[{}]", words.join(", ")))
            }
            other => self.text_field(other, "argument-hint"),
        }
    }

    fn metadata(&mut self, value: Option<Value>) -> FieldMap {
        match value {
            None | Some(Value::Null) => FieldMap::new(),
            Some(Value::Object(table)) => table.into_iter().collect(),
            Some(other) => {
                self.invalid(
                    "metadata",
                    false,
                    format!(
                        "`metadata` must be a mapping, found {}; ignored",
                        kind_name(&other)
                    ),
                    "write `metadata:` with keys under it",
                );
                FieldMap::new()
            }
        }
    }
}

fn dedup_in_order(items: &mut Vec<String>) {
    let mut seen = std::collections::BTreeSet::new();
    items.retain(|item| seen.insert(item.to_lowercase()));
}

#[cfg(test)]
mod tests {
    use super::{KNOWN_FIELDS, trimmed, validate};
    use bcode_skill_models::DiagnosticCode;
    use serde_json::{Map, Value};

    #[test]
    fn every_known_field_has_a_slot() {
        for field in KNOWN_FIELDS {
            let mut map = Map::new();
            map.insert((*field).to_owned(), Value::Null);
            let (_, diagnostics) = validate(map, "x", &|_| None);
            assert!(
                diagnostics
                    .iter()
                    .all(|d| d.code != DiagnosticCode::UnknownField),
                "{field}: {diagnostics:?}"
            );
        }
        let mut map = Map::new();
        map.insert("colour".to_owned(), Value::Null);
        let (_, diagnostics) = validate(map, "x", &|_| None);
        assert!(
            diagnostics
                .iter()
                .any(|d| d.code == DiagnosticCode::UnknownField)
        );
    }

    #[test]
    fn trimmed_keeps_the_allocation_and_matches_str_trim() {
        for raw in [
            "",
            "   ",
            "a",
            " a",
            "a ",
            "\t a b \r\n",
            "é ",
            " \u{3000}x\u{a0}",
        ] {
            assert_eq!(trimmed(raw.to_owned()), raw.trim(), "{raw:?}");
        }
        let clean = String::from("already clean");
        let at = clean.as_ptr();
        let kept = trimmed(clean);
        assert_eq!(kept.as_ptr(), at);
    }
}
