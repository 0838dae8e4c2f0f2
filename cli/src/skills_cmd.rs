//! `bcode-prompt skills list|show|doctor|catalog|context`.

use std::io::Write;
use std::process::ExitCode;

use bcode_skill::{
    CatalogOptions, Discovery, DiscoveryOptions, SkillRegistry, Templates, format_catalog,
};
use bcode_skill_models::{
    Diagnostic, Severity, SkillContextRequest, SkillError, SkillId, SkillSummary,
};
use serde_json::{Value, json};

use crate::cli_context::{CliContext, CliError};
use crate::diagnostics_out;

/// A `skills` subcommand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillsCmd {
    List { json: bool },
    Show { id: String, json: bool },
    Doctor { json: bool, strict: bool },
    Catalog,
    Context { id: String, args: Vec<String> },
}

pub fn run(
    cmd: &SkillsCmd,
    context: &CliContext,
    out: &mut dyn Write,
) -> Result<ExitCode, CliError> {
    let config = &context.loaded.config.skills;
    let registry = if config.enabled {
        Discovery::new(DiscoveryOptions::from_config(config)).build(&context.skill_roots())
    } else {
        eprintln!("bcode-prompt: skills are disabled (skills.enabled = false)");
        SkillRegistry::empty()
    };
    let io = CliError::Io;
    match cmd {
        SkillsCmd::List { json: true } => {
            let skills: Vec<Value> = registry.skills().map(skill_json).collect();
            write_json(
                out,
                &json!({ "skills": skills, "diagnostics": registry.diagnostics() }),
            )?;
        }
        SkillsCmd::List { json: false } => {
            for skill in registry.skills() {
                let m = &skill.manifest;
                let hidden = if skill.model_visible() {
                    ""
                } else {
                    "  (hidden from the model)"
                };
                writeln!(
                    out,
                    "{}  [{}]{hidden}\n    {}",
                    m.id,
                    skill.source.label,
                    one_line(&m.description)
                )
                .map_err(io)?;
            }
            report_summary(registry.diagnostics());
        }
        SkillsCmd::Show { id, json } => {
            let skill = lookup(&registry, id)?;
            let diagnostics: Vec<&Diagnostic> = registry.diagnostics_for(skill);
            if *json {
                write_json(
                    out,
                    &json!({ "skill": skill_json(skill), "diagnostics": diagnostics }),
                )?;
            } else {
                write_show(out, skill).map_err(io)?;
                for d in diagnostics {
                    eprint!("{}", diagnostics_out::render(d));
                }
            }
        }
        SkillsCmd::Doctor { json, strict } => {
            let mut diagnostics = registry.diagnostics().to_vec();
            diagnostics.extend(registry.check_bodies());
            diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
            if *json {
                write_json(out, &json!({ "diagnostics": diagnostics }))?;
            } else {
                for d in &diagnostics {
                    write!(out, "{}", diagnostics_out::render(d)).map_err(io)?;
                }
                let summary = diagnostics_out::summary(&diagnostics)
                    .unwrap_or_else(|| "no problems found".into());
                eprintln!("bcode-prompt: {} skills; {summary}", registry.len());
            }
            if *strict && diagnostics.iter().any(|d| d.severity == Severity::Error) {
                return Ok(ExitCode::from(1));
            }
        }
        SkillsCmd::Catalog => {
            // The section toggle removes the catalog from the prompt even when
            // [skills.prompt] would produce one: print what is injected.
            if !context.loaded.config.system_prompt.sections.skill_catalog {
                eprintln!(
                    "bcode-prompt: the skill catalog section is off (system_prompt.sections.skill_catalog = false)"
                );
                return Ok(ExitCode::SUCCESS);
            }
            let templates = skill_templates(context)?;
            let catalog = format_catalog(
                registry.skills(),
                CatalogOptions {
                    prompt: &config.prompt,
                    user_skills_enabled: config.include_user_skills,
                },
                &templates,
            )
            .map_err(|err| CliError::Config(err.to_string()))?;
            // Byte for byte as injected: no newline is added.
            out.write_all(catalog.text.as_bytes()).map_err(io)?;
            if catalog.omitted > 0 {
                eprintln!(
                    "bcode-prompt: catalog truncated to {} bytes: {} of {} skills left out",
                    catalog.text.len(),
                    catalog.omitted,
                    catalog.omitted + catalog.listed
                );
            }
            report_summary(registry.diagnostics());
        }
        SkillsCmd::Context { id, args } => {
            let skill = lookup(&registry, id)?;
            let templates = skill_templates(context)?;
            let request = SkillContextRequest {
                id: skill.manifest.id.clone(),
                arguments: args.clone(),
                max_bytes: config.max_context_bytes,
                preview_max_chars: config.preview_max_chars,
            };
            let response = registry
                .context(&request, &templates)
                .map_err(|err| CliError::Usage(err.to_string()))?;
            writeln!(out, "{}", response.text).map_err(io)?;
            eprintln!(
                "bcode-prompt: loaded skill `{}` from {}: {} bytes{}",
                response.id,
                response.source.label,
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
        ) && SkillId::parse(id).is_err()
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
    let templates = bcode_prompt::templates(&context.loaded, &[])
        .map_err(|err| CliError::Config(err.to_string()))?;
    for warning in templates.warnings() {
        eprintln!("bcode-prompt: warning: {warning}");
    }
    Ok(templates)
}

/// The flat JSON shape of DESIGN.md: `id`, `name`, `description`, `version`,
/// `source`, `location`, `model_visible`, `keywords`, and the rest of the
/// validated metadata.
fn skill_json(skill: &SkillSummary) -> Value {
    let m = &skill.manifest;
    json!({
        "id": m.id,
        "name": m.name,
        "description": m.description,
        "version": m.version,
        "source": skill.source.label,
        "source_kind": skill.source.kind,
        "location": skill.location,
        "directory": skill.directory,
        "layout": skill.layout,
        "model_visible": skill.model_visible(),
        "keywords": m.activation.keywords,
        "permissions": { "tools": m.permissions.tools, "allowed_tools": m.permissions.allowed_tools },
        "thinking_effort": m.thinking_effort,
        "model": m.model,
        "license": m.license,
        "compatibility": m.compatibility,
        "metadata": m.metadata,
        "extra": m.extra,
    })
}

fn write_show(out: &mut dyn Write, skill: &SkillSummary) -> std::io::Result<()> {
    let m = &skill.manifest;
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let list = |v: &[String]| {
        if v.is_empty() {
            "-".into()
        } else {
            v.join(", ")
        }
    };
    writeln!(out, "id:             {}", m.id)?;
    writeln!(out, "name:           {}", m.name)?;
    writeln!(out, "description:    {}", one_line(&m.description))?;
    writeln!(out, "version:        {}", opt(&m.version))?;
    writeln!(out, "source:         {}", skill.source.label)?;
    writeln!(out, "location:       {}", skill.location.display())?;
    writeln!(out, "directory:      {}", skill.directory.display())?;
    writeln!(out, "model visible:  {}", skill.model_visible())?;
    writeln!(out, "keywords:       {}", list(&m.activation.keywords))?;
    writeln!(out, "tools (advisory): {}", list(&m.permissions.tools))?;
    writeln!(
        out,
        "allowed-tools:  {}",
        list(&m.permissions.allowed_tools)
    )?;
    writeln!(out, "thinking effort: {}", opt(&m.thinking_effort))?;
    writeln!(out, "model:          {}", opt(&m.model))?;
    writeln!(out, "license:        {}", opt(&m.license))?;
    writeln!(out, "compatibility:  {}", opt(&m.compatibility))?;
    for (key, value) in &m.metadata {
        writeln!(out, "metadata.{key}: {value}")?;
    }
    for (key, value) in &m.extra {
        writeln!(out, "unknown field {key}: {value}")?;
    }
    Ok(())
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn report_summary(diagnostics: &[Diagnostic]) {
    let notable: Vec<Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Info)
        .cloned()
        .collect();
    if let Some(summary) = diagnostics_out::summary(&notable) {
        eprintln!(
            "bcode-prompt: {summary} in skill files; run `bcode-prompt skills doctor` for details"
        );
    }
}

fn write_json(out: &mut dyn Write, value: &Value) -> Result<(), CliError> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(|err| CliError::Io(err.into()))?;
    writeln!(out).map_err(CliError::Io)
}
