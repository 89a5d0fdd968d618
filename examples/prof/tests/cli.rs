//! `mpit-prof` behaves on its command line as every tool does: `--help` and
//! `-V` exit 0 with the usage and the version on standard output, an unknown flag exits 2 with
//! the error on standard error; so does a run without a program, and `report` of a directory
//! that is not an output directory (or `report --trace` of one without a trace) exits 1 with
//! the error on standard error.

use mpit_test_support::cli::{check_tool, run, text};

const TOOL: &str = env!("CARGO_BIN_EXE_mpit-prof");

#[test]
fn help_version_and_usage_errors() {
    check_tool("mpit-prof", TOOL, env!("CARGO_PKG_VERSION"));
    let out = run(TOOL, &[]);
    assert_eq!(out.status.code(), Some(2), "no program: {out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(text(&out.stderr).contains("no program given"));
}

#[test]
fn report_of_a_missing_directory_or_trace_is_an_error_on_stderr() {
    for (args, says) in [
        (&["report"][..], "mpit-prof: "),
        (
            &["report", "--trace"][..],
            "mpit-prof: /nonexistent/mpit-prof-dir: no such file",
        ),
    ] {
        let out = run(TOOL, &[args, &["/nonexistent/mpit-prof-dir"]].concat());
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");
        assert!(text(&out.stderr).starts_with(says), "{out:?}");
    }
}

#[test]
fn a_preload_library_that_is_not_there_is_named_and_nothing_runs() {
    let out = std::process::Command::new(TOOL)
        .args(["--", "/bin/echo", "ran"])
        .env("MPIT_PROF_LIB", "/nonexistent/libmpit_prof.so")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty(), "the program ran: {out:?}");
    let err = text(&out.stderr);
    assert!(
        err.contains("MPIT_PROF_LIB=/nonexistent/libmpit_prof.so is not a file"),
        "{err}"
    );
}

#[test]
fn help_says_what_call_mode_costs() {
    let out = run(TOOL, &["--help"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let help = text(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(help.contains("every pvar read twice a call"), "{help}");
    assert!(help.contains("can take twice as long"), "{help}");
}
