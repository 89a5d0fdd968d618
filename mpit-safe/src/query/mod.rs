//! Enumeration and lookup of control variables, performance variables, categories and
//! enumeration types (MPI-4.1 §16.3.5, §16.3.6, §16.3.7, §16.3.9).
//!
//! Here: the counts, the lookups by name and the checked index. `scratch.rs`: the buffers
//! a listing or visit shares and the string convention over them (§16.3.3); `visit.rs`: the
//! borrowed records a visit shows; `variables.rs`: control and performance variables, one code
//! for both; `categories.rs`: categories and their members; `listing.rs`: listings, holes and
//! the catalog.

#![forbid(unsafe_code)]

use std::ffi::{CStr, CString, c_int};

use mpit_core::{Error, ErrorClass, MpiString, PvarClass, Result};
use mpit_sys as sys;

use crate::ffi::{self, Index, Kind, TInit};
use crate::init::{Mpit, level::Level};
use crate::raw::{RawConstant, non_negative};

mod categories;
mod listing;
mod scratch;
#[cfg(test)]
mod tests;
mod variables;
mod visit;

pub use listing::{Catalog, Holes, Listing, Refresh, Visited};
pub(crate) use scratch::Scratch;
pub use visit::{CategoryInfoRef, CvarInfoRef, MemberIter, Members, PvarInfoRef};

/// `index` after checking it against the current count of its kind (`MPI_T_*_get_num`).
/// Checked here rather than left to MPI: MPICH 4.0.2's `MPI_T_pvar_get_info` segfaults on an
/// out-of-range index instead of returning `MPI_T_ERR_INVALID_INDEX`.
pub(crate) fn index_arg<K: Kind, L: Level>(init: &TInit<L>, index: usize) -> Result<Index<K>> {
    Index::checked(init, index)?.ok_or(Error::Mpi {
        class: ErrorClass::InvalidIndex,
        code: sys::MPI_T_ERR_INVALID_INDEX,
    })
}

/// A name as the NUL-terminated string `*_get_index` takes.
fn c_name(name: &str) -> Result<CString> {
    CString::new(name).map_err(|e| Error::InteriorNul {
        position: e.nul_position(),
    })
}

impl<L: Level> Mpit<L> {
    /// The number of control variables (it may grow, e.g. after `MPI_Init`).
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_get_num`.
    #[doc(alias = "MPI_T_cvar_get_num")]
    pub fn cvar_count(&self) -> Result<usize> {
        ffi::cvar_get_num(&self.init)
    }

    /// The number of performance variables (it may grow).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_get_num`.
    #[doc(alias = "MPI_T_pvar_get_num")]
    pub fn pvar_count(&self) -> Result<usize> {
        ffi::pvar_get_num(&self.init)
    }

    /// The number of categories (it may grow).
    ///
    /// MPI-4.1 §16.3.9, `MPI_T_category_get_num`.
    #[doc(alias = "MPI_T_category_get_num")]
    pub fn category_count(&self) -> Result<usize> {
        ffi::category_get_num(&self.init)
    }

    /// A stamp that changes whenever a category is added or changed: compare two stamps to
    /// know whether a refresh of a listing is needed.
    ///
    /// MPI-4.1 §16.3.9, `MPI_T_category_changed`.
    #[doc(alias = "MPI_T_category_changed")]
    pub fn category_stamp(&self) -> Result<i32> {
        ffi::category_changed(&self.init)
    }

    pub(crate) fn lookup(
        &self,
        name: &str,
        get: impl FnOnce(&CStr) -> Result<c_int>,
    ) -> Result<Option<usize>> {
        let c = c_name(name)?;
        match get(&c) {
            Ok(index) => Ok(Some(non_negative(index)?)),
            Err(Error::Mpi {
                class: ErrorClass::InvalidName,
                ..
            }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The index of the control variable called `name` (`None`: no such variable).
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_get_index`.
    ///
    /// Looked up with `MPI_T_cvar_get_index`; the index is stable for the life of the process,
    /// so look it up once and keep it.
    #[doc(alias = "MPI_T_cvar_get_index")]
    pub fn cvar_index(&self, name: &str) -> Result<Option<usize>> {
        self.lookup(name, |n| ffi::cvar_get_index(&self.init, n))
            .or_else(|e| {
                self.scan(e, name, Self::cvar_count, |s, i| {
                    s.cvar_info(i).map(|v| v.name)
                })
            })
    }

    /// The index of the performance variable called `name` in `class` (`None`: no such
    /// variable; names are unique per class).
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_get_index`.
    #[doc(alias = "MPI_T_pvar_get_index")]
    pub fn pvar_index(&self, name: &str, class: PvarClass) -> Result<Option<usize>> {
        let c = class.to_raw().unwrap_or(-1);
        self.lookup(name, |n| ffi::pvar_get_index(&self.init, n, c))
            .or_else(|e| {
                self.scan(e, name, Self::pvar_count, |s, i| {
                    let v = s.pvar_info(i)?;
                    if v.class == class {
                        Ok(v.name)
                    } else {
                        Ok(MpiString::default())
                    }
                })
            })
    }

    /// The index of the category called `name` (`None`: no such category).
    ///
    /// MPI-4.1 §16.3.9, `MPI_T_category_get_index`.
    #[doc(alias = "MPI_T_category_get_index")]
    pub fn category_index(&self, name: &str) -> Result<Option<usize>> {
        self.lookup(name, |n| ffi::category_get_index(&self.init, n))
            .or_else(|e| {
                self.scan(e, name, Self::category_count, |s, i| {
                    s.category_info(i).map(|v| v.name)
                })
            })
    }

    /// Fallback for an implementation whose `*_get_index` is missing or unsupported: a scan
    /// over the names. Other errors (not initialised, ...) are passed through.
    fn scan(
        &self,
        err: Error,
        name: &str,
        count: fn(&Self) -> Result<usize>,
        name_of: impl Fn(&Self, usize) -> Result<MpiString>,
    ) -> Result<Option<usize>> {
        if !matches!(
            err,
            Error::Mpi {
                class: ErrorClass::NotSupported,
                ..
            } | Error::Other { .. }
                | Error::Mpi {
                    class: ErrorClass::Invalid,
                    ..
                }
        ) {
            return Err(err);
        }
        for i in 0..count(self)? {
            if name_of(self, i).is_ok_and(|n| n == name) {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }
}
