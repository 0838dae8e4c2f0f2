//! "Did you mean" suggestions, one policy for every near miss Bcode reports:
//! config keys and enum values, front-matter fields, skill ids, slash
//! commands.

/// The candidate closest to `input` by edit distance, when it is close enough
/// to be a likely typo: a third of the input's length, but at least 2 and at
/// most 3 edits. Ties go to the smallest candidate, for determinism.
pub fn closest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (input.chars().count() / 3).clamp(2, 3);
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
        assert_eq!(
            closest("sumary", ["off", "names_only", "summary"]),
            Some("summary")
        );
        assert_eq!(
            closest("nmes_only", ["off", "names_only", "summary"]),
            Some("names_only")
        );
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("alpah", "alpha"), 1);
        assert_eq!(closest("alpah", ["alpha", "beta"]), Some("alpha"));
    }
}
