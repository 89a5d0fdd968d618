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

/// Copied into a user's crate the program needs nothing but `mpit-safe` and builds without a
/// warning: no `cfg` a user's crate does not declare (the ABI build's `mpit_abi` once made
/// rustc warn `unexpected cfg condition name`), rsmpi through `mpit_safe::mpi`.
#[test]
fn the_quickstart_needs_no_cfg_of_its_own() {
    assert!(
        !QUICKSTART.contains("cfg("),
        "examples/quickstart.rs has a cfg attribute: a user's crate would warn about it"
    );
    assert!(QUICKSTART.contains("use mpit_safe::mpi;"));
}

/// The same, for real: a new crate outside the workspace, with the front page's dependency
/// line (as a path) and `warnings = "deny"`, builds the quickstart. Slow (its own target
/// directory), so with the install tests: `MPIT_INSTALL_TEST=1`.
#[cfg(not(mpit_abi))]
#[test]
fn a_new_crate_builds_the_quickstart_without_warnings() {
    if std::env::var_os("MPIT_INSTALL_TEST").is_none_or(|v| v != "1") {
        eprintln!("not run: set MPIT_INSTALL_TEST=1 (builds a new crate, ~2 min)");
        return;
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("quickstart-user");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"quickstart-user\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
             [dependencies]\nmpit-safe = {{ path = {:?} }}\n\n[lints.rust]\nwarnings = \"deny\"\n\n\
             [workspace]\n",
            manifest.display().to_string()
        ),
    )
    .unwrap();
    std::fs::write(dir.join("src/main.rs"), QUICKSTART).unwrap();
    // The workspace's versions of everything, so nothing is fetched.
    let lock = manifest.join("../Cargo.lock");
    if lock.is_file() {
        std::fs::copy(&lock, dir.join("Cargo.lock")).unwrap();
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .arg("build")
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning:"), "{stderr}");
}
