//! `bcode-prompt skills list|show|doctor|catalog|search|context|read`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use bcode_prompt::sections::Templates;
use bcode_prompt::skills::portability::{self, LintInput, Profile};
use bcode_prompt::skills::{
    CatalogOptions, Discovery, SkillRegistry, WriteCatalogError, write_catalog,
};
use bcode_prompt::skills::{Diagnostic, Severity, SkillError, SkillId, SkillSummary};
use serde::Serialize;

use crate::cli_context::{CliContext, CliError};
use crate::diagnostics_out;
use crate::skills_json;
use crate::terminal::{on_stdout, printable_line};

/// A `skills` subcommand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillsCmd {
    List {
        json: bool,
    },
    Show {
        id: String,
        json: bool,
    },
    Doctor {
        json: bool,
        strict: bool,
        profile: Option<Profile>,
    },
    Catalog,
    Context {
        id: String,
        args: Vec<String>,
    },
    Read {
        id: String,
        path: String,
    },
    Search {
        query: String,
        limit: usize,
        json: bool,
    },
}

/// The most of a query read from stdin (4 MiB): far beyond any task, and
/// what a one-shot search may cost is linear in it.
pub const MAX_QUERY_BYTES: u64 = 4 * 1024 * 1024;

/// The query of `skills search`: the words given, or stdin when they are
/// `-` or absent with stdin not a terminal. Exit 2 when there is none.
pub fn search_query(words: &[String]) -> Result<String, CliError> {
    use std::io::{IsTerminal, Read};
    let from_stdin = match words {
        [only] if only == "-" => true,
        [] => !std::io::stdin().is_terminal(),
        _ => false,
    };
    let query = if from_stdin {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_QUERY_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(CliError::Io)?;
        if bytes.len() as u64 > MAX_QUERY_BYTES {
            eprintln!(
                "bcode-prompt: the query on stdin is over {MAX_QUERY_BYTES} bytes; its first {MAX_QUERY_BYTES} are used"
            );
            bytes.truncate(MAX_QUERY_BYTES as usize);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        words.join(" ")
    };
    if query.trim().is_empty() {
        return Err(CliError::Usage(
            "`skills search` needs a query: words, or `-` to read it from stdin".to_owned(),
        ));
    }
    Ok(query)
}

pub fn run(
    cmd: &SkillsCmd,
    context: &CliContext,
    out: &mut dyn Write,
) -> Result<ExitCode, CliError> {
    let config = &context.workspace.config().config.skills;
    let mut discovery = None;
    let registry = if config.enabled {
        // The skills of each configured MCP server join the local ones
        // (`mcp:<name>`); a server that fails is a diagnostic.
        let providers = context.workspace.mcp_providers();
        // A search reads the registry and the routing index from the disk
        // cache (`skills.disk_cache`), as a session does.
        let mut built = match cmd {
            SkillsCmd::Search { .. } => context.workspace.discovery(),
            _ => Discovery::new(context.workspace.discovery_options()),
        }
        .single_build();
        let registry = built.build_with_providers(&context.workspace.skill_roots(), &providers);
        // Kept for a search: the stamps its build confirmed serve the
        // routing cache's check too.
        discovery = Some(built).filter(|_| matches!(cmd, SkillsCmd::Search { .. }));
        registry
    } else {
        eprintln!("bcode-prompt: skills are disabled (skills.enabled = false)");
        SkillRegistry::empty()
    };
    let io = CliError::Io;
    match cmd {
        SkillsCmd::List { json: true } => write_json(out, &skills_json::list(&registry))?,
        SkillsCmd::List { json: false } => {
            for skill in registry.skills() {
                let m = &skill.manifest;
                let hidden = match (skill.model_visible(), m.user_invocable()) {
                    (true, true) => "",
                    (false, true) => "  (hidden from the model)",
                    (true, false) => "  (model only: no /skill)",
                    (false, false) => "  (hidden from the model; model only: no /skill)",
                };
                writeln!(
                    out,
                    "{}  [{}]{hidden}\n    {}",
                    m.id,
                    printable_line(&skill.source.label),
                    printable_line(&one_line(&m.description))
                )
                .map_err(io)?;
            }
            eprintln!("{}", list_summary(registry.len(), registry.diagnostics()));
        }
        SkillsCmd::Show { id, json } => {
            let skill = lookup(&registry, id)?;
            let diagnostics: Vec<&Diagnostic> = registry.diagnostics_for(skill);
            if *json {
                write_json(out, &skills_json::show(skill, &diagnostics))?;
            } else {
                write_show(out, skill).map_err(io)?;
                for d in diagnostics {
                    eprint!("{}", diagnostics_out::render(d));
                }
            }
        }
        SkillsCmd::Doctor {
            json,
            strict,
            profile,
        } => {
            let mut diagnostics = registry.diagnostics().to_vec();
            diagnostics.extend(registry.check_bodies());
            let findings = match profile {
                Some(profile) => {
                    portability_findings(*profile, &registry, config.max_skill_file_bytes)
                }
                None => Vec::new(),
            };
            let portable = findings.is_empty();
            diagnostics.extend(findings);
            diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
            if *json {
                write_json(out, &skills_json::doctor(&diagnostics))?;
            } else {
                for d in &diagnostics {
                    write!(out, "{}", diagnostics_out::render(d)).map_err(io)?;
                }
                let summary = diagnostics_out::summary(&diagnostics)
                    .unwrap_or_else(|| "no problems found".into());
                eprintln!("bcode-prompt: {} skills; {summary}", registry.len());
            }
            if *strict && (!portable || diagnostics.iter().any(|d| d.severity == Severity::Error)) {
                return Ok(ExitCode::from(1));
            }
        }
        SkillsCmd::Catalog => {
            // The section toggle removes the catalog from the prompt even when
            // [skills.prompt] would produce one: print what is injected.
            if !bcode_prompt::sections::SectionKind::SkillCatalog
                .spec()
                .enabled_by(&context.workspace.config().config)
            {
                eprintln!(
                    "bcode-prompt: the skill catalog section is off (system_prompt.sections.skill_catalog = false)"
                );
                return Ok(ExitCode::SUCCESS);
            }
            let templates = skill_templates(context)?;
            // Byte for byte as injected (no newline is added), escaped on a
            // terminal; written as it is formatted, so a catalog of tens of
            // megabytes is never held whole.
            let mut sink = EscapedOnTerminal(&mut *out);
            let catalog = write_catalog(
                registry.skills(),
                CatalogOptions::from_config(config),
                &templates,
                &mut sink,
            )
            .map_err(|err| match err {
                WriteCatalogError::Io(err) => CliError::Io(err),
                other => CliError::Config(other.to_string()),
            })?;
            if catalog.omitted > 0 {
                eprintln!(
                    "bcode-prompt: catalog truncated to {} bytes: {} of {} skills left out",
                    catalog.text.len(),
                    catalog.omitted,
                    catalog.omitted + catalog.listed
                );
            }
            if let Some(note) = catalog.shortened_note() {
                eprintln!("bcode-prompt: {note}");
            }
            for warning in catalog.warnings() {
                eprintln!("bcode-prompt: warning: {warning}");
            }
            report_summary(registry.diagnostics());
        }
        SkillsCmd::Search { query, limit, json } => {
            let routing = context
                .workspace
                .routing_cache(&context.workspace.skill_roots());
            let hits = match routing {
                // Only the query's terms are read from the cache file while
                // its entries hold; else only changed skills are analyzed
                // and the file is brought up to date.
                Some(cache) => {
                    let confirmed = discovery.as_ref().and_then(Discovery::confirmed_stamps);
                    let (hits, stats) =
                        cache.search_confirmed(&registry, confirmed.as_ref(), query, *limit);
                    if let Some(why) = stats.ignored {
                        eprintln!(
                            "bcode-prompt: warning: the routing cache `{}` was not used ({}); it is rebuilt",
                            printable_line(&cache.file_name()),
                            printable_line(&why)
                        );
                    }
                    hits
                }
                // Without a cache a one-shot search knows its query: the
                // index keeps only that query's terms, and answers as the
                // whole index would.
                None => bcode_prompt::skills::index_registry(&registry, Some(query))
                    .search(query, *limit),
            };
            if *json {
                write_json(out, &skills_json::search(query, &hits, &registry))?;
            } else {
                write_hits(out, &hits, &registry).map_err(io)?;
                if hits.is_empty() {
                    eprintln!("bcode-prompt: no skill matches the query");
                }
                report_summary(registry.diagnostics());
            }
        }
        SkillsCmd::Read { id, path } => {
            let skill = lookup(&registry, id)?;
            let bytes = registry
                .read_file(skill, path)
                .map_err(|err| CliError::Usage(err.to_string()))?;
            // The file as it is on a pipe; escaped on a terminal, like
            // every other output a server or repository wrote.
            match std::str::from_utf8(&bytes) {
                Ok(text) => write!(out, "{}", on_stdout(text)).map_err(io)?,
                Err(_) if crate::terminal::stdout_is_terminal() => write!(
                    out,
                    "{}",
                    crate::terminal::printable(&String::from_utf8_lossy(&bytes))
                )
                .map_err(io)?,
                Err(_) => out.write_all(&bytes).map_err(io)?,
            }
            eprintln!(
                "bcode-prompt: read `{path}` of skill `{}` from {}: {} bytes",
                skill.manifest.id,
                printable_line(&skill.source.label),
                bytes.len()
            );
        }
        SkillsCmd::Context { id, args } => {
            let skill = lookup(&registry, id)?;
            let templates = skill_templates(context)?;
            // The shell already split the words; `$ARGUMENTS` is them
            // joined by spaces.
            let request = bcode_prompt::skills::SkillSessionOptions::from_config(config)
                .context_request(skill.manifest.id.clone(), args.clone(), None);
            let response = registry
                .context(&request, &templates)
                .map_err(|err| CliError::Usage(err.to_string()))?;
            writeln!(out, "{}", on_stdout(&response.text)).map_err(io)?;
            eprintln!(
                "bcode-prompt: loaded skill `{}` from {}: {} bytes{}",
                response.id,
                printable_line(&response.source.label),
                response.bytes,
                if response.truncated {
                    " (truncated by skills.max_context_bytes)"
                } else {
                    ""
                }
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A skill by id, or exit 2 naming the problem with a near-miss suggestion.
fn lookup<'r>(registry: &'r SkillRegistry, id: &str) -> Result<&'r SkillSummary, CliError> {
    registry.lookup(id).map_err(|err| {
        let mut message = err.to_string();
        if matches!(
            err,
            SkillError::NotFound {
                suggestion: None,
                ..
            }
        ) && SkillId::parse_reference(id).is_err()
        {
            message.push_str("; ids use lowercase letters, digits and hyphens");
        }
        message.push_str("; `bcode-prompt skills list` shows every skill");
        CliError::Usage(message)
    })
}

/// The templates a render would use (embedded, with the overrides of
/// `system_prompt.templates_dir`); warnings go to stderr.
pub(crate) fn skill_templates(context: &CliContext) -> Result<Templates, CliError> {
    let templates = context
        .workspace
        .templates()
        .map_err(|err| CliError::Config(err.to_string()))?;
    for warning in templates.warnings() {
        eprintln!("bcode-prompt: warning: {warning}");
    }
    Ok(templates)
}

/// A writer that passes text on as `on_stdout` shows it: exact on a pipe,
/// escaped on a terminal. The catalog writes whole entries per call, so a
/// call never splits a character.
struct EscapedOnTerminal<'a>(&'a mut dyn Write);

impl Write for EscapedOnTerminal<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => self.0.write_all(on_stdout(text).as_bytes())?,
            Err(_) => self.0.write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// `skills search` as text: per hit, the id, the score and the source, then
/// the description and what matched, every value made printable.
fn write_hits(
    out: &mut dyn Write,
    hits: &[bcode_prompt::skills::SearchHit],
    registry: &SkillRegistry,
) -> std::io::Result<()> {
    for hit in hits {
        let Some(skill) = registry.get(hit.id.as_str()) else {
            continue;
        };
        let matched: Vec<String> = hit
            .matched
            .iter()
            .map(|m| {
                let fields: Vec<&str> = m.fields.iter().map(|f| f.as_str()).collect();
                format!("{} ({})", printable_line(&m.term), fields.join(", "))
            })
            .collect();
        writeln!(
            out,
            "{}  {:.2}  [{}]\n    {}\n    matched: {}",
            hit.id,
            hit.score,
            printable_line(&skill.source.label),
            printable_line(&one_line(&skill.manifest.description)),
            matched.join("; ")
        )?;
    }
    Ok(())
}

fn write_show(out: &mut dyn Write, skill: &SkillSummary) -> std::io::Result<()> {
    // Every value below comes from the skill's file or its path: shown
    // through `printable_line` so an escape sequence in it is displayed, not
    // obeyed by the terminal.
    let m = &skill.manifest;
    let d = m.details();
    let opt =
        |v: Option<&str>| v.map_or_else(|| "-".to_owned(), |v| printable_line(v).into_owned());
    let list = |v: &[String]| {
        if v.is_empty() {
            "-".into()
        } else {
            printable_line(&v.join(", ")).into_owned()
        }
    };
    let path = |p: &Path| printable_line(&p.display().to_string()).into_owned();
    writeln!(out, "id:             {}", m.id)?;
    writeln!(out, "name:           {}", printable_line(&m.name))?;
    writeln!(
        out,
        "description:    {}",
        printable_line(&one_line(&m.description))
    )?;
    writeln!(out, "version:        {}", opt(d.version()))?;
    writeln!(
        out,
        "source:         {}",
        printable_line(&skill.source.label)
    )?;
    writeln!(out, "location:       {}", path(&skill.location))?;
    writeln!(out, "directory:      {}", path(skill.directory()))?;
    writeln!(out, "model visible:  {}", skill.model_visible())?;
    writeln!(out, "user invocable: {}", m.user_invocable())?;
    writeln!(out, "argument hint:  {}", opt(d.argument_hint()))?;
    writeln!(out, "arguments:      {}", list(d.arguments()))?;
    writeln!(out, "when to use:    {}", opt(d.when_to_use()))?;
    writeln!(out, "keywords:       {}", list(&m.activation.keywords))?;
    writeln!(out, "paths:          {}", list(d.paths()))?;
    writeln!(out, "tools (advisory): {}", list(d.tools()))?;
    writeln!(out, "allowed-tools:  {}", list(d.allowed_tools()))?;
    writeln!(out, "thinking effort: {}", opt(d.thinking_effort()))?;
    writeln!(out, "model:          {}", opt(d.model()))?;
    writeln!(out, "license:        {}", opt(d.license()))?;
    writeln!(out, "compatibility:  {}", opt(d.compatibility()))?;
    // JSON's own display escapes control characters inside the values; the
    // keys are raw strings.
    for (key, value) in &m.metadata {
        writeln!(out, "metadata.{}: {value}", printable_line(key))?;
    }
    for (key, value) in d.extra() {
        writeln!(out, "unknown field {}: {value}", printable_line(key))?;
    }
    Ok(())
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The errors and warnings among `diagnostics` ("1 error, 2 warnings"),
/// `None` when there are none: infos (a markdown file that is not a skill)
/// are not problems to report.
fn problems(diagnostics: &[Diagnostic]) -> Option<String> {
    diagnostics_out::summary(diagnostics.iter().filter(|d| d.severity != Severity::Info))
}

/// After a command's output, the skill files' problems, if any.
fn report_summary(diagnostics: &[Diagnostic]) {
    if let Some(summary) = problems(diagnostics) {
        eprintln!(
            "bcode-prompt: {summary} in skill files; run `bcode-prompt skills doctor` for details"
        );
    }
}

/// The line `skills list` ends with, problems or not: how many skills it
/// listed and what the skill files' diagnostics amount to.
fn list_summary(skills: usize, diagnostics: &[Diagnostic]) -> String {
    let plural = if skills == 1 { "" } else { "s" };
    match problems(diagnostics) {
        Some(summary) => format!(
            "bcode-prompt: {skills} skill{plural}; {summary} in skill files; run `bcode-prompt skills doctor` for details"
        ),
        None => format!("bcode-prompt: {skills} skill{plural}; no problems in skill files"),
    }
}

/// `value` pretty-printed, then a newline, through a buffer (serde_json
/// writes token by token).
fn write_json(out: &mut dyn Write, value: &impl Serialize) -> Result<(), CliError> {
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, out);
    serde_json::to_writer_pretty(&mut out, value).map_err(|err| CliError::Io(err.into()))?;
    writeln!(out).map_err(CliError::Io)?;
    out.flush().map_err(CliError::Io)
}

/// A file name as text (empty when it is not UTF-8).
fn os_name(name: Option<&std::ffi::OsStr>) -> &str {
    name.and_then(|n| n.to_str()).unwrap_or_default()
}

/// The profile `--profile` names, or exit 2 listing the profiles there are.
pub fn profile(name: &str) -> Result<Profile, CliError> {
    Profile::from_name(name).ok_or_else(|| {
        CliError::Usage(format!(
            "--profile: unknown profile `{name}`; the profiles are: {}",
            Profile::NAMES.join(", ")
        ))
    })
}

/// The portability findings of every skill file the registry found, and of
/// every instruction file that failed to load, each read again (doctor is
/// an operator command; loading never pays for this).
fn portability_findings(
    profile: Profile,
    registry: &SkillRegistry,
    max_bytes: usize,
) -> Vec<Diagnostic> {
    // Each file with the id of the skill it holds, if it loaded.
    let mut files: std::collections::BTreeMap<&Path, Option<&str>> = registry
        .skills()
        .filter(|skill| skill.source.provider.is_none())
        .map(|skill| (&*skill.location, Some(skill.manifest.id.as_str())))
        .collect();
    let failed = registry
        .diagnostics()
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .filter_map(|d| d.path.as_deref())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.eq_ignore_ascii_case("skill.md"))
        });
    for path in failed {
        files.entry(path).or_insert(None);
    }
    let mut findings = Vec::new();
    for (path, id) in files {
        let Ok(text) = bcode_prompt::files::read_bounded(path, max_bytes) else {
            continue;
        };
        let input = LintInput {
            text: &text,
            file_name: os_name(path.file_name()),
            folder: os_name(path.parent().and_then(Path::file_name)),
        };
        for mut d in portability::lint(profile, input) {
            d.path = Some(std::sync::Arc::from(path));
            d.set_skill_id(id);
            findings.push(d);
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use bcode_prompt::skills::SourceRoot;
    use bcode_prompt::skills::{SkillSource, SourceKind};

    /// A registry with skills, a non-UTF-8 path and diagnostics of several kinds.
    fn registry(dir: &Path) -> SkillRegistry {
        let skill = |name: &str, text: &str| {
            std::fs::create_dir_all(dir.join(name)).unwrap();
            std::fs::write(dir.join(name).join("SKILL.md"), text).unwrap();
        };
        skill(
            "alpha",
            "---\ndescription: First \"quoted\" <skill>\nkeywords: [one, two]\nmetadata:\n  owner: me\n---\nbody\n",
        );
        skill(
            "beta",
            "---\nname: Beta\ndescription: Second\nlicense: MIT\nfoo: bar\n---\n",
        );
        skill("broken", "---\ndescription: [unclosed\n---\n");
        skill("Not_An_Id", "---\ndescription: bad folder name\n---\n");
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let latin1 = dir.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
            std::fs::create_dir_all(&latin1).unwrap();
            std::fs::write(latin1.join("SKILL.md"), "---\ndescription: x\n---\n").unwrap();
        }
        let root = SourceRoot {
            source: SkillSource {
                kind: SourceKind::Config,
                label: "config:test".into(),
                ordinal: 0,
                root: None,
                provider: None,
            },
            path: dir.to_path_buf(),
            repository: None,
            owner_check: None,
        };
        Discovery::new(bcode_prompt::skills::DiscoveryOptions::from_config(
            &Default::default(),
        ))
        .build(&[root])
    }

    /// `document` as `skills ... --json` prints it.
    fn printed(document: &impl Serialize) -> String {
        let mut out = Vec::new();
        write_json(&mut out, document).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// `document` built whole as a `serde_json::Value` (whose objects sort
    /// their keys) and then printed: what these commands printed before
    /// their documents were serialized straight from the registry.
    fn printed_whole(document: &impl Serialize) -> String {
        printed(&serde_json::to_value(document).unwrap())
    }

    #[test]
    fn streamed_list_json_is_byte_for_byte_the_whole_document() {
        let dir = tempfile::tempdir().unwrap();
        let registry = registry(dir.path());
        assert!(registry.len() >= 2);
        assert!(!registry.diagnostics().is_empty());
        let document = skills_json::list(&registry);
        assert_eq!(printed(&document), printed_whole(&document));
    }

    /// A skill whose paths are not UTF-8 (only a provider or a test can make
    /// one: discovery skips such folders) with every field set, and
    /// diagnostics with and without a path, a line and a column.
    #[cfg(unix)]
    fn odd_skill_and_diagnostics() -> (SkillSummary, Vec<Diagnostic>) {
        use bcode_prompt::skills::{DiagnosticCode, SkillLayout, SkillManifest};
        use std::os::unix::ffi::OsStrExt;
        use std::path::PathBuf;
        use std::sync::Arc;
        let latin1 = |s: &[u8]| PathBuf::from(std::ffi::OsStr::from_bytes(s));
        let mut manifest = SkillManifest::new(SkillId::parse("cafe").unwrap());
        manifest.description = "Caf\u{e9} \u{1}\u{1f}\"\\\n\u{7f}\u{2028}\u{1f600}".into();
        manifest.activation.keywords = vec!["k\u{e9}".into(), "\t".into()];
        manifest.disable_model_invocation = true;
        manifest.metadata = serde_json::from_str(
            r#"{"b": {"y": [1, -2, 3.5, null, true], "x": {}}, "a": "\u0000"}"#,
        )
        .unwrap();
        manifest.update_details(|d| {
            d.version = Some("1".into());
            d.permissions.tools = vec!["filesystem.read".into()];
            d.permissions.allowed_tools = vec!["Read".into(), "Bash(git:*)".into()];
            d.thinking_effort = Some("low".into());
            d.model = Some("m".into());
            d.license = Some("MIT".into());
            d.compatibility = Some("any".into());
            d.extra = serde_json::from_str(r#"{"z": [], "\u00e9": 1e-7}"#).unwrap();
        });
        let skill = SkillSummary {
            manifest,
            source: Arc::new(SkillSource {
                kind: SourceKind::Bundled,
                label: "bundled:\"x\"".into(),
                ordinal: 0,
                root: None,
                provider: Some("p".into()),
            }),
            layout: SkillLayout::Provided,
            location: latin1(b"/s/caf\xe9/SKILL.md").into(),
            directory_override: None,
            body_offset: 0,
        };
        let diagnostics = vec![
            Diagnostic::error(DiagnosticCode::ProviderFailed, "no path"),
            Diagnostic::warning(DiagnosticCode::InvalidField, "a line, no path")
                .with_position(3, None)
                .with_field("version"),
            Diagnostic::info(DiagnosticCode::Shadowed, "a path, no line")
                .with_path("/s/x/SKILL.md")
                .with_skill("x"),
            Diagnostic::error(DiagnosticCode::MalformedFrontMatter, "\u{1b}[31m")
                .with_path(latin1(b"/s/\xff/SKILL.md"))
                .with_position(2, Some(14))
                .with_hint("fix \"it\""),
        ];
        (skill, diagnostics)
    }

    /// The bytes `skills show --json` printed for it when each entry was
    /// built as a `serde_json::Value`, kept as the reference.
    #[cfg(unix)]
    #[test]
    fn show_json_prints_odd_paths_and_values_exactly() {
        let (skill, diagnostics) = odd_skill_and_diagnostics();
        let diagnostics: Vec<&Diagnostic> = diagnostics.iter().collect();
        let document = skills_json::show(&skill, &diagnostics);
        let expected = include_str!("../tests/skills_json/show_odd_paths.json");
        assert_eq!(printed(&document), expected);
        assert_eq!(printed_whole(&document), expected);
    }

    #[test]
    fn an_empty_registry_streams_empty_arrays() {
        assert_eq!(
            printed(&skills_json::list(&SkillRegistry::empty())),
            "{\n  \"diagnostics\": [],\n  \"skills\": []\n}\n"
        );
    }
}
