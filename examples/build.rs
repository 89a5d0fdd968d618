//! Re-emits the cfgs `mpit-sys` found in the installed MPI (`DEP_MPIT_SHIM_*`), and, where the
//! header declares the MPI-4 event API (`cfg(mpit_events)`: MPICH), builds the test event
//! provider `event-provider/provider.c` into `$OUT_DIR/libmpit_event_provider.so` with the
//! same `mpicc` (`MPICC`, else `mpicc` on `PATH`) and exports its path as the compile-time
//! env `MPIT_EVENT_PROVIDER` (and the compiler as `MPIT_EVENT_PROVIDER_MPICC`). On Open MPI
//! (no event API) nothing is built and neither variable is set.
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(mpit_events)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=DEP_MPIT_SHIM_EVENTS");
    if env::var("DEP_MPIT_SHIM_EVENTS").as_deref() == Ok("true") {
        println!("cargo::rustc-cfg=mpit_events");
        build_event_provider();
    }
}

/// Compiles the provider; a failure is a build warning (the provider's test then fails and
/// says so), so the tools of this crate still build.
fn build_event_provider() {
    let dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .join("event-provider");
    for file in ["provider.c", "mpit_provider.h"] {
        println!("cargo::rerun-if-changed={}", dir.join(file).display());
    }
    println!("cargo::rerun-if-env-changed=MPICC");
    let mpicc = env::var("MPICC")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "mpicc".to_owned());
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let lib = out.join("libmpit_event_provider.so");
    // MPICC may carry arguments ("mpicc -cc=gcc"): the first word is the program.
    let mut words = mpicc.split_whitespace();
    let program = words.next().unwrap_or("mpicc");
    let status = Command::new(program)
        .args(words)
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o"])
        .arg(&lib)
        .arg(dir.join("provider.c"))
        .arg("-lpthread")
        .status();
    match status {
        Ok(s) if s.success() => {
            println!("cargo::rustc-env=MPIT_EVENT_PROVIDER={}", lib.display());
            println!("cargo::rustc-env=MPIT_EVENT_PROVIDER_MPICC={mpicc}");
        }
        Ok(s) => println!("cargo::warning=the event provider did not compile with {mpicc}: {s}"),
        Err(e) => println!("cargo::warning=the event provider: cannot run {mpicc}: {e}"),
    }
}
