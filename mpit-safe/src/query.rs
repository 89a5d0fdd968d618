//! Enumeration and lookup of control variables, performance variables, categories and
//! enumeration types (MPI-4.1 §16.3.5, §16.3.6, §16.3.7, §16.3.9).

#![forbid(unsafe_code)]

use std::ffi::{CStr, CString, c_int};

use mpit_core::{
    Bind, CategoryInfo, CvarInfo, Datatype, EnumInfo, EnumItem, Error, ErrorClass, MpiString,
    PvarClass, PvarInfo, Result, Scope, Verbosity, fetch_string,
};
use mpit_sys as sys;

use crate::ffi::{self, Category, Cvar, Index, Kind, Pvar, RawEnum, TInit};
use crate::init::{Mpit, level::Level};
use crate::raw::{RawConstant, non_negative};

/// Everything a listing found: the entries, and the holes (indices below the count whose query
/// failed, with the error), so one bad index never aborts a listing.
#[derive(Debug, Clone)]
pub struct Listing<T> {
    /// The entries that could be queried, in index order.
    pub entries: Vec<T>,
    /// `(index, error)` for every index below the count whose query failed.
    pub holes: Vec<(usize, Error)>,
    /// The count the implementation reported when the listing was made.
    pub count: usize,
}

impl<T> Listing<T> {
    pub(crate) fn collect(count: usize, mut query: impl FnMut(usize) -> Result<T>) -> Listing<T> {
        let mut entries = Vec::with_capacity(count);
        let mut holes = Vec::new();
        for i in 0..count {
            match query(i) {
                Ok(e) => entries.push(e),
                Err(e) => holes.push((i, e)),
            }
        }
        Listing {
            entries,
            holes,
            count,
        }
    }
}

/// `index` after checking it against the current count of its kind (`MPI_T_*_get_num`).
/// Checked here rather than left to MPI: MPICH 4.0.2's `MPI_T_pvar_get_info` segfaults on an
/// out-of-range index instead of returning `MPI_T_ERR_INVALID_INDEX`.
pub(crate) fn index_arg<K: Kind, L: Level>(init: &TInit<L>, index: usize) -> Result<Index<K>> {
    Index::checked(init, index)?.ok_or(Error::Mpi {
        class: ErrorClass::InvalidIndex,
        code: sys::MPI_T_ERR_INVALID_INDEX,
    })
}

