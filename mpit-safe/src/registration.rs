//! Event registration with closures (MPI-4.1 §16.3.8.4–§16.3.8.6).
//!
//! A [`Registration`] is an event-registration handle (`MPI_T_event_handle_alloc`) that owns
//! the closures MPI calls: one per callback safety level ([`Registration::on_event`]) and a
//! dropped-event handler ([`Registration::on_dropped`]). The closures live in one shared
//! block handed to MPI as `user_data`; dropping the registration starts
//! `MPI_T_event_handle_free`, and the block (with every closure ever registered on it) is
//! released only in the free callback, when MPI guarantees no further invocation, so no drop
//! order can make MPI call freed memory. A panic in a closure is caught at the FFI boundary and
//! reported by [`Registration::panics`].
//!
//! MPICH breaks that guarantee at `MPI_THREAD_MULTIPLE` (it calls the free callback, and frees
//! the registration, while another thread may be running a callback of it:
//! [`quirks::MPICH_EVENT_REGISTRATION_RACE`](crate::quirks::MPICH_EVENT_REGISTRATION_RACE)).
//! There a registration is never freed in MPICH: dropping it retires it, its closures are
//! released once no invocation is in flight (counted by the trampoline; [`Freeing`] is done
//! then), and the next registration of the same event type and object reuses it. An event
//! that none of its levels takes is reported to [`Registration::on_dropped`] at once, as one
//! dropped event.
//!
//! The style is rusqlite's `functions.rs`/`hooks`: boxed closure as `user_data`, `extern "C"`
//! trampolines with `catch_unwind`, and a destructor that frees the box; all three live in the
//! fence (`crate::ffi`), and this module wraps each closure so that it sees an
//! [`EventInstance`].

#![forbid(unsafe_code)]

use std::ffi::c_int;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mpit_core::{
    CbSafety, Error, ErrorClass, EventElement, EventTypeInfo, Quirk, Result, Scalar, Value,
};
// The header's event API, or its stand-ins where it has none.
use crate::constant::RawConstant;
use crate::ffi::esys as sys;
use crate::ffi::{self, EventRef, FreeWait, RawRegistration};
use crate::info_object::Info;
use crate::init::{Mpit, level::Level};
use crate::object::MpiObject;
use crate::query::index_arg;
use crate::quirks;

/// What MPI reports to a dropped-event handler (MPI-4.1 §16.3.8.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    /// Best-effort count of callback invocations that did not happen since the last report
    /// (saturated at `MPI_Count`'s maximum).
    pub count: u64,
    /// The source that dropped them.
    pub source: usize,
    /// The safety requirement of the context of this report.
    pub safety: CbSafety,
}

fn safety_from_raw(v: sys::MPI_T_cb_safety) -> CbSafety {
    // Unknown values: assume the strictest, as the standard advises.
    CbSafety::from_raw(v as c_int).unwrap_or(CbSafety::STRICTEST)
}

fn safety_to_raw(s: CbSafety) -> sys::MPI_T_cb_safety {
    // Every value is declared where the header has the event API; without it the value is
    // never passed to MPI (the calls answer `NotSupported`).
    s.to_raw()
        .unwrap_or(sys::MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE) as sys::MPI_T_cb_safety
}

/// One event instance, valid only inside the callback it is passed to (MPI-4.1 §16.3.8.6).
pub struct EventInstance<'cb> {
    raw: EventRef<'cb>,
    data_refused: Option<&'static Quirk>,
}

impl std::fmt::Debug for EventInstance<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventInstance")
            .field("safety", &self.safety())
            .field("elements", &self.elements().len())
            .finish_non_exhaustive()
    }
}

