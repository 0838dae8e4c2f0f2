//! Shared helpers for the workspace integration tests.

use std::io;
use std::path::Path;

/// Copies the tree at `from` into `to` (created), folders recursively; a
/// `from` that cannot be listed (a case without that folder) copies
/// nothing.
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    std::fs::create_dir_all(to)?;
    for entry in entries {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
