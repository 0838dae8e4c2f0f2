//! "Did you mean" suggestions for misspelt field names and ids.

/// The candidate closest to `input` by edit distance, when it is close enough
/// to be a likely typo (at most a third of the input's length, and at most 3).
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (input.chars().count() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .map(|c| (edit_distance(input, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}

/// Edit distance over characters where insertions, deletions, substitutions
/// and swaps of two neighbouring characters each cost one (optimal string
/// alignment): `alpah` is one edit from `alpha`, as a typist would judge.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_typos_only() {
        let known = ["description", "disable_model_invocation", "name", "id"];
        assert_eq!(closest("descripton", known), Some("description"));
        assert_eq!(closest("nme", known), Some("name"));
        assert_eq!(closest("argument-hint", known), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("alpah", "alpha"), 1);
        assert_eq!(closest("alpah", ["alpha", "beta"]), Some("alpha"));
    }
}
