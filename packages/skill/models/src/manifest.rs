//! The validated front matter of a skill.

use serde::{Deserialize, Serialize};

use crate::field_map::FieldMap;
use crate::id::SkillId;

/// Activation metadata used for suggestion and auto-activation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillActivation {
    /// Keywords, trimmed, deduplicated, in the order written.
    pub keywords: Vec<String>,
}

/// Permission metadata. Advisory only: it never grants anything, and every
/// action still goes through Bcode's tools and policy.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillPermissionHints {
    /// `permissions.tools` (Bcode spelling), e.g. `filesystem.read`.
    pub tools: Vec<String>,
    /// Agent Skills `allowed-tools`, e.g. `Bash(git:*) Read`.
    pub allowed_tools: Vec<String>,
}

/// Everything a skill's front matter declares, validated and normalised.
/// Serialized flat, every field at the top level, as written before the
/// less common ones moved into [`SkillDetails`].
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(from = "FlatManifest")]
pub struct SkillManifest {
    /// The id the skill is known by: front matter `id`, else the folder name
    /// or file stem, else a `name` that is a valid id.
    pub id: SkillId,
    /// The display name: front matter `name`, or the id when it is absent or
    /// empty.
    pub name: String,
    /// What the skill is for and when to use it, shown in the model-visible
    /// catalog; required, so never empty for a parsed skill.
    pub description: String,
    /// Keywords that suggest or auto-activate the skill.
    pub activation: SkillActivation,
    /// `disable_model_invocation` / `disable-model-invocation`.
    pub disable_model_invocation: bool,
    /// Agent Skills `metadata`: free-form, scalars kept as the text
    /// written. Here, not in [`SkillDetails`]: nearly every registry skill
    /// has it, and the boxed details of every one of them were 18 MB of a
    /// 60,000-skill registry.
    pub metadata: FieldMap,
    /// The rest of what the front matter declares, only the fields it
    /// sets. Read it with [`SkillManifest::details`]; set it with
    /// [`SkillManifest::with_details`] or [`SkillManifest::update_details`].
    pub details: Details,
}

/// The fields of a manifest that few skills set, all of them: what a
/// manifest is given ([`SkillManifest::with_details`]) and what
/// [`SkillManifest::update_details`] changes. A manifest keeps only the
/// fields set ([`Details`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SkillDetails {
    /// Front matter `version`, free-form and not interpreted.
    pub version: Option<String>,
    /// Advisory tool hints; they grant nothing.
    pub permissions: SkillPermissionHints,
    /// An explicit reasoning effort for turns that invoke this skill.
    pub thinking_effort: Option<String>,
    /// A preferred model for turns that invoke this skill.
    pub model: Option<String>,
    /// Agent Skills `license`, kept as written.
    pub license: Option<String>,
    /// Agent Skills `compatibility` (the environments the skill needs), kept
    /// as written.
    pub compatibility: Option<String>,
    /// `paths`: globs of repository paths (relative to the repository
    /// root, `/`-separated); a turn that touches a matching path suggests
    /// the skill, or activates it under `auto_activate = "on"`.
    pub paths: Vec<String>,
    /// `user-invocable` as written; `Some(false)` keeps the skill for the
    /// model only (no `/skill`). Read it with
    /// [`SkillManifest::user_invocable`].
    pub user_invocable: Option<bool>,
    /// `argument-hint`: what arguments the skill expects, shown to the user
    /// by `/skills` and `skills show`, never to the model.
    pub argument_hint: Option<String>,
    /// `when_to_use`: more of when to use the skill; the catalog shows it
    /// after the description.
    pub when_to_use: Option<String>,
    /// `arguments:` names, in order: `$name` in the body stands for the
    /// argument at the name's position. An invalid name keeps its position
    /// as an empty string, which nothing substitutes.
    pub arguments: Vec<String>,
    /// Fields Bcode does not know, kept so hosts and plugins can read them.
    pub extra: FieldMap,
}

impl SkillDetails {
    /// Whether every field is empty (then a manifest stores none).
    pub fn is_empty(&self) -> bool {
        *self == SkillDetails::default()
    }
}

/// The less common fields a manifest keeps: only those set, in one boxed
/// slice (none allocated when none is set). A registry holds every
/// manifest at once, and half of a public registry's skills set a field
/// or two (most only `license`): a whole [`SkillDetails`] each, 296 bytes
/// boxed, was 9 MB at 61,000 skills; an entry is 32 bytes. Read a field
/// with the method of its name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Details(Box<[Detail]>);

