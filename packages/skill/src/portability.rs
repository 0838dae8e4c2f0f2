//! The portability lint behind `skills doctor --profile`: what another
//! agent's rules reject in a skill file that Bcode loads. A pure function
//! over the file's bytes and its folder's name; each finding is a warning
//! with a stable `portability_*` code naming the rule, the line, and a
//! hint saying the fix. Nothing here changes how Bcode loads a skill.

use std::collections::BTreeMap;

use bcode_skill_models::{Diagnostic, DiagnosticCode};
use serde_json::{Map, Value};
use unicode_normalization::UnicodeNormalization;

use crate::parse::front_matter::{self, Split, Syntax};

/// Whose rules a skill is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PortabilityProfile {
    /// The open Agent Skills specification, as its reference validator
    /// (`skills-ref validate`) checks it.
    AgentSkills,
    /// Claude Code's rules for a skill's `name` and `description`.
    Claude,
    /// What the Codex CLI's skill loader refuses: a `SKILL.md` whose YAML
    /// front matter lacks a `name` or `description` string, or whose name,
    /// description or `metadata.short-description` (whitespace collapsed)
    /// is over its limit.
    Codex,
}

impl PortabilityProfile {
    /// Every profile's name, as `--profile` takes it.
    pub const NAMES: &'static [&'static str] = &["agentskills", "claude", "codex"];

    /// The profile called `name`.
    pub fn from_name(name: &str) -> Option<PortabilityProfile> {
        match name {
            "agentskills" => Some(PortabilityProfile::AgentSkills),
            "claude" => Some(PortabilityProfile::Claude),
            "codex" => Some(PortabilityProfile::Codex),
            _ => None,
        }
    }

    /// The name `--profile` takes.
    pub fn name(self) -> &'static str {
        match self {
            PortabilityProfile::AgentSkills => "agentskills",
            PortabilityProfile::Claude => "claude",
            PortabilityProfile::Codex => "codex",
        }
    }

    /// How messages name the rules' owner.
    fn owner(self) -> &'static str {
        match self {
            PortabilityProfile::AgentSkills => "Agent Skills",
            PortabilityProfile::Claude => "Claude Code",
            PortabilityProfile::Codex => "Codex",
        }
    }
}

/// What happens to a skill whose name [`mcp_clients_refuse`], in the words
/// the lint and `bcode-prompt mcp` use.
pub const MCP_CLIENTS_REFUSE: &str = "common MCP clients (FastMCP, fast-agent, the MCP Inspector) refuse a skill name that is not ASCII, and one such name makes FastMCP and fast-agent drop every skill of the server that lists it";

/// Whether common MCP clients refuse a skill named `name` served over MCP
/// (SEP-2640 allows any Unicode letter, as the Agent Skills specification
/// does; FastMCP 4.1.6, fast-agent 0.10.48 and the MCP Inspector 2.12
/// accept ASCII alone).
pub fn mcp_clients_refuse(name: &str) -> bool {
    !name.is_ascii()
}

/// The top-level keys the open specification allows.
pub const AGENT_SKILLS_FIELDS: &[&str] = &[
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];

const MAX_NAME_CHARS: usize = 64;
const MAX_DESCRIPTION_CHARS: usize = 1024;
const MAX_COMPATIBILITY_CHARS: usize = 500;
const RESERVED_WORDS: &[&str] = &["anthropic", "claude"];

/// One skill file to lint: its bytes as on disk, the name of the file and
/// the name of the folder holding it.
#[derive(Clone, Copy, Debug)]
pub struct LintInput<'a> {
    /// The whole file, byte-order mark and all.
    pub text: &'a [u8],
    /// The instruction file's name (`SKILL.md`).
    pub file_name: &'a str,
    /// The name of the folder holding it.
    pub folder: &'a str,
}

/// Every finding of `profile`'s rules in one file, in rule order, as
/// warnings without a path (the caller knows it).
pub fn lint_portability(profile: PortabilityProfile, input: LintInput<'_>) -> Vec<Diagnostic> {
    let mut lint = Lint {
        profile,
        found: Vec::new(),
        lines: Vec::new(),
        top_level: BTreeMap::new(),
        first_line: 1,
    };
    lint.run(input);
    lint.found
}

