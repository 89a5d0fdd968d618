//! `cargo install` of this package's tools and of `mpit-conform`, as a user runs it: from an
//! environment holding only `HOME`, a `PATH` of `/usr/bin:/bin` and cargo's directory, and
//! `MPICC` (the wrapper this build used; the MPI's library directory and `I_MPI_ROOT` too
//! where the selected MPI needs them), into a root of its own. Each installed program then runs from
//! another directory: `mpit-list` lists what `Mpit::cvars()` lists here (before `MPI_Init`)
//! and lists variables after it, `mpit-conform` lists its properties and runs one in its
//! re-executed child.
//!
//! The release builds take minutes on a cold target directory (`<target>/tmp/install/target`,
//! kept between runs), so `scripts/test` runs them once, in its "install" stage, with
//! `MPIT_INSTALL_TEST=1`; without it each test says so and checks nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use mpit_safe::Mpit;
use serde_json::Value as Json;

fn enabled(test: &str) -> bool {
    let on = std::env::var_os("MPIT_INSTALL_TEST").is_some_and(|v| v == "1");
    if !on {
        eprintln!(
            "{test}: cargo install runs once in scripts/test's install stage \
             (MPIT_INSTALL_TEST=1); nothing checked here"
        );
    }
    on
}

/// The workspace root (the package's parent).
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// The directories of `LD_LIBRARY_PATH` that hold an MPI library (a PyPI wheel's `lib/`);
/// not those cargo adds for tests.
fn mpi_library_path() -> Option<std::ffi::OsString> {
    let path = std::env::var_os("LD_LIBRARY_PATH")?;
    let has_libmpi = |d: &PathBuf| {
        std::fs::read_dir(d).is_ok_and(|mut r| {
            r.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with("libmpi.so")))
        })
    };
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).filter(has_libmpi).collect();
    (!dirs.is_empty()).then(|| std::env::join_paths(dirs).unwrap())
}

/// A command with the environment cleared down to a user's minimum (and what the selected
/// MPI itself needs: its library directory, Intel MPI's prefix).
fn clean(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let cargo_bin = Path::new(env!("CARGO")).parent().unwrap();
    let mut c = Command::new(program);
    c.env_clear()
        .env(
            "HOME",
            std::env::var_os("HOME").unwrap_or_else(|| "/root".into()),
        )
        .env("PATH", format!("/usr/bin:/bin:{}", cargo_bin.display()));
    if let Some(p) = mpi_library_path() {
        c.env("LD_LIBRARY_PATH", p);
    }
    if let Some(p) = std::env::var_os("I_MPI_ROOT") {
        c.env("I_MPI_ROOT", p);
    }
    c
}

fn check(what: &str, o: &Output) -> String {
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{what}: {}\n{out}\n{err}", o.status);
    out.into_owned()
}

/// `cargo install --locked --path PKG --root <tmp>/install/PKG`; returns the root's `bin/`.
fn install(pkg: &str) -> PathBuf {
    // One install at a time: both share the target directory.
    static ONE: Mutex<()> = Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|p| p.into_inner());
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("install");
    let dest = base.join(pkg.replace('/', "-"));
    let _ = std::fs::remove_dir_all(&dest);
    let mut c = clean(env!("CARGO"));
    c.current_dir(root())
        .args(["install", "--locked", "--path", pkg, "--root"])
        .arg(&dest)
        .env("MPICC", mpit_safe::sys::consts::BUILD_MPICC)
        .env("CARGO_TARGET_DIR", base.join("target"));
    eprintln!("{c:?}");
    check(&format!("cargo install --path {pkg}"), &c.output().unwrap());
    dest.join("bin")
}

/// Runs an installed program from a directory of its own, with the clean environment.
fn run(bin: &Path, args: &[&str]) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("install/elsewhere");
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = clean(bin);
    c.args(args)
        .current_dir(&dir)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    check(&format!("{} {args:?}", bin.display()), &c.output().unwrap())
}

#[test]
fn installed_tools_run_from_another_directory() {
    if !enabled("installed_tools_run_from_another_directory") {
        return;
    }
    let bin = install("examples");
    for tool in [
        "mpit-list",
        "mpit-counts",
        "mpir-attach",
        "mpir-starter",
        "mqd-dump",
    ] {
        assert!(
            bin.join(tool).is_file(),
            "{tool} not installed in {}",
            bin.display()
        );
        assert!(run(&bin.join(tool), &["-V"]).starts_with(tool));
    }
    // Before MPI_Init: exactly what this process lists.
    let doc: Json = serde_json::from_str(&run(&bin.join("mpit-list"), &["--no-init", "--json"]))
        .expect("mpit-list --json");
    let cvars = Mpit::init().unwrap().cvars().unwrap();
    assert_eq!(doc["counts"]["cvars"], cvars.count, "the count reported");
    assert_eq!(doc["cvars"].as_array().unwrap().len(), cvars.entries.len());
    let holes = doc["holes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["kind"] == "cvar");
    assert_eq!(holes.count(), cvars.holes.len());
    // After MPI_Init (a singleton): a category tree of variables with their values.
    let text = run(&bin.join("mpit-list"), &[]);
    let listed: usize = text
        .lines()
        .nth(1)
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no summary line: {text}"));
    let cvar_lines = text
        .lines()
        .filter(|l| l.trim_start().starts_with("cvar "))
        .count();
    assert!(listed > 0 && cvar_lines > 0, "no variable listed: {text}");
}

#[test]
fn installed_conformance_runs_from_another_directory() {
    if !enabled("installed_conformance_runs_from_another_directory") {
        return;
    }
    let bin = install("examples/conformance").join("mpit-conform");
    let listed = run(&bin, &["--list"]);
    assert_eq!(listed.lines().count(), mpit_conformance::properties().len());
    // One property, in a child process: the installed program re-executed.
    let doc: Json = serde_json::from_str(&run(&bin, &["--only", "category.dag", "--json"]))
        .expect("mpit-conform --json");
    let p = &doc["properties"][0];
    assert_eq!(p["id"], "category.dag");
    assert_eq!(p["status"], "pass", "{doc:#}");
}
