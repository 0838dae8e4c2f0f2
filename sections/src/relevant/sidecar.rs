//! The per-session focus sidecar: `<session dir>/invariants-focus.json`,
//! holding the last valid focused selection so a reconnecting session
//! recovers it without replaying event history.
//!
//! Bounded: at most [`SIDECAR_MAX_BYTES`] on disk, [`MAX_IDS`] ids and a
//! cut task summary. Written atomically (temp file in the same folder,
//! `fsync`, rename, `fsync` of the folder), so a crash mid-write leaves the
//! previous sidecar intact. A corrupt, oversized or unreadable sidecar is a
//! [`SidecarProblem`] for the caller to report and ignore, never fatal.
//! It is read through `bcode-fs` like every file a repository or user
//! controls: non-blocking and regular files only, so a FIFO in its place
//! cannot hang a render. The folder is state (`bcode_fs::StateDir`): used
//! only when it is the user's and nobody else may write to it, the temp file
//! has a random name and is created `O_EXCL`, and the sidecar is never read
//! through a link, so a link planted there is neither written through nor
//! read. A generation no session reaches is refused too: the
//! driver only adopts newer generations, so an absurd one stored there would
//! pin a stale focus for ever.
//!
//! [`encode`] and [`decode`] are the core; [`load_sidecar`] and [`save_sidecar`] the edge.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::selector::bound_summary;
use super::{Selection, SelectionOrigin};

/// The file name inside the session folder.
pub const SIDECAR_FILE: &str = "invariants-focus.json";
/// The largest sidecar that is read; a larger one is reported and ignored.
pub const SIDECAR_MAX_BYTES: u64 = 16 * 1024;
/// The most ids kept.
pub const MAX_IDS: usize = 64;
/// The highest generation accepted from a sidecar. A session takes one
/// generation per selector call, so four billion is out of reach of any real
/// one, yet far enough below `u64::MAX` that the driver's `+ 1` arithmetic
/// never saturates into a generation nothing can supersede.
pub const MAX_GENERATION: u64 = u32::MAX as u64;
/// The most bytes of one id kept (longer ids are not real invariant ids).
const MAX_ID_BYTES: usize = 128;
const VERSION: u32 = 1;

/// The focus a session keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FocusState {
    /// The selector request that produced the focus (1 is a session's
    /// first); at most `MAX_GENERATION` when read back.
    pub generation: u64,
    /// The focused invariant ids, most relevant first; at most `MAX_IDS`
    /// are stored.
    pub ids: Vec<String>,
    /// The selector's task summary, cut like a fresh answer's.
    pub task_summary: Option<String>,
    /// Which selector made the selection, stored as its lower-case name.
    pub origin: SelectionOrigin,
}

impl FocusState {
    /// The part of a validated selection worth keeping across reconnects.
    pub fn from_selection(selection: &Selection) -> FocusState {
        FocusState {
            generation: selection.generation,
            ids: selection.ids.clone(),
            task_summary: selection.task_summary.clone(),
            origin: selection.origin,
        }
    }
}

/// Why a sidecar was not used (or not written).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SidecarProblem {
    /// The file is larger than [`SIDECAR_MAX_BYTES`].
    TooLarge {
        /// Its size in bytes, as found.
        bytes: u64,
    },
    /// The file is not a sidecar this version wrote: bad JSON, an unknown
    /// field or origin, or too many or too long ids.
    Corrupt {
        /// What exactly is wrong, e.g. serde_json's message.
        message: String,
    },
    /// The file's `version` is not the one this build reads.
    UnsupportedVersion {
        /// The version the file declares.
        version: u32,
    },
    /// The file exists but could not be read (or is not a regular file).
    Unreadable {
        /// The read error's message.
        message: String,
    },
    /// Creating the folder, writing, syncing or renaming the temp file
    /// failed; the previous sidecar is left as it was.
    Unwritable {
        /// The I/O error's message.
        message: String,
    },
    /// A generation above `MAX_GENERATION`: not written by a real session.
    ImplausibleGeneration {
        /// The generation the file declares.
        generation: u64,
    },
}

