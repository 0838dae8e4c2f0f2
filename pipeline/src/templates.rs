//! The template environment, re-exported from `bcode-templates` (the leaf
//! crate the skill registry shares), so pipeline users find it here.

pub use bcode_templates::*;
