//! The constants mpit-sys generates from the installed `mpi.h` obey the standard's rules:
//! values the standard gives distinct meanings are distinct, error classes are MPI error
//! classes, and the thread levels are ordered. Runs against whichever MPI the build selected.

// The constants are generated from whichever mpi.h the build found: an assertion on them is a
// check of that header, not of a literal.
#![allow(clippy::assertions_on_constants)]

use std::ffi::c_int;
use std::process::Command;

use mpit_core::constants::{FAMILIES, Family, Gate, Repr};
use mpit_sys::*;

use mpit_test_support::cc;

/// Asserts that every value of a named group is distinct, naming the clash.
fn assert_distinct(group: &str, items: &[(&str, c_int)]) {
    let mut seen = std::collections::HashMap::new();
    for &(name, v) in items {
        if let Some(other) = seen.insert(v, name) {
            panic!("{group}: {name} and {other} share the value {v}");
        }
    }
}

/// The `int` family named `table` in `mpit_core::constants::FAMILIES`.
fn family(table: &str) -> &'static Family {
    FAMILIES
        .iter()
        .find(|f| f.table_name == table)
        .unwrap_or_else(|| panic!("no family {table}"))
}

/// The declared constants of a family: C name and installed value.
fn declared(table: &str, values: &[Option<c_int>]) -> Vec<(&'static str, c_int)> {
    let f = family(table);
    assert_eq!(
        f.rows.len(),
        values.len(),
        "{table}: table and values differ in length"
    );
    f.rows
        .iter()
        .zip(values)
        .filter_map(|(row, v)| v.map(|v| (row.c_name, v)))
        .collect()
}

/// The standard gives each constant of a family its own meaning (MPI-4.1 §16.3.1 verbosity,
/// §16.3.2 binding, §16.3.6 scope, §16.3.7 class, §16.3.8 callback safety and source order,
/// §16.3.10 error classes, §11.2.1 thread levels): within a family the values are distinct.
/// Every row without a `since` is declared (MPI-3.0 had it), and a family gated on the event
/// API is declared exactly when the header has that API.
#[test]
fn every_family_is_distinct_and_complete() {
    assert_eq!(
        tables::ALL.len(),
        FAMILIES.iter().filter(|f| f.repr == Repr::Int).count()
    );
    for (table, values) in tables::ALL {
        let f = family(table);
        assert_distinct(table, &declared(table, values));
        for (row, v) in f.rows.iter().zip(values) {
            let expected = match f.gate {
                Gate::Events if !HAS_EVENTS => false,
                _ if row.since.is_some() => continue,
                _ => true,
            };
            assert_eq!(
                v.is_some(),
                expected,
                "{table}: {} declared = {}",
                row.c_name,
                v.is_some()
            );
        }
    }
    assert_eq!(MPI_T_BIND_MPI_SESSION.is_some(), HAS_BIND_SESSION);
}

