//! Re-emits `cfg(mpit_events)` from `mpit-sys` and, where it holds, builds the test event
//! provider of `examples/event-provider` (`MPIT_EVENT_PROVIDER`), which `mpit-conform`
//! preloads for its `*.provider` properties and `events.model`.
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    events_cfg_and_provider("event-provider");
}

include!("event-provider/build_provider.rs");
