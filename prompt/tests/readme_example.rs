//! The README's host program is the example that `cargo test` compiles
//! (`examples/turn_builder.rs`), and its `Cargo.toml` names the tokio
//! features that program needs: what a reader copies compiles.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

/// The body of the first fenced block of `lang` after `heading`.
fn block<'a>(text: &'a str, heading: &str, lang: &str) -> &'a str {
    let from = text
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?}"));
    let fence = format!("```{lang}\n");
    let start = from + text[from..].find(&fence).unwrap() + fence.len();
    let end = start + text[start..].find("```\n").unwrap();
    &text[start..end]
}

#[test]
fn the_readme_program_is_the_compiled_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("../README.md")).unwrap();
    let example = std::fs::read_to_string(root.join("examples/turn_builder.rs")).unwrap();
    assert_eq!(block(&readme, "## Use as a library", "rust"), example);

    let manifest: toml::Table =
        toml::from_str(block(&readme, "## Use as a library", "toml")).unwrap();
    let deps = manifest["dependencies"].as_table().unwrap();
    assert!(deps.contains_key("bcode-prompt"));
    let features: Vec<&str> = deps["tokio"]["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    // `#[tokio::main(flavor = "current_thread")]` needs both.
    assert!(example.contains("#[tokio::main(flavor = \"current_thread\")]"));
    assert_eq!(features, ["macros", "rt"]);
}
