//! Human rendering of skill diagnostics: severity, code and message, the file
//! position with a source excerpt and a caret, and the hint, the way compilers
//! and minijinja print errors. JSON output uses the diagnostic structs as they
//! are.
//!
//! Messages, hints, paths and source excerpts quote text from skill files,
//! so everything is shown through [`crate::terminal`]: an escape sequence in
//! a skill is displayed, never obeyed by the terminal.

use std::fmt::Write as _;

use bcode_prompt::skills::{Diagnostic, Severity};

use crate::terminal::{printable, printable_line};

/// Renders `diagnostic` for a terminal. Reads the one line it points at (the
/// CLI is the edge; the library never flattens diagnostics to text).
pub fn render(diagnostic: &Diagnostic) -> String {
    let mut out = format!(
        "{}[{}]: {}\n",
        diagnostic.severity,
        diagnostic.code,
        printable(&diagnostic.message())
    );
    if let Some(path) = &diagnostic.path {
        let position = match (diagnostic.line, diagnostic.column) {
            (Some(line), Some(column)) => format!(":{line}:{column}"),
            (Some(line), None) => format!(":{line}"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  --> {}{position}",
            printable_line(&path.display().to_string())
        );
        if let Some(line_no) = diagnostic.line
            && let Some(text) = source_line(path, line_no)
        {
            let gutter = line_no.to_string().len();
            let _ = writeln!(out, "{:gutter$} |", "");
            // One line (no `\n` in it): `printable` keeps its tabs, which the
            // caret line below repeats so the caret stays aligned.
            let _ = writeln!(out, "{line_no} | {}", printable(&text));
            if let Some(column) = diagnostic.column {
                // The caret goes under the column's character as shown: a
                // control character before it takes the width of its escape.
                let before: String = text
                    .chars()
                    .take(column.saturating_sub(1) as usize)
                    .collect();
                let pad = printable(&before)
                    .chars()
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect::<String>();
                let _ = writeln!(out, "{:gutter$} | {pad}^", "");
            }
        }
    }
    if let Some(hint) = diagnostic.hint() {
        let _ = writeln!(out, "  = hint: {}", printable(&hint));
    }
    out
}

fn source_line(path: &std::path::Path, line: u32) -> Option<String> {
    // Through bcode-fs like every other read of a skill tree: regular files
    // only, non-blocking, bounded (the diagnostic may be about a FIFO or a
    // huge file).
    let bytes = bcode_prompt::files::read_bounded(path, 4 * 1024 * 1024).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let raw = text.lines().nth(line.checked_sub(1)? as usize)?;
    let shown: String = raw.trim_end_matches('\r').chars().take(200).collect();
    Some(shown)
}

/// "2 errors, 3 warnings, 1 info", or `None` when there are none.
pub fn summary<'a>(diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> Option<String> {
    // Counted in one pass over borrowed diagnostics: at a registry's scale
    // (57,000 warnings) a filtered copy of the list was 10 MB of the peak.
    let mut counts = [0usize; 3];
    for d in diagnostics {
        let at = match d.severity {
            Severity::Error => 0,
            Severity::Warning => 1,
            Severity::Info => 2,
        };
        if let Some(count) = counts.get_mut(at) {
            *count += 1;
        }
    }
    let parts: Vec<String> = counts
        .into_iter()
        .zip(["error", "warning", "info"])
        .filter(|(n, _)| *n > 0)
        .map(|(n, name)| {
            format!(
                "{n} {name}{}",
                if n > 1 && name != "info" { "s" } else { "" }
            )
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}
