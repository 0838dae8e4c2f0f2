//! The pure core of skill loading: bytes of one instruction file in, a
//! summary (or nothing) and its diagnostics out. No filesystem access, so every
//! front-matter case is testable without temporary directories.

use std::path::PathBuf;
use std::sync::Arc;

use bcode_skill_models::{
    Diagnostic, DiagnosticCode, SkillLayout, SkillManifest, SkillSource, SkillSummary,
};

use crate::parse::front_matter::{self, Split, Syntax};
use crate::parse::yaml::{Repair, RepairKind};
use crate::parse::{manifest, toml_front_matter, yaml};

/// Which file made a folder (or root entry) a skill candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InstructionKind {
    /// `SKILL.md` or `skill.md`: the name declares a skill, so a file without
    /// front matter is an error.
    SkillFile,
    /// `README.md` in a folder: a skill only when it has front matter.
    Readme,
    /// A flat `<root>/<name>.md`: a skill only when it has front matter.
    Flat,
}

/// Where a candidate file sits, as discovery found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillOrigin {
    /// Shared by every candidate of a root (one allocation per root).
    pub source: Arc<SkillSource>,
    /// Folder, flat file or provided, as the summary will record it.
    pub layout: SkillLayout,
    /// Which file name made it a candidate, which decides whether a file
    /// without front matter is a skill or documentation.
    pub kind: InstructionKind,
    /// Absolute path of the instruction file.
    pub location: PathBuf,
    /// The skill directory: the folder, or the root for a flat file.
    pub directory: PathBuf,
    /// The folder name or file stem, used when front matter has no `id`.
    pub inferred_id: String,
}

/// What parsing one file produced.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseOutcome {
    /// Shared, so the cache and every registry built from it hold one copy.
    pub skill: Option<Arc<SkillSummary>>,
    /// The file is documentation, not a skill (a README or flat markdown file
    /// without front matter): its folder is searched for skills like any other.
    pub not_a_skill: bool,
    /// Everything found wrong or worth noting, whether or not a skill came
    /// out.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses one instruction file. `bytes` holds at least the whole front matter
/// (discovery reads a prefix and extends it when the block is not closed).
pub fn parse_skill(origin: &SkillOrigin, bytes: &[u8]) -> ParseOutcome {
    parse_split(origin.clone(), bytes, front_matter::split(bytes))
}

/// [`parse_skill`] of bytes already split (discovery splits a prefix to
/// decide whether to read more, and hands the answer on). Takes the origin
/// whole so the summary owns its paths instead of copying them.
pub(crate) fn parse_split(origin: SkillOrigin, bytes: &[u8], split: Split) -> ParseOutcome {
    parse_split_keeping(origin, bytes, split, None)
}

