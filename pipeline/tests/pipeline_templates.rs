//! Template overrides read from a directory, as the CLI does for
//! `system_prompt.templates_dir`: replacement by name, warnings for unknown
//! names, and a parse failure that names the template, the file and the line.

// Test helpers may fail loudly too; clippy.toml only covers `#[test]` bodies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bcode_templates::{
    EMBEDDED, TemplateError, TemplatePhase, TemplateWarning, Templates, read_overrides,
};
use bcode_test_support::mkfifo;

/// A user's own override folder: links may lead anywhere but `/proc`,
/// `/sys` and `/dev`.
fn anywhere() -> bcode_fs::Confinement {
    bcode_fs::Confinement::anywhere_but_system()
}

#[test]
fn a_directory_overrides_by_name_and_warns_about_strangers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.j2"), "Operator base.\n").unwrap();
    std::fs::write(dir.path().join("bsae.j2"), "typo").unwrap();
    std::fs::write(dir.path().join("README.md"), "not a template").unwrap();
    let overrides = read_overrides(dir.path(), &anywhere()).unwrap().overrides;
    let names: Vec<&str> = overrides.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["base.j2", "bsae.j2"]);

    let templates = Templates::new(&[EMBEDDED], overrides).unwrap();
    assert_eq!(
        templates.render("base.j2", minijinja::context! {}).unwrap(),
        "Operator base."
    );
    let file = dir.path().join("bsae.j2").display().to_string();
    assert_eq!(
        templates.warnings(),
        [TemplateWarning::UnknownTemplate {
            name: "bsae.j2".into(),
            file
        }]
    );
    let names: Vec<&str> = EMBEDDED.iter().map(|(name, _)| *name).collect();
    assert_eq!(templates.names(), names);
}

#[test]
fn a_directory_override_that_does_not_parse_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("truncation_marker.j2");
    std::fs::write(&path, "[cut\n{{ omitted }\n]").unwrap();
    let err = Templates::new(
        &[EMBEDDED],
        read_overrides(dir.path(), &anywhere()).unwrap().overrides,
    )
    .unwrap_err();
    let file = path.display().to_string();
    assert_eq!(
        err,
        TemplateError::Override {
            name: "truncation_marker.j2".into(),
            file: file.clone(),
            phase: TemplatePhase::Parse,
            line: Some(2),
            detail: "syntax error: unexpected `}`, expected end of variable block".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "template `truncation_marker.j2` overridden by {file} failed to parse at line 2: \
             syntax error: unexpected `}}`, expected end of variable block"
        )
    );
}

#[test]
fn a_missing_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let err = read_overrides(&missing, &anywhere()).unwrap_err();
    assert!(
        matches!(err, TemplateError::Unreadable { ref path, .. } if *path == missing.display().to_string())
    );
}

#[test]
fn a_hostile_override_directory_cannot_crash_or_hang_the_render() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/base.j2"), "nested").unwrap();
    // A link back to the top would recurse forever if followed.
    std::os::unix::fs::symlink(dir.path(), dir.path().join("sub/loop")).unwrap();
    let found = bcode_templates::read_overrides(dir.path(), &anywhere()).unwrap();
    let names: Vec<&str> = found.overrides.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["sub/base.j2"]);

    // A FIFO named like a template is refused at once, never opened blocking.
    let fifo = dir.path().join("stall.j2");
    mkfifo(&fifo);
    let err = bcode_templates::read_overrides(dir.path(), &anywhere()).unwrap_err();
    assert!(err.to_string().contains("stall.j2"), "{err}");
    assert!(err.to_string().contains("not a regular file"), "{err}");
}
