//! The caches that make a rebuild of an unchanged tree cheap.
//!
//! This room owns the in-process cache of parsed summaries by file stamp
//! (`memory`) and the disk cache that carries the last registry and its walk
//! snapshot to a later process (`disk`, with its file format in
//! `disk/format.rs`).
//!
//! It decides nothing about freshness: whether a stamp may be believed is
//! `bcode_fs`'s (`recheck`, the racy rule), and a cache answer is only ever
//! a shortcut for a walk and a parse that would give the same result.

pub(crate) mod disk;
pub(crate) mod memory;

pub use disk::DiskCache;
