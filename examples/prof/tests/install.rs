//! `cargo install` of mpit-prof as a stranger does it: a release build with nothing but the
//! selected MPI's `MPICC`, installed under a fresh root (binaries only), then a 4-rank program
//! profiled from another directory through the installed launcher alone (its preload library
//! is the copy the release build carries, written to the cache on first use).
//!
//! Slow (a release build of the package, twice: the launcher and the library it embeds), so it
//! runs when `MPIT_INSTALL_TEST=1` (the full `scripts/test` sets it in its install stage).

#![cfg(not(mpit_abi))]

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn an_installed_launcher_profiles_a_program_from_another_directory() {
    if std::env::var_os("MPIT_INSTALL_TEST").is_none_or(|v| v != "1") {
        eprintln!("not run: set MPIT_INSTALL_TEST=1 (a release build of mpit-prof, ~5 min)");
        return;
    }
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("install");
    let root = tmp.join("root");
    let elsewhere = tmp.join("elsewhere");
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&elsewhere);
    std::fs::create_dir_all(&elsewhere).unwrap();

    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| mpit_safe::sys::BUILD_MPICC.into());
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(&cargo)
        .args([
            "install",
            "--locked",
            "--path",
            env!("CARGO_MANIFEST_DIR"),
            "--root",
        ])
        .arg(&root)
        .env("MPICC", &mpicc)
        // Its own target directory, kept between runs (the second install is quick).
        .env("CARGO_TARGET_DIR", tmp.join("target"))
        .env_remove("MPIT_PROF_EMBED")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo install");
    assert!(
        out.status.success(),
        "cargo install failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = root.join("bin");
    let launcher = bin.join("mpit-prof");
    assert!(launcher.is_file(), "{} missing", launcher.display());
    let installed: Vec<_> = std::fs::read_dir(&bin)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !installed.iter().any(|n| n.ends_with(".so")),
        "cargo install put a library beside the launcher: {installed:?}"
    );

    // The program, compiled in the other directory with the same MPI.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/known_pattern.c");
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let mut words = mpicc.split_whitespace();
    let exe = elsewhere.join("known_pattern");
    let cc = Command::new(words.next().unwrap())
        .args(words)
        .arg(format!("-I{}", include.display()))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );

    let mpiexec = mpit_safe::launcher().expect("no MPI launcher: set MPIEXEC");
    let cache = elsewhere.join("cache");
    let run = Command::new(&mpiexec[0])
        .args(&mpiexec[1..])
        .args(["-n", "4"])
        .arg(&launcher)
        .args(["--output", "out", "--", "./known_pattern"])
        .current_dir(&elsewhere)
        .env("XDG_CACHE_HOME", &cache)
        .env_remove("MPIT_PROF_LIB")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "the profiled run failed:\n{stderr}");
    let text = std::fs::read_to_string(elsewhere.join("out/profile.txt"))
        .unwrap_or_else(|e| panic!("no profile.txt ({e}); stderr:\n{stderr}"));
    assert!(text.contains("exchange"), "{text}");
    assert!(text.contains("MPI_Send"), "{text}");
    // The library the ranks preloaded: the embedded copy, written once under the cache.
    let libs: Vec<PathBuf> = std::fs::read_dir(cache.join("mpit-prof"))
        .expect("the cache directory of the embedded library")
        .map(|e| e.unwrap().path().join("libmpit_prof.so"))
        .collect();
    assert_eq!(libs.len(), 1, "{libs:?}");
    assert!(libs[0].is_file());
}