struct Lint<'a> {
    profile: PortabilityProfile,
    found: Vec<Diagnostic>,
    /// The front matter's lines, to find a finding's line by its number.
    lines: Vec<&'a str>,
    /// Each top-level key's first line (an index into `lines`), made in
    /// one pass: a lookup per key that scanned every line made a file of
    /// 4,000 unknown keys and 45,000 lines cost 40 s under `agentskills`.
    top_level: BTreeMap<&'a str, usize>,
    first_line: u32,
}

impl<'a> Lint<'a> {
    fn push(
        &mut self,
        code: DiagnosticCode,
        line: Option<u32>,
        field: Option<&str>,
        message: String,
        hint: String,
    ) {
        let mut d = Diagnostic::warning(
            code,
            format!(
                "{} ({}): {message}",
                self.profile.owner(),
                self.profile.name()
            ),
        )
        .with_hint(hint);
        if let Some(line) = line {
            d = d.with_position(line, Some(1));
        }
        if let Some(field) = field {
            d = d.with_field(field.to_owned());
        }
        self.found.push(d);
    }

    fn run(&mut self, input: LintInput<'a>) {
        let agent_skills = self.profile == PortabilityProfile::AgentSkills;
        let codex = self.profile == PortabilityProfile::Codex;
        if (agent_skills || codex) && input.text.starts_with(b"\xEF\xBB\xBF") {
            self.push(
                DiagnosticCode::PortabilityByteOrderMark,
                Some(1),
                None,
                "the file starts with a byte-order mark, so it does not start with `---`".into(),
                "save the file as UTF-8 without a byte-order mark".into(),
            );
        }
        // The open validator also takes `skill.md`; Codex reads `SKILL.md` alone.
        let file_ok =
            input.file_name == "SKILL.md" || (agent_skills && input.file_name == "skill.md");
        if (agent_skills || codex) && !file_ok {
            self.push(
                DiagnosticCode::PortabilityFileName,
                None,
                None,
                format!(
                    "a skill is a folder holding `SKILL.md`; this one is `{}`",
                    input.file_name
                ),
                format!(
                    "move it to `{}/SKILL.md`",
                    if input.file_name.ends_with(".md") && input.file_name != "README.md" {
                        input.file_name.trim_end_matches(".md")
                    } else {
                        input.folder
                    }
                ),
            );
        }
        let Some(map) = self.front_matter(input.text) else {
            return;
        };
        if codex {
            self.codex(&map);
            return;
        }
        self.name(&map, input.folder);
        self.description(&map);
        if agent_skills {
            self.compatibility(&map);
            self.allowed_tools(&map);
            self.unknown_fields(&map);
            self.metadata(&map);
        }
    }

    /// The front matter as a YAML reader types it, or `None` (with a
    /// finding) when another agent would not read it at all.
    fn front_matter(&mut self, text: &'a [u8]) -> Option<Map<String, Value>> {
        let (raw, first_line) = match front_matter::split(text) {
            Split::Block {
                syntax: Syntax::Yaml,
                raw,
                first_line,
                ..
            } => (raw, first_line),
            Split::Block {
                syntax: Syntax::Toml,
                ..
            } => {
                self.push(
                    DiagnosticCode::PortabilityFrontMatter,
                    Some(1),
                    None,
                    "front matter is TOML (`+++`); other agents read only YAML between `---` lines"
                        .into(),
                    "rewrite the front matter as YAML between `---` lines".into(),
                );
                return None;
            }
            Split::None { .. } | Split::Unterminated { .. } => {
                self.push(
                    DiagnosticCode::PortabilityFrontMatter,
                    Some(1),
                    None,
                    "the file has no YAML front matter between `---` lines".into(),
                    "start the file with `---`, `name:` and `description:` lines and a closing `---`"
                        .into(),
                );
                return None;
            }
        };
        let raw = std::str::from_utf8(text.get(raw)?).ok()?;
        self.lines = raw.lines().collect();
        self.top_level = key_lines(self.lines.iter().copied().enumerate());
        self.first_line = first_line;
        match crate::parse::yaml::parse_typed(raw) {
            Ok(map) => Some(map),
            Err(err) => {
                let line = err.line.map(|l| first_line + l.saturating_sub(1));
                self.push(
                    DiagnosticCode::PortabilityFrontMatter,
                    line,
                    None,
                    format!(
                        "the front matter is not valid YAML ({}); Bcode may repair it, other agents reject it",
                        err.message
                    ),
                    "quote values that contain `: ` or start with a special character".into(),
                );
                // The other rules still apply to what the author meant.
                crate::parse::yaml::parse_typed_recovered(raw)
            }
        }
    }

