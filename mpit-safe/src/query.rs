//! Enumeration and lookup of control variables, performance variables, categories and
//! enumeration types (MPI-4.1 §16.3.5, §16.3.6, §16.3.7, §16.3.9).

#![forbid(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::ffi::{CStr, CString, c_int};
use std::fmt;
use std::ops::ControlFlow;
use std::sync::Arc;

use smallvec::SmallVec;

use mpit_core::{
    Bind, CategoryInfo, CvarInfo, Datatype, EnumInfo, EnumItem, Error, ErrorClass, MpiStr,
    MpiString, PvarClass, PvarInfo, Result, Scope, Verbosity,
};
use mpit_sys as sys;

use crate::ffi::{self, Category, Cvar, EnumKey, Index, Kind, Pvar, RawEnum, TInit};
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
/// Bytes of the buffer on the stack for a description: all fit on the MPIs here (the longest:
/// 1269 bytes, MPICH 4.0.2; 735, Open MPI 5.0; 500, Open MPI 4.1). A cut one costs more than
/// the larger buffer: MPICH and Open MPI hide the cut, so it takes a length query and a fetch,
/// each going over the whole string again.
const DESC_BUF: usize = 2048;

/// Members of a category the buffers of a listing or visit hold before they grow: a guess at a
/// large category, so that a listing allocates them once or twice, not once per doubling.
const MEMBERS: usize = 256;

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

/// What a listing or a visit has resolved so far, so that it resolves it once: the enumerations
/// by handle (variables that share one, Open MPI 5: 160 control variables, 41 enumerations,
/// resolve it once), and the datatype handles (a handful among hundreds of variables; the
/// table of every basic datatype is searched once for each). Kept for one listing or visit
/// only, never in the [`Mpit`]: Open MPI frees the enumerations of the components `MPI_Init`
/// closes, so a handle seen before `MPI_Init` may name another enumeration after it. A single
/// query resolves its enumeration afresh.
/// An enumeration resolved in a listing or visit, by its handle.
type ResolvedEnum = (EnumKey, Arc<EnumInfo>);

pub(crate) struct Resolved {
    /// `None` for a single query. A list searched in order: a few dozen enumerations at most
    /// (41 on Open MPI 5), and an empty one costs nothing to make, where a `HashMap` seeds its
    /// hasher (a visit of Intel MPI's 2 pvars took a tenth longer for it).
    enums: Option<RefCell<Vec<ResolvedEnum>>>,
    /// Datatype handles seen and their datatypes, by a hash of the handle ([`Resolved::datatype`];
    /// no allocation).
    datatypes: [Cell<Option<(sys::MPI_Datatype, Datatype)>>; 8],
}

impl Resolved {
    /// The enumeration behind a handle MPI_T returned (`None` for none), resolved once per
    /// listing or visit: `MPI_T_enum_get_info` and `MPI_T_enum_get_item` of every item, one call each
    /// where the names fit.
    pub(crate) fn resolve(&self, e: Option<RawEnum<'_>>) -> Result<Option<Arc<EnumInfo>>> {
        let Some(e) = e else { return Ok(None) };
        let Some(memo) = &self.enums else {
            return enum_info(e).map(|info| Some(Arc::new(info)));
        };
        let key = e.key();
        if let Some((_, info)) = memo.borrow().iter().find(|(k, _)| *k == key) {
            return Ok(Some(Arc::clone(info)));
        }
        let info = Arc::new(enum_info(e)?);
        memo.borrow_mut().push((key, Arc::clone(&info)));
        Ok(Some(info))
    }

    /// The datatype of a handle MPI_T returned ([`RawConstant::from_raw`]), decoded once per
    /// listing or visit: a table indexed by a hash of the handle's bits (a pointer in Open
    /// MPI, an int in MPICH), so a handle seen before costs a multiply, a load and a compare;
    /// two handles on one slot take turns.
    #[inline(always)]
    fn datatype(&self, raw: sys::MPI_Datatype) -> Result<Datatype> {
        let bits = crate::ffi::datatype_bits(raw);
        let slot = &self.datatypes[(bits.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 61) as usize];
        match slot.get() {
            Some((h, dt)) if h == raw => Ok(dt),
            _ => Self::decode_datatype(slot, raw),
        }
    }

    /// [`Resolved::datatype`] of a handle not in its slot: decoded and kept there.
    #[cold]
    #[inline(never)]
    fn decode_datatype(
        slot: &Cell<Option<(sys::MPI_Datatype, Datatype)>>,
        raw: sys::MPI_Datatype,
    ) -> Result<Datatype> {
        let dt = Datatype::from_raw(raw)?;
        slot.set(Some((raw, dt)));
        Ok(dt)
    }
}

impl fmt::Debug for Resolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resolved").finish_non_exhaustive()
    }
}

/// Where a string cut by its first buffer is kept once fetched whole, for the name and the
/// description of the record being made.
type Spill = (Option<MpiString>, Option<MpiString>);

/// What the queries of one listing or visit share: the first buffers, filled anew by each call
/// and never cleared ([`MpiStr::from_filled`] reads only what the reported length covers), the
/// strings that did not fit them, the enumerations resolved so far, and the member lists of
/// the category being made.
pub(crate) struct Scratch {
    /// The first buffers, taken from (and given back to) this thread's spare pair: zeroing
    /// 2.3 KiB afresh per listing cost as much as a tenth of a listing of Open MPI's pvars.
    /// (`None` only once given back, in `drop`.)
    bufs: Option<Box<Buffers>>,
    /// How much of `name` and `desc` the first call gets (all of them but in the tests of the
    /// cut-string path).
    first: (usize, usize),
    spill: Spill,
    resolved: Resolved,
}

/// The buffers of a [`Scratch`], kept per thread between listings with their capacity.
struct Buffers {
    name: [u8; NAME_BUF],
    desc: [u8; DESC_BUF],
    /// The members of the category being made as C writes them: event types, control
    /// variables, performance variables, categories, one list after the other.
    members: Vec<c_int>,
}

