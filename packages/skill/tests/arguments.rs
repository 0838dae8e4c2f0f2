//! Argument placeholders in the invoked-skill block (issue 25 item 5): one
//! table of bodies and invocations with the block body each gives, then the
//! cases a table row cannot say (the folder as shown, bounds after
//! substitution, the switch off, a flood of arguments).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use std::path::PathBuf;
use std::sync::Arc;

use bcode_prompt_config::SkillsConfig;
use bcode_skill::{
    InstructionKind, MAX_INSERTED_BYTES, ParseOutcome, SkillOrigin, SkillSessionOptions, Templates,
    format_context, parse_skill, shown_summary, split_arguments,
};
use bcode_skill_models::{
    DiagnosticCode, SkillContextRequest, SkillId, SkillLayout, SkillSource, SkillSummary,
    SourceKind,
};
use bcode_text::PathDisplay;

const ROOT: &str = "/skills";

fn parse(front_matter: &str, body: &str) -> ParseOutcome {
    let root = PathBuf::from(ROOT);
    let origin = SkillOrigin {
        source: Arc::new(SkillSource {
            kind: SourceKind::RepoBcode,
            label: "repo:.bcode/skills".into(),
            ordinal: 0,
            root: Some(root.clone()),
            provider: None,
        }),
        layout: SkillLayout::Folder,
        kind: InstructionKind::SkillFile,
        location: root.join("fix/SKILL.md"),
        directory: root.join("fix"),
        inferred_id: "fix".into(),
    };
    let text = format!("---\ndescription: Fix things\n{front_matter}---\n{body}");
    parse_skill(&origin, text.as_bytes())
}

fn skill(front_matter: &str, body: &str) -> Arc<SkillSummary> {
    let outcome = parse(front_matter, body);
    outcome
        .skill
        .unwrap_or_else(|| panic!("{:?}", outcome.diagnostics))
}

/// A request as `/skill fix <typed>` makes it.
fn typed(typed: &str) -> SkillContextRequest {
    SkillSessionOptions::from_config(&SkillsConfig::default()).context_request(
        SkillId::parse("fix").unwrap(),
        split_arguments(typed).words,
        (!typed.is_empty()).then(|| typed.to_owned()),
    )
}

fn block(skill: &SkillSummary, body: &str, request: &SkillContextRequest) -> String {
    format_context(skill, body, request, &Templates::builtin())
        .unwrap()
        .text
}

/// The block's body alone (after the blank line that ends the provenance
/// lines), and its `Invocation arguments:` line.
fn body_of(text: &str) -> (String, Option<String>) {
    let (head, rest) = text.split_once("\n\n").unwrap();
    let line = head
        .lines()
        .find_map(|l| l.strip_prefix("Invocation arguments: "))
        .map(str::to_owned);
    (rest.strip_suffix("\n</skill>").unwrap().to_owned(), line)
}

/// `body` invoked as `/skill fix <typed>` gives `expected` as the block's
/// body, with the skill's front matter extra lines `front_matter`.
fn check(front_matter: &str, body: &str, typed_text: &str, expected: &str) {
    let skill = skill(front_matter, body);
    let (got, _) = body_of(&block(&skill, body, &typed(typed_text)));
    assert_eq!(got, expected, "body {body:?}, arguments {typed_text:?}");
}

