//! Build script of `mpit-prof`: the PMPI wrappers of `libmpit_prof.so`, generated from the
//! installed `mpi.h`.
//!
//! 1. Finds MPI as `mpi-sys` and `mpit-sys` do (`build-probe-mpi`: `MPICC`, then `mpicc`, then
//!    `pkg-config`), so the wrappers bind the header and library those crates bind.
//! 2. Runs bindgen on `mpi.h` (the same version, features and opaque-type aliases as
//!    `mpi-sys`, so every parameter type names a type of `mpi_sys`) and parses its output with
//!    `syn` to enumerate the declared functions and their parameter types.
//! 3. Wraps every `MPI_X` that has a `PMPI_X` twin in the header and in the library's dynamic
//!    symbol table, except the functions listed in [`EXCLUDED`] and the classes of functions
//!    described at [`reason_to_skip`]. Each wrapper calls `PMPI_X` with its arguments unchanged
//!    and reports the call to the engine; constructors and destructors of the objects that
//!    performance variables can be bound to also report the object (Caliper's MPIT service, "PVAR handle allocation").
//! 4. Records facts of the library for the runtime checks: its `MPI_Get_library_version`
//!    string (from a C program run at build time), its SONAME and path.
//!
//! Output: `$OUT_DIR/wrappers.rs` (the wrappers, `FUNCTIONS`, `SKIPPED`) and environment
//! variables `MPIT_PROF_BUILD_*` for the crate's code.

use std::collections::{BTreeMap, BTreeSet};
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use quote::ToTokens;

#[path = "src/elf.rs"]
mod elf;
#[path = "build_embed.rs"]
mod embed;

/// Functions wrapped by hand in `src/lifecycle.rs` (they create and finish the engine).
const HANDWRITTEN: [&str; 3] = ["MPI_Init", "MPI_Init_thread", "MPI_Finalize"];

/// Functions never wrapped, and why. The tool's own code (the engine in `mpit-safe`, the glue
/// here) calls them while it runs; a wrapper would be re-entered from inside the tool. The
/// glue calls `PMPI_` names directly; these are the `MPI_` calls of `mpit-safe`
/// (`tests/exclusions.rs` checks the list against its sources).
const EXCLUDED: [(&str, &str); 12] = [
    (
        "MPI_Initialized",
        "called by the engine (mpit-safe: is MPI initialised)",
    ),
    (
        "MPI_Finalized",
        "called by the engine (mpit-safe: is MPI finalised)",
    ),
    (
        "MPI_Get_library_version",
        "called by the engine (mpit-safe: which implementation, for its quirk guards)",
    ),
    ("MPI_Get_version", "called by the engine (mpit-safe)"),
    (
        "MPI_Query_thread",
        "called by the engine (mpit-safe: the thread level, for the MPICH event-registration \
         guard)",
    ),
    (
        "MPI_Info_create",
        "called by the engine (info objects for MPI_T event registration)",
    ),
    (
        "MPI_Info_free",
        "called by the engine (info objects for MPI_T event registration)",
    ),
    (
        "MPI_Info_set",
        "called by the engine (info objects for MPI_T event registration)",
    ),
    (
        "MPI_Info_get",
        "called by the engine (info objects for MPI_T event registration)",
    ),
    (
        "MPI_Info_get_valuelen",
        "called by the engine (info objects for MPI_T event registration)",
    ),
    (
        "MPI_Info_get_nkeys",
        "called by the engine (info objects for MPI_T event registration)",
    ),
    (
        "MPI_Info_get_nthkey",
        "called by the engine (info objects for MPI_T event registration)",
    ),
];

/// The kinds of MPI objects whose constructors and destructors are hooked: the handle type,
/// the `RawObject` constructor and the label prefix (`comm#3`).
///
/// Not hooked: `MPI_Info` (its destructor `MPI_Info_free` is in [`EXCLUDED`], so handles
/// could outlive the object; no implementation here binds variables to info objects),
/// datatypes (not in Caliper's list, §0.2; none binds variables to them), requests and messages
/// (one per operation: a handle allocation per message would be the hot path; Caliper's MPIT service, "PVAR handle allocation" leaves
/// them open too).
const KINDS: [(&str, &str); 6] = [
    ("MPI_Comm", "comm"),
    ("MPI_Win", "win"),
    ("MPI_File", "file"),
    ("MPI_Group", "group"),
    ("MPI_Op", "op"),
    ("MPI_Errhandler", "errhandler"),
];

/// Functions that have an out parameter of a hooked kind but do not create an object.
const NOT_CONSTRUCTORS: [(&str, &str); 3] = [
    (
        "MPI_Comm_idup",
        "non-blocking: the new communicator is valid only once the request completes",
    ),
    (
        "MPI_Comm_idup_with_info",
        "non-blocking: the new communicator is valid only once the request completes",
    ),
    (
        "MPI_Comm_get_parent",
        "returns the same existing intercommunicator at every call",
    ),
];