thread_local! {
    /// A pair of first buffers kept between listings (one pair: a listing made inside another
    /// listing's visitor gets fresh ones).
    static SPARE: std::cell::Cell<Option<Box<Buffers>>> = const { std::cell::Cell::new(None) };
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(bufs) = self.bufs.take() {
            let _ = SPARE.try_with(|s| s.set(Some(bufs)));
        }
    }
}

impl Buffers {
    const EMPTY: Buffers = Buffers {
        name: [0; NAME_BUF],
        desc: [0; DESC_BUF],
        members: Vec::new(),
    };

    /// This thread's spare pair, or a new one. Their bytes are whatever the last calls wrote:
    /// [`MpiStr::from_filled`] reads only what a call reports having written.
    fn take() -> Box<Buffers> {
        SPARE
            .try_with(|s| s.take())
            .ok()
            .flatten()
            .unwrap_or_else(Buffers::new)
    }

    fn new() -> Box<Buffers> {
        Box::new(Buffers::EMPTY)
    }
}

impl Scratch {
    /// For one listing or visit: enumerations cached.
    pub(crate) fn listing() -> Self {
        Scratch {
            bufs: Some(Buffers::take()),
            first: (NAME_BUF, DESC_BUF),
            spill: (None, None),
            resolved: Resolved {
                enums: Some(RefCell::default()),
                datatypes: Default::default(),
            },
        }
    }

    /// For one listing or visit whose first calls get only `name` and `desc` bytes of the
    /// buffers: the cut-string path for most strings.
    #[cfg(test)]
    fn with_first(name: usize, desc: usize) -> Self {
        let mut s = Scratch::listing();
        s.first = (name.min(NAME_BUF), desc.min(DESC_BUF));
        s
    }

    /// For a single query.
    pub(crate) fn single() -> Self {
        let mut s = Scratch::listing();
        s.resolved.enums = None;
        s
    }

    /// One `MPI_T_*_get_info` call through `get(name, description)`, with the first buffers:
    /// its result, the name and the description, borrowed from the buffers where they fit. A
    /// string cut by its buffer is fetched again alone ([`MpiString::fetch_after`], MPI-4.1
    /// §16.3.3): one call in the common case, one more per string that did not fit (two where
    /// the reported length hides the cut). Also gives what the listing has resolved, alongside.
    /// The strings come as the bytes before the NUL the call reported, in which
    /// [`MpiStr::until_nul`] finds the string when it is asked for.
    #[inline(always)]
    pub(crate) fn described<Q: Described>(
        &mut self,
        get: impl FnMut(Option<&mut [u8]>, Option<&mut [u8]>) -> Result<Q>,
    ) -> Result<(Q, &[u8], &[u8], &Resolved)> {
        let (n, d) = self.first;
        let bufs = self.bufs.get_or_insert_with(Buffers::new);
        let (q, name, description) = described_in(
            &mut bufs.name[..n],
            &mut bufs.desc[..d],
            &mut self.spill,
            get,
        )?;
        Ok((q, name, description, &self.resolved))
    }

    /// [`Scratch::described`] with owned strings.
    pub(crate) fn described_owned<Q: Described>(
        &mut self,
        get: impl FnMut(Option<&mut [u8]>, Option<&mut [u8]>) -> Result<Q>,
    ) -> Result<(Q, MpiString, MpiString)> {
        let (q, name, description, _) = self.described(get)?;
        Ok((
            q,
            MpiStr::until_nul(name).to_mpi_string(),
            MpiStr::until_nul(description).to_mpi_string(),
        ))
    }

    /// The enumeration behind a handle MPI_T returned (`None` for none), resolved once per
    /// listing.
    pub(crate) fn enum_of(&self, e: Option<RawEnum<'_>>) -> Result<Option<Arc<EnumInfo>>> {
        self.resolved.resolve(e)
    }
}

/// [`Scratch::described`] with first buffers `name` and `desc`, a cut string kept in `spill`.
#[inline(always)]
fn described_in<'s, Q: Described>(
    name: &'s mut [u8],
    desc: &'s mut [u8],
    spill: &'s mut Spill,
    mut get: impl FnMut(Option<&mut [u8]>, Option<&mut [u8]>) -> Result<Q>,
) -> Result<(Q, &'s [u8], &'s [u8])> {
    let q = get(Some(&mut *name), Some(&mut *desc))?;
    let (name_len, desc_len) = q.lens();
    let (name_spill, desc_spill) = spill;
    let name = filled(name, non_negative(name_len)?, name_spill, |buf| {
        non_negative(get(buf, None)?.lens().0)
    })?;
    let description = filled(desc, non_negative(desc_len)?, desc_spill, |buf| {
        non_negative(get(None, buf)?.lens().1)
    })?;
    Ok((q, name, description))
}

/// The string a first call wrote into `buf` (reporting `reported`): the bytes of `buf` before
/// the NUL where the reported length puts it, if `buf` certainly holds all of it, else the
/// string fetched whole through `fetch` into `spill` ([`MpiString::fetch_after`]). One
/// compare and one load: whether an earlier NUL ends the string is left to
/// [`MpiStr::until_nul`], when the string is asked for (a conforming implementation writes
/// none; the string up to it is what a fetch of the whole would give, as C reads it).
///
/// A string is whole in `buf` when the length plus one reported, `n`, is below `buf.len()` and
/// byte `n - 1` is a NUL (a reported 0: the empty string, the convention's length of no
/// string). A cut one is never taken: a conforming implementation then reports more than
/// `buf.len()`, and one that reports the length it wrote (MPICH 4.0.2, Open MPI 4.1 and 5.0)
/// reports `buf.len()`. Only the bytes the reported length covers are read, so `buf` need not
/// be cleared: stale bytes past them, or where no NUL was written, are never taken.
#[inline(always)]
fn filled<'s>(
    buf: &'s [u8],
    reported: usize,
    spill: &'s mut Option<MpiString>,
    fetch: impl FnMut(Option<&mut [u8]>) -> Result<usize>,
) -> Result<&'s [u8]> {
    match reported {
        0 => Ok(&[]),
        n if n < buf.len() && buf[n - 1] == 0 => Ok(&buf[..n - 1]),
        _ => spilled(buf, reported, spill, fetch),
    }
}

