//! How many threads a parallel edge (the skill walk, snapshot checks, the
//! skill loaders, the git status split) may use: one answer per process.

use std::sync::OnceLock;

/// The most threads any caller is given. Beyond this the work discovery and
/// the status scan split is bound by the kernel's path lookups, not cores.
const MAX_THREADS: usize = 8;

/// The available cores, at least 1 and at most 8. Asked once per process,
/// because on Linux the answer comes from reading cgroup files, which showed
/// up in per-render profiles. Callers that want fewer (the git status split
/// uses two at most, and none on two cores) cap the answer themselves.
pub fn worker_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, MAX_THREADS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_bounded_and_stable() {
        let first = worker_threads();
        assert!((1..=MAX_THREADS).contains(&first));
        assert_eq!(worker_threads(), first);
    }
}
