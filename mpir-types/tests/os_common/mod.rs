//! Helpers of the Linux tool-side tests: compiling the C targets of `tests/targets/` at test
//! time into `CARGO_TARGET_TMPDIR`, and skipping cleanly where a compiler or MPI is missing.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// Where compiled targets and job output go.
pub(crate) fn workdir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpir-os");
    std::fs::create_dir_all(&dir).expect("create the test directory");
    dir
}

/// The C source of a target.
pub(crate) fn source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/targets")
        .join(name)
}

/// A command with the MPI-selection variables of `scripts/with-mpi` that would make Debian's
/// Open MPI load another implementation's libraries removed.
pub(crate) fn clean(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_remove("LD_LIBRARY_PATH");
    cmd
}

/// Whether `program --version` runs and its output contains `needle`.
pub(crate) fn version_contains(program: &str, needle: &str) -> bool {
    clean(program).arg("--version").output().is_ok_and(|o| {
        o.status.success()
            && (String::from_utf8_lossy(&o.stdout).contains(needle)
                || String::from_utf8_lossy(&o.stderr).contains(needle))
    })
}

/// Compiles `tests/targets/<src>` with `compiler` and `args` into `<workdir>/<out>`, once per
/// test process; `None` (after printing why) if that fails.
pub(crate) fn compile(compiler: &str, src: &str, out: &str, args: &[&str]) -> Option<PathBuf> {
    static BUILT: OnceLock<Mutex<HashMap<String, Option<PathBuf>>>> = OnceLock::new();
    let mut built = BUILT.get_or_init(Default::default).lock().unwrap();
    built
        .entry(out.to_owned())
        .or_insert_with(|| {
            let exe = workdir().join(out);
            let result = clean(compiler)
                .args(args)
                .arg("-o")
                .arg(&exe)
                .arg(source(src))
                .output();
            match result {
                Ok(o) if o.status.success() => Some(exe),
                Ok(o) => {
                    eprintln!(
                        "{compiler} {src} failed: {}",
                        String::from_utf8_lossy(&o.stderr)
                    );
                    None
                }
                Err(e) => {
                    eprintln!("cannot run {compiler}: {e}");
                    None
                }
            }
        })
        .clone()
}

/// Prints a skip line for test `name`.
pub(crate) fn skip(name: &str, why: &str) {
    println!("skip: {name}: {why}");
}
