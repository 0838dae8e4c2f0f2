//! Bounded text for model context: the one grapheme-safe truncation helper every
//! crate uses, XML escaping for values placed inside XML-style blocks, and
//! the cleaning of repository-written text before the model sees it, and
//! text fitted to a terminal's width for the operator.
//!
//! Nothing here knows what the text means. Callers decide the limit, where a cut
//! is preferred (for example between catalog entries) and what the in-band
//! marker says; this crate guarantees the cut never splits a grapheme cluster,
//! that every cut is marked, and that the result, marker included, stays within
//! the limit unless the limit is smaller than the marker alone (the marker wins).

#![warn(missing_docs)]

mod clean;
mod path;
mod suggest;
mod truncate;
mod width;
mod xml;

pub use clean::{clean_body, clean_line};
pub use path::{PathDisplay, folders_down_to, lexical, model_path};
pub use suggest::{closest, edit_distance};
pub use truncate::{Bounded, Limit, Truncation, bound, bound_at};
pub use width::{Wrap, columns, fit_columns, wrap_columns};
pub use xml::{escape_xml, escape_xml_into, neutralize_closing_tag};