/// [`parse_split`] that also writes into `fields`, when given, the front
/// matter's fields as written (what [`crate::parse_document`] gives), as
/// compact JSON text: one parse serves both (a recording discovery keeps
/// them for the MCP server's entries).
pub(crate) fn parse_split_keeping(
    origin: SkillOrigin,
    bytes: &[u8],
    split: Split,
    fields: Option<&mut Option<Box<str>>>,
) -> ParseOutcome {
    let mut outcome = ParseOutcome {
        skill: None,
        not_a_skill: false,
        diagnostics: Vec::new(),
    };
    let (syntax, raw_range, first_line, body_offset) = match split {
        Split::Block {
            syntax,
            raw,
            first_line,
            body_offset,
        } => (syntax, raw, first_line, body_offset),
        Split::None { .. } if origin.kind != InstructionKind::SkillFile => {
            outcome.not_a_skill = true;
            outcome.diagnostics.push(
                Diagnostic::info(
                    DiagnosticCode::NotASkill,
                    "markdown file without front matter is treated as documentation, not a skill",
                )
                .with_hint("add front matter with a `description` to make it a skill"),
            );
            return finish(&origin, outcome);
        }
        Split::None { .. } => {
            outcome.diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::MissingDescription,
                    "the skill file has no front matter, so it has no description; the skill is skipped",
                )
                .with_position(1, Some(1))
                .with_hint("start the file with `---`, a `description: ...` line and a closing `---`"),
            );
            return finish(&origin, outcome);
        }
        Split::Unterminated { syntax } => {
            let delimiter = delimiter(syntax);
            outcome.diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::UnterminatedFrontMatter,
                    format!("front matter opened with `{delimiter}` on line 1 is never closed; the skill is skipped"),
                )
                .with_position(1, Some(1))
                .with_hint(format!("add a line containing only `{delimiter}` after the last front-matter field")),
            );
            return finish(&origin, outcome);
        }
    };
    let raw = match std::str::from_utf8(&bytes[raw_range.clone()]) {
        Ok(raw) => raw,
        Err(err) => {
            let valid = &bytes[raw_range.start..raw_range.start + err.valid_up_to()];
            let valid = String::from_utf8_lossy(valid);
            let (line, column) = toml_front_matter::line_column(&valid, valid.len());
            outcome.diagnostics.push(
                Diagnostic::error(
                    DiagnosticCode::InvalidUtf8,
                    "front matter is not valid UTF-8; the skill is skipped",
                )
                .with_position(first_line + line - 1, Some(column))
                .with_hint("save the file as UTF-8"),
            );
            return finish(&origin, outcome);
        }
    };
    let parsed = match syntax {
        Syntax::Yaml => yaml::parse(raw),
        Syntax::Toml => toml_front_matter::parse(raw).map(|map| (map, Vec::new())),
    };
    let map = match parsed {
        Ok((map, repairs)) => {
            outcome.diagnostics.extend(
                repairs
                    .iter()
                    .map(|repair| repair_diagnostic(repair, first_line, true)),
            );
            map
        }
        Err(err) => {
            let (code, hint) = if err.too_complex {
                (
                    DiagnosticCode::FrontMatterTooComplex,
                    "front matter is limited in nesting, aliases and size; keep it to plain fields",
                )
            } else if syntax == Syntax::Yaml {
                (
                    DiagnosticCode::MalformedFrontMatter,
                    "quote values that contain `: ` or start with a special character, and indent with spaces",
                )
            } else {
                (
                    DiagnosticCode::MalformedFrontMatter,
                    "TOML needs quoted strings and one `key = value` per line",
                )
            };
            let mut d = Diagnostic::error(
                code,
                format!(
                    "{} front matter is invalid: {}; the skill is skipped",
                    syntax_name(syntax),
                    err.message
                ),
            )
            .with_hint(hint);
            if let Some(line) = err.line {
                d = d.with_position(first_line + line.saturating_sub(1), err.column);
            }
            // Every other problem recovery found, each with its fix, so
            // one run names them all, in file order.
            let mut found: Vec<Diagnostic> = err
                .repairs
                .iter()
                .map(|repair| repair_diagnostic(repair, first_line, false))
                .collect();
            found.push(d);
            found.sort_by_key(|d| (d.line, d.column));
            outcome.diagnostics.extend(found);
            return finish(&origin, outcome);
        }
    };
    // Built on the first diagnostic that needs a line, so a file without
    // diagnostics never pays for it, and built once, so thousands of
    // unknown fields cost one pass over the text, not one each.
    let lines = std::cell::OnceCell::new();
    let line_of = |key: &str| {
        lines
            .get_or_init(|| key_lines(raw, syntax))
            .get(key)
            .map(|l| first_line + l - 1)
    };
    if let Some(fields) = fields {
        *fields = serde_json::to_string(&map).ok().map(String::into_boxed_str);
    }
    let (manifest, mut diagnostics) = manifest::validate(map, &origin.inferred_id, &line_of);
    // A description that is not there has no line of its own: the
    // diagnostic points at the front matter's opening line, the block the
    // field belongs in.
    for d in &mut diagnostics {
        if d.code == DiagnosticCode::MissingDescription && d.line.is_none() {
            d.line = Some(first_line.saturating_sub(1).max(1));
            d.column = Some(1);
        }
    }
    outcome.diagnostics.extend(diagnostics);
    let Some(manifest) = manifest else {
        return finish(&origin, outcome);
    };
    // One copy of the path, for the skill and its diagnostics.
    let location: Arc<std::path::Path> = Arc::from(origin.location.as_path());
    label(&mut outcome.diagnostics, &location, Some(&manifest));
    outcome.skill = Some(Arc::new(SkillSummary {
        manifest,
        source: origin.source,
        layout: origin.layout,
        directory_override: bcode_skill_models::directory_override(
            &origin.location,
            origin.directory,
        ),
        location,
        body_offset,
    }));
    outcome
}