/// One field set, in [`SkillDetails`] order (so equal details are equal
/// slices).
#[derive(Clone, Debug, PartialEq)]
enum Detail {
    Version(String),
    Tools(Vec<String>),
    AllowedTools(Vec<String>),
    ThinkingEffort(String),
    Model(String),
    License(String),
    Compatibility(String),
    Paths(Vec<String>),
    UserInvocable(bool),
    ArgumentHint(String),
    WhenToUse(String),
    Arguments(Vec<String>),
    Extra(FieldMap),
}

static NO_FIELDS: FieldMap = FieldMap::new();

impl From<SkillDetails> for Details {
    fn from(d: SkillDetails) -> Self {
        let items = |items: Vec<String>, wrap: fn(Vec<String>) -> Detail| {
            (!items.is_empty()).then(|| wrap(items))
        };
        let set: Vec<Detail> = [
            d.version.map(Detail::Version),
            items(d.permissions.tools, Detail::Tools),
            items(d.permissions.allowed_tools, Detail::AllowedTools),
            d.thinking_effort.map(Detail::ThinkingEffort),
            d.model.map(Detail::Model),
            d.license.map(Detail::License),
            d.compatibility.map(Detail::Compatibility),
            items(d.paths, Detail::Paths),
            d.user_invocable.map(Detail::UserInvocable),
            d.argument_hint.map(Detail::ArgumentHint),
            d.when_to_use.map(Detail::WhenToUse),
            items(d.arguments, Detail::Arguments),
            (!d.extra.is_empty()).then_some(Detail::Extra(d.extra)),
        ]
        .into_iter()
        .flatten()
        .collect();
        Details(set.into_boxed_slice())
    }
}

impl From<&Details> for SkillDetails {
    fn from(details: &Details) -> Self {
        let mut d = SkillDetails::default();
        for detail in details.0.iter().cloned() {
            match detail {
                Detail::Version(v) => d.version = Some(v),
                Detail::Tools(v) => d.permissions.tools = v,
                Detail::AllowedTools(v) => d.permissions.allowed_tools = v,
                Detail::ThinkingEffort(v) => d.thinking_effort = Some(v),
                Detail::Model(v) => d.model = Some(v),
                Detail::License(v) => d.license = Some(v),
                Detail::Compatibility(v) => d.compatibility = Some(v),
                Detail::Paths(v) => d.paths = v,
                Detail::UserInvocable(v) => d.user_invocable = Some(v),
                Detail::ArgumentHint(v) => d.argument_hint = Some(v),
                Detail::WhenToUse(v) => d.when_to_use = Some(v),
                Detail::Arguments(v) => d.arguments = v,
                Detail::Extra(v) => d.extra = v,
            }
        }
        d
    }
}

impl Details {
    /// Whether no field is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn text(&self, of: fn(&Detail) -> Option<&String>) -> Option<&str> {
        self.0.iter().find_map(of).map(String::as_str)
    }

    fn items(&self, of: fn(&Detail) -> Option<&Vec<String>>) -> &[String] {
        self.0.iter().find_map(of).map_or(&[], Vec::as_slice)
    }

    /// Front matter `version`, free-form and not interpreted.
    pub fn version(&self) -> Option<&str> {
        self.text(|d| match d {
            Detail::Version(v) => Some(v),
            _ => None,
        })
    }

    /// `permissions.tools` (advisory; grants nothing).
    pub fn tools(&self) -> &[String] {
        self.items(|d| match d {
            Detail::Tools(v) => Some(v),
            _ => None,
        })
    }

    /// Agent Skills `allowed-tools` (advisory; grants nothing).
    pub fn allowed_tools(&self) -> &[String] {
        self.items(|d| match d {
            Detail::AllowedTools(v) => Some(v),
            _ => None,
        })
    }

    /// An explicit reasoning effort for turns that invoke the skill.
    pub fn thinking_effort(&self) -> Option<&str> {
        self.text(|d| match d {
            Detail::ThinkingEffort(v) => Some(v),
            _ => None,
        })
    }

    /// A preferred model for turns that invoke the skill.
    pub fn model(&self) -> Option<&str> {
        self.text(|d| match d {
            Detail::Model(v) => Some(v),
            _ => None,
        })
    }

    /// Agent Skills `license`, as written.
    pub fn license(&self) -> Option<&str> {
        self.text(|d| match d {
            Detail::License(v) => Some(v),
            _ => None,
        })
    }

    /// Agent Skills `compatibility`, as written.
    pub fn compatibility(&self) -> Option<&str> {
        self.text(|d| match d {
            Detail::Compatibility(v) => Some(v),
            _ => None,
        })
    }

    /// `paths` globs ([`SkillDetails::paths`]).
    pub fn paths(&self) -> &[String] {
        self.items(|d| match d {
            Detail::Paths(v) => Some(v),
            _ => None,
        })
    }

    /// `user-invocable` as written ([`SkillManifest::user_invocable`]).
    pub fn user_invocable(&self) -> Option<bool> {
        self.0.iter().find_map(|d| match d {
            Detail::UserInvocable(v) => Some(*v),
            _ => None,
        })
    }

    /// `argument-hint`, shown to the user, never to the model.
    pub fn argument_hint(&self) -> Option<&str> {
        self.text(|d| match d {
            Detail::ArgumentHint(v) => Some(v),
            _ => None,
        })
    }

    /// `when_to_use`, which the catalog shows after the description.
    pub fn when_to_use(&self) -> Option<&str> {
        self.text(|d| match d {
            Detail::WhenToUse(v) => Some(v),
            _ => None,
        })
    }

    /// `arguments:` names, in order ([`SkillDetails::arguments`]).
    pub fn arguments(&self) -> &[String] {
        self.items(|d| match d {
            Detail::Arguments(v) => Some(v),
            _ => None,
        })
    }

    /// Fields Bcode does not know.
    pub fn extra(&self) -> &FieldMap {
        self.0
            .iter()
            .find_map(|d| match d {
                Detail::Extra(v) => Some(v),
                _ => None,
            })
            .unwrap_or(&NO_FIELDS)
    }
}

