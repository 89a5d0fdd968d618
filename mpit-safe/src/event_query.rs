//! Event sources and event types: queries (MPI-4.1 §16.3.8.1, §16.3.8.3).
//!
//! Compiled where the installed `mpi.h` declares the MPI-4 event API (`cfg(mpit_events)`:
//! MPICH 4 and later); Open MPI 4.1 and 5.0 have no event API, and this module is absent there.

use std::ffi::c_int;
use std::ptr;

use mpit_core::{
    Error, ErrorClass, EventElement, EventTypeInfo, Result, SourceInfo, SourceOrder, fetch_string,
};
use mpit_sys as sys;

use crate::info_object::Info;
use crate::init::{Mpit, level::Level};
use crate::query::Listing;
use crate::quirks;
use crate::raw::{self, c_len, check, non_negative};

fn index_arg(index: usize, count: usize) -> Result<c_int> {
    if index >= count {
        return Err(Error::Mpi {
            class: ErrorClass::InvalidIndex,
            code: sys::MPI_T_ERR_INVALID_INDEX,
        });
    }
    c_int::try_from(index).map_err(|_| Error::LengthOverflow)
}

/// A string argument: the buffer, or for a length query a 1-byte buffer with length 0, which
/// the convention treats like NULL (MPI-4.1 §16.3.3) and which MPICH accepts where it refuses
/// NULL (`MPI_T_source_get_info` answers `MPI_ERR_ARG` to a NULL name or description).
fn string_ptr<'b>(
    buf: &'b mut Option<&mut [u8]>,
    dummy: &'b mut u8,
) -> Result<(*mut std::ffi::c_char, c_int)> {
    Ok(match buf {
        Some(b) => (b.as_mut_ptr().cast(), c_len(b.len())?),
        None => ((dummy as *mut u8).cast(), 0),
    })
}

fn count_u64(v: sys::MPI_Count, what: &'static str) -> Result<u64> {
    u64::try_from(v).map_err(|_| Error::unknown_constant(what, v))
}

impl<L: Level> Mpit<L> {
    /// The number of event types (it may grow).
    #[doc(alias = "MPI_T_event_get_num")]
    pub fn event_count(&self) -> Result<usize> {
        let mut n = 0;
        // SAFETY: MPI_T is initialised while `self` lives; valid out-pointer.
        check(unsafe { sys::MPI_T_event_get_num(&mut n) })?;
        non_negative(n)
    }

    /// The number of event sources (it may grow).
    #[doc(alias = "MPI_T_source_get_num")]
    pub fn source_count(&self) -> Result<usize> {
        let mut n = 0;
        // SAFETY: as above.
        check(unsafe { sys::MPI_T_source_get_num(&mut n) })?;
        non_negative(n)
    }