/// The diagnostic for a value repaired in memory: what was wrong, how it
/// was read, and (as the hint) how to fix the file. `loaded`: the repaired
/// text parsed (a warning); otherwise the file is skipped for another
/// error and this is one more problem to fix (an error).
fn repair_diagnostic(repair: &Repair, first_line: u32, loaded: bool) -> Diagnostic {
    let key = &repair.key;
    let path = &repair.path;
    let (problem, reading, hint) = match &repair.kind {
        RepairKind::UnquotedColon => (
            format!("the value of `{path}` contains `: ` and is not quoted, which is invalid YAML"),
            "it was read as a quoted string",
            format!("quote the value: {key}: {}", repair.quoted),
        ),
        RepairKind::TextAfterBlockHeader { header } => (
            format!(
                "the value of `{path}` has text after the block-scalar indicator `{header}` on the same line, which is invalid YAML"
            ),
            "the text and the indented lines below it were read as the value",
            format!(
                "put `{key}: {header}` alone on its line and the text on the lines below it, indented"
            ),
        ),
        RepairKind::IndicatorStart { indicator } => (
            format!(
                "the value of `{path}` starts with {}, which YAML reads as {}, and is invalid YAML as written",
                code_span(*indicator),
                indicator_meaning(*indicator)
            ),
            "it was read as plain text",
            format!("quote the value: {key}: {}", repair.quoted),
        ),
        RepairKind::ReservedFlowItem { indicator } => (
            format!(
                "an item of the list `{path}` starts with {}, which YAML reserves, and is invalid YAML as written",
                code_span(*indicator)
            ),
            "such items were read as text",
            format!("quote the items: {key}: {}", repair.quoted),
        ),
    };
    let d = if loaded {
        Diagnostic::warning(
            DiagnosticCode::RecoveredFrontMatter,
            format!("{problem}; {reading}"),
        )
    } else {
        Diagnostic::error(DiagnosticCode::MalformedFrontMatter, problem)
    };
    d.with_position(first_line + repair.line - 1, Some(repair.column))
        .with_field(path.clone())
        .with_hint(hint)
}

/// `c` as a markdown code span (a backtick needs a double-backtick span).
fn code_span(c: char) -> String {
    if c == '`' {
        "`` ` ``".to_owned()
    } else {
        format!("`{c}`")
    }
}

/// What an indicator character at the start of a value means to YAML.
fn indicator_meaning(indicator: char) -> &'static str {
    match indicator {
        '[' => "the start of a list",
        '{' => "the start of a mapping",
        '*' => "an alias",
        '&' => "an anchor",
        '!' => "a tag",
        '-' => "a list item",
        '|' | '>' => "a block-scalar header",
        '%' => "a directive",
        _ => "a reserved character",
    }
}

/// Attaches the path to every diagnostic of an outcome without a skill.
fn finish(origin: &SkillOrigin, mut outcome: ParseOutcome) -> ParseOutcome {
    if !outcome.diagnostics.is_empty() {
        let location = Arc::from(origin.location.as_path());
        label(&mut outcome.diagnostics, &location, None);
    }
    outcome
}

/// Attaches `location` and (when known) the skill's id to every diagnostic,
/// and gives back the room the list grew into: an outcome's diagnostics
/// are kept until the build ends, and a list grown by one push holds four.
fn label(
    diagnostics: &mut Vec<Diagnostic>,
    location: &Arc<std::path::Path>,
    skill: Option<&SkillManifest>,
) {
    diagnostics.shrink_to_fit();
    let id = skill.map(|m| &m.id);
    for d in diagnostics.iter_mut() {
        d.path = Some(Arc::clone(location));
        if let Some(id) = id.filter(|_| d.skill_id().is_none()) {
            d.set_skill(id);
        }
    }
}

fn delimiter(syntax: Syntax) -> &'static str {
    match syntax {
        Syntax::Yaml => "---",
        Syntax::Toml => "+++",
    }
}

fn syntax_name(syntax: Syntax) -> &'static str {
    match syntax {
        Syntax::Yaml => "YAML",
        Syntax::Toml => "TOML",
    }
}

