//! Discovery: from source roots (and providers) to a [`SkillRegistry`], and
//! keeping it current between turns.
//!
//! This room owns the source roots and their order (`sources`), which skill
//! wins an id (`precedence`), walking one root (`walk`) into candidates
//! (`candidate`), reading front matter through each root's confinement
//! (`read`), what a recording build keeps of each file it read (`record`),
//! parsing beside the walk (`load_pool`), the record of what a walk
//! saw (`snapshot`, judged by `bcode_fs`'s one notion of an unchanged file), the
//! build in steps (`discovery`), the registry it produces (`registry`, which
//! also loads bodies on demand through the same confinement) and live reload
//! at turn starts (`reload`).
//!
//! It is the filesystem edge of the crate. It does not parse (it hands bytes
//! to [`crate::parse`]) and formats nothing for the model. Its caches
//! (summaries by stamp, the disk copy of the last registry) are [`cache`],
//! a room inside it: they depend on its records, and it on them.

pub(crate) mod cache;
pub(crate) mod candidate;
pub(crate) mod discovery;
pub(crate) mod load_pool;
pub(crate) mod precedence;
pub(crate) mod read;
pub(crate) mod record;
pub(crate) mod registry;
pub(crate) mod reload;
pub(crate) mod snapshot;
pub(crate) mod sources;
pub(crate) mod walk;

pub use discovery::{Discovery, DiscoveryStats};
pub use record::{InstructionRecord, InstructionRecords};
pub use registry::{DiscoveryOptions, RootReport, SkillRegistry};
pub use reload::{LiveRegistry, ReloadMode, TurnRefresh};
pub use snapshot::ConfirmedStamps;
pub use sources::{BundledRoot, ConfiguredRoot, OwnerCheck, RootsInput, SourceRoot, source_roots};
pub use walk::WalkOptions;
