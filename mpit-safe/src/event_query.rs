//! Event sources and event types: queries (MPI-4.1 §16.3.8.1, §16.3.8.3).
//!
//! Compiled on every MPI. Where the installed `mpi.h` has no event API (Open MPI 4.1 and 5.0;
//! MPICH 4 and later have it, `cfg(mpit_events)`), every call answers
//! [`Error::NotSupported`] and [`crate::features`] says so beforehand.

#![forbid(unsafe_code)]

use mpit_core::{Bind, Error, EventTypeInfo, Result, SourceInfo, SourceOrder, Verbosity};
use mpit_sys as sys;

use crate::constant::RawConstant;
use crate::ffi::{self, Event, Index, Source};
use crate::info_object::Info;
use crate::init::{Mpit, level::Level};
use crate::query::{Listing, Scratch, index_arg};

fn count_u64(v: sys::MPI_Count, what: &'static str) -> Result<u64> {
    u64::try_from(v).map_err(|_| Error::unknown_constant(what, v))
}

impl<L: Level> Mpit<L> {
    /// The number of event types (it may grow).
    ///
    /// MPI-4.1 §16.3.8.3, `MPI_T_event_get_num`.
    #[doc(alias = "MPI_T_event_get_num")]
    pub fn event_count(&self) -> Result<usize> {
        ffi::event_get_num(&self.init)
    }

    /// The number of event sources (it may grow).
    ///
    /// MPI-4.1 §16.3.8.1, `MPI_T_source_get_num`.
    #[doc(alias = "MPI_T_source_get_num")]
    pub fn source_count(&self) -> Result<usize> {
        ffi::source_get_num(&self.init)
    }

    /// Everything `MPI_T_event_get_info` says about event type `index`: name, verbosity,
    /// element datatypes and displacements, enumeration, description, binding.
    ///
    /// MPI-4.1 §16.3.8.3, `MPI_T_event_get_info`.
    #[doc(alias = "MPI_T_event_get_info")]
    pub fn event_info(&self, index: usize) -> Result<EventTypeInfo> {
        self.event_info_in(index_arg(&self.init, index)?, &mut Scratch::single())
    }

    /// Two `MPI_T_event_get_info` calls in the common case: strings and the number of
    /// elements, then the elements.
    fn event_info_in(&self, i: Index<Event>, scratch: &mut Scratch) -> Result<EventTypeInfo> {
        let init = &self.init;
        let (r, name, description) =
            scratch.described_owned(|n, d| ffi::event_get_info(init, i, n, d))?;
        let elements = ffi::event_get_elements(init, i, r.num)?;
        Ok(EventTypeInfo {
            index: i.get(),
            name,
            verbosity: Verbosity::from_raw(r.verbosity)?,
            elements,
            // None on MPICH, which leaves it uninitialised (the fence never passes it on).
            enumtype: scratch.enum_of(r.enumtype)?,
            description,
            bind: Bind::from_raw(r.bind)?,
        })
    }

    /// Every event type, holes reported per index.
    pub fn events(&self) -> Result<Listing<EventTypeInfo>> {
        let mut scratch = Scratch::listing();
        Ok(Listing::of(Index::all(&self.init)?, |i| {
            self.event_info_in(i, &mut scratch)
        }))
    }

    /// The info hints MPI attaches to event type `index` (the `info` argument of
    /// `MPI_T_event_get_info`), as an owned [`Info`]; implementations may return none.
    ///
    /// MPI-4.1 §16.3.8.3, `MPI_T_event_get_info`.
    #[doc(alias = "MPI_T_event_get_info")]
    pub fn event_hints(&self, index: usize) -> Result<Info> {
        let i = index_arg(&self.init, index)?;
        Ok(Info::from_owned(ffi::event_get_hints(&self.init, i)?))
    }

    /// The index of the event type called `name` (`None`: no such event type).
    ///
    /// MPI-4.1 §16.3.8.3, `MPI_T_event_get_index`.
    #[doc(alias = "MPI_T_event_get_index")]
    pub fn event_index(&self, name: &str) -> Result<Option<usize>> {
        self.lookup(name, |n| ffi::event_get_index(&self.init, n))
    }

    /// Everything `MPI_T_source_get_info` says about event source `index`.
    ///
    /// MPI-4.1 §16.3.8.1, `MPI_T_source_get_info`.
    #[doc(alias = "MPI_T_source_get_info")]
    pub fn source_info(&self, index: usize) -> Result<SourceInfo> {
        self.source_info_in(index_arg(&self.init, index)?, &mut Scratch::single())
    }

    /// One `MPI_T_source_get_info` call in the common case.
    fn source_info_in(&self, i: Index<Source>, scratch: &mut Scratch) -> Result<SourceInfo> {
        let (r, name, description) =
            scratch.described_owned(|n, d| ffi::source_get_info(&self.init, i, n, d))?;
        let ordering = SourceOrder::from_raw(r.ordering as std::ffi::c_int)?;
        Ok(SourceInfo {
            index: i.get(),
            name,
            description,
            ordering,
            ticks_per_second: count_u64(r.ticks_per_second, "ticks per second")?,
            max_ticks: count_u64(r.max_ticks, "max ticks")?,
        })
    }

    /// Every event source, holes reported per index.
    pub fn sources(&self) -> Result<Listing<SourceInfo>> {
        let mut scratch = Scratch::listing();
        Ok(Listing::of(Index::all(&self.init)?, |i| {
            self.source_info_in(i, &mut scratch)
        }))
    }

    /// The info hints MPI attaches to event source `index` (the `info` argument of
    /// `MPI_T_source_get_info`), as an owned [`Info`]; implementations may return none.
    ///
    /// MPI-4.1 §16.3.8.1, `MPI_T_source_get_info`.
    #[doc(alias = "MPI_T_source_get_info")]
    pub fn source_hints(&self, index: usize) -> Result<Info> {
        let i = index_arg(&self.init, index)?;
        Ok(Info::from_owned(ffi::source_get_hints(&self.init, i)?))
    }

    /// A current timestamp of source `index`, in its ticks; [`ErrorClass::NotSupported`](crate::ErrorClass::NotSupported) where the
    /// source cannot make one on demand (MPI-4.1 §16.3.8.1).
    #[doc(alias = "MPI_T_source_get_timestamp")]
    pub fn source_timestamp(&self, index: usize) -> Result<u64> {
        let i = index_arg(&self.init, index)?;
        count_u64(ffi::source_get_timestamp(&self.init, i)?, "timestamp")
    }
}
