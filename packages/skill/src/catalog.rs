//! The model-visible skill catalog: metadata only, every value XML-escaped,
//! model-hidden skills omitted, optionally bounded. The per-skill entries are
//! a data format and are written here; every sentence around them comes from
//! `templates/skills/catalog.j2`.

use bcode_skill_models::{CatalogMode, SkillSummary, SkillsPromptConfig};
use bcode_text::{Limit, Truncation, bound, bound_at, escape_xml};
use minijinja::context;

use crate::templates::{SkillTemplates, TemplateError};

/// A formatted catalog with its accounting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Catalog {
    /// The text exactly as injected; empty when the catalog is off or no
    /// skill is model-visible.
    pub text: String,
    /// Model-visible skills written in full.
    pub listed: usize,
    /// Model-visible skills left out by `max_bytes`.
    pub omitted: usize,
    /// Descriptions shortened by `max_description_chars`.
    pub descriptions_cut: usize,
    pub truncation: Option<Truncation>,
}

/// Options beyond `[skills.prompt]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CatalogOptions<'a> {
    pub prompt: &'a SkillsPromptConfig,
    /// Whether user skill roots are searched (`skills.include_user_skills`);
    /// the preamble only mentions them when they are.
    pub user_skills_enabled: bool,
}

/// Formats the catalog of `skills` (in the order given; the registry yields
/// them by id).
pub fn format_catalog<'s>(
    skills: impl Iterator<Item = &'s SkillSummary>,
    options: CatalogOptions<'_>,
    templates: &SkillTemplates,
) -> Result<Catalog, TemplateError> {
    let prompt = options.prompt;
    let mut catalog = Catalog {
        text: String::new(),
        listed: 0,
        omitted: 0,
        descriptions_cut: 0,
        truncation: None,
    };
    if prompt.catalog == CatalogMode::Off {
        return Ok(catalog);
    }
    let summary = prompt.catalog == CatalogMode::Summary;
    let ellipsis = templates.render("skills/description_truncated.j2", context! {})?;
    let mut entries = String::new();
    let mut entry_ends = Vec::new();
    for skill in skills.filter(|s| s.model_visible()) {
        let m = &skill.manifest;
        entries.push_str("  <skill>\n");
        push_element(&mut entries, "id", m.id.as_str());
        push_element(&mut entries, "name", &m.name);
        if summary {
            let description = match prompt.max_description_chars {
                Some(max) => {
                    let cut = bound(&m.description, Limit::Chars(max), &|_| ellipsis.clone());
                    if cut.truncation.is_some() {
                        catalog.descriptions_cut += 1;
                    }
                    cut.text.into_owned()
                }
                None => m.description.clone(),
            };
            push_element(&mut entries, "description", &description);
        }
        push_element(&mut entries, "location", &model_path(&skill.location));
        if summary && prompt.include_sources {
            push_element(&mut entries, "source", &skill.source.label);
        }
        if summary && prompt.include_keywords && !m.activation.keywords.is_empty() {
            push_element(&mut entries, "keywords", &m.activation.keywords.join(", "));
        }
        entries.push_str("  </skill>\n");
        entry_ends.push(entries.len());
    }
    if entry_ends.is_empty() {
        return Ok(catalog);
    }
    let render = |entries: &str| {
        templates.render(
            "skills/catalog.j2",
            context! { entries => entries, user_skills_enabled => options.user_skills_enabled },
        )
    };
    let full = render(&entries)?;
    let total = entry_ends.len();
    let Some(max) = prompt.max_bytes.filter(|&max| full.len() > max) else {
        catalog.listed = total;
        catalog.text = full;
        return Ok(catalog);
    };
    // Keep whole entries: cut the entry list so that the preamble, the kept
    // entries, the marker and the closing tag fit in `max` together.
    let frame = render("")?.len();
    let render_marker = |omitted: usize| {
        templates.render(
            "skills/catalog_truncated.j2",
            context! { omitted_skills => omitted, limit => max },
        )
    };
    // Render once up front so a broken override is an error, not a silent
    // empty marker inside the bounded cut below.
    render_marker(total)?;
    let marker = |t: &Truncation| {
        let omitted = entry_ends
            .iter()
            .filter(|&&end| end > t.cut_at_byte)
            .count();
        render_marker(omitted).unwrap_or_default()
    };
    // Offset 0 (no entries) is a valid cut too, so an entry is never split:
    // when not even the first one fits, only the marker remains.
    let whole_entries: Vec<usize> = std::iter::once(0)
        .chain(entry_ends.iter().copied())
        .collect();
    let cut = bound_at(
        &entries,
        Limit::Bytes(max.saturating_sub(frame)),
        &whole_entries,
        &marker,
    );
    let truncation = cut.truncation.clone();
    let kept = truncation.as_ref().map_or(total, |t| {
        entry_ends
            .iter()
            .filter(|&&end| end <= t.cut_at_byte)
            .count()
    });
    catalog.listed = kept;
    catalog.omitted = total - kept;
    catalog.text = if max >= frame {
        render(&cut.text)?
    } else {
        // Not even the preamble fits: the generic cut, still marked.
        let whole = bound(&full, Limit::Bytes(max), &marker);
        catalog.listed = 0;
        catalog.omitted = total;
        whole.text.into_owned()
    };
    catalog.truncation = truncation;
    Ok(catalog)
}

fn push_element(out: &mut String, name: &str, value: &str) {
    out.push_str("    <");
    out.push_str(name);
    out.push('>');
    out.push_str(&escape_xml(value));
    out.push_str("</");
    out.push_str(name);
    out.push_str(">\n");
}

/// Paths shown to the model use `/` separators on every platform.
pub(crate) fn model_path(path: &std::path::Path) -> String {
    let text = path.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        text.into_owned()
    } else {
        text.replace(std::path::MAIN_SEPARATOR, "/")
    }
}
