//! Bounded, non-blocking reads of regular files. Every file a repository or
//! a user controls (skills, instructions, invariants, config, template
//! overrides) is read through here, so none of them can hang a render (a FIFO
//! named `BCODE.md`), or make it read without limit (a huge file).
//!
//! Files are opened with `O_NONBLOCK` and checked with `fstat` on the open
//! file before any read, so a special file swapped in after a caller's own
//! check still cannot block, and reads stop one byte past the limit.
//!
//! [`Confinement`] says where the files of a root may really be: a
//! repository's inside the repository, and nothing under `/proc`, `/sys`
//! or `/dev` (checked on the opened file, see `confine.rs`).
//!
//! It also holds the file stamp (size, times, identity) and the one notion
//! of an unchanged file built on it (`freshness.rs`: the racy rule, content
//! hashes, recorded lookups), directory handles that take stamps relative to an open
//! directory, cheaply, the one answer to how many worker threads an edge
//! may use, and an exact folder watch (`FolderWatch`).
//!
//! [`StateDir`] is the user's state folder, used only when it is the user's
//! own and nobody else may write to it, with files in it created `O_EXCL`
//! under random names and opened without following links (`state.rs`).
//!
//! [`OutputDir`] writes files into a folder a repository controls (a golden
//! and the files beside it) without following links: checked to lie within
//! its confinement, temporary files created `O_EXCL`, renamed into place
//! (`output.rs`).
//!
//! [`Canonicalizer`] resolves the paths of many roots that share folders,
//! each folder once (`canonical.rs`).
//!
//! [`repository_root`] finds where a working folder's repository begins, as
//! git does (`root.rs`), refusing a root above the working folder that
//! another user owns unless [`Ownership`] trusts it (`owner.rs`).

#![warn(missing_docs)]

mod canonical;
mod confine;
mod dir;
mod freshness;
mod list;
mod output;
mod owner;
mod read;
mod root;
mod stamp;
mod state;
mod threads;
mod watch;

pub use canonical::Canonicalizer;
pub use confine::{Confinement, Escape, EscapeReason};
pub use dir::{DirHandle, below};
pub use freshness::{
    ContentHash, Observed, Verdict, needs_content_hash, own_stamp_of, recheck, same_content,
    stamp_of, still_observed, still_resolves, vouches,
};
pub use list::{ListedEntry, for_each_entry};
pub use output::OutputDir;
pub use owner::{NotOwned, Ownership};
pub use read::{ReadError, open_regular, read_bounded, read_head, read_named_bounded, read_rest};
pub use root::{RefusedRoot, RepositoryRoot, repository_root};
pub use stamp::{FileInfo, FileKind, FileStamp, RACY_WINDOW};
pub use state::{StateDir, StateError};
pub use threads::worker_threads;
pub use watch::{Drained, FolderWatch, WatchError};
