//! Where each target's seeds come from, relative to the repository root.
//! `fuzz/seed.sh` copies the same files into `fuzz/corpus/<target>/` for
//! cargo-fuzz; the replay test reads them in place, so `cargo test` covers
//! every seed without the script having run. Keep the two in step.
//!
//! - `fuzz/seeds/<target>/`: a committed handful per target (hostile
//!   shapes from the skill tests, the config example);
//! - `fuzz/corpus/<target>/`: what `seed.sh` and cargo-fuzz left there;
//! - markdown under `tests/fixtures`, `tests/cases` and `../shared/corpus`
//!   (real-world skills beside the clone, when present): whole files for
//!   `document`, their YAML front matter for `front_matter_yaml` and
//!   `yaml_differential`;
//! - TOML under `tests/cases` and `config-schema`: `front_matter_toml`
//!   takes every file, `config` the `bcode.toml` files and the example;
//! - [`generated`] seeds, too large to be worth committing: TOML front
//!   matter of 25,000 short keys for `front_matter_toml` (issue 24's
//!   flood, over the front-matter budget).

use std::fs;
use std::path::{Path, PathBuf};

/// One seed: where it came from (for failure messages) and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seed {
    /// The file it was read from.
    pub path: PathBuf,
    /// The input given to the check (a file, or the front matter of one).
    pub bytes: Vec<u8>,
}

/// Every seed of `target` below the repository `root`, in a fixed order.
pub fn seeds(root: &Path, target: &str) -> Vec<Seed> {
    let fuzz = root.join("fuzz");
    let mut seeds = whole(&files(&fuzz.join("seeds").join(target), |_| true));
    seeds.extend(whole(&files(&fuzz.join("corpus").join(target), |_| true)));
    let markdown = || {
        ["tests/fixtures", "tests/cases", "../shared/corpus"]
            .iter()
            .flat_map(|dir| files(&root.join(dir), |p| has_extension(p, "md")))
            .collect::<Vec<_>>()
    };
    let toml = |keep: fn(&Path) -> bool| {
        ["tests/cases", "config-schema"]
            .iter()
            .flat_map(|dir| files(&root.join(dir), |p| has_extension(p, "toml") && keep(p)))
            .collect::<Vec<_>>()
    };
    match target {
        "document" => seeds.extend(whole(&markdown())),
        "front_matter_yaml" | "yaml_differential" => {
            seeds.extend(markdown().into_iter().filter_map(|path| {
                let bytes = fs::read(&path).ok()?;
                let front = yaml_front_matter(&bytes)?.to_vec();
                Some(Seed { path, bytes: front })
            }));
        }
        "front_matter_toml" => seeds.extend(whole(&toml(|_| true))),
        "config" => seeds.extend(whole(&toml(|p| {
            p.file_name()
                .is_some_and(|n| n == "bcode.toml" || n == "bcode.example.toml")
        }))),
        _ => {}
    }
    seeds
}

/// Seeds built here rather than read from a file, for `target`. The
/// replay test checks them but does not mutate them (each is hundreds of
/// kilobytes); `seed.sh` writes the same bytes into the corpus.
pub fn generated(target: &str) -> Vec<Seed> {
    match target {
        "front_matter_toml" => vec![Seed {
            path: PathBuf::from("(generated) 25000-short-keys.toml"),
            bytes: toml_flood(25_000).into_bytes(),
        }],
        _ => Vec::new(),
    }
}

/// TOML front matter of a description and `keys` short unknown keys
/// (`k0=1`, `k1=1`, ... in hexadecimal): 25,000 of them are 175 KB, inside
/// the 256 KiB a skill file may have, and 50,001 nodes.
pub fn toml_flood(keys: usize) -> String {
    let mut text = String::from("description = \"d\"\n");
    for i in 0..keys {
        text.push_str(&format!("k{i:x}=1\n"));
    }
    text
}

/// The text between a first line `---` and the next line `---` (what
/// `seed.sh` extracts with awk).
pub fn yaml_front_matter(bytes: &[u8]) -> Option<&[u8]> {
    let rest = bytes.strip_prefix(b"---\n")?;
    if rest.starts_with(b"---\n") {
        return Some(&[]);
    }
    let end = rest.windows(5).position(|w| w == b"\n---\n")?;
    Some(&rest[..=end])
}

fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension().is_some_and(|e| e == extension)
}

fn whole(paths: &[PathBuf]) -> Vec<Seed> {
    paths
        .iter()
        .filter_map(|path| {
            let bytes = fs::read(path).ok()?;
            Some(Seed {
                path: path.clone(),
                bytes,
            })
        })
        .collect()
}

/// Regular files below `dir` (symlinks not followed) that `keep` accepts,
/// sorted; none when `dir` is missing.
fn files(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => stack.push(path),
                Ok(kind) if kind.is_file() && keep(&path) => found.push(path),
                _ => {}
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::yaml_front_matter;

    #[test]
    fn front_matter_is_the_text_between_the_first_two_delimiter_lines() {
        assert_eq!(
            yaml_front_matter(b"---\na: b\n---\nbody\n---\n"),
            Some(b"a: b\n".as_slice())
        );
        assert_eq!(yaml_front_matter(b"---\n---\nbody\n"), Some(b"".as_slice()));
        assert_eq!(yaml_front_matter(b"---\na: b\n"), None);
        assert_eq!(yaml_front_matter(b"# title\n---\na\n---\n"), None);
    }
}