/// [`filled`] of a string that did not fit: out of line, so that the common case stays small.
#[cold]
#[inline(never)]
fn spilled<'s>(
    buf: &[u8],
    reported: usize,
    spill: &'s mut Option<MpiString>,
    fetch: impl FnMut(Option<&mut [u8]>) -> Result<usize>,
) -> Result<&'s [u8]> {
    Ok(spill
        .insert(MpiString::fetch_after(buf, reported, fetch)?)
        .as_bytes())
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

/// What a visit ([`Mpit::visit_cvars`], [`Mpit::visit_pvars`], [`Mpit::visit_categories`])
/// that went through every index found besides what it showed: the count, and the indices
/// whose query failed, as a [`Listing`] has them.
#[derive(Debug, Clone, Default)]
pub struct Visited {
    /// The count the implementation reported when the visit began.
    pub count: usize,
    /// Every index below the count whose query failed (not shown), with its error.
    pub holes: Holes,
}

/// The indices of a [`Visited`] whose query failed, each with its error, in the order found
/// (index order): indices in a row that failed with equal errors are kept as one run, and the
/// first two runs in place. A visit of Open MPI's pvars then allocates nothing for its holes
/// (after `MPI_Init`, `MPI_T_ERR_INVALID_INDEX` each: 4.1.4 28 of 33 in 2 runs, 5.0.11 15 of
/// 20 in 1) and keeps no copy per hole, where a `Vec` of `(index, error)` cost an allocation
/// and a copy and a drop per hole. Its cvars and categories have more runs (4.1.4: 28 and 19),
/// which go to the heap.
///
/// ```
/// use mpit_safe::{Error, ErrorClass, Holes};
///
/// let gone = Error::from_class(ErrorClass::InvalidIndex, 57);
/// let mut holes = Holes::default();
/// for i in [3, 4, 5, 9] {
///     holes.push(i, gone.clone());
/// }
/// assert_eq!(holes.len(), 4);
/// assert_eq!(holes.indices().collect::<Vec<_>>(), [3, 4, 5, 9]);
/// assert_eq!(holes.get(4), Some(&gone));
/// assert_eq!(holes.get(6), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holes {
    runs: SmallVec<[HoleRun; 2]>,
    len: usize,
}

/// `len` indices from `start` on that failed with `error`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HoleRun {
    start: usize,
    len: usize,
    error: Error,
}

impl Holes {
    /// How many holes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every hole as `(index, error)`, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Error)> + '_ {
        self.runs
            .iter()
            .flat_map(|r| (0..r.len).map(move |k| (r.start + k, &r.error)))
    }

    /// The indices, in the order they were added.
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.iter().map(|(i, _)| i)
    }

    /// The error of `index`, if it is a hole (the first one added for it).
    pub fn get(&self, index: usize) -> Option<&Error> {
        self.runs
            .iter()
            .find(|r| index >= r.start && index - r.start < r.len)
            .map(|r| &r.error)
    }

    /// Adds `index` with `error`, after the others: to the last run if it continues it with
    /// an equal error (the error is then dropped, no copy kept).
    #[inline(always)]
    pub fn push(&mut self, index: usize, error: Error) {
        // The common case inline: an MPI error continuing the last run with the same class
        // and code, compared field by field (the derived `==` on `Error` is a call).
        if let Error::Mpi { class, code } = error
            && let Some(last) = self.runs.last_mut()
            && let Error::Mpi {
                class: last_class,
                code: last_code,
            } = last.error
            && (class, code) == (last_class, last_code)
            && last.start.checked_add(last.len) == Some(index)
        {
            last.len += 1;
            self.len += 1;
            // An `Error::Mpi` owns nothing: no drop to call.
            std::mem::forget(error);
            return;
        }
        self.push_other(index, error);
    }

    /// [`Holes::push`] past its common case.
    #[inline(never)]
    fn push_other(&mut self, index: usize, error: Error) {
        self.len += 1;
        if let Some(last) = self.runs.last_mut()
            && last.start.checked_add(last.len) == Some(index)
            && last.error == error
        {
            last.len += 1;
            return;
        }
        self.runs.push(HoleRun {
            start: index,
            len: 1,
            error,
        });
    }
}

impl Extend<(usize, Error)> for Holes {
    fn extend<I: IntoIterator<Item = (usize, Error)>>(&mut self, iter: I) {
        for (i, e) in iter {
            self.push(i, e);
        }
    }
}

impl FromIterator<(usize, Error)> for Holes {
    fn from_iter<I: IntoIterator<Item = (usize, Error)>>(iter: I) -> Self {
        let mut holes = Holes::default();
        holes.extend(iter);
        holes
    }
}

impl From<Holes> for Vec<(usize, Error)> {
    /// The holes as a [`Listing`] has them.
    fn from(holes: Holes) -> Self {
        holes.iter().map(|(i, e)| (i, e.clone())).collect()
    }
}

/// Every index of `indices` through `step` until it breaks; an index whose query fails is a
/// hole.
fn visit<K: Kind, B>(
    indices: impl ExactSizeIterator<Item = Index<K>>,
    mut step: impl FnMut(Index<K>) -> Result<ControlFlow<B>>,
) -> ControlFlow<B, Visited> {
    let mut visited = Visited {
        count: indices.len(),
        holes: Holes::default(),
    };
    for i in indices {
        match step(i) {
            Ok(ControlFlow::Continue(())) => {}
            Ok(ControlFlow::Break(b)) => return ControlFlow::Break(b),
            Err(e) => visited.holes.push(i.get(), e),
        }
    }
    ControlFlow::Continue(visited)
}

/// What `MPI_T_cvar_get_info` says about a control variable, borrowed for the time of one call
/// of the visitor of [`Mpit::visit_cvars`]: the fields of [`CvarInfo`], each decoded when asked
/// for, so that a visit costs what MPI's calls cost and what the visitor reads (a C loop over
/// `MPI_T_cvar_get_info` with fixed buffers decodes nothing it does not look at either). The
/// name and the description are in the buffers of the visit; the enumeration is resolved on
/// demand ([`CvarInfoRef::enumtype`]). A constant outside the standard's is the error of its
/// accessor (and of [`CvarInfoRef::to_owned`], which makes it a hole of [`Mpit::cvars`]).
///
/// MPI-4.1 §16.3.6, `MPI_T_cvar_get_info`.
#[doc(alias = "MPI_T_cvar_get_info")]
pub struct CvarInfoRef<'a> {
    index: usize,
    /// The bytes before the NUL MPI reported ([`MpiStr::until_nul`] on access).
    name: &'a [u8],
    description: &'a [u8],
    verbosity: c_int,
    datatype: sys::MPI_Datatype,
    bind: c_int,
    scope: c_int,
    enumtype: Option<RawEnum<'a>>,
    resolved: &'a Resolved,
}

