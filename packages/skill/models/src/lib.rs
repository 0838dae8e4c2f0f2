//! Leaf data types of the Bcode skills subsystem, shared by the registry, the
//! prompt pipeline, plugins and hosts. Serde-ready; no I/O and no logic beyond
//! validating a skill id.

#![warn(missing_docs)]

mod context;
mod diagnostic;
mod env;
mod event;
mod field_map;
mod id;
mod manifest;
mod relevance;
mod source;
mod summary;

pub use context::{
    InvokeSkillRequest, InvokeSkillResponse, LoadCause, SkillContextRequest, SkillContextResponse,
    SkillError,
};
pub use diagnostic::{Diagnostic, DiagnosticCode, Severity};
pub use env::SourceEnv;
pub use event::SkillEvent;
pub use field_map::FieldMap;
pub use id::{InvalidSkillId, MAX_SKILL_ID_LEN, NAMESPACE_SEPARATOR, SkillId};
pub use manifest::{Details, SkillActivation, SkillDetails, SkillManifest, SkillPermissionHints};
pub use relevance::{Figure, RelevanceMatch, RelevanceTerm};
pub use source::{SkillSource, SourceKind};
pub use summary::{SkillLayout, SkillSummary, directory_override};
