//! The fence: every call from this crate into MPI, and every callback from MPI into it.
//!
//! This is the one module of `mpit-safe` that may use `unsafe` (every other module forbids it,
//! and `tests/fence.rs` checks the sources), so it is the one directory to audit, one file per
//! section of the standard in the manner of rustix's backends (one module per subsystem) and
//! rusqlite:
//!
//! * each entry is a thin, safe, `#[inline]` function over one MPI_T or MPI call and named
//!   after it (`cvar_read` for `MPI_T_cvar_read`), with its `// SAFETY:` argument; return codes
//!   become `Result` through [`crate::raw::check`];
//! * its arguments are Rust types that make the call sound: slices whose size is checked
//!   against what MPI writes, `&CStr`, indices checked against the current count ([`Index`]),
//!   and handle newtypes ([`TInit`], [`RawSession`], [`RawPvarHandle`], [`RawCvarHandle`],
//!   [`RawInfo`], [`RawRegistration`]) that only the call allocating them can make, that free
//!   themselves once on drop, and that borrow what must outlive them;
//! * thread safety is claimed here only: the handles are `Send` and `Sync` at
//!   `MPI_THREAD_MULTIPLE` ([`Multiple`](crate::init::level::Multiple)) and neither below it,
//!   and the public types get their auto traits from them;
//! * MPI's event callbacks are `extern "C"` trampolines that catch every panic; the boxed
//!   closures they call belong to a block that only MPI's free callback releases.
//!
//! What the types cannot say, the entries check before the call: a buffer shorter than the
//! bytes MPI writes is [`Error::SizeMismatch`], a `bool` buffer for anything but `MPI_C_BOOL`
//! is [`Error::TypeMismatch`], an object of the wrong kind is [`Error::BindMismatch`].
//!
//! The files, by section of MPI-4.1 (§16.3 unless said):
//!
//! * `init.rs`: initialisation (§16.3.4) and the MPI calls around it (§11.2, §9.1.1);
//! * `query.rs`: indices, counts, `*_get_info` and `*_get_index` of control and performance
//!   variables and categories, enumerations (§16.3.5–§16.3.7, §16.3.9);
//! * `object.rs`: the objects handles are bound to (§16.3.2), rsmpi's among them;
//! * `info.rs`: info objects (§10);
//! * `cvar.rs`: control variable handles (§16.3.6);
//! * `session.rs`: performance experiment sessions and performance variable handles (§16.3.7);
//! * `events.rs`: queries of event sources and event types (§16.3.8.1, §16.3.8.3);
//! * `registration.rs`: event registrations, their callbacks, dropped events and the event
//!   instances callbacks get (§16.3.8.4–§16.3.8.7), with `registration/pool.rs`, the
//!   registrations never freed where an implementation races on them;
//! * `ring.rs`: the queue event callbacks fill; `tsc.rs`: the time stamp counter;
//! * `no_event_api.rs`: stand-ins where the header has no event API; `mpi_abi.rs`: rsmpi's
//!   names over the MPI-5 ABI library.

use std::ffi::{c_char, c_int};
use std::mem::size_of_val;

use mpit_core::{Datatype, Error, Result, Scalar, TypeKind};
use mpit_sys as sys;

use crate::raw::{RawConstant, c_len};

// The MPI-4 event API: the header's, or where it has none, stand-ins with its signatures that
// answer "not supported", so that the event code compiles on every MPI.
#[cfg(mpit_events)]
pub(crate) use mpit_sys as esys;
#[cfg(not(mpit_events))]
pub(crate) mod no_event_api;
#[cfg(not(mpit_events))]
pub(crate) use no_event_api as esys;
// The queue event callbacks fill (its unsafe is here, with the rest).
pub(crate) mod ring;
// rsmpi's names over the ABI library, for the ABI build (`mpit_safe::mpi`).
#[cfg(mpit_abi)]
pub mod mpi_abi;

mod cvar;
mod events;
mod info;
mod init;
mod object;
mod query;
mod registration;
mod session;
mod tsc;