/// What `MPI_T_pvar_get_info` says about a performance variable, borrowed for the time of one
/// call of the visitor of [`Mpit::visit_pvars`]: the fields of [`PvarInfo`], decoded when asked
/// for, as [`CvarInfoRef`] has those of [`CvarInfo`].
///
/// MPI-4.1 §16.3.7, `MPI_T_pvar_get_info`.
#[doc(alias = "MPI_T_pvar_get_info")]
pub struct PvarInfoRef<'a> {
    index: usize,
    name: &'a [u8],
    description: &'a [u8],
    verbosity: c_int,
    class: c_int,
    datatype: sys::MPI_Datatype,
    bind: c_int,
    readonly: bool,
    continuous: bool,
    atomic: bool,
    enumtype: Option<RawEnum<'a>>,
    resolved: &'a Resolved,
}

/// The accessors every borrowed record has: index, name and description.
macro_rules! named_ref {
    ($($record:ident: $what:literal, $kind:literal, $count:literal;)*) => {$(
        impl<'a> $record<'a> {
            #[doc = concat!("Index of the ", $what, ", in `0..", $count, "`.")]
            #[inline]
            pub fn index(&self) -> usize {
                self.index
            }

            #[doc = concat!("Name, unique among ", $kind, ".")]
            #[inline]
            pub fn name(&self) -> MpiStr<'a> {
                MpiStr::until_nul(self.name)
            }

            /// Description; empty if the implementation provides none.
            #[inline]
            pub fn description(&self) -> MpiStr<'a> {
                MpiStr::until_nul(self.description)
            }
        }
    )*};
}

named_ref! {
    CvarInfoRef: "variable", "control variables", "MPI_T_cvar_get_num";
    PvarInfoRef: "variable", "performance variables of the same class", "MPI_T_pvar_get_num";
    CategoryInfoRef: "category", "categories", "MPI_T_category_get_num";
}

/// The accessors the borrowed variable records share besides [`named_ref`]'s.
macro_rules! variable_ref {
    ($($record:ident),*) => {$(
        impl $record<'_> {
            /// Verbosity level.
            #[inline]
            pub fn verbosity(&self) -> Result<Verbosity> {
                Verbosity::from_raw(self.verbosity)
            }

            /// Datatype of each element.
            #[inline]
            pub fn datatype(&self) -> Result<Datatype> {
                self.resolved.datatype(self.datatype)
            }

            /// Kind of object a handle must be bound to.
            #[inline]
            pub fn bind(&self) -> Result<Bind> {
                Bind::from_raw(self.bind)
            }

            /// Whether the variable has an enumeration (MPI-4.1 §16.3.5): a check without a
            /// call.
            #[inline]
            pub fn has_enumtype(&self) -> bool {
                self.enumtype.is_some()
            }

            /// The enumeration describing the values, if any (`MPI_INT` only): resolved by
            /// `MPI_T_enum_get_info` and `MPI_T_enum_get_item` of every item on the first
            /// request in a visit, shared by every variable of the visit that has it after.
            ///
            /// MPI-4.1 §16.3.5, `MPI_T_enum_get_info`, `MPI_T_enum_get_item`.
            #[doc(alias = "MPI_T_enum_get_info")]
            #[doc(alias = "MPI_T_enum_get_item")]
            pub fn enumtype(&self) -> Result<Option<Arc<EnumInfo>>> {
                self.resolved.resolve(self.enumtype)
            }
        }
    )*};
}

variable_ref!(CvarInfoRef, PvarInfoRef);

impl CvarInfoRef<'_> {
    /// When and how the variable may be written.
    #[inline]
    pub fn scope(&self) -> Result<Scope> {
        Scope::from_raw(self.scope)
    }

    /// The owned record, every field decoded and the enumeration resolved (the first error
    /// of an accessor, in the order of [`CvarInfo`]'s fields).
    pub fn to_owned(&self) -> Result<CvarInfo> {
        Ok(CvarInfo {
            index: self.index,
            name: self.name().to_mpi_string(),
            verbosity: self.verbosity()?,
            datatype: self.datatype()?,
            enumtype: self.enumtype()?,
            description: self.description().to_mpi_string(),
            bind: self.bind()?,
            scope: self.scope()?,
        })
    }
}

impl PvarInfoRef<'_> {
    /// Class: datatypes, starting value and monotonicity.
    #[inline]
    pub fn class(&self) -> Result<PvarClass> {
        PvarClass::from_raw(self.class)
    }

    /// Whether the variable can only be read (not written or reset).
    #[inline]
    pub fn readonly(&self) -> bool {
        self.readonly
    }

    /// Whether the variable is always active (cannot be started or stopped).
    #[inline]
    pub fn continuous(&self) -> bool {
        self.continuous
    }

    /// Whether the variable can be read and reset atomically (`MPI_T_pvar_readreset`).
    #[inline]
    pub fn atomic(&self) -> bool {
        self.atomic
    }

    /// The owned record, every field decoded and the enumeration resolved (the first error
    /// of an accessor, in the order of [`PvarInfo`]'s fields).
    pub fn to_owned(&self) -> Result<PvarInfo> {
        Ok(PvarInfo {
            index: self.index,
            name: self.name().to_mpi_string(),
            verbosity: self.verbosity()?,
            class: self.class()?,
            datatype: self.datatype()?,
            enumtype: self.enumtype()?,
            description: self.description().to_mpi_string(),
            bind: self.bind()?,
            readonly: self.readonly,
            continuous: self.continuous,
            atomic: self.atomic,
        })
    }
}

