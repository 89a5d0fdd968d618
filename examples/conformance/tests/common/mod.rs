//! What the integration tests share (copied from mpit-safe's tests: what the moved ones need).

use mpit_safe::sys;

/// `MPI_Init_thread` at `MPI_THREAD_SINGLE`, asserting success. Call it once per process.
pub(crate) fn init_mpi() {
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
