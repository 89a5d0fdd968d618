//! The region API for C, Fortran (`bind(C)`) and Python (`ctypes`): `include/mpit_prof.h`.

// The exported C functions are `pub` so that they are exported from the shared object.
#![allow(unreachable_pub)]

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};

use crate::glue;

/// A null name.
const NULL_NAME: c_int = 3;

/// Enters region `name` inside the innermost open one. Returns 0, or 1 when this thread is
/// not profiled (before `MPI_Init`, after `MPI_Finalize`, another thread, profiling off), or
/// 3 for a null `name`.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpit_prof_region_begin(name: *const c_char) -> c_int {
    if name.is_null() {
        return NULL_NAME;
    }
    // SAFETY: a non-null NUL-terminated string by the caller's contract.
    glue::region_begin(unsafe { CStr::from_ptr(name) })
}

/// Leaves region `name` (and the regions opened inside it and not left). Returns 0, 1 when
/// this thread is not profiled, 2 when no region of that name is open (nothing changes), or
/// 3 for a null `name`.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mpit_prof_region_end(name: *const c_char) -> c_int {
    if name.is_null() {
        return NULL_NAME;
    }
    // SAFETY: a non-null NUL-terminated string by the caller's contract.
    glue::region_end(unsafe { CStr::from_ptr(name) })
}
