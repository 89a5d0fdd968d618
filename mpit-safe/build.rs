//! Re-emits the cfgs `mpit-sys` found in the installed MPI (`DEP_MPIT_SHIM_*`): the event API
//! exists in Rust exactly where the header declares it.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(mpit_events)");
    println!("cargo::rustc-check-cfg=cfg(mpit_bind_session)");
    if std::env::var("DEP_MPIT_SHIM_EVENTS").as_deref() == Ok("true") {
        println!("cargo::rustc-cfg=mpit_events");
    }
    if std::env::var("DEP_MPIT_SHIM_BIND_SESSION").as_deref() == Ok("true") {
        println!("cargo::rustc-cfg=mpit_bind_session");
    }
}