#[test]
fn placeholders_table() {
    let names = "arguments: [issue, branch-name, _x]\n";
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str, &str)] = &[
        // (front matter, body, typed arguments, body in the block)
        ("", "All: $ARGUMENTS.", "a \"b c\" d", "All: a \"b c\" d."),
        ("", "First $ARGUMENTS[0], second $ARGUMENTS[1].", "a \"b c\" d", "First a, second b c."),
        ("", "$0|$1|$2", "a 'b c' d", "a|b c|d"),
        // Past the end, and no arguments at all: empty.
        ("", "[$3][$ARGUMENTS[7]][$ARGUMENTS]", "a", "[][][a]"),
        ("", "[$0][$ARGUMENTS]", "", "[][]"),
        // `$10` is argument 10, not `$1` then `0`.
        ("", "$10 $1", "a b c d e f g h i j k", "k b"),
        // A word character continues the placeholder: it is not one.
        ("", "$1st $ARGUMENTSX $0_", "a b", "$1st $ARGUMENTSX $0_"),
        // `[` that is no index leaves `$ARGUMENTS` whole before it.
        ("", "$ARGUMENTS[x] $ARGUMENTS[]", "a", "a[x] a[]"),
        // Names declared in `arguments:` stand for their position.
        (names, "#$issue on $branch-name ($_x)", "12 main", "#12 on main ()"),
        // `-` may follow a name; a word character may not; undeclared stays.
        (names, "$issue-based $issues $foo $HOME", "7", "7-based $issues $foo $HOME"),
        // A `$` that starts nothing stays, and `\$` is a literal dollar.
        ("", "Costs $ or \\$0 and \\$ARGUMENTS; $ end $", "x", "Costs $ or $0 and $ARGUMENTS; $ end $"),
        ("", "${SKILL_DIR}/a ${CLAUDE_SKILL_DIR}/b ${OTHER}", "", "/skills/fix/a /skills/fix/b ${OTHER}"),
        // Fenced code (``` and ~~~, any length from 3, indented or not) and
        // inline code are left alone, next to substituted text.
        ("", "Run $0:\n```sh\necho $0 $ARGUMENTS\n```\nthen $1.", "a b", "Run a:\n```sh\necho $0 $ARGUMENTS\n```\nthen b."),
        ("", "~~~~\n$0\n~~~\n$0\n~~~~\n$0", "a", "~~~~\n$0\n~~~\n$0\n~~~~\na"),
        ("", "- item\n  ```\n  $0\n  ```\n- $0", "a", "- item\n  ```\n  $0\n  ```\n- a"),
        ("", "Use `$0` or ``a ` $0`` for $0.", "x", "Use `$0` or ``a ` $0`` for x."),
        // An unclosed fence is code to the end; an unmatched backtick is text.
        ("", "$0\n```\n$0", "x", "x\n```\n$0"),
        ("", "a ` $0\n\nb ` $0", "x", "a ` x\n\nb ` x"),
        // A backtick line with a backtick after it is inline code, not a fence.
        ("", "```a` $0\n$0", "x", "```a` x\nx"),
        // Unbalanced quotes split on whitespace; `$ARGUMENTS` is as typed.
        ("", "$0|$1|$ARGUMENTS", "don't \"panic", "don't|\"panic|don't \"panic"),
        // Non-ASCII arguments and bodies.
        ("", "Ü $0 — $1 技能", "naïve 'навык два'", "Ü naïve — навык два 技能"),
        // Substituted values are cleaned like the rest of the body.
        ("", "[$0]", "\"a\u{202e}b\u{1b}\"", "[a\\u{202e}b\\u{1b}]"),
        // An argument cannot close the block.
        ("", "$ARGUMENTS", "</skill> <skill>", "&lt;/skill> <skill>"),
        // No placeholder: the body as written.
        ("", "Plain body, 5 $ signs? No: one.", "a b", "Plain body, 5 $ signs? No: one."),
    ];
    for (front_matter, body, typed_text, expected) in cases {
        check(front_matter, body, typed_text, expected);
    }
}

#[test]
fn the_invocation_line_stays_whatever_the_body_uses() {
    let with = skill("", "Fix $ARGUMENTS now.");
    let without = skill("", "Fix it.");
    for skill in [&with, &without] {
        let body = if Arc::ptr_eq(skill, &with) {
            "Fix $ARGUMENTS now."
        } else {
            "Fix it."
        };
        let (_, line) = body_of(&block(skill, body, &typed("the \"cargo test\" <bug>")));
        // The line is the words joined by spaces, escaped like every value
        // in the block, as before substitution existed.
        assert_eq!(line.as_deref(), Some("the cargo test &lt;bug&gt;"));
    }
    let (body, line) = body_of(&block(&with, "Fix $ARGUMENTS now.", &typed("")));
    assert_eq!((body.as_str(), line), ("Fix  now.", None));
}

#[test]
fn words_without_typed_text_join_with_spaces() {
    // A host or the CLI that only has words: `$ARGUMENTS` is them joined.
    let skill = skill("", "[$ARGUMENTS] [$1]");
    let request = SkillSessionOptions::from_config(&SkillsConfig::default()).context_request(
        SkillId::parse("fix").unwrap(),
        vec!["a".into(), "b c".into()],
        None,
    );
    let (body, _) = body_of(&block(&skill, "[$ARGUMENTS] [$1]", &request));
    assert_eq!(body, "[a b c] [b c]");
}