/// The name and description of something MPI_T describes, through `get(name, description)`:
/// one `MPI_T_*_get_info` call with optional string buffers, returning both lengths.
pub(crate) fn name_and_description(
    mut get: impl FnMut(Option<&mut [u8]>, Option<&mut [u8]>) -> Result<(c_int, c_int)>,
) -> Result<(MpiString, MpiString)> {
    let name = fetch_string(|buf| non_negative(get(buf, None)?.0))?;
    let description = fetch_string(|buf| non_negative(get(None, buf)?.1))?;
    Ok((name, description))
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

    /// Everything `MPI_T_cvar_get_info` says about control variable `index`, with its
    /// enumeration resolved.
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_get_info`.
    #[doc(alias = "MPI_T_cvar_get_info")]
    pub fn cvar_info(&self, index: usize) -> Result<CvarInfo> {
        self.cvar_info_at(index_arg(&self.init, index)?)
    }

    pub(crate) fn cvar_info_at(&self, i: Index<Cvar>) -> Result<CvarInfo> {
        let init = &self.init;
        let r = ffi::cvar_get_info(init, i, None, None)?;
        let (name, description) = name_and_description(|n, d| {
            ffi::cvar_get_info(init, i, n, d).map(|q| (q.name_len, q.desc_len))
        })?;
        Ok(CvarInfo {
            index: i.get(),
            name,
            verbosity: Verbosity::from_raw(r.verbosity)?,
            datatype: Datatype::from_raw(r.datatype)?,
            enumtype: self.enum_of(r.enumtype)?,
            description,
            bind: Bind::from_raw(r.bind)?,
            scope: Scope::from_raw(r.scope)?,
        })
    }

    /// Every control variable, holes reported per index.
    pub fn cvars(&self) -> Result<Listing<CvarInfo>> {
        Ok(Listing::collect(self.cvar_count()?, |i| self.cvar_info(i)))
    }

    /// Everything `MPI_T_pvar_get_info` says about performance variable `index`.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_get_info`.
    #[doc(alias = "MPI_T_pvar_get_info")]
    pub fn pvar_info(&self, index: usize) -> Result<PvarInfo> {
        self.pvar_info_at(index_arg(&self.init, index)?)
    }

    pub(crate) fn pvar_info_at(&self, i: Index<Pvar>) -> Result<PvarInfo> {
        let init = &self.init;
        let r = ffi::pvar_get_info(init, i, None, None)?;
        let (name, description) = name_and_description(|n, d| {
            ffi::pvar_get_info(init, i, n, d).map(|q| (q.name_len, q.desc_len))
        })?;
        Ok(PvarInfo {
            index: i.get(),
            name,
            verbosity: Verbosity::from_raw(r.verbosity)?,
            class: PvarClass::from_raw(r.class)?,
            datatype: Datatype::from_raw(r.datatype)?,
            enumtype: self.enum_of(r.enumtype)?,
            description,
            bind: Bind::from_raw(r.bind)?,
            readonly: r.readonly,
            continuous: r.continuous,
            atomic: r.atomic,
        })
    }

    /// Every performance variable, holes reported per index.
    pub fn pvars(&self) -> Result<Listing<PvarInfo>> {
        Ok(Listing::collect(self.pvar_count()?, |i| self.pvar_info(i)))
    }

    /// `len` members of a category, through one of the `MPI_T_category_get_*` entries.
    fn members(
        &self,
        len: usize,
        get: impl FnOnce(&mut [c_int]) -> Result<()>,
    ) -> Result<Vec<usize>> {
        let mut v: Vec<c_int> = vec![-1; len];
        get(&mut v)?;
        v.into_iter().map(non_negative).collect()
    }

    /// Everything about category `index`: name, description, and its member control
    /// variables, performance variables, subcategories and (with the event API) event types.
    ///
    /// MPI-4.1 §16.3.9, `MPI_T_category_get_info`.
    #[doc(alias = "MPI_T_category_get_info")]
    pub fn category_info(&self, index: usize) -> Result<CategoryInfo> {
        let init = &self.init;
        let i: Index<Category> = index_arg(init, index)?;
        let r = ffi::category_get_info(init, i, None, None)?;
        let (name, description) = name_and_description(|n, d| {
            ffi::category_get_info(init, i, n, d).map(|q| (q.name_len, q.desc_len))
        })?;
        let (num_cvars, num_pvars, num_categories) = (
            non_negative(r.num_cvars)?,
            non_negative(r.num_pvars)?,
            non_negative(r.num_categories)?,
        );
        let (num_events, events) = if mpit_sys::consts::HAS_EVENTS {
            let ne = non_negative(ffi::category_get_num_events(init, i)?)?;
            (
                Some(ne),
                self.members(ne, |out| ffi::category_get_events(init, i, out))?,
            )
        } else {
            (None, Vec::new())
        };
        Ok(CategoryInfo {
            index,
            name,
            description,
            num_cvars,
            num_pvars,
            num_categories,
            num_events,
            cvars: self.members(num_cvars, |out| ffi::category_get_cvars(init, i, out))?,
            pvars: self.members(num_pvars, |out| ffi::category_get_pvars(init, i, out))?,
            categories: self.members(num_categories, |out| {
                ffi::category_get_categories(init, i, out)
            })?,
            events,
        })
    }

    /// Every category, holes reported per index.
    pub fn categories(&self) -> Result<Listing<CategoryInfo>> {
        Ok(Listing::collect(self.category_count()?, |i| {
            self.category_info(i)
        }))
    }

    /// The enumeration behind a handle MPI_T returned (`None` for none).
    pub(crate) fn enum_of(&self, e: Option<RawEnum<'_>>) -> Result<Option<EnumInfo>> {
        let Some(e) = e else { return Ok(None) };
        let mut num = 0;
        let name = fetch_string(|buf| {
            let (n, len) = ffi::enum_get_info(e, buf)?;
            num = n;
            non_negative(len)
        })?;
        let mut items = Vec::with_capacity(non_negative(num)?);
        for item in 0..num {
            let mut value = 0;
            let name = fetch_string(|buf| {
                let (v, len) = ffi::enum_get_item(e, item, buf)?;
                value = v;
                non_negative(len)
            })?;
            items.push(EnumItem { value, name });
        }
        Ok(Some(EnumInfo { name, items }))
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

/// A cached listing of everything MPI_T exposes that can be brought up to date cheaply.
///
/// Indices never change or disappear (MPI-4.1 §16.3.6, §16.3.7, §16.3.9), so a refresh only
/// queries the indices past the counts seen last time; categories, whose member lists may grow,
/// are queried again only when `MPI_T_category_changed` says something changed. Typical use:
/// build it before `MPI_Init`, refresh after, and after loading anything that may add variables.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Control variables seen so far (entries and holes).
    pub cvars: Listing<CvarInfo>,
    /// Performance variables seen so far.
    pub pvars: Listing<PvarInfo>,
    /// Categories, as of the last stamp.
    pub categories: Listing<CategoryInfo>,
    stamp: i32,
}

/// What a [`Mpit::refresh`] of a [`Catalog`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refresh {
    /// Indices of control variables that appeared.
    pub new_cvars: std::ops::Range<usize>,
    /// Indices of performance variables that appeared.
    pub new_pvars: std::ops::Range<usize>,
    /// Whether the categories were queried again (the stamp changed).
    pub categories_changed: bool,
}

