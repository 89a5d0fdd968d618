//! Info objects (MPI-4.1 §10): the hints MPI_T events take and return
//! (`MPI_T_event_handle_set_info`/`_get_info`, `MPI_T_event_callback_set_info`/`_get_info`).
//!
//! rsmpi 0.8 has no info type, so this is a minimal owned one: create, set, read back, free on
//! drop. MPI-4 lets info objects be used before `MPI_Init`.

use std::ffi::{CString, c_char, c_int};

use mpit_core::{Error, Result};
use mpit_sys as sys;

use crate::raw::check;

/// An owned `MPI_Info` (freed on drop).
///
/// ```
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
    raw: sys::MPI_Info,
}

fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|e| Error::InteriorNul {
        position: e.nul_position(),
    })
}

impl Info {
    /// `MPI_Info_create`: an empty info object.
    ///
    /// MPI-4 allows info objects at any time; MPI-3 only between `MPI_Init` and
    /// `MPI_Finalize`, and Open MPI 4.1 (MPI-3.1) aborts the process otherwise, so there this
    /// is refused outside that window ([`Error::KnownCrash`],
    /// [`quirks::OPEN_MPI_INFO_OUTSIDE_INIT`](crate::quirks::OPEN_MPI_INFO_OUTSIDE_INIT)).
    #[doc(alias = "MPI_Info_create")]
    pub fn new() -> Result<Info> {
        if crate::quirks::applies(&crate::quirks::OPEN_MPI_INFO_OUTSIDE_INIT) {
            let (mut init, mut fin) = (0, 0);
            // SAFETY: both may be called at any time; valid out-pointers.
            check(unsafe { sys::MPI_Initialized(&mut init) })?;
            // SAFETY: as above.
            check(unsafe { sys::MPI_Finalized(&mut fin) })?;
            if init == 0 || fin != 0 {
                return Err(Error::KnownCrash(
                    &crate::quirks::OPEN_MPI_INFO_OUTSIDE_INIT,
                ));
            }
        }
        let mut raw = sys::MPI_INFO_NULL;
        // SAFETY: valid out-pointer; MPI-4 allows info calls before MPI_Init.
        check(unsafe { sys::MPI_Info_create(&mut raw) })?;
        Ok(Info { raw })
    }

    /// Takes ownership of a handle MPI returned (e.g. from a `*_get_info`).
    ///
    /// # Safety
    /// `raw` must be a valid info handle the caller owns and does not free itself.
    #[cfg_attr(not(mpit_events), allow(dead_code))]
    pub(crate) unsafe fn from_raw(raw: sys::MPI_Info) -> Info {
        Info { raw }
    }

    /// Whether this is `MPI_INFO_NULL` (what a `*_get_info` may return when there are no
    /// hints): it reads as empty and cannot be set.
    pub fn is_null(&self) -> bool {
        self.raw == sys::MPI_INFO_NULL
    }

    /// The raw handle, valid while `self` lives.
    pub fn as_raw(&self) -> sys::MPI_Info {
        self.raw
    }

    /// `MPI_Info_set(key, value)`; keys longer than `MPI_MAX_INFO_KEY` are refused by MPI.
    #[doc(alias = "MPI_Info_set")]
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let (k, v) = (c_string(key)?, c_string(value)?);
        // SAFETY: live info; NUL-terminated strings alive for the call.
        check(unsafe { sys::MPI_Info_set(self.raw, k.as_ptr(), v.as_ptr()) })
    }

    /// The value of `key`, if set.
    #[doc(alias = "MPI_Info_get")]
    pub fn get(&self, key: &str) -> Result<Option<String>> {
        let k = c_string(key)?;
        if self.is_null() {
            return Ok(None);
        }
        let (mut len, mut flag): (c_int, c_int) = (0, 0);
        // SAFETY: live info; valid key and out-pointers.
        check(unsafe { sys::MPI_Info_get_valuelen(self.raw, k.as_ptr(), &mut len, &mut flag) })?;
        if flag == 0 {
            return Ok(None);
        }
        let len = len.clamp(0, sys::MPI_MAX_INFO_VAL);
        let mut buf = vec![0 as c_char; len as usize + 1];
        // SAFETY: `buf` holds `len + 1` bytes; MPI writes at most `len` and a NUL.
        check(unsafe {
            sys::MPI_Info_get(self.raw, k.as_ptr(), len, buf.as_mut_ptr(), &mut flag)
        })?;
        Ok((flag != 0).then(|| to_string(&buf)))
    }

    /// Every `(key, value)` pair, in MPI's order.
    pub fn entries(&self) -> Result<Vec<(String, String)>> {
        if self.is_null() {
            return Ok(Vec::new());
        }
        let mut n = 0;
        // SAFETY: live info; valid out-pointer.
        check(unsafe { sys::MPI_Info_get_nkeys(self.raw, &mut n) })?;
        let mut out = Vec::with_capacity(n.max(0) as usize);
        for i in 0..n {
            let mut key = vec![0 as c_char; sys::MPI_MAX_INFO_KEY as usize + 1];
            // SAFETY: `key` holds MPI_MAX_INFO_KEY + 1 bytes, as the standard requires.
            check(unsafe { sys::MPI_Info_get_nthkey(self.raw, i, key.as_mut_ptr()) })?;
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

impl Drop for Info {
    fn drop(&mut self) {
        if self.raw != sys::MPI_INFO_NULL {
            // SAFETY: an info handle this value owns, freed once.
            let _ = unsafe { sys::MPI_Info_free(&mut self.raw) };
        }
    }
}
