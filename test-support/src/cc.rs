//! The C compiler of the build, for the tests that compile C programs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The C compiler command of the build, as words: `native`, mpit-sys's `mpicc` (pass
/// `env!("MPIT_SYS_MPICC")`, which mpit-sys's build script sets for its own crates only; empty
/// when found through pkg-config: `cc` with the probe's flags); in the ABI mode
/// (`--cfg mpit_abi`) the ABI wrapper of the MPI the tests run on, `MPIT_ABI_MPICC` (set by
/// `scripts/with-mpi abi:IMPL`).
pub fn mpicc_words(native: &str) -> Vec<String> {
    #[cfg(mpit_abi)]
    let line = {
        let _ = native;
        std::env::var("MPIT_ABI_MPICC").expect(
            "MPIT_ABI_MPICC: the C compiler for the MPI ABI (scripts/with-mpi abi:mpich5 sets it)",
        )
    };
    #[cfg(not(mpit_abi))]
    let line = native.to_owned();
    line.split_whitespace().map(str::to_owned).collect()
}

/// The command in environment variable `var` (a line that may carry arguments, e.g.
/// `"mpicc -cc=gcc"`), else `default`.
fn command_from_env(var: &str, default: &str) -> Command {
    let line = std::env::var(var).unwrap_or_default();
    let mut words = line.split_whitespace();
    let mut cmd = Command::new(words.next().unwrap_or(default));
    cmd.args(words);
    cmd
}

/// `$MPICC` (set by `scripts/with-mpi`), else the `mpicc` the build used; in the ABI build,
/// the ABI's C compiler `$MPIT_ABI_MPICC` (`scripts/with-mpi abi:IMPL` sets it).
pub fn mpicc() -> Command {
    if cfg!(mpit_abi) {
        command_from_env("MPIT_ABI_MPICC", "mpicc_abi")
    } else {
        command_from_env("MPICC", mpit_safe::sys::consts::BUILD_MPICC)
    }
}

/// Compiles the C program `src` with the selected `mpicc -O1 -g` into `exe` (under the test's
/// `CARGO_TARGET_TMPDIR`, which only the test crate sees); panics with the compiler's output
/// if it fails.
pub fn build_c(src: &Path, exe: &Path) -> PathBuf {
    let mut cc = mpicc();
    cc.args(["-O1", "-g", "-Wall", "-Wextra", "-o"])
        .arg(exe)
        .arg(src);
    let out = crate::process::run(cc, Duration::from_secs(120));
    crate::process::show(&out);
    assert!(out.status.success(), "compiling {} failed", src.display());
    exe.to_owned()
}
