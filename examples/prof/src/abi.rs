//! The ABI build (`--cfg mpit_abi`): what the rest of the crate takes from `mpi-sys` in the
//! native build, for the MPI-5 ABI, so that one `libmpit_prof.so` profiles a program on any
//! library that implements it (MPICH's `libmpi_abi.so.1`, Intel MPI's).
//!
//! - The types of `mpi_abi.h`: `mpit_sys::abi`'s (declared once, there), so that a handle a
//!   wrapper sees is the type the safe API binds variables to.
//! - Every `PMPI_` function that returns an error code (`$OUT_DIR/pmpi.rs`, from `mpit-sys`'s
//!   declarations), found at its first call with `dlsym(RTLD_NEXT)`: the library is not
//!   linked against any MPI, the program brings its own.
//! - The predefined handles the crate uses, under mpi-sys's names.

#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    dead_code,
    unreachable_pub,
    clippy::missing_safety_doc,
    clippy::too_many_arguments
)]

use crate::next::Symbol;

// The generated code names the C types as mpit-sys's declarations do.
pub use mpit_sys::abi::*;
pub(crate) use std::ffi::{c_char, c_int, c_void};

include!(concat!(env!("OUT_DIR"), "/pmpi.rs"));

// mpi-sys's names of the predefined handles, as the rest of the crate reads them (in
// `unsafe` blocks, like mpi-sys's extern statics). Never written.
/// `MPI_COMM_WORLD`.
pub static mut RSMPI_COMM_WORLD: MPI_Comm = mpit_sys::MPI_COMM_WORLD;
/// `MPI_COMM_SELF`.
pub static mut RSMPI_COMM_SELF: MPI_Comm = mpit_sys::MPI_COMM_SELF;
/// `MPI_COMM_NULL`.
pub static mut RSMPI_COMM_NULL: MPI_Comm = mpit_sys::MPI_COMM_NULL;
/// `MPI_WIN_NULL`.
pub static mut RSMPI_WIN_NULL: MPI_Win = mpit_sys::MPI_WIN_NULL;
/// `MPI_FILE_NULL`.
pub static mut RSMPI_FILE_NULL: MPI_File = mpit_sys::MPI_FILE_NULL;
/// `MPI_GROUP_NULL`.
pub static mut RSMPI_GROUP_NULL: MPI_Group = mpit_sys::MPI_GROUP_NULL;
/// `MPI_INT32_T`.
pub static mut RSMPI_INT32_T: MPI_Datatype = mpit_sys::MPI_INT32_T;
/// `MPI_UINT64_T`.
pub static mut RSMPI_UINT64_T: MPI_Datatype = mpit_sys::MPI_UINT64_T;
/// `MPI_UINT8_T`.
pub static mut RSMPI_UINT8_T: MPI_Datatype = mpit_sys::MPI_UINT8_T;

/// `MPI_STATUS_IGNORE`.
pub static mut RSMPI_STATUS_IGNORE: *mut MPI_Status = mpit_sys::MPI_STATUS_IGNORE;
/// `MPI_STATUSES_IGNORE`.
pub static mut RSMPI_STATUSES_IGNORE: *mut MPI_Status = mpit_sys::MPI_STATUSES_IGNORE;
/// `MPI_REQUEST_NULL`.
pub static mut RSMPI_REQUEST_NULL: MPI_Request = mpit_sys::MPI_REQUEST_NULL;
/// `MPI_PROC_NULL`.
pub static mut RSMPI_PROC_NULL: c_int = mpit_sys::MPI_PROC_NULL;

/// What a `PMPI_` function returns when the program's library lacks it: `MPI_ERR_OTHER`.
pub(crate) const MISSING: c_int = mpit_sys::MPI_ERR_OTHER;

/// Whether the process runs an MPI-5 ABI library of the major version this build declares
/// (its `MPI_Abi_get_version`); `Err` says what it runs instead.
pub(crate) fn check_library() -> Result<(), String> {
    static GET_VERSION: Symbol = Symbol::new(c"MPI_Abi_get_version");
    let p = GET_VERSION.get();
    if p.is_null() {
        return Err(
            "this program's MPI library has no MPI_Abi_get_version (a native MPI \
                    build, not the MPI-5 ABI), but libmpit_prof.so was built for the MPI-5 ABI"
                .into(),
        );
    }
    // SAFETY: `MPI_Abi_get_version(int *, int *)` of the ABI (callable at any time).
    let f: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int =
        unsafe { std::mem::transmute(p) };
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    let rc = unsafe { f(&mut major, &mut minor) };
    let want = mpit_sys::abi::ABI_VERSION.0;
    if rc == mpit_sys::MPI_SUCCESS && major < 0 {
        // MPI-5.0 §20.2: a library not built for the standard ABI answers -1.
        return Err(format!(
            "this program's MPI library is a native build (MPI_Abi_get_version gives \
             {major}.{minor}), but libmpit_prof.so was built for the MPI-5 ABI"
        ));
    }
    if rc != mpit_sys::MPI_SUCCESS || major != want {
        return Err(format!(
            "this program's MPI library implements the MPI ABI {major}.{minor}, \
             libmpit_prof.so was built for {want}.x"
        ));
    }
    Ok(())
}

/// The address `PMPI_Init` has in the program's library (null if it has none).
pub(crate) fn pmpi_init_address() -> *const c_void {
    PMPI_Init__.get().cast_const()
}
