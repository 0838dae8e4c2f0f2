//! The invoked-skill context block, exactly as the spec shows it: provenance
//! (file, directory, source, resource root, version) and the complete body,
//! optionally bounded by `skills.max_context_bytes` with an explicit marker.

use bcode_skill_models::{
    LoadCause, SkillContextRequest, SkillContextResponse, SkillError, SkillSummary,
};
use bcode_text::{Limit, Truncation, bound, neutralize_closing_tag};
use minijinja::context;

use crate::registry::SkillRegistry;
use crate::templates::{SkillTemplates, TemplateError};
use bcode_text::model_path;

/// A sentinel that cannot occur in a body (NUL is not valid in our text) used
/// to split the rendered block into the part before and after the body.
const BODY_SLOT: &str = "\u{0}body\u{0}";

impl SkillRegistry {
    /// The `<skill ...>` block for one skill, loading its body now.
    pub fn context(
        &self,
        request: &SkillContextRequest,
        templates: &SkillTemplates,
    ) -> Result<SkillContextResponse, SkillError> {
        let skill = self.lookup(request.id.as_str())?;
        let body = self.body(skill)?;
        format_context(skill, &body, request, templates).map_err(|err| SkillError::Load {
            id: request.id.to_string(),
            cause: LoadCause::Template {
                message: err.to_string(),
            },
        })
    }
}

/// Formats the block for `skill` with `body` (already loaded).
pub fn format_context(
    skill: &SkillSummary,
    body: &str,
    request: &SkillContextRequest,
    templates: &SkillTemplates,
) -> Result<SkillContextResponse, TemplateError> {
    let m = &skill.manifest;
    let location = model_path(&skill.location);
    let resource_root = skill
        .source
        .root
        .as_deref()
        .map_or_else(|| model_path(&skill.directory), model_path);
    let frame = templates.render(
        "skills/context.j2",
        context! {
            id => m.id.as_str(),
            name => &m.name,
            location => &location,
            directory => model_path(&skill.directory),
            source => &skill.source.label,
            resource_root => resource_root,
            version => &m.version,
            arguments => request.arguments.join(" "),
            body => BODY_SLOT,
        },
    )?;
    let (head, tail) = frame.split_once(BODY_SLOT).unwrap_or((frame.as_str(), ""));
    let body = neutralize_closing_tag(body, "skill");
    let mut truncation = None;
    let text = match request.max_bytes {
        Some(max) if head.len() + body.len() + tail.len() > max => {
            let marker = |t: &Truncation| {
                templates
                    .render(
                        "skills/context_truncated.j2",
                        context! { omitted_bytes => t.omitted_bytes, limit => max, location => &location },
                    )
                    .unwrap_or_default()
            };
            templates.render(
                "skills/context_truncated.j2",
                context! { omitted_bytes => 0, limit => max, location => &location },
            )?;
            let room = max.saturating_sub(head.len() + tail.len());
            let cut = bound(&body, Limit::Bytes(room), &marker);
            truncation = cut.truncation.clone();
            let assembled = format!("{head}{}{tail}", cut.text);
            if assembled.len() > max {
                // The frame alone is larger than the limit: bound the whole block.
                let whole = bound(&assembled, Limit::Bytes(max), &marker);
                whole.text.into_owned()
            } else {
                assembled
            }
        }
        _ => format!("{head}{body}{tail}"),
    };
    let preview = preview(&body, request.preview_max_chars, templates)?;
    Ok(SkillContextResponse {
        id: m.id.clone(),
        source: (*skill.source).clone(),
        location: Some(skill.location.clone()),
        bytes: text.len(),
        truncated: truncation.is_some(),
        truncation,
        text,
        preview,
    })
}

/// A bounded preview of a body for transcripts and events.
pub fn preview(
    body: &str,
    max_chars: usize,
    templates: &SkillTemplates,
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
