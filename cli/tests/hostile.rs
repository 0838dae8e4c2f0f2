//! The trust line (issue 12): a cloned repository, a broken `.git`, odd
//! bytes or a hostile input can never leak, hang, crash or steer the host.
//! Each test drives the real binary with one hostile input found through
//! the CLI and checks the whole answer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns
#![cfg(unix)] // non-UTF-8 names, FIFOs and /dev/zero are Unix facts

mod common;

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::OsStrExt;
use std::process::{Output, Stdio};

use common::{Sandbox, write};
use serde_json::{Value, json};

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn run(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox.command().args(args).output().unwrap()
}

/// `PWD` as a shell sets it after `cd` into a Latin-1 named checkout: the
/// environment snapshot skips it instead of panicking.
#[test]
fn a_non_utf8_environment_variable_does_not_crash() {
    let sandbox = Sandbox::new();
    write(
        &sandbox.repo.join(".bcode/skills/alpha/SKILL.md"),
        "---\ndescription: First skill\n---\nBody.\n",
    );
    let out = sandbox
        .command()
        .env("PWD", OsStr::from_bytes(b"/src/caf\xe9"))
        .env("TZ", OsStr::from_bytes(b"Europe/Z\xfcrich"))
        .args(["skills", "list"])
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), text(&out.stdout), text(&out.stderr)),
        (
            Some(0),
            "alpha  [repo:.bcode/skills]\n    First skill\n".to_owned(),
            "bcode-prompt: warning: environment variable TZ is not UTF-8 (Europe/Z\u{fffd}rich); it is ignored\n"
                .to_owned()
        )
    );
}