impl EventInstance<'_> {
    /// The safety requirement of this invocation's context.
    #[inline]
    pub fn safety(&self) -> CbSafety {
        safety_from_raw(self.raw.safety())
    }

    /// The elements of the event type (datatypes and displacements).
    #[inline]
    pub fn elements(&self) -> &[EventElement] {
        self.raw.elements()
    }

    /// Whether the event's data can be read here: `Err(KnownCrash)` where reading it crashes
    /// the implementation ([`quirks::MPICH_DEQUEUED_EVENT_DATA`]); the timestamp and source
    /// are still there.
    #[inline]
    pub fn data_readable(&self) -> Result<()> {
        match self.data_refused {
            None => Ok(()),
            Some(q) => Err(Error::KnownCrash(q)),
        }
    }

    /// Element `index` as `T`, checked against the element's datatype.
    ///
    /// MPI-4.1 §16.3.8.6, `MPI_T_event_read`.
    #[doc(alias = "MPI_T_event_read")]
    #[inline]
    pub fn read<T: Scalar + Default>(&self, index: usize) -> Result<T> {
        self.data_readable()?;
        let e = self.element(index)?;
        T::check(e.datatype)?;
        let mut v = T::default();
        ffi::event_read(self.raw, index, std::slice::from_mut(&mut v))?;
        Ok(v)
    }

    /// Element `index` as a [`Value`] of its datatype.
    ///
    /// MPI-4.1 §16.3.8.6, `MPI_T_event_read`.
    #[doc(alias = "MPI_T_event_read")]
    pub fn read_value(&self, index: usize) -> Result<Value> {
        self.data_readable()?;
        let e = self.element(index)?;
        // 32 aligned bytes hold any basic datatype this crate models.
        let mut buf = [0u64; 4];
        ffi::event_read(self.raw, index, &mut buf)?;
        // No allocation: read_value may run at MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE.
        let mut bytes = [0u8; 32];
        for (chunk, w) in bytes.chunks_exact_mut(8).zip(buf) {
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        Value::from_ne_bytes(e.datatype, &bytes[..e.datatype.size()])
    }

    /// Copies the whole event into `buf`, laid out by the displacements; `buf` must hold the
    /// event's extent ([`EventTypeInfo::extent`]). Returns the bytes written.
    ///
    /// MPI-4.1 §16.3.8.6, `MPI_T_event_copy`.
    #[doc(alias = "MPI_T_event_copy")]
    #[inline]
    pub fn copy_into(&self, buf: &mut [u8]) -> Result<usize> {
        self.data_readable()?;
        let extent = self.extent();
        if buf.len() < extent {
            return Err(Error::size_mismatch(extent, buf.len()));
        }
        ffi::event_copy(self.raw, buf)?;
        Ok(extent)
    }

    /// Bytes [`EventInstance::copy_into`] needs.
    #[inline]
    pub fn extent(&self) -> usize {
        self.raw.extent()
    }

    /// The event's timestamp, in ticks of its source.
    ///
    /// MPI-4.1 §16.3.8.7, `MPI_T_event_get_timestamp`.
    #[doc(alias = "MPI_T_event_get_timestamp")]
    #[inline]
    pub fn timestamp(&self) -> Result<u64> {
        let ts = ffi::event_get_timestamp(self.raw)?;
        u64::try_from(ts).map_err(|_| Error::LengthOverflow)
    }

    /// The index of the source that raised the event.
    ///
    /// MPI-4.1 §16.3.8.7, `MPI_T_event_get_source`.
    #[doc(alias = "MPI_T_event_get_source")]
    #[inline]
    pub fn source(&self) -> Result<usize> {
        let s = ffi::event_get_source(self.raw)?;
        usize::try_from(s).map_err(|_| Error::LengthOverflow)
    }

    #[inline]
    fn element(&self, index: usize) -> Result<&EventElement> {
        self.elements().get(index).ok_or(Error::Mpi {
            class: ErrorClass::InvalidIndex,
            code: sys::MPI_T_ERR_INVALID_INDEX,
        })
    }
}

/// An event-registration handle and the closures it owns (MPI-4.1 §16.3.8.4).
///
/// Dropping it starts `MPI_T_event_handle_free`; the closures are freed in MPI's free
/// callback. Use [`Registration::free`] to wait for that.
#[doc(alias = "MPI_T_event_registration")]
pub struct Registration<'m, L: Level = crate::level::Single> {
    raw: RawRegistration<'m, L>,
    info: EventTypeInfo,
    /// Set where reading this event type's data crashes the implementation.
    data_refused: Option<&'static Quirk>,
    _mpit: PhantomData<&'m Mpit<L>>,
}

impl<L: Level> std::fmt::Debug for Registration<'_, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("event", &self.info.name)
            .finish_non_exhaustive()
    }
}

/// A started `MPI_T_event_handle_free`: wait for MPI's free callback.
#[derive(Debug)]
pub struct Freeing {
    shared: FreeWait,
}

impl Freeing {
    /// Whether MPI has called the free callback (no further invocation can happen).
    pub fn is_done(&self) -> bool {
        self.shared.is_done()
    }

    /// Waits up to `timeout` for the free callback; `true` if it has run.
    pub fn wait(&self, timeout: Duration) -> bool {
        self.shared.wait(timeout)
    }
}

