//! The MPI-4 event API for an `mpi.h` that does not declare it (Open MPI 4.1 and 5.0): the
//! rest of `mpit_sys`, plus the event types and functions with the header's signatures, each
//! returning [`NO_EVENT_API`] without touching its arguments. The event code of the fence
//! compiles unchanged against it, so the safe event API exists on every MPI and answers
//! [`Error::NotSupported`](mpit_core::Error::NotSupported) at run time
//! ([`crate::raw::error`] turns the code into it).
//!
//! Nothing here calls MPI or reads a pointer: the functions are `unsafe` only to match the
//! signatures of the real ones.

#![allow(
    non_camel_case_types,
    non_snake_case,
    clippy::missing_safety_doc,
    clippy::too_many_arguments
)]

use std::ffi::{c_char, c_int, c_uint, c_void};

pub(crate) use mpit_sys::*;

/// The code every function here returns: not an MPI return code of any implementation
/// (they are small non-negative integers), so it cannot be confused with one.
pub(crate) const NO_EVENT_API: c_int = c_int::MIN;

/// An opaque event-registration handle (never created here).
pub(crate) type MPI_T_event_registration = *mut c_void;
/// An opaque event-instance handle (never created here).
pub(crate) type MPI_T_event_instance = *mut c_void;
/// Callback safety requirements (an enum in the headers that have it).
pub(crate) type MPI_T_cb_safety = c_uint;
/// Source ordering (an enum in the headers that have it).
pub(crate) type MPI_T_source_order = c_uint;
/// `MPI_T_CB_REQUIRE_NONE`: the levels in order, for the registration pool's table; never
/// passed to MPI here.
pub(crate) const MPI_T_CB_REQUIRE_NONE: c_int = 0;
/// `MPI_T_CB_REQUIRE_MPI_RESTRICTED` (as above).
pub(crate) const MPI_T_CB_REQUIRE_MPI_RESTRICTED: c_int = 1;
/// `MPI_T_CB_REQUIRE_THREAD_SAFE` (as above).
pub(crate) const MPI_T_CB_REQUIRE_THREAD_SAFE: c_int = 2;
/// `MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE`, the strictest level: the fallback of
/// `registration::safety_to_raw`, never passed to MPI here.
pub(crate) const MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE: c_int = 3;

/// `MPI_T_event_cb_function`.
pub(crate) type MPI_T_event_cb_function = Option<
    unsafe extern "C" fn(
        MPI_T_event_instance,
        MPI_T_event_registration,
        MPI_T_cb_safety,
        *mut c_void,
    ),
>;
/// `MPI_T_event_free_cb_function`.
pub(crate) type MPI_T_event_free_cb_function =
    Option<unsafe extern "C" fn(MPI_T_event_registration, MPI_T_cb_safety, *mut c_void)>;
/// `MPI_T_event_dropped_cb_function`.
pub(crate) type MPI_T_event_dropped_cb_function = Option<
    unsafe extern "C" fn(MPI_Count, MPI_T_event_registration, c_int, MPI_T_cb_safety, *mut c_void),
>;

/// Declares functions with the header's parameters that return [`NO_EVENT_API`].
macro_rules! absent {
    ($($name:ident($($arg:ty),* $(,)?);)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: absent from the installed `mpi.h`.")]
        #[inline]
        pub(crate) unsafe fn $name($(_: $arg),*) -> c_int {
            NO_EVENT_API
        }
    )*};
}

absent! {
    MPI_T_event_get_num(*mut c_int);
    MPI_T_source_get_num(*mut c_int);
    MPI_T_event_get_index(*const c_char, *mut c_int);
    MPI_T_category_get_num_events(c_int, *mut c_int);
    MPI_T_category_get_events(c_int, c_int, *mut c_int);
    MPI_T_event_get_info(
        c_int, *mut c_char, *mut c_int, *mut c_int, *mut MPI_Datatype, *mut MPI_Aint,
        *mut c_int, *mut MPI_T_enum, *mut MPI_Info, *mut c_char, *mut c_int, *mut c_int,
    );
    MPI_T_source_get_info(
        c_int, *mut c_char, *mut c_int, *mut c_char, *mut c_int, *mut MPI_T_source_order,
        *mut MPI_Count, *mut MPI_Count, *mut MPI_Info,
    );
    MPI_T_source_get_timestamp(c_int, *mut MPI_Count);
    MPI_T_event_read(MPI_T_event_instance, c_int, *mut c_void);
    MPI_T_event_copy(MPI_T_event_instance, *mut c_void);
    MPI_T_event_get_timestamp(MPI_T_event_instance, *mut MPI_Count);
    MPI_T_event_get_source(MPI_T_event_instance, *mut c_int);
    MPI_T_event_handle_alloc(c_int, *mut c_void, MPI_Info, *mut MPI_T_event_registration);
    MPI_T_event_register_callback(
        MPI_T_event_registration, MPI_T_cb_safety, MPI_Info, *mut c_void,
        MPI_T_event_cb_function,
    );
    MPI_T_event_set_dropped_handler(MPI_T_event_registration, MPI_T_event_dropped_cb_function);
    MPI_T_event_handle_set_info(MPI_T_event_registration, MPI_Info);
    MPI_T_event_handle_get_info(MPI_T_event_registration, *mut MPI_Info);
    MPI_T_event_callback_set_info(MPI_T_event_registration, MPI_T_cb_safety, MPI_Info);
    MPI_T_event_callback_get_info(MPI_T_event_registration, MPI_T_cb_safety, *mut MPI_Info);
    MPI_T_event_handle_free(
        MPI_T_event_registration, *mut c_void, MPI_T_event_free_cb_function,
    );
}
