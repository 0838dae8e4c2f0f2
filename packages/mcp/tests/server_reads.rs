//! `resources/read` of a file swapped for a link after the listing: the
//! read is refused, and the client is told so in terms of the `skill://`
//! URI, never with a path of the machine or the link's target.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness

use crate::common;

use std::path::Path;

use bcode_skill_mcp::SkillServer;
use serde_json::json;

use common::registry;

/// A served skill `pdf-tools` with `refs/guide.md` below `skills`, and a
/// file `secret.txt` beside `skills`; the entry is built (listed) before
/// `swap` replaces the guide, then the guide is read.
fn read_after(swap: impl FnOnce(&Path, &Path)) -> serde_json::Value {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let skills = base.join("skills");
    std::fs::create_dir_all(skills.join("pdf-tools/refs")).unwrap();
    std::fs::write(
        skills.join("pdf-tools/SKILL.md"),
        "---\ndescription: Work with PDFs\n---\nRead refs/guide.md.\n",
    )
    .unwrap();
    let guide = skills.join("pdf-tools/refs/guide.md");
    std::fs::write(&guide, "# Guide\n").unwrap();
    let secret = base.join("secret.txt");
    std::fs::write(&secret, "outside").unwrap();
    let server = SkillServer::new(&registry(&skills));
    let listed = server.list_skills_page(None).unwrap();
    assert_eq!(listed.skills.len(), 1);
    std::fs::remove_file(&guide).unwrap();
    swap(&guide, &secret);
    let answer = server.read_resource_blocking("skill://pdf-tools/refs/guide.md");
    let answer = match answer {
        Ok(read) => serde_json::to_value(read).unwrap(),
        Err(err) => serde_json::to_value(err).unwrap(),
    };
    let text = answer.to_string();
    let base = base.to_string_lossy();
    assert!(!text.contains(base.as_ref()), "{text}");
    answer
}

/// Issue 38, item 16: the error named the server's absolute path of the
/// file, the link's target and the skill's folder.
#[test]
fn a_link_swapped_in_is_refused_without_naming_a_path_of_the_machine() {
    let refused = json!({
        "code": -32002,
        "message": "refused: skill://pdf-tools/refs/guide.md resolves outside the skill's folder",
    });
    let absolute = read_after(|guide, secret| std::os::unix::fs::symlink(secret, guide).unwrap());
    assert_eq!(absolute, refused);
    let relative =
        read_after(|guide, _| std::os::unix::fs::symlink("../../../secret.txt", guide).unwrap());
    assert_eq!(relative, refused);
    let system =
        read_after(|guide, _| std::os::unix::fs::symlink("/proc/self/environ", guide).unwrap());
    assert_eq!(system, refused);
}

/// A file gone since the listing is told as the system says it, which
/// names no path either.
#[test]
fn a_file_removed_since_the_listing_is_named_by_its_uri() {
    let gone = read_after(|_, _| {});
    assert_eq!(
        gone,
        json!({
            "code": -32002,
            "message": "skill://pdf-tools/refs/guide.md cannot be read: No such file or directory (os error 2)",
        })
    );
}
