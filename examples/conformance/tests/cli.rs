//! `mpit-conform` behaves on its command line as every tool does: `--help`
//! and `-V` exit 0 with the usage and the version on standard output, an unknown flag or
//! property exits 2 with the error on standard error; `--list` needs no MPI job.

use mpit_test_support::cli::{check_tool, run, text};

const TOOL: &str = env!("CARGO_BIN_EXE_mpit-conform");

#[test]
fn help_version_and_usage_errors() {
    check_tool("mpit-conform", TOOL, env!("CARGO_PKG_VERSION"));
    let out = run(TOOL, &["--only", "no.such.property"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(text(&out.stderr).contains("no property \"no.such.property\""));
}

#[test]
fn list_names_every_property() {
    let out = run(TOOL, &["--list"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let listed: Vec<String> = text(&out.stdout)
        .lines()
        .filter_map(|l| l.split('\t').next().map(str::to_owned))
        .collect();
    let known: Vec<&str> = mpit_conformance::properties()
        .iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(listed, known);
}
