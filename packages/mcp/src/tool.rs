//! The `search_skills` tool, so any MCP-capable agent can route through
//! the served registry: its definition (every sentence from a template
//! under `templates/mcp/`), its arguments read and checked, and its answer
//! (each skill by the `skill://` URI, name and description `skills/list`
//! gives it, with its score and the query words it matched).
//!
//! As MCP's 2025-11-25 revision prescribes, arguments a model can correct
//! (a missing or empty query, a wrong type, a limit out of range, a query
//! over [`MAX_QUERY_BYTES`]) are answered with a tool result marked
//! `isError`, saying what to send instead; only an unknown tool is a
//! protocol error (`-32602`).

use bcode_skill::MatchedTerm;
use bcode_skill::{SearchHit, TemplateError, Templates};
use minijinja::context;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Skill, Tool, ToolAnnotations};
use serde::Serialize;
use serde_json::{Value, json};

/// The tool's name.
pub const SEARCH_TOOL: &str = "search_skills";

/// The longest query accepted, in bytes: far beyond any task described in
/// words, and a longer one is refused (not cut), so the model knows the
/// whole of what it sent was not searched. What a search costs is linear
/// in its query.
pub const MAX_QUERY_BYTES: usize = 64 * 1024;

/// Skills a search returns when `limit` is not given.
pub const DEFAULT_LIMIT: usize = 10;

/// The most skills one search returns.
pub const MAX_LIMIT: usize = 50;

/// The arguments of one call, checked.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SearchArgs {
    pub query: String,
    pub limit: usize,
}

/// Why the arguments of a call were refused: each is told to the model in
/// words of `mcp/search_skills_refused.j2`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    MissingQuery,
    /// `query` was this JSON type.
    QueryType(&'static str),
    BlankQuery,
    /// `query` was this many bytes.
    QueryTooLong(usize),
    /// `limit` was this JSON type, or this number.
    Limit(&'static str, Option<String>),
    UnknownArgument,
}

/// The tool's definition and the templates its refusals are worded by,
/// rendered once when the server is made.
#[derive(Debug)]
pub(crate) struct SearchTool {
    pub definition: Tool,
    templates: Templates,
}

impl SearchTool {
    /// The definition, its sentences rendered from `templates`.
    pub fn new(templates: Templates) -> Result<SearchTool, TemplateError> {
        let description = templates.render("mcp/search_skills.j2", context! {})?;
        let query = templates.render(
            "mcp/search_skills_query.j2",
            context! { max_bytes => MAX_QUERY_BYTES },
        )?;
        let limit = templates.render(
            "mcp/search_skills_limit.j2",
            context! { min => 1, max => MAX_LIMIT, default => DEFAULT_LIMIT },
        )?;
        let input = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": query},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "default": DEFAULT_LIMIT,
                    "description": limit,
                },
            },
            "required": ["query"],
            "additionalProperties": false,
        });
        let definition = Tool::new(SEARCH_TOOL, description, object(input))
            .with_raw_output_schema(std::sync::Arc::new(object(output_schema())))
            .with_annotations(
                ToolAnnotations::new()
                    .read_only(true)
                    .idempotent(true)
                    .open_world(false),
            );
        Ok(SearchTool {
            definition,
            templates,
        })
    }

    /// The tool result that tells the model why its arguments were
    /// refused and what to send instead.
    pub fn refused(&self, refusal: &Refusal) -> Result<CallToolResult, TemplateError> {
        let (problem, kind, value, bytes) = match refusal {
            Refusal::MissingQuery => ("missing_query", None, None, None),
            Refusal::QueryType(kind) => ("query_type", Some(*kind), None, None),
            Refusal::BlankQuery => ("blank_query", None, None, None),
            Refusal::QueryTooLong(bytes) => ("query_too_long", None, None, Some(*bytes)),
            Refusal::Limit(kind, value) => ("limit", Some(*kind), value.clone(), None),
            Refusal::UnknownArgument => ("unknown_argument", None, None, None),
        };
        let text = self.templates.render(
            "mcp/search_skills_refused.j2",
            context! {
                problem,
                kind,
                value,
                bytes,
                max_bytes => MAX_QUERY_BYTES,
                min => 1,
                max => MAX_LIMIT,
                default => DEFAULT_LIMIT,
            },
        )?;
        Ok(CallToolResult::error(vec![ContentBlock::text(text)]))
    }
}

