//! What the two front-matter targets share: the input wrapped in its
//! fence lines and checked as a skill file, then compared with what the
//! front-matter parser alone says of it.

use std::fmt::Debug;

use bcode_skill::ParseOutcome;
use bcode_skill_models::DiagnosticCode;

use crate::skill_file;

/// Properties: `parse` never panics and answers the same twice; `data`
/// wrapped in `fence` lines parses as a skill file (see
/// [`skill_file::check`]), and the skill parser rejects the front matter as
/// malformed exactly when `parse` does. Returns the skill file's outcome
/// (`SKILL.md`) for the target's own checks.
pub(crate) fn check<T, E>(
    data: &[u8],
    fence: &[u8],
    parse: fn(&str) -> Result<T, E>,
) -> ParseOutcome
where
    T: Debug + PartialEq,
    E: Debug + PartialEq,
{
    let wrapped = [fence, b"\n", data, b"\n", fence, b"\nBody.\n"].concat();
    let outcome = skill_file::check(&wrapped);
    let Ok(raw) = std::str::from_utf8(data) else {
        return outcome;
    };
    let parsed = parse(raw);
    assert_eq!(parsed, parse(raw), "not deterministic for {raw:?}");
    if !delimits(raw) {
        let rejected = outcome.diagnostics.iter().any(|d| {
            matches!(
                d.code,
                DiagnosticCode::MalformedFrontMatter | DiagnosticCode::FrontMatterTooComplex
            )
        });
        assert_eq!(
            rejected,
            parsed.is_err(),
            "front matter {raw:?}: parser {parsed:?}, skill file {outcome:?}"
        );
    }
    outcome
}

/// Whether `raw` holds something that ends or reshapes the block it is
/// wrapped in (a delimiter line, a byte-order mark or a line ending other
/// than LF), so the skill file's front matter is not `raw` itself.
pub(crate) fn delimits(raw: &str) -> bool {
    raw.contains('\r')
        || raw.contains('\u{feff}')
        || raw.split('\n').any(|line| {
            line.starts_with("---") || line.starts_with("+++") || line.starts_with("...")
        })
}