/// The generated tables hold what a C program compiled against the installed `mpi.h` sees,
/// row by row in the order of `mpit_core`'s tables, and the header declares no constant with a
/// family's prefix that the family's table lacks (a value added by a new standard or by the
/// implementation shows up here first).
#[test]
fn tables_match_the_installed_header() {
    let mut program = String::from("#include <mpi.h>\n#include <stdio.h>\nint main(void) {\n");
    for (table, values) in tables::ALL {
        for (name, _) in declared(table, values) {
            program.push_str(&format!("  printf(\"{name} %d\\n\", (int)({name}));\n"));
        }
    }
    program.push_str("  return 0;\n}\n");
    let c_values: std::collections::HashMap<String, c_int> = run_c("tables", &program)
        .lines()
        .map(|l| {
            let (n, v) = l.split_once(' ').unwrap();
            (n.to_owned(), v.parse().unwrap())
        })
        .collect();
    for (table, values) in tables::ALL {
        for (name, v) in declared(table, values) {
            assert_eq!(c_values.get(name), Some(&v), "{table}: {name}");
        }
    }

    // Every identifier of the preprocessed header (enum items) and every macro it defines.
    let names = header_identifiers();
    let mut missing = Vec::new();
    for f in FAMILIES {
        let Some(prefix) = f.prefix else { continue };
        if f.gate == Gate::Events && !HAS_EVENTS {
            continue;
        }
        for n in names.iter().filter(|n| n.starts_with(prefix)) {
            if !f.rows.iter().any(|r| r.c_name == n) && !implementation_private(n) {
                missing.push(format!("{} ({})", n, f.rust_name));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "mpi.h declares constants the tables of mpit_core::constants lack: {missing:?}"
    );
}

/// Names with a family's prefix that are not constants of the standard: MPICH's enum sentinels
/// (`MPI_T_VERBOSITY_INVALID`, `MPI_T_BIND_INVALID`, ...) and its QMPI function types
/// (`MPI_T_SOURCE_GET_INFO_T`, ...).
fn implementation_private(name: &str) -> bool {
    name.ends_with("_INVALID") || name.ends_with("_T")
}

/// Identifiers of `mpi.h` after preprocessing, and the names of the macros it defines.
fn header_identifiers() -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for flags in [&["-E"][..], &["-E", "-dM"][..]] {
        let text = compile_c("header", "#include <mpi.h>\n", flags);
        let mut word = String::new();
        for ch in text.chars().chain(std::iter::once(' ')) {
            if ch.is_ascii_alphanumeric() || ch == '_' {
                word.push(ch);
            } else if !word.is_empty() {
                if word.starts_with("MPI_") {
                    out.insert(std::mem::take(&mut word));
                }
                word.clear();
            }
        }
    }
    out
}

/// Runs the C compiler of the build (its `mpicc`, or `cc` with the probe's flags) on `program`
/// with `flags`, returning what it prints (for `-E`) .
fn compile_c(name: &str, program: &str, flags: &[&str]) -> String {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join(format!("mpit_{name}.c"));
    std::fs::write(&src, program).unwrap();
    let mpicc = cc::mpicc_words(env!("MPIT_SYS_MPICC"));
    let mut cmd = if mpicc.is_empty() {
        let mut c = Command::new("cc");
        c.args(env!("MPIT_SYS_CFLAGS").split_whitespace());
        c
    } else {
        let mut c = Command::new(&mpicc[0]);
        c.args(&mpicc[1..]);
        c
    };
    cmd.args(flags).arg(&src);
    if !flags.contains(&"-E") {
        cmd.arg("-o").arg(dir.join(format!("mpit_{name}")));
        if mpicc.is_empty() {
            cmd.args(env!("MPIT_SYS_LDFLAGS").split_whitespace());
        }
    }
    let out = cmd.output().expect("run the C compiler");
    assert!(
        out.status.success(),
        "compiling {name} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Compiles and runs `program`, returning its standard output.
fn run_c(name: &str, program: &str) -> String {
    compile_c(name, program, &[]);
    let exe = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mpit_{name}"));
    let run = Command::new(&exe).output().expect("run the C program");
    assert!(run.status.success(), "{name} failed: {}", run.status);
    String::from_utf8(run.stdout).unwrap()
}

/// MPI-4.1 §16.3.10: the MPI_T return codes are error classes, none of them `MPI_SUCCESS`,
/// all within `MPI_ERR_LASTCODE` (error classes are at most the last error code).
#[test]
fn error_classes_are_error_codes() {
    for (name, v) in declared("ERROR_CLASS", &tables::ERROR_CLASS) {
        assert!(
            v > MPI_SUCCESS && v <= MPI_ERR_LASTCODE,
            "{name} = {v} is not an error class in (MPI_SUCCESS, MPI_ERR_LASTCODE = {MPI_ERR_LASTCODE}]"
        );
    }
    // MPI-4.0 added MPI_T_ERR_NOT_SUPPORTED with the event API: a header with events has it.
    if HAS_EVENTS {
        assert!(MPI_T_ERR_NOT_SUPPORTED.is_some());
    }
}

/// MPI-4.1, MPI_INIT_THREAD: "These values are monotonic; i.e., MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED
/// < MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE." (MPI_T_init_thread takes the same levels.)
#[test]
fn thread_levels_are_monotonic() {
    assert!(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED);
    assert!(MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED);
    assert!(MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE);
}

/// MPI-4.1 §16.3.5: the seven datatypes MPI_T uses for variables are distinct, valid handles
/// (not `MPI_DATATYPE_NULL`), and every basic datatype the header declares is non-null.
#[test]
fn datatype_handles_are_distinct_and_valid() {
    let mpi_t_types = [
        MPI_INT,
        MPI_UNSIGNED,
        MPI_UNSIGNED_LONG,
        MPI_UNSIGNED_LONG_LONG,
        MPI_COUNT,
        MPI_CHAR,
        MPI_DOUBLE,
    ];
    for (i, a) in mpi_t_types.iter().enumerate() {
        assert!(
            *a != MPI_DATATYPE_NULL,
            "MPI_T datatype #{i} is MPI_DATATYPE_NULL"
        );
        for b in &mpi_t_types[i + 1..] {
            assert!(a != b, "two MPI_T datatypes share one handle");
        }
    }
    for (name, handle, declared) in datatypes() {
        assert_eq!(
            handle != MPI_DATATYPE_NULL,
            declared,
            "{name}: declared = {declared} but the handle disagrees"
        );
    }
    // Every basic type of the list is in MPI-3.0 or older: all are declared everywhere.
    let missing: Vec<_> = datatypes()
        .into_iter()
        .filter(|d| !d.2)
        .map(|d| d.0)
        .collect();
    assert!(
        missing.is_empty(),
        "basic datatypes missing from mpi.h: {missing:?}"
    );
}

/// MPI-4.1 §16.3.7: `MPI_T_PVAR_ALL_HANDLES` must differ from any handle an allocation
/// returns, in particular from `MPI_T_PVAR_HANDLE_NULL`.
#[test]
fn all_handles_is_not_the_null_handle() {
    assert!(mpi_t_pvar_all_handles() != MPI_T_PVAR_HANDLE_NULL);
}

/// The C sizes the generator measured match the Rust types mpi-sys generated.
#[test]
fn c_sizes_match_rust_types() {
    assert_eq!(SIZEOF_int, size_of::<c_int>());
    assert_eq!(SIZEOF_long, size_of::<std::ffi::c_long>());
    assert_eq!(SIZEOF_MPI_Count, size_of::<MPI_Count>());
    assert_eq!(SIZEOF_MPI_Aint, size_of::<MPI_Aint>());
    assert_eq!(SIZEOF_MPI_Datatype, size_of::<MPI_Datatype>());
    assert_eq!(SIZEOF_MPI_T_enum, size_of::<MPI_T_enum>());
    // MPI_Count holds MPI_Aint and MPI_Offset values.
    assert!(SIZEOF_MPI_Count >= SIZEOF_MPI_Aint && SIZEOF_MPI_Count >= SIZEOF_MPI_Offset);
}

/// `MPI_VERSION` matches the event API: MPI-4 headers declare it, MPI-3 headers do not.
#[test]
fn version_matches_event_api() {
    assert!(MPI_VERSION >= 3, "MPI_T needs MPI-3");
    assert_eq!(
        HAS_EVENTS,
        MPI_VERSION >= 4,
        "MPI {MPI_VERSION}.{MPI_SUBVERSION}"
    );
}
