//! Where each key of a config file is written: one span-keeping parse of
//! the file gives the 1-based line of every dotted key, and a table of line
//! starts turns any byte offset into a line and column by binary search. A
//! file with thousands of keys, each with a warning, is therefore read once
//! and located in linear time, never re-parsed per warning.

use std::collections::BTreeMap;

use toml::de::{DeTable, DeValue};

/// The 1-based line of every key of one file, by dotted key.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyLines {
    lines: BTreeMap<String, usize>,
}

impl KeyLines {
    /// Indexes `text`; a file that does not parse indexes no key.
    pub(crate) fn of(text: &str) -> KeyLines {
        #[cfg(test)]
        PARSES.with(|parses| parses.set(parses.get() + 1));
        let Ok(document) = DeTable::parse(text) else {
            return KeyLines::default();
        };
        let starts = LineStarts::of(text);
        let mut lines = BTreeMap::new();
        collect(document.get_ref(), "", &starts, &mut lines);
        KeyLines { lines }
    }

    /// The line of the last segment of a dotted `key`, whether it is
    /// written as a dotted key, inside a `[table]` or in an inline table.
    pub(crate) fn line_of(&self, key: &str) -> Option<usize> {
        self.lines.get(key).copied()
    }
}

fn collect(
    table: &DeTable<'_>,
    prefix: &str,
    starts: &LineStarts,
    out: &mut BTreeMap<String, usize>,
) {
    for (key, value) in table {
        let dotted = if prefix.is_empty() {
            key.get_ref().to_string()
        } else {
            format!("{prefix}.{}", key.get_ref())
        };
        out.insert(dotted.clone(), starts.line_and_column(key.span().start).0);
        if let DeValue::Table(inner) = value.get_ref() {
            collect(inner, &dotted, starts, out);
        }
    }
}

/// The byte offset where each line of a text starts.
pub(crate) struct LineStarts<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineStarts<'a> {
    /// Scans `text` once.
    pub(crate) fn of(text: &'a str) -> LineStarts<'a> {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, byte)| *byte == b'\n')
                .map(|(at, _)| at + 1),
        );
        LineStarts { text, starts }
    }

    /// 1-based line and column (in chars) of a byte offset.
    pub(crate) fn line_and_column(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        // The number of line starts at or before `offset` is its line.
        let line = self.starts.partition_point(|start| *start <= offset).max(1);
        let line_start = self.starts.get(line - 1).copied().unwrap_or(0);
        let column = self
            .text
            .get(line_start..offset)
            .map_or(0, |s| s.chars().count())
            + 1;
        (line, column)
    }
}

#[cfg(test)]
thread_local! {
    /// How many times this thread indexed a file: the structural check that
    /// warnings never re-parse their file.
    pub(crate) static PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_in_every_table_form() {
        let text = "# comment\n[skills]\nenabled = true\n\n[skills.prompt]\ncatalog = \"x\"\n\
                    [system_prompt]\nsections.user_authority = false\nx = { y = 1 }\n";
        let lines = KeyLines::of(text);
        assert_eq!(lines.line_of("skills.enabled"), Some(3));
        assert_eq!(lines.line_of("skills.prompt.catalog"), Some(6));
        assert_eq!(
            lines.line_of("system_prompt.sections.user_authority"),
            Some(8)
        );
        assert_eq!(lines.line_of("system_prompt.x.y"), Some(9));
        assert_eq!(lines.line_of("skills.missing"), None);
    }

    #[test]
    fn line_and_column_are_one_based() {
        let starts = LineStarts::of("ab\ncd");
        assert_eq!(starts.line_and_column(0), (1, 1));
        assert_eq!(starts.line_and_column(2), (1, 3));
        assert_eq!(starts.line_and_column(3), (2, 1));
        assert_eq!(starts.line_and_column(4), (2, 2));
        assert_eq!(starts.line_and_column(99), (2, 3));
        let starts = LineStarts::of("é\nü");
        assert_eq!(starts.line_and_column(2), (1, 2));
    }
}
