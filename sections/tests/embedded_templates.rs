//! Embedded templates are compiled on first use, so a syntax error in one
//! would otherwise surface only when its section renders: every one of them
//! is compiled here.

#![allow(clippy::unwrap_used)]

use bcode_templates::{EMBEDDED, TemplateError, Templates};

#[test]
fn every_embedded_template_compiles() {
    let templates = Templates::builtin();
    templates.compile_all().unwrap();
    assert!(templates.names().len() >= 20);
}

#[test]
fn a_broken_embedded_template_is_named_by_compile_all() {
    const BROKEN: &[(&str, &str)] = &[("sections/broken.j2", "{% if %}")];
    let templates = Templates::embedded(&[EMBEDDED, BROKEN]).unwrap();
    let err = templates.compile_all().unwrap_err();
    assert!(
        matches!(&err, TemplateError::Builtin { name, .. } if name == "sections/broken.j2"),
        "{err}"
    );
}
