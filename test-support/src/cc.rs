//! The C compiler of the build, for the tests that compile C programs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// A fresh path beside `exe` for a compiler to write, for [`put_in_place`] to rename to
/// `exe` once it has succeeded. Tests of one binary run at once and several build the same
/// program: compiled in place, one test's `mpiexec` could exec the file while another's
/// linker rewrites it ("could not access or execute", seen on Open MPI 4.1); renamed, every
/// exec sees the old file or the new one, whole.
pub fn staging_path(exe: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = exe
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    exe.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Relaxed)
    ))
}

/// Renames the compiled `staged` ([`staging_path`]) to `exe`, atomically.
pub fn put_in_place(staged: &Path, exe: &Path) {
    std::fs::rename(staged, exe)
        .unwrap_or_else(|e| panic!("rename {} to {}: {e}", staged.display(), exe.display()));
}

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
/// `CARGO_TARGET_TMPDIR`, which only the test crate sees; replaced whole, [`staging_path`]); panics with the compiler's output
/// if it fails.
pub fn build_c(src: &Path, exe: &Path) -> PathBuf {
    let mut cc = mpicc();
    let staged = staging_path(exe);
    cc.args(["-O1", "-g", "-Wall", "-Wextra", "-o"])
        .arg(&staged)
        .arg(src);
    let out = crate::process::run(cc, Duration::from_secs(120));
    crate::process::show(&out);
    assert!(out.status.success(), "compiling {} failed", src.display());
    put_in_place(&staged, exe);
    exe.to_owned()
}
