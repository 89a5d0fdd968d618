//! The fence's event queries: event sources (MPI-4.1 §16.3.8.1) and event types (§16.3.8.3),
//! their strings, elements and info hints.

use std::ffi::{c_char, c_int};
use std::ptr;

use mpit_core::{Datatype, EventElement, Result};

use super::esys as sys;
use super::query::enum_handle;
use super::{Event, Index, RawEnum, RawInfo, Source, TInit};
use crate::init::level::Level;
use crate::quirks;
use crate::raw::{RawConstant, c_len, check, non_negative};

/// A string argument of the event and source queries: the buffer, or for a length query
/// a 1-byte buffer with length 0, which the convention treats like NULL (MPI-4.1
/// §16.3.3) and which MPICH accepts where it refuses NULL (`MPI_T_source_get_info`
/// answers `MPI_ERR_ARG` to a NULL name or description).
fn str_arg_nonnull<'b>(
    buf: Option<&'b mut [u8]>,
    dummy: &'b mut u8,
) -> Result<(*mut c_char, c_int)> {
    Ok(match buf {
        Some(b) => (b.as_mut_ptr().cast(), c_len(b.len())?),
        None => ((dummy as *mut u8).cast(), 0),
    })
}

/// What `MPI_T_event_get_info` returns besides the strings and the element arrays.
pub(crate) struct EventQuery<'m> {
    pub(crate) name_len: c_int,
    pub(crate) desc_len: c_int,
    pub(crate) verbosity: c_int,
    pub(crate) num: c_int,
    /// `None` for `MPI_T_ENUM_NULL`, and on MPICH, which never initialises it
    /// ([`quirks::MPICH_EVENT_ENUMTYPE`]: using it segfaults).
    pub(crate) enumtype: Option<RawEnum<'m>>,
    pub(crate) bind: c_int,
}

/// One call of `MPI_T_event_get_info`.
fn event_info_call(
    index: Index<Event>,
    name: Option<&mut [u8]>,
    desc: Option<&mut [u8]>,
    elements: Option<(&mut [sys::MPI_Datatype], &mut [sys::MPI_Aint])>,
    info: Option<&mut sys::MPI_Info>,
) -> Result<(EventQuery<'static>, sys::MPI_T_enum)> {
    let (mut name_dummy, mut desc_dummy) = (0u8, 0u8);
    let (name_ptr, mut name_len) = str_arg_nonnull(name, &mut name_dummy)?;
    let (desc_ptr, mut desc_len) = str_arg_nonnull(desc, &mut desc_dummy)?;
    let (mut verbosity, mut bind) = (0, 0);
    let mut enumtype = sys::MPI_T_ENUM_NULL;
    let (dts, disps, mut num) = match elements {
        Some((d, a)) => (d.as_mut_ptr(), a.as_mut_ptr(), c_len(d.len().min(a.len()))?),
        None => (ptr::null_mut(), ptr::null_mut(), 0),
    };
    // SAFETY: MPI_T is initialised (the callers borrow the initialisation); the index is
    // below the count; string buffers valid for their lengths (or a 1-byte dummy with 0);
    // the element arrays hold `num` entries (or are NULL, which the standard says are
    // ignored); the info argument is NULL (ignored, MPI-4.1 §16.3.8.3) or a valid
    // out-pointer whose new object the caller owns; the rest are valid out-pointers.
    check(unsafe {
        sys::MPI_T_event_get_info(
            index.raw,
            name_ptr,
            &mut name_len,
            &mut verbosity,
            dts,
            disps,
            &mut num,
            &mut enumtype,
            info.map_or(ptr::null_mut(), |i| i as *mut _),
            desc_ptr,
            &mut desc_len,
            &mut bind,
        )
    })?;
    let q = EventQuery {
        name_len,
        desc_len,
        verbosity,
        num,
        enumtype: None,
        bind,
    };
    Ok((q, enumtype))
}

/// `MPI_T_event_get_info` of a checked index, with optional name and description buffers.
#[inline]
pub(crate) fn event_get_info<'m, L: Level>(
    _init: &'m TInit<L>,
    index: Index<Event>,
    name: Option<&mut [u8]>,
    desc: Option<&mut [u8]>,
) -> Result<EventQuery<'m>> {
    let (q, enumtype) = event_info_call(index, name, desc, None, None)?;
    Ok(EventQuery {
        enumtype: if quirks::applies(&quirks::MPICH_EVENT_ENUMTYPE) {
            None
        } else {
            enum_handle(enumtype)
        },
        ..q
    })
}