impl<L: Level> Mpit<L> {
    /// Allocates an event-registration handle for event type `index` bound to `obj` (use
    /// [`crate::NoObject`] for unbound types; the kind is checked against the type's binding).
    ///
    /// Events can be raised as soon as the first callback is registered; to register several
    /// levels (highest first, as MPI-4.1 §16.3.8.4 advises), a dropped handler and allocation
    /// hints in one go, use [`Mpit::event_registration`].
    #[doc(alias = "MPI_T_event_handle_alloc")]
    pub fn register_event<'a, O: MpiObject + ?Sized>(
        &'a self,
        index: usize,
        obj: &'a O,
    ) -> Result<Registration<'a, L>> {
        self.alloc_registration(index, obj, None)
    }

    /// A builder for a registration of event type `index` bound to `obj`: hints for the
    /// allocation, closures per safety level and a dropped handler, installed by
    /// [`RegistrationBuilder::register`] in the order that loses no event: the dropped handler
    /// first, then the closures from the highest safety level down.
    ///
    /// ```no_run
    /// # fn main() -> mpit_safe::Result<()> {
    /// use mpit_safe::{CbSafety, Mpit, NoObject};
    /// let mpit = Mpit::init()?;
    /// let ev = mpit.event_index("unexp_message_enqueued")?.expect("an MPI that raises it");
    /// let reg = mpit
    ///     .event_registration(ev, &NoObject)
    ///     .on_event(CbSafety::MpiRestricted, |e| println!("from rank {:?}", e.read::<i32>(0)))
    ///     .on_event(CbSafety::AsyncSignalSafe, |_| { /* no I/O here */ })
    ///     .on_dropped(|d| eprintln!("{} events lost", d.count))
    ///     .register()?;
    /// # drop(reg); Ok(()) }
    /// ```
    pub fn event_registration<'a, O: MpiObject + ?Sized>(
        &'a self,
        index: usize,
        obj: &'a O,
    ) -> RegistrationBuilder<'a, L, O> {
        RegistrationBuilder {
            mpit: self,
            index,
            obj,
            info: None,
            dropped: None,
            levels: Vec::new(),
        }
    }

    fn alloc_registration<'a, O: MpiObject + ?Sized>(
        &'a self,
        index: usize,
        obj: &'a O,
        hints: Option<&Info>,
    ) -> Result<Registration<'a, L>> {
        let i = index_arg(&self.init, index)?;
        let info = self.event_info(index)?;
        // The object's kind is checked against the event type's binding there; the
        // registration borrows `obj`, so it outlives it.
        let raw = ffi::event_handle_alloc(&self.init, i, obj.raw_object(), hints.map(Info::raw))?;
        Ok(Registration {
            raw,
            data_refused: (info.name == "unexp_message_dequeued"
                && quirks::applies(&quirks::MPICH_DEQUEUED_EVENT_DATA))
            .then_some(&quirks::MPICH_DEQUEUED_EVENT_DATA),
            info,
            _mpit: PhantomData,
        })
    }
}

/// Installs one closure on a registration (boxed so closures of different types can wait in
/// one builder; the closure itself is still called with static dispatch).
type Install<'a, L> = Box<dyn FnOnce(&Registration<'a, L>) -> Result<()> + 'a>;

/// Builds a [`Registration`] (from [`Mpit::event_registration`]): allocation hints, closures
/// per safety level, a dropped handler.
#[must_use = "nothing is registered until `register` is called"]
pub struct RegistrationBuilder<'a, L: Level, O: MpiObject + ?Sized> {
    mpit: &'a Mpit<L>,
    index: usize,
    obj: &'a O,
    info: Option<&'a Info>,
    dropped: Option<Install<'a, L>>,
    levels: Vec<(CbSafety, Install<'a, L>)>,
}

