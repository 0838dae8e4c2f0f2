//! How a file path is written for the model: `/` separators on every
//! platform (and only the platform's separator is replaced, so a Unix file
//! name that contains `\` stays intact).

use std::borrow::Cow;
use std::path::{MAIN_SEPARATOR, Path};

/// `path` as text for the model. Borrowed (no allocation) for the usual
/// UTF-8 path on a `/` platform; invalid UTF-8 becomes U+FFFD.
pub fn model_path(path: &Path) -> Cow<'_, str> {
    // `to_str` validates in one fast pass; the lossy form is only for
    // the rare path that is not UTF-8.
    let text = path
        .to_str()
        .map_or_else(|| path.to_string_lossy(), Cow::Borrowed);
    if MAIN_SEPARATOR == '/' {
        text
    } else {
        Cow::Owned(text.replace(MAIN_SEPARATOR, "/"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_unix_paths_as_they_are() {
        assert_eq!(
            model_path(Path::new("/repo/skills/a\\b.md")),
            "/repo/skills/a\\b.md"
        );
        assert!(matches!(model_path(Path::new("/x/y")), Cow::Borrowed(_)));
    }
}