/// Destructors by name (besides every `MPI_*_free` whose first parameter is a hooked handle).
const DESTRUCTORS: [&str; 2] = ["MPI_Comm_disconnect", "MPI_File_close"];

/// One declared function.
#[derive(Clone)]
struct Func {
    /// Parameter names (as bindgen gave them) and types (tokens).
    params: Vec<(String, syn::Type)>,
    /// The return type's tokens ("" for none).
    ret: String,
    variadic: bool,
}

const NO_MPI: &str = "mpit-prof: no MPI library was found (see mpit-sys's build error for how \
to install one or point the build at it with MPICC=/path/to/mpicc)";

fn main() {
    for var in ["MPICC", "MPI_PKG_CONFIG", "PKG_CONFIG_PATH", "CC", "CFLAGS"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/elf.rs");
    println!("cargo::rustc-check-cfg=cfg(mpit_prof_fortran)");
    // The tests' `cfg(mpit_events)`: the installed header has the MPI-4 event API, as mpit-sys
    // found it (`tests/profile_events.rs`).
    println!("cargo::rustc-check-cfg=cfg(mpit_events)");
    println!("cargo::rerun-if-env-changed=DEP_MPIT_SHIM_EVENTS");
    if env::var("DEP_MPIT_SHIM_EVENTS").as_deref() == Ok("true") {
        println!("cargo::rustc-cfg=mpit_events");
    }
    // The launcher exports nothing of the libraries linked into it: it links this package's
    // rlib, whose preload wrappers define `MPI_*` as libmpi does, and a linker then exports
    // them from the executable, keeps them and needs libmpi to start the launcher; hidden,
    // they go with the rest of the unused code.
    println!("cargo:rustc-link-arg-bins=-Wl,--exclude-libs,ALL");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    embed::preload(&out);
    if env::var_os("CARGO_CFG_MPIT_ABI").is_some() {
        abi_main(&out);
        return;
    }
    let lib = build_probe_mpi::probe().unwrap_or_else(|e| panic!("{NO_MPI}: {e:?}"));

    // --- the header's functions ---------------------------------------------------------------
    let mut builder = bindgen::builder()
        .header_contents("mpit_prof_mpi.h", "#include <mpi.h>\n")
        .new_type_alias("MPI_(Comm|Datatype|Errhandler|Group|Info|Message|Op|Request|Session|Win)")
        .allowlist_function("P?MPI_.*")
        .layout_tests(false);
    for dir in &lib.include_paths {
        builder = builder.clang_arg(format!("-I{}", dir.display()));
    }
    let bindings = builder
        .generate()
        .expect("bindgen on mpi.h (needs libclang: apt-get install libclang-dev)")
        .to_string();
    let file = syn::parse_file(&bindings).expect("parse bindgen's output");
    let funcs = functions_of(&file);

    // --- the library's exports, SONAME and version ---------------------------------------------
    let libfiles = library_files(&lib);

    let mut exported: BTreeSet<String> = BTreeSet::new();
    for path in &libfiles {
        match elf::functions(path) {
            Ok((names, _)) => exported.extend(names),
            Err(e) => println!(
                "cargo:warning=mpit-prof: cannot read {}: {e}",
                path.display()
            ),
        }
    }
    let libmpi = libfiles
        .iter()
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(elf::is_libmpi)
        })
        .cloned();
    let soname = libmpi
        .as_deref()
        .and_then(|p| elf::dynamic(p).ok().flatten())
        .and_then(|d| d.soname)
        .unwrap_or_default();
    let libpath = libmpi
        .as_deref()
        .and_then(|p| fs::canonicalize(p).ok())
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=MPIT_PROF_BUILD_SONAME={soname}");
    println!("cargo:rustc-env=MPIT_PROF_BUILD_LIBMPI={libpath}");
    let version = library_version(&lib, &out);
    fs::write(out.join("library_version.txt"), &version).expect("write library_version.txt");

    let (mut code, wrapped) = wrappers(&funcs, &exported, "mpi.h");

    // --- Fortran ---------------------------------------------------------------------------
    let fortran = fortran_bindings(&lib, &soname);
    let mut fortran_wrapped = Vec::new();
    if let Some(f) = &fortran {
        println!("cargo:rustc-cfg=mpit_prof_fortran");
        for (index, name) in wrapped.iter().enumerate() {
            if let Some(w) = fortran_wrapper(index, name, &funcs[name], f) {
                code.push_str(&w);
                fortran_wrapped.push(name.to_lowercase() + "_");
            }
        }
    }
    finish_wrappers(&mut code, &fortran_wrapped, &out);
}

