//! The preload library carried by the `mpit-prof` launcher (a module of the build script).
//!
//! `cargo install` installs binaries only, so an installed launcher has no `libmpit_prof.so`
//! beside it. In a release build (what `cargo install` makes) the build script therefore
//! builds this package's own library once more, in a nested `cargo build --lib --release`
//! into a target directory under `OUT_DIR`, and the launcher embeds it (`include_bytes!`);
//! at run time it writes it once to a cache directory keyed by its hash (`src/preload.rs`).
//!
//! `MPIT_PROF_EMBED=0` turns this off (the checkout's scripts do: their launcher finds the
//! library beside it in the target directory), `MPIT_PROF_EMBED=1` turns it on in any
//! profile. The nested build runs with `MPIT_PROF_EMBED=0`, so it does not nest again.

use std::env;
use std::fs;
use std::path::Path;
use std::process::Command;

/// The embedded file, under `OUT_DIR`; empty when nothing is embedded.
pub(crate) const FILE: &str = "embedded-libmpit_prof.so";

/// Builds and places the library to embed (or an empty file), and tells the crate its hash
/// (`MPIT_PROF_EMBEDDED_HASH`, empty when nothing is embedded).
pub(crate) fn preload(out: &Path) {
    println!("cargo:rerun-if-env-changed=MPIT_PROF_EMBED");
    let wanted = match env::var("MPIT_PROF_EMBED").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => env::var("PROFILE").as_deref() == Ok("release"),
    };
    let dest = out.join(FILE);
    if !wanted {
        fs::write(&dest, b"").expect("write the empty embedded library");
        println!("cargo:rustc-env=MPIT_PROF_EMBEDDED_HASH=");
        return;
    }
    let manifest_dir = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    // The nested build sees the sources of this package and, in a checkout, those of the
    // path dependencies: a change to any of them rebuilds the embedded library.
    for dir in ["src", "include", "abi", "build_embed.rs"] {
        println!("cargo:rerun-if-changed={dir}");
    }
    for dep in ["mpit-core", "mpit-sys", "mpit-safe"] {
        let src = Path::new(&manifest_dir).join("../..").join(dep).join("src");
        if src.is_dir() {
            println!("cargo:rerun-if-changed={}", src.display());
        }
    }
    let target_dir = out.join("preload-target");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--lib", "--release", "--manifest-path"])
        .arg(Path::new(&manifest_dir).join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .env("MPIT_PROF_EMBED", "0");
    let (target, host) = (
        env::var("TARGET").unwrap_or_default(),
        env::var("HOST").unwrap_or_default(),
    );
    if target != host {
        cmd.args(["--target", &target]);
    }
    // What cargo sets for this build script describes this build, not the nested one (which
    // gets its own); RUSTFLAGS (CARGO_ENCODED_RUSTFLAGS, e.g. `--cfg mpit_abi`) are kept.
    for (k, _) in env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("CARGO_CFG_")
            || k.starts_with("CARGO_PKG_")
            || k.starts_with("CARGO_MANIFEST_")
            || k.starts_with("DEP_")
            || matches!(
                &*k,
                "OUT_DIR"
                    | "TARGET"
                    | "HOST"
                    | "PROFILE"
                    | "OPT_LEVEL"
                    | "DEBUG"
                    | "NUM_JOBS"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_TARGET_DIR"
                    | "CARGO_BUILD_TARGET_DIR"
                    | "RUSTC_LINKER"
                    | "CARGO_CRATE_NAME"
            )
        {
            cmd.env_remove(&*k);
        }
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("mpit-prof: cannot run cargo for the embedded library: {e}"));
    assert!(
        status.success(),
        "mpit-prof: the nested build of libmpit_prof.so (to embed in the launcher) failed: {status}; \
         set MPIT_PROF_EMBED=0 to build without it (the launcher then needs libmpit_prof.so beside it)"
    );
    let mut built = target_dir.clone();
    if target != host {
        built.push(&target);
    }
    built.push("release/libmpit_prof.so");
    let bytes = fs::read(&built).unwrap_or_else(|e| panic!("read {}: {e}", built.display()));
    fs::write(&dest, &bytes).expect("write the embedded library");
    println!(
        "cargo:rustc-env=MPIT_PROF_EMBEDDED_HASH={:016x}",
        fnv1a(&bytes)
    );
}

/// FNV-1a, 64 bits: a cache key, not a checksum against tampering.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
