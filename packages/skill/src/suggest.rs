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

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
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
    }
}
