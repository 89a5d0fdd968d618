//! Raw bindings to the MPI tool information interface (MPI_T) of the installed MPI.
//!
//! This crate is the bottom layer of mpit-rs, in the manner of `zstd-sys`:
//!
//! * the MPI_T functions and handle types are **re-exported from `mpi_sys`**, so an rsmpi
//!   `MPI_Comm` and the one MPI_T binds to are the same type;
//! * the MPI_T constants are given under their **C names with the installed implementation's
//!   values** ([`consts`]): bindgen cannot give stable names for them, because MPICH and Open MPI
//!   declare them in differently named enums and with different values (MPICH's
//!   `MPI_T_VERBOSITY_USER_BASIC` is 221, Open MPI's is 0);
//! * the handles that are casts or link-time objects in C (`MPI_INT`, `MPI_T_ENUM_NULL`,
//!   `MPI_T_PVAR_ALL_HANDLES`, ...) come from a small C shim compiled with the same `mpicc`.
//!
//! The build script finds MPI as `mpi-sys` does (`MPICC`, `mpicc`, `pkg-config` with
//! `MPI_PKG_CONFIG`). It sets `cfg(mpit_events)` when the header declares the MPI-4 event API
//! (MPICH 4 and later; not Open MPI 4.1 or 5.0) and `cfg(mpit_bind_session)` when it has
//! `MPI_T_BIND_MPI_SESSION`; the same facts are in [`consts::HAS_EVENTS`] and
//! [`consts::HAS_BIND_SESSION`] for code that prefers `if` to `cfg`.
//!
//! **The MPI-5 ABI backend.** Built with `RUSTFLAGS="--cfg mpit_abi"` (and the same in
//! `RUSTDOCFLAGS`), this crate needs no MPI, no `mpicc` and no `mpi-sys` to build: the same
//! names come from the standard's `mpi_abi.h`, declared once in `src/abi/generated.rs`, and
//! `libmpi_abi.so.1` is loaded at run time (see the `abi` module of that build). One binary
//! then runs on every ABI library (MPICH 5.0.2's and Intel MPI 2021.18.1's are tested), chosen
//! by `LD_LIBRARY_PATH` or `MPIT_ABI_LIB`. A `cfg` rather than a feature: the choice is
//! exclusive and must drop `mpi-sys`, which additive features cannot do (getrandom chooses its
//! backend the same way).
//!
//! Everything here is `unsafe` to call: the safe layer is `mpit-safe`.
//!
//! ```
//! use mpit_sys::*;
//! let mut provided = 0;
//! let mut n = 0;
//! // SAFETY: MPI_T may be initialised at any time; the out-pointers are valid.
//! unsafe {
//!     assert_eq!(MPI_T_init_thread(MPI_THREAD_SINGLE, &mut provided), MPI_SUCCESS);
//!     assert_eq!(MPI_T_cvar_get_num(&mut n), MPI_SUCCESS);
//!     MPI_T_finalize();
//! }
//! println!("{IMPLEMENTATION} {IMPLEMENTATION_VERSION}: {n} control variables");
//! ```

#![cfg_attr(not(mpit_abi), no_std)]
#![allow(non_upper_case_globals)]

// The MPI-5 ABI backend (`--cfg mpit_abi`): the same names, declared from `mpi_abi.h`, with
// the library loaded at run time; everything below this block is the native backend's.
#[cfg(mpit_abi)]
pub mod abi;
#[cfg(mpit_abi)]
pub use abi::consts::*;
#[cfg(mpit_abi)]
pub use abi::*;

#[cfg(not(mpit_abi))]
pub use mpi_sys;

/// MPI_T and MPI constants of the installed `mpi.h`, under their C names.
///
/// Generated at build time by compiling a C program against the header; the values are the
/// implementation's own (MPI-4.1 §16.3 only fixes the names).
#[cfg(not(mpit_abi))]
pub mod consts {
    use core::ffi::c_int;
    include!(concat!(env!("OUT_DIR"), "/consts.rs"));
}
#[cfg(not(mpit_abi))]
pub use consts::*;

/// The installed values of each family of MPI_T constants, one array per family in the order
/// of its table in `mpit_core::constants` (`None`: the header does not declare the constant).
///
/// ```
/// assert_eq!(mpit_sys::tables::BIND[1], Some(mpit_sys::MPI_T_BIND_MPI_COMM));
/// ```
#[cfg(not(mpit_abi))]
pub mod tables {
    use super::consts::*;
    use core::ffi::c_int;
    include!(concat!(env!("OUT_DIR"), "/tables.rs"));
}

/// Datatype handles and other handles that C defines as casts or link-time objects.
#[cfg(not(mpit_abi))]
mod shim {
    use super::MPI_Datatype;
    include!(concat!(env!("OUT_DIR"), "/shim.rs"));
}
#[cfg(not(mpit_abi))]
pub use shim::*;

// Handles of MPI objects MPI_T binds to, and the plain MPI types MPI_T's signatures use.
#[cfg(not(mpit_abi))]
pub use mpi_sys::{
    MPI_Aint, MPI_Comm, MPI_Count, MPI_Datatype, MPI_Errhandler, MPI_File, MPI_Group, MPI_Info,
    MPI_Message, MPI_Op, MPI_Request, MPI_Win,
};

// MPI_T handle types.
#[cfg(not(mpit_abi))]
pub use mpi_sys::{MPI_T_cvar_handle, MPI_T_enum, MPI_T_pvar_handle, MPI_T_pvar_session};

