//! Enumeration and lookup of control variables, performance variables, categories and
//! enumeration types (MPI-4.1 §16.3.5, §16.3.6, §16.3.7, §16.3.9).

use std::ffi::{CString, c_char, c_int};
use std::ptr;

use mpit_core::{
    CategoryInfo, CvarInfo, EnumInfo, EnumItem, Error, ErrorClass, MpiString, PvarClass, PvarInfo,
    Result, fetch_string,
};
use mpit_sys as sys;

use crate::init::{Mpit, level::Level};
use crate::raw::{self, c_len, check, non_negative};

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

/// `(buffer pointer, length)` for one string argument of the convention (MPI-4.1 §16.3.3).
fn string_arg(buf: &mut Option<&mut [u8]>) -> Result<(*mut c_char, c_int)> {
    Ok(match buf {
        Some(b) => (b.as_mut_ptr().cast(), c_len(b.len())?),
        None => (ptr::null_mut(), 0),
    })
}

/// `index` as a C int after checking it against the current `count`. Checked here rather than
/// left to MPI: MPICH 4.0.2's `MPI_T_pvar_get_info` segfaults on an out-of-range index instead
/// of returning `MPI_T_ERR_INVALID_INDEX`.
fn index_arg(index: usize, count: usize) -> Result<c_int> {
    if index >= count {
        return Err(Error::Mpi {
            class: ErrorClass::InvalidIndex,
            code: sys::MPI_T_ERR_INVALID_INDEX,
        });
    }
    c_int::try_from(index).map_err(|_| Error::LengthOverflow)
}

/// A name as the NUL-terminated string `*_get_index` takes.
fn c_name(name: &str) -> Result<CString> {
    CString::new(name).map_err(|e| Error::InteriorNul {
        position: e.nul_position(),
    })
}

/// Fixed-size out-parameters of `MPI_T_cvar_get_info`.
struct CvarRaw {
    verbosity: c_int,
    datatype: sys::MPI_Datatype,
    enumtype: sys::MPI_T_enum,
    bind: c_int,
    scope: c_int,
}

/// Fixed-size out-parameters of `MPI_T_pvar_get_info`.
struct PvarRaw {
    verbosity: c_int,
    class: c_int,
    datatype: sys::MPI_Datatype,
    enumtype: sys::MPI_T_enum,
    bind: c_int,
    readonly: c_int,
    continuous: c_int,
    atomic: c_int,
}

impl<L: Level> Mpit<L> {
    fn num(&self, f: unsafe extern "C" fn(*mut c_int) -> c_int) -> Result<usize> {
        let mut n = 0;
        // SAFETY: MPI_T is initialised while `self` lives; `n` is a valid out-pointer.
        check(unsafe { f(&mut n) })?;
        non_negative(n)
    }

    /// The number of control variables (it may grow, e.g. after `MPI_Init`).
    #[doc(alias = "MPI_T_cvar_get_num")]
    pub fn cvar_count(&self) -> Result<usize> {
        self.num(sys::MPI_T_cvar_get_num)
    }

    /// The number of performance variables (it may grow).
    #[doc(alias = "MPI_T_pvar_get_num")]
    pub fn pvar_count(&self) -> Result<usize> {
        self.num(sys::MPI_T_pvar_get_num)
    }

    /// The number of categories (it may grow).
    #[doc(alias = "MPI_T_category_get_num")]
    pub fn category_count(&self) -> Result<usize> {
        self.num(sys::MPI_T_category_get_num)
    }

    /// A stamp that changes whenever a category is added or changed: compare two stamps to
    /// know whether a refresh of a listing is needed.
    #[doc(alias = "MPI_T_category_changed")]
    pub fn category_stamp(&self) -> Result<i32> {
        let mut stamp = 0;
        // SAFETY: MPI_T is initialised; valid out-pointer.
        check(unsafe { sys::MPI_T_category_changed(&mut stamp) })?;
        Ok(stamp)
    }

    fn cvar_raw(
        &self,
        index: c_int,
        name: Option<&mut [u8]>,
        desc: Option<&mut [u8]>,
    ) -> Result<(CvarRaw, c_int, c_int)> {
        let (mut name, mut desc) = (name, desc);
        let (name_ptr, mut name_len) = string_arg(&mut name)?;
        let (desc_ptr, mut desc_len) = string_arg(&mut desc)?;
        let mut r = CvarRaw {
            verbosity: 0,
            datatype: sys::MPI_DATATYPE_NULL,
            enumtype: sys::MPI_T_ENUM_NULL,
            bind: 0,
            scope: 0,
        };
        // SAFETY: MPI_T is initialised; string buffers are valid for their lengths (or null
        // with length 0); every other argument is a valid out-pointer.
        check(unsafe {
            sys::MPI_T_cvar_get_info(
                index,
                name_ptr,
                &mut name_len,
                &mut r.verbosity,
                &mut r.datatype,
                &mut r.enumtype,
                desc_ptr,
                &mut desc_len,
                &mut r.bind,
                &mut r.scope,
            )
        })?;
        Ok((r, name_len, desc_len))
    }

