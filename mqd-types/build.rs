//! Compiles the type donor (`donor/ompi_types.c`) with `-g` against the Open MPI headers that
//! libopenmpi-dev installs, linked into a small shared object so that its DWARF is relocated.
//! The library embeds it when this succeeds (`cfg(mqd_donor)`) and reports its absence at run
//! time otherwise.
//!
//! The headers are found by `$MQD_OMPI_INCLUDE` (colon-separated directories) or else by
//! `mpicc.openmpi --showme:incdirs` (`$MQD_OMPI_MPICC` overrides the wrapper's name), else by
//! `pkg-config --cflags-only-I ompi-c`: the ambient MPI may be MPICH, whose headers cannot
//! supply Open MPI's types.
//!
//! A second donor, `donor/ob1_types.c`, supplies the types of the ob1 PML (its unexpected
//! fragments), whose headers Open MPI does not install: when the installed headers are Open MPI
//! 4.1.4, it is compiled against them and ob1's headers from Debian's source package of that
//! version (`openmpi_4.1.4.orig.tar.xz`, listed in `openmpi_4.1.4-3.dsc`), which
//! `scripts/setup` fetches, checks (sha256) and unpacks (`ompi/mca/pml/ob1/*.h` only) into the
//! workspace's git-ignored `.mpi/debian-src/` (`scripts/ob1-headers.py CACHE` does it for any
//! directory); `$MQD_OMPI_SOURCE_CACHE` points the build at it (the repository's
//! `.cargo/config.toml` sets it). This script does no network
//! I/O; nothing of Open MPI's source is part of this crate. Any failure is recorded
//! (`MQD_OB1_DONOR_ERROR`) and reported at run time (`cfg(mqd_ob1_donor)` when it worked).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The installed Open MPI version the ob1 source is for.
const OB1_VERSION: &str = "4.1.4";
/// The sha256 of `openmpi_4.1.4.orig.tar.xz`, which scripts/ob1-headers.py stamps the headers
/// with.
const SOURCE_SHA256: &str = "ddaee7dbdb01eb4fab1fda5b5e03e8bbff026711806c095c1f39bb410f99f263";
const OB1_DIR: &str = "openmpi-4.1.4/ompi/mca/pml/ob1/";

fn include_dirs() -> Option<Vec<PathBuf>> {
    if let Ok(dirs) = env::var("MQD_OMPI_INCLUDE") {
        return Some(env::split_paths(&dirs).collect());
    }
    let mpicc = env::var("MQD_OMPI_MPICC").unwrap_or_else(|_| "mpicc.openmpi".to_owned());
    let wrapper = Command::new(mpicc)
        .arg("--showme:incdirs")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .map(PathBuf::from)
                .collect::<Vec<_>>()
        })
        .filter(|d| !d.is_empty());
    // Without the wrapper on PATH (a build that must need no MPI compiler, such as the MPI-5
    // ABI build's): the same directories from Open MPI's pkg-config file.
    wrapper.or_else(|| {
        let out = Command::new("pkg-config")
            .args(["--cflags-only-I", "ompi-c"])
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let dirs: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("-I"))
            .map(PathBuf::from)
            .collect();
        (!dirs.is_empty()).then_some(dirs)
    })
}

/// `OMPI_{MAJOR,MINOR,RELEASE}_VERSION` of the `mpi.h` among `dirs`.
fn installed_version(dirs: &[PathBuf]) -> Option<String> {
    let text = dirs
        .iter()
        .find_map(|d| fs::read_to_string(d.join("mpi.h")).ok())?;
    let part = |name: &str| {
        text.lines().find_map(|l| {
            let rest = l
                .strip_prefix("#define ")?
                .trim_start()
                .strip_prefix(name)?;
            rest.trim().parse::<u32>().ok()
        })
    };
    Some(format!(
        "{}.{}.{}",
        part("OMPI_MAJOR_VERSION")?,
        part("OMPI_MINOR_VERSION")?,
        part("OMPI_RELEASE_VERSION")?
    ))
}

/// The ob1 headers of Open MPI 4.1.4 that scripts/ob1-headers.py unpacked under `cache`.
fn ob1_headers(cache: &Path) -> Result<PathBuf, String> {
    let headers = cache.join("openmpi-4.1.4-ob1-headers");
    match fs::read_to_string(headers.join(".sha256")) {
        Ok(s) if s.trim() == SOURCE_SHA256 => Ok(headers.join(OB1_DIR)),
        _ => Err(format!(
            "ob1's headers are not in {} (run scripts/setup, or scripts/ob1-headers.py DIR and \
             set MQD_OMPI_SOURCE_CACHE=DIR)",
            cache.display()
        )),
    }
}