/// `MPI_T_event_get_info` for the first `num` elements (datatypes and displacements) of
/// event type `index`.
// `MPI_Aint` is `ptrdiff_t` (isize) in Open MPI's header, `long` in MPICH's.
#[allow(clippy::unnecessary_cast)]
pub(crate) fn event_get_elements<L: Level>(
    _init: &TInit<L>,
    index: Index<Event>,
    num: c_int,
) -> Result<Vec<EventElement>> {
    let n = non_negative(num)?;
    let mut dts = vec![sys::MPI_DATATYPE_NULL; n];
    let mut disps: Vec<sys::MPI_Aint> = vec![0; n];
    event_info_call(index, None, None, Some((&mut dts, &mut disps)), None)?;
    dts.iter()
        .zip(&disps)
        .map(|(&dt, &d)| {
            Ok(EventElement {
                datatype: Datatype::from_raw(dt)?,
                displacement: d as isize,
            })
        })
        .collect()
}

/// `MPI_T_event_get_info` for the info hints MPI attaches to event type `index`.
#[inline]
pub(crate) fn event_get_hints<L: Level>(_init: &TInit<L>, index: Index<Event>) -> Result<RawInfo> {
    let mut raw = RawInfo(sys::MPI_INFO_NULL);
    event_info_call(index, None, None, None, Some(&mut raw.0))?;
    Ok(raw)
}

/// What `MPI_T_source_get_info` returns besides the strings.
pub(crate) struct SourceQuery {
    pub(crate) name_len: c_int,
    pub(crate) desc_len: c_int,
    pub(crate) ordering: c_int,
    pub(crate) ticks_per_second: sys::MPI_Count,
    pub(crate) max_ticks: sys::MPI_Count,
}

/// One call of `MPI_T_source_get_info`.
fn source_info_call(
    index: Index<Source>,
    name: Option<&mut [u8]>,
    desc: Option<&mut [u8]>,
    info: Option<&mut sys::MPI_Info>,
) -> Result<SourceQuery> {
    let (mut name_dummy, mut desc_dummy) = (0u8, 0u8);
    let (name_ptr, mut name_len) = str_arg_nonnull(name, &mut name_dummy)?;
    let (desc_ptr, mut desc_len) = str_arg_nonnull(desc, &mut desc_dummy)?;
    let mut ordering: sys::MPI_T_source_order = 0;
    let (mut tps, mut max): (sys::MPI_Count, sys::MPI_Count) = (0, 0);
    // SAFETY: as in `event_info_call`.
    check(unsafe {
        sys::MPI_T_source_get_info(
            index.raw,
            name_ptr,
            &mut name_len,
            desc_ptr,
            &mut desc_len,
            &mut ordering,
            &mut tps,
            &mut max,
            info.map_or(ptr::null_mut(), |i| i as *mut _),
        )
    })?;
    Ok(SourceQuery {
        name_len,
        desc_len,
        ordering: ordering as c_int,
        ticks_per_second: tps,
        max_ticks: max,
    })
}

/// `MPI_T_source_get_info` of a checked index, with optional name and description buffers.
#[inline]
pub(crate) fn source_get_info<L: Level>(
    _init: &TInit<L>,
    index: Index<Source>,
    name: Option<&mut [u8]>,
    desc: Option<&mut [u8]>,
) -> Result<SourceQuery> {
    source_info_call(index, name, desc, None)
}

/// `MPI_T_source_get_info` for the info hints MPI attaches to source `index`.
#[inline]
pub(crate) fn source_get_hints<L: Level>(
    _init: &TInit<L>,
    index: Index<Source>,
) -> Result<RawInfo> {
    let mut raw = RawInfo(sys::MPI_INFO_NULL);
    source_info_call(index, None, None, Some(&mut raw.0))?;
    Ok(raw)
}

/// `MPI_T_source_get_timestamp`: a current timestamp of source `index`.
#[inline]
pub(crate) fn source_get_timestamp<L: Level>(
    _init: &TInit<L>,
    index: Index<Source>,
) -> Result<sys::MPI_Count> {
    let mut ts: sys::MPI_Count = 0;
    // SAFETY: MPI_T is initialised; the index is below the count; valid out-pointer.
    check(unsafe { sys::MPI_T_source_get_timestamp(index.raw, &mut ts) })?;
    Ok(ts)
}
