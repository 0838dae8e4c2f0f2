//! `render --explain`: the section table in words an operator reads without
//! the JSON at hand. One row per section (part, class, bytes, estimated
//! tokens, whether and how it was cut, where it came from, with paths
//! relative to the repository or `~/`), the size of the cacheable and the
//! request-only parts, every omitted section with its reason in English,
//! and the stages' notes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use bcode_prompt::report::{AssembledPrompt, OmitReason, Placement, SectionClass, SectionReport};

use crate::terminal::printable_line;
use crate::tokens;

/// Where paths are shown from: the repository, and the home for `~/`.
#[derive(Debug, Clone)]
pub struct PathBase {
    /// The repository root (absolute, normalised).
    pub repo: PathBuf,
    /// The home directory, when `HOME` is set.
    pub home: Option<PathBuf>,
}

impl PathBase {
    /// A source as the operator reads it: an absolute path made relative to
    /// the repository (or `~/…` under the home), `.` and `..` resolved; a
    /// command or config key unchanged.
    pub fn show(&self, source: &str) -> String {
        let path = Path::new(source);
        if !path.is_absolute() {
            return source.to_owned();
        }
        let path = normalise(path);
        if let Ok(rest) = path.strip_prefix(&self.repo) {
            return if rest.as_os_str().is_empty() {
                ".".to_owned()
            } else {
                bcode_prompt::text::model_path(rest).into_owned()
            };
        }
        if let Some(home) = &self.home
            && let Ok(rest) = path.strip_prefix(home)
        {
            return format!("~/{}", bcode_prompt::text::model_path(rest));
        }
        bcode_prompt::text::model_path(&path).into_owned()
    }
}

/// `path` with `.` components dropped and `..` applied, without touching
/// the filesystem (the file may be gone by now; a symlink is shown as
/// named).
pub fn normalise(path: &Path) -> PathBuf {
    bcode_prompt::text::lexical(path)
}

/// Why a section is absent, in words.
pub fn omitted_reason(reason: &OmitReason) -> String {
    match reason {
        OmitReason::Disabled { toggle } => {
            format!("disabled by system_prompt.sections.{toggle}")
        }
        OmitReason::Empty => "nothing to show".to_owned(),
        OmitReason::Failed { message } => format!("failed: {message}"),
        // A reason added later still reads as something.
        _ => "not shown".to_owned(),
    }
}

fn class_name(class: SectionClass) -> &'static str {
    match class {
        SectionClass::Static => "static",
        SectionClass::Session => "session",
        _ => "turn",
    }
}

fn part_name(placement: Placement) -> &'static str {
    match placement {
        Placement::System => "system",
        _ => "request",
    }
}

/// The `cut` cell: `no`, `yes`, or `marker only` when a limit kept none
/// of the text.
fn cut_cell(section: &SectionReport) -> &'static str {
    if section.truncations.iter().any(|t| t.kept_nothing()) {
        "marker only"
    } else if section.truncated {
        "yes"
    } else {
        "no"
    }
}

fn section_text<'a>(prompt: &'a AssembledPrompt, section: &SectionReport) -> &'a str {
    let part = match section.placement {
        Placement::System => &prompt.system,
        _ => &prompt.request_context,
    };
    part.get(section.range.clone()).unwrap_or("")
}

/// One "N bytes, M tokens" phrase.
fn size(text: &str, counter: &mut tokens::Counter) -> String {
    match counter.count(text) {
        Some(n) => format!("{} bytes, {} tokens", text.len(), n.shown()),
        None => format!("{} bytes", text.len()),
    }
}

