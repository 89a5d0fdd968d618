//! Compiles the type donor (`donor/ompi_types.c`) with `-g` against the Open MPI headers that
//! libopenmpi-dev installs, linked into a small shared object so that its DWARF is relocated.
//! The library embeds it when this succeeds (`cfg(mqd_donor)`) and reports its absence at run
//! time otherwise.
//!
//! The headers are found by `$MQD_OMPI_INCLUDE` (colon-separated directories) or else by
//! `mpicc.openmpi --showme:incdirs` (`$MQD_OMPI_MPICC` overrides the wrapper's name): the
//! ambient MPI may be MPICH, whose headers cannot supply Open MPI's types.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn include_dirs() -> Option<Vec<PathBuf>> {
    if let Ok(dirs) = env::var("MQD_OMPI_INCLUDE") {
        return Some(env::split_paths(&dirs).collect());
    }
    let mpicc = env::var("MQD_OMPI_MPICC").unwrap_or_else(|_| "mpicc.openmpi".to_owned());
    let out = Command::new(mpicc)
        .arg("--showme:incdirs")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let dirs: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(PathBuf::from)
        .collect();
    (!dirs.is_empty()).then_some(dirs)
}

fn main() {
    println!("cargo:rustc-check-cfg=cfg(mqd_donor)");
    println!("cargo:rerun-if-changed=donor");
    println!("cargo:rerun-if-env-changed=MQD_OMPI_INCLUDE");
    println!("cargo:rerun-if-env-changed=MQD_OMPI_MPICC");
    let Some(dirs) = include_dirs() else {
        println!(
            "cargo:warning=mqd-types: Open MPI's headers not found (install libopenmpi-dev or \
             set MQD_OMPI_INCLUDE): no type donor, the DLL will miss the types of a stripped libmpi"
        );
        return;
    };
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let donor = out.join("ompi_type_donor.so");
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .cargo_warnings(false)
        .get_compiler();
    let mut cmd = compiler.to_command();
    cmd.args(["-g", "-O0", "-fPIC", "-shared", "-nostdlib", "-o"])
        .arg(&donor)
        .arg("donor/ompi_types.c")
        .arg("-Idonor/stub");
    for d in &dirs {
        cmd.arg(format!("-I{}", d.display()));
    }
    match cmd.output() {
        Ok(o) if o.status.success() => {
            println!("cargo:rustc-cfg=mqd_donor");
            println!("cargo:rustc-env=MQD_DONOR_OBJECT={}", donor.display());
        }
        Ok(o) => println!(
            "cargo:warning=mqd-types: the type donor did not compile: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ),
        Err(e) => println!("cargo:warning=mqd-types: no C compiler for the type donor: {e}"),
    }
}
