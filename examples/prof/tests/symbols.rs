//! What `libmpit_prof.so` exports: a wrapper for the MPI functions of the installed `mpi.h`,
//! none for the functions the tool itself calls (they would re-enter it), for MPI_T or for
//! variadic functions.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSymbol};

/// The library the launcher uses: beside it or in `deps/`, the newer.
fn library() -> PathBuf {
    let exe = Path::new(env!("CARGO_BIN_EXE_mpit-prof"));
    let dir = exe.parent().unwrap();
    [
        dir.join("libmpit_prof.so"),
        dir.join("deps/libmpit_prof.so"),
    ]
    .into_iter()
    .filter(|p| p.exists())
    .max_by_key(|p| p.metadata().unwrap().modified().unwrap())
    .expect("libmpit_prof.so built")
}

fn exported() -> BTreeSet<String> {
    let lib = library();
    let data = std::fs::read(&lib).unwrap_or_else(|e| panic!("{}: {e}", lib.display()));
    let file = object::File::parse(&*data).unwrap();
    file.dynamic_symbols()
        .filter(|s| s.is_definition())
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .collect()
}

#[test]
fn wraps_the_mpi_functions() {
    let names = exported();
    let mpi: Vec<&String> = names.iter().filter(|n| n.starts_with("MPI_")).collect();
    // Every implementation here declares a few hundred (Open MPI 5.0: about 400).
    assert!(mpi.len() > 250, "{} MPI_ functions: {mpi:?}", mpi.len());
    for f in [
        "MPI_Init",
        "MPI_Init_thread",
        "MPI_Finalize",
        "MPI_Send",
        "MPI_Recv",
        "MPI_Isend",
        "MPI_Wait",
        "MPI_Allreduce",
        "MPI_Comm_dup",
        "MPI_Comm_free",
        "MPI_Win_create",
        "MPI_File_open",
        "mpit_prof_region_begin",
        "mpit_prof_region_end",
    ] {
        assert!(names.contains(f), "{f} not exported");
    }
    // Never wrapped: MPI_T (the tool's instrument), variadic and non-error-code functions.
    assert!(mpi.iter().all(|n| !n.starts_with("MPI_T_")));
    for f in ["MPI_Pcontrol", "MPI_Wtime", "MPI_Wtick", "MPI_Comm_f2c"] {
        assert!(!names.contains(f), "{f} must not be wrapped");
    }
    // Nothing but MPI_ functions and the region API leaks out of the Rust code (no PMPI_).
    assert!(names.iter().all(|n| !n.starts_with("PMPI_")));
}

/// The `MPI_` functions (not MPI_T) that `mpit-safe`, which runs inside the tool, calls: none
/// may be wrapped, or the engine would call into its own wrappers.
#[test]
fn the_engines_own_calls_are_not_wrapped() {
    // mpit-safe's sources (its fence is the directory src/ffi/) and the engine's.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![
        manifest.join("../../mpit-safe/src"),
        manifest.join("src/engine"),
    ];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                // The ABI build's stand-in for rsmpi: the program's own calls, not the engine's.
                && !path.ends_with("ffi/mpi_abi.rs")
            {
                files.push(path);
            }
        }
    }
    let mut called = BTreeSet::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, _) in text.match_indices("sys::MPI_") {
            let rest = &text[i + 5..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // A call (`MPI_X(`), not a type or constant; MPI_T is never wrapped anyway.
            let is_call = rest[name.len()..].trim_start().starts_with('(');
            if is_call && !name.starts_with("MPI_T_") {
                called.insert(name);
            }
        }
    }
    assert!(
        called.contains("MPI_Finalized") && called.contains("MPI_Get_library_version"),
        "the scan found {called:?}"
    );
    let names = exported();
    let wrapped: Vec<&String> = called.iter().filter(|n| names.contains(*n)).collect();
    assert!(
        wrapped.is_empty(),
        "mpit-safe calls wrapped functions: {wrapped:?}"
    );
}
