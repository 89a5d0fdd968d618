//! What a user sees when the build cannot find a usable MPI, proven with nested `cargo build`s
//! of this crate: no MPI at all (PATH without `mpicc` or `pkg-config`), an `MPICC` that does
//! not exist, and a target directory whose `mpi-sys` was built for another `mpi.h` (its build
//! script does not rerun when `MPICC` changes). Each must stop with our message, not with
//! `mpi-sys`'s panic or a failing link.
//!
//! The nested builds take minutes on a cold target directory and do not depend on which MPI is
//! selected, so `scripts/test` runs them once, in its "build errors" stage, with
//! `MPIT_BUILD_ERRORS=1`; without it each test says so and checks nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn enabled(test: &str) -> bool {
    let on = std::env::var_os("MPIT_BUILD_ERRORS").is_some_and(|v| v == "1");
    if !on {
        eprintln!(
            "{test}: nested cargo builds run once in scripts/test's build-errors stage \
             (MPIT_BUILD_ERRORS=1); nothing checked here"
        );
    }
    on
}

/// The workspace root (two levels above this crate's manifest).
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// A target directory of the nested builds, kept between runs (`CARGO_TARGET_TMPDIR`).
fn target(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// `cargo build --offline -p mpit-sys` with the toolchain running this test.
fn cargo_build(target: &Path) -> Command {
    let cargo = PathBuf::from(env!("CARGO"));
    let mut c = Command::new(&cargo);
    c.current_dir(root())
        .args(["build", "--offline", "--locked", "-q", "-p", "mpit-sys"])
        .env("CARGO_TARGET_DIR", target)
        .env_remove("CARGO_INCREMENTAL");
    if let Some(rustc) = cargo
        .parent()
        .map(|d| d.join("rustc"))
        .filter(|r| r.exists())
    {
        c.env("RUSTC", rustc);
    }
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The guidance every refusal carries (`mpit-sys/probe/build.rs`).
fn assert_guidance(err: &str) {
    for needle in [
        "apt-get install libmpich-dev mpich libclang-dev",
        "dnf install mpich-devel",
        "spack install mpich",
        "pip install mpich",
        "MPICC=/path/to/mpicc",
        "MPI_PKG_CONFIG=/path/to/x.pc",
    ] {
        assert!(err.contains(needle), "no {needle:?} in:\n{err}");
    }
}

/// A failed build whose message names the stale `mpi-sys` and the way out.
fn assert_names_stale_mpi_sys(o: &Output, err: &str) {
    assert!(!o.status.success(), "a stale mpi-sys went unnoticed");
    assert!(
        err.contains("mpi-sys was built from another mpi.h than the one mpit-sys reads now")
            && err.contains("cargo clean -p mpi-sys"),
        "{err}"
    );
}

/// The first directory of PATH holding `tool`.
fn which(tool: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// No MPI on the machine: a PATH with only the C toolchain (no `mpicc`, no `pkg-config`) and
/// none of the variables that name an MPI. The probe's message must appear, and `mpi-sys`'s
/// panic ("Reason #1") must not come first.
#[test]
fn without_mpi_the_build_says_what_to_install() {
    if !enabled("without_mpi_the_build_says_what_to_install") {
        return;
    }
    let bin = target("no-mpi-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["cc", "gcc", "ld", "as", "ar"] {
        let Some(real) = which(tool) else { continue };
        let link = bin.join(tool);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(real, link).unwrap();
    }
    let mut c = cargo_build(&target("no-mpi"));
    for var in [
        "MPICC",
        "MPI_PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
        "CRAY_MPICH_DIR",
        "LD_LIBRARY_PATH",
    ] {
        c.env_remove(var);
    }
    let o = c.env("PATH", &bin).output().unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "built without MPI?\n{err}");
    let ours = err
        .find("mpit-sys: no MPI library was found")
        .unwrap_or_else(|| panic!("our message is missing:\n{err}"));
    if let Some(theirs) = err.find("Reason #1") {
        assert!(ours < theirs, "mpi-sys's panic came first:\n{err}");
    }
    assert!(err.contains("MPICC failed"), "what was tried:\n{err}");
    assert_guidance(&err);
    eprintln!("no MPI: refused by mpit-sys-probe with what to install");
}

/// `MPICC` names a wrapper that does not exist: refused, although `build-probe-mpi` alone
/// would fall back to pkg-config and build against whichever MPI that finds.
#[test]
fn a_missing_mpicc_is_refused() {
    if !enabled("a_missing_mpicc_is_refused") {
        return;
    }
    let o = cargo_build(&target("no-mpi"))
        .env("MPICC", "/nonexistent/mpicc")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "built with a missing MPICC?\n{err}");
    assert!(
        err.contains("mpit-sys: MPICC=/nonexistent/mpicc cannot be run"),
        "{err}"
    );
    assert_guidance(&err);
    eprintln!("MPICC=/nonexistent/mpicc: refused with what to install");
}

/// A target directory built for one `mpi.h`, then `MPICC` pointing to another: `mpi-sys` keeps
/// its old bindings and link lines, and `mpit-sys` must say so at compile time (its
/// fingerprint of the header's version macros differs from `mpi_sys`'s constants). The other
/// header is the selected one with `MPI_SUBVERSION` changed, by a wrapper that puts a directory
/// whose `mpi.h` includes the real one first on the include path.
#[test]
fn a_stale_mpi_sys_is_named() {
    if !enabled("a_stale_mpi_sys_is_named") {
        return;
    }
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
    let dir = target("stale");
    let fake = target("stale-include");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::write(
        fake.join("mpi.h"),
        "#include_next <mpi.h>\n#undef MPI_SUBVERSION\n#define MPI_SUBVERSION 99\n",
    )
    .unwrap();
    let wrapper = target("stale-mpicc");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n\
             if [ \"$1\" = -show ]; then\n  \
               \"{mpicc}\" -show | sed 's|^\\([^ ]*\\) |\\1 -I{inc} |'\n\
             else\n  exec \"{mpicc}\" -I{inc} \"$@\"\nfi\n",
            inc = fake.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();

    let first = cargo_build(&dir).env("MPICC", &mpicc).output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let second = cargo_build(&dir).env("MPICC", &wrapper).output().unwrap();
    let err = stderr(&second);
    assert_names_stale_mpi_sys(&second, &err);
    eprintln!("MPICC changed in a target directory: mpit-sys names the stale mpi-sys");
}

/// One target directory, Debian's MPICH then Debian's Open MPI (`MPICC=mpicc.mpich`, then
/// `mpicc.openmpi`): the stale `mpi-sys` must be named before anything compiles, not after the
/// unresolved imports that two implementations' different bindings give (`E0432`).
#[test]
fn switching_implementations_names_the_stale_mpi_sys_first() {
    if !enabled("switching_implementations_names_the_stale_mpi_sys_first") {
        return;
    }
    let (mpich, openmpi) = ("/usr/bin/mpicc.mpich", "/usr/bin/mpicc.openmpi");
    for cc in [mpich, openmpi] {
        assert!(
            Path::new(cc).exists(),
            "{cc} is missing: scripts/setup installs Debian's MPICH and Open MPI"
        );
    }
    let dir = target("switch");
    let first = cargo_build(&dir).env("MPICC", mpich).output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let second = cargo_build(&dir).env("MPICC", openmpi).output().unwrap();
    let err = stderr(&second);
    assert_names_stale_mpi_sys(&second, &err);
    assert!(
        !err.contains("error[E"),
        "compile errors came with the advice:\n{err}"
    );
    eprintln!("MPICH then Open MPI in one target directory: named before compiling");
}
