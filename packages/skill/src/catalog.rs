//! The model-visible skill catalog: metadata only, every value XML-escaped,
//! model-hidden skills omitted, optionally bounded. The per-skill entries are
//! a data format and are written here; every sentence around them comes from
//! `templates/skills/catalog.j2`.

use bcode_skill_models::{CatalogMode, SkillSummary, SkillsPromptConfig};
use bcode_text::{Limit, Truncation, bound, bound_at, escape_xml_into, model_path};
use minijinja::context;

use bcode_templates::{TemplateError, Templates};

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
    /// What the `max_bytes` cut removed from the list of entries (offsets
    /// into the entries, without the template text around them), or `None` when
    /// every model-visible skill fit.
    pub truncation: Option<Truncation>,
}

/// Options beyond `[skills.prompt]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CatalogOptions<'a> {
    /// The `[skills.prompt]` table: whether the catalog is shown, its byte
    /// budget and the description length cap.
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
    templates: &Templates,
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
    // One pass over the summaries picks the visible ones and sizes the
    // buffer (each pass over 10,000 summaries is 10,000 cache misses when
    // they are not in cache).
    let mut estimate = 0;
    let visible: Vec<&SkillSummary> = skills
        .filter(|s| s.model_visible())
        .inspect(|s| {
            let m = &s.manifest;
            estimate += 160
                + m.id.as_str().len()
                + m.name.len()
                + m.description.len()
                + s.location.as_os_str().len()
                + s.source.label.len();
        })
        .collect();
    if visible.is_empty() {
        return Ok(catalog);
    }
    // The preamble and closing come from the template, rendered once around
    // a placeholder; the entries are written between them in one pre-sized
    // buffer, values escaped straight into it. A 10,000-skill catalog is
    // megabytes, and every extra copy of it showed in profiles.
    let frame_text = templates.render(
        "skills/catalog.j2",
        context! { entries => ENTRIES_SLOT, user_skills_enabled => options.user_skills_enabled },
    )?;
    let (head, tail) = frame_text
        .split_once(ENTRIES_SLOT)
        .unwrap_or((frame_text.as_str(), ""));
    let mut full = String::with_capacity(head.len() + estimate + tail.len());
    full.push_str(head);
    // Entry ends, as offsets into the entry list (not into `full`).
    let mut entry_ends = Vec::with_capacity(visible.len());
    for chunk in visible.chunks(PREFETCH_CHUNK) {
        prefetch_value_cache_lines(chunk);
        for skill in chunk {
            let m = &skill.manifest;
            // Each tag is written as one piece (a catalog of 10,000 skills made
            // hundreds of thousands of tiny copies when tags were assembled
            // from `<`, name and `>`).
            push_element(&mut full, "  <skill>\n    <id>", m.id.as_str(), "</id>\n");
            push_element(&mut full, "    <name>", &m.name, "</name>\n");
            if summary {
                match prompt.max_description_chars {
                    Some(max) => {
                        let cut = bound(&m.description, Limit::Chars(max), &|_| ellipsis.clone());
                        if cut.truncation.is_some() {
                            catalog.descriptions_cut += 1;
                        }
                        push_element(&mut full, DESCRIPTION, &cut.text, DESCRIPTION_END);
                    }
                    None => push_element(&mut full, DESCRIPTION, &m.description, DESCRIPTION_END),
                }
            }
            push_element(
                &mut full,
                "    <location>",
                &model_path(&skill.location),
                "</location>\n",
            );
            if summary && prompt.include_sources {
                push_element(
                    &mut full,
                    "    <source>",
                    &skill.source.label,
                    "</source>\n",
                );
            }
            if summary && prompt.include_keywords && !m.activation.keywords.is_empty() {
                let keywords = m.activation.keywords.join(", ");
                push_element(&mut full, "    <keywords>", &keywords, "</keywords>\n");
            }
            full.push_str("  </skill>\n");
            entry_ends.push(full.len() - head.len());
        }
    }
    full.push_str(tail);
    let render = |entries: &str| {
        let mut text = String::with_capacity(head.len() + entries.len() + tail.len());
        text.push_str(head);
        text.push_str(entries);
        text.push_str(tail);
        text
    };
    let total = entry_ends.len();
    let Some(max) = prompt.max_bytes.filter(|&max| full.len() > max) else {
        catalog.listed = total;
        catalog.text = full;
        return Ok(catalog);
    };
    // Keep whole entries: cut the entry list so that the preamble, the kept
    // entries, the marker and the closing tag fit in `max` together.
    let frame = head.len() + tail.len();
    let entries = &full[head.len()..full.len() - tail.len()];
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
        entries,
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
    if max >= frame {
        catalog.text = render(&cut.text);
        catalog.truncation = truncation;
    } else {
        // Not even the preamble and closing tag fit: the catalog becomes just
        // the marker (when that fits), never a preamble cut mid-sentence or
        // an unclosed element, and the whole text is reported as cut.
        let marker = render_marker(total)?;
        catalog.text = if marker.len() <= max {
            marker
        } else {
            String::new()
        };
        catalog.listed = 0;
        catalog.omitted = total;
        catalog.truncation = Some(Truncation {
            limit: Limit::Bytes(max),
            cut_at_byte: 0,
            original_bytes: full.len(),
            original_chars: full.chars().count(),
            omitted_bytes: full.len(),
            omitted_chars: full.chars().count(),
        });
    }
    Ok(catalog)
}

/// Entries whose values are prefetched together (see
/// [`prefetch_value_cache_lines`]): enough independent loads to keep the
/// memory system busy, few enough that the lines are still in L1/L2 when
/// the entries are written (16-64 measured alike).
const PREFETCH_CHUNK: usize = 32;

/// Touches one byte of every cache line of the values a chunk of entries is
/// about to copy, before any of them is written. The summaries' strings are
/// scattered over the heap, so each value's first line is a cache miss;
/// taken one value at a time (scan, then copy) those misses ran one after
/// the other and were half of formatting. Here the loads are independent, so
/// the CPU has many in flight at once. `black_box` only keeps the loads from
/// being optimised away.
// Kept for criterion `catalog/format/10000`: 4.7 -> 2.2 ms (benches/README.md).
fn prefetch_value_cache_lines(chunk: &[&SkillSummary]) {
    let mut acc = 0u8;
    for s in chunk {
        for value in [
            s.manifest.id.as_str().as_bytes(),
            s.manifest.name.as_bytes(),
            s.manifest.description.as_bytes(),
            s.location.as_os_str().as_encoded_bytes(),
            s.source.label.as_bytes(),
        ] {
            acc ^= value.iter().step_by(64).fold(0, |a, &b| a ^ b);
        }
    }
    std::hint::black_box(acc);
}

/// `open`, `value` escaped, `close`: one catalog element.
fn push_element(out: &mut String, open: &str, value: &str, close: &str) {
    out.push_str(open);
    escape_xml_into(out, value);
    out.push_str(close);
}

const DESCRIPTION: &str = "    <description>";
const DESCRIPTION_END: &str = "</description>\n";

/// A placeholder that cannot occur in rendered text (NUL), marking where the
/// entries go in the rendered catalog template.
const ENTRIES_SLOT: &str = "\u{0}entries\u{0}";