#[test]
fn skill_dir_is_the_folder_the_block_shows() {
    let body = "Read ${SKILL_DIR}/ref.md and ${CLAUDE_SKILL_DIR}/x.";
    let skill = skill("", body);
    let paths = PathDisplay::new().with_root(ROOT, "/repo/.bcode/skills");
    let shown = shown_summary(&skill, &paths);
    let text = block(&shown, body, &typed(""));
    assert_eq!(
        text,
        "<skill id=\"fix\" name=\"fix\" location=\"/repo/.bcode/skills/fix/SKILL.md\">\nReferences are relative to /repo/.bcode/skills/fix.\nSource label: repo:.bcode/skills\n\nRead /repo/.bcode/skills/fix/ref.md and /repo/.bcode/skills/fix/x.\n</skill>"
    );
}

#[test]
fn switched_off_the_body_is_byte_identical() {
    let body = "Fix $ARGUMENTS, $0, \\$1, ${SKILL_DIR} and `$0`.\n```\n$0\n```\n";
    let skill = skill("arguments: [issue]\n", body);
    let mut request = typed("a b");
    request.substitute_arguments = false;
    let (got, line) = body_of(&block(&skill, body, &request));
    assert_eq!(got, body);
    assert_eq!(line.as_deref(), Some("a b"));
}

#[test]
fn the_bound_applies_after_substitution() {
    let body = "Start $ARGUMENTS end.";
    let skill = skill("", body);
    let long = "x".repeat(2000);
    let mut request = typed(&long);
    let whole = block(&skill, body, &request);
    let max = whole.len() - 1000;
    request.max_bytes = Some(max);
    let response = format_context(&skill, body, &request, &Templates::builtin()).unwrap();
    assert!(response.truncated);
    assert!(response.text.len() <= max, "{}", response.text.len());
    // What was cut is the substituted body: the block starts with it and
    // ends with the marker.
    let truncation = response.truncation.unwrap();
    assert_eq!(truncation.original_bytes, "Start  end.".len() + long.len());
    let marker = format!(
        "{} more bytes not shown (skills.max_context_bytes = {max}). Read the full file at /skills/fix/SKILL.md]\n</skill>",
        truncation.omitted_bytes
    );
    assert!(response.text.ends_with(&marker), "{}", response.text);
    assert!(response.text.contains("\n\nStart xxx"), "{}", response.text);
}

#[test]
fn a_flood_of_arguments_inserts_a_bounded_amount() {
    // 2,000 placeholders of a 64 KiB argument would insert 128 MiB; past
    // the budget placeholders stay as written.
    let body = "$0 ".repeat(2000);
    let skill = skill("", &body);
    let argument = "y".repeat(64 * 1024);
    let request = typed(&argument);
    let (got, _) = body_of(&block(&skill, &body, &request));
    let inserted = MAX_INSERTED_BYTES / argument.len();
    let expected = format!(
        "{}{}",
        format!("{argument} ").repeat(inserted),
        "$0 ".repeat(2000 - inserted)
    );
    assert_eq!(got.len(), expected.len());
    assert_eq!(got, expected);
}

#[test]
fn argument_names_are_validated_and_the_skill_still_loads() {
    let outcome = parse("arguments: [issue, \"two words\", issue]\n", "$issue");
    let skill = outcome.skill.unwrap();
    assert_eq!(skill.manifest.details().arguments(), ["issue", "", ""]);
    let found: Vec<(DiagnosticCode, Option<&str>, Option<u32>)> = outcome
        .diagnostics
        .iter()
        .map(|d| (d.code, d.field.as_deref(), d.line))
        .collect();
    assert_eq!(
        found,
        [
            (DiagnosticCode::InvalidField, Some("arguments"), Some(3)),
            (DiagnosticCode::InvalidField, Some("arguments"), Some(3)),
        ]
    );
    // A list that is no list is ignored, the skill loads all the same.
    let outcome = parse("arguments: {a: 1}\n", "$a");
    assert_eq!(
        outcome.skill.unwrap().manifest.details().arguments(),
        Vec::<String>::new()
    );
    assert_eq!(outcome.diagnostics.len(), 1, "{:?}", outcome.diagnostics);
}
