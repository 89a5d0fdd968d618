//! The first page cannot go stale: the program shown in mpit-safe's README (the crate's front
//! page) and in the workspace README is `examples/quickstart.rs`, unchanged, and that program
//! runs under `mpiexec -n 2` on the installed MPI with the output the page describes.

use std::path::{Path, PathBuf};
use std::process::Command;

use mpit_safe::Family;

const QUICKSTART: &str = include_str!("../examples/quickstart.rs");

/// The ```rust blocks of a Markdown file.
fn rust_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```rust") => current = Some(String::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap()),
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

fn assert_shows_quickstart(readme: &Path) {
    let text = std::fs::read_to_string(readme)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", readme.display()));
    assert!(
        rust_blocks(&text).iter().any(|b| b == QUICKSTART),
        "{} does not show examples/quickstart.rs unchanged: copy the file into its ```rust block",
        readme.display()
    );
}

#[test]
fn readmes_show_the_quickstart_unchanged() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_shows_quickstart(&manifest.join("README.md"));
    // In the repository (not in a packaged crate) the workspace README shows it too.
    let workspace = manifest.join("..");
    let is_workspace = std::fs::read_to_string(workspace.join("Cargo.toml"))
        .is_ok_and(|t| t.contains("[workspace]"));
    if is_workspace {
        assert_shows_quickstart(&workspace.join("README.md"));
    } else {
        eprintln!("not in the mpit-rs repository: only this crate's README checked");
    }
}

/// `target/<profile>/examples/quickstart`, which `cargo test` builds with the tests.
fn quickstart_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let bin = profile_dir.join("examples").join("quickstart");
    assert!(
        bin.is_file(),
        "{} is missing: run `cargo test -p mpit-safe` (which builds the examples) or \
         `cargo build -p mpit-safe --example quickstart` first",
        bin.display()
    );
    bin
}

#[test]
fn quickstart_runs_on_two_ranks() {
    let words =
        mpit_safe::launcher().expect("no MPI launcher: set MPIEXEC (scripts/with-mpi does)");
    let out = Command::new(&words[0])
        .args(&words[1..])
        .args(["-n", "2"])
        .arg(quickstart_binary())
        .output()
        .expect("run the launcher");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "quickstart failed: {}", out.status);
    let features = mpit_safe::features();
    for rank in 0..2 {
        let lines: Vec<&str> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("rank {rank}: ")))
            .collect();
        // Every MPI here has an integer control variable without binding (after MPI_Init).
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("cvar ") && l.contains(" = ")),
            "rank {rank} read no control variable: {lines:?}"
        );
        // Open MPI's ob1 binds its queue lengths to communicators: the bound read must happen.
        let bound = lines
            .iter()
            .any(|l| l.starts_with("pvar ") && l.contains(" on MPI_COMM_WORLD = ["));
        if features.implementation.family() == Family::OpenMpi {
            assert!(
                bound,
                "rank {rank}: no communicator-bound pvar read on Open MPI"
            );
        } else {
            assert!(
                bound || lines.contains(&"no pvar bound to a communicator in this MPI"),
                "rank {rank}: neither a bound pvar nor the sentence that there is none"
            );
        }
        // Events: a count where the header has the API, NotSupported where it has not.
        let events_line = if features.events {
            lines.iter().any(|l| l.ends_with(" event types"))
        } else {
            lines.contains(&"no event API in this MPI")
        };
        assert!(
            events_line,
            "rank {rank}: the events line does not match features().events = {}",
            features.events
        );
    }
}
