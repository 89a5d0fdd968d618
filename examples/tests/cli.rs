//! Every tool of this package behaves alike on its command line: `--help`
//! prints the usage and the exit statuses on standard output and exits 0, `-V` prints
//! `NAME VERSION` and exits 0, and an unknown flag exits 2 with the error on standard error and
//! nothing on standard output. None of these initialises MPI. (`mpit-conform` and `mpit-prof`
//! live in their own packages; their tests are `conformance/tests/cli.rs`, `prof/tests/cli.rs`.)

use mpit_test_support::cli::{check_tool, run, text};

/// The binaries of this package.
const TOOLS: [(&str, &str); 5] = [
    ("mpit-counts", env!("CARGO_BIN_EXE_mpit-counts")),
    ("mpit-list", env!("CARGO_BIN_EXE_mpit-list")),
    ("mpir-attach", env!("CARGO_BIN_EXE_mpir-attach")),
    ("mpir-starter", env!("CARGO_BIN_EXE_mpir-starter")),
    ("mqd-dump", env!("CARGO_BIN_EXE_mqd-dump")),
];

#[test]
fn every_tool_has_help_version_and_usage_errors() {
    for (name, exe) in TOOLS {
        check_tool(name, exe, env!("CARGO_PKG_VERSION"));
    }
}

#[test]
fn mpit_counts_help_does_not_count() {
    // It used to ignore its arguments and print the table.
    let out = run(TOOLS[0].1, &["--help"]);
    assert!(!text(&out.stdout).contains("before Init"));
}

/// Why counts differ between runs is in `mpit-list --help`: registration in MPI_Init, and
/// Open MPI's components opened only under its launcher.
#[test]
fn mpit_list_help_says_why_counts_differ() {
    let out = run(TOOLS[1].1, &["--help"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let help = text(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains("implementations register variables in MPI_Init"),
        "{help}"
    );
    assert!(help.contains("under `mpiexec -n 2 mpit-list`"), "{help}");
}

#[test]
fn usage_errors_of_the_tools_options() {
    let cases: &[(&str, &[&str])] = &[
        ("mpit-list", &["--verbosity", "LOUD"]),
        ("mpit-list", &["--holes", "--no-holes"]),
        ("mpit-list", &["--diff", "a.json"]),
        ("mpit-list", &["--diff", "a.json", "b.json", "--name", "x"]),
        ("mpit-counts", &["--kv", "--json"]),
        ("mpir-attach", &[]),
        ("mqd-dump", &[]),
        ("mpir-starter", &[]),
    ];
    for &(name, args) in cases {
        let exe = TOOLS.iter().find(|t| t.0 == name).unwrap().1;
        let out = run(exe, args);
        assert_eq!(out.status.code(), Some(2), "{name} {args:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{name} {args:?}: {out:?}");
        assert!(text(&out.stderr).contains("error:"), "{name} {args:?}");
    }
}

#[test]
fn mpit_list_diff_of_a_missing_file_is_an_error_on_stderr() {
    let out = run(
        TOOLS[1].1,
        &["--diff", "/nonexistent/a.json", "/nonexistent/b.json"],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty());
    assert!(text(&out.stderr).starts_with("mpit-list: /nonexistent/a.json"));
}
