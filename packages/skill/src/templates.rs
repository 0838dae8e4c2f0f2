//! The registry's model-visible wording: minijinja templates embedded from
//! `templates/skills/` at compile time, overridable by name. Values are
//! escaped with the `xml` filter; auto-escaping is off because the output is
//! text for a model, not HTML.

use std::collections::BTreeMap;

use minijinja::{Environment, UndefinedBehavior, Value};

/// Embedded templates: (name, source).
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "skills/catalog.j2",
        include_str!("../../../templates/skills/catalog.j2"),
    ),
    (
        "skills/catalog_truncated.j2",
        include_str!("../../../templates/skills/catalog_truncated.j2"),
    ),
    (
        "skills/description_truncated.j2",
        include_str!("../../../templates/skills/description_truncated.j2"),
    ),
    (
        "skills/context.j2",
        include_str!("../../../templates/skills/context.j2"),
    ),
    (
        "skills/context_truncated.j2",
        include_str!("../../../templates/skills/context_truncated.j2"),
    ),
    (
        "skills/preview_truncated.j2",
        include_str!("../../../templates/skills/preview_truncated.j2"),
    ),
];

/// A template that failed to load or render, named so an operator can find it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("template `{name}`{}: {message}", line.map(|l| format!(" line {l}")).unwrap_or_default())]
pub struct TemplateError {
    pub name: String,
    pub line: Option<usize>,
    pub message: String,
}

impl TemplateError {
    fn from_minijinja(name: &str, err: &minijinja::Error) -> Self {
        TemplateError {
            name: name.to_owned(),
            line: err.line(),
            message: err
                .detail()
                .map_or_else(|| err.kind().to_string(), str::to_owned),
        }
    }
}

/// The compiled templates of the registry.
#[derive(Debug)]
pub struct SkillTemplates {
    env: Environment<'static>,
}

impl SkillTemplates {
    /// The embedded templates.
    pub fn embedded() -> Self {
        match Self::with_overrides(&BTreeMap::new()) {
            Ok(templates) => templates,
            // Without overrides nothing can fail here; an empty environment
            // is the harmless fallback should that ever change.
            Err(_) => SkillTemplates { env: base_env() },
        }
    }

    /// The embedded templates with some replaced: `overrides` maps a template
    /// name (e.g. `skills/catalog.j2`) to its source. Names this registry
    /// does not use are ignored (the caller reports them).
    ///
    /// Overrides are compiled here (a broken one is an error now); the
    /// embedded templates on first use, as most renders use few of them.
    pub fn with_overrides(overrides: &BTreeMap<String, String>) -> Result<Self, TemplateError> {
        let mut env = base_env();
        env.set_loader(|name| {
            Ok(EMBEDDED
                .iter()
                .find(|(embedded, _)| *embedded == name)
                .map(|(_, source)| (*source).to_owned()))
        });
        for (name, _) in EMBEDDED {
            if let Some(source) = overrides.get(*name) {
                env.add_template_owned(*name, source.clone())
                    .map_err(|err| TemplateError::from_minijinja(name, &err))?;
            }
        }
        Ok(SkillTemplates { env })
    }

    /// Compiles every template now (tests; tools validating overrides).
    pub fn compile_all(&self) -> Result<(), TemplateError> {
        for (name, _) in EMBEDDED {
            self.env
                .get_template(name)
                .map_err(|err| TemplateError::from_minijinja(name, &err))?;
        }
        Ok(())
    }

    /// Renders template `name` with `context`.
    pub fn render(&self, name: &str, context: Value) -> Result<String, TemplateError> {
        let template = self
            .env
            .get_template(name)
            .map_err(|err| TemplateError::from_minijinja(name, &err))?;
        template
            .render(context)
            .map_err(|err| TemplateError::from_minijinja(name, &err))
    }
}

fn base_env() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Templates say exactly where their text ends; a trailing newline in a
    // template file is part of the output.
    if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
        .keep_trailing_newline(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.add_filter("xml", |value: String| {
        bcode_text::escape_xml(&value).into_owned()
    });
    env
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_embedded_template_compiles_and_a_broken_override_is_an_error_at_once() {
        SkillTemplates::embedded().compile_all().unwrap();
        let broken = BTreeMap::from([("skills/catalog.j2".to_owned(), "{% if %}".to_owned())]);
        assert!(SkillTemplates::with_overrides(&broken).is_err());
    }
}