/// The 1-based line of `raw` where each top-level key is first written,
/// found in one pass. A YAML key is written `key:` at the start of a line;
/// a TOML key `key =` or `key=`, or `[key]` / `[[key]]` for a table. Each
/// line offers the text before its first `:` (or `=`), which is exactly
/// the key for every key without that character, and, for YAML, the text
/// before the first `:` followed by a space or the line's end, which is
/// where a plain key containing `:` ends.
fn key_lines(raw: &str, syntax: Syntax) -> rustc_hash::FxHashMap<&str, u32> {
    let mut lines: rustc_hash::FxHashMap<&str, u32> = rustc_hash::FxHashMap::default();
    for (index, line) in raw.lines().enumerate() {
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let mut offer = |key| {
            lines.entry(key).or_insert(number);
        };
        match syntax {
            Syntax::Yaml => yaml_line_keys(line).for_each(&mut offer),
            Syntax::Toml => {
                if let Some(equals) = line.find('=') {
                    offer(line[..equals].trim_end());
                } else if let Some(header) = line.trim().strip_prefix('[') {
                    let header = header.strip_prefix('[').unwrap_or(header);
                    if let Some(end) = header.find(']') {
                        offer(header[..end].trim());
                    }
                }
            }
        }
    }
    lines
}

/// The keys a YAML line may start: the text before its first `:`, and the
/// text before its first `:` followed by a space, a tab or the line's end
/// (where a plain key containing `:` ends) when that is another. Shared
/// with the portability lint, which indexes its lines the same way.
pub(crate) fn yaml_line_keys(line: &str) -> impl Iterator<Item = &str> {
    let first = line.find(':');
    let key_end = line
        .match_indices(':')
        .map(|(at, _)| at)
        .find(|&at| line[at + 1..].is_empty() || line[at + 1..].starts_with([' ', '\t']));
    let second = key_end.filter(|&end| Some(end) != first);
    [first, second]
        .into_iter()
        .flatten()
        .map(move |end| &line[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search this index replaced: one scan of the text per key.
    fn key_line(raw: &str, key: &str, syntax: Syntax) -> Option<u32> {
        let index = raw.lines().position(|line| {
            let Some(rest) = line.strip_prefix(key) else {
                return false;
            };
            match syntax {
                Syntax::Yaml => rest.starts_with(':'),
                Syntax::Toml => rest.trim_start().starts_with('='),
            }
        })?;
        u32::try_from(index + 1).ok()
    }

    #[test]
    fn every_form_of_a_key_is_found_on_its_first_line() {
        let yaml = "id: a\nurl:http: x\nname:\n  nested: y\nid: again\n";
        let lines = key_lines(yaml, Syntax::Yaml);
        let found = |key| lines.get(key).copied();
        assert_eq!(
            ["id", "url", "url:http", "name", "nested"].map(found),
            [Some(1), Some(2), Some(2), Some(3), None]
        );
        let toml = "id = \"a\"\nname=\"n\"\n[activation]\nkeywords = []\n[[table]]\n";
        let lines = key_lines(toml, Syntax::Toml);
        let found = |key| lines.get(key).copied();
        assert_eq!(
            ["id", "name", "activation", "keywords", "table"].map(found),
            [Some(1), Some(2), Some(3), Some(4), Some(5)]
        );
    }

    proptest::proptest! {
        /// For every key without the separator character, the index agrees
        /// with the per-key scan it replaced.
        #[test]
        fn the_index_agrees_with_a_scan_per_key(
            text in "([a-c]{0,3}[:= \\[\\]]{0,2}[a-c ]{0,2}\n){0,12}",
            key in "[a-c]{1,3}",
        ) {
            for syntax in [Syntax::Yaml, Syntax::Toml] {
                // The scan never found a TOML table header; the index does.
                let text = match syntax {
                    Syntax::Yaml => text.clone(),
                    Syntax::Toml => text.replace(['[', ']'], "("),
                };
                proptest::prop_assert_eq!(
                    key_lines(&text, syntax).get(key.as_str()).copied(),
                    key_line(&text, &key, syntax),
                    "{:?} {:?}", syntax, text
                );
            }
        }
    }
}
