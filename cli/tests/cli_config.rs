//! `config check [--strict]` and the lines of `config explain` through the
//! CLI contract: every error and warning of every file, exit codes 0, 1 and
//! 2, and the exit codes in `--help`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use crate::common;

use std::process::Output;

use common::{Sandbox, text, write};

/// `(exit code, stdout with the sandbox path as [ROOT], stderr)`.
fn answer(sandbox: &Sandbox, out: &Output) -> (Option<i32>, String, String) {
    let base = sandbox.base.display().to_string();
    (
        out.status.code(),
        text(&out.stdout).replace(&base, "[ROOT]"),
        text(&out.stderr),
    )
}

#[test]
fn a_clean_config_checks_with_exit_0() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/bcode.toml"),
        "[skills.prompt]\ncatalog = \"off\"\n",
    );
    let out = sandbox.run(&[
        "--set",
        "skills.enabled=true",
        "config",
        "check",
        "--strict",
    ]);
    assert_eq!(
        answer(&sandbox, &out),
        (
            Some(0),
            "2 layers checked: 0 errors, 0 warnings; the repository is not trusted\n".to_owned(),
            String::new()
        )
    );
}

#[test]
fn check_prints_every_error_and_warning_of_every_file() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.home.join(".config/bcode/bcode.toml"),
        "[skills]\nenabled = tru\n",
    );
    // A bad value does not hide the file's other problems.
    write(
        &sandbox.repo.join(".bcode/bcode.toml"),
        "[skills]\nenabled = \"yes\"\nbogus = 1\n[skills.prompt]\ncatalog = \"sumary\"\nmax_byte = 3\n",
    );
    let out = sandbox.run(&["--config", "missing.toml", "config", "check"]);
    let (code, stdout, _) = answer(&sandbox, &out);
    assert_eq!(code, Some(1));
    let lines: Vec<&str> = stdout.lines().collect();
    let starts = [
        "error: user file [ROOT]/home/.config/bcode/bcode.toml:2:11: invalid TOML",
        "error: config file ",
        "error: repo file [ROOT]/repo/.bcode/bcode.toml:2: invalid value for `skills.enabled`: \"yes\"",
        "  expected a boolean (true or false)",
        "error: repo file [ROOT]/repo/.bcode/bcode.toml:5: invalid value for `skills.prompt.catalog`: \"sumary\"",
        "  expected one of: off, names_only, summary",
        "  did you mean `summary`?",
        "warning: repo file [ROOT]/repo/.bcode/bcode.toml:3: unknown key `skills.bogus` (ignored)",
        "warning: repo file [ROOT]/repo/.bcode/bcode.toml:6: unknown key `skills.prompt.max_byte` (ignored); did you mean `skills.prompt.max_bytes`?",
        "1 layer checked: 4 errors, 2 warnings",
    ];
    assert_eq!(lines.len(), starts.len(), "{stdout}");
    for (line, start) in lines.iter().zip(starts) {
        assert!(
            line.starts_with(start),
            "{line:?} should start with {start:?}\n{stdout}"
        );
    }
    assert!(
        lines[1].contains("missing.toml: cannot read config"),
        "{stdout}"
    );
}

#[test]
fn strict_makes_unknown_keys_errors() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/bcode.toml"),
        "[skills]\nenabeld = false\n",
    );
    let warning = "repo file [ROOT]/repo/.bcode/bcode.toml:2: unknown key `skills.enabeld` (ignored); did you mean `skills.enabled`?";
    let out = sandbox.run(&["config", "check"]);
    assert_eq!(
        answer(&sandbox, &out),
        (
            Some(0),
            format!(
                "warning: {warning}\n1 layer checked: 0 errors, 1 warning; the repository is not trusted\n"
            ),
            String::new()
        )
    );
    let out = sandbox.run(&["config", "check", "--strict"]);
    assert_eq!(
        answer(&sandbox, &out),
        (
            Some(1),
            format!(
                "error: {warning}\n1 layer checked: 1 error, 0 warnings; the repository is not trusted\n"
            ),
            String::new()
        )
    );
}

