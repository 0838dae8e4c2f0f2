//! What an invoked skill becomes for the model: the context block as the
//! spec shows it, provenance (file, directory, source, version) and the
//! complete body, optionally bounded by
//! `skills.max_context_bytes` with an explicit marker.
//! Every value and the body are cleaned for the model first
//! (`bcode_text::clean_line` / `clean_body`), after the body's argument
//! placeholders are replaced (`arguments.rs`, which also splits what the
//! user typed after `/skill <id>` shell-style).
//!
//! This room is apart from [`crate::catalog`] because the two share nothing
//! but templates: the catalog lists every skill's metadata on every turn,
//! the context block is one skill's body, loaded when it is invoked. It
//! does not decide which skills are active (that is [`crate::session`]) and
//! reads a body only through the registry ([`crate::discover`]).

pub(crate) mod arguments;

pub use arguments::{
    MAX_INSERTED_BYTES, Placeholders, SplitArguments, split_arguments, substitute_arguments,
};

use bcode_skill_models::{
    LoadCause, SkillContextRequest, SkillContextResponse, SkillError, SkillSummary,
};
use std::borrow::Cow;

use bcode_text::{
    Limit, Truncation, bound, clean_body, clean_line, escape_xml, neutralize_closing_tag,
};
use minijinja::context;

use crate::discover::registry::SkillRegistry;
use bcode_templates::{TemplateError, Templates};
use bcode_text::{PathDisplay, model_path};

impl SkillRegistry {
    /// The `<skill ...>` block for one skill, loading it now: front matter
    /// and body come from one read of its file, so an edit since discovery
    /// can never pair the old front matter with the new body.
    pub fn context(
        &self,
        request: &SkillContextRequest,
        templates: &Templates,
    ) -> Result<SkillContextResponse, SkillError> {
        self.context_shown(request, templates, &PathDisplay::new())
    }

    /// [`SkillRegistry::context`] with the block's paths (file, directory,
    /// resource root) shown through `paths`; the response's `location`
    /// stays the real file.
    pub fn context_shown(
        &self,
        request: &SkillContextRequest,
        templates: &Templates,
        paths: &PathDisplay,
    ) -> Result<SkillContextResponse, SkillError> {
        let listed = self.lookup(request.id.as_str())?;
        let (skill, body) = self.load_current(listed)?;
        let formatted = if paths.is_identity() {
            format_context(&skill, &body, request, templates)
        } else {
            format_context(&shown_summary(&skill, paths), &body, request, templates).map(
                |mut response| {
                    response.location = Some(skill.location.to_path_buf());
                    response
                },
            )
        };
        formatted.map_err(|err| SkillError::Load {
            id: request.id.to_string(),
            cause: LoadCause::Template {
                message: err.to_string(),
            },
        })
    }
}

/// `skill` with its file, folder and source root shown through `paths`.
pub fn shown_summary(skill: &SkillSummary, paths: &PathDisplay) -> SkillSummary {
    let mut source = (*skill.source).clone();
    source.root = source.root.as_deref().map(|root| paths.path(root));
    SkillSummary {
        directory_override: Some(paths.path(skill.directory())),
        location: paths.path(&skill.location).into(),
        source: std::sync::Arc::new(source),
        ..skill.clone()
    }
}

/// Formats the block for `skill` with `body` (already loaded).
///
/// The body is passed to the template as a value, never spliced into the
/// rendered frame at a sentinel: any sentinel could also occur in a name or
/// description (NUL is a valid YAML escape) and move the body into an
/// attribute.
pub fn format_context(
    skill: &SkillSummary,
    body: &str,
    request: &SkillContextRequest,
    templates: &Templates,
) -> Result<SkillContextResponse, TemplateError> {
    let m = &skill.manifest;
    // Every value is cleaned for the model before it is escaped, measured
    // or cut: one-line values with `clean_line`, the body with
    // `clean_body` (tabs and line feeds are its only controls).
    let line = |value: &str| clean_line(value).into_owned();
    let location = line(&model_path(&skill.location));
    // The block names one root, the skill's folder, which relative
    // references resolve against (the spec's separate "Skill resource root"
    // line named the source's folder too, and the model could not tell
    // which to use). The source's root stays a template value, so an
    // operator's override written for the spec's block still renders.
    let resource_root = line(
        &skill
            .source
            .root
            .as_deref()
            .map_or_else(|| model_path(skill.directory()), model_path),
    );
    let head = Head {
        // The id grammar leaves nothing to clean today; cleaning costs a
        // byte scan and keeps the block clean whatever the grammar becomes.
        id: clean_line(m.id.as_str()),
        name: clean_line(&m.name),
        location: &location,
    };
    let directory = line(&model_path(skill.directory()));
    let source = clean_line(&skill.source.label);
    let version = m.details().version().map(clean_line);
    let arguments = line(&request.arguments.join(" "));
    let render = |body: &str| {
        templates.render(
            "skills/context.j2",
            context! {
                id => &head.id,
                name => &head.name,
                location => &location,
                directory => &directory,
                source => &source,
                resource_root => &resource_root,
                version => &version,
                arguments => &arguments,
                body => body,
            },
        )
    };
    // Placeholders are replaced in the body as written (so code is found
    // where the author put it), and the values inserted are then cleaned,
    // neutralised and bounded with the rest of the body.
    let all;
    let body = if request.substitute_arguments {
        all = match &request.raw_arguments {
            Some(raw) => Cow::Borrowed(raw.as_str()),
            None => Cow::Owned(request.arguments.join(" ")),
        };
        let values = Placeholders {
            all: &all,
            words: &request.arguments,
            names: m.details().arguments(),
            skill_dir: &directory,
        };
        substitute_arguments(body, &values)
    } else {
        Cow::Borrowed(body)
    };
    let body = clean_body(&body);
    let body = neutralize_closing_tag(&body, "skill");
    let full = render(&body)?;
    let mut truncation = None;
    let text = match request.max_bytes {
        Some(max) if full.len() > max => {
            let marker = |t: &Truncation| {
                templates
                    .render(
                        "skills/context_truncated.j2",
                        context! { omitted_bytes => t.omitted_bytes, limit => max, location => &location },
                    )
                    .unwrap_or_default()
            };
            // Surfaces an error in the marker template, which the closure
            // above cannot return.
            templates.render(
                "skills/context_truncated.j2",
                context! { omitted_bytes => 0, limit => max, location => &location },
            )?;
            // The frame's size is what the block is without a body; the body
            // gets the rest of the limit.
            let frame = render("")?.len();
            let cut = bound(&body, Limit::Bytes(max.saturating_sub(frame)), &marker);
            let bounded = match &cut.truncation {
                Some(_) if !cut.text.is_empty() => Some(render(&cut.text)?),
                _ => None,
            };
            match bounded {
                Some(text) if text.len() <= max => {
                    truncation = cut.truncation;
                    text
                }
                // The limit leaves no room for the frame and the marker: the
                // marker wins over the provenance lines and every byte of
                // the body, so the block still says it was cut and where
                // the full file is.
                _ => {
                    let whole = Truncation {
                        limit: Limit::Bytes(max),
                        cut_at_byte: 0,
                        original_bytes: body.len(),
                        original_chars: body.chars().count(),
                        omitted_bytes: body.len(),
                        omitted_chars: body.chars().count(),
                    };
                    let text = marker_block(&head, &marker(&whole));
                    truncation = Some(whole);
                    text
                }
            }
        }
        _ => full,
    };
    let preview = preview(&body, request.preview_max_chars, templates)?;
    Ok(SkillContextResponse {
        id: m.id.clone(),
        source: (*skill.source).clone(),
        location: Some(skill.location.to_path_buf()),
        bytes: text.len(),
        truncated: truncation.is_some(),
        truncation,
        text,
        preview,
    })
}