impl<T> Listing<T> {
    /// Queries indices `self.count..count` and appends them.
    fn extend_to(&mut self, count: usize, mut query: impl FnMut(usize) -> Result<T>) {
        for i in self.count..count {
            match query(i) {
                Ok(e) => self.entries.push(e),
                Err(e) => self.holes.push((i, e)),
            }
        }
        self.count = self.count.max(count);
    }
}

impl<L: Level> Mpit<L> {
    /// Lists everything now, remembering the category stamp.
    pub fn catalog(&self) -> Result<Catalog> {
        let stamp = self.category_stamp()?;
        Ok(Catalog {
            cvars: self.cvars()?,
            pvars: self.pvars()?,
            categories: self.categories()?,
            stamp,
        })
    }

    /// Brings `catalog` up to date: new variables are queried, old ones are kept as they are.
    pub fn refresh(&self, catalog: &mut Catalog) -> Result<Refresh> {
        let (c0, p0) = (catalog.cvars.count, catalog.pvars.count);
        catalog
            .cvars
            .extend_to(self.cvar_count()?, |i| self.cvar_info(i));
        catalog
            .pvars
            .extend_to(self.pvar_count()?, |i| self.pvar_info(i));
        let stamp = self.category_stamp()?;
        let categories_changed = stamp != catalog.stamp;
        if categories_changed {
            catalog.categories = self.categories()?;
            catalog.stamp = stamp;
        }
        Ok(Refresh {
            new_cvars: c0..catalog.cvars.count,
            new_pvars: p0..catalog.pvars.count,
            categories_changed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan used where `*_get_index` is missing finds what `*_get_index` finds, and
    /// passes through errors that are not about a missing function.
    #[test]
    fn scan_fallback_agrees_with_get_index() {
        let mpit = Mpit::init().unwrap();
        let missing = Error::Mpi {
            class: ErrorClass::NotSupported,
            code: 0,
        };
        let cvars = mpit.cvars().unwrap();
        for v in cvars.entries.iter().step_by(7) {
            let name = v.name.to_str().unwrap();
            let scanned = mpit
                .scan(missing.clone(), name, Mpit::cvar_count, |s, i| {
                    s.cvar_info(i).map(|v| v.name)
                })
                .unwrap();
            assert_eq!(scanned, mpit.cvar_index(name).unwrap(), "{name}");
        }
        let none = mpit
            .scan(
                missing,
                "mpit_rs_no_such_variable",
                Mpit::cvar_count,
                |s, i| s.cvar_info(i).map(|v| v.name),
            )
            .unwrap();
        assert_eq!(none, None);
        let passed = mpit.scan(
            Error::Mpi {
                class: ErrorClass::NotInitialized,
                code: 1,
            },
            "x",
            Mpit::cvar_count,
            |s, i| s.cvar_info(i).map(|v| v.name),
        );
        assert!(matches!(
            passed,
            Err(Error::Mpi {
                class: ErrorClass::NotInitialized,
                ..
            })
        ));
    }
}