#[test]
fn check_with_a_missing_repository_is_a_usage_error() {
    let sandbox = Sandbox::new();
    let out = sandbox.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn check_help_documents_the_exit_codes() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(&sandbox.repo).unwrap();
    let out = sandbox.run(&["config", "check", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    assert!(
        help.contains(
            "Exit codes:\n  0  no error in any layer (warnings allowed)\n  1  an error was found"
        ),
        "{help}"
    );
    assert!(help.contains("--strict"), "{help}");
}

#[test]
fn explain_origins_carry_the_line_of_the_file() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/bcode.toml"),
        "# Team settings\n\n[skills]\nenabled = true\n\n[skills.prompt]\n\ncatalog = \"off\"\n",
    );
    let out = sandbox.run(&["config", "explain", "skills.prompt.catalog"]);
    assert_eq!(
        answer(&sandbox, &out),
        (
            Some(0),
            "skills.prompt.catalog = \"off\"  # repo file [ROOT]/repo/.bcode/bcode.toml:8\n"
                .to_owned(),
            String::new()
        )
    );
}

/// Thousands of unknown keys: each gets its warning with its own line (the
/// library's `warnings_never_reparse_their_file` holds the file to one parse).
#[test]
fn thousands_of_unknown_keys_each_get_their_line() {
    let sandbox = Sandbox::new();
    let mut config = String::from("[system_prompt]\n");
    for n in 0..3000 {
        config.push_str(&format!("k{n:04} = {n}\n"));
    }
    write(&sandbox.repo.join(".bcode/bcode.toml"), &config);
    let out = sandbox.run(&["config", "check"]);
    let (code, stdout, _) = answer(&sandbox, &out);
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3001);
    assert_eq!(
        lines[2999],
        "warning: repo file [ROOT]/repo/.bcode/bcode.toml:3001: unknown key `system_prompt.k2999` (ignored)"
    );
}

/// `render` loads the config once, in its session: each config warning is on
/// stderr exactly once, and an invalid value stops it with exit 2 and the
/// file, line and key, as for every command.
#[test]
fn render_reports_each_config_warning_once_and_stops_at_an_invalid_value() {
    let sandbox = Sandbox::new();
    let config = sandbox.repo.join(".bcode/bcode.toml");
    write(&config, "[skills]\nenabeld = false\n");
    let out = sandbox.run(&["render"]);
    let (code, stdout, stderr) = answer(&sandbox, &out);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stdout.is_empty());
    let warning = "unknown key `skills.enabeld` (ignored); did you mean `skills.enabled`?";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "bcode-prompt: warning: repo file {}:2: {warning}",
            config.display()
        )),
        "{stderr}"
    );

    write(&config, "[skills]\nenabled = \"yes\"\n");
    let out = sandbox.run(&["render"]);
    let (code, stdout, stderr) = answer(&sandbox, &out);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with("bcode-prompt: invalid configuration: "),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "repo file {}:2: invalid value for `skills.enabled`: \"yes\"",
            config.display()
        )),
        "{stderr}"
    );
}

/// With no config file, variable or flag there is nothing to check, and the
/// summary says so instead of "0 layers checked".
#[test]
fn check_without_any_layer_says_there_is_nothing_to_check() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(&sandbox.repo).unwrap();
    let out = sandbox.run(&["config", "check"]);
    assert_eq!(
        answer(&sandbox, &out),
        (
            Some(0),
            "no config to check: no user or repository bcode.toml, BCODE_* variable, --config \
             or --set (the built-in defaults apply); the repository is not trusted\n"
                .to_owned(),
            String::new()
        )
    );
}

/// The twenty machine facts are unset unless pinned: `config explain`
/// shows the pinned ones and one line for the rest; `config explain facts`
/// lists every key.
#[test]
fn explain_folds_the_unset_facts_into_one_line() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(&sandbox.repo).unwrap();
    let out = sandbox.run(&["--set", "facts.timezone=\"UTC\"", "config", "explain"]);
    let (code, stdout, stderr) = answer(&sandbox, &out);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    let facts: Vec<&str> = stdout.lines().filter(|l| l.contains("facts")).collect();
    assert_eq!(
        facts,
        [
            "facts.timezone = \"UTC\"  # --set facts.timezone=\"UTC\"",
            "# facts: 19 more keys unset, probed from the machine (`bcode-prompt config explain facts` lists them)",
        ]
    );
    let out = sandbox.run(&["config", "explain", "facts"]);
    let (code, stdout, _) = answer(&sandbox, &out);
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 20, "{stdout}");
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("facts.") && l.ends_with(" = (unset)  # default")),
        "{stdout}"
    );
}
