//! The fence's performance experiment sessions and performance variable handles: creation,
//! allocation, start, stop, reset, read, write, free (MPI-4.1 §16.3.7).

use std::ffi::c_void;
use std::marker::PhantomData;

use mpit_core::{Datatype, Result, Scalar};
use mpit_sys as sys;

use super::{Index, Pvar, RawObject, TInit, byte_len, fits, holds, pvar_get_info};
use crate::init::level::{Level, Multiple};
use crate::raw::{check, non_negative};

/// A performance experiment session (`MPI_T_pvar_session_create`), freed on drop
/// (`MPI_T_pvar_session_free`); it borrows the initialisation it was created under.
pub(crate) struct RawSession<'m, L: Level> {
    raw: sys::MPI_T_pvar_session,
    _init: PhantomData<&'m TInit<L>>,
}

// SAFETY: as for `RawCvarHandle`: at MPI_THREAD_MULTIPLE any thread may call at any time, and
// the session is an opaque token of the library.
unsafe impl Send for RawSession<'_, Multiple> {}
// SAFETY: as above.
unsafe impl Sync for RawSession<'_, Multiple> {}

/// `MPI_T_pvar_session_create`.
#[inline]
pub(crate) fn pvar_session_create<L: Level>(_init: &TInit<L>) -> Result<RawSession<'_, L>> {
    let mut raw = sys::MPI_T_PVAR_SESSION_NULL;
    // SAFETY: MPI_T is initialised while `_init` lives; valid out-pointer.
    check(unsafe { sys::MPI_T_pvar_session_create(&mut raw) })?;
    Ok(RawSession {
        raw,
        _init: PhantomData,
    })
}

impl<L: Level> Drop for RawSession<'_, L> {
    fn drop(&mut self) {
        // SAFETY: created by MPI_T_pvar_session_create and freed once, here; its handles
        // borrowed it and are gone. A failure cannot be reported from drop.
        let _ = unsafe { sys::MPI_T_pvar_session_free(&mut self.raw) };
    }
}

macro_rules! all_handles {
    ($($(#[$doc:meta])* $name:ident => $mpi:ident;)*) => {$(
        $(#[$doc])*
        #[inline]
        pub(crate) fn $name<L: Level>(s: &RawSession<'_, L>) -> Result<()> {
            #[cfg(mpit_abi)]
            crate::quirks::guard(&crate::quirks::MPICH_ABI_PVAR_ALL_HANDLES)?;
            // SAFETY: a live session; MPI_T_PVAR_ALL_HANDLES is valid for start, stop and reset.
            check(unsafe { sys::$mpi(s.raw, sys::mpi_t_pvar_all_handles()) })
        }
    )*};
}

all_handles! {
    /// `MPI_T_pvar_start` of `MPI_T_PVAR_ALL_HANDLES`.
    pvar_start_all => MPI_T_pvar_start;
    /// `MPI_T_pvar_stop` of `MPI_T_PVAR_ALL_HANDLES`.
    pvar_stop_all => MPI_T_pvar_stop;
    /// `MPI_T_pvar_reset` of `MPI_T_PVAR_ALL_HANDLES`.
    pvar_reset_all => MPI_T_pvar_reset;
}

/// A performance variable handle (`MPI_T_pvar_handle_alloc`), freed on drop
/// (`MPI_T_pvar_handle_free`); it borrows its session.
pub(crate) struct RawPvarHandle<'s, L: Level> {
    session: sys::MPI_T_pvar_session,
    raw: sys::MPI_T_pvar_handle,
    datatype: Datatype,
    /// Bytes MPI reads and writes: the count times the datatype's size.
    bytes: usize,
    _session: PhantomData<&'s RawSession<'s, L>>,
}

// SAFETY: as for `RawSession`.
unsafe impl Send for RawPvarHandle<'_, Multiple> {}
// SAFETY: as for `RawSession`; every entry taking the handle by reference makes one MPI_T call.
unsafe impl Sync for RawPvarHandle<'_, Multiple> {}

/// `MPI_T_pvar_handle_alloc` of performance variable `index` in `session` for `obj`, whose
/// kind must be the variable's binding ([`Error::BindMismatch`]): the handle and its count.
pub(crate) fn pvar_handle_alloc<'s, L: Level>(
    init: &TInit<L>,
    session: &'s RawSession<'_, L>,
    index: Index<Pvar>,
    obj: RawObject,
) -> Result<(RawPvarHandle<'s, L>, usize)> {
    let q = pvar_get_info(init, index, None, None)?;
    let obj = obj.bound_as(q.bind)?;
    let (mut raw, mut count) = (sys::MPI_T_PVAR_HANDLE_NULL, 0);
    // SAFETY: a live session; the index is below the count; `ptr` as in `cvar_handle_alloc`;
    // valid out-pointers.
    check(obj.with_ptr(|ptr| unsafe {
        sys::MPI_T_pvar_handle_alloc(session.raw, index.raw, ptr, &mut raw, &mut count)
    }))?;
    let mut handle = RawPvarHandle {
        session: session.raw,
        raw,
        datatype: Datatype::Byte,
        bytes: 0,
        _session: PhantomData,
    };
    let count = non_negative(count)?;
    (handle.datatype, handle.bytes) = byte_len(count, q.datatype)?;
    Ok((handle, count))
}

