//! Generates the list of embedded templates from this crate's own folder
//! (`templates/` at the workspace root: the `*.j2` files beside `src/`), so
//! no crate keeps a hand-written list and the package carries every
//! template it embeds: a template file added there is embedded, and one
//! removed is gone, at the next build.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest;
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, "", &mut files);
    files.sort();
    let mut out = String::from(
        "/// Every template under `templates/`, `(name, source)`, sorted by name.\n\
         pub const EMBEDDED: &[crate::EmbeddedTemplate] = &[\n",
    );
    for (name, path) in &files {
        let _ = writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("embedded.rs");
    if let Err(err) = std::fs::write(&dest, out) {
        println!("cargo:warning=cannot write {}: {err}", dest.display());
        std::process::exit(1);
    }
}

/// `*.j2` files below `dir`, named by their path relative to the templates
/// folder with `/` separators.
fn collect(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        println!(
            "cargo:warning=cannot read the templates folder {}",
            dir.display()
        );
        std::process::exit(1);
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if path.is_dir() {
            // The crate's code and a build folder hold no templates.
            if prefix.is_empty() && (name == "src" || name.starts_with("target")) {
                continue;
            }
            collect(&path, &format!("{name}/"), out);
        } else if name.ends_with(".j2") {
            let path = path.canonicalize().unwrap_or(path);
            out.push((name, path));
        }
    }
}
