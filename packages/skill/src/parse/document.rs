//! Front matter plus body for any markdown document that shares the skill
//! file format (repository invariants, for example): the same splitting,
//! budgets and YAML/TOML handling as skills, without skill validation.

use serde_json::{Map, Value};

use crate::parse::front_matter::{self, Split, Syntax};
use crate::parse::{toml_front_matter, yaml};

/// A parsed document.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// The front-matter mapping (empty when there is none).
    pub fields: Map<String, Value>,
    /// The body, after the front matter.
    pub body: String,
    /// Whether the document had front matter at all.
    pub has_front_matter: bool,
}

/// Why a document's front matter could not be used, with its file line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DocumentError {
    /// What is wrong with the front matter, from the YAML or TOML parser or
    /// the splitter.
    pub message: String,
    /// 1-based line in the whole file (not the front matter), where known.
    pub line: Option<u32>,
    /// 1-based column, where known.
    pub column: Option<u32>,
}

/// Parses `text` (a whole file). YAML recoveries (see `yaml::parse`) are
/// applied silently here; callers that need to report them use the skill
/// parser.
pub fn parse_document(text: &str) -> Result<Document, DocumentError> {
    match front_matter::split(text.as_bytes()) {
        Split::None { body_offset } => Ok(Document {
            fields: Map::new(),
            body: text[body_offset..].to_owned(),
            has_front_matter: false,
        }),
        Split::Unterminated { .. } => Err(DocumentError {
            message: "front matter is never closed".into(),
            line: Some(1),
            column: Some(1),
        }),
        Split::Block {
            syntax,
            raw,
            first_line,
            body_offset,
        } => {
            let raw = &text[raw];
            let parsed = match syntax {
                Syntax::Yaml => yaml::parse(raw).map(|(map, _)| map),
                Syntax::Toml => toml_front_matter::parse(raw),
            };
            let fields = parsed.map_err(|err| DocumentError {
                message: err.message,
                line: err.line.map(|l| first_line + l.saturating_sub(1)),
                column: err.column,
            })?;
            Ok(Document {
                fields,
                body: text[body_offset..].to_owned(),
                has_front_matter: true,
            })
        }
    }
}