impl fmt::Display for SidecarProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SidecarProblem::TooLarge { bytes } => write!(
                f,
                "sidecar is {bytes} bytes, over the {SIDECAR_MAX_BYTES}-byte bound; ignored"
            ),
            SidecarProblem::Corrupt { message } => {
                write!(f, "sidecar is corrupt ({message}); ignored")
            }
            SidecarProblem::UnsupportedVersion { version } => {
                write!(f, "sidecar has unsupported version {version}; ignored")
            }
            SidecarProblem::Unreadable { message } => {
                write!(f, "sidecar is unreadable ({message}); ignored")
            }
            SidecarProblem::ImplausibleGeneration { generation } => write!(
                f,
                "sidecar generation {generation} is beyond any real session (at most {MAX_GENERATION}); ignored"
            ),
            SidecarProblem::Unwritable { message } => {
                write!(
                    f,
                    "sidecar could not be written ({message}); the previous one is kept"
                )
            }
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    generation: u64,
    origin: String,
    ids: Vec<String>,
    task_summary: Option<String>,
}

/// The sidecar text of `state`, bounded.
pub fn encode(state: &FocusState) -> String {
    let file = File {
        version: VERSION,
        generation: state.generation,
        origin: state.origin.as_str().to_owned(),
        ids: state
            .ids
            .iter()
            .filter(|id| id.len() <= MAX_ID_BYTES)
            .take(MAX_IDS)
            .cloned()
            .collect(),
        task_summary: state.task_summary.as_deref().map(bound_summary),
    };
    // Serialising plain strings and numbers cannot fail; an empty text would
    // only read back as corrupt, which is reported, not fatal.
    let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
    text.push('\n');
    text
}

/// Parses sidecar bytes.
pub fn decode(bytes: &[u8]) -> Result<FocusState, SidecarProblem> {
    if bytes.len() as u64 > SIDECAR_MAX_BYTES {
        return Err(SidecarProblem::TooLarge {
            bytes: bytes.len() as u64,
        });
    }
    let file: File = serde_json::from_slice(bytes).map_err(|err| SidecarProblem::Corrupt {
        message: err.to_string(),
    })?;
    if file.version != VERSION {
        return Err(SidecarProblem::UnsupportedVersion {
            version: file.version,
        });
    }
    if file.generation > MAX_GENERATION {
        return Err(SidecarProblem::ImplausibleGeneration {
            generation: file.generation,
        });
    }
    let origin = match file.origin.as_str() {
        "selector" => SelectionOrigin::Selector,
        "deterministic" => SelectionOrigin::Deterministic,
        other => {
            return Err(SidecarProblem::Corrupt {
                message: format!("unknown origin `{other}`"),
            });
        }
    };
    if file.ids.len() > MAX_IDS || file.ids.iter().any(|id| id.len() > MAX_ID_BYTES) {
        return Err(SidecarProblem::Corrupt {
            message: "too many or too long ids".to_owned(),
        });
    }
    Ok(FocusState {
        generation: file.generation,
        ids: file.ids,
        task_summary: file.task_summary.map(|s| bound_summary(&s)),
        origin,
    })
}

/// The sidecar path of a session folder.
pub fn sidecar_path(session_dir: &Path) -> PathBuf {
    session_dir.join(SIDECAR_FILE)
}

/// Reads the sidecar of `session_dir`: `Ok(None)` when there is none yet.
/// Reads at most [`SIDECAR_MAX_BYTES`] + 1 bytes whatever the file's size.
pub fn load_sidecar(session_dir: &Path) -> Result<Option<FocusState>, SidecarProblem> {
    // `SIDECAR_MAX_BYTES` is a small constant; the conversion cannot fail on
    // any real target, and saturating keeps it a bound if it ever did.
    let max = usize::try_from(SIDECAR_MAX_BYTES).unwrap_or(usize::MAX);
    let dir = match bcode_fs::StateDir::existing(session_dir) {
        Ok(dir) => dir,
        Err(bcode_fs::StateError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(None);
        }
        Err(err) => {
            return Err(SidecarProblem::Unreadable {
                message: err.to_string(),
            });
        }
    };
    let read = dir.open_file(SIDECAR_FILE).and_then(|(mut file, len)| {
        if len > max as u64 {
            return Err(bcode_fs::ReadError::TooLarge { len, max });
        }
        let mut bytes = Vec::new();
        bcode_fs::read_rest(&mut file, &mut bytes, max).map(|()| bytes)
    });
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(bcode_fs::ReadError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(bcode_fs::ReadError::TooLarge { len, .. }) => {
            return Err(SidecarProblem::TooLarge { bytes: len });
        }
        Err(err) => {
            return Err(SidecarProblem::Unreadable {
                message: err.to_string(),
            });
        }
    };
    decode(&bytes).map(Some)
}

/// Writes the sidecar atomically; see the module docs.
pub fn save_sidecar(session_dir: &Path, state: &FocusState) -> Result<(), SidecarProblem> {
    save_sidecar_with(session_dir, state, &mut |out, bytes| out.write_all(bytes))
}

