//! Session options for the façade benchmarks: a generated corpus as two
//! configured roots, a private HOME, no disk cache and the git sections off
//! (git status is per turn by nature and measured on its own).

use std::path::Path;

use bcode_prompt::{SessionOptions, SkillLifetime};

use crate::Corpus;

/// Options of a session on `corpus`; with `watch` false every turn start
/// checks stamps instead of reading the folder watch.
pub fn session_options(corpus: &Corpus, home: &Path, watch: bool) -> SessionOptions {
    let roots = format!(
        "skills.sources.paths=[{:?}, {:?}]",
        corpus.dir.join("primary").display().to_string(),
        corpus.dir.join("secondary").display().to_string()
    );
    let mut options = SessionOptions::new(&corpus.dir)
        .env([("HOME".to_owned(), home.display().to_string())])
        .set(roots)
        .set("skills.disk_cache=false");
    for section in [
        "git_revision",
        "worktree_context",
        "dynamic_repository_context",
    ] {
        options = options.set(format!("system_prompt.sections.{section}=false"));
    }
    options.skill_lifetime(if watch {
        SkillLifetime::Watched
    } else {
        SkillLifetime::StampChecked
    })
}

/// This process's resident set size now, in KiB (`VmRSS`), where the
/// platform reports it.
pub fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