/// The wrappers of every `MPI_` function of `funcs` that has a `PMPI_` twin (in `exported`,
/// when not empty), with `FUNCTIONS` and `SKIPPED`; the source and the wrapped names in
/// index order. `header` names the header in the reasons.
fn wrappers(
    funcs: &BTreeMap<String, Func>,
    exported: &BTreeSet<String>,
    header: &str,
) -> (String, Vec<String>) {
    let mut wrapped = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    for (name, f) in funcs {
        if !name.starts_with("MPI_") {
            continue;
        }
        match reason_to_skip(name, f, funcs, exported, header) {
            Some(reason) => skipped.push((name.clone(), reason)),
            None => wrapped.push(name.clone()),
        }
    }
    let mut code = format!(
        "// Generated by examples/prof/build.rs from {header}: one wrapper per MPI function \
         that has a PMPI_ twin.\n\n"
    );
    let _ = writeln!(
        code,
        "/// The wrapped MPI functions; a call is reported to the engine by its index here \
         (`crate::Config::functions`).\npub(crate) const FUNCTIONS: [&str; {}] = [{}];\n",
        wrapped.len(),
        wrapped
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        code,
        "/// The `MPI_` functions of the header that are not wrapped, and why.\n\
         #[allow(dead_code)]\npub(crate) const SKIPPED: [(&str, &str); {}] = [{}];\n",
        skipped.len(),
        skipped
            .iter()
            .map(|(n, r)| format!("({n:?}, {r:?})"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (index, name) in wrapped.iter().enumerate() {
        code.push_str(&wrapper(index, name, &funcs[name]));
    }
    (code, wrapped)
}

/// Appends `FORTRAN` and writes `$OUT_DIR/wrappers.rs`.
fn finish_wrappers(code: &mut String, fortran_wrapped: &[String], out: &Path) {
    let _ = writeln!(
        code,
        "/// The Fortran entry points wrapped (where the MPI's Fortran bindings call `PMPI_` \
         directly, bypassing the C wrappers), besides `mpi_init_`, `mpi_init_thread_` and \
         `mpi_finalize_`.\n#[allow(dead_code)]\npub(crate) const FORTRAN: [&str; {}] = [{}];\n",
        fortran_wrapped.len(),
        fortran_wrapped
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    fs::write(out.join("wrappers.rs"), code).expect("write wrappers.rs");
}

/// The ABI build (`--cfg mpit_abi`): no MPI, no header and no library at build time. The
/// functions are those `mpit-sys` declares for the ABI (`functions!` and `declarations!` of
/// its `src/abi/generated.rs`, generated from `mpi_abi.h` and checked against every installed
/// ABI header by its `tests/abi_header.rs`; the path comes as `DEP_MPIT_SHIM_ABI_DECLARATIONS`),
/// each under its `MPI_` and `PMPI_` names; their types are `mpit_sys::abi`'s (`src/abi.rs`).
/// Each `MPI_` function with a `PMPI_` twin is wrapped, and the `PMPI_` functions are found
/// at run time in the program's library (`$OUT_DIR/pmpi.rs`). Writes `pmpi.rs`, `wrappers.rs`
/// and an empty `library_version.txt` (no library to compare with: `src/abi.rs` checks the
/// ABI version instead).
fn abi_main(out: &Path) {
    println!("cargo:rerun-if-env-changed=DEP_MPIT_SHIM_ABI_DECLARATIONS");
    let path = env::var("DEP_MPIT_SHIM_ABI_DECLARATIONS")
        .expect("mpit-sys's build script gives DEP_MPIT_SHIM_ABI_DECLARATIONS in the ABI build");
    println!("cargo:rerun-if-changed={path}");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("parse {path}: {e}"));
    // The two lists are macro invocations of `fn NAME(..) -> R;` items: read them as the
    // extern block bindgen writes for a header.
    let mut decls = String::new();
    for item in &file.items {
        if let syn::Item::Macro(m) = item
            && (m.mac.path.is_ident("functions") || m.mac.path.is_ident("declarations"))
        {
            decls.push_str(&m.mac.tokens.to_string());
        }
    }
    let decls = syn::parse_file(&format!("unsafe extern \"C\" {{ {decls} }}"))
        .unwrap_or_else(|e| panic!("parse the declarations of {path}: {e}"));
    let mut funcs = functions_of(&decls);
    assert!(
        funcs.contains_key("MPI_Send"),
        "{path} declares no MPI_Send: not mpit-sys's ABI declarations"
    );
    // Each function stands for its PMPI_ twin too (the header declares both with one
    // signature).
    let twins: Vec<(String, Func)> = funcs
        .iter()
        .map(|(name, f)| (format!("P{name}"), f.clone()))
        .collect();
    funcs.extend(twins);
    let mut pmpi = String::from(
        "// Generated by examples/prof/build.rs from mpit-sys's ABI declarations: every PMPI_ \
         function that returns an error code (MPI_T's aside: the tool's instrument), found in \
         the program's library at its first call.\n\n",
    );
    for (name, f) in &funcs {
        if name.starts_with("PMPI_")
            && !name.starts_with("PMPI_T_")
            && is_c_int(&f.ret)
            && !f.variadic
        {
            pmpi.push_str(&pmpi_stub(name, f));
        }
    }
    fs::write(out.join("pmpi.rs"), pmpi).expect("write pmpi.rs");
    println!("cargo:rustc-env=MPIT_PROF_BUILD_SONAME=libmpi_abi.so.1");
    println!("cargo:rustc-env=MPIT_PROF_BUILD_LIBMPI=");
    fs::write(out.join("library_version.txt"), "").expect("write library_version.txt");
    let (mut code, _) = wrappers(&funcs, &BTreeSet::new(), "mpi_abi.h");
    finish_wrappers(&mut code, &[], out);
}

/// The source of one `PMPI_` function of the ABI build: the symbol looked up once, then
/// called with the arguments unchanged (`MPI_ERR_OTHER` if the library lacks it).
fn pmpi_stub(name: &str, f: &Func) -> String {
    let types: Vec<String> = f
        .params
        .iter()
        .map(|(_, t)| t.to_token_stream().to_string())
        .collect();
    let params: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, t)| format!("a{i}: {t}"))
        .collect();
    let args: Vec<String> = (0..types.len()).map(|i| format!("a{i}")).collect();
    format!(
        "static {name}__: Symbol = Symbol::new(c\"{name}\");\n\
         /// `{name}` of the program's MPI library.\n\
         ///\n/// # Safety\n/// The contract of `{name}` in the MPI standard.\n\
         #[inline]\n\
         pub unsafe fn {name}({params}) -> ::std::os::raw::c_int {{\n    \
         let p = {name}__.get();\n    \
         if p.is_null() {{\n        return MISSING;\n    }}\n    \
         // SAFETY: the library's `{name}`, whose C signature (mpi_abi.h) this is.\n    \
         let f: unsafe extern \"C\" fn({types}) -> ::std::os::raw::c_int =\n        \
         unsafe {{ ::std::mem::transmute(p) }};\n    \
         // SAFETY: the caller upholds the function's contract.\n    \
         unsafe {{ f({args}) }}\n}}\n\n",
        params = params.join(", "),
        types = types.join(", "),
        args = args.join(", "),
    )
}

/// The functions an `extern` block of `file` declares (bindgen's output).
fn functions_of(file: &syn::File) -> BTreeMap<String, Func> {
    let mut funcs: BTreeMap<String, Func> = BTreeMap::new();
    for item in &file.items {
        let syn::Item::ForeignMod(m) = item else {
            continue;
        };
        for fi in &m.items {
            let syn::ForeignItem::Fn(f) = fi else {
                continue;
            };
            let params = f
                .sig
                .inputs
                .iter()
                .enumerate()
                .filter_map(|(i, a)| match a {
                    syn::FnArg::Typed(p) => {
                        let name = match &*p.pat {
                            syn::Pat::Ident(id) => id.ident.to_string(),
                            _ => format!("arg{i}"),
                        };
                        Some((name, (*p.ty).clone()))
                    }
                    syn::FnArg::Receiver(_) => None,
                })
                .collect();
            let ret = match &f.sig.output {
                syn::ReturnType::Default => String::new(),
                syn::ReturnType::Type(_, t) => t.to_token_stream().to_string(),
            };
            funcs.insert(
                f.sig.ident.to_string(),
                Func {
                    params,
                    ret,
                    variadic: f.sig.variadic.is_some(),
                },
            );
        }
    }
    funcs
}

/// Why `name` is not wrapped (`None`: it is).
///
/// - `MPI_T_*`: the engine's own MPI_T calls would recurse into the wrappers, and MPI_T calls
///   are the profiler's instrument, not the program's communication.
/// - variadic functions (`MPI_Pcontrol`): stable Rust cannot define a C-variadic function.
/// - functions that return something other than an `int` error code (`MPI_Wtime`,
///   `MPI_Wtick`, `MPI_Aint_add`/`_diff`, the `_c2f`/`_f2c` handle conversions): local
///   clocks and conversions, called in inner loops, nothing to attribute.
/// - no `PMPI_X` declared, or not exported by the library (declared for compatibility only:
///   Rust links shared objects with `-z now`, an unresolved `PMPI_X` would stop the program
///   from loading).
/// - [`HANDWRITTEN`] and [`EXCLUDED`].
fn reason_to_skip(
    name: &str,
    f: &Func,
    funcs: &BTreeMap<String, Func>,
    exported: &BTreeSet<String>,
    header: &str,
) -> Option<String> {
    let pname = format!("P{name}");
    if name.starts_with("MPI_T_") {
        return Some("MPI_T: the tool's own instrument (its calls would recurse)".into());
    }
    if HANDWRITTEN.contains(&name) {
        return Some("wrapped by hand (creates and finishes the engine)".into());
    }
    if let Some((_, why)) = EXCLUDED.iter().find(|(n, _)| *n == name) {
        return Some((*why).into());
    }
    if f.variadic {
        return Some("variadic: stable Rust cannot define a C-variadic function".into());
    }
    if !is_c_int(&f.ret) {
        return Some(format!(
            "returns {} (a local clock or conversion, not an error code)",
            if f.ret.is_empty() { "nothing" } else { &f.ret }
        ));
    }
    if !funcs.contains_key(&pname) {
        return Some(format!("no {pname} in {header}"));
    }
    if !exported.is_empty() && !exported.contains(&pname) {
        return Some(format!(
            "{pname} is declared but the library does not export it"
        ));
    }
    None
}

fn is_c_int(ty: &str) -> bool {
    let t: String = ty.chars().filter(|c| !c.is_whitespace()).collect();
    t == "::std::os::raw::c_int" || t == "c_int" || t == "::core::ffi::c_int"
}

/// The kind of `ty` if it is `*mut <hooked handle>`.
fn out_handle(ty: &syn::Type) -> Option<(&'static str, &'static str)> {
    let syn::Type::Ptr(p) = ty else {
        return None;
    };
    p.mutability?;
    let syn::Type::Path(tp) = &*p.elem else {
        return None;
    };
    let last = tp.path.segments.last()?.ident.to_string();
    KINDS.iter().copied().find(|(t, _)| *t == last)
}

/// The source of one wrapper.
/// The functions whose trace records need their arguments (`mpit-prof --trace`): the hook in
/// `src/capture.rs` (with the `CollectiveOp` it records, where it serves several), the
/// parameters it takes (by position in the standard's C binding, the
/// same in every `mpi.h`), and the status parameter it may replace with one of its own when
/// the caller passes `MPI_STATUS(ES)_IGNORE` (the `PMPI_` call is then a closure of it).
const TRACED: &[(&str, &str, &[usize], Option<usize>)] = &[
    ("MPI_Send", "send", &[1, 2, 3, 4, 5], None),
    ("MPI_Bsend", "send", &[1, 2, 3, 4, 5], None),
    ("MPI_Ssend", "send", &[1, 2, 3, 4, 5], None),
    ("MPI_Rsend", "send", &[1, 2, 3, 4, 5], None),
    ("MPI_Isend", "isend", &[1, 2, 3, 4, 5, 6], None),
    ("MPI_Ibsend", "isend", &[1, 2, 3, 4, 5, 6], None),
    ("MPI_Issend", "isend", &[1, 2, 3, 4, 5, 6], None),
    ("MPI_Irsend", "isend", &[1, 2, 3, 4, 5, 6], None),
    ("MPI_Recv", "recv", &[1, 2, 3, 4, 5, 6], Some(6)),
    ("MPI_Irecv", "irecv", &[5, 6], None),
    ("MPI_Mprobe", "mprobe", &[2, 3], None),
    ("MPI_Improbe", "improbe", &[2, 3, 4], None),
    ("MPI_Mrecv", "mrecv", &[3, 4], Some(4)),
    ("MPI_Imrecv", "imrecv", &[3, 4], None),
    (
        "MPI_Sendrecv",
        "sendrecv",
        &[1, 2, 3, 4, 7, 10, 11],
        Some(11),
    ),
    (
        "MPI_Sendrecv_replace",
        "sendrecv",
        &[1, 2, 3, 4, 2, 7, 8],
        Some(8),
    ),
    ("MPI_Wait", "wait", &[0, 1], Some(1)),
    ("MPI_Test", "test", &[0, 1, 2], Some(2)),
    ("MPI_Waitall", "waitall", &[0, 1, 2], Some(2)),
    ("MPI_Testall", "testall", &[0, 1, 2, 3], Some(3)),
    ("MPI_Waitany", "waitany", &[0, 1, 2, 3], Some(3)),
    ("MPI_Testany", "testany", &[0, 1, 2, 3, 4], Some(4)),
    ("MPI_Waitsome", "waitsome", &[0, 1, 2, 3, 4], Some(4)),
    ("MPI_Testsome", "waitsome", &[0, 1, 2, 3, 4], Some(4)),
    ("MPI_Request_free", "request_free", &[0], None),
    ("MPI_Barrier", "barrier", &[0], None),
    ("MPI_Bcast", "bcast", &[1, 2, 3, 4], None),
    ("MPI_Reduce", "reduce", &[2, 3, 5, 6], None),
    ("MPI_Allreduce", "all_to_all, Allreduce", &[2, 3, 5], None),
    ("MPI_Scan", "all_to_all, Scan", &[2, 3, 5], None),
    ("MPI_Exscan", "all_to_all, Exscan", &[2, 3, 5], None),
    (
        "MPI_Gather",
        "rooted, Gather",
        &[0, 1, 2, 3, 4, 5, 6, 7],
        None,
    ),
    (
        "MPI_Scatter",
        "rooted, Scatter",
        &[0, 1, 2, 3, 4, 5, 6, 7],
        None,
    ),
    // The side of one block, then the root's counts and their datatype.
    (
        "MPI_Gatherv",
        "rooted_v, Gatherv",
        &[0, 1, 2, 4, 6, 7, 8],
        None,
    ),
    (
        "MPI_Scatterv",
        "rooted_v, Scatterv",
        &[4, 5, 6, 1, 3, 7, 8],
        None,
    ),
    (
        "MPI_Allgather",
        "all_gather, Allgather",
        &[0, 1, 2, 4, 5, 6],
        None,
    ),
    (
        "MPI_Alltoall",
        "all_gather, Alltoall",
        &[0, 1, 2, 4, 5, 6],
        None,
    ),
    ("MPI_Allgatherv", "allgatherv", &[0, 1, 2, 4, 6, 7], None),
    ("MPI_Alltoallv", "alltoallv", &[0, 1, 3, 5, 7, 8], None),
    (
        "MPI_Reduce_scatter_block",
        "reduce_scatter_block",
        &[2, 3, 5],
        None,
    ),
];

/// The trace's branch at the top of a traced function's wrapper (empty for the others).
fn traced(index: usize, name: &str, f: &Func) -> String {
    let Some((_, hook, params, status)) = TRACED.iter().find(|(n, ..)| *n == name) else {
        return String::new();
    };
    if params.iter().any(|&i| i >= f.params.len()) {
        return String::new();
    }
    let (hook, op) = match hook.split_once(", ") {
        Some((h, op)) => (h, format!("crate::trace::CollectiveOp::{op}, ")),
        None => (*hook, String::new()),
    };
    let hook_args: Vec<String> = params.iter().map(|i| format!("a{i}")).collect();
    let call_args: Vec<String> = (0..f.params.len())
        .map(|i| {
            if Some(i) == *status {
                "s".into()
            } else {
                format!("a{i}")
            }
        })
        .collect();
    let closure = if status.is_some() {
        "move |s|"
    } else {
        "move ||"
    };
    format!(
        "    if crate::capture::tracing() {{
                 // SAFETY: the caller's arguments, unchanged (a status the caller ignores replaced by          one of the hook's), to the function {name} stands for, after the hook read what the          contract of {name} lets it read.
                 return unsafe {{ crate::capture::{hook}({index}, {op}{hook_args}, {closure} P{name}({call_args})) }};
             }}
",
        hook_args = hook_args.join(", "),
        call_args = call_args.join(", "),
    )
}

