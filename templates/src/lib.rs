//! The one template environment of Bcode: every model-visible sentence, of
//! the skill registry and of the prompt sections alike, comes from a minijinja
//! template under `templates/`, embedded at build time (the list is generated
//! by `build.rs`, so no crate keeps one by hand), and an operator directory
//! (`system_prompt.templates_dir`) can replace any of them by name. Overrides
//! and their provenance ([`TemplateUse`]) are handled here and nowhere else.
//!
//! Settings, and why:
//! - strict undefined behaviour, so a misspelt variable is an error instead
//!   of a silently empty string in the prompt;
//! - auto-escaping off for every name, because the output is prompt text, not
//!   HTML (minijinja would otherwise HTML-escape names ending `.xml`/`.html`);
//!   values placed inside XML-style blocks go through the `xml` filter, which
//!   uses the one escaper in `bcode-text`;
//! - `trim_blocks` and `lstrip_blocks`, so `{% if %}` lines do not leave blank
//!   lines behind, and the default stripping of one trailing newline, so a
//!   template file ending in a newline renders without it (one whitespace
//!   rule for every template; a template that must end in a newline says so
//!   with `{{ "\n" }}`);
//! - fuel and an output cap, so an operator's (or a repository's) override
//!   cannot loop for ever or grow without bound: either ends that render with
//!   a [`TemplateError`] naming the template.
//!
//! Reading the override directory is the only I/O here ([`read_overrides`]);
//! it is meant to be called at the edge (the CLI), and [`Templates::new`]
//! takes the files as data.

#![warn(missing_docs)]

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use bcode_fs::{Confinement, EscapeReason};
use minijinja::syntax::SyntaxConfig;
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};
use serde::Serialize;

/// A template shipped inside a binary: `(name, source)`.
pub type EmbeddedTemplate = (&'static str, &'static str);

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// Instructions one render may execute before it fails: ample for every
/// embedded template at any registry size (they loop over pre-rendered
/// entries, or over a handful of values), and a runaway override loop stops
/// within about a second.
pub const RENDER_FUEL: u64 = 2_000_000;

/// The most bytes one render may produce (64 MiB): a 60,000-skill catalog is
/// about 26 MB, so only a runaway template reaches it.
pub const MAX_RENDER_BYTES: usize = 64 * 1024 * 1024;

/// An operator's replacement for one template, already read from disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateOverride {
    /// The template name it replaces, e.g. `base.j2`.
    pub name: String,
    /// The file it came from, as shown in errors and reports.
    pub file: String,
    /// The template source.
    pub source: String,
}

/// Which template rendered a section, and whether an operator replaced it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TemplateUse {
    /// The template's name as the section asked for it, e.g. `base.j2`.
    pub name: String,
    /// Whether a file from the operator's override directory replaced the
    /// embedded (or host) template of that name.
    pub overridden: bool,
    /// The override file, when `overridden`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// Something about the override directory worth telling the operator that
/// does not stop assembly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "code", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TemplateWarning {
    /// A file in the override directory matches no known template, so it is
    /// ignored (most likely a typo in its name).
    UnknownTemplate {
        /// The name the file would replace, its path relative to the
        /// override directory with `/` separators.
        name: String,
        /// The override file's path, as shown to the operator.
        file: String,
    },
    /// A file in the override directory resolves somewhere its folder may
    /// not reach (out of the repository that holds it, or into `/proc`,
    /// `/sys` or `/dev`), so it was not read.
    EscapingLink {
        /// The override file's path, as shown to the operator.
        file: String,
        /// Where it really leads.
        target: String,
        /// The folder it had to stay in; `None` when it leads into a
        /// system folder.
        #[serde(skip_serializing_if = "Option::is_none")]
        root: Option<String>,
    },
    /// An override an untrusted repository may not make: it would replace
    /// what the user decides (the base prompt, the user-authority section),
    /// which the same repository's config may not switch off either.
    NotTrusted {
        /// The template it would replace.
        name: String,
        /// The override file's path, as shown to the operator.
        file: String,
    },
}

/// Templates whose override by an untrusted repository is ignored: the base
/// prompt and the user-authority section, the wording counterparts of the
/// `system_prompt.mode = "replace"` and `sections.user_authority = false`
/// keys such a repository's config may not set.
pub const USER_DECIDED_TEMPLATES: [&str; 2] = ["base.j2", "sections/user_authority.j2"];

