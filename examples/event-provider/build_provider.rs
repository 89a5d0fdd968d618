// Builds the test event provider (included by examples/build.rs, examples/conformance/build.rs
// and benches/build.rs, so one recipe serves them all). `dir` is this directory, found from the
// including crate.

/// The build script of a crate that needs `cfg(mpit_events)` and the provider: re-emits the
/// cfg `mpit-sys` found in the installed MPI's header (`DEP_MPIT_SHIM_EVENTS`) and, where it
/// holds, builds the provider in `dir` (relative to the including crate's manifest).
fn events_cfg_and_provider(dir: &str) {
    println!("cargo::rustc-check-cfg=cfg(mpit_events)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=DEP_MPIT_SHIM_EVENTS");
    println!("cargo::rerun-if-env-changed=DEP_MPIT_SHIM_ABI");
    if env::var("DEP_MPIT_SHIM_EVENTS").as_deref() == Ok("true") {
        println!("cargo::rustc-cfg=mpit_events");
        // The ABI build has no mpicc at build time: no provider (its tests say so).
        if env::var("DEP_MPIT_SHIM_ABI").as_deref() == Ok("true") {
            return;
        }
        let manifest = env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
        build_event_provider(PathBuf::from(manifest).join(dir));
    }
}

/// Compiles the provider in `dir`; a failure is a build warning (the provider's test then fails and
/// says so), so the tools of this crate still build.
fn build_event_provider(dir: PathBuf) {
    for file in ["provider.c", "mpit_provider.h", "build_provider.rs"] {
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
