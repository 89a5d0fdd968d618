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
    events_cfg_and_provider("event-provider");
}

// Shared with benches/build.rs, which builds the same provider for the event benchmarks.
include!("event-provider/build_provider.rs");