macro_rules! pvar_action {
    ($($(#[$doc:meta])* $name:ident => $mpi:ident;)*) => {$(
        $(#[$doc])*
        #[inline]
        pub(crate) fn $name<L: Level>(h: &RawPvarHandle<'_, L>) -> Result<()> {
            // SAFETY: a live handle in its live session (borrowed).
            check(unsafe { sys::$mpi(h.session, h.raw) })
        }
    )*};
}

pvar_action! {
    /// `MPI_T_pvar_start`.
    pvar_start => MPI_T_pvar_start;
    /// `MPI_T_pvar_stop`.
    pvar_stop => MPI_T_pvar_stop;
    /// `MPI_T_pvar_reset`.
    pvar_reset => MPI_T_pvar_reset;
}

/// `MPI_T_pvar_read` into `buf`, which must hold the variable's bytes.
#[inline(always)]
pub(crate) fn pvar_read<T: Scalar, L: Level>(
    h: &RawPvarHandle<'_, L>,
    buf: &mut [T],
) -> Result<()> {
    fits(buf, h.bytes, h.datatype)?;
    // SAFETY: a live handle in its live session; `buf` holds the bytes MPI writes, of a type
    // that takes any value of the datatype (both checked).
    check(unsafe { sys::MPI_T_pvar_read(h.session, h.raw, buf.as_mut_ptr().cast()) })
}

/// `MPI_T_pvar_readreset` into `buf`, which must hold the variable's bytes.
#[inline(always)]
pub(crate) fn pvar_readreset<T: Scalar, L: Level>(
    h: &RawPvarHandle<'_, L>,
    buf: &mut [T],
) -> Result<()> {
    fits(buf, h.bytes, h.datatype)?;
    // SAFETY: as in `pvar_read`.
    check(unsafe { sys::MPI_T_pvar_readreset(h.session, h.raw, buf.as_mut_ptr().cast()) })
}

/// `MPI_T_pvar_write` from `buf`, which must hold the variable's bytes.
#[inline]
pub(crate) fn pvar_write<T: Scalar, L: Level>(h: &RawPvarHandle<'_, L>, buf: &[T]) -> Result<()> {
    holds(buf, h.bytes)?;
    // SAFETY: a live handle in its live session; `buf` holds the bytes MPI reads (checked),
    // and MPI only reads them.
    check(unsafe {
        sys::MPI_T_pvar_write(h.session, h.raw, buf.as_ptr().cast::<c_void>().cast_mut())
    })
}

impl<L: Level> RawPvarHandle<'_, L> {
    /// Bytes a read writes: the count times the datatype's size.
    #[inline(always)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

/// A performance variable handle whose variable takes at most 8 bytes, checked once when it
/// is made: read into a `u64` with no check of the size per read (the profiler's call mode
/// reads dozens of them at every MPI call; the check was a load, a compare and a branch each).
pub(crate) struct WordPvarHandle<'s, L: Level>(RawPvarHandle<'s, L>);

impl<'s, L: Level> WordPvarHandle<'s, L> {
    /// `h` as a word handle if its variable takes at most 8 bytes, else `h` back.
    pub(crate) fn new(h: RawPvarHandle<'s, L>) -> std::result::Result<Self, RawPvarHandle<'s, L>> {
        if h.bytes <= size_of::<u64>() {
            Ok(Self(h))
        } else {
            Err(h)
        }
    }

    /// The handle, for everything but the word read.
    #[inline(always)]
    pub(crate) fn handle(&self) -> &RawPvarHandle<'s, L> {
        &self.0
    }

    /// `MPI_T_pvar_read` into the first bytes of `word` (the rest as they were): whether it
    /// succeeded, no more (no branch: a loop of reads ANDs them and checks once).
    #[inline(always)]
    pub(crate) fn read_ok(&self, word: &mut u64) -> bool {
        // SAFETY: a live handle in its live session (borrowed); its variable takes at most the
        // 8 bytes of `word` (checked in `new`; a handle's size never changes), and a `u64`
        // takes any bytes MPI writes.
        let code = unsafe {
            sys::MPI_T_pvar_read(self.0.session, self.0.raw, std::ptr::from_mut(word).cast())
        };
        code == sys::MPI_SUCCESS
    }
}

impl<L: Level> Drop for RawPvarHandle<'_, L> {
    fn drop(&mut self) {
        // SAFETY: allocated in this session, which outlives the handle (borrowed), and freed
        // once, here. A failure cannot be reported from drop.
        let _ = unsafe { sys::MPI_T_pvar_handle_free(self.session, &mut self.raw) };
    }
}