// The entries, by the names the rest of the crate uses (`crate::ffi::cvar_read`).
pub(crate) use cvar::{RawCvarHandle, cvar_handle_alloc, cvar_read, cvar_write};
pub(crate) use events::{
    EventQuery, SourceQuery, event_get_elements, event_get_hints, event_get_info, source_get_hints,
    source_get_info, source_get_timestamp,
};
pub(crate) use info::{
    RawInfo, info_create, info_get, info_get_nkeys, info_get_nthkey, info_get_valuelen, info_set,
};
pub(crate) use init::{
    TInit, finalized, get_library_version, initialized, query_thread, t_init_thread,
};
pub use object::RawObject;
pub(crate) use object::datatype_bits;
pub(crate) use query::{
    Category, CategoryQuery, Cvar, CvarQuery, EnumKey, Event, Index, Kind, Pvar, PvarQuery,
    RawEnum, Source, category_changed, category_get_categories, category_get_cvars,
    category_get_events, category_get_index, category_get_info, category_get_num,
    category_get_num_events, category_get_pvars, cvar_get_index, cvar_get_info, cvar_get_num,
    enum_get_info, enum_get_item, event_get_index, event_get_num, pvar_get_index, pvar_get_info,
    pvar_get_num, source_get_num,
};
pub(crate) use registration::{
    EventRef, FreeWait, RawRegistration, event_callback_get_info, event_callback_set_info,
    event_capture, event_copy, event_get_source, event_get_timestamp, event_handle_alloc,
    event_handle_free, event_handle_get_info, event_handle_set_info, event_read,
    event_register_callback, event_remove_callback, event_set_dropped_handler,
};
pub(crate) use session::{
    RawPvarHandle, RawSession, WordPvarHandle, pvar_handle_alloc, pvar_read, pvar_readreset,
    pvar_reset, pvar_reset_all, pvar_session_create, pvar_start, pvar_start_all, pvar_stop,
    pvar_stop_all, pvar_write,
};
#[cfg(target_arch = "x86_64")]
pub(crate) use tsc::tsc;

// ---------------------------------------------------------------------------------------------
// Buffers: the checks every entry that hands MPI a buffer makes.

/// `Ok` if `buf` can take `need` bytes of `datatype` written by MPI: large enough, and of a
/// type for which every byte pattern MPI may write is a value (`bool` only for
/// `MPI_C_BOOL`, whose C values are 0 and 1).
#[inline(always)]
fn fits<T: Scalar>(buf: &[T], need: usize, datatype: Datatype) -> Result<()> {
    if T::KIND == TypeKind::Boolean && datatype != Datatype::CBool {
        return Err(not_bool(datatype, T::NAME));
    }
    holds(buf, need)
}

/// `Ok` if `buf` holds at least `need` bytes for MPI to read or write.
#[inline(always)]
fn holds<T>(buf: &[T], need: usize) -> Result<()> {
    let got = size_of_val(buf);
    if got >= need {
        Ok(())
    } else {
        Err(too_small(need, got))
    }
}

// The refusals, out of line: the checks above stay a compare and a branch on the hot paths.

#[cold]
#[inline(never)]
fn not_bool(expected: Datatype, requested: &'static str) -> Error {
    Error::type_mismatch(expected, requested)
}

#[cold]
#[inline(never)]
fn too_small(expected: usize, got: usize) -> Error {
    Error::size_mismatch(expected, got)
}

/// `(buffer, length)` of one string argument (MPI-4.1 §16.3.3): NULL and 0 for a length query.
fn str_arg(buf: Option<&mut [u8]>) -> Result<(*mut c_char, c_int)> {
    Ok(match buf {
        Some(b) => (b.as_mut_ptr().cast(), c_len(b.len())?),
        None => (std::ptr::null_mut(), 0),
    })
}

/// Bytes of `count` elements of the MPI datatype `dt`.
fn byte_len(count: usize, dt: sys::MPI_Datatype) -> Result<(Datatype, usize)> {
    let dt = Datatype::from_raw(dt)?;
    let bytes = count.checked_mul(dt.size()).ok_or(Error::LengthOverflow)?;
    Ok((dt, bytes))
}
