//! Build script of `mpit-otf2`: finds the installed OTF2 (`OTF2_ROOT`, else `/usr`) and
//! generates the binding of its C API with bindgen; without OTF2 the crate builds without it
//! (cfg `mpit_otf2_missing`) and says at run time what to install.

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(mpit_otf2_missing)");
    println!("cargo::rerun-if-env-changed=OTF2_ROOT");
    let root = PathBuf::from(env::var_os("OTF2_ROOT").unwrap_or_else(|| "/usr".into()));
    let include = root.join("include");
    let header = include.join("otf2/otf2.h");
    println!("cargo::rerun-if-changed={}", header.display());
    if !header.exists() {
        println!(
            "cargo::warning=OTF2 not found ({} missing): traces disabled; install \
             libopen-trace-format2-dev or set OTF2_ROOT",
            header.display()
        );
        println!("cargo::rustc-cfg=mpit_otf2_missing");
        return;
    }
    // Under /usr the linker's own paths find the library; naming /usr/lib/x86_64-linux-gnu
    // here would put it ahead of an MPI's own -L, so a `-lmpi` of a wheel's MPICH linked
    // Debian's Open MPI instead (a doctest of mpit-prof under MPICH 5 failed so).
    for lib in [
        root.join("lib/x86_64-linux-gnu"),
        root.join("lib"),
        root.join("lib64"),
    ] {
        if lib.is_dir() && root != std::path::Path::new("/usr") {
            println!("cargo::rustc-link-search=native={}", lib.display());
        }
    }
    println!("cargo::rustc-link-lib=dylib=open-trace-format2");
    let bindings = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .clang_arg(format!("-I{}", include.display()))
        .allowlist_function("OTF2_.*")
        .allowlist_type("OTF2_.*")
        .allowlist_var("OTF2_.*")
        .layout_tests(false)
        .generate()
        .expect("bindgen could not read otf2/otf2.h");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    bindings
        .write_to_file(out.join("otf2.rs"))
        .expect("writing otf2.rs");
}