/// The step of [`save_sidecar_with`] that puts the bytes into the temp file.
pub type WriteStep<'a> = dyn FnMut(&mut dyn Write, &[u8]) -> std::io::Result<()> + 'a;

/// [`save_sidecar`] with the step that writes the bytes into the temp file given by
/// the caller, so a test can interrupt the write half-way and check that the
/// previous sidecar survives. On any error the temp file is removed.
pub fn save_sidecar_with(
    session_dir: &Path,
    state: &FocusState,
    write: &mut WriteStep<'_>,
) -> Result<(), SidecarProblem> {
    let unwritable = |err: std::io::Error| SidecarProblem::Unwritable {
        message: err.to_string(),
    };
    let dir = bcode_fs::StateDir::open(session_dir).map_err(|err| SidecarProblem::Unwritable {
        message: err.to_string(),
    })?;
    let text = encode(state);
    // A temp file with a random name, synced, renamed over the sidecar (the
    // temp file is removed on any error).
    dir.replace(SIDECAR_FILE, &mut |file| {
        write(file, text.as_bytes())?;
        file.sync_all()
    })
    .map_err(unwritable)?;
    // Persist the rename itself.
    dir.sync();
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn state(generation: u64) -> FocusState {
        FocusState {
            generation,
            ids: vec!["a".to_owned()],
            task_summary: None,
            origin: SelectionOrigin::Selector,
        }
    }

    /// A FIFO in the sidecar's place: opening it for reading used to block
    /// until a writer came, so a render hung. The load runs on a thread so a
    /// regression fails the test instead of hanging it.
    #[cfg(unix)]
    #[test]
    fn a_fifo_sidecar_is_reported_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = sidecar_path(dir.path());
        bcode_test_support::mkfifo(&fifo);
        let session = dir.path().to_path_buf();
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = send.send(load_sidecar(&session));
        });
        let got = receive
            .recv_timeout(std::time::Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("loading a FIFO sidecar blocked"));
        assert_eq!(
            got,
            Err(SidecarProblem::Unreadable {
                message: "not a regular file (a FIFO, socket, device or directory)".to_owned()
            })
        );
    }

    /// A link planted in the sidecar's place was read through, and the
    /// temp file's predictable name let a planted link redirect the write.
    /// Now the link is refused on reading and replaced (not written
    /// through) on saving, and a folder others may write to is not used.
    #[cfg(unix)]
    #[test]
    fn links_and_shared_folders_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("session");
        std::fs::create_dir(&session).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, sidecar_path(&session)).unwrap();
        for pid in 0..4 {
            let temp = session.join(format!(".{SIDECAR_FILE}.tmp-{pid}"));
            std::os::unix::fs::symlink(&victim, temp).unwrap();
        }
        assert_eq!(
            load_sidecar(&session),
            Err(SidecarProblem::Unreadable {
                message: format!(
                    "`{}` is a symbolic link; files in the state folder are never opened through links",
                    sidecar_path(&session).display()
                )
            })
        );
        save_sidecar(&session, &state(1)).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(load_sidecar(&session), Ok(Some(state(1))));
        std::fs::set_permissions(&session, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refusal = format!(
            "the state folder `{0}` is writable by other users (mode 777): they could plant \
             links in it; run `chmod go-w {0}` or use a folder of your own",
            session.display()
        );
        assert_eq!(
            save_sidecar(&session, &state(2)),
            Err(SidecarProblem::Unwritable {
                message: refusal.clone()
            })
        );
        assert_eq!(
            load_sidecar(&session),
            Err(SidecarProblem::Unreadable { message: refusal })
        );
    }

    /// A stored generation of `u64::MAX` was accepted, and no later
    /// selection could ever supersede it. Generations up to the bound load.
    #[test]
    fn an_absurd_generation_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for generation in [0, 7, MAX_GENERATION] {
            save_sidecar(dir.path(), &state(generation)).unwrap();
            assert_eq!(load_sidecar(dir.path()), Ok(Some(state(generation))));
        }
        for generation in [MAX_GENERATION + 1, u64::MAX] {
            save_sidecar(dir.path(), &state(generation)).unwrap();
            assert_eq!(
                load_sidecar(dir.path()),
                Err(SidecarProblem::ImplausibleGeneration { generation })
            );
        }
        assert_eq!(
            SidecarProblem::ImplausibleGeneration {
                generation: u64::MAX
            }
            .to_string(),
            "sidecar generation 18446744073709551615 is beyond any real session (at most 4294967295); ignored"
        );
    }
}