impl fmt::Display for TemplateWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateWarning::UnknownTemplate { name, file } => write!(
                f,
                "template override {file} is ignored: there is no template named `{name}`"
            ),
            TemplateWarning::EscapingLink { file, target, root } => {
                write!(
                    f,
                    "template override {file} is ignored: it resolves to {target}, "
                )?;
                match root {
                    Some(root) => write!(f, "outside {root}"),
                    None => f.write_str("under /proc, /sys or /dev"),
                }
            }
            TemplateWarning::NotTrusted { name, file } => write!(
                f,
                "template override {file} is ignored: the repository is not trusted, and \
                 `{name}` says what the user decides (trust the repository, for example \
                 in trust.repositories of the user config, to use it)"
            ),
        }
    }
}

/// The files of an override directory: the overrides read, and the files
/// refused because they resolve where the directory may not reach.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OverrideFiles {
    /// The overrides, sorted by name.
    pub overrides: Vec<TemplateOverride>,
    /// One [`TemplateWarning::EscapingLink`] per refused file, sorted by file.
    pub refused: Vec<TemplateWarning>,
    /// Every folder listed and every `.j2` file read, sorted: what a host
    /// stamps to notice an override edited, added or removed.
    pub read: Vec<PathBuf>,
}

/// The step at which a template failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TemplatePhase {
    /// Compiling the template source, before any variable is bound.
    Parse,
    /// Rendering with the caller's context: an undefined variable, a failing
    /// filter, running out of fuel or exceeding the output cap.
    Render,
}

impl fmt::Display for TemplatePhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TemplatePhase::Parse => "parse",
            TemplatePhase::Render => "render",
        })
    }
}

/// A template that could not be loaded or rendered. Structured, so callers
/// can point at the file and line; `Display` gives the one-line message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// An operator's override failed. `line` is the line in `file`.
    #[error("template `{name}` overridden by {file} failed to {phase}{}: {detail}", at_line(*.line))]
    Override {
        /// The name of the overridden template that failed (an included
        /// template's own name when the error was raised inside it).
        name: String,
        /// The override file that replaced the template.
        file: String,
        /// Whether the template failed to parse or to render.
        phase: TemplatePhase,
        /// The 1-based line in `file` where minijinja located the error, when
        /// it could.
        line: Option<usize>,
        /// minijinja's error kind and message, or the output-cap message.
        detail: String,
    },
    /// A built-in template failed; this is a Bcode bug or a caller passing
    /// the wrong variables.
    #[error("built-in template `{name}` failed to {phase}{}: {detail}", at_line(*.line))]
    Builtin {
        /// The name of the embedded or host template that failed.
        name: String,
        /// Whether the template failed to parse or to render.
        phase: TemplatePhase,
        /// The 1-based line in the template source where minijinja located
        /// the error, when it could.
        line: Option<usize>,
        /// minijinja's error kind and message, or the output-cap message.
        detail: String,
    },
    /// The override directory or one of its files could not be read.
    #[error("cannot read template override {path}: {detail}")]
    Unreadable {
        /// The folder or file that could not be listed or read.
        path: String,
        /// The I/O error's message, or `not valid UTF-8` for a file that is
        /// not text.
        detail: String,
    },
}

fn at_line(line: Option<usize>) -> String {
    line.map(|n| format!(" at line {n}")).unwrap_or_default()
}

/// The template environment with overrides applied.
#[derive(Clone)]
pub struct Templates {
    /// Shared by clones; the embedded set's environment is shared by the
    /// whole process (see [`Templates::builtin`]).
    env: Arc<Environment<'static>>,
    /// Every template name (embedded and the host's), sorted.
    names: Vec<String>,
    /// Override file per overridden template name.
    overridden: BTreeMap<String, String>,
    warnings: Vec<TemplateWarning>,
}

impl fmt::Debug for Templates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Templates")
            .field("names", &self.names())
            .field("overridden", &self.overridden)
            .field("warnings", &self.warnings)
            .finish()
    }
}