/// What the borrowed records show of themselves: their fields decoded, an undecodable one as
/// its error.
macro_rules! debug_ref {
    ($($record:ident { $($field:ident),* })*) => {$(
        impl fmt::Debug for $record<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($record))
                    $(.field(stringify!($field), &self.$field()))*
                    .finish_non_exhaustive()
            }
        }
    )*};
}

debug_ref! {
    CvarInfoRef { index, name, verbosity, datatype, description, bind, scope, has_enumtype }
    PvarInfoRef {
        index, name, verbosity, class, datatype, description, bind, readonly, continuous,
        atomic, has_enumtype
    }
    CategoryInfoRef {
        index, name, description, num_cvars, num_pvars, num_categories, num_events, cvars,
        pvars, categories, events
    }
}

/// What `MPI_T_category_get_info` and the member queries say about a category, borrowed for
/// the time of one call of the visitor of [`Mpit::visit_categories`]: the fields of
/// [`CategoryInfo`], strings and member lists in the buffers of the visit.
///
/// MPI-4.1 §16.3.9, `MPI_T_category_get_info`.
#[doc(alias = "MPI_T_category_get_info")]
pub struct CategoryInfoRef<'a> {
    index: usize,
    name: &'a [u8],
    description: &'a [u8],
    /// Whether the implementation has the event interface (else `events` is empty and
    /// [`CategoryInfoRef::num_events`] is `None`).
    has_events: bool,
    cvars: Members<'a>,
    pvars: Members<'a>,
    categories: Members<'a>,
    events: Members<'a>,
}

/// The members of one kind of a category ([`CategoryInfoRef::cvars`], ...): the indices
/// MPI wrote, borrowed as it wrote them (C `int`s, each checked non-negative when the record
/// was made), given as `usize` on access. A visit converts nothing its visitor does not read.
///
/// ```
/// use std::ops::ControlFlow;
/// use mpit_safe::Mpit;
///
/// let mpit = Mpit::init()?;
/// mpit.visit_categories(|c| {
///     let cvars = c.cvars();
///     assert_eq!(cvars.len(), c.num_cvars());
///     let first: Option<usize> = cvars.get(0);
///     assert_eq!(first, cvars.iter().next());
///     assert!(cvars.iter().all(|i| cvars.contains(i)));
///     ControlFlow::<()>::Continue(())
/// })?;
/// # Ok::<(), mpit_safe::Error>(())
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Members<'a>(&'a [c_int]);

impl<'a> Members<'a> {
    /// The number of members.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `k`-th member's index, if there are more than `k`.
    #[inline]
    pub fn get(&self, k: usize) -> Option<usize> {
        self.0.get(k).map(|&m| m as usize)
    }

    /// Whether `index` is a member.
    #[inline]
    pub fn contains(&self, index: usize) -> bool {
        c_int::try_from(index).is_ok_and(|i| self.0.contains(&i))
    }

    /// The members' indices, in MPI's order.
    #[inline]
    pub fn iter(&self) -> MemberIter<'a> {
        MemberIter(self.0.iter())
    }

    /// The members' indices, kept.
    pub fn to_vec(&self) -> Vec<usize> {
        self.iter().collect()
    }

    /// The members as MPI wrote them (each non-negative).
    #[inline]
    pub fn as_raw(&self) -> &'a [c_int] {
        self.0
    }
}

impl fmt::Debug for Members<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq<[usize]> for Members<'_> {
    fn eq(&self, other: &[usize]) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl PartialEq<Vec<usize>> for Members<'_> {
    fn eq(&self, other: &Vec<usize>) -> bool {
        *self == **other
    }
}

impl<'a> IntoIterator for Members<'a> {
    type Item = usize;
    type IntoIter = MemberIter<'a>;

    #[inline]
    fn into_iter(self) -> MemberIter<'a> {
        self.iter()
    }
}

/// The indices of [`Members`], in MPI's order.
#[derive(Clone, Debug)]
pub struct MemberIter<'a>(std::slice::Iter<'a, c_int>);

impl Iterator for MemberIter<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        self.0.next().map(|&m| m as usize)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }

    #[inline]
    fn nth(&mut self, n: usize) -> Option<usize> {
        self.0.nth(n).map(|&m| m as usize)
    }
}

impl DoubleEndedIterator for MemberIter<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<usize> {
        self.0.next_back().map(|&m| m as usize)
    }
}

impl ExactSizeIterator for MemberIter<'_> {}

impl std::iter::FusedIterator for MemberIter<'_> {}

impl<'a> CategoryInfoRef<'a> {
    /// Number of control variables, as declared.
    #[inline]
    pub fn num_cvars(&self) -> usize {
        self.cvars.len()
    }

    /// Number of performance variables, as declared.
    #[inline]
    pub fn num_pvars(&self) -> usize {
        self.pvars.len()
    }

    /// Number of sub-categories, as declared.
    #[inline]
    pub fn num_categories(&self) -> usize {
        self.categories.len()
    }

    /// Number of event types (`MPI_T_category_get_num_events`, MPI-4.0); `None` where the
    /// implementation lacks the event interface.
    #[inline]
    pub fn num_events(&self) -> Option<usize> {
        self.has_events.then_some(self.events.len())
    }