/// Compiles `source` with `-g` against `includes` into `out`.
fn compile_donor(source: &str, out: &Path, includes: &[PathBuf]) -> Result<(), String> {
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .cargo_warnings(false)
        .get_compiler();
    let mut cmd = compiler.to_command();
    cmd.args(["-g", "-O0", "-fPIC", "-shared", "-nostdlib", "-o"])
        .arg(out)
        .arg(source)
        .arg("-Idonor/stub");
    for d in includes {
        cmd.arg(format!("-I{}", d.display()));
    }
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(String::from_utf8_lossy(&o.stderr)
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("")
            .to_owned()),
        Err(e) => Err(format!("no C compiler: {e}")),
    }
}

/// Builds the ob1 donor; `Err` says why there is none.
fn ob1_donor(dirs: &[PathBuf], out: &Path) -> Result<PathBuf, String> {
    match installed_version(dirs) {
        Some(v) if v == OB1_VERSION => {}
        Some(v) => {
            return Err(format!(
                "the installed Open MPI headers are version {v}; the ob1 type donor is built \
                 from Debian's Open MPI {OB1_VERSION} source"
            ));
        }
        None => return Err("no OMPI_*_VERSION in the installed mpi.h".to_owned()),
    }
    // Only a directory named by the environment (the repository's .cargo/config.toml names
    // its .mpi/debian-src): a build script reads nothing outside its package by itself.
    let cache = env::var_os("MQD_OMPI_SOURCE_CACHE")
        .map(PathBuf::from)
        .ok_or(
            "MQD_OMPI_SOURCE_CACHE is not set (the directory where scripts/ob1-headers.py \
                unpacked ob1's headers)",
        )?;
    println!(
        "cargo:rerun-if-changed={}",
        cache.join("openmpi-4.1.4-ob1-headers/.sha256").display()
    );
    let ob1 = ob1_headers(&cache)?;
    let donor = out.join("ob1_type_donor.so");
    let mut includes = dirs.to_vec();
    includes.push(ob1);
    compile_donor("donor/ob1_types.c", &donor, &includes)
        .map_err(|e| format!("the ob1 type donor did not compile: {e}"))?;
    Ok(donor)
}

fn main() {
    println!("cargo:rustc-check-cfg=cfg(mqd_donor)");
    println!("cargo:rustc-check-cfg=cfg(mqd_ob1_donor)");
    println!("cargo:rerun-if-env-changed=MQD_OMPI_SOURCE_CACHE");
    println!("cargo:rerun-if-changed=donor");
    println!("cargo:rerun-if-env-changed=MQD_OMPI_INCLUDE");
    println!("cargo:rerun-if-env-changed=MQD_OMPI_MPICC");
    let Some(dirs) = include_dirs() else {
        println!(
            "cargo:rustc-env=MQD_OB1_DONOR_ERROR=Open MPI's headers were not found at build time \
             (install libopenmpi-dev)"
        );
        println!(
            "cargo:warning=mqd-types: Open MPI's headers not found (install libopenmpi-dev or \
             set MQD_OMPI_INCLUDE): no type donor, the DLL will miss the types of a stripped libmpi"
        );
        return;
    };
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let donor = out.join("ompi_type_donor.so");
    match compile_donor("donor/ompi_types.c", &donor, &dirs) {
        Ok(()) => {
            println!("cargo:rustc-cfg=mqd_donor");
            println!("cargo:rustc-env=MQD_DONOR_OBJECT={}", donor.display());
        }
        Err(e) => println!("cargo:warning=mqd-types: the type donor did not compile: {e}"),
    }
    match ob1_donor(&dirs, &out) {
        Ok(path) => {
            println!("cargo:rustc-cfg=mqd_ob1_donor");
            println!("cargo:rustc-env=MQD_OB1_DONOR_OBJECT={}", path.display());
        }
        Err(e) => {
            let e = e.replace(['\n', '\r'], " ");
            println!("cargo:warning=mqd-types: no ob1 type donor: {e}");
            println!("cargo:rustc-env=MQD_OB1_DONOR_ERROR={e}");
        }
    }
}
