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
        let dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
            .join("event-provider");
        build_event_provider(dir);
    }
}

// Shared with benches/build.rs, which builds the same provider for the event benchmarks.
include!("event-provider/build_provider.rs");
