//! Re-emits `cfg(mpit_events)` from `mpit-sys` and, where it holds, builds the test event
//! provider of `examples/event-provider` for the event benchmarks (`MPIT_EVENT_PROVIDER`).
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    events_cfg_and_provider("../examples/event-provider");
}

include!("../examples/event-provider/build_provider.rs");