impl SkillManifest {
    /// A manifest with only an id (also its name) and every other field
    /// empty, for providers and tests to fill in with struct update syntax.
    pub fn new(id: SkillId) -> Self {
        SkillManifest {
            name: id.to_string(),
            id,
            description: String::new(),
            activation: SkillActivation::default(),
            disable_model_invocation: false,
            metadata: FieldMap::new(),
            details: Details::default(),
        }
    }

    /// Whether the user may invoke the skill (`/skill`): true unless the
    /// front matter says `user-invocable: false`.
    pub fn user_invocable(&self) -> bool {
        self.details.user_invocable().unwrap_or(true)
    }

    /// The less common fields (none set when the front matter sets none).
    pub fn details(&self) -> &Details {
        &self.details
    }

    /// Changes the less common fields with `change`, given them all.
    pub fn update_details(&mut self, change: impl FnOnce(&mut SkillDetails)) {
        let mut details = SkillDetails::from(&self.details);
        change(&mut details);
        self.details = Details::from(details);
    }

    /// Sets the less common fields, keeping only those set.
    pub fn with_details(mut self, details: SkillDetails) -> Self {
        self.details = Details::from(details);
        self
    }
}

/// The serialized shape of a manifest: every field at the top level.
#[derive(Deserialize)]
struct FlatManifest {
    id: SkillId,
    name: String,
    description: String,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    activation: SkillActivation,
    #[serde(default)]
    permissions: SkillPermissionHints,
    #[serde(default)]
    disable_model_invocation: bool,
    #[serde(default)]
    thinking_effort: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    license: Option<String>,
    #[serde(default)]
    compatibility: Option<String>,
    #[serde(default)]
    metadata: FieldMap,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    user_invocable: Option<bool>,
    #[serde(default)]
    argument_hint: Option<String>,
    #[serde(default)]
    when_to_use: Option<String>,
    #[serde(default)]
    arguments: Vec<String>,
    #[serde(default)]
    extra: FieldMap,
}

impl From<FlatManifest> for SkillManifest {
    fn from(flat: FlatManifest) -> Self {
        SkillManifest {
            id: flat.id,
            name: flat.name,
            description: flat.description,
            activation: flat.activation,
            disable_model_invocation: flat.disable_model_invocation,
            metadata: flat.metadata,
            details: Details::default(),
        }
        .with_details(SkillDetails {
            version: flat.version,
            permissions: flat.permissions,
            thinking_effort: flat.thinking_effort,
            model: flat.model,
            license: flat.license,
            compatibility: flat.compatibility,
            paths: flat.paths,
            user_invocable: flat.user_invocable,
            argument_hint: flat.argument_hint,
            when_to_use: flat.when_to_use,
            arguments: flat.arguments,
            extra: flat.extra,
        })
    }
}