/// The whole `--explain` report.
pub fn explain(prompt: &AssembledPrompt, paths: &PathBase) -> String {
    let mut out = String::new();
    let mut counter = tokens::Counter::new();
    // The id column fits the longest id (a nested instruction file's id
    // names its whole path), so every row keeps its columns.
    let width = id_width(prompt.sections.iter().map(|s| s.id.as_str()), ID_WIDTH);
    let _ = writeln!(
        out,
        "{:<width$} {:<7} {:<7} {:>7} {:>7} {:<11} sources",
        "section", "part", "class", "bytes", "tokens", "cut"
    );
    for s in &prompt.sections {
        // Ids, sources, reasons and notes name repository files: shown
        // through `printable_line`, so an escape sequence or a line break in
        // a file name is displayed, not obeyed, and the table keeps its
        // rows. The table is for reading, never the prompt, so this holds
        // on a pipe too.
        let sources = if s.sources.is_empty() {
            "-".to_owned()
        } else {
            s.sources
                .iter()
                .map(|source| printable_line(&paths.show(source)).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            out,
            "{:<width$} {:<7} {:<7} {:>7} {:>7} {:<11} {sources}",
            printable_line(&s.id),
            part_name(s.placement),
            class_name(s.class),
            s.bytes,
            tokens::cell(counter.count(section_text(prompt, s))),
            cut_cell(s),
        );
    }

    let boundary = prompt.cache_boundary.min(prompt.system.len());
    let (cached, uncached) = prompt.system.split_at(boundary);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "cacheable prefix (system text before the cache boundary, byte {boundary}): {}",
        size(cached, &mut counter)
    );
    let _ = writeln!(
        out,
        "system text after the boundary (changes per turn): {}",
        size(uncached, &mut counter)
    );
    let _ = writeln!(
        out,
        "request-only context: {}",
        size(&prompt.request_context, &mut counter)
    );
    if tokens::enabled() {
        let _ = writeln!(
            out,
            "(tokens are estimates with the {} encoding; other models count differently)",
            tokens::ENCODING
        );
    }
    if counter.estimated_any() {
        let _ = writeln!(out, "{}", tokens::budget_note());
    }

    if !prompt.omitted.is_empty() {
        let _ = writeln!(out, "\nomitted:");
        let width = id_width(prompt.omitted.iter().map(|o| o.id.as_str()), ID_WIDTH - 2);
        for o in &prompt.omitted {
            let _ = writeln!(
                out,
                "  {:<width$} {}",
                printable_line(&o.id),
                printable_line(&omitted_reason(&o.reason))
            );
        }
    }
    let mut notes = String::new();
    for s in &prompt.sections {
        for note in &s.notes {
            let _ = writeln!(
                notes,
                "  {}: {}",
                printable_line(&s.id),
                printable_line(&show_paths_in(note, paths))
            );
        }
    }
    if !notes.is_empty() {
        let _ = writeln!(out, "\nnotes:");
        out.push_str(&notes);
    }
    out
}

/// The id column's width when every id fits it: wide enough for the
/// canonical ids, so the common table looks the same whatever it holds.
const ID_WIDTH: usize = 34;

/// The width of a column of `ids` as shown: the longest, at least `least`.
fn id_width<'a>(ids: impl Iterator<Item = &'a str>, least: usize) -> usize {
    ids.map(|id| printable_line(id).chars().count())
        .max()
        .unwrap_or(0)
        .max(least)
}

/// A note with every absolute path in it shown like a source.
fn show_paths_in(note: &str, paths: &PathBase) -> String {
    note.split(' ')
        .map(|word| {
            let trimmed = word.trim_end_matches([',', ';', ':', ')']);
            if trimmed.starts_with('/') {
                format!("{}{}", paths.show(trimmed), &word[trimmed.len()..])
            } else {
                word.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> PathBase {
        PathBase {
            repo: PathBuf::from("/src/repo"),
            home: Some(PathBuf::from("/home/ada")),
        }
    }

    #[test]
    fn sources_are_shown_from_the_repository_or_the_home() {
        let paths = base();
        for (source, shown) in [
            ("/src/repo/AGENTS.md", "AGENTS.md"),
            ("/src/repo/./.bcode/bcode.toml", ".bcode/bcode.toml"),
            ("/src/repo/sub/../BCODE.md", "BCODE.md"),
            ("/src/repo", "."),
            (
                "/home/ada/.config/bcode/skills/x/SKILL.md",
                "~/.config/bcode/skills/x/SKILL.md",
            ),
            ("/elsewhere/./skills/y.md", "/elsewhere/skills/y.md"),
            ("git status --porcelain", "git status --porcelain"),
            ("system_prompt.text", "system_prompt.text"),
        ] {
            assert_eq!(paths.show(source), shown, "{source}");
        }
    }

    #[test]
    fn omitted_reasons_read_as_words() {
        assert_eq!(
            omitted_reason(&OmitReason::Disabled {
                toggle: "locale".into()
            }),
            "disabled by system_prompt.sections.locale"
        );
        assert_eq!(omitted_reason(&OmitReason::Empty), "nothing to show");
        assert_eq!(
            omitted_reason(&OmitReason::Failed {
                message: "git status was not gathered".into()
            }),
            "failed: git status was not gathered"
        );
    }

    #[test]
    fn paths_inside_notes_are_shown_like_sources() {
        assert_eq!(
            show_paths_in("cannot read /src/repo/./BCODE.md: denied", &base()),
            "cannot read BCODE.md: denied"
        );
    }
}
