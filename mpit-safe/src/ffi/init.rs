//! The fence's initialisation entries: `MPI_T_init_thread`/`MPI_T_finalize` (MPI-4.1 §16.3.4)
//! and the MPI calls around them (`MPI_Initialized`, `MPI_Finalized`, `MPI_Query_thread`,
//! `MPI_Get_library_version`).

use std::ffi::{CStr, c_int};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;

use mpit_core::{Error, Result};
use mpit_sys as sys;

use crate::init::level::{Level, Multiple};
use crate::raw::check;

/// One `MPI_T_init_thread` not yet balanced: MPI_T is initialised while it lives, and dropping
/// it calls `MPI_T_finalize`. Every entry that needs MPI_T initialised borrows one, and every
/// handle borrows the one it was allocated under.
pub(crate) struct TInit<L: Level> {
    _level: PhantomData<(L, *const ())>,
}

// SAFETY: `Mpit::init_thread` keeps a `TInit<Multiple>` only where MPI_T provides
// MPI_THREAD_MULTIPLE, at which MPI_T may be called from any thread at any time. Below that
// level it is neither `Send` nor `Sync` (the raw pointer in its marker).
unsafe impl Send for TInit<Multiple> {}
// SAFETY: as above: concurrent calls are allowed at MPI_THREAD_MULTIPLE.
unsafe impl Sync for TInit<Multiple> {}

impl<L: Level> std::fmt::Debug for TInit<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TInit")
    }
}

/// `TInit`s alive (kept forever ones included): at zero, MPICH may free its event types.
static LIVE_TINITS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One `TInit` ended: after the last, pooled event registrations belong to no list any more.
fn tinit_ended() {
    if LIVE_TINITS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) == 1 {
        super::registration::pool::end_of_epoch();
    }
}

/// `MPI_T_init_thread` requesting `L`'s level: the initialisation and the level provided.
///
/// Below `MPI_THREAD_MULTIPLE` the caller holds the thread confinement of `init.rs`, so no
/// other thread is inside MPI_T.
#[inline]
pub(crate) fn t_init_thread<L: Level>() -> Result<(TInit<L>, c_int)> {
    // The ABI build loads its library now: what failed, rather than MPI_ERR_OTHER of a call.
    #[cfg(mpit_abi)]
    sys::abi::library().map_err(|e| Error::LibraryUnavailable(Box::new(e.to_string())))?;
    let mut provided: c_int = 0;
    // SAFETY: MPI_T_init_thread may be called at any time, any number of times (MPI-4.1
    // §16.3.4); valid out-pointer.
    check(unsafe { sys::MPI_T_init_thread(crate::init::raw_level(L::LEVEL), &mut provided) })?;
    LIVE_TINITS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    Ok((
        TInit {
            _level: PhantomData,
        },
        provided,
    ))
}

impl<L: Level> TInit<L> {
    /// `MPI_T_finalize`, reporting its return code.
    #[inline]
    pub(crate) fn finalize(self) -> Result<()> {
        let _consumed = ManuallyDrop::new(self);
        // SAFETY: balances this value's MPI_T_init_thread, once: `self` is consumed without
        // running its drop, and nothing borrows it any more.
        let rc = check(unsafe { sys::MPI_T_finalize() });
        tinit_ended();
        rc
    }

    /// Keeps MPI_T initialised for the rest of the process (never finalised).
    pub(crate) fn keep_forever(self) {
        std::mem::forget(self);
    }
}

impl<L: Level> Drop for TInit<L> {
    fn drop(&mut self) {
        // SAFETY: balances this value's MPI_T_init_thread, once; borrows of it have ended. A
        // failure cannot be reported from drop: `finalize` reports it.
        let _ = unsafe { sys::MPI_T_finalize() };
        tinit_ended();
    }
}

/// `MPI_Initialized`.
#[inline]
pub(crate) fn initialized() -> Result<bool> {
    let mut flag = 0;
    // SAFETY: may be called at any time (MPI-4.1 §11.2.1); valid out-pointer.
    check(unsafe { sys::MPI_Initialized(&mut flag) })?;
    Ok(flag != 0)
}

/// `MPI_Finalized`.
#[inline]
pub(crate) fn finalized() -> Result<bool> {
    let mut flag = 0;
    // SAFETY: may be called at any time (MPI-4.1 §11.2.1); valid out-pointer.
    check(unsafe { sys::MPI_Finalized(&mut flag) })?;
    Ok(flag != 0)
}

/// `MPI_Query_thread`: the thread level MPI provides (callable between `MPI_Init` and
/// `MPI_Finalize`; check [`initialized`] and [`finalized`] first).
#[inline]
pub(crate) fn query_thread() -> Result<c_int> {
    let mut provided = 0;
    // SAFETY: the caller checked that MPI is initialised and not finalised (MPI-4.1 §11.2.3);
    // valid out-pointer.
    check(unsafe { sys::MPI_Query_thread(&mut provided) })?;
    Ok(provided)
}

/// `MPI_Get_library_version`: the library's own description of itself.
pub(crate) fn get_library_version() -> Result<String> {
    // Larger than any implementation's MPI_MAX_LIBRARY_VERSION_STRING (MPICH 8192, Open MPI 256).
    let mut buf = vec![0u8; 1 << 14];
    let mut len = 0;
    // SAFETY: callable before MPI_Init and after MPI_Finalize (MPI-4.1 §9.1.1); the buffer is
    // larger than MPI_MAX_LIBRARY_VERSION_STRING and the length a valid out-pointer.
    check(unsafe { sys::MPI_Get_library_version(buf.as_mut_ptr().cast(), &mut len) })?;
    let s = CStr::from_bytes_until_nul(&buf).map_err(|_| Error::LengthOverflow)?;
    Ok(s.to_string_lossy().into_owned())
}