    /// Everything `MPI_T_cvar_get_info` says about control variable `index`, with its
    /// enumeration resolved.
    #[doc(alias = "MPI_T_cvar_get_info")]
    pub fn cvar_info(&self, index: usize) -> Result<CvarInfo> {
        let i = index_arg(index, self.cvar_count()?)?;
        let (r, _, _) = self.cvar_raw(i, None, None)?;
        let name = fetch_string(|buf| non_negative(self.cvar_raw(i, buf, None)?.1))?;
        let description = fetch_string(|buf| non_negative(self.cvar_raw(i, None, buf)?.2))?;
        Ok(CvarInfo {
            index,
            name,
            verbosity: raw::verbosity(r.verbosity)?,
            datatype: raw::datatype(r.datatype)?,
            enumtype: self.enum_of(r.enumtype)?,
            description,
            bind: raw::bind(r.bind)?,
            scope: raw::scope(r.scope)?,
        })
    }

    /// Every control variable, holes reported per index.
    pub fn cvars(&self) -> Result<Listing<CvarInfo>> {
        Ok(Listing::collect(self.cvar_count()?, |i| self.cvar_info(i)))
    }

    fn pvar_raw(
        &self,
        index: c_int,
        name: Option<&mut [u8]>,
        desc: Option<&mut [u8]>,
    ) -> Result<(PvarRaw, c_int, c_int)> {
        let (mut name, mut desc) = (name, desc);
        let (name_ptr, mut name_len) = string_arg(&mut name)?;
        let (desc_ptr, mut desc_len) = string_arg(&mut desc)?;
        let mut r = PvarRaw {
            verbosity: 0,
            class: 0,
            datatype: sys::MPI_DATATYPE_NULL,
            enumtype: sys::MPI_T_ENUM_NULL,
            bind: 0,
            readonly: 0,
            continuous: 0,
            atomic: 0,
        };
        // SAFETY: as in `cvar_raw`.
        check(unsafe {
            sys::MPI_T_pvar_get_info(
                index,
                name_ptr,
                &mut name_len,
                &mut r.verbosity,
                &mut r.class,
                &mut r.datatype,
                &mut r.enumtype,
                desc_ptr,
                &mut desc_len,
                &mut r.bind,
                &mut r.readonly,
                &mut r.continuous,
                &mut r.atomic,
            )
        })?;
        Ok((r, name_len, desc_len))
    }

    /// Everything `MPI_T_pvar_get_info` says about performance variable `index`.
    #[doc(alias = "MPI_T_pvar_get_info")]
    pub fn pvar_info(&self, index: usize) -> Result<PvarInfo> {
        let i = index_arg(index, self.pvar_count()?)?;
        let (r, _, _) = self.pvar_raw(i, None, None)?;
        let name = fetch_string(|buf| non_negative(self.pvar_raw(i, buf, None)?.1))?;
        let description = fetch_string(|buf| non_negative(self.pvar_raw(i, None, buf)?.2))?;
        Ok(PvarInfo {
            index,
            name,
            verbosity: raw::verbosity(r.verbosity)?,
            class: raw::pvar_class(r.class)?,
            datatype: raw::datatype(r.datatype)?,
            enumtype: self.enum_of(r.enumtype)?,
            description,
            bind: raw::bind(r.bind)?,
            readonly: r.readonly != 0,
            continuous: r.continuous != 0,
            atomic: r.atomic != 0,
        })
    }

    /// Every performance variable, holes reported per index.
    pub fn pvars(&self) -> Result<Listing<PvarInfo>> {
        Ok(Listing::collect(self.pvar_count()?, |i| self.pvar_info(i)))
    }

    fn category_raw(
        &self,
        index: c_int,
        name: Option<&mut [u8]>,
        desc: Option<&mut [u8]>,
    ) -> Result<([c_int; 3], c_int, c_int)> {
        let (mut name, mut desc) = (name, desc);
        let (name_ptr, mut name_len) = string_arg(&mut name)?;
        let (desc_ptr, mut desc_len) = string_arg(&mut desc)?;
        let mut n = [0; 3];
        let [c, p, k] = &mut n;
        // SAFETY: as in `cvar_raw`.
        check(unsafe {
            sys::MPI_T_category_get_info(
                index,
                name_ptr,
                &mut name_len,
                desc_ptr,
                &mut desc_len,
                c,
                p,
                k,
            )
        })?;
        Ok((n, name_len, desc_len))
    }

    fn members(
        &self,
        index: c_int,
        len: usize,
        f: unsafe extern "C" fn(c_int, c_int, *mut c_int) -> c_int,
    ) -> Result<Vec<usize>> {
        let mut v: Vec<c_int> = vec![-1; len];
        // SAFETY: `v` holds `len` ints and MPI writes at most `len` of them.
        check(unsafe { f(index, c_len(len)?, v.as_mut_ptr()) })?;
        v.into_iter().map(non_negative).collect()
    }

