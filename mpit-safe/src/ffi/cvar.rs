//! The fence's control variable handles: allocation, read, write, free (MPI-4.1 §16.3.6).

use std::ffi::c_void;
use std::marker::PhantomData;

use mpit_core::{Datatype, Result, Scalar};
use mpit_sys as sys;

use super::{Cvar, Index, RawObject, TInit, byte_len, cvar_get_info, fits, holds};
use crate::init::level::{Level, Multiple};
use crate::raw::{check, non_negative};

/// A control variable handle (`MPI_T_cvar_handle_alloc`), freed on drop
/// (`MPI_T_cvar_handle_free`); it borrows the initialisation it was allocated under.
pub(crate) struct RawCvarHandle<'m, L: Level> {
    raw: sys::MPI_T_cvar_handle,
    datatype: Datatype,
    /// Bytes MPI reads and writes: the count times the datatype's size.
    bytes: usize,
    _init: PhantomData<&'m TInit<L>>,
}

// SAFETY: at MPI_THREAD_MULTIPLE MPI_T calls may come from any thread at any time, and the
// handle is an opaque token of the library.
unsafe impl Send for RawCvarHandle<'_, Multiple> {}
// SAFETY: as above; every entry taking the handle by reference makes one MPI_T call.
unsafe impl Sync for RawCvarHandle<'_, Multiple> {}

/// `MPI_T_cvar_handle_alloc` of control variable `index` for `obj`, whose kind must be the
/// variable's binding ([`Error::BindMismatch`]): the handle and its count of elements.
pub(crate) fn cvar_handle_alloc<'m, L: Level>(
    init: &'m TInit<L>,
    index: Index<Cvar>,
    obj: RawObject,
) -> Result<(RawCvarHandle<'m, L>, usize)> {
    let q = cvar_get_info(init, index, None, None)?;
    let obj = obj.bound_as(q.bind)?;
    let (mut raw, mut count) = (sys::MPI_T_CVAR_HANDLE_NULL, 0);
    // SAFETY: MPI_T is initialised while `init` lives; the index is below the count; `ptr` is
    // NULL for no object or points to a copy of a handle of the kind the variable is bound to
    // (checked), alive while MPI_T handles allocated with it are (`RawObject`'s contract);
    // valid out-pointers.
    check(obj.with_ptr(|ptr| unsafe {
        sys::MPI_T_cvar_handle_alloc(index.raw, ptr, &mut raw, &mut count)
    }))?;
    let mut handle = RawCvarHandle {
        raw,
        datatype: Datatype::Byte,
        bytes: 0,
        _init: PhantomData,
    };
    let count = non_negative(count)?;
    (handle.datatype, handle.bytes) = byte_len(count, q.datatype)?;
    Ok((handle, count))
}

/// `MPI_T_cvar_read` into `buf`, which must hold the variable's bytes.
#[inline(always)]
pub(crate) fn cvar_read<T: Scalar, L: Level>(
    h: &RawCvarHandle<'_, L>,
    buf: &mut [T],
) -> Result<()> {
    fits(buf, h.bytes, h.datatype)?;
    // SAFETY: a live handle (owned by `h`, which borrows the initialisation); `buf` holds the
    // bytes MPI writes, of a type that takes any value of the datatype (both checked).
    check(unsafe { sys::MPI_T_cvar_read(h.raw, buf.as_mut_ptr().cast()) })
}

/// `MPI_T_cvar_write` from `buf`, which must hold the variable's bytes.
#[inline]
pub(crate) fn cvar_write<T: Scalar, L: Level>(h: &RawCvarHandle<'_, L>, buf: &[T]) -> Result<()> {
    holds(buf, h.bytes)?;
    // SAFETY: a live handle; `buf` holds the bytes MPI reads (checked), and MPI only reads
    // them (the C prototype lacks `const` in some implementations).
    check(unsafe { sys::MPI_T_cvar_write(h.raw, buf.as_ptr().cast::<c_void>().cast_mut()) })
}

impl<L: Level> Drop for RawCvarHandle<'_, L> {
    fn drop(&mut self) {
        // SAFETY: allocated by MPI_T_cvar_handle_alloc and freed once, here; the initialisation
        // outlives it (borrowed). A failure cannot be reported from drop.
        let _ = unsafe { sys::MPI_T_cvar_handle_free(&mut self.raw) };
    }
}
