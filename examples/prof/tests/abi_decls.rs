//! The ABI build of `libmpit_prof.so` (`--cfg mpit_abi`) wraps the functions declared in
//! `abi/mpi_abi.rs`: bindgen's reading of the MPI-5 `mpi_abi.h`, with the options the build
//! script uses for `mpi.h` (the handle structs left to `mpit-sys`), checked in because an ABI
//! build has no MPI and no header. This test runs bindgen again on every installed ABI header
//! (MPICH 5.0.2's and Intel MPI 2021.18.1's under `.mpi/`, or the paths in `MPIT_ABI_HEADERS`)
//! and compares item by item:
//! - every function of a header is in the file with the same signature, except functions that
//!   do not return an `int` error code (the wrappers skip those anyway), which are listed;
//! - every function of the file is in some header;
//! - every type both declare is declared alike.
//!
//! `MPIT_BLESS=1` writes the file from the first header (MPICH's).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use quote::ToTokens;

/// The handle structs `mpit-sys` declares (`mpit_sys::abi`), so that a handle in a wrapper
/// is the very type the safe API takes.
const FROM_MPIT_SYS: &str = "MPI_ABI_(Comm|Datatype|Errhandler|File|Group|Info|Message|Op|\
                             Request|Session|Win)";

fn decls_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("abi/mpi_abi.rs")
}

/// The ABI headers to check: `MPIT_ABI_HEADERS` (`:`-separated), else the project's wheels.
fn headers() -> Vec<PathBuf> {
    if let Ok(list) = std::env::var("MPIT_ABI_HEADERS") {
        return list
            .split(':')
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let found: Vec<PathBuf> = ["mpich-wheel", "intel-wheel"]
        .iter()
        .map(|w| root.join(".mpi").join(w).join("include/mpi_abi.h"))
        .filter(|p| p.is_file())
        .collect();
    if std::env::var_os("CI").is_some() {
        assert_eq!(
            found.len(),
            2,
            "under CI both ABI headers (MPICH 5.0.2's and Intel MPI's, installed by scripts/test) \
             must be checked; found {found:?}"
        );
    }
    found
}

/// bindgen on `header`, as `build.rs` runs it on `mpi.h`: every `MPI_`/`PMPI_` function and
/// the types they use.
fn bindgen(header: &Path) -> String {
    let body = bindgen::builder()
        .header(header.display().to_string())
        // MPI_T is the tool's instrument, never wrapped (build.rs).
        .allowlist_function("P?MPI_([^T].*|T[^_].*)")
        .blocklist_type(FROM_MPIT_SYS)
        .layout_tests(false)
        .generate_comments(false)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen on {}: {e:?}", header.display()))
        .to_string();
    format!(
        "// bindgen's reading of the MPI-5 ABI header mpi_abi.h (MPICH 5.0.2's): the functions and\n\
         // types examples/prof's ABI build wraps. Generated; do not edit. \
         `MPIT_BLESS=1 scripts/with-mpi mpich5 cargo test -p mpit-prof --test abi_decls` \
         rewrites it.\n\n{body}"
    )
}

/// Items by kind and name: `fn NAME` for functions, `type NAME` (etc.) for the rest, each
/// as its token text.
fn items(text: &str) -> BTreeMap<String, String> {
    let file = syn::parse_file(text).expect("parse bindgen's output");
    let mut out = BTreeMap::new();
    for item in file.items {
        match item {
            syn::Item::ForeignMod(m) => {
                for fi in m.items {
                    if let syn::ForeignItem::Fn(f) = fi {
                        out.insert(format!("fn {}", f.sig.ident), call_shape(&f.sig));
                    }
                }
            }
            other => {
                let name = match &other {
                    syn::Item::Type(t) => format!("type {}", t.ident),
                    syn::Item::Struct(s) => format!("struct {}", s.ident),
                    syn::Item::Union(u) => format!("union {}", u.ident),
                    syn::Item::Const(c) => format!("const {}", c.ident),
                    syn::Item::Enum(e) => format!("enum {}", e.ident),
                    syn::Item::Impl(i) => format!("impl {}", i.self_ty.to_token_stream()),
                    o => format!("item {}", o.to_token_stream()),
                };
                out.insert(name, other.to_token_stream().to_string());
            }
        }
    }
    out
}

/// What a call depends on: the parameter and return types, with `*const` read as `*mut`
/// (the two headers differ in a few `const`s, e.g. `MPI_Request_get_status_all`'s requests:
/// the same call) and without parameter names.
fn call_shape(sig: &syn::Signature) -> String {
    let params: Vec<String> = sig
        .inputs
        .iter()
        .map(|a| match a {
            syn::FnArg::Typed(p) => p.ty.to_token_stream().to_string(),
            syn::FnArg::Receiver(r) => r.to_token_stream().to_string(),
        })
        .collect();
    let ret = match &sig.output {
        syn::ReturnType::Default => String::new(),
        syn::ReturnType::Type(_, t) => t.to_token_stream().to_string(),
    };
    format!("({}) -> {ret}", params.join(", ")).replace("* const ", "* mut ")
}

#[test]
fn checked_in_declarations_match_every_installed_abi_header() {
    let hs = headers();
    if hs.is_empty() {
        println!("no mpi_abi.h installed (.mpi/*-wheel or MPIT_ABI_HEADERS): nothing to compare");
        return;
    }
    if std::env::var_os("MPIT_BLESS").is_some() {
        std::fs::write(decls_path(), bindgen(&hs[0])).expect("write abi/mpi_abi.rs");
    }
    let text = std::fs::read_to_string(decls_path()).expect("read abi/mpi_abi.rs");
    let file = items(&text);
    let mut in_some_header: BTreeMap<String, bool> =
        file.keys().map(|k| (k.clone(), false)).collect();
    for h in &hs {
        let got = items(&bindgen(h));
        let mut unwrapped = Vec::new();
        for (name, tokens) in &got {
            match file.get(name) {
                Some(t) => {
                    assert_eq!(
                        t,
                        tokens,
                        "{name}: abi/mpi_abi.rs and {} differ (MPIT_BLESS=1 regenerates)",
                        h.display()
                    );
                    in_some_header.insert(name.clone(), true);
                }
                None if name.starts_with("fn ") => {
                    assert!(
                        !tokens.ends_with(") -> :: std :: os :: raw :: c_int"),
                        "{name} of {} returns an int error code but is not in abi/mpi_abi.rs \
                         (MPIT_BLESS=1 regenerates)",
                        h.display()
                    );
                    unwrapped.push(name.trim_start_matches("fn ").to_owned());
                }
                // A type only an unwrapped function uses.
                None => {}
            }
        }
        println!(
            "{}: {} items, all in abi/mpi_abi.rs but {} function(s) the wrappers skip anyway \
             (no int error code): {unwrapped:?}",
            h.display(),
            got.len(),
            unwrapped.len()
        );
    }
    let orphans: Vec<&String> = in_some_header
        .iter()
        .filter(|(k, seen)| k.starts_with("fn ") && !**seen)
        .map(|(k, _)| k)
        .collect();
    assert!(
        orphans.is_empty(),
        "functions of abi/mpi_abi.rs in no installed header: {orphans:?}"
    );
}