    /// The file line of top-level `key`.
    fn line_of(&self, key: &str) -> Option<u32> {
        self.file_line(*self.top_level.get(key)?)
    }

    /// The file line of front-matter line `index`.
    fn file_line(&self, index: usize) -> Option<u32> {
        u32::try_from(index).ok().map(|i| self.first_line + i)
    }

    /// The first line of each key nested (indented) anywhere after
    /// top-level `parent`'s line, made in one pass; the lines are those of
    /// the front matter, the map borrows only them.
    fn nested_lines(&self, parent: &str) -> BTreeMap<&'a str, usize> {
        let Some(&start) = self.top_level.get(parent) else {
            return BTreeMap::new();
        };
        let indented = self
            .lines
            .iter()
            .copied()
            .enumerate()
            .skip(start + 1)
            .filter_map(|(index, line)| {
                let body = line.trim_start_matches(' ');
                (body.len() < line.len()).then_some((index, body))
            });
        key_lines(indented)
    }

    fn name(&mut self, map: &Map<String, Value>, folder: &str) {
        let line = self.line_of("name");
        let name = match map.get("name") {
            Some(Value::String(name)) if !name.trim().is_empty() => name.trim().nfkc().collect(),
            // Claude Code falls back to the folder's name.
            None if self.profile == PortabilityProfile::Claude => folder.nfkc().collect::<String>(),
            other => {
                let (message, hint) = match other {
                    None => (
                        "there is no `name`".to_owned(),
                        format!("add `name: {}`", suggest_name(folder)),
                    ),
                    Some(value) => (
                        format!(
                            "`name` must be a non-empty string, found {}",
                            crate::parse::yaml::kind_name(value)
                        ),
                        format!("write `name: {}`", suggest_name(folder)),
                    ),
                };
                self.push(
                    DiagnosticCode::PortabilityNameMissing,
                    line.or(Some(self.first_line)),
                    Some("name"),
                    message,
                    hint,
                );
                return;
            }
        };
        let field = Some("name");
        let chars = name.chars().count();
        if chars > MAX_NAME_CHARS {
            self.push(
                DiagnosticCode::PortabilityNameTooLong,
                line,
                field,
                format!("the name is {chars} characters; at most {MAX_NAME_CHARS} are allowed"),
                "shorten the name (and rename the folder to match)".into(),
            );
        }
        if name != name.to_lowercase() {
            self.push(
                DiagnosticCode::PortabilityNameUppercase,
                line,
                field,
                format!("the name `{name}` has uppercase letters"),
                format!("use `name: {}`", suggest_name(&name)),
            );
        }
        if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
            self.push(
                DiagnosticCode::PortabilityNameHyphens,
                line,
                field,
                format!(
                    "the name `{name}` starts or ends with a hyphen or has two hyphens in a row"
                ),
                format!("use `name: {}`", suggest_name(&name)),
            );
        }
        let allowed = |c: char| match self.profile {
            PortabilityProfile::AgentSkills => c.is_alphanumeric() || c == '-',
            PortabilityProfile::Claude | PortabilityProfile::Codex => {
                c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
            }
        };
        if !name.chars().all(|c| allowed(c) || c.is_uppercase()) {
            let what = match self.profile {
                PortabilityProfile::AgentSkills => "letters, digits and hyphens",
                PortabilityProfile::Claude | PortabilityProfile::Codex => {
                    "lowercase ASCII letters, digits and hyphens"
                }
            };
            self.push(
                DiagnosticCode::PortabilityNameCharacters,
                line,
                field,
                format!("the name `{name}` has characters other than {what}"),
                format!("use `name: {}`", suggest_name(&name)),
            );
        }
        if self.profile == PortabilityProfile::AgentSkills && mcp_clients_refuse(&name) {
            self.push(
                DiagnosticCode::PortabilityNameMcpClients,
                line,
                field,
                format!("the name `{name}` is not ASCII: {MCP_CLIENTS_REFUSE}"),
                "if the skill is served over MCP (`bcode-prompt mcp`), use lowercase ASCII letters, digits and hyphens".into(),
            );
        }
        if self.profile == PortabilityProfile::AgentSkills {
            let folder: String = folder.nfkc().collect();
            if folder != name {
                self.push(
                    DiagnosticCode::PortabilityNameMismatch,
                    line,
                    field,
                    format!("the name `{name}` is not the folder's name `{folder}`"),
                    format!("use `name: {folder}`, or rename the folder to `{name}`"),
                );
            }
        }
        if self.profile == PortabilityProfile::Claude {
            if has_xml_tag(&name) {
                self.push(
                    DiagnosticCode::PortabilityXmlTag,
                    line,
                    field,
                    "the name holds an XML tag".into(),
                    "remove the `<...>` tag from the name".into(),
                );
            }
            let lower = name.to_lowercase();
            if let Some(word) = RESERVED_WORDS.iter().find(|w| lower.contains(*w)) {
                self.push(
                    DiagnosticCode::PortabilityReservedWord,
                    line,
                    field,
                    format!("the name `{name}` holds the reserved word `{word}`"),
                    format!("choose a name without `{word}`"),
                );
            }
        }
    }

    /// Codex: `name` and `description` strings, non-empty and within their
    /// limits once every run of white space is one space, and a
    /// `metadata.short-description` string within the description's limit.
    fn codex(&mut self, map: &Map<String, Value>) {
        for (field, max, code) in [
            (
                "name",
                MAX_NAME_CHARS,
                DiagnosticCode::PortabilityNameTooLong,
            ),
            (
                "description",
                MAX_DESCRIPTION_CHARS,
                DiagnosticCode::PortabilityDescriptionTooLong,
            ),
        ] {
            let line = self.line_of(field);
            let missing = if field == "name" {
                DiagnosticCode::PortabilityNameMissing
            } else {
                DiagnosticCode::PortabilityDescriptionMissing
            };
            match map.get(field) {
                Some(Value::String(text)) if !one_line(text).is_empty() => {
                    self.codex_length(code, line, field, &one_line(text), max);
                }
                other => {
                    let message = match other {
                        None => format!("there is no `{field}`"),
                        Some(value) => format!(
                            "`{field}` must be a non-empty string, found {}",
                            crate::parse::yaml::kind_name(value)
                        ),
                    };
                    self.push(
                        missing,
                        line.or(Some(self.first_line)),
                        Some(field),
                        message,
                        format!("add `{field}:` with a one-line string"),
                    );
                }
            }
        }
        let field = "metadata.short-description";
        let short = match map.get("metadata") {
            Some(Value::Object(entries)) => entries.get("short-description"),
            _ => None,
        };
        let nested = self.nested_lines("metadata");
        let line = nested
            .get("short-description")
            .and_then(|&index| self.file_line(index))
            .or_else(|| self.line_of("metadata"));
        match short {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => {
                let code = DiagnosticCode::PortabilityDescriptionTooLong;
                self.codex_length(code, line, field, &one_line(text), MAX_DESCRIPTION_CHARS);
            }
            Some(other) => self.push(
                DiagnosticCode::PortabilityFieldType,
                line,
                Some(field),
                format!(
                    "`{field}` must be a string, found {}",
                    crate::parse::yaml::kind_name(other)
                ),
                "quote the value".into(),
            ),
        }
    }

    fn codex_length(
        &mut self,
        code: DiagnosticCode,
        line: Option<u32>,
        field: &str,
        text: &str,
        max: usize,
    ) {
        let chars = text.chars().count();
        if chars > max {
            self.push(
                code,
                line,
                Some(field),
                format!("`{field}` is {chars} characters on one line; at most {max} are allowed"),
                format!("shorten `{field}`"),
            );
        }
    }

    fn description(&mut self, map: &Map<String, Value>) {
        let line = self.line_of("description");
        let field = Some("description");
        let text = match map.get("description") {
            Some(Value::String(text)) if !text.trim().is_empty() => text,
            other => {
                let message = match other {
                    None => "there is no `description`".to_owned(),
                    Some(value) => format!(
                        "`description` must be a non-empty string, found {}",
                        crate::parse::yaml::kind_name(value)
                    ),
                };
                self.push(
                    DiagnosticCode::PortabilityDescriptionMissing,
                    line.or(Some(self.first_line)),
                    field,
                    message,
                    "add `description: <what it does and when to use it>`".into(),
                );
                return;
            }
        };
        let chars = text.chars().count();
        if chars > MAX_DESCRIPTION_CHARS {
            self.push(
                DiagnosticCode::PortabilityDescriptionTooLong,
                line,
                field,
                format!(
                    "the description is {chars} characters; at most {MAX_DESCRIPTION_CHARS} are allowed"
                ),
                "shorten it; put details in the body".into(),
            );
        }
        if self.profile == PortabilityProfile::Claude && has_xml_tag(text) {
            self.push(
                DiagnosticCode::PortabilityXmlTag,
                line,
                field,
                "the description holds an XML tag".into(),
                "remove `<...>` tags from the description".into(),
            );
        }
    }

    fn compatibility(&mut self, map: &Map<String, Value>) {
        let line = self.line_of("compatibility");
        match map.get("compatibility") {
            None => {}
            Some(Value::String(text)) => {
                let chars = text.chars().count();
                if chars > MAX_COMPATIBILITY_CHARS {
                    self.push(
                        DiagnosticCode::PortabilityCompatibilityTooLong,
                        line,
                        Some("compatibility"),
                        format!(
                            "`compatibility` is {chars} characters; at most {MAX_COMPATIBILITY_CHARS} are allowed"
                        ),
                        "name only the environments the skill needs".into(),
                    );
                }
            }
            Some(other) => self.push(
                DiagnosticCode::PortabilityFieldType,
                line,
                Some("compatibility"),
                format!(
                    "`compatibility` must be a string, found {}",
                    crate::parse::yaml::kind_name(other)
                ),
                "write `compatibility:` as one quoted string".into(),
            ),
        }
    }

    fn allowed_tools(&mut self, map: &Map<String, Value>) {
        let ok = match map.get("allowed-tools") {
            None | Some(Value::String(_)) => true,
            Some(Value::Array(items)) => items.iter().all(Value::is_string),
            Some(_) => false,
        };
        if !ok {
            let line = self.line_of("allowed-tools");
            self.push(
                DiagnosticCode::PortabilityFieldType,
                line,
                Some("allowed-tools"),
                "`allowed-tools` must be a string or a list of strings".into(),
                "write `allowed-tools: Read Grep` (tools separated by spaces)".into(),
            );
        }
    }

    fn unknown_fields(&mut self, map: &Map<String, Value>) {
        for key in map.keys() {
            if AGENT_SKILLS_FIELDS.contains(&key.as_str()) {
                continue;
            }
            let line = self.line_of(key);
            self.push(
                DiagnosticCode::PortabilityUnknownField,
                line,
                Some(key),
                format!(
                    "the key `{key}` is not one of {}",
                    AGENT_SKILLS_FIELDS
                        .iter()
                        .map(|f| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                format!("remove `{key}`, or move it under `metadata:` as a string"),
            );
        }
    }

    fn metadata(&mut self, map: &Map<String, Value>) {
        let line = self.line_of("metadata");
        match map.get("metadata") {
            None | Some(Value::Null) => {}
            Some(Value::Object(entries)) => {
                let nested = self.nested_lines("metadata");
                for (key, value) in entries {
                    if value.is_string() {
                        continue;
                    }
                    let at = nested
                        .get(key.as_str())
                        .and_then(|&index| self.file_line(index))
                        .or(line);
                    let written = self.written_value(at).unwrap_or_else(|| value.to_string());
                    let hint = match value {
                        Value::Object(_) | Value::Array(_) => format!(
                            "flatten it into string values, e.g. `{key}: \"...\"`, or put the data in a file"
                        ),
                        _ => format!(
                            "quote the value: {key}: \"{}\"",
                            written.replace('"', "\\\"")
                        ),
                    };
                    self.push(
                        DiagnosticCode::PortabilityMetadataNotString,
                        at,
                        Some(&format!("metadata.{key}")),
                        format!(
                            "`metadata.{key}` is {} to a YAML reader; metadata values must be strings",
                            crate::parse::yaml::kind_name(value)
                        ),
                        hint,
                    );
                }
            }
            Some(other) => self.push(
                DiagnosticCode::PortabilityMetadataNotString,
                line,
                Some("metadata"),
                format!(
                    "`metadata` must be a mapping of strings to strings, found {}",
                    crate::parse::yaml::kind_name(other)
                ),
                "write `metadata:` with `key: \"value\"` lines under it".into(),
            ),
        }
    }

    /// The text after `: ` on file line `line`, for a hint that quotes it.
    fn written_value(&self, line: Option<u32>) -> Option<String> {
        let index = usize::try_from(line?.checked_sub(self.first_line)?).ok()?;
        let text = self.lines.get(index)?;
        let (_, value) = text.split_once(": ")?;
        let value = value.trim();
        (!value.is_empty() && !value.starts_with(['{', '['])).then(|| value.to_owned())
    }
}

/// `raw` as a name the rules accept: lowercase, runs of anything else as
/// one hyphen, no hyphen at either end.
fn suggest_name(raw: &str) -> String {
    let mut out = String::new();
    for c in raw.nfkc().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// `text` with every run of white space one space, as Codex reads a field.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first line of each key of `lines` (`(index, text)`, the text
/// without its indentation), each line offering the keys the skill parser
/// finds there ([`crate::parse::skill::yaml_line_keys`]) without trailing
/// white space (`name :` is `name`), so the map costs one pass however
/// many keys a file has.
fn key_lines<'a>(lines: impl Iterator<Item = (usize, &'a str)>) -> BTreeMap<&'a str, usize> {
    let mut keys = BTreeMap::new();
    for (index, line) in lines {
        for key in crate::parse::skill::yaml_line_keys(line) {
            keys.entry(key.trim_end()).or_insert(index);
        }
    }
    keys
}