fn wrapper(index: usize, name: &str, f: &Func) -> String {
    let params: Vec<String> = f
        .params
        .iter()
        .enumerate()
        .map(|(i, (_, t))| format!("a{i}: {}", t.to_token_stream()))
        .collect();
    let args: Vec<String> = (0..f.params.len()).map(|i| format!("a{i}")).collect();
    let is_destructor = (name.ends_with("_free") || DESTRUCTORS.contains(&name))
        && f.params.first().and_then(|(_, t)| out_handle(t)).is_some();
    let mut before = String::new();
    let mut after = String::new();
    if is_destructor {
        let (_, kind) = out_handle(&f.params[0].1).expect("checked");
        let _ = write!(
            before,
            "    if !a0.is_null() && !crate::glue::disabled() {{\n        // SAFETY: a non-null handle \
             pointer the caller passes to {name}, which reads it (of this header's handle type: \
             the tool disables itself in a program of another MPI).\n        \
             crate::glue::freed_{kind}(unsafe {{ *a0 }});\n    }}\n"
        );
    } else if !NOT_CONSTRUCTORS.iter().any(|(n, _)| *n == name) {
        for (i, (pname, t)) in f.params.iter().enumerate() {
            let Some((_, kind)) = out_handle(t) else {
                continue;
            };
            if pname.starts_with("array_of") || name.ends_with("_get_errhandler") {
                // Input arrays (MPI_Comm_spawn_multiple's infos); references to existing
                // error handlers.
                continue;
            }
            let _ = write!(
                after,
                "    if rc == crate::glue::SUCCESS && !a{i}.is_null() && !crate::glue::disabled() {{\n        \
                 // SAFETY: {name} succeeded, so it wrote the new handle through this out \
                 parameter (of this header's handle type: the tool disables itself in a \
                 program of another MPI).\n        \
                 crate::glue::created_{kind}(unsafe {{ *a{i} }});\n    }}\n"
            );
        }
    }
    let mut s = format!(
        "/// Profiled `{name}`: `P{name}` with the same arguments, counted and timed (and \
         sampled in call mode).\n///\n/// # Safety\n/// The contract of `{name}` in the MPI \
         standard: the caller's arguments are passed on unchanged.\n#[unsafe(no_mangle)]\n\
         pub unsafe extern \"C\" fn {name}({params}) -> ::std::os::raw::c_int {{\n",
        params = params.join(", "),
    );
    s.push_str(&traced(index, name, f));
    if before.is_empty() && after.is_empty() {
        // The common cases inline (counted: a tail call; timed: the clock read around it), the
        // rest out of line.
        let _ = write!(
            s,
            "    match crate::glue::fast({index}) {{\n        \
             // SAFETY: the caller's arguments, unchanged, to the function {name} stands for.\n        \
             crate::glue::FastCall::Counted => unsafe {{ P{name}({args}) }},\n        \
             // SAFETY: the caller's arguments, unchanged, under the same contract.\n        \
             crate::glue::FastCall::Timed => unsafe {{ timed_{name}({args}) }},\n        \
             // SAFETY: the caller's arguments, unchanged, under the same contract.\n        \
             crate::glue::FastCall::Full => unsafe {{ general_{name}({args}) }},\n    }}\n}}\n\n\
             /// `{name}` chosen for timing: [`crate::glue::timed`], out of line.\n\
             ///\n/// # Safety\n/// The contract of `{name}` in the MPI standard.\n\
             #[inline(never)]\n\
             unsafe extern \"C\" fn timed_{name}({params}) -> ::std::os::raw::c_int {{\n    \
             // SAFETY: the caller's arguments, unchanged, to the function {name} stands for.\n    \
             crate::glue::timed({index}, move || unsafe {{ P{name}({args}) }})\n}}\n\n\
             /// `{name}` past its common cases: the full [`crate::glue::call`], out of line.\n\
             ///\n/// # Safety\n/// The contract of `{name}` in the MPI standard.\n\
             #[inline(never)]\n\
             unsafe extern \"C\" fn general_{name}({params}) -> ::std::os::raw::c_int {{\n    \
             // SAFETY: the caller's arguments, unchanged, to the function {name} stands for.\n    \
             crate::glue::call({index}, move || unsafe {{ P{name}({args}) }})\n}}\n\n",
            params = params.join(", "),
            args = args.join(", "),
        );
        return s;
    }
    s.push_str(&before);
    let _ = write!(
        s,
        "    // SAFETY: the caller's arguments, unchanged, to the function {name} stands for.\n    \
         {bind}crate::glue::call({index}, move || unsafe {{ P{name}({args}) }}){semi}\n",
        bind = if after.is_empty() { "" } else { "let rc = " },
        semi = if after.is_empty() { "" } else { ";" },
        args = args.join(", "),
    );
    if !after.is_empty() {
        s.push_str(&after);
        s.push_str("    rc\n");
    }
    s.push_str("}\n\n");
    s
}

