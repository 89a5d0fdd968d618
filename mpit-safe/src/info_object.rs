//! Info objects (MPI-4.1 §10): the hints MPI_T events take and return
//! (`MPI_T_event_handle_set_info`/`_get_info`, `MPI_T_event_callback_set_info`/`_get_info`).
//!
//! rsmpi 0.8 has no info type, so this is a minimal owned one: create, set, read back, free on
//! drop. MPI-4 lets info objects be used before `MPI_Init`.

#![forbid(unsafe_code)]

use std::ffi::{CString, c_char};

use mpit_core::{Error, Result};
use mpit_sys as sys;

use crate::ffi::{self, RawInfo};

/// An owned `MPI_Info` (freed on drop).
///
/// MPI-4.1 §10, `MPI_Info`.
///
/// ```
/// # #[cfg(mpit_abi)] use mpit_safe::mpi;
/// let _universe = mpi::initialize().unwrap(); // MPI-3 libraries need MPI initialised
/// let mut info = mpit_safe::Info::new()?;
/// info.set("mpit_provider_label", "tool-a")?;
/// assert_eq!(info.get("mpit_provider_label")?.as_deref(), Some("tool-a"));
/// assert_eq!(info.entries()?, vec![("mpit_provider_label".to_owned(), "tool-a".to_owned())]);
/// # Ok::<(), mpit_safe::Error>(())
/// ```
#[doc(alias = "MPI_Info")]
#[derive(Debug)]
pub struct Info {
    raw: RawInfo,
}

fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|e| Error::InteriorNul {
        position: e.nul_position(),
    })
}

impl Info {
    /// `MPI_Info_create`: an empty info object.
    ///
    /// MPI-4.1 §10, `MPI_Info_create`.
    ///
    /// MPI-4 allows info objects at any time; MPI-3 only between `MPI_Init` and
    /// `MPI_Finalize`, and Open MPI 4.1 (MPI-3.1) aborts the process otherwise, so there this
    /// is refused outside that window ([`Error::KnownCrash`],
    /// [`quirks::OPEN_MPI_INFO_OUTSIDE_INIT`](crate::quirks::OPEN_MPI_INFO_OUTSIDE_INIT)).
    #[doc(alias = "MPI_Info_create")]
    pub fn new() -> Result<Info> {
        if crate::quirks::applies(&crate::quirks::OPEN_MPI_INFO_OUTSIDE_INIT)
            && (!ffi::initialized()? || ffi::finalized()?)
        {
            return Err(Error::KnownCrash(
                &crate::quirks::OPEN_MPI_INFO_OUTSIDE_INIT,
            ));
        }
        Ok(Info {
            raw: ffi::info_create()?,
        })
    }

    /// Takes ownership of an info object MPI returned (e.g. from a `*_get_info`).
    pub(crate) fn from_owned(raw: RawInfo) -> Info {
        Info { raw }
    }

    /// Whether this is `MPI_INFO_NULL` (what a `*_get_info` may return when there are no
    /// hints): it reads as empty and cannot be set.
    pub fn is_null(&self) -> bool {
        self.raw.is_null()
    }

    /// The raw handle, valid while `self` lives.
    pub fn as_raw(&self) -> sys::MPI_Info {
        self.raw.as_raw()
    }

    /// The owned handle, for the fence's entries.
    pub(crate) fn raw(&self) -> &RawInfo {
        &self.raw
    }

    /// `MPI_Info_set(key, value)`; keys longer than `MPI_MAX_INFO_KEY` are refused by MPI.
    ///
    /// MPI-4.1 §10, `MPI_Info_set`.
    #[doc(alias = "MPI_Info_set")]
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let (k, v) = (c_string(key)?, c_string(value)?);
        ffi::info_set(&mut self.raw, &k, &v)
    }

    /// The value of `key`, if set.
    ///
    /// MPI-4.1 §10, `MPI_Info_get`.
    #[doc(alias = "MPI_Info_get")]
    pub fn get(&self, key: &str) -> Result<Option<String>> {
        let k = c_string(key)?;
        if self.is_null() {
            return Ok(None);
        }
        let Some(len) = ffi::info_get_valuelen(&self.raw, &k)? else {
            return Ok(None);
        };
        let len = len.clamp(0, sys::MPI_MAX_INFO_VAL);
        let mut buf = vec![0 as c_char; len as usize + 1];
        let set = ffi::info_get(&self.raw, &k, &mut buf)?;
        Ok(set.then(|| to_string(&buf)))
    }

    /// Every `(key, value)` pair, in MPI's order.
    pub fn entries(&self) -> Result<Vec<(String, String)>> {
        if self.is_null() {
            return Ok(Vec::new());
        }
        let n = ffi::info_get_nkeys(&self.raw)?;
        let mut out = Vec::with_capacity(n.max(0) as usize);
        for i in 0..n {
            let mut key = vec![0 as c_char; sys::MPI_MAX_INFO_KEY as usize + 1];
            ffi::info_get_nthkey(&self.raw, i, &mut key)?;
            let key = to_string(&key);
            let value = self.get(&key)?.unwrap_or_default();
            out.push((key, value));
        }
        Ok(out)
    }
}

fn to_string(buf: &[c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