    /// One call of `MPI_T_event_get_info` with optional string buffers and element arrays.
    #[allow(clippy::type_complexity)]
    fn event_raw(
        &self,
        index: c_int,
        mut name: Option<&mut [u8]>,
        mut desc: Option<&mut [u8]>,
        elements: Option<(&mut [sys::MPI_Datatype], &mut [sys::MPI_Aint])>,
        info: Option<&mut sys::MPI_Info>,
    ) -> Result<(c_int, c_int, c_int, c_int, sys::MPI_T_enum, c_int)> {
        let (mut name_dummy, mut desc_dummy) = (0u8, 0u8);
        let (name_ptr, mut name_len) = string_ptr(&mut name, &mut name_dummy)?;
        let (desc_ptr, mut desc_len) = string_ptr(&mut desc, &mut desc_dummy)?;
        let (mut verbosity, mut bind) = (0, 0);
        let mut enumtype = sys::MPI_T_ENUM_NULL;
        let (dts, disps, mut num) = match elements {
            Some((d, a)) => (d.as_mut_ptr(), a.as_mut_ptr(), c_len(d.len().min(a.len()))?),
            None => (ptr::null_mut(), ptr::null_mut(), 0),
        };
        // SAFETY: string buffers valid for their lengths (or null with 0); the element arrays
        // hold `num` entries (or are null, which the standard says are ignored); the info
        // argument is null (ignored, MPI-4.1 §16.3.8.3) or a valid out-pointer whose new
        // object the caller frees; the rest are valid out-pointers.
        check(unsafe {
            sys::MPI_T_event_get_info(
                index,
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
        Ok((name_len, desc_len, verbosity, num, enumtype, bind))
    }

    /// Everything `MPI_T_event_get_info` says about event type `index`: name, verbosity,
    /// element datatypes and displacements, enumeration, description, binding.
    #[doc(alias = "MPI_T_event_get_info")]
    pub fn event_info(&self, index: usize) -> Result<EventTypeInfo> {
        let i = index_arg(index, self.event_count()?)?;
        let (_, _, verbosity, num, enumtype, bind) = self.event_raw(i, None, None, None, None)?;
        let n = non_negative(num)?;
        let mut dts = vec![sys::MPI_DATATYPE_NULL; n];
        let mut disps: Vec<sys::MPI_Aint> = vec![0; n];
        self.event_raw(i, None, None, Some((&mut dts, &mut disps)), None)?;
        let elements = dts
            .iter()
            .zip(&disps)
            .map(|(&dt, &d)| {
                Ok(EventElement {
                    datatype: raw::datatype(dt)?,
                    displacement: d as isize,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let name = fetch_string(|buf| non_negative(self.event_raw(i, buf, None, None, None)?.0))?;
        let description =
            fetch_string(|buf| non_negative(self.event_raw(i, None, buf, None, None)?.1))?;
        Ok(EventTypeInfo {
            index,
            name,
            verbosity: raw::verbosity(verbosity)?,
            elements,
            // MPICH leaves it uninitialised: never pass it on there.
            enumtype: if quirks::applies(&quirks::MPICH_EVENT_ENUMTYPE) {
                None
            } else {
                self.enum_of(enumtype)?
            },
            description,
            bind: raw::bind(bind)?,
        })
    }

    /// Every event type, holes reported per index.
    pub fn events(&self) -> Result<Listing<EventTypeInfo>> {
        let n = self.event_count()?;
        Ok(Listing::collect(n, |i| self.event_info(i)))
    }

    /// The info hints MPI attaches to event type `index` (the `info` argument of
    /// `MPI_T_event_get_info`), as an owned [`Info`]; implementations may return none.
    #[doc(alias = "MPI_T_event_get_info")]
    pub fn event_hints(&self, index: usize) -> Result<Info> {
        let i = index_arg(index, self.event_count()?)?;
        let mut raw = sys::MPI_INFO_NULL;
        self.event_raw(i, None, None, None, Some(&mut raw))?;
        // SAFETY: MPI returned a new info object (or MPI_INFO_NULL) that the caller frees.
        Ok(unsafe { Info::from_raw(raw) })
    }

    /// The index of the event type called `name` (`None`: no such event type).
    #[doc(alias = "MPI_T_event_get_index")]
    pub fn event_index(&self, name: &str) -> Result<Option<usize>> {
        // SAFETY: `n` is NUL-terminated and alive for the call; `i` a valid out-pointer.
        self.lookup(name, |n, i| unsafe { sys::MPI_T_event_get_index(n, i) })
    }

    fn source_raw(
        &self,
        index: c_int,
        mut name: Option<&mut [u8]>,
        mut desc: Option<&mut [u8]>,
        info: Option<&mut sys::MPI_Info>,
    ) -> Result<(c_int, c_int, c_int, sys::MPI_Count, sys::MPI_Count)> {
        let (mut name_dummy, mut desc_dummy) = (0u8, 0u8);
        let (name_ptr, mut name_len) = string_ptr(&mut name, &mut name_dummy)?;
        let (desc_ptr, mut desc_len) = string_ptr(&mut desc, &mut desc_dummy)?;
        let mut ordering: sys::MPI_T_source_order = 0;
        let (mut tps, mut max): (sys::MPI_Count, sys::MPI_Count) = (0, 0);
        // SAFETY: as in `event_raw`.
        check(unsafe {
            sys::MPI_T_source_get_info(
                index,
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
        Ok((name_len, desc_len, ordering as c_int, tps, max))
    }

    /// Everything `MPI_T_source_get_info` says about event source `index`.
    #[doc(alias = "MPI_T_source_get_info")]
    pub fn source_info(&self, index: usize) -> Result<SourceInfo> {
        let i = index_arg(index, self.source_count()?)?;
        let (_, _, ordering, tps, max) = self.source_raw(i, None, None, None)?;
        let name = fetch_string(|buf| non_negative(self.source_raw(i, buf, None, None)?.0))?;
        let description = fetch_string(|buf| non_negative(self.source_raw(i, None, buf, None)?.1))?;
        let ordering = match ordering {
            sys::MPI_T_SOURCE_ORDERED => SourceOrder::Ordered,
            sys::MPI_T_SOURCE_UNORDERED => SourceOrder::Unordered,
            other => {
                return Err(Error::unknown_constant("source ordering", other));
            }
        };
        Ok(SourceInfo {
            index,
            name,
            description,
            ordering,
            ticks_per_second: count_u64(tps, "ticks per second")?,
            max_ticks: count_u64(max, "max ticks")?,
        })
    }

    /// Every event source, holes reported per index.
    pub fn sources(&self) -> Result<Listing<SourceInfo>> {
        let n = self.source_count()?;
        Ok(Listing::collect(n, |i| self.source_info(i)))
    }

    /// The info hints MPI attaches to event source `index` (the `info` argument of
    /// `MPI_T_source_get_info`), as an owned [`Info`]; implementations may return none.
    #[doc(alias = "MPI_T_source_get_info")]
    pub fn source_hints(&self, index: usize) -> Result<Info> {
        let i = index_arg(index, self.source_count()?)?;
        let mut raw = sys::MPI_INFO_NULL;
        self.source_raw(i, None, None, Some(&mut raw))?;
        // SAFETY: as in `event_hints`.
        Ok(unsafe { Info::from_raw(raw) })
    }

    /// A current timestamp of source `index`, in its ticks; [`ErrorClass::NotSupported`] where the
    /// source cannot make one on demand (MPI-4.1 §16.3.8.1).
    #[doc(alias = "MPI_T_source_get_timestamp")]
    pub fn source_timestamp(&self, index: usize) -> Result<u64> {
        let i = index_arg(index, self.source_count()?)?;
        let mut ts: sys::MPI_Count = 0;
        // SAFETY: valid index (checked) and out-pointer.
        check(unsafe { sys::MPI_T_source_get_timestamp(i, &mut ts) })?;
        count_u64(ts, "timestamp")
    }
}