/// The MPI's Fortran bindings (`mpif.h`/`use mpi`), when they bypass the C `MPI_` functions:
/// Open MPI's `libmpi_mpifh` calls `PMPI_Send` from `mpi_send_`, so a Fortran program never
/// reaches the C wrappers; MPICH's `libmpichfort` and Intel MPI's `libmpifort` call `MPI_Send`
/// (the C wrappers see Fortran calls as they are). Returns the functions the bypassing
/// library defines (`pmpi_send_`, ...).
///
/// Looked for in the probe's library directories only, and only one that needs our libmpi
/// (`soname`): Debian installs Open MPI's and MPICH's side by side.
fn fortran_bindings(lib: &build_probe_mpi::Library, soname: &str) -> Option<BTreeSet<String>> {
    let path = ["mpi_mpifh", "mpichfort", "mpifort"]
        .iter()
        .flat_map(|n| {
            lib.lib_paths
                .iter()
                .map(move |d| d.join(format!("lib{n}.so")))
        })
        .filter(|p| p.exists())
        .map(|p| linker_script_target(&p).unwrap_or(p))
        .find(|p| {
            elf::dynamic(p)
                .ok()
                .flatten()
                .is_some_and(|d| d.needed.iter().any(|n| n == soname))
        })?;
    let (defined, imported) = elf::functions(&path).ok()?;
    let bypasses =
        imported.iter().any(|s| s == "PMPI_Send") && !imported.iter().any(|s| s == "MPI_Send");
    bypasses.then(|| defined.into_iter().collect())
}

