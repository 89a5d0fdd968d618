//! Debian's Open MPI 4.1 for the tests that run it whatever MPI `scripts/with-mpi` selected:
//! whether it is installed, a C program built with its `mpicc.openmpi`, and commands with its
//! settings.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `mpiexec.openmpi` is Open MPI 4.1 (Debian's).
pub fn installed() -> bool {
    Command::new("mpiexec.openmpi")
        .arg("--version")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("(OpenRTE) 4.1"))
}

/// The line a test prints when it skips for want of Open MPI 4.1.
pub fn skip(test: &str) {
    println!(
        "skip: {test}: Debian's Open MPI 4.1 (mpiexec.openmpi, mpicc.openmpi) is not installed"
    );
}

/// Compiles the C program `src` with `mpicc.openmpi -O1` into `dir/name` (`dir` under the
/// test's `CARGO_TARGET_TMPDIR`, created; replaced whole, [`crate::cc::staging_path`]); `None` without Open MPI 4.1; panics with the
/// compiler's output if it fails.
pub fn build(src: &Path, dir: &Path, name: &str) -> Option<PathBuf> {
    if !installed() {
        return None;
    }
    std::fs::create_dir_all(dir).expect("create the test's directory");
    let exe = dir.join(name);
    let staged = crate::cc::staging_path(&exe);
    let out = Command::new("mpicc.openmpi")
        .env_remove("LD_LIBRARY_PATH")
        .args(["-O1", "-o"])
        .arg(&staged)
        .arg(src)
        .output()
        .expect("run mpicc.openmpi");
    assert!(
        out.status.success(),
        "mpicc.openmpi {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    crate::cc::put_in_place(&staged, &exe);
    Some(exe.canonicalize().expect("the built program"))
}

/// A command with Open MPI's settings for root and MPIR, and without a `LD_LIBRARY_PATH` that
/// `scripts/with-mpi` may have pointed at another MPI.
pub fn command(program: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_remove("LD_LIBRARY_PATH")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MPIR_DO_NOT_WARN", "1");
    cmd
}