/// [`FlatManifest`] borrowed, to write; empty fields are left out (they
/// read back as their defaults), a fifth of a disk cache's size.
#[derive(Serialize)]
struct FlatManifestRef<'a> {
    id: &'a SkillId,
    name: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<&'a str>,
    #[serde(skip_serializing_if = "no_keywords")]
    activation: &'a SkillActivation,
    #[serde(skip_serializing_if = "no_hints")]
    permissions: HintsRef<'a>,
    #[serde(skip_serializing_if = "is_false")]
    disable_model_invocation: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    license: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    compatibility: Option<&'a str>,
    #[serde(skip_serializing_if = "no_fields")]
    metadata: &'a FieldMap,
    #[serde(skip_serializing_if = "no_items")]
    paths: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    user_invocable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    argument_hint: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    when_to_use: Option<&'a str>,
    #[serde(skip_serializing_if = "no_items")]
    arguments: &'a [String],
    #[serde(skip_serializing_if = "no_fields")]
    extra: &'a FieldMap,
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn no_keywords(activation: &&SkillActivation) -> bool {
    activation.keywords.is_empty()
}

/// [`SkillPermissionHints`] borrowed, to write.
#[derive(Serialize)]
struct HintsRef<'a> {
    tools: &'a [String],
    allowed_tools: &'a [String],
}

fn no_hints(hints: &HintsRef<'_>) -> bool {
    hints.tools.is_empty() && hints.allowed_tools.is_empty()
}

fn no_items(items: &&[String]) -> bool {
    items.is_empty()
}

fn no_fields(fields: &&FieldMap) -> bool {
    fields.is_empty()
}

impl Serialize for SkillManifest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let details = self.details();
        FlatManifestRef {
            id: &self.id,
            name: &self.name,
            description: &self.description,
            version: details.version(),
            activation: &self.activation,
            permissions: HintsRef {
                tools: details.tools(),
                allowed_tools: details.allowed_tools(),
            },
            disable_model_invocation: self.disable_model_invocation,
            thinking_effort: details.thinking_effort(),
            model: details.model(),
            license: details.license(),
            compatibility: details.compatibility(),
            metadata: &self.metadata,
            paths: details.paths(),
            user_invocable: details.user_invocable(),
            argument_hint: details.argument_hint(),
            when_to_use: details.when_to_use(),
            arguments: details.arguments(),
            extra: details.extra(),
        }
        .serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_manifest_is_written_flat_without_its_empty_fields_and_reads_back_the_same() {
        let id = SkillId::parse("a").unwrap();
        let minimal = SkillManifest {
            description: "d".into(),
            ..SkillManifest::new(id.clone())
        };
        let written = serde_json::to_string(&minimal).unwrap();
        assert_eq!(written, r#"{"id":"a","name":"a","description":"d"}"#);
        assert_eq!(
            serde_json::from_str::<SkillManifest>(&written).unwrap(),
            minimal
        );

        let mut full = minimal.clone().with_details(SkillDetails {
            version: Some("1".into()),
            permissions: SkillPermissionHints {
                tools: vec!["filesystem.read".into()],
                allowed_tools: vec!["Read".into()],
            },
            thinking_effort: Some("high".into()),
            model: Some("m".into()),
            license: Some("MIT".into()),
            compatibility: Some("any".into()),
            paths: vec!["src/**".into()],
            user_invocable: Some(false),
            argument_hint: Some("[file]".into()),
            when_to_use: Some("w".into()),
            arguments: vec!["issue".into()],
            extra: [("x".to_owned(), serde_json::json!(null))]
                .into_iter()
                .collect(),
        });
        full.activation.keywords = vec!["kw".into()];
        full.metadata = [("k".to_owned(), serde_json::json!("1"))]
            .into_iter()
            .collect();
        full.disable_model_invocation = true;
        let written = serde_json::to_value(&full).unwrap();
        for key in [
            "version",
            "activation",
            "permissions",
            "disable_model_invocation",
            "thinking_effort",
            "model",
            "license",
            "compatibility",
            "metadata",
            "paths",
            "user_invocable",
            "argument_hint",
            "when_to_use",
            "arguments",
            "extra",
        ] {
            assert!(written.get(key).is_some(), "{key} missing from {written}");
        }
        assert_eq!(
            serde_json::from_value::<SkillManifest>(written).unwrap(),
            full
        );
        // Details that are all empty are not stored.
        assert!(
            minimal
                .with_details(SkillDetails::default())
                .details
                .is_empty()
        );
        // Every field reads back as given.
        let given = SkillDetails::from(full.details());
        assert_eq!(SkillDetails::from(&Details::from(given.clone())), given);
        assert_eq!(given.license.as_deref(), full.details().license());
    }
}