/// A Fortran wrapper of `name` (`mpi_send_`): `pmpi_send_` (found with `dlsym(RTLD_NEXT)`)
/// with the same arguments, counted as `name`. In the `mpif.h` binding every C parameter is
/// passed by reference and `ierr` comes last, so the Fortran entry takes one pointer per C
/// parameter and one more. Only where that holds without exception: no character arguments
/// (their hidden lengths follow), no callbacks, and only entries the bindings define.
fn fortran_wrapper(
    index: usize,
    name: &str,
    f: &Func,
    defined: &BTreeSet<String>,
) -> Option<String> {
    let lower = name.to_lowercase();
    let (entry, next) = (format!("{lower}_"), format!("p{lower}_"));
    if !defined.contains(&next) {
        return None;
    }
    let unsuitable = f.params.iter().any(|(_, t)| {
        let t = t.to_token_stream().to_string();
        t.contains("c_char") || t.contains("function") || t.contains("fn")
    });
    if unsuitable {
        return None;
    }
    let n = f.params.len() + 1;
    let params: Vec<String> = (0..n)
        .map(|i| format!("a{i}: *mut ::std::ffi::c_void"))
        .collect();
    let args: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    let types = vec!["*mut ::std::ffi::c_void"; n].join(", ");
    Some(format!(
        "/// Profiled `{entry}` (the Fortran binding of `{name}`): `{next}` with the same \
         arguments, counted as `{name}`.\n///\n/// # Safety\n/// The contract of the Fortran \
         binding: {n} references, the last one `ierr`.\n#[unsafe(no_mangle)]\n\
         pub unsafe extern \"C\" fn {entry}({params}) {{\n    \
         static NEXT: crate::fortran::Next = crate::fortran::Next::new(c\"{next}\");\n    \
         let next = NEXT.get();\n    \
         // SAFETY: `next` is `{next}` of the MPI's Fortran bindings (the build found it \
         there), which takes these {n} references.\n    \
         let next: unsafe extern \"C\" fn({types}) = unsafe {{ ::std::mem::transmute(next) }};\n    \
         // SAFETY: the caller's arguments, unchanged, to the function {entry} stands for.\n    \
         crate::glue::call({index}, move || unsafe {{ next({args}) }});\n}}\n\n",
        params = params.join(", "),
        args = args.join(", "),
    ))
}

