//! MPI state the tests share: the turn of MPI_T tokens, `MPI_Init` once per process with
//! `MPI_Finalize` at exit, what an implementation must show after `MPI_Init`. The crate's only
//! `unsafe` (C's `atexit`, `MPI_Init_thread`, `MPI_Finalize`, `MPI_COMM_WORLD`) is here.

use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard, Once};

use mpit_safe::{Mpit, sys};

/// The test harness runs tests on several threads; a token below `MPI_THREAD_MULTIPLE` confines
/// MPI_T to one thread, so the tests take turns.
static TURN: Mutex<()> = Mutex::new(());

/// A token and the turn, dropped in that order (fields drop in declaration order).
pub struct Turn {
    /// This test's MPI_T token.
    pub mpit: Mpit,
    _turn: MutexGuard<'static, ()>,
}

/// Waits for this test's turn and initialises MPI_T.
pub fn turn() -> Turn {
    let guard = TURN.lock().unwrap_or_else(|p| p.into_inner());
    Turn {
        mpit: Mpit::init().unwrap(),
        _turn: guard,
    }
}

unsafe extern "C" {
    /// C's `atexit`: MPI_Finalize runs when the test binary exits, after every test.
    fn atexit(f: extern "C" fn()) -> c_int;
}

extern "C" fn finalize_at_exit() {
    // SAFETY: MPI was initialised once by `turn_after_init`; no test runs any more and every
    // MPI_T token has been dropped (MPI_T's process-lifetime anchor stays, which is the
    // ordering the library relies on).
    unsafe { sys::MPI_Finalize() };
}

/// Waits for this test's turn, initialises MPI_T, and makes sure MPI is initialised (once per
/// test binary, finalised at exit): MPICH registers its performance variables, event sources
/// and event types only in `MPI_Init`, so a test that looks before it proves nothing there.
pub fn turn_after_init() -> Turn {
    static INIT: Once = Once::new();
    let t = turn();
    INIT.call_once(|| {
        init_mpi();
        // SAFETY: registers a plain function without captures.
        assert_eq!(unsafe { atexit(finalize_at_exit) }, 0);
    });
    t
}

/// `MPI_Init_thread` at `MPI_THREAD_SINGLE`, asserting success. Call it once per process (a
/// test binary that also uses [`turn_after_init`] must not).
pub fn init_mpi() {
    let mut provided = 0;
    // SAFETY: callers make this the only MPI_Init of the process; null argc/argv as the
    // standard allows.
    let rc = unsafe {
        sys::MPI_Init_thread(
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            sys::MPI_THREAD_SINGLE,
            &mut provided,
        )
    };
    assert_eq!(rc, sys::MPI_SUCCESS, "MPI_Init_thread");
}

/// What an implementation must show after `MPI_Init`, from its own words: MPICH exports
/// performance variables only when configured `--enable-mpit-pvars` and raises events only
/// when configured `--enable-mpit-events` (both listed in its `MPI_Get_library_version`);
/// every other implementation here exports performance variables, and none other raises
/// events. A test that finds nothing where material is required fails.
pub struct Material {
    /// Performance variables must exist after `MPI_Init`.
    pub pvars: bool,
    /// Event types and sources must exist after `MPI_Init`.
    pub events: bool,
}

/// The [`Material`] the loaded implementation must show.
pub fn material() -> Material {
    use mpit_safe::quirks::configure_option;
    match mpit_safe::implementation().vendor {
        mpit_safe::Vendor::Mpich => Material {
            pvars: configure_option("--enable-mpit-pvars").is_some_and(|v| v != "none"),
            events: library_configured_with_events(),
        },
        _ => Material {
            pvars: true,
            events: false,
        },
    }
}

/// Whether the loaded MPI library says it was configured with MPI_T events
/// (`--enable-mpit-events`): there, a test about events must find them.
pub fn library_configured_with_events() -> bool {
    mpit_safe::quirks::configure_option("--enable-mpit-events").is_some_and(|v| v != "no")
}

/// Whether the loaded MPI library says it was configured with MPICH's receive-queue
/// performance variables (`--enable-mpit-pvars` with `all` or `recvq`): there, they must exist.
pub fn library_configured_with_recvq_pvars() -> bool {
    mpit_safe::quirks::configure_option("--enable-mpit-pvars")
        .is_some_and(|v| v.is_empty() || v.split(',').any(|c| c == "all" || c == "recvq"))
}

/// Whether a child's output `out` carries `marker`, its line for "no such event type here"; if
/// so, checks that the library does not say it was configured with events (there the event type
/// must exist) and says what the test had nothing to do.
pub fn no_event_type(out: &str, marker: &str, event: &str, nothing: &str) -> bool {
    if !out.contains(marker) {
        return false;
    }
    assert!(
        !library_configured_with_events(),
        "this MPI says it was configured with --enable-mpit-events, but has no {event} event \
         type after MPI_Init"
    );
    println!("{}: {nothing}", mpit_safe::implementation());
    true
}

/// `MPI_COMM_WORLD` (a link-time object in rsmpi's bindings, a constant in the ABI's).
#[cfg(mpit_abi)]
pub fn comm_world() -> sys::MPI_Comm {
    sys::MPI_COMM_WORLD
}

/// `MPI_COMM_WORLD` (a link-time object in rsmpi's bindings, a constant in the ABI's).
#[cfg(not(mpit_abi))]
pub fn comm_world() -> sys::mpi_sys::MPI_Comm {
    // SAFETY: a link-time constant of the MPI library.
    unsafe { sys::mpi_sys::RSMPI_COMM_WORLD }
}
