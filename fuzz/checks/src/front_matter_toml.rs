//! Target `front_matter_toml`: the input is the text between the `+++`
//! lines of a skill file.

use bcode_skill::fuzzing::{self, MAX_DEPTH, MAX_NODES};
use bcode_skill_models::DiagnosticCode;

use crate::front_matter;

/// Unknown fields the validator reports one by one, plus the one that
/// counts the rest.
const MAX_UNKNOWN_FIELD_DIAGNOSTICS: usize = 21;

/// Properties: the TOML front-matter parser never panics and answers the
/// same twice; wrapped in `+++` lines, the file parses as a skill file,
/// and the skill parser rejects the front matter as malformed exactly when
/// the front-matter parser does (the driver both front-matter targets
/// share). The budget holds: a document the `toml` crate reads with more
/// than [`MAX_NODES`] nodes or deeper than [`MAX_DEPTH`] is rejected as too
/// complex (the skill skipped with `front_matter_too_complex`), one within
/// it never is, and a skill file never reports more than
/// `MAX_UNKNOWN_FIELD_DIAGNOSTICS` unknown fields.
pub fn check(data: &[u8]) {
    let outcome = front_matter::check(data, b"+++", fuzzing::toml);
    let unknown = outcome
        .diagnostics
        .iter()
        .filter(|d| d.code == DiagnosticCode::UnknownField)
        .count();
    assert!(
        unknown <= MAX_UNKNOWN_FIELD_DIAGNOSTICS,
        "{unknown} unknown_field diagnostics"
    );
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(table) = toml::from_str::<toml::Table>(raw) else {
        return;
    };
    let (nodes, depth) = measure(&table);
    let over = nodes > MAX_NODES || depth > MAX_DEPTH;
    assert_eq!(
        fuzzing::toml_over_budget(raw),
        over,
        "{nodes} nodes, depth {depth}"
    );
    if over && !front_matter::delimits(raw) {
        assert!(outcome.skill.is_none(), "{outcome:?}");
        let codes: Vec<DiagnosticCode> = outcome.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, [DiagnosticCode::FrontMatterTooComplex]);
    }
}

/// Nodes and depth of a table as the budget counts them: the root table
/// is one node at depth 1, every key and value one more, a nested table
/// or array one level deeper.
fn measure(root: &toml::Table) -> (usize, usize) {
    fn value(v: &toml::Value, depth: usize) -> (usize, usize) {
        match v {
            toml::Value::Table(t) => table(t, depth + 1),
            toml::Value::Array(items) => items.iter().fold((1, depth + 1), |(n, d), item| {
                let (inner, inner_depth) = value(item, depth + 1);
                (n + inner, d.max(inner_depth))
            }),
            _ => (1, depth),
        }
    }
    fn table(t: &toml::Table, depth: usize) -> (usize, usize) {
        t.values().fold((1, depth), |(n, d), v| {
            let (inner, inner_depth) = value(v, depth);
            (n + 1 + inner, d.max(inner_depth))
        })
    }
    table(root, 1)
}
