//! Re-emits `cfg(mpit_events)` from `mpit-sys` and, where it holds, builds the test event
//! provider of `examples/event-provider` for the event benchmarks (`MPIT_EVENT_PROVIDER`).
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
            .join("../examples/event-provider");
        build_event_provider(dir);
    }
}

include!("../examples/event-provider/build_provider.rs");