impl Templates {
    /// Every embedded template, no overrides. One environment serves the
    /// whole process, so a template is compiled once however many sessions
    /// render it (compiling them was 5% of a small render per session).
    pub fn builtin() -> Templates {
        static BUILTIN: LazyLock<Templates> = LazyLock::new(|| {
            match Templates::new(&[EMBEDDED], Vec::new()) {
                Ok(templates) => templates,
                // Only overrides are compiled up front, so nothing can fail
                // without them; should that change, an environment without
                // templates fails each render with a clear error instead.
                Err(_) => Templates::empty(),
            }
        });
        BUILTIN.clone()
    }

    /// Every embedded template with `overrides` applied (see [`Templates::new`]).
    pub fn with_overrides(overrides: Vec<TemplateOverride>) -> Result<Templates, TemplateError> {
        if overrides.is_empty() {
            return Ok(Templates::builtin());
        }
        Templates::new(&[EMBEDDED], overrides)
    }

    /// Every embedded template plus a host's own `(name, source)` templates
    /// (for its own sections; a host name equal to an embedded one replaces
    /// it), then `overrides`, which may replace either kind. A host template
    /// that does not parse is an error naming it.
    pub fn with_host(
        host: Vec<(String, String)>,
        overrides: Vec<TemplateOverride>,
    ) -> Result<Templates, TemplateError> {
        if host.is_empty() && overrides.is_empty() {
            return Ok(Templates::builtin());
        }
        let mut sources: BTreeMap<String, Cow<'static, str>> = EMBEDDED
            .iter()
            .map(|(name, source)| ((*name).to_owned(), Cow::Borrowed(*source)))
            .collect();
        let host_names: Vec<String> = host.iter().map(|(name, _)| name.clone()).collect();
        for (name, source) in host {
            sources.insert(name, Cow::Owned(source));
        }
        let templates = Templates::from_sources(sources, overrides)?;
        for name in &host_names {
            if !templates.overridden.contains_key(name) {
                templates
                    .env
                    .get_template(name)
                    .map_err(|err| builtin_error(name, TemplatePhase::Parse, &err))?;
            }
        }
        Ok(templates)
    }

    /// These templates with `warnings` added after their own (the refused
    /// files of [`OverrideFiles`]), so every warning about the override
    /// directory is reported in one place.
    pub fn with_warnings(mut self, warnings: Vec<TemplateWarning>) -> Templates {
        self.warnings.extend(warnings);
        self
    }