// MPI_T functions of MPI-3.0/3.1 (MPI-4.1 §16.3.4–§16.3.9).
#[cfg(not(mpit_abi))]
pub use mpi_sys::{
    MPI_T_category_changed, MPI_T_category_get_categories, MPI_T_category_get_cvars,
    MPI_T_category_get_index, MPI_T_category_get_info, MPI_T_category_get_num,
    MPI_T_category_get_pvars, MPI_T_cvar_get_index, MPI_T_cvar_get_info, MPI_T_cvar_get_num,
    MPI_T_cvar_handle_alloc, MPI_T_cvar_handle_free, MPI_T_cvar_read, MPI_T_cvar_write,
    MPI_T_enum_get_info, MPI_T_enum_get_item, MPI_T_finalize, MPI_T_init_thread,
    MPI_T_pvar_get_index, MPI_T_pvar_get_info, MPI_T_pvar_get_num, MPI_T_pvar_handle_alloc,
    MPI_T_pvar_handle_free, MPI_T_pvar_read, MPI_T_pvar_readreset, MPI_T_pvar_reset,
    MPI_T_pvar_session_create, MPI_T_pvar_session_free, MPI_T_pvar_start, MPI_T_pvar_stop,
    MPI_T_pvar_write,
};

// The MPI-4 event API (MPI-4.1 §16.3.8), where the header declares it.
#[cfg(not(mpit_abi))]
#[cfg(mpit_events)]
pub use mpi_sys::{
    MPI_T_category_get_events, MPI_T_category_get_num_events, MPI_T_cb_safety,
    MPI_T_event_callback_get_info, MPI_T_event_callback_set_info, MPI_T_event_cb_function,
    MPI_T_event_copy, MPI_T_event_dropped_cb_function, MPI_T_event_free_cb_function,
    MPI_T_event_get_index, MPI_T_event_get_info, MPI_T_event_get_num, MPI_T_event_get_source,
    MPI_T_event_get_timestamp, MPI_T_event_handle_alloc, MPI_T_event_handle_free,
    MPI_T_event_handle_get_info, MPI_T_event_handle_set_info, MPI_T_event_instance,
    MPI_T_event_read, MPI_T_event_register_callback, MPI_T_event_registration,
    MPI_T_event_set_dropped_handler, MPI_T_source_get_info, MPI_T_source_get_num,
    MPI_T_source_get_timestamp, MPI_T_source_order,
};

// MPI calls MPI_T users need around it (the init/finalize ordering, the library's name) and
// the info objects MPI_T events take as hints (MPI-4.1 §10; callable before MPI_Init in MPI-4).
#[cfg(not(mpit_abi))]
pub use mpi_sys::{
    MPI_Finalize, MPI_Finalized, MPI_Get_library_version, MPI_Get_version, MPI_Info_create,
    MPI_Info_free, MPI_Info_get, MPI_Info_get_nkeys, MPI_Info_get_nthkey, MPI_Info_get_valuelen,
    MPI_Info_set, MPI_Init_thread, MPI_Initialized, MPI_Query_thread,
};

#[cfg(not(mpit_abi))]
unsafe extern "C" {
    /// `MPI_DATATYPE_NULL` of the installed MPI.
    #[link_name = "MPIT_SYS_MPI_DATATYPE_NULL"]
    pub safe static MPI_DATATYPE_NULL: MPI_Datatype;
    /// `MPI_INFO_NULL` of the installed MPI.
    #[link_name = "MPIT_SYS_MPI_INFO_NULL"]
    pub safe static MPI_INFO_NULL: MPI_Info;
    /// `MPI_T_ENUM_NULL`: the `enumtype` of a variable that is not of an enumeration type.
    #[link_name = "MPIT_SYS_MPI_T_ENUM_NULL"]
    pub safe static MPI_T_ENUM_NULL: MPI_T_enum;
    /// `MPI_T_CVAR_HANDLE_NULL`: what `MPI_T_cvar_handle_free` leaves in a freed handle.
    #[link_name = "MPIT_SYS_MPI_T_CVAR_HANDLE_NULL"]
    pub safe static MPI_T_CVAR_HANDLE_NULL: MPI_T_cvar_handle;
    /// `MPI_T_PVAR_HANDLE_NULL`: what `MPI_T_pvar_handle_free` leaves in a freed handle.
    #[link_name = "MPIT_SYS_MPI_T_PVAR_HANDLE_NULL"]
    pub safe static MPI_T_PVAR_HANDLE_NULL: MPI_T_pvar_handle;
    /// `MPI_T_PVAR_SESSION_NULL`: what `MPI_T_pvar_session_free` leaves in a freed session.
    #[link_name = "MPIT_SYS_MPI_T_PVAR_SESSION_NULL"]
    pub safe static MPI_T_PVAR_SESSION_NULL: MPI_T_pvar_session;
    #[link_name = "mpit_sys_pvar_all_handles"]
    safe fn pvar_all_handles() -> MPI_T_pvar_handle;
}

/// `MPI_T_PVAR_ALL_HANDLES`: the pseudo-handle that makes `MPI_T_pvar_start`, `_stop` and
/// `_reset` act on every handle of a session (MPI-4.1 §16.3.7).
///
/// A function rather than a static because MPICH declares it as an extern object, which C does
/// not allow as the initializer of another constant.
#[cfg(not(mpit_abi))]
#[doc(alias = "MPI_T_PVAR_ALL_HANDLES")]
#[inline]
pub fn mpi_t_pvar_all_handles() -> MPI_T_pvar_handle {
    pvar_all_handles()
}