/// The shared library files of the probe's libraries (`libmpi.so`, ...), from its library
/// directories and the system's.
fn library_files(lib: &build_probe_mpi::Library) -> Vec<PathBuf> {
    let dirs = library_dirs(lib);
    let mut files = Vec::new();
    for name in &lib.libs {
        let file = format!("lib{name}.so");
        if let Some(p) = dirs.iter().map(|d| d.join(&file)).find(|p| p.exists()) {
            files.push(linker_script_target(&p).unwrap_or(p));
        } else {
            println!("cargo:warning=mpit-prof: {file} not found in {dirs:?}");
        }
    }
    files
}

/// The probe's library directories, then the system's.
fn library_dirs(lib: &build_probe_mpi::Library) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = lib.lib_paths.clone();
    for d in [
        "/usr/lib/x86_64-linux-gnu",
        "/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/lib",
        "/usr/local/lib",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs
}

/// The library a linker script names (`INPUT(libmpi.so.40)`, as the Open MPI wheel ships
/// `libmpi.so`), resolved in the script's directory; `None` if `path` is not a script.
fn linker_script_target(path: &Path) -> Option<PathBuf> {
    let head = fs::read(path).ok()?;
    if head.starts_with(b"\x7fELF") || head.len() > 4096 {
        return None;
    }
    let text = String::from_utf8(head).ok()?;
    let start = text.find("INPUT(").or_else(|| text.find("GROUP("))? + 6;
    let end = start + text[start..].find(')')?;
    let name = text[start..end].split_whitespace().next()?;
    let target = Path::new(name);
    let target = if target.is_absolute() {
        target.to_path_buf()
    } else {
        path.parent()?.join(target)
    };
    target.exists().then_some(target)
}