    /// Indices of the control variables (`MPI_T_category_get_cvars`).
    #[inline]
    pub fn cvars(&self) -> Members<'a> {
        self.cvars
    }

    /// Indices of the performance variables (`MPI_T_category_get_pvars`).
    #[inline]
    pub fn pvars(&self) -> Members<'a> {
        self.pvars
    }

    /// Indices of the sub-categories (`MPI_T_category_get_categories`).
    #[inline]
    pub fn categories(&self) -> Members<'a> {
        self.categories
    }

    /// Indices of the event types (`MPI_T_category_get_events`); empty when
    /// [`CategoryInfoRef::num_events`] is `None`.
    #[inline]
    pub fn events(&self) -> Members<'a> {
        self.events
    }

    /// The owned record.
    pub fn to_owned(&self) -> CategoryInfo {
        CategoryInfo {
            index: self.index,
            name: self.name().to_mpi_string(),
            description: self.description().to_mpi_string(),
            num_cvars: self.num_cvars(),
            num_pvars: self.num_pvars(),
            num_categories: self.num_categories(),
            num_events: self.num_events(),
            cvars: self.cvars.to_vec(),
            pvars: self.pvars.to_vec(),
            categories: self.categories.to_vec(),
            events: self.events.to_vec(),
        }
    }
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
        self.with_cvar(i, &mut Scratch::single(), |r| r.to_owned())?
    }

    /// One `MPI_T_cvar_get_info` call in the common case (see [`Scratch::described`]); the
    /// enumeration is resolved when asked for.
    #[inline(always)]
    fn with_cvar<R>(
        &self,
        i: Index<Cvar>,
        scratch: &mut Scratch,
        k: impl FnOnce(&CvarInfoRef<'_>) -> R,
    ) -> Result<R> {
        let (r, name, description, resolved) =
            scratch.described(|n, d| ffi::cvar_get_info(&self.init, i, n, d))?;
        Ok(k(&CvarInfoRef {
            index: i.get(),
            name,
            description,
            verbosity: r.verbosity,
            datatype: r.datatype,
            bind: r.bind,
            scope: r.scope,
            enumtype: r.enumtype,
            resolved,
        }))
    }

    /// Every control variable, holes reported per index.
    pub fn cvars(&self) -> Result<Listing<CvarInfo>> {
        let mut scratch = Scratch::listing();
        Ok(Listing::of(Index::all(&self.init)?, |i| {
            self.with_cvar(i, &mut scratch, |r| r.to_owned())?
        }))
    }

    /// Calls `f` with what `MPI_T_cvar_get_info` says about every control variable, in index
    /// order, until `f` breaks: the names and descriptions borrowed from buffers reused for
    /// every variable, each field decoded and the enumeration resolved only when asked for
    /// ([`CvarInfoRef`]), so a variable costs one `MPI_T_cvar_get_info` call and what `f`
    /// reads, and nothing is allocated (a string longer than the buffers, 256 bytes for a
    /// name and 2048 for a description, is fetched whole as [`Mpit::cvars`] does). For tools
    /// that look at every variable and keep few ([`CvarInfoRef::to_owned`] keeps one);
    /// [`Mpit::cvars`] keeps them all.
    ///
    /// Returns `Break` with what `f` broke with, or `Continue` with the count and the indices
    /// whose query failed ([`Visited`]); a field that does not decode is the error of its
    /// accessor, not a hole (it is one of [`Mpit::cvars`]). Errors: that of
    /// `MPI_T_cvar_get_num`.
    ///
    /// MPI-4.1 §16.3.6, `MPI_T_cvar_get_info`.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use mpit_safe::{Datatype, Mpit, Verbosity};
    ///
    /// let mpit = Mpit::init()?;
    /// // The names of the user-level integer variables, and nothing else kept.
    /// let mut names = Vec::new();
    /// let visited = mpit.visit_cvars(|v| {
    ///     // Each field is decoded when asked for; one that does not decode compares unequal.
    ///     if v.verbosity().is_ok_and(|l| l <= Verbosity::USER_ALL)
    ///         && v.datatype().is_ok_and(|t| t == Datatype::Int)
    ///     {
    ///         names.push(v.name().to_string());
    ///     }
    ///     ControlFlow::<()>::Continue(())
    /// })?;
    /// if let ControlFlow::Continue(visited) = visited {
    ///     println!("{} of {} variables, {} holes", names.len(), visited.count, visited.holes.len());
    /// }
    /// // The first variable with an enumeration, kept whole: the search stops there.
    /// let found = mpit.visit_cvars(|v| match v.has_enumtype() {
    ///     true => ControlFlow::Break(v.to_owned()),
    ///     false => ControlFlow::Continue(()),
    /// })?;
    /// if let ControlFlow::Break(info) = found {
    ///     let info = info?;
    ///     let e = info.enumtype.as_ref().unwrap();
    ///     println!("{}: one of {} values of {}", info.name, e.items.len(), e.name);
    /// }
    /// # Ok::<(), mpit_safe::Error>(())
    /// ```
    #[doc(alias = "MPI_T_cvar_get_info")]
    pub fn visit_cvars<B>(
        &self,
        f: impl FnMut(&CvarInfoRef<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B, Visited>> {
        self.visit_cvars_in(&mut Scratch::listing(), f)
    }

    /// [`Mpit::visit_cvars`] with `scratch`.
    fn visit_cvars_in<B>(
        &self,
        scratch: &mut Scratch,
        mut f: impl FnMut(&CvarInfoRef<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B, Visited>> {
        Ok(visit(Index::all(&self.init)?, |i| {
            self.with_cvar(i, scratch, &mut f)
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
        self.with_pvar(i, &mut Scratch::single(), |r| r.to_owned())?
    }

    /// As [`Mpit::with_cvar`], for `MPI_T_pvar_get_info`.
    #[inline(always)]
    fn with_pvar<R>(
        &self,
        i: Index<Pvar>,
        scratch: &mut Scratch,
        k: impl FnOnce(&PvarInfoRef<'_>) -> R,
    ) -> Result<R> {
        let (r, name, description, resolved) =
            scratch.described(|n, d| ffi::pvar_get_info(&self.init, i, n, d))?;
        Ok(k(&PvarInfoRef {
            index: i.get(),
            name,
            description,
            verbosity: r.verbosity,
            class: r.class,
            datatype: r.datatype,
            bind: r.bind,
            readonly: r.readonly,
            continuous: r.continuous,
            atomic: r.atomic,
            enumtype: r.enumtype,
            resolved,
        }))
    }

    /// Every performance variable, holes reported per index.
    pub fn pvars(&self) -> Result<Listing<PvarInfo>> {
        let mut scratch = Scratch::listing();
        Ok(Listing::of(Index::all(&self.init)?, |i| {
            self.with_pvar(i, &mut scratch, |r| r.to_owned())?
        }))
    }

    /// [`Mpit::visit_cvars`] for performance variables: `f` sees what `MPI_T_pvar_get_info`
    /// says about each, borrowed, until it breaks.
    ///
    /// MPI-4.1 §16.3.7, `MPI_T_pvar_get_info`.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use mpit_safe::{Mpit, PvarClass};
    ///
    /// let mpit = Mpit::init()?;
    /// // How many counters there are, and the first one that can be read and reset at once.
    /// let mut counters = 0;
    /// let atomic = mpit.visit_pvars(|v| {
    ///     counters += usize::from(v.class().is_ok_and(|c| c == PvarClass::Counter));
    ///     if v.atomic() && !v.readonly() {
    ///         ControlFlow::Break(v.index())
    ///     } else {
    ///         ControlFlow::Continue(())
    ///     }
    /// })?;
    /// println!("{counters} counters before {atomic:?}");
    /// # Ok::<(), mpit_safe::Error>(())
    /// ```
    #[doc(alias = "MPI_T_pvar_get_info")]
    pub fn visit_pvars<B>(
        &self,
        f: impl FnMut(&PvarInfoRef<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B, Visited>> {
        self.visit_pvars_in(&mut Scratch::listing(), f)
    }

    /// [`Mpit::visit_pvars`] with `scratch`.
    fn visit_pvars_in<B>(
        &self,
        scratch: &mut Scratch,
        mut f: impl FnMut(&PvarInfoRef<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B, Visited>> {
        Ok(visit(Index::all(&self.init)?, |i| {
            self.with_pvar(i, scratch, &mut f)
        }))
    }

    /// Everything about category `index`: name, description, and its member control
    /// variables, performance variables, subcategories and (with the event API) event types.
    ///
    /// MPI-4.1 §16.3.9, `MPI_T_category_get_info`.
    #[doc(alias = "MPI_T_category_get_info")]
    pub fn category_info(&self, index: usize) -> Result<CategoryInfo> {
        let i = index_arg(&self.init, index)?;
        self.with_category(i, &mut Scratch::single(), |c| c.to_owned())
    }

    /// One `MPI_T_category_get_info` call in the common case (see [`Scratch::described`]),
    /// and one per non-empty member list (with the event API, one more for the number of event
    /// types), into the scratch's member buffer, handed to `k` as [`Members`] views.
    #[inline(always)]
    fn with_category<R>(
        &self,
        i: Index<Category>,
        scratch: &mut Scratch,
        k: impl FnOnce(&CategoryInfoRef<'_>) -> R,
    ) -> Result<R> {
        let init = &self.init;
        let Scratch {
            bufs,
            first: (n, d),
            spill,
            ..
        } = scratch;
        let Buffers {
            name,
            desc,
            members: raw,
        } = &mut **bufs.get_or_insert_with(Buffers::new);
        let (r, name, description) =
            described_in(&mut name[..*n], &mut desc[..*d], spill, |n, d| {
                ffi::category_get_info(init, i, n, d)
            })?;
        let num_events = match mpit_sys::consts::HAS_EVENTS {
            true => ffi::category_get_num_events(init, i)?,
            false => 0,
        };
        // Any negative count: the sign bit of all of them or-ed.
        if (r.num_cvars | r.num_pvars | r.num_categories | num_events) < 0 {
            return Err(Error::LengthOverflow);
        }
        let [ne, num_cvars, num_pvars, num_categories] =
            [num_events, r.num_cvars, r.num_pvars, r.num_categories].map(|n| n as usize);
        // Four non-negative ints: their sum fits a u64 (and a usize wherever it is 64 bits).
        let total = usize::try_from(
            ne as u64 + num_cvars as u64 + num_pvars as u64 + num_categories as u64,
        )
        .map_err(|_| Error::LengthOverflow)?;
        // All lists in one buffer, each written in place by its call (none for an empty one),
        // checked once: C's calls, and no more. The buffer only grows; the lists' part is
        // filled with -1 first, so that an entry MPI left unwritten is refused below.
        if raw.len() < total {
            raw.resize(MEMBERS.max(total), 0);
        }
        let all = &mut raw[..total];
        all.fill(-1);
        let (events, rest) = all.split_at_mut(ne);
        let (cvars, rest) = rest.split_at_mut(num_cvars);
        let (pvars, categories) = rest.split_at_mut(num_pvars);
        if !events.is_empty() {
            ffi::category_get_events(init, i, events)?;
        }
        if !cvars.is_empty() {
            ffi::category_get_cvars(init, i, cvars)?;
        }
        if !pvars.is_empty() {
            ffi::category_get_pvars(init, i, pvars)?;
        }
        if !categories.is_empty() {
            ffi::category_get_categories(init, i, categories)?;
        }
        // A negative (or an entry left unwritten, still -1) is refused: the sign bits or-ed,
        // with no early exit, so vector code.
        let all = &raw[..total];
        if all.iter().fold(0, |any, &m| any | m) < 0 {
            return Err(Error::LengthOverflow);
        }
        let (events, rest) = all.split_at(ne);
        let (cvars, rest) = rest.split_at(num_cvars);
        let (pvars, categories) = rest.split_at(num_pvars);
        Ok(k(&CategoryInfoRef {
            index: i.get(),
            name,
            description,
            has_events: mpit_sys::consts::HAS_EVENTS,
            cvars: Members(cvars),
            pvars: Members(pvars),
            categories: Members(categories),
            events: Members(events),
        }))
    }

    /// Every category, holes reported per index.
    pub fn categories(&self) -> Result<Listing<CategoryInfo>> {
        let mut scratch = Scratch::listing();
        Ok(Listing::of(Index::all(&self.init)?, |i| {
            self.with_category(i, &mut scratch, |c| c.to_owned())
        }))
    }

    /// [`Mpit::visit_cvars`] for categories: `f` sees what `MPI_T_category_get_info` and the
    /// member queries say about each, borrowed (member lists included), until it breaks.
    ///
    /// MPI-4.1 §16.3.9, `MPI_T_category_get_info`.
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use mpit_safe::Mpit;
    ///
    /// let mpit = Mpit::init()?;
    /// // The category that holds control variable 0, if any.
    /// let home = mpit.visit_categories(|c| match c.cvars().contains(0) {
    ///     true => ControlFlow::Break(c.name().to_string()),
    ///     false => ControlFlow::Continue(()),
    /// })?;
    /// println!("{home:?}");
    /// # Ok::<(), mpit_safe::Error>(())
    /// ```
    #[doc(alias = "MPI_T_category_get_info")]
    pub fn visit_categories<B>(
        &self,
        f: impl FnMut(&CategoryInfoRef<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B, Visited>> {
        self.visit_categories_in(&mut Scratch::listing(), f)
    }

    /// [`Mpit::visit_categories`] with `scratch`.
    fn visit_categories_in<B>(
        &self,
        scratch: &mut Scratch,
        mut f: impl FnMut(&CategoryInfoRef<'_>) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B, Visited>> {
        Ok(visit(Index::all(&self.init)?, |i| {
            self.with_category(i, scratch, &mut f)
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
            self.with_cvar(i, &mut scratch, |r| r.to_owned())?
        });
        catalog.pvars.extend(Index::all(&self.init)?, |i| {
            self.with_pvar(i, &mut scratch, |r| r.to_owned())?
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
        let (mut name, mut desc, mut spill) = ([0u8; N], [0u8; D], (None, None));
        Index::<K>::all(&mpit.init)
            .unwrap()
            .map(|i| {
                described_in(&mut name, &mut desc, &mut spill, |n, d| get(i, n, d)).map(
                    |(_, n, d)| {
                        (
                            MpiStr::until_nul(n).to_mpi_string(),
                            MpiStr::until_nul(d).to_mpi_string(),
                        )
                    },
                )
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

    /// The visitors with first buffers too small for most strings (the path of a string longer
    /// than the stack buffers) show exactly the records of the listings, entry by entry.
    #[test]
    fn visitors_fetch_cut_strings_whole() {
        let _turn = turn();
        let mpit = Mpit::init().unwrap();
        let (cvars, pvars, categories) = (
            mpit.cvars().unwrap(),
            mpit.pvars().unwrap(),
            mpit.categories().unwrap(),
        );
        assert!(cvars.entries.iter().any(|v| v.description.len() > 16));
        for (n, d) in [(8, 16), (2, 2), (1, 1)] {
            let mut seen = Vec::new();
            let visited = mpit.visit_cvars_in(&mut Scratch::with_first(n, d), |v| {
                seen.extend(v.to_owned().ok());
                ControlFlow::<()>::Continue(())
            });
            assert!(matches!(visited, Ok(ControlFlow::Continue(ref v)) if v.count == cvars.count));
            assert_eq!(seen, cvars.entries, "first buffers {n}, {d}");
            let mut seen = Vec::new();
            let visited = mpit.visit_pvars_in(&mut Scratch::with_first(n, d), |v| {
                seen.extend(v.to_owned().ok());
                ControlFlow::<()>::Continue(())
            });
            assert!(matches!(visited, Ok(ControlFlow::Continue(_))));
            assert_eq!(seen, pvars.entries, "first buffers {n}, {d}");
            let mut seen = Vec::new();
            let visited = mpit.visit_categories_in(&mut Scratch::with_first(n, d), |c| {
                seen.push(c.to_owned());
                ControlFlow::<()>::Continue(())
            });
            assert!(matches!(visited, Ok(ControlFlow::Continue(_))));
            assert_eq!(seen, categories.entries, "first buffers {n}, {d}");
        }
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

    proptest::proptest! {
        /// A category's members of one kind are the non-negative ints MPI wrote (MPI-4.1
        /// §16.3.9, `MPI_T_category_get_cvars` and its kin): the view gives each as the index
        /// it is, in MPI's order, from either end, and finds exactly those.
        #[test]
        fn members_are_the_ints_mpi_wrote(
            raw in proptest::collection::vec(0..=c_int::MAX, 0..64),
            probe in 0usize..(1 << 33),
        ) {
            let owned: Vec<usize> = raw.iter().map(|&m| usize::try_from(m).unwrap()).collect();
            let members = Members(&raw);
            proptest::prop_assert_eq!(members.len(), owned.len());
            proptest::prop_assert_eq!(members.is_empty(), owned.is_empty());
            proptest::prop_assert_eq!(members.to_vec(), owned.clone());
            proptest::prop_assert!(members == owned);
            proptest::prop_assert!(members.iter().rev().eq(owned.iter().rev().copied()));
            proptest::prop_assert_eq!(members.iter().len(), owned.len());
            for k in [0, owned.len() / 2, owned.len()] {
                proptest::prop_assert_eq!(members.get(k), owned.get(k).copied());
                proptest::prop_assert_eq!(members.iter().nth(k), owned.get(k).copied());
            }
            for m in owned.iter().copied().chain([probe]) {
                proptest::prop_assert_eq!(members.contains(m), owned.contains(&m));
            }
            proptest::prop_assert_eq!(format!("{members:?}"), format!("{owned:?}"));
        }

        /// A visit keeps every failed index with the error MPI returned for it (MPI-4.1
        /// §16.3.10: the error class says why; an index that fails is no entry, §16.3.6,
        /// §16.3.7, §16.3.9): however they fall into runs, `Holes` gives back each
        /// `(index, error)` added, in order, and finds each index's first error.
        #[test]
        fn holes_keep_every_index_and_its_error(
            added in proptest::collection::vec((0usize..3, 0usize..4), 0..40),
        ) {
            let errors = [
                Error::from_class(ErrorClass::InvalidIndex, 57),
                Error::Other { code: 7 },
                Error::LengthOverflow,
                Error::from_class(ErrorClass::NotAccessible, 60),
            ];
            // Steps of 0 (the same index again), 1 (a run) or 2 (a gap) from the last one.
            let mut index = 0;
            let pairs: Vec<(usize, Error)> = added
                .iter()
                .map(|&(step, e)| {
                    index += step;
                    (index, errors[e].clone())
                })
                .collect();
            let holes: Holes = pairs.iter().cloned().collect();
            proptest::prop_assert_eq!(holes.len(), pairs.len());
            proptest::prop_assert_eq!(holes.is_empty(), pairs.is_empty());
            let back: Vec<(usize, Error)> = holes.clone().into();
            proptest::prop_assert_eq!(&back, &pairs);
            proptest::prop_assert!(holes.indices().eq(pairs.iter().map(|(i, _)| *i)));
            for probe in 0..=index + 1 {
                let first = pairs.iter().find(|(i, _)| *i == probe).map(|(_, e)| e);
                proptest::prop_assert_eq!(holes.get(probe), first);
            }
        }
    }
}
