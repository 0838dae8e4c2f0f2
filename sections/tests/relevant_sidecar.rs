#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Crash safety of the focus sidecar: an interrupted write keeps the
//! previous sidecar; truncated, garbage and oversized files are reported and
//! ignored. (That `render --session` carries the focus from one render to
//! the next is tested with the façade, in `prompt/tests/relevant.rs`.)

use std::path::Path;

use bcode_prompt_sections::{
    FocusState, SIDECAR_MAX_BYTES, SelectionOrigin, SidecarProblem, load_sidecar, save_sidecar,
    save_sidecar_with, sidecar_path,
};

fn state(generation: u64, ids: &[&str]) -> FocusState {
    FocusState {
        generation,
        ids: ids.iter().map(|s| (*s).to_owned()).collect(),
        task_summary: Some("fix the parser".to_owned()),
        origin: SelectionOrigin::Selector,
    }
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn round_trips_and_a_missing_sidecar_is_none() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load_sidecar(dir.path()), Ok(None));
    save_sidecar(dir.path(), &state(3, &["a", "b"])).unwrap();
    assert_eq!(load_sidecar(dir.path()), Ok(Some(state(3, &["a", "b"]))));
    assert_eq!(files(dir.path()), ["invariants-focus.json"]);
}

#[test]
fn an_interrupted_write_leaves_the_previous_sidecar_intact() {
    let dir = tempfile::tempdir().unwrap();
    save_sidecar(dir.path(), &state(1, &["a"])).unwrap();
    // The write dies half-way (a crash, a full disk).
    let got = save_sidecar_with(dir.path(), &state(2, &["b"]), &mut |out, bytes| {
        out.write_all(&bytes[..bytes.len() / 2])?;
        Err(std::io::Error::other("disk full"))
    });
    assert_eq!(
        got,
        Err(SidecarProblem::Unwritable {
            message: "disk full".to_owned()
        })
    );
    assert_eq!(load_sidecar(dir.path()), Ok(Some(state(1, &["a"]))));
    assert_eq!(files(dir.path()), ["invariants-focus.json"]);
    // A temp file a killed process left behind does not matter either.
    std::fs::write(dir.path().join(".invariants-focus.json.tmp-1"), "{\"vers").unwrap();
    assert_eq!(load_sidecar(dir.path()), Ok(Some(state(1, &["a"]))));
    save_sidecar(dir.path(), &state(2, &["b"])).unwrap();
    assert_eq!(load_sidecar(dir.path()), Ok(Some(state(2, &["b"]))));
}

#[test]
fn truncated_garbage_and_oversized_sidecars_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    save_sidecar(dir.path(), &state(1, &["a"])).unwrap();
    let file = sidecar_path(dir.path());
    let text = std::fs::read(&file).unwrap();
    std::fs::write(&file, &text[..text.len() / 2]).unwrap();
    assert!(matches!(
        load_sidecar(dir.path()),
        Err(SidecarProblem::Corrupt { .. })
    ));
    std::fs::write(&file, [0xff, 0x00, 0x13, 0x37]).unwrap();
    assert!(matches!(
        load_sidecar(dir.path()),
        Err(SidecarProblem::Corrupt { .. })
    ));
    std::fs::write(&file, "{\"version\": 9, \"generation\": 1, \"origin\": \"selector\", \"ids\": [], \"task_summary\": null}").unwrap();
    assert_eq!(
        load_sidecar(dir.path()),
        Err(SidecarProblem::UnsupportedVersion { version: 9 })
    );
    std::fs::write(&file, vec![b' '; SIDECAR_MAX_BYTES as usize + 1]).unwrap();
    assert_eq!(
        load_sidecar(dir.path()),
        Err(SidecarProblem::TooLarge {
            bytes: SIDECAR_MAX_BYTES + 1
        })
    );
}