/// `MPI_Get_library_version` of the library, from a C program compiled with the probe's
/// compiler and run here (MPI allows the call before `MPI_Init`). Empty if it cannot run.
fn library_version(lib: &build_probe_mpi::Library, out: &Path) -> String {
    let mut build = cc::Build::new();
    build.cargo_warnings(false);
    if let Some(mpicc) = &lib.mpicc {
        build.compiler(mpicc);
    }
    for inc in &lib.include_paths {
        build.include(inc);
    }
    let compiler = build.get_compiler();
    let src = out.join("library_version.c");
    let exe = out.join("library_version");
    fs::write(
        &src,
        "#include <mpi.h>\n#include <stdio.h>\nint main(void) {\n  char v[MPI_MAX_LIBRARY_VERSION_STRING];\n  \
         int n = 0;\n  if (MPI_Get_library_version(v, &n) != MPI_SUCCESS) return 1;\n  \
         fwrite(v, 1, (size_t)n, stdout);\n  return 0;\n}\n",
    )
    .expect("write library_version.c");
    let mut cmd = compiler.to_command();
    cmd.arg(&src).arg("-o").arg(&exe);
    for dir in &lib.lib_paths {
        cmd.arg(format!("-L{}", dir.display()));
    }
    for l in &lib.libs {
        cmd.arg(format!("-l{l}"));
    }
    match cmd.output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            println!(
                "cargo:warning=mpit-prof: compiling the library-version probe failed: {}",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            );
            return String::new();
        }
        Err(e) => {
            println!("cargo:warning=mpit-prof: cannot run the C compiler: {e}");
            return String::new();
        }
    }
    match std::process::Command::new(&exe).output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .trim_end_matches('\0')
            .trim()
            .to_owned(),
        _ => {
            println!(
                "cargo:warning=mpit-prof: the library-version probe did not run (LD_LIBRARY_PATH?)"
            );
            String::new()
        }
    }
}