/// What the opening tag shows, cleaned.
struct Head<'a> {
    id: Cow<'a, str>,
    name: Cow<'a, str>,
    location: &'a str,
}

/// The smallest well-formed block: the opening tag, the truncation marker
/// and the closing tag. Used only when the limit is smaller than the frame,
/// so it may exceed the limit: a block without its marker would look
/// complete, and one without its tags would not be a block. Only the tags
/// are written here (a data format, like the catalog's XML entries); the
/// sentence is the marker template's.
fn marker_block(head: &Head<'_>, marker: &str) -> String {
    // The embedded marker begins and ends its own lines; an override that
    // does not still gets a line of its own.
    let before = if marker.starts_with('\n') { "" } else { "\n" };
    let after = if marker.ends_with('\n') { "" } else { "\n" };
    format!(
        "<skill id=\"{}\" name=\"{}\" location=\"{}\">{before}{marker}{after}</skill>",
        escape_xml(&head.id),
        escape_xml(&head.name),
        escape_xml(head.location),
    )
}

/// The most characters of invocation arguments an event keeps, whatever
/// `skills.preview_max_chars` says: at six bytes per character at worst (a
/// JSON `\u` escape), an event stays far below the event log's record limit.
pub const ARGUMENTS_PREVIEW_MAX_CHARS: usize = 16 * 1024;

/// Invocation arguments as an event records them: bounded and marked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgumentsPreview {
    /// The arguments in order while they fit; the one that does not fit is
    /// cut with the preview marker and the rest are left out.
    pub arguments: Vec<String>,
    /// Whether any argument was cut or left out.
    pub truncated: bool,
    /// The total UTF-8 bytes of the arguments as given.
    pub original_bytes: usize,
}

/// Bounds `arguments` to `max_chars` characters in total (and at most
/// [`ARGUMENTS_PREVIEW_MAX_CHARS`]). Each argument also costs one character,
/// so a flood of empty arguments is bounded too.
pub fn preview_arguments(
    arguments: &[String],
    max_chars: usize,
    templates: &Templates,
) -> Result<ArgumentsPreview, TemplateError> {
    let mut left = max_chars.min(ARGUMENTS_PREVIEW_MAX_CHARS);
    let mut kept = Vec::new();
    let mut truncated = false;
    for argument in arguments {
        let cost = argument.chars().count() + 1;
        if cost <= left {
            kept.push(argument.clone());
            left -= cost;
            continue;
        }
        truncated = true;
        let cut = preview(argument, left.saturating_sub(1), templates)?;
        if !cut.is_empty() {
            kept.push(cut);
        }
        break;
    }
    Ok(ArgumentsPreview {
        arguments: kept,
        truncated,
        original_bytes: arguments.iter().map(String::len).sum(),
    })
}

/// A bounded preview of a body for transcripts and events.
pub fn preview(
    body: &str,
    max_chars: usize,
    templates: &Templates,
) -> Result<String, TemplateError> {
    templates.render(
        "skills/preview_truncated.j2",
        context! { omitted_chars => 0 },
    )?;
    let marker = |t: &Truncation| {
        templates
            .render(
                "skills/preview_truncated.j2",
                context! { omitted_chars => t.omitted_chars },
            )
            .unwrap_or_default()
    };
    Ok(bound(body, Limit::Chars(max_chars), &marker)
        .text
        .into_owned())
}
