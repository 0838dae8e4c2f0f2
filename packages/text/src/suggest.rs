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
    strsim::osa_distance(a, b)
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
        // Characters, not bytes: one substitution of a two-byte letter.
        assert_eq!(edit_distance("café", "cafe"), 1);
        // Optimal string alignment: a swapped pair is not edited again.
        assert_eq!(edit_distance("ca", "abc"), 3);
    }
}
