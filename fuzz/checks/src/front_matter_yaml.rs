//! Target `front_matter_yaml`: the input is the text between the `---`
//! lines of a skill file.

use bcode_skill::fuzzing;

use crate::front_matter;

/// Properties: the YAML front-matter parser never panics and answers the
/// same twice; wrapped in `---` lines, the file parses as a skill file,
/// and the skill parser rejects the front matter as malformed exactly when
/// the front-matter parser does (the driver both front-matter targets share).
pub fn check(data: &[u8]) {
    front_matter::check(data, b"---", fuzzing::yaml);
}