/// The arguments of a call, checked (see the module documentation).
pub(crate) fn arguments(arguments: Option<&JsonObject>) -> Result<SearchArgs, Refusal> {
    let empty = JsonObject::new();
    let arguments = arguments.unwrap_or(&empty);
    if arguments.keys().any(|key| key != "query" && key != "limit") {
        return Err(Refusal::UnknownArgument);
    }
    let query = match arguments.get("query") {
        None => return Err(Refusal::MissingQuery),
        Some(Value::String(query)) => query,
        Some(other) => return Err(Refusal::QueryType(kind(other))),
    };
    if query.len() > MAX_QUERY_BYTES {
        return Err(Refusal::QueryTooLong(query.len()));
    }
    if query.trim().is_empty() {
        return Err(Refusal::BlankQuery);
    }
    let limit = match arguments.get("limit") {
        // A model may send `null` for an optional argument it leaves out.
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(Value::Number(number)) => {
            // JSON Schema counts `10.0` as an integer too.
            let whole = number.as_u64().or_else(|| {
                number
                    .as_f64()
                    .filter(|n| n.fract() == 0.0 && *n >= 0.0 && *n <= MAX_LIMIT as f64)
                    .map(|n| n as u64)
            });
            match whole {
                Some(limit) if (1..=MAX_LIMIT as u64).contains(&limit) => limit as usize,
                _ => return Err(Refusal::Limit("number", Some(number.to_string()))),
            }
        }
        Some(other) => return Err(Refusal::Limit(kind(other), None)),
    };
    Ok(SearchArgs {
        query: query.clone(),
        limit,
    })
}

/// The JSON type of `value`, as JSON Schema names it.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// One skill a search found: its entry as `skills/list` gives it, and why
/// it ranked.
#[derive(Debug)]
pub(crate) struct Found {
    pub skill: Skill,
    pub hit: SearchHit,
}

/// The answer to a search: the results as structured content, and the
/// same JSON as text for clients that read only text.
pub(crate) fn answer(found: &[Found]) -> CallToolResult {
    #[derive(Serialize)]
    struct Answer<'a> {
        results: Vec<Result<'a>>,
    }
    #[derive(Serialize)]
    struct Result<'a> {
        uri: &'a str,
        name: &'a str,
        description: &'a str,
        score: f64,
        coverage: f64,
        matched: &'a [MatchedTerm],
    }
    let results = found
        .iter()
        .map(|found| Result {
            uri: &found.skill.uri,
            name: &found.skill.frontmatter.name,
            description: &found.skill.frontmatter.description,
            score: rounded(found.hit.score),
            coverage: rounded(found.hit.coverage),
            matched: &found.hit.matched,
        })
        .collect();
    let value = serde_json::to_value(Answer { results }).unwrap_or(Value::Null);
    CallToolResult::structured(value)
}

/// A score with four decimals: enough to order by, and the same bytes on
/// every machine (an `f32`'s last digits are noise in JSON), as
/// `skills search --json` gives it.
fn rounded(value: f32) -> f64 {
    (f64::from(value) * 10_000.0).round() / 10_000.0
}

/// The schema of [`answer`]'s structured content.
fn output_schema() -> Value {
    let fields: Vec<&str> = bcode_skill::SearchField::ALL
        .iter()
        .map(|field| field.as_str())
        .collect();
    json!({
        "type": "object",
        "properties": {
            "results": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "uri": {"type": "string"},
                        "name": {"type": "string"},
                        "description": {"type": "string"},
                        "score": {"type": "number"},
                        "coverage": {"type": "number", "minimum": 0, "maximum": 1},
                        "matched": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "term": {"type": "string"},
                                    "fields": {
                                        "type": "array",
                                        "items": {"type": "string", "enum": fields},
                                    },
                                },
                                "required": ["term", "fields"],
                            },
                        },
                    },
                    "required": ["uri", "name", "description", "score", "coverage", "matched"],
                },
            },
        },
        "required": ["results"],
    })
}