    /// Everything about category `index`: name, description, and its member control
    /// variables, performance variables, subcategories and (with the event API) event types.
    #[doc(alias = "MPI_T_category_get_info")]
    pub fn category_info(&self, index: usize) -> Result<CategoryInfo> {
        let i = index_arg(index, self.category_count()?)?;
        let ([nc, np, nk], _, _) = self.category_raw(i, None, None)?;
        let name = fetch_string(|buf| non_negative(self.category_raw(i, buf, None)?.1))?;
        let description = fetch_string(|buf| non_negative(self.category_raw(i, None, buf)?.2))?;
        let (num_cvars, num_pvars, num_categories) =
            (non_negative(nc)?, non_negative(np)?, non_negative(nk)?);
        #[cfg(mpit_events)]
        let (num_events, events) = {
            let mut ne = 0;
            // SAFETY: MPI_T is initialised; valid out-pointer.
            check(unsafe { sys::MPI_T_category_get_num_events(i, &mut ne) })?;
            let ne = non_negative(ne)?;
            (
                Some(ne),
                self.members(i, ne, sys::MPI_T_category_get_events)?,
            )
        };
        #[cfg(not(mpit_events))]
        let (num_events, events) = (None, Vec::new());
        Ok(CategoryInfo {
            index,
            name,
            description,
            num_cvars,
            num_pvars,
            num_categories,
            num_events,
            cvars: self.members(i, num_cvars, sys::MPI_T_category_get_cvars)?,
            pvars: self.members(i, num_pvars, sys::MPI_T_category_get_pvars)?,
            categories: self.members(i, num_categories, sys::MPI_T_category_get_categories)?,
            events,
        })
    }

    /// Every category, holes reported per index.
    pub fn categories(&self) -> Result<Listing<CategoryInfo>> {
        Ok(Listing::collect(self.category_count()?, |i| {
            self.category_info(i)
        }))
    }

    /// The enumeration behind a handle MPI_T returned (`None` for `MPI_T_ENUM_NULL`).
    pub(crate) fn enum_of(&self, e: sys::MPI_T_enum) -> Result<Option<EnumInfo>> {
        if e == sys::MPI_T_ENUM_NULL {
            return Ok(None);
        }
        let mut num = 0;
        let name = fetch_string(|mut buf| {
            let (p, mut len) = string_arg(&mut buf)?;
            // SAFETY: `e` is an enumeration handle MPI_T returned while initialised; the buffer
            // is valid for `len` bytes (or null with 0); the rest are valid out-pointers.
            check(unsafe { sys::MPI_T_enum_get_info(e, &mut num, p, &mut len) })?;
            non_negative(len)
        })?;
        let mut items = Vec::with_capacity(non_negative(num)?);
        for item in 0..num {
            let mut value = 0;
            let name = fetch_string(|mut buf| {
                let (p, mut len) = string_arg(&mut buf)?;
                // SAFETY: as above; `item` is below the count MPI returned.
                check(unsafe { sys::MPI_T_enum_get_item(e, item, &mut value, p, &mut len) })?;
                non_negative(len)
            })?;
            items.push(EnumItem { value, name });
        }
        Ok(Some(EnumInfo { name, items }))
    }

    pub(crate) fn lookup(
        &self,
        name: &str,
        get: impl FnOnce(*const c_char, &mut c_int) -> c_int,
    ) -> Result<Option<usize>> {
        let c = c_name(name)?;
        let mut index = -1;
        match check(get(c.as_ptr(), &mut index)) {
            Ok(()) => Ok(Some(non_negative(index)?)),
            Err(Error::Mpi {
                class: ErrorClass::InvalidName,
                ..
            }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The index of the control variable called `name` (`None`: no such variable).
    ///
    /// Looked up with `MPI_T_cvar_get_index`; the index is stable for the life of the process,
    /// so look it up once and keep it.
    #[doc(alias = "MPI_T_cvar_get_index")]
    pub fn cvar_index(&self, name: &str) -> Result<Option<usize>> {
        // SAFETY: `n` is a NUL-terminated string alive for the call; `i` a valid out-pointer.
        self.lookup(name, |n, i| unsafe { sys::MPI_T_cvar_get_index(n, i) })
            .or_else(|e| {
                self.scan(e, name, Self::cvar_count, |s, i| {
                    s.cvar_info(i).map(|v| v.name)
                })
            })
    }

    /// The index of the performance variable called `name` in `class` (`None`: no such
    /// variable; names are unique per class).
    #[doc(alias = "MPI_T_pvar_get_index")]
    pub fn pvar_index(&self, name: &str, class: PvarClass) -> Result<Option<usize>> {
        let c = raw::pvar_class_raw(class);
        // SAFETY: as in `cvar_index`.
        self.lookup(name, |n, i| unsafe { sys::MPI_T_pvar_get_index(n, c, i) })
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
    #[doc(alias = "MPI_T_category_get_index")]
    pub fn category_index(&self, name: &str) -> Result<Option<usize>> {
        // SAFETY: as in `cvar_index`.
        self.lookup(name, |n, i| unsafe { sys::MPI_T_category_get_index(n, i) })
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