/// Whether `text` holds something shaped like an XML tag: `<`, a letter or
/// `/`, and a later `>`. One pass: a tag opens before the last `>` or not
/// at all (scanning the rest of the text for `>` after every `<` made a
/// 240 KB description of `<a` take 1.6 s).
fn has_xml_tag(text: &str) -> bool {
    let Some(last_close) = text.rfind('>') else {
        return false;
    };
    text[..last_close].match_indices('<').any(|(at, _)| {
        text.as_bytes()
            .get(at + 1)
            .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'/')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(
        profile: PortabilityProfile,
        text: &str,
        folder: &str,
    ) -> Vec<(&'static str, Option<u32>)> {
        lint_portability(
            profile,
            LintInput {
                text: text.as_bytes(),
                file_name: "SKILL.md",
                folder,
            },
        )
        .iter()
        .map(|d| (d.code.as_str(), d.line))
        .collect()
    }

    #[test]
    fn the_spec_example_is_not_portable() {
        let text =
            "---\nid: rust-debugging\nname: Rust Debugging\ndescription: d\nversion: 0.1.0\n---\n";
        assert_eq!(
            codes(PortabilityProfile::AgentSkills, text, "rust-debugging"),
            [
                ("portability_name_uppercase", Some(3)),
                ("portability_name_characters", Some(3)),
                ("portability_name_mismatch", Some(3)),
                ("portability_unknown_field", Some(2)),
                ("portability_unknown_field", Some(5)),
            ]
        );
    }

    #[test]
    fn a_portable_skill_has_no_findings() {
        let text = "---\nname: pdf-tools\ndescription: d\nlicense: MIT\nmetadata:\n  version: \"1.10\"\nallowed-tools: Read Grep\n---\n";
        assert_eq!(
            codes(PortabilityProfile::AgentSkills, text, "pdf-tools"),
            []
        );
        assert_eq!(codes(PortabilityProfile::Claude, text, "pdf-tools"), []);
    }

    /// Issue 40, item 7: a name the open specification allows but common
    /// MCP clients refuse is a warning under `agentskills` saying so.
    #[test]
    fn a_non_ascii_name_is_valid_but_refused_by_mcp_clients() {
        let text = "---\nname: навык\ndescription: d\nlicense: MIT\nmetadata:\n  version: \"1.10\"\nallowed-tools: Read Grep\n---\n";
        let found = lint_portability(
            PortabilityProfile::AgentSkills,
            LintInput {
                text: text.as_bytes(),
                file_name: "SKILL.md",
                folder: "навык",
            },
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code.as_str(), "portability_name_mcp_clients");
        assert_eq!(found[0].line, Some(2));
        assert_eq!(
            found[0].message(),
            format!(
                "Agent Skills (agentskills): the name `навык` is not ASCII: {MCP_CLIENTS_REFUSE}"
            )
        );
        assert_eq!(
            codes(PortabilityProfile::Claude, text, "навык"),
            [("portability_name_characters", Some(2))]
        );
        assert!(!mcp_clients_refuse("pdf-tools"));
        assert!(mcp_clients_refuse("données-csv"));
    }

    #[test]
    fn invalid_yaml_is_reported_and_the_rest_still_checked() {
        let text = "---\nname: Bad\ndescription: Use when: asked\nmetadata:\n  v: 1.10\n---\n";
        assert_eq!(
            codes(PortabilityProfile::AgentSkills, text, "bad"),
            [
                ("portability_front_matter", Some(3)),
                ("portability_name_uppercase", Some(2)),
                ("portability_name_mismatch", Some(2)),
                ("portability_metadata_not_string", Some(5)),
            ]
        );
    }

    #[test]
    fn codex_rules() {
        let long = "word ".repeat(206);
        let text = format!(
            "---\nname: Any Name Goes\ndescription: |\n  {long}\nmetadata:\n  short-description: [x]\nextra: 1\n---\n"
        );
        assert_eq!(
            codes(PortabilityProfile::Codex, &text, "folder"),
            [
                ("portability_description_too_long", Some(3)),
                ("portability_field_type", Some(6)),
            ]
        );
        assert_eq!(
            codes(
                PortabilityProfile::Codex,
                "\u{feff}---\ndescription: d\n---\n",
                "x"
            ),
            [
                ("portability_byte_order_mark", Some(1)),
                ("portability_name_missing", Some(2)),
            ]
        );
    }

    #[test]
    fn suggestions_and_tags() {
        assert_eq!(suggest_name("Rust  Debugging_"), "rust-debugging");
        for (text, tag) in [
            ("use <b>bold</b>", true),
            ("a < b > c", false),
            ("</end>", true),
            ("<a >", true),
            ("<<a>", true),
            ("<a", false),
            ("x > <a", false),
            ("<1>", false),
            ("<é>", false),
            ("<>", false),
        ] {
            assert_eq!(has_xml_tag(text), tag, "{text}");
        }
    }

    #[test]
    fn each_key_keeps_its_first_line() {
        let lines = [
            "name: a",
            "a:b: 1",
            "spaced : x",
            "url: http://x",
            "name: again",
            "plain",
            "bare:",
        ];
        assert_eq!(
            key_lines(lines.iter().copied().enumerate()),
            BTreeMap::from([
                ("name", 0),
                ("a", 1),
                ("a:b", 1),
                ("spaced", 2),
                ("url", 3),
                ("bare", 6),
            ])
        );
    }

    #[test]
    fn lines_are_found_for_every_kind_of_finding() {
        let text = "---\nname: x\ndescription: d\nzz: 1\nmetadata:\n  a: 1.10\n  b: ok\n  c: [1]\nextra: 2\n---\n";
        assert_eq!(
            codes(PortabilityProfile::AgentSkills, text, "x"),
            [
                ("portability_unknown_field", Some(9)),
                ("portability_unknown_field", Some(4)),
                ("portability_metadata_not_string", Some(6)),
                ("portability_metadata_not_string", Some(8)),
            ]
        );
    }
}
