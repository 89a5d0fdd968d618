//! Enumeration and lookup of control variables, performance variables, categories and
//! enumeration types (MPI-4.1 §16.3.5, §16.3.6, §16.3.7, §16.3.9).

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_int};

use mpit_core::{
    Bind, CategoryInfo, CvarInfo, Datatype, EnumInfo, EnumItem, Error, ErrorClass, MpiString,
    PvarClass, PvarInfo, Result, Scope, Verbosity,
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
    /// Queries every index of `indices` (all those below the count, [`Index::all`]).
    pub(crate) fn of<K: Kind>(
        indices: impl ExactSizeIterator<Item = Index<K>>,
        query: impl FnMut(Index<K>) -> Result<T>,
    ) -> Listing<T> {
        let mut listing = Listing {
            entries: Vec::with_capacity(indices.len()),
            holes: Vec::new(),
            count: 0,
        };
        listing.extend(indices, query);
        listing
    }

    /// Queries the indices of `indices` past `self.count` and appends them.
    pub(crate) fn extend<K: Kind>(
        &mut self,
        indices: impl ExactSizeIterator<Item = Index<K>>,
        mut query: impl FnMut(Index<K>) -> Result<T>,
    ) {
        let count = indices.len();
        for i in indices.skip(self.count) {
            match query(i) {
                Ok(e) => self.entries.push(e),
                Err(e) => self.holes.push((i.get(), e)),
            }
        }
        self.count = self.count.max(count);
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

/// Bytes of the buffer on the stack that the first call of a query writes a name into (names
/// of variables, categories, enumerations and items: at most 54 bytes on the MPIs here).
const NAME_BUF: usize = 256;
/// Bytes of the buffer on the stack for a description: all but one fit on the MPIs here (the
/// longest: 1269 bytes, MPICH 4.0.2; 735, Open MPI 5.0; 500, Open MPI 4.1).
const DESC_BUF: usize = 1024;

/// What an `MPI_T_*_get_info` call returned, with the lengths it reported for the name and
/// the description (MPI-4.1 §16.3.3).
pub(crate) trait Described {
    /// `(name length, description length)` as reported.
    fn lens(&self) -> (c_int, c_int);
}

macro_rules! described {
    ($($query:ty),*) => {$(
        impl Described for $query {
            fn lens(&self) -> (c_int, c_int) {
                (self.name_len, self.desc_len)
            }
        }
    )*};
}

described!(
    ffi::CvarQuery<'_>,
    ffi::PvarQuery<'_>,
    ffi::CategoryQuery,
    ffi::EventQuery<'_>,
    ffi::SourceQuery
);

/// What the queries of one listing share: the first buffers, filled anew by each call and never
/// cleared ([`MpiString::from_filled`] reads only what the reported length covers), and the
/// enumerations resolved so far.
pub(crate) struct Scratch<'m> {
    name: [u8; NAME_BUF],
    desc: [u8; DESC_BUF],
    /// By handle: variables that share an enumeration (Open MPI 5: 160 control variables, 41
    /// enumerations) resolve it once. `None` for a single query, which resolves it afresh.
    /// Kept for one listing only, never in the [`Mpit`]: Open MPI frees the enumerations of
    /// the components `MPI_Init` closes, so a handle seen before `MPI_Init` may name another
    /// enumeration after it.
    enums: Option<HashMap<RawEnum<'m>, EnumInfo>>,
    /// The members of a category as C writes them, before they become indices.
    members: Vec<c_int>,
}

impl<'m> Scratch<'m> {
    /// For one listing: enumerations cached.
    pub(crate) fn listing() -> Self {
        Scratch {
            name: [0; NAME_BUF],
            desc: [0; DESC_BUF],
            enums: Some(HashMap::new()),
            members: Vec::new(),
        }
    }

    /// For a single query.
    pub(crate) fn single() -> Self {
        Scratch {
            enums: None,
            ..Scratch::listing()
        }
    }

    /// One `MPI_T_*_get_info` call through `get(name, description)`, with the first buffers:
    /// its result, the name and the description. A string cut by its buffer is fetched again
    /// alone ([`MpiString::fetch_after`], MPI-4.1 §16.3.3): one call in the common case, one
    /// more per string that did not fit (two where the reported length hides the cut).
    pub(crate) fn described<Q: Described>(
        &mut self,
        get: impl FnMut(Option<&mut [u8]>, Option<&mut [u8]>) -> Result<Q>,
    ) -> Result<(Q, MpiString, MpiString)> {
        described_in(&mut self.name, &mut self.desc, get)
    }

    /// `len` members of a category, through one of the `MPI_T_category_get_*` entries (not
    /// called for none), as indices: one allocation, the result's.
    fn members(
        &mut self,
        len: usize,
        get: impl FnOnce(&mut [c_int]) -> Result<()>,
    ) -> Result<Vec<usize>> {
        if len == 0 {
            return Ok(Vec::new());
        }
        self.members.clear();
        self.members.resize(len, -1);
        get(&mut self.members)?;
        let mut out = Vec::with_capacity(len);
        for &m in &self.members {
            out.push(non_negative(m)?);
        }
        Ok(out)
    }

    /// The enumeration behind a handle MPI_T returned (`None` for none), resolved once per
    /// listing.
    pub(crate) fn enum_of(&mut self, e: Option<RawEnum<'m>>) -> Result<Option<EnumInfo>> {
        let Some(e) = e else { return Ok(None) };
        let Some(cache) = &mut self.enums else {
            return enum_info(e).map(Some);
        };
        if let Some(info) = cache.get(&e) {
            return Ok(Some(info.clone()));
        }
        let info = enum_info(e)?;
        cache.insert(e, info.clone());
        Ok(Some(info))
    }
}

/// [`Scratch::described`] with first buffers `name` and `desc`.
fn described_in<Q: Described>(
    name: &mut [u8],
    desc: &mut [u8],
    mut get: impl FnMut(Option<&mut [u8]>, Option<&mut [u8]>) -> Result<Q>,
) -> Result<(Q, MpiString, MpiString)> {
    let q = get(Some(&mut *name), Some(&mut *desc))?;
    let (name_len, desc_len) = q.lens();
    let name = MpiString::fetch_after(name, non_negative(name_len)?, |buf| {
        non_negative(get(buf, None)?.lens().0)
    })?;
    let description = MpiString::fetch_after(desc, non_negative(desc_len)?, |buf| {
        non_negative(get(None, buf)?.lens().1)
    })?;
    Ok((q, name, description))
}

/// One call returning a value and a string through `get(buffer)` (`MPI_T_enum_get_info`,
/// `MPI_T_enum_get_item`), as [`Scratch::described`] does with two.
fn named<T>(
    mut get: impl FnMut(Option<&mut [u8]>) -> Result<(T, c_int)>,
) -> Result<(T, MpiString)> {
    let mut buf = [0u8; NAME_BUF];
    let (value, len) = get(Some(&mut buf))?;
    let name = MpiString::fetch_after(&buf, non_negative(len)?, |b| non_negative(get(b)?.1))?;
    Ok((value, name))
}

/// `MPI_T_enum_get_info` and `MPI_T_enum_get_item` of every item: one call each.
fn enum_info(e: RawEnum<'_>) -> Result<EnumInfo> {
    let (num, name) = named(|buf| ffi::enum_get_info(e, buf))?;
    let mut items = Vec::with_capacity(non_negative(num)?);
    for item in 0..num {
        let (value, name) = named(|buf| ffi::enum_get_item(e, item, buf))?;
        items.push(EnumItem { value, name });
    }
    Ok(EnumInfo { name, items })
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

    /// [`Mpit::cvar_info`] of a checked index, its enumeration resolved afresh.
    pub(crate) fn cvar_info_at(&self, i: Index<Cvar>) -> Result<CvarInfo> {
        self.cvar_info_in(i, &mut Scratch::single())
    }

    /// One `MPI_T_cvar_get_info` call in the common case (see [`Scratch::described`]), plus
    /// the enumeration's calls unless `scratch` has it.
    fn cvar_info_in<'m>(&'m self, i: Index<Cvar>, scratch: &mut Scratch<'m>) -> Result<CvarInfo> {
        let (r, name, description) =
            scratch.described(|n, d| ffi::cvar_get_info(&self.init, i, n, d))?;
        Ok(CvarInfo {
            index: i.get(),
            name,
            verbosity: Verbosity::from_raw(r.verbosity)?,
            datatype: Datatype::from_raw(r.datatype)?,
            enumtype: scratch.enum_of(r.enumtype)?,
            description,
            bind: Bind::from_raw(r.bind)?,
            scope: Scope::from_raw(r.scope)?,
        })
    }

    /// Every control variable, holes reported per index.
    pub fn cvars(&self) -> Result<Listing<CvarInfo>> {
        let mut scratch = Scratch::listing();
        Ok(Listing::of(Index::all(&self.init)?, |i| {
            self.cvar_info_in(i, &mut scratch)
        }))
    }

    /// Everything `MPI_T_pvar_get_info` says about performance variable `index`.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_get_info`.
    #[doc(alias = "MPI_T_pvar_get_info")]
    pub fn pvar_info(&self, index: usize) -> Result<PvarInfo> {
        self.pvar_info_at(index_arg(&self.init, index)?)
    }

    /// [`Mpit::pvar_info`] of a checked index, its enumeration resolved afresh.
    pub(crate) fn pvar_info_at(&self, i: Index<Pvar>) -> Result<PvarInfo> {
        self.pvar_info_in(i, &mut Scratch::single())
    }

    /// As [`Mpit::cvar_info_in`], for `MPI_T_pvar_get_info`.
    fn pvar_info_in<'m>(&'m self, i: Index<Pvar>, scratch: &mut Scratch<'m>) -> Result<PvarInfo> {
        let (r, name, description) =
            scratch.described(|n, d| ffi::pvar_get_info(&self.init, i, n, d))?;
        Ok(PvarInfo {
            index: i.get(),
            name,
            verbosity: Verbosity::from_raw(r.verbosity)?,
            class: PvarClass::from_raw(r.class)?,
            datatype: Datatype::from_raw(r.datatype)?,
            enumtype: scratch.enum_of(r.enumtype)?,
            description,
            bind: Bind::from_raw(r.bind)?,
            readonly: r.readonly,
            continuous: r.continuous,
            atomic: r.atomic,
        })
    }

    /// Every performance variable, holes reported per index.
    pub fn pvars(&self) -> Result<Listing<PvarInfo>> {
        let mut scratch = Scratch::listing();
        Ok(Listing::of(Index::all(&self.init)?, |i| {
            self.pvar_info_in(i, &mut scratch)
        }))
    }

    /// Everything about category `index`: name, description, and its member control
    /// variables, performance variables, subcategories and (with the event API) event types.
    ///
    /// MPI-4.1 §16.3.9, `MPI_T_category_get_info`.
    #[doc(alias = "MPI_T_category_get_info")]
    pub fn category_info(&self, index: usize) -> Result<CategoryInfo> {
        self.category_info_in(index_arg(&self.init, index)?, &mut Scratch::single())
    }

    /// One `MPI_T_category_get_info` call in the common case (see [`Scratch::described`]),
    /// and one per non-empty member list (with the event API, one more for the number of event
    /// types).
    fn category_info_in(&self, i: Index<Category>, scratch: &mut Scratch) -> Result<CategoryInfo> {
        let init = &self.init;
        let (r, name, description) =
            scratch.described(|n, d| ffi::category_get_info(init, i, n, d))?;
        let (num_cvars, num_pvars, num_categories) = (
            non_negative(r.num_cvars)?,
            non_negative(r.num_pvars)?,
            non_negative(r.num_categories)?,
        );
        let (num_events, events) = if mpit_sys::consts::HAS_EVENTS {
            let ne = non_negative(ffi::category_get_num_events(init, i)?)?;
            (
                Some(ne),
                scratch.members(ne, |out| ffi::category_get_events(init, i, out))?,
            )
        } else {
            (None, Vec::new())
        };
        Ok(CategoryInfo {
            index: i.get(),
            name,
            description,
            num_cvars,
            num_pvars,
            num_categories,
            num_events,
            cvars: scratch.members(num_cvars, |out| ffi::category_get_cvars(init, i, out))?,
            pvars: scratch.members(num_pvars, |out| ffi::category_get_pvars(init, i, out))?,
            categories: scratch.members(num_categories, |out| {
                ffi::category_get_categories(init, i, out)
            })?,
            events,
        })
    }

    /// Every category, holes reported per index.
    pub fn categories(&self) -> Result<Listing<CategoryInfo>> {
        let mut scratch = Scratch::listing();
        Ok(Listing::of(Index::all(&self.init)?, |i| {
            self.category_info_in(i, &mut scratch)
        }))
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
        let mut scratch = Scratch::listing();
        catalog.cvars.extend(Index::all(&self.init)?, |i| {
            self.cvar_info_in(i, &mut scratch)
        });
        catalog.pvars.extend(Index::all(&self.init)?, |i| {
            self.pvar_info_in(i, &mut scratch)
        });
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

    /// The tests of this binary take turns: below `MPI_THREAD_MULTIPLE` MPI_T is confined to one
    /// thread at a time.
    fn turn() -> std::sync::MutexGuard<'static, ()> {
        static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
        TURN.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every name and description of `kind`, fetched by [`described_in`] with first buffers of
    /// `N` and `D` bytes, not cleared between the calls, through `get(index, name,
    /// description)`.
    fn strings<K: Kind, Q: Described, const N: usize, const D: usize>(
        mpit: &Mpit,
        get: impl Fn(Index<K>, Option<&mut [u8]>, Option<&mut [u8]>) -> Result<Q>,
    ) -> Vec<Result<(MpiString, MpiString)>> {
        let (mut name, mut desc) = ([0u8; N], [0u8; D]);
        Index::<K>::all(&mpit.init)
            .unwrap()
            .map(|i| {
                described_in(&mut name, &mut desc, |n, d| get(i, n, d)).map(|(_, n, d)| (n, d))
            })
            .collect()
    }

    /// MPI-4.1 §16.3.3 against the installed MPI: first buffers too small for most strings
    /// give exactly the strings that the stack buffers give, for every control variable,
    /// performance variable and category: a cut string is fetched again, into a buffer of the
    /// reported length where that length shows the cut, after a length query where it does
    /// not (MPICH 4.0.2, Open MPI 4.1 and 5.0 report the length of what they wrote). With the
    /// stack buffers, this is the path of a description longer than they are.
    #[test]
    fn cut_strings_are_fetched_whole() {
        let _turn = turn();
        let mpit = Mpit::init().unwrap();
        let init = &mpit.init;
        let cvar =
            |i, n: Option<&mut [u8]>, d: Option<&mut [u8]>| ffi::cvar_get_info(init, i, n, d);
        let pvar =
            |i, n: Option<&mut [u8]>, d: Option<&mut [u8]>| ffi::pvar_get_info(init, i, n, d);
        let category =
            |i, n: Option<&mut [u8]>, d: Option<&mut [u8]>| ffi::category_get_info(init, i, n, d);
        let full = strings::<Cvar, _, NAME_BUF, DESC_BUF>(&mpit, cvar);
        assert!(!full.is_empty());
        assert!(
            full.iter()
                .any(|r| r.as_ref().is_ok_and(|(_, d)| d.len() > 16))
        );
        assert_eq!(full, strings::<Cvar, _, 8, 16>(&mpit, cvar));
        assert_eq!(full, strings::<Cvar, _, 2, 2>(&mpit, cvar));
        let full = strings::<Pvar, _, NAME_BUF, DESC_BUF>(&mpit, pvar);
        assert_eq!(full, strings::<Pvar, _, 8, 16>(&mpit, pvar));
        assert_eq!(full, strings::<Pvar, _, 2, 2>(&mpit, pvar));
        let full = strings::<Category, _, NAME_BUF, DESC_BUF>(&mpit, category);
        assert_eq!(full, strings::<Category, _, 8, 16>(&mpit, category));
        assert_eq!(full, strings::<Category, _, 2, 2>(&mpit, category));
    }

    /// The scan used where `*_get_index` is missing finds what `*_get_index` finds, and
    /// passes through errors that are not about a missing function.
    #[test]
    fn scan_fallback_agrees_with_get_index() {
        let _turn = turn();
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
