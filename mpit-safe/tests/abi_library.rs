//! The ABI build (`--cfg mpit_abi`) with no library to load: [`Mpit::init`] answers
//! [`Error::LibraryUnavailable`] saying what was tried, every time, and the process keeps
//! running. The native build links its MPI: nothing is loaded there, and the test says so.

use std::process::Command;

use mpit_safe::{Error, Mpit};

const MISSING: &str = "/nonexistent/libmpi_abi.so.1";

#[test]
fn a_missing_abi_library_is_a_typed_error() {
    if !cfg!(mpit_abi) {
        println!("native build: the MPI library is linked, nothing is loaded at run time");
        return;
    }
    // The library is loaded once per process: the check runs in a child with MPIT_ABI_LIB set.
    if std::env::var_os("MPIT_ABI_LIBRARY_CHILD").is_some() {
        for _ in 0..2 {
            match Mpit::init() {
                Err(Error::LibraryUnavailable(why)) => assert!(why.contains(MISSING), "{why}"),
                other => panic!("expected LibraryUnavailable, got {other:?}"),
            }
        }
        return;
    }
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "--exact",
            "abi_library::a_missing_abi_library_is_a_typed_error",
            "--nocapture",
        ])
        .env("MPIT_ABI_LIBRARY_CHILD", "1")
        .env("MPIT_ABI_LIB", MISSING)
        .output()
        .expect("run the child");
    assert!(
        out.status.success(),
        "child: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
}
