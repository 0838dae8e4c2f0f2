//! Target `front_matter_yaml`: the input is the text between the `---`
//! lines of a skill file.

use bcode_skill::fuzzing;
use bcode_skill_models::DiagnosticCode;

use crate::skill_file;

/// Properties: the YAML front-matter parser never panics and answers the
/// same twice; wrapped in `---` lines, the file parses as a skill file
/// (see [`skill_file::check`]), and the skill parser rejects the front
/// matter as malformed exactly when the front-matter parser does.
pub fn check(data: &[u8]) {
    let wrapped = [b"---\n".as_slice(), data, b"\n---\nBody.\n"].concat();
    let outcome = skill_file::check(&wrapped);
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = fuzzing::yaml(raw);
    assert_eq!(parsed, fuzzing::yaml(raw), "not deterministic for {raw:?}");
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