    /// Only the embedded templates of `sets`, no overrides.
    pub fn embedded(sets: &[&'static [EmbeddedTemplate]]) -> Result<Templates, TemplateError> {
        Templates::new(sets, Vec::new())
    }

    fn empty() -> Templates {
        Templates {
            env: Arc::new(environment()),
            names: Vec::new(),
            overridden: BTreeMap::new(),
            warnings: Vec::new(),
        }
    }

    /// The embedded templates of `sets` (later sets win on equal names), then
    /// `overrides` replacing them by name. An override whose name matches no
    /// embedded template is ignored with a warning; one that does not parse is
    /// an error naming the template, the file and the line.
    pub fn new(
        sets: &[&'static [EmbeddedTemplate]],
        overrides: Vec<TemplateOverride>,
    ) -> Result<Templates, TemplateError> {
        let mut sources: BTreeMap<String, Cow<'static, str>> = BTreeMap::new();
        for (name, source) in sets.iter().flat_map(|set| set.iter()) {
            sources.insert((*name).to_owned(), Cow::Borrowed(*source));
        }
        Templates::from_sources(sources, overrides)
    }

    /// The templates of `sources` (compiled on first use), then `overrides`.
    fn from_sources(
        sources: BTreeMap<String, Cow<'static, str>>,
        overrides: Vec<TemplateOverride>,
    ) -> Result<Templates, TemplateError> {
        let mut env = environment();
        // Embedded templates are compiled when first used, not up front: a
        // render uses a fraction of them, and compiling all of them was a
        // tenth of a small render. (`compile_all` checks every one.)
        let names: Vec<String> = sources.keys().cloned().collect();
        env.set_loader(move |name| Ok(sources.get(name).map(|source| source.to_string())));
        let mut overridden = BTreeMap::new();
        let mut warnings = Vec::new();
        for TemplateOverride { name, file, source } in overrides {
            if !names.contains(&name) {
                warnings.push(TemplateWarning::UnknownTemplate { name, file });
                continue;
            }
            env.add_template_owned(name.clone(), source)
                .map_err(|err| override_error(&name, &file, TemplatePhase::Parse, &err))?;
            overridden.insert(name, file);
        }
        Ok(Templates {
            env: Arc::new(env),
            names,
            overridden,
            warnings,
        })
    }

    /// Every template name, sorted (for docs and `--explain`).
    pub fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// Compiles every template now, so a broken one is an error here rather
    /// than at its first render (tests, and tools that validate overrides).
    pub fn compile_all(&self) -> Result<(), TemplateError> {
        for name in &self.names {
            if let Err(err) = self.env.get_template(name) {
                return Err(match self.overridden.get(name) {
                    Some(file) => override_error(name, file, TemplatePhase::Parse, &err),
                    None => builtin_error(name, TemplatePhase::Parse, &err),
                });
            }
        }
        Ok(())
    }

    /// Warnings collected while applying overrides.
    pub fn warnings(&self) -> &[TemplateWarning] {
        &self.warnings
    }

    /// Which template `name` is, for a section report.
    pub fn usage(&self, name: &str) -> TemplateUse {
        let file = self.overridden.get(name).cloned();
        TemplateUse {
            name: name.to_owned(),
            overridden: file.is_some(),
            file,
        }
    }

    /// Renders `name` with `context` (build it with `minijinja::context!` or
    /// `Value::from_serialize`). Errors name the override file when the
    /// template was overridden.
    ///
    /// A render that runs out of fuel ([`RENDER_FUEL`]) or writes more than
    /// [`MAX_RENDER_BYTES`] fails with an error naming the template.
    pub fn render(&self, name: &str, context: Value) -> Result<String, TemplateError> {
        let mut out = CappedOutput {
            bytes: Vec::new(),
            cap: MAX_RENDER_BYTES,
            exceeded: false,
        };
        let result = self
            .env
            .get_template(name)
            .and_then(|template| template.render_captured_to(context, &mut out));
        match result {
            Ok(_) => Ok(String::from_utf8_lossy(&out.bytes).into_owned()),
            Err(err) => {
                // An error raised inside an included template names that one.
                let failing = err.name().unwrap_or(name).to_owned();
                let mut error = match self.overridden.get(&failing) {
                    Some(file) => override_error(&failing, file, TemplatePhase::Render, &err),
                    None => builtin_error(&failing, TemplatePhase::Render, &err),
                };
                if out.exceeded {
                    error.set_detail(format!(
                        "the output exceeds the limit of {MAX_RENDER_BYTES} bytes"
                    ));
                }
                Err(error)
            }
        }
    }
}

impl TemplateError {
    fn set_detail(&mut self, text: String) {
        match self {
            TemplateError::Override { detail, .. } | TemplateError::Builtin { detail, .. } => {
                *detail = text;
            }
            TemplateError::Unreadable { detail, .. } => *detail = text,
        }
    }
}

/// Reads every `*.j2` file under `dir` (recursively; names use `/`) as an
/// override. This is edge I/O, for the CLI; the overrides go to
/// [`Templates::new`] and the refused files to [`Templates::with_warnings`].
/// Sorted by name so the warnings come out in a stable order.
///
/// Every file must resolve where `confinement` allows (checked on the open
/// file): a folder inside a repository is confined to it, a user's own
/// folder may link anywhere but `/proc`, `/sys` and `/dev`. A file that does
/// not is refused with a warning naming it and its target; the rest load.
pub fn read_overrides(
    dir: &Path,
    confinement: &Confinement,
) -> Result<OverrideFiles, TemplateError> {
    let mut out = OverrideFiles::default();
    read_dir_into(dir, confinement, &mut out)?;
    out.overrides.sort_by(|a, b| a.name.cmp(&b.name));
    out.refused.sort_by_key(ToString::to_string);
    out.read.sort();
    Ok(out)
}

/// How deep below `templates_dir` overrides are looked for.
const MAX_OVERRIDE_DEPTH: usize = 8;
/// The most of one template file that is read.
const MAX_TEMPLATE_BYTES: usize = 256 * 1024;

/// Collects `*.j2` files below `dir`, iteratively and within
/// [`MAX_OVERRIDE_DEPTH`]. Directory symlinks are not followed (the folder
/// can come from a repository's own config, and a link loop there must not
/// crash or hang a render); files are read bounded and non-blocking.
fn read_dir_into(
    dir: &Path,
    confinement: &Confinement,
    out: &mut OverrideFiles,
) -> Result<(), TemplateError> {
    let unreadable = |path: &Path, detail: String| TemplateError::Unreadable {
        path: path.display().to_string(),
        detail,
    };
    let mut stack = vec![(dir.to_path_buf(), String::new(), 0usize)];
    while let Some((dir, prefix, depth)) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|err| unreadable(&dir, err.to_string()))?;
        out.read.push(dir.clone());
        for entry in entries {
            let entry = entry.map_err(|err| unreadable(&dir, err.to_string()))?;
            let path = entry.path();
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let name = format!("{prefix}{file_name}");
            let file_type = entry
                .file_type()
                .map_err(|err| unreadable(&path, err.to_string()))?;
            if file_type.is_dir() {
                if depth < MAX_OVERRIDE_DEPTH {
                    stack.push((path, format!("{name}/"), depth + 1));
                }
            } else if file_name.ends_with(".j2") {
                out.read.push(path.clone());
                let bytes = match confinement.read_bounded(&path, MAX_TEMPLATE_BYTES) {
                    Ok(bytes) => bytes,
                    Err(err) => match err.escape() {
                        Some(escape) => {
                            out.refused.push(TemplateWarning::EscapingLink {
                                file: path.display().to_string(),
                                target: escape.target.display().to_string(),
                                root: match &escape.reason {
                                    EscapeReason::Outside { root } => {
                                        Some(root.display().to_string())
                                    }
                                    EscapeReason::System => None,
                                },
                            });
                            continue;
                        }
                        None => return Err(unreadable(&path, err.to_string())),
                    },
                };
                let source = String::from_utf8(bytes)
                    .map_err(|_| unreadable(&path, "not valid UTF-8".into()))?;
                out.overrides.push(TemplateOverride {
                    name,
                    file: path.display().to_string(),
                    source,
                });
            }
        }
    }
    Ok(())
}

