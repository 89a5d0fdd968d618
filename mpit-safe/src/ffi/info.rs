//! The fence's info objects: an owned `MPI_Info` and the calls on it (MPI-4.1 §10).

use std::ffi::{CStr, c_char, c_int};

use mpit_core::{Error, Result};
use mpit_sys as sys;

use super::holds;
use crate::raw::{c_len, check};

/// An owned `MPI_Info`, or `MPI_INFO_NULL`; freed on drop (`MPI_Info_free`).
pub(crate) struct RawInfo(pub(super) sys::MPI_Info);

impl std::fmt::Debug for RawInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl RawInfo {
    /// The raw handle, valid while `self` lives.
    #[inline]
    pub(crate) fn as_raw(&self) -> sys::MPI_Info {
        self.0
    }

    /// Whether this is `MPI_INFO_NULL`.
    #[inline]
    pub(crate) fn is_null(&self) -> bool {
        self.0 == sys::MPI_INFO_NULL
    }
}

impl Drop for RawInfo {
    fn drop(&mut self) {
        if !self.is_null() {
            // SAFETY: an info handle this value owns, freed once. A failure cannot be
            // reported from drop.
            let _ = unsafe { sys::MPI_Info_free(&mut self.0) };
        }
    }
}

/// `MPI_Info_create`: an empty info object.
#[inline]
pub(crate) fn info_create() -> Result<RawInfo> {
    let mut raw = sys::MPI_INFO_NULL;
    // SAFETY: valid out-pointer; MPI-4 allows info calls before MPI_Init (the caller refuses
    // the implementations that abort there).
    check(unsafe { sys::MPI_Info_create(&mut raw) })?;
    Ok(RawInfo(raw))
}

/// `MPI_Info_set(key, value)`.
#[inline]
pub(crate) fn info_set(info: &mut RawInfo, key: &CStr, value: &CStr) -> Result<()> {
    // SAFETY: a live info handle (owned by `info`); NUL-terminated strings alive for the call.
    check(unsafe { sys::MPI_Info_set(info.0, key.as_ptr(), value.as_ptr()) })
}

/// `MPI_Info_get_valuelen`: the length of `key`'s value, `None` where it is not set.
#[inline]
pub(crate) fn info_get_valuelen(info: &RawInfo, key: &CStr) -> Result<Option<c_int>> {
    let (mut len, mut flag): (c_int, c_int) = (0, 0);
    // SAFETY: a live info handle; NUL-terminated key; valid out-pointers.
    check(unsafe { sys::MPI_Info_get_valuelen(info.0, key.as_ptr(), &mut len, &mut flag) })?;
    Ok((flag != 0).then_some(len))
}

/// `MPI_Info_get`: `key`'s value into `buf` (at most `buf.len() - 1` bytes and a NUL);
/// whether it is set.
#[inline]
pub(crate) fn info_get(info: &RawInfo, key: &CStr, buf: &mut [c_char]) -> Result<bool> {
    let valuelen = c_len(buf.len().checked_sub(1).ok_or(Error::size_mismatch(1, 0))?)?;
    let mut flag = 0;
    // SAFETY: a live info handle; NUL-terminated key; `buf` holds `valuelen + 1` bytes, and MPI
    // writes at most `valuelen` and a NUL; valid out-pointer.
    check(unsafe {
        sys::MPI_Info_get(info.0, key.as_ptr(), valuelen, buf.as_mut_ptr(), &mut flag)
    })?;
    Ok(flag != 0)
}

/// `MPI_Info_get_nkeys`.
#[inline]
pub(crate) fn info_get_nkeys(info: &RawInfo) -> Result<c_int> {
    let mut n = 0;
    // SAFETY: a live info handle; valid out-pointer.
    check(unsafe { sys::MPI_Info_get_nkeys(info.0, &mut n) })?;
    Ok(n)
}

/// `MPI_Info_get_nthkey`: key `n` into `buf`, which must hold `MPI_MAX_INFO_KEY + 1` bytes.
#[inline]
pub(crate) fn info_get_nthkey(info: &RawInfo, n: c_int, buf: &mut [c_char]) -> Result<()> {
    holds(buf, sys::MPI_MAX_INFO_KEY as usize + 1)?;
    // SAFETY: a live info handle; `buf` holds MPI_MAX_INFO_KEY + 1 bytes (checked), what the
    // standard says a key may take.
    check(unsafe { sys::MPI_Info_get_nthkey(info.0, n, buf.as_mut_ptr()) })
}
