//! The constants mpit-sys generates from the installed `mpi.h` obey the standard's rules:
//! values the standard gives distinct meanings are distinct, error classes are MPI error
//! classes, and the thread levels are ordered. Runs against whichever MPI the build selected.

// The constants are generated from whichever mpi.h the build found: an assertion on them is a
// check of that header, not of a literal.
#![allow(clippy::assertions_on_constants)]

use std::ffi::c_int;

use mpit_sys::*;

/// Asserts that every value of a named group is distinct, naming the clash.
fn assert_distinct(group: &str, items: &[(&str, c_int)]) {
    let mut seen = std::collections::HashMap::new();
    for &(name, v) in items {
        if let Some(other) = seen.insert(v, name) {
            panic!("{group}: {name} and {other} share the value {v}");
        }
    }
}

macro_rules! named {
    ($($c:ident),* $(,)?) => { &[$((stringify!($c), $c)),*] };
}

/// MPI-4.1 §16.3.1: nine verbosity levels, each a distinct constant.
#[test]
fn verbosity_levels_are_distinct() {
    assert_distinct(
        "verbosity",
        named![
            MPI_T_VERBOSITY_USER_BASIC,
            MPI_T_VERBOSITY_USER_DETAIL,
            MPI_T_VERBOSITY_USER_ALL,
            MPI_T_VERBOSITY_TUNER_BASIC,
            MPI_T_VERBOSITY_TUNER_DETAIL,
            MPI_T_VERBOSITY_TUNER_ALL,
            MPI_T_VERBOSITY_MPIDEV_BASIC,
            MPI_T_VERBOSITY_MPIDEV_DETAIL,
            MPI_T_VERBOSITY_MPIDEV_ALL,
        ],
    );
}

/// MPI-4.1 §16.3.2 table of bind kinds: one distinct constant per kind of MPI object.
#[test]
fn bind_kinds_are_distinct() {
    let mut binds: Vec<(&str, c_int)> = named![
        MPI_T_BIND_NO_OBJECT,
        MPI_T_BIND_MPI_COMM,
        MPI_T_BIND_MPI_DATATYPE,
        MPI_T_BIND_MPI_ERRHANDLER,
        MPI_T_BIND_MPI_FILE,
        MPI_T_BIND_MPI_GROUP,
        MPI_T_BIND_MPI_OP,
        MPI_T_BIND_MPI_REQUEST,
        MPI_T_BIND_MPI_WIN,
        MPI_T_BIND_MPI_MESSAGE,
        MPI_T_BIND_MPI_INFO,
    ]
    .to_vec();
    if let Some(s) = MPI_T_BIND_MPI_SESSION {
        binds.push(("MPI_T_BIND_MPI_SESSION", s));
    }
    assert_eq!(MPI_T_BIND_MPI_SESSION.is_some(), HAS_BIND_SESSION);
    assert_distinct("bind", &binds);
}

/// MPI-4.1 §16.3.6 table of scopes: seven distinct scopes.
#[test]
fn scopes_are_distinct() {
    assert_distinct(
        "scope",
        named![
            MPI_T_SCOPE_CONSTANT,
            MPI_T_SCOPE_READONLY,
            MPI_T_SCOPE_LOCAL,
            MPI_T_SCOPE_GROUP,
            MPI_T_SCOPE_GROUP_EQ,
            MPI_T_SCOPE_ALL,
            MPI_T_SCOPE_ALL_EQ,
        ],
    );
}

/// MPI-4.1 §16.3.7: ten distinct performance variable classes.
#[test]
fn pvar_classes_are_distinct() {
    assert_distinct(
        "pvar class",
        named![
            MPI_T_PVAR_CLASS_STATE,
            MPI_T_PVAR_CLASS_LEVEL,
            MPI_T_PVAR_CLASS_SIZE,
            MPI_T_PVAR_CLASS_PERCENTAGE,
            MPI_T_PVAR_CLASS_HIGHWATERMARK,
            MPI_T_PVAR_CLASS_LOWWATERMARK,
            MPI_T_PVAR_CLASS_COUNTER,
            MPI_T_PVAR_CLASS_AGGREGATE,
            MPI_T_PVAR_CLASS_TIMER,
            MPI_T_PVAR_CLASS_GENERIC,
        ],
    );
}

/// MPI-4.1 §16.3.10: the MPI_T return codes are distinct error classes, none of them
/// `MPI_SUCCESS`, all within `MPI_ERR_LASTCODE` (error classes are at most the last error code).
#[test]
fn error_classes_are_distinct_error_codes() {
    let mut errors: Vec<(&str, c_int)> = named![
        MPI_T_ERR_MEMORY,
        MPI_T_ERR_NOT_INITIALIZED,
        MPI_T_ERR_CANNOT_INIT,
        MPI_T_ERR_INVALID_INDEX,
        MPI_T_ERR_INVALID_ITEM,
        MPI_T_ERR_INVALID_HANDLE,
        MPI_T_ERR_OUT_OF_HANDLES,
        MPI_T_ERR_OUT_OF_SESSIONS,
        MPI_T_ERR_INVALID_SESSION,
        MPI_T_ERR_CVAR_SET_NOT_NOW,
        MPI_T_ERR_CVAR_SET_NEVER,
        MPI_T_ERR_PVAR_NO_STARTSTOP,
        MPI_T_ERR_PVAR_NO_WRITE,
        MPI_T_ERR_PVAR_NO_ATOMIC,
        MPI_T_ERR_INVALID_NAME,
    ]
    .to_vec();
    for (name, v) in [
        ("MPI_T_ERR_INVALID", MPI_T_ERR_INVALID),
        ("MPI_T_ERR_NOT_ACCESSIBLE", MPI_T_ERR_NOT_ACCESSIBLE),
        ("MPI_T_ERR_NOT_SUPPORTED", MPI_T_ERR_NOT_SUPPORTED),
    ] {
        if let Some(v) = v {
            errors.push((name, v));
        }
    }
    errors.push(("MPI_SUCCESS", MPI_SUCCESS));
    assert_distinct("error class", &errors);
    for &(name, v) in &errors[..errors.len() - 1] {
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

/// MPI-4.1 §16.3.8: four distinct callback safety levels and two distinct source orderings.
#[cfg(mpit_events)]
#[test]
fn event_constants_are_distinct() {
    assert_distinct(
        "callback safety",
        named![
            MPI_T_CB_REQUIRE_NONE,
            MPI_T_CB_REQUIRE_MPI_RESTRICTED,
            MPI_T_CB_REQUIRE_THREAD_SAFE,
            MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE,
        ],
    );
    assert_distinct(
        "source order",
        named![MPI_T_SOURCE_ORDERED, MPI_T_SOURCE_UNORDERED],
    );
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
