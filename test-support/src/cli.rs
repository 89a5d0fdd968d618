//! The command-line conventions every tool follows, checked on one binary.

use std::process::{Command, Output};

/// Runs `exe` with `args`, its output captured.
pub fn run(exe: &str, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{exe}: {e}"))
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `--help` (usage and exit statuses on standard output, exit 0), `-V` (`NAME VERSION` on
/// standard output, exit 0) and an unknown flag (exit 2, the error on standard error, nothing
/// on standard output) of tool `name`, whose version is `version`.
pub fn check_tool(name: &str, exe: &str, version: &str) {
    let help = run(exe, &["--help"]);
    let out = text(&help.stdout);
    assert_eq!(help.status.code(), Some(0), "{name} --help: {help:?}");
    assert!(out.contains("Usage:"), "{name} --help: no usage: {out}");
    assert!(
        out.contains("Exit status:"),
        "{name} --help does not document its exit statuses: {out}"
    );
    assert!(
        help.stderr.is_empty(),
        "{name} --help: {}",
        text(&help.stderr)
    );

    let v = run(exe, &["-V"]);
    assert_eq!(v.status.code(), Some(0), "{name} -V: {v:?}");
    assert_eq!(text(&v.stdout), format!("{name} {version}\n"), "{name} -V");

    let bad = run(exe, &["--no-such-flag"]);
    assert_eq!(bad.status.code(), Some(2), "{name} --no-such-flag: {bad:?}");
    assert!(
        bad.stdout.is_empty(),
        "{name} --no-such-flag wrote to standard output: {}",
        text(&bad.stdout)
    );
    let err = text(&bad.stderr);
    assert!(
        err.contains("error:") && err.contains("--no-such-flag"),
        "{name} --no-such-flag: {err}"
    );
}
