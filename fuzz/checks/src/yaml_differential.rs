//! Target `yaml_differential`: the input is YAML front matter, read by the
//! fast path, the full parser (serde-saphyr with the front-matter budgets)
//! and the recovering parser skills use.

use bcode_skill::fuzzing;

/// Properties: wherever the fast path answers, the full parser accepts the
/// same text and reads the same mapping; wherever the full parser accepts
/// a text, the skill parser reads the same mapping without a repair
/// (recovery never changes a valid file); wherever the full parser rejects
/// it, the skill parser rejects it too or names the repairs it made.
pub fn check(data: &[u8]) {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let full = fuzzing::yaml_full(raw);
    if let Some(fast) = fuzzing::yaml_fast(raw) {
        assert_eq!(
            full.as_ref(),
            Ok(&fast),
            "the fast path disagrees with the full parser on {raw:?}"
        );
    }
    let parsed = fuzzing::yaml(raw);
    let agrees = match (&full, &parsed) {
        (Ok(full), Ok((map, repairs))) => full == map && *repairs == 0,
        (Err(_), Err(_)) => true,
        (Err(_), Ok((_, repairs))) => *repairs > 0,
        (Ok(_), Err(_)) => false,
    };
    assert!(
        agrees,
        "full parser {full:?} but skill parser {parsed:?} on {raw:?}"
    );
}