impl<L: Level, O: MpiObject + ?Sized> std::fmt::Debug for RegistrationBuilder<'_, L, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistrationBuilder")
            .field("index", &self.index)
            .field(
                "levels",
                &self.levels.iter().map(|l| l.0).collect::<Vec<_>>(),
            )
            .field("dropped_handler", &self.dropped.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a, L: Level, O: MpiObject + ?Sized> RegistrationBuilder<'a, L, O> {
    /// Hints for `MPI_T_event_handle_alloc`.
    ///
    /// MPI-4.1 §16.3.8.4, `MPI_T_event_handle_alloc`.
    #[doc(alias = "MPI_T_event_handle_alloc")]
    pub fn info(mut self, info: &'a Info) -> Self {
        self.info = Some(info);
        self
    }

    /// A closure for contexts up to `safety` (see [`Registration::on_event`]); a second closure
    /// for the same level replaces the first.
    pub fn on_event<F>(mut self, safety: CbSafety, f: F) -> Self
    where
        F: Fn(&EventInstance<'_>) + Send + Sync + 'static,
    {
        self.levels.retain(|(l, _)| *l != safety);
        self.levels.push((
            safety,
            Box::new(move |r: &Registration<'a, L>| r.on_event(safety, f)),
        ));
        self
    }

    /// The dropped-event handler (see [`Registration::on_dropped`]).
    pub fn on_dropped<F>(mut self, f: F) -> Self
    where
        F: Fn(Dropped) + Send + Sync + 'static,
    {
        self.dropped = Some(Box::new(move |r: &Registration<'a, L>| r.on_dropped(f)));
        self
    }

    /// Allocates the handle (with the hints) and installs the dropped handler, then the
    /// closures from the highest safety level down, so that no event is dropped for want of
    /// a level that is about to be registered (MPI-4.1 §16.3.8.4, advice to users).
    pub fn register(mut self) -> Result<Registration<'a, L>> {
        let reg = self
            .mpit
            .alloc_registration(self.index, self.obj, self.info)?;
        if let Some(install) = self.dropped.take() {
            install(&reg)?;
        }
        self.levels
            .sort_by_key(|(l, _)| std::cmp::Reverse(CbSafety::ALL.iter().position(|x| x == l)));
        for (_, install) in self.levels {
            install(&reg)?;
        }
        Ok(reg)
    }
}

impl<L: Level> Registration<'_, L> {
    /// The event type this registration is for.
    pub fn info(&self) -> &EventTypeInfo {
        &self.info
    }

    /// Registers `f` as the callback for contexts up to `safety` (MPI chooses, per event, the
    /// callback of the lowest registered level sufficient for the context). Register the
    /// highest level first, as the standard advises. Replaces an earlier closure of that level;
    /// the old one is kept until the registration is freed, since it may still be running.
    ///
    /// MPI-4.1 §16.3.8.4, `MPI_T_event_register_callback`.
    #[doc(alias = "MPI_T_event_register_callback")]
    pub fn on_event<F>(&self, safety: CbSafety, f: F) -> Result<()>
    where
        F: Fn(&EventInstance<'_>) + Send + Sync + 'static,
    {
        let data_refused = self.data_refused;
        ffi::event_register_callback(&self.raw, safety_to_raw(safety), move |raw| {
            f(&EventInstance { raw, data_refused })
        })
    }

    /// Removes the callback of level `safety` (MPI_T_event_register_callback with NULL).
    pub fn remove_callback(&self, safety: CbSafety) -> Result<()> {
        ffi::event_remove_callback(&self.raw, safety_to_raw(safety))
    }

    /// Sets the handler MPI calls with counts of dropped events, before the next event of the
    /// same source.
    ///
    /// What it hears is what the same registration hears in C: an event raised in a context
    /// for which no closure of the registration is safe enough is dropped (MPI-4.1
    /// §16.3.8.4), counted, and the count reported before the next event the registration
    /// delivers to one of its closures, never while none is safe enough (a registration whose
    /// only closure is for `MPI_T_CB_REQUIRE_NONE`, where MPICH raises at
    /// `MPI_T_CB_REQUIRE_MPI_RESTRICTED`, hears nothing). The same on every thread level:
    /// where this crate keeps MPICH's registrations in its pool
    /// ([`quirks::MPICH_EVENT_REGISTRATION_RACE`](crate::quirks::MPICH_EVENT_REGISTRATION_RACE)),
    /// the pool counts and reports the drops as MPICH would.
    ///
    /// MPI-4.1 §16.3.8.5, `MPI_T_event_set_dropped_handler`.
    #[doc(alias = "MPI_T_event_set_dropped_handler")]
    pub fn on_dropped<F>(&self, f: F) -> Result<()>
    where
        F: Fn(Dropped) + Send + Sync + 'static,
    {
        ffi::event_set_dropped_handler(&self.raw, move |count, source, safety| {
            f(Dropped {
                count: u64::try_from(count).unwrap_or(0),
                source: usize::try_from(source).unwrap_or(usize::MAX),
                safety: safety_from_raw(safety),
            })
        })
    }

    /// Sets hints on the registration (`MPI_T_event_handle_set_info`).
    ///
    /// MPI-4.1 §16.3.8.4, `MPI_T_event_handle_set_info`.
    #[doc(alias = "MPI_T_event_handle_set_info")]
    pub fn set_info(&self, info: &Info) -> Result<()> {
        ffi::event_handle_set_info(&self.raw, info.raw())
    }

    /// The hints in use for the registration (`MPI_T_event_handle_get_info`).
    ///
    /// MPI-4.1 §16.3.8.4, `MPI_T_event_handle_get_info`.
    #[doc(alias = "MPI_T_event_handle_get_info")]
    pub fn info_used(&self) -> Result<Info> {
        Ok(Info::from_owned(ffi::event_handle_get_info(&self.raw)?))
    }

    /// Sets hints on the callback of level `safety` (`MPI_T_event_callback_set_info`).
    ///
    /// MPI-4.1 §16.3.8.4, `MPI_T_event_callback_set_info`.
    #[doc(alias = "MPI_T_event_callback_set_info")]
    pub fn set_callback_info(&self, safety: CbSafety, info: &Info) -> Result<()> {
        ffi::event_callback_set_info(&self.raw, safety_to_raw(safety), info.raw())
    }

    /// The hints in use for the callback of level `safety` (`MPI_T_event_callback_get_info`).
    ///
    /// MPI-4.1 §16.3.8.4, `MPI_T_event_callback_get_info`.
    #[doc(alias = "MPI_T_event_callback_get_info")]
    pub fn callback_info_used(&self, safety: CbSafety) -> Result<Info> {
        Ok(Info::from_owned(ffi::event_callback_get_info(
            &self.raw,
            safety_to_raw(safety),
        )?))
    }

    /// How many closure invocations panicked (caught at the FFI boundary), and their messages
    /// where they could be recorded.
    pub fn panics(&self) -> (usize, Vec<String>) {
        self.raw.panics()
    }

    /// Starts `MPI_T_event_handle_free` and returns a handle to wait for MPI's free callback.
    ///
    /// MPI-4.1 §16.3.8.4, `MPI_T_event_handle_free`.
    #[doc(alias = "MPI_T_event_handle_free")]
    pub fn free(self) -> Result<Freeing> {
        ffi::event_handle_free(self.raw).map(|shared| Freeing { shared })
    }
}

/// Bytes of event data a [`EventRecord`] holds inline (no allocation up to this extent).
///
/// Five 8-byte elements (MPICH's RECVQ events have two or three ints). Kept small on purpose:
/// a stream's queue slot holds an event in one 64-byte cache line (the stream's throughput
/// follows the lines a slot spans); longer data is kept aside, allocated.
pub const INLINE_EVENT_BYTES: usize = 40;

// The record size the throughput figure above depends on.
const _: () = assert!(std::mem::size_of::<EventRecord>() <= 72);

/// One event as a stream keeps it: type, source, timestamp and the data laid out by the
/// event type's displacements, inline up to [`INLINE_EVENT_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRecord {
    /// The event type's index.
    pub event: usize,
    /// The source that raised it.
    pub source: usize,
    /// Its timestamp in the source's ticks (0 if the source gave none).
    pub timestamp: u64,
    /// The event data as `MPI_T_event_copy` wrote it; empty where it could not be read
    /// ([`EventInstance::data_readable`]).
    pub data: smallvec::SmallVec<[u8; INLINE_EVENT_BYTES]>,
}

impl EventRecord {
    /// Element `index` of the record, decoded with the event type's `elements`.
    pub fn value(&self, elements: &[EventElement], index: usize) -> Result<Value> {
        let e = elements.get(index).ok_or(Error::Mpi {
            class: ErrorClass::InvalidIndex,
            code: sys::MPI_T_ERR_INVALID_INDEX,
        })?;
        let start = usize::try_from(e.displacement).map_err(|_| Error::LengthOverflow)?;
        let bytes = self
            .data
            .get(start..start + e.datatype.size())
            .ok_or(Error::size_mismatch(
                start + e.datatype.size(),
                self.data.len(),
            ))?;
        Value::from_ne_bytes(e.datatype, bytes)
    }
}

/// An event as a stream's queue slot holds it: 60 bytes, so that with the slot's sequence
/// number it fills one cache line (an [`EventRecord`], 72 bytes, took two).
#[derive(Debug, Clone, Copy)]
struct Packed {
    /// The timestamp, low and high halves (4-byte alignment keeps the record at 60 bytes).
    timestamp: [u32; 2],
    event: u32,
    /// `u32::MAX`: none.
    source: u32,
    /// Bytes of `data` in use, or [`Packed::ASIDE`]: the data is in the stream's side table.
    len: u32,
    data: [u8; INLINE_EVENT_BYTES],
}

impl Packed {
    /// `len` of an event whose data is kept aside, by slot.
    const ASIDE: u32 = u32::MAX;

    /// An event of type `event` with `len` bytes of data, none written yet, no source and no
    /// timestamp.
    #[inline(always)]
    fn new(event: usize, len: usize) -> Packed {
        Packed {
            timestamp: [0; 2],
            event: event as u32,
            source: u32::MAX,
            len: len as u32,
            data: [0; INLINE_EVENT_BYTES],
        }
    }

    #[inline(always)]
    fn set_source(&mut self, source: Option<usize>) {
        self.source = source.map_or(u32::MAX, |s| s as u32);
    }

    #[inline(always)]
    fn set_timestamp(&mut self, timestamp: u64) {
        self.timestamp = [timestamp as u32, (timestamp >> 32) as u32];
    }
}

// One slot, one line: the throughput figure above depends on it.
const _: () = assert!(crate::ffi::ring::slot_size::<Packed>() == 64);

/// What a stream's callback fills and its consumers read: the queue of packed events, data
/// longer than [`INLINE_EVENT_BYTES`] by slot, and the count of events dropped.
#[derive(Debug)]
struct StreamQueue {
    ring: crate::ffi::ring::Ring<Packed>,
    /// Data longer than the inline bytes, by the slot of its event (made on the first such
    /// event: allocating is what such an event costs anyway).
    aside: std::sync::OnceLock<Box<[std::sync::Mutex<Vec<u8>>]>>,
    drops: std::sync::atomic::AtomicU64,
}

impl StreamQueue {
    fn new(capacity: usize) -> StreamQueue {
        StreamQueue {
            ring: crate::ffi::ring::Ring::new(capacity, Packed::new(0, 0)),
            aside: std::sync::OnceLock::new(),
            drops: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Queues an event whose data is inline; counts it dropped if the queue is full.
    #[inline(always)]
    fn push(&self, packed: Packed) {
        if !self.ring.push_with(|_, slot| *slot = packed) {
            self.drops.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Queues an event whose data (`data`, or none if `None`: it could not be read) does not
    /// fit inline: kept aside, by slot.
    #[cold]
    #[inline(never)]
    fn push_long(&self, mut packed: Packed, data: Option<Vec<u8>>) {
        packed.len = if data.is_some() { Packed::ASIDE } else { 0 };
        // Made before the slot is claimed: nothing that can panic or wait runs while it is.
        let aside = self.aside.get_or_init(|| {
            (0..self.ring.slots())
                .map(|_| std::sync::Mutex::new(Vec::new()))
                .collect()
        });
        let queued = self.ring.push_with(|slot, value| {
            if let Some(data) = data {
                // The slot is this producer's alone until it is read: uncontended.
                *aside[slot].lock().unwrap_or_else(|e| e.into_inner()) = data;
            }
            *value = packed;
        });
        if !queued {
            self.drops.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The record of a packed event read from `slot` (its long data taken before the slot is
    /// freed: [`Reader::pop_with`](crate::ffi::ring::Reader::pop_with)).
    #[inline(always)]
    fn record(&self, (slot, p): (usize, Packed)) -> EventRecord {
        let data = match p.len {
            Packed::ASIDE => {
                smallvec::SmallVec::from_vec(self.aside.get().map_or_else(Vec::new, |a| {
                    std::mem::take(&mut *a[slot].lock().unwrap_or_else(|e| e.into_inner()))
                }))
            }
            // The whole inline array, moved (no call to copy `n` bytes).
            n => smallvec::SmallVec::from_buf_and_len(p.data, (n as usize).min(INLINE_EVENT_BYTES)),
        };
        EventRecord {
            event: p.event as usize,
            source: match p.source {
                u32::MAX => usize::MAX,
                s => s as usize,
            },
            timestamp: u64::from(p.timestamp[0]) | u64::from(p.timestamp[1]) << 32,
            data,
        }
    }
}

/// The consumer side of an event stream: a bounded lock-free queue that a callback fills
/// without locking or (up to [`INLINE_EVENT_BYTES`]) allocating, so it is valid at
/// `MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE`. A full queue counts the event as dropped. Consumers
/// (clones of the stream) read in turn.
#[derive(Debug, Clone)]
pub struct EventStream {
    queue: Arc<StreamQueue>,
    elements: Arc<[EventElement]>,
}

impl EventStream {
    /// The next record, if one is waiting (`None` too while another consumer of this stream, a
    /// clone or a [`EventStream::drain`] in progress, is reading: it takes what is waiting).
    pub fn try_recv(&self) -> Option<EventRecord> {
        self.queue
            .ring
            .reader()?
            .pop_with(|slot, p| self.queue.record((slot, p)))
    }

    /// The next record, waiting up to `timeout` (polling with backoff: the producer side
    /// never takes a lock, so there is nothing to block on).
    pub fn recv_timeout(&self, timeout: Duration) -> Option<EventRecord> {
        let deadline = std::time::Instant::now() + timeout;
        let backoff = crossbeam::utils::Backoff::new();
        loop {
            if let Some(r) = self.try_recv() {
                return Some(r);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            if backoff.is_completed() {
                std::thread::sleep(Duration::from_micros(50));
            } else {
                backoff.snooze();
            }
        }
    }

    /// Drains the records waiting now: as many as the queue held at the call, not those the
    /// producer adds meanwhile (a consumer chasing a faster producer would never return, and
    /// would share the cache lines it writes: 0.6-0.8 × the C ceiling measured that way).
    /// Consumers read in turn: while this iterator lives, other consumers of the stream get
    /// nothing (they never wait: none can deadlock on another), and while another reads, this
    /// one is empty.
    pub fn drain(&self) -> impl Iterator<Item = EventRecord> + '_ {
        let mut reader = self.queue.ring.reader();
        let waiting = reader.as_ref().map_or(0, |_| self.queue.ring.len());
        (0..waiting).map_while(move |_| {
            reader
                .as_mut()?
                .pop_with(|slot, p| self.queue.record((slot, p)))
        })
    }

    /// Events dropped because the queue was full.
    pub fn drops(&self) -> u64 {
        self.queue.drops.load(Ordering::Relaxed)
    }

    /// The elements of the event type, to decode records with [`EventRecord::value`].
    pub fn elements(&self) -> &[EventElement] {
        &self.elements
    }
}

impl<L: Level> Registration<'_, L> {
    /// Registers, at level `safety`, a callback that copies each event into a bounded queue of
    /// `capacity` records and returns the consumer side. The callback takes no lock and does
    /// not allocate for events up to [`INLINE_EVENT_BYTES`].
    pub fn stream(&self, safety: CbSafety, capacity: usize) -> Result<EventStream> {
        let stream = EventStream {
            queue: Arc::new(StreamQueue::new(capacity)),
            elements: self.info.elements.clone().into(),
        };
        let queue = Arc::clone(&stream.queue);
        let event = self.info.index;
        // The common case, every event MPI_T defines: data that fits inline (or that cannot
        // be read: a quirk), written by MPI straight into the claimed slot with the source and
        // timestamp, by a callback without a branch on which.
        fn capture<const COPY: bool>(
            queue: &StreamQueue,
            event: usize,
            len: u32,
            ev: &EventInstance<'_>,
        ) {
            let queued = queue.ring.push_with(|_, slot| {
                let (copied, source, ts) = ffi::event_capture::<COPY>(ev.raw, &mut slot.data);
                slot.event = event as u32;
                slot.len = if copied { len } else { 0 };
                slot.source = source;
                slot.set_timestamp(ts);
            });
            if !queued {
                queue.drops.fetch_add(1, Ordering::Relaxed);
            }
        }
        match self.info.extent() {
            _ if self.data_refused.is_some() => {
                self.on_event(safety, move |ev| capture::<false>(&queue, event, 0, ev))?
            }
            Some(extent) if extent <= INLINE_EVENT_BYTES => {
                let len = extent as u32;
                self.on_event(safety, move |ev| capture::<true>(&queue, event, len, ev))?
            }
            _ => self.on_event(safety, move |ev| {
                // Packed on the stack, moved into its slot once; data longer than the inline
                // bytes is allocated. Data that cannot be read (a quirk, an error) leaves the
                // record's data empty: the event is never lost.
                let extent = ev.extent();
                let mut packed = Packed::new(event, extent.min(INLINE_EVENT_BYTES));
                let long = if extent <= INLINE_EVENT_BYTES {
                    if ev.copy_into(&mut packed.data[..extent]).is_err() {
                        packed.len = 0;
                    }
                    None
                } else {
                    let mut data = vec![0; extent];
                    Some(ev.copy_into(&mut data).ok().map(|_| data))
                };
                packed.set_source(ev.source().ok());
                packed.set_timestamp(ev.timestamp().unwrap_or(0));
                match long {
                    None => queue.push(packed),
                    Some(data) => queue.push_long(packed, data),
                }
            })?,
        }
        Ok(stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(event: usize, source: usize, timestamp: u64, data: &[u8]) -> EventRecord {
        EventRecord {
            event,
            source,
            timestamp,
            data: smallvec::SmallVec::from_slice(data),
        }
    }

    /// A stream's queue gives back what its callback was given, in order, lap after lap over
    /// the same slots: data up to `INLINE_EVENT_BYTES` inline, longer data through the side
    /// table of its slot, a copy that failed as empty data, no source as `usize::MAX`, the
    /// whole 64-bit timestamp; a full queue counts the event dropped and keeps the others.
    #[test]
    fn stream_queue_keeps_every_record_whole() {
        let q = StreamQueue::new(3);
        let long: Vec<u8> = (0..100).collect();
        let packed = |event, source, stamp, data: &[u8]| {
            let mut p = Packed::new(event, data.len());
            p.data[..data.len()].copy_from_slice(data);
            p.set_source(source);
            p.set_timestamp(stamp);
            p
        };
        for lap in 0..5u64 {
            let stamp = lap << 40 | 7;
            q.push(packed(1, Some(2), stamp, &lap.to_ne_bytes()));
            let mut longer = long.clone();
            longer.resize(long.len() + lap as usize, 0);
            q.push_long(packed(3, None, 9, &[]), Some(longer.clone()));
            q.push_long(packed(4, Some(0), 0, &[]), None);
            q.push(packed(5, Some(0), 0, &[1]));
            let mut rd = q.ring.reader().unwrap();
            let got: Vec<EventRecord> =
                std::iter::from_fn(|| rd.pop_with(|slot, p| q.record((slot, p)))).collect();
            assert_eq!(
                got,
                [
                    record(1, 2, stamp, &lap.to_ne_bytes()),
                    record(3, usize::MAX, 9, &longer),
                    record(4, 0, 0, &[]),
                ],
                "lap {lap}"
            );
        }
        assert_eq!(q.drops.load(Ordering::Relaxed), 5);
    }

    /// Consumers of a stream read in turn and never wait: a `try_recv` or a second `drain`
    /// inside a `drain` of the same stream returns at once with nothing (a blocking lock would
    /// deadlock the thread), and the outer drain still gives every record, in order.
    #[test]
    fn a_consumer_inside_a_drain_does_not_wait() {
        let s = EventStream {
            queue: Arc::new(StreamQueue::new(4)),
            elements: Arc::from(Vec::new()),
        };
        for e in 0..3 {
            s.queue.push(Packed::new(e, 0));
        }
        let mut seen = Vec::new();
        for r in s.drain() {
            assert_eq!(s.try_recv(), None);
            assert_eq!(s.drain().count(), 0);
            seen.push(r.event);
        }
        assert_eq!(seen, [0, 1, 2]);
        s.queue.push(Packed::new(7, 0));
        assert_eq!(s.try_recv().map(|r| r.event), Some(7));
    }

    /// A long event's data is kept by slot beside its record: the slot is not given back to
    /// the producers before the consumer has taken the data, so a producer a lap ahead cannot
    /// put its own data in its place (a full queue of 4 slots, freed after every read).
    #[test]
    fn long_data_stays_with_its_record_across_laps() {
        let q = StreamQueue::new(4);
        let long = |b: u8| Some(vec![b; 50]);
        for b in 0..4 {
            q.push_long(Packed::new(usize::from(b), 0), long(b));
        }
        let mut rd = q.ring.reader().unwrap();
        for lap in 0..3u8 {
            for b in 0..4u8 {
                let r = rd
                    .pop_with(|slot, p| {
                        // While the record is made, its slot is not free: this one is dropped.
                        q.push_long(Packed::new(99, 0), long(99));
                        q.record((slot, p))
                    })
                    .unwrap();
                assert_eq!(r.data.as_slice(), [4 * lap + b; 50].as_slice(), "lap {lap}");
                q.push_long(Packed::new(0, 0), long(4 * (lap + 1) + b));
            }
        }
        assert_eq!(q.drops.load(Ordering::Relaxed), 12);
    }
}
