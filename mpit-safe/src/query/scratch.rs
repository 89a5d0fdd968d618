//! What the queries of one listing or visit share: the first buffers each `MPI_T_*_get_info`
//! call writes into, the string convention over them (MPI-4.1 §16.3.3), and what the listing
//! has resolved (enumerations, datatypes).

#![forbid(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::fmt;
use std::sync::Arc;

use mpit_core::{Datatype, EnumInfo, EnumItem, MpiStr, MpiString, Result};
use mpit_sys as sys;

use crate::ffi::{self, EnumKey, RawEnum};
#[cfg(doc)]
use crate::init::Mpit;
use crate::raw::{RawConstant, non_negative};

/// Bytes of the buffer on the stack that the first call of a query writes a name into (names
/// of variables, categories, enumerations and items: at most 54 bytes on the MPIs here).
pub(super) const NAME_BUF: usize = 256;
/// Bytes of the buffer on the stack for a description: all fit on the MPIs here (the longest:
/// 1269 bytes, MPICH 4.0.2; 735, Open MPI 5.0; 500, Open MPI 4.1). A cut one costs more than
/// the larger buffer: MPICH and Open MPI hide the cut, so it takes a length query and a fetch,
/// each going over the whole string again.
pub(super) const DESC_BUF: usize = 2048;

/// Members of a category the buffers of a listing or visit hold before they grow: a guess at a
/// large category, so that a listing allocates them once or twice, not once per doubling.
pub(super) const MEMBERS: usize = 256;

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
    pub(super) fn datatype(&self, raw: sys::MPI_Datatype) -> Result<Datatype> {
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
pub(super) type Spill = (Option<MpiString>, Option<MpiString>);

/// What the queries of one listing or visit share: the first buffers, filled anew by each call
/// and never cleared ([`MpiStr::from_filled`] reads only what the reported length covers), the
/// strings that did not fit them, the enumerations resolved so far, and the member lists of
/// the category being made.
pub(crate) struct Scratch {
    /// The first buffers, taken from (and given back to) this thread's spare pair: zeroing
    /// 2.3 KiB afresh per listing cost as much as a tenth of a listing of Open MPI's pvars.
    /// (`None` only once given back, in `drop`.)
    pub(super) bufs: Option<Box<Buffers>>,
    /// How much of `name` and `desc` the first call gets (all of them but in the tests of the
    /// cut-string path).
    pub(super) first: (usize, usize),
    pub(super) spill: Spill,
    resolved: Resolved,
}

/// The buffers of a [`Scratch`], kept per thread between listings with their capacity.
pub(super) struct Buffers {
    pub(super) name: [u8; NAME_BUF],
    pub(super) desc: [u8; DESC_BUF],
    /// The members of the category being made as C writes them: event types, control
    /// variables, performance variables, categories, one list after the other.
    pub(super) members: Vec<c_int>,
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

    pub(super) fn new() -> Box<Buffers> {
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
    pub(super) fn with_first(name: usize, desc: usize) -> Self {
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
pub(super) fn described_in<'s, Q: Described>(
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