/// The environment every template runs in (see the module docs for why
/// each setting).
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.add_filter("xml", xml_filter);
    env.set_fuel(Some(RENDER_FUEL));
    if let Ok(syntax) = SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build()
    {
        // `build` only fails for invalid custom delimiters, and these are
        // the defaults; should it ever fail, minijinja's defaults remain.
        env.set_syntax(syntax);
    }
    env
}

/// A render's output, refusing to grow past `cap` bytes.
struct CappedOutput {
    bytes: Vec<u8>,
    cap: usize,
    exceeded: bool,
}

impl std::io::Write for CappedOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > self.cap {
            self.exceeded = true;
            return Err(std::io::Error::other(format!(
                "the output would exceed {} bytes",
                self.cap
            )));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn xml_filter(value: Value) -> String {
    match value.as_str() {
        Some(text) => bcode_text::escape_xml(text).into_owned(),
        None => bcode_text::escape_xml(&value.to_string()).into_owned(),
    }
}

fn detail(err: &minijinja::Error) -> String {
    match err.detail() {
        Some(detail) => format!("{}: {detail}", err.kind()),
        None => err.kind().to_string(),
    }
}

fn override_error(
    name: &str,
    file: &str,
    phase: TemplatePhase,
    err: &minijinja::Error,
) -> TemplateError {
    TemplateError::Override {
        name: name.to_owned(),
        file: file.to_owned(),
        phase,
        line: err.line(),
        detail: detail(err),
    }
}

fn builtin_error(name: &str, phase: TemplatePhase, err: &minijinja::Error) -> TemplateError {
    TemplateError::Builtin {
        name: name.to_owned(),
        phase,
        line: err.line(),
        detail: detail(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use minijinja::context;

    #[test]
    fn the_embedded_set_is_one_environment_per_process() {
        let a = Templates::builtin();
        let b = Templates::with_host(Vec::new(), Vec::new()).unwrap();
        assert!(Arc::ptr_eq(&a.env, &b.env));
        assert!(Arc::ptr_eq(
            &a.env,
            &Templates::with_overrides(Vec::new()).unwrap().env
        ));
        // Overrides and host templates get their own environment, and the
        // shared one is not changed by them.
        let host = Templates::with_host(vec![("x.j2".into(), "{{ 1 }}".into())], Vec::new());
        let host = host.unwrap();
        assert!(!Arc::ptr_eq(&a.env, &host.env));
        assert_eq!(host.render("x.j2", context! {}).unwrap(), "1");
        assert!(Templates::builtin().render("x.j2", context! {}).is_err());
        let overridden = templates(&[("base.j2", "mine")]).unwrap();
        assert!(!Arc::ptr_eq(&a.env, &overridden.env));
        assert_eq!(overridden.render("base.j2", context! {}).unwrap(), "mine");
        assert_ne!(
            Templates::builtin().render("base.j2", context! {}).ok(),
            Some("mine".into())
        );
    }

    fn templates(overrides: &[(&str, &str)]) -> Result<Templates, TemplateError> {
        let overrides = overrides
            .iter()
            .map(|(name, source)| TemplateOverride {
                name: (*name).to_owned(),
                file: format!("/ops/templates/{name}"),
                source: (*source).to_owned(),
            })
            .collect();
        Templates::new(&[EMBEDDED, TEST_TEMPLATES], overrides)
    }

    const TEST_TEMPLATES: &[EmbeddedTemplate] = &[
        ("block.xml.j2", "<a v=\"{{ v | xml }}\">{{ v }}</a>"),
        ("lines.j2", "{% if on %}\n  yes\n{% endif %}\nend\n"),
    ];

    #[test]
    fn every_embedded_template_parses_and_names_are_listed() {
        let t = templates(&[]).unwrap();
        t.compile_all().unwrap();
        let names = t.names();
        for name in [
            "base.j2",
            "block.xml.j2",
            "lines.j2",
            "sections/datetime.j2",
            "skills/catalog.j2",
            "skills/context.j2",
            "tool_call_fallback.j2",
            "truncation_marker.j2",
        ] {
            assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
        }
        assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
        assert_eq!(t.warnings(), []);
        assert_eq!(Templates::builtin().names().len(), EMBEDDED.len());
    }

    #[cfg(unix)]
    #[test]
    fn override_links_out_of_their_confinement_are_refused_with_a_warning() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let folder = repo.join(".bcode/templates");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(dir.path().join("secret.txt"), "SECRET").unwrap();
        std::fs::write(repo.join("shared.j2"), "Repo base.").unwrap();
        symlink(dir.path().join("secret.txt"), folder.join("base.j2")).unwrap();
        symlink("../../shared.j2", folder.join("truncation_marker.j2")).unwrap();
        let found = read_overrides(&folder, &Confinement::within(&repo)).unwrap();
        let names: Vec<&str> = found.overrides.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["truncation_marker.j2"]);
        // Every folder listed and `.j2` file looked at, refused ones too
        // (a link retargeted inside is a change to notice).
        assert_eq!(
            found.read,
            [
                folder.clone(),
                folder.join("base.j2"),
                folder.join("truncation_marker.j2")
            ]
        );
        let real = |p: &Path| std::fs::canonicalize(p).unwrap().display().to_string();
        let refused = TemplateWarning::EscapingLink {
            file: folder.join("base.j2").display().to_string(),
            target: real(&dir.path().join("secret.txt")),
            root: Some(real(&repo)),
        };
        assert_eq!(found.refused, std::slice::from_ref(&refused));
        let t = Templates::with_overrides(found.overrides)
            .unwrap()
            .with_warnings(found.refused);
        assert_eq!(t.warnings(), [refused]);
        // The user's own folder may link out of it (a dotfiles checkout).
        let found = read_overrides(&folder, &Confinement::anywhere_but_system()).unwrap();
        assert_eq!(found.overrides.len(), 2);
        assert!(found.refused.is_empty());
        #[cfg(target_os = "linux")]
        {
            symlink("/proc/self/environ", folder.join("base.j2.tmp")).unwrap();
            std::fs::rename(folder.join("base.j2.tmp"), folder.join("base.j2")).unwrap();
            let found = read_overrides(&folder, &Confinement::anywhere_but_system()).unwrap();
            assert_eq!(found.overrides.len(), 1);
            assert!(
                found.refused[0]
                    .to_string()
                    .ends_with("under /proc, /sys or /dev"),
                "{}",
                found.refused[0]
            );
        }
    }

    #[test]
    fn the_generated_list_matches_the_templates_folder() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
        let mut on_disk = Vec::new();
        let mut stack = vec![(root, String::new())];
        while let Some((dir, prefix)) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let entry = entry.unwrap();
                let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
                if entry.file_type().unwrap().is_dir() {
                    stack.push((entry.path(), format!("{name}/")));
                } else if name.ends_with(".j2") {
                    on_disk.push(name);
                }
            }
        }
        on_disk.sort();
        let embedded: Vec<&str> = EMBEDDED.iter().map(|(name, _)| *name).collect();
        assert_eq!(embedded, on_disk);
    }

    #[test]
    fn a_runaway_override_runs_out_of_fuel() {
        let t = templates(&[(
            "lines.j2",
            "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
        )])
        .unwrap();
        let err = t.render("lines.j2", context! { on => true }).unwrap_err();
        let TemplateError::Override { name, detail, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(name, "lines.j2");
        assert!(detail.contains("fuel"), "{detail}");
    }

    #[test]
    fn output_past_the_cap_is_an_error_naming_the_template() {
        let t = templates(&[("lines.j2", "{{ \"x\" * 40000000 }}{{ \"y\" * 40000000 }}")]).unwrap();
        let err = t.render("lines.j2", context! { on => true }).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "template `lines.j2` overridden by /ops/templates/lines.j2 failed to render: the output exceeds the limit of {MAX_RENDER_BYTES} bytes"
            )
        );
    }

    #[test]
    fn no_auto_escaping_even_for_xml_names_and_xml_filter_escapes() {
        let t = templates(&[]).unwrap();
        let out = t
            .render("block.xml.j2", context! { v => "a<b & 'c'" })
            .unwrap();
        assert_eq!(out, "<a v=\"a&lt;b &amp; &apos;c&apos;\">a<b & 'c'</a>");
    }

    #[test]
    fn block_lines_are_trimmed_and_one_trailing_newline_dropped() {
        let t = templates(&[]).unwrap();
        assert_eq!(
            t.render("lines.j2", context! { on => true }).unwrap(),
            "  yes\nend"
        );
    }

    #[test]
    fn strict_undefined_is_an_error() {
        let t = templates(&[]).unwrap();
        let err = t.render("block.xml.j2", context! {}).unwrap_err();
        assert_eq!(
            err.to_string(),
            "built-in template `block.xml.j2` failed to render at line 1: undefined value: `v` is undefined"
        );
    }

    #[test]
    fn override_replaces_by_name_and_is_reported() {
        let t = templates(&[("lines.j2", "custom {{ on }}")]).unwrap();
        assert_eq!(
            t.render("lines.j2", context! { on => 1 }).unwrap(),
            "custom 1"
        );
        assert_eq!(
            t.usage("lines.j2"),
            TemplateUse {
                name: "lines.j2".into(),
                overridden: true,
                file: Some("/ops/templates/lines.j2".into()),
            }
        );
        assert_eq!(
            t.usage("base.j2"),
            TemplateUse {
                name: "base.j2".into(),
                overridden: false,
                file: None
            }
        );
    }

    #[test]
    fn unknown_override_is_a_warning() {
        let t = templates(&[("bsae.j2", "typo")]).unwrap();
        assert_eq!(
            t.warnings(),
            [TemplateWarning::UnknownTemplate {
                name: "bsae.j2".into(),
                file: "/ops/templates/bsae.j2".into(),
            }]
        );
        assert_eq!(
            t.warnings()[0].to_string(),
            "template override /ops/templates/bsae.j2 is ignored: there is no template named `bsae.j2`"
        );
    }

    #[test]
    fn override_parse_error_names_template_file_and_line() {
        let err = templates(&[("lines.j2", "ok\nfine\n{% if x %}\nno end")]).unwrap_err();
        assert_eq!(
            err,
            TemplateError::Override {
                name: "lines.j2".into(),
                file: "/ops/templates/lines.j2".into(),
                phase: TemplatePhase::Parse,
                line: Some(4),
                detail: "syntax error: unexpected end of input, expected end of block".into(),
            }
        );
    }

    #[test]
    fn override_render_error_names_template_file_and_line() {
        let t = templates(&[("lines.j2", "one\ntwo {{ missing }}")]).unwrap();
        let err = t.render("lines.j2", context! { on => true }).unwrap_err();
        assert_eq!(
            err.to_string(),
            "template `lines.j2` overridden by /ops/templates/lines.j2 failed to render at line 2: undefined value: `missing` is undefined"
        );
    }
}