/// The object `value` holds (every schema here is one).
fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn args(value: Value) -> Result<SearchArgs, Refusal> {
        arguments(Some(&object(value)))
    }

    #[test]
    fn arguments_are_read_with_their_default_and_bounds() {
        let ok = |query: &str, limit| {
            Ok(SearchArgs {
                query: query.to_owned(),
                limit,
            })
        };
        assert_eq!(args(json!({"query": "pdf"})), ok("pdf", 10));
        assert_eq!(args(json!({"query": "pdf", "limit": null})), ok("pdf", 10));
        assert_eq!(args(json!({"query": "pdf", "limit": 1})), ok("pdf", 1));
        assert_eq!(args(json!({"query": "pdf", "limit": 50})), ok("pdf", 50));
        assert_eq!(args(json!({"query": "pdf", "limit": 3.0})), ok("pdf", 3));
        let long = "a".repeat(MAX_QUERY_BYTES);
        assert_eq!(args(json!({"query": long})), ok(&long, 10));
    }

    #[test]
    fn bad_arguments_are_refused_with_what_was_wrong() {
        let limit = |value: &str| Err(Refusal::Limit("number", Some(value.to_owned())));
        for (given, refused) in [
            (json!({}), Err(Refusal::MissingQuery)),
            (json!({"limit": 3}), Err(Refusal::MissingQuery)),
            (json!({"query": 7}), Err(Refusal::QueryType("number"))),
            (json!({"query": null}), Err(Refusal::QueryType("null"))),
            (json!({"query": ["pdf"]}), Err(Refusal::QueryType("array"))),
            (json!({"query": " \n\t"}), Err(Refusal::BlankQuery)),
            (json!({"query": ""}), Err(Refusal::BlankQuery)),
            (json!({"query": "pdf", "limit": 0}), limit("0")),
            (json!({"query": "pdf", "limit": 51}), limit("51")),
            (json!({"query": "pdf", "limit": -2}), limit("-2")),
            (json!({"query": "pdf", "limit": 2.5}), limit("2.5")),
            (json!({"query": "pdf", "limit": 1e300}), limit("1e+300")),
            (
                json!({"query": "pdf", "limit": "5"}),
                Err(Refusal::Limit("string", None)),
            ),
            (
                json!({"query": "pdf", "limt": 5}),
                Err(Refusal::UnknownArgument),
            ),
        ] {
            assert_eq!(args(given.clone()), refused, "{given}");
        }
        assert_eq!(arguments(None), Err(Refusal::MissingQuery));
        let over = "a".repeat(MAX_QUERY_BYTES + 1);
        assert_eq!(
            args(json!({"query": over})),
            Err(Refusal::QueryTooLong(MAX_QUERY_BYTES + 1))
        );
    }

    #[test]
    fn each_refusal_says_what_to_send_instead() {
        let tool = SearchTool::new(Templates::builtin()).unwrap();
        let told = |refusal: Refusal| {
            let result = tool.refused(&refusal).unwrap();
            assert_eq!(result.is_error, Some(true));
            assert_eq!(result.structured_content, None);
            result.content[0].as_text().unwrap().text.clone()
        };
        assert_eq!(
            [
                told(Refusal::MissingQuery),
                told(Refusal::QueryType("array")),
                told(Refusal::QueryType("number")),
                told(Refusal::BlankQuery),
                told(Refusal::QueryTooLong(70_000)),
                told(Refusal::Limit("number", Some("51".into()))),
                told(Refusal::Limit("string", None)),
                told(Refusal::Limit("null", None)),
                told(Refusal::UnknownArgument),
            ],
            [
                "`query` is required: the task to find skills for, as a string.",
                "`query` must be a string (the task to find skills for), not an array.",
                "`query` must be a string (the task to find skills for), not a number.",
                "`query` is empty: describe the task in a few words.",
                "`query` is 70000 bytes, over the limit of 65536: describe the task in fewer words.",
                "`limit` must be an integer from 1 to 50 (10 when not given), not 51.",
                "`limit` must be an integer from 1 to 50 (10 when not given), not a string.",
                "`limit` must be an integer from 1 to 50 (10 when not given), not null.",
                "search_skills takes only the arguments `query` and `limit`.",
            ]
        );
    }
}
