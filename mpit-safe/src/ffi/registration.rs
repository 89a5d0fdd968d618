//! The fence's event registrations (MPI-4.1 §16.3.8.4–§16.3.8.7), in the style of rusqlite's
//! `functions.rs`/`hooks`: boxed closures as `user_data`, `extern "C"` trampolines with
//! `catch_unwind`, and a destructor that frees the boxes; the event instances callbacks get
//! (read, copy, timestamp, source) and the dropped-event handler.

use std::any::Any;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use mpit_core::{Error, ErrorClass, EventElement, Result, Scalar};

use super::esys as sys;
use super::{Event, Index, RawInfo, RawObject, TInit, event_get_elements, event_get_info};
use super::{fits, holds};
use crate::init::level::Level;
use crate::quirks;
use crate::raw::check;

// The registrations of an MPI that must never free them.
pub(super) mod pool;

/// The elements of an event type and the bytes `MPI_T_event_copy` writes, queried from
/// MPI when the registration is allocated: what the event entries check buffers against.
#[derive(Debug)]
struct Layout {
    elements: Vec<EventElement>,
    /// `None` where a displacement is negative or the end overflows.
    extent: Option<usize>,
}

/// A dropped-event handler: count, source index, callback safety (raw).
type DroppedFn = dyn Fn(sys::MPI_Count, c_int, sys::MPI_T_cb_safety) + Send + Sync + 'static;

/// The block MPI holds as `user_data`: the layout, the dropped handler, every closure ever
/// installed, panic reports, the free flag. Kept alive by an `Arc` whose one count belongs
/// to MPI until the free callback.
struct Block {
    layout: Layout,
    /// The dropped handler (null: none), loaded lock-free by its trampoline.
    dropped: AtomicPtr<Box<DroppedFn>>,
    /// Every closure ever installed (each level's `LevelData` box and each dropped
    /// handler), freed with the block: a replaced or removed closure may still be running
    /// on another thread until MPI's free callback.
    graveyard: Mutex<Vec<Grave>>,
    panics: AtomicUsize,
    panic_messages: Mutex<Vec<String>>,
    freed: Mutex<bool>,
    freed_cv: Condvar,
    /// Registered through a [`pool::Slot`]: no free callback comes, the pool's sweep
    /// marks it freed.
    pooled: bool,
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

enum Grave {
    /// A `LevelData<F>` box, type-erased with the function that frees it.
    Event(*mut c_void, unsafe fn(*mut c_void)),
    Dropped(*mut Box<DroppedFn>),
}

// SAFETY: the raw pointers in the graveyard are boxes of `Send + Sync` closures (or of no
// closure), only freed in `Drop for Block`.
unsafe impl Send for Grave {}

/// What MPI holds as `user_data` for one callback level: the block first (the dropped
/// handler's trampoline only knows it receives some level's `user_data`), then the
/// closure, called with static dispatch by `event_trampoline::<F>`.
#[repr(C)]
struct LevelData<F> {
    block: *const Block,
    f: F,
}

/// Frees a `LevelData<F>` box from the graveyard.
///
/// # Safety
/// `p` must come from `Box::into_raw(Box<LevelData<F>>)` and be freed once.
unsafe fn free_level_data<F>(p: *mut c_void) {
    // SAFETY: by the contract above.
    drop(unsafe { Box::from_raw(p as *mut LevelData<F>) });
}

impl Drop for Block {
    fn drop(&mut self) {
        let graves = std::mem::take(self.graveyard.get_mut().unwrap_or_else(|p| p.into_inner()));
        for g in graves {
            // SAFETY: each pointer came from `Box::into_raw` once and is freed once, here,
            // after MPI's free callback (or after a failed free), when no trampoline can
            // run.
            unsafe {
                match g {
                    Grave::Event(p, free) => free(p),
                    Grave::Dropped(p) => drop(Box::from_raw(p)),
                }
            }
        }
    }
}

impl Block {
    /// A block with no closure yet, of a registration made through the pool if `pooled`.
    fn new(layout: Layout, pooled: bool) -> Arc<Block> {
        Arc::new(Block {
            layout,
            dropped: AtomicPtr::new(ptr::null_mut()),
            graveyard: Mutex::new(Vec::new()),
            panics: AtomicUsize::new(0),
            panic_messages: Mutex::new(Vec::new()),
            freed: Mutex::new(false),
            freed_cv: Condvar::new(),
            pooled,
        })
    }

    fn bury(&self, grave: Grave) {
        self.graveyard
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(grave);
    }

    fn record_panic(&self, payload: Box<dyn Any + Send>) {
        self.panics.fetch_add(1, Ordering::Relaxed);
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic payload".to_owned());
        // try_lock: never block inside a callback context.
        if let Ok(mut v) = self.panic_messages.try_lock() {
            v.push(msg);
        }
    }
}

/// One event instance MPI passed to a callback, valid only during that callback.
#[derive(Clone, Copy)]
pub(crate) struct EventRef<'cb> {
    raw: sys::MPI_T_event_instance,
    safety: sys::MPI_T_cb_safety,
    layout: &'cb Layout,
}

impl<'cb> EventRef<'cb> {
    /// The safety requirement of the invocation's context, as MPI passed it.
    #[inline]
    pub(crate) fn safety(self) -> sys::MPI_T_cb_safety {
        self.safety
    }

    /// The elements of the event type.
    #[inline]
    pub(crate) fn elements(self) -> &'cb [EventElement] {
        &self.layout.elements
    }

    /// Bytes `MPI_T_event_copy` writes (0 where a displacement is negative).
    #[inline]
    pub(crate) fn extent(self) -> usize {
        self.layout.extent.unwrap_or(0)
    }
}

/// `MPI_T_event_read` of element `index` into `buf`, which must hold the element.
#[inline]
pub(crate) fn event_read<T: Scalar>(ev: EventRef<'_>, index: usize, buf: &mut [T]) -> Result<()> {
    let e = ev.layout.elements.get(index).ok_or(Error::Mpi {
        class: ErrorClass::InvalidIndex,
        code: sys::MPI_T_ERR_INVALID_INDEX,
    })?;
    fits(buf, e.datatype.size(), e.datatype)?;
    // SAFETY: the instance is valid during the callback `ev` borrows; the element exists
    // (its index is below the count MPI reported, so it fits a C int); `buf` holds the
    // element's bytes, of a type that takes any value of its datatype (both checked).
    check(unsafe { sys::MPI_T_event_read(ev.raw, index as c_int, buf.as_mut_ptr().cast()) })
}

/// `MPI_T_event_copy` into `buf`, which must hold the event's extent.
#[inline]
pub(crate) fn event_copy(ev: EventRef<'_>, buf: &mut [u8]) -> Result<()> {
    holds(buf, ev.layout.extent.ok_or(Error::LengthOverflow)?)?;
    // SAFETY: the instance is valid during the callback; `buf` holds at least the extent
    // MPI writes (checked).
    check(unsafe { sys::MPI_T_event_copy(ev.raw, buf.as_mut_ptr().cast()) })
}

/// `MPI_T_event_get_timestamp`.
#[inline]
pub(crate) fn event_get_timestamp(ev: EventRef<'_>) -> Result<sys::MPI_Count> {
    let mut ts: sys::MPI_Count = 0;
    // SAFETY: the instance is valid during the callback; valid out-pointer.
    check(unsafe { sys::MPI_T_event_get_timestamp(ev.raw, &mut ts) })?;
    Ok(ts)
}

/// `MPI_T_event_get_source`.
#[inline]
pub(crate) fn event_get_source(ev: EventRef<'_>) -> Result<c_int> {
    let mut s = 0;
    // SAFETY: the instance is valid during the callback; valid out-pointer.
    check(unsafe { sys::MPI_T_event_get_source(ev.raw, &mut s) })?;
    Ok(s)
}

/// What an event stream keeps of one event, in one pass with the return codes tested and
/// no `Result` built: `MPI_T_event_copy` into `data` if `COPY` (`false` if `data` cannot
/// hold the extent, MPI failed or `!COPY`), the source (`u32::MAX` if MPI failed or it is
/// out of range) and the timestamp (0 if MPI failed). The stream's callback calls it on
/// every event.
#[inline(always)]
pub(crate) fn event_capture<const COPY: bool>(
    ev: EventRef<'_>,
    data: &mut [u8],
) -> (bool, u32, u64) {
    let copied = match ev.layout.extent {
        // SAFETY: the instance is valid during the callback; `data` holds the extent MPI
        // writes (checked).
        Some(extent) if COPY && extent <= data.len() => unsafe {
            sys::MPI_T_event_copy(ev.raw, data.as_mut_ptr().cast()) == sys::MPI_SUCCESS
        },
        _ => false,
    };
    let (mut source, mut ts): (c_int, sys::MPI_Count) = (0, 0);
    // SAFETY: the instance is valid during the callback; valid out-pointers.
    let source = match unsafe { sys::MPI_T_event_get_source(ev.raw, &mut source) } {
        sys::MPI_SUCCESS if source >= 0 => source as u32,
        _ => u32::MAX,
    };
    // SAFETY: as above.
    let ts = match unsafe { sys::MPI_T_event_get_timestamp(ev.raw, &mut ts) } {
        sys::MPI_SUCCESS if ts >= 0 => ts as u64,
        _ => 0,
    };
    (copied, source, ts)
}

/// The event callback MPI calls for a closure of type `F` (one instance per closure type,
/// so the closure is called directly, not through a vtable).
unsafe extern "C" fn event_trampoline<F>(
    instance: sys::MPI_T_event_instance,
    _registration: sys::MPI_T_event_registration,
    cb_safety: sys::MPI_T_cb_safety,
    user_data: *mut c_void,
) where
    F: Fn(EventRef<'_>) + Send + Sync + 'static,
{
    // SAFETY: `user_data` is the `LevelData<F>` given at registration, kept (in the
    // graveyard) until the free callback, which cannot run while an invocation is in
    // flight.
    let data = unsafe { &*(user_data as *const LevelData<F>) };
    // SAFETY: its `block` pointer is MPI's `Arc` count, released only in the free
    // callback.
    let block = unsafe { &*data.block };
    call_closure(&data.f, block, instance, cb_safety);
}

/// Calls `f` with the instance, catching a panic into `block`'s report.
#[inline(always)]
fn call_closure<F>(
    f: &F,
    block: &Block,
    instance: sys::MPI_T_event_instance,
    safety: sys::MPI_T_cb_safety,
) where
    F: Fn(EventRef<'_>),
{
    let ev = EventRef {
        raw: instance,
        safety,
        layout: &block.layout,
    };
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(ev))) {
        block.record_panic(p);
    }
}

/// The dropped-event handler MPI calls.
unsafe extern "C" fn dropped_trampoline(
    count: sys::MPI_Count,
    _registration: sys::MPI_T_event_registration,
    source_index: c_int,
    cb_safety: sys::MPI_T_cb_safety,
    user_data: *mut c_void,
) {
    if user_data.is_null() {
        return;
    }
    // SAFETY: the user_data of one of this registration's callbacks: a `LevelData` (also
    // for a removed callback: `event_remove_callback` passes a `LevelData<()>`), whose
    // first field (repr(C)) is the block, alive until the free callback.
    let block = unsafe { &**(user_data as *const *const Block) };
    let f = block.dropped.load(Ordering::Acquire);
    if f.is_null() {
        return;
    }
    // SAFETY: a box in the graveyard, freed only with the block.
    let f = unsafe { &**f };
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(count, source_index, cb_safety))) {
        block.record_panic(p);
    }
}

/// MPI's free callback: from here on no invocation can follow, so MPI's count of the
/// block is released (freeing every closure unless a [`FreeWait`] still holds it).
unsafe extern "C" fn free_trampoline(
    _registration: sys::MPI_T_event_registration,
    _cb_safety: sys::MPI_T_cb_safety,
    user_data: *mut c_void,
) {
    // SAFETY: `user_data` is the pointer from `Arc::into_raw` in `event_handle_alloc`,
    // handed to MPI_T_event_handle_free once; MPI calls this once.
    let block = unsafe { Arc::from_raw(user_data as *const Block) };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        *block.freed.lock().unwrap_or_else(|p| p.into_inner()) = true;
        block.freed_cv.notify_all();
    }));
    drop(block);
}

/// An event-registration handle (`MPI_T_event_handle_alloc`) and the block of closures
/// MPI calls. Dropping it starts `MPI_T_event_handle_free`; the block is released in
/// MPI's free callback. Neither `Send` nor `Sync`.
pub(crate) struct RawRegistration<'m, L: Level> {
    raw: sys::MPI_T_event_registration,
    block: Arc<Block>,
    /// The pointer MPI holds (one `Arc` count), reclaimed by the free callback (null for
    /// a pooled registration).
    user_data: *const Block,
    /// The pool's slot where MPICH's registrations are never freed
    /// ([`quirks::MPICH_EVENT_REGISTRATION_RACE`]).
    slot: Option<&'static pool::Slot>,
    freeing: bool,
    _init: PhantomData<&'m TInit<L>>,
}

/// `MPI_T_event_handle_alloc` of event type `index` for `obj` (its kind checked against
/// the type's binding, [`Error::BindMismatch`]), with optional hints.
pub(crate) fn event_handle_alloc<'m, L: Level>(
    init: &'m TInit<L>,
    index: Index<Event>,
    obj: RawObject,
    hints: Option<&RawInfo>,
) -> Result<RawRegistration<'m, L>> {
    let q = event_get_info(init, index, None, None)?;
    let obj = obj.bound_as(q.bind)?;
    let elements = event_get_elements(init, index, q.num)?;
    let extent = elements.iter().try_fold(0usize, |end, e| {
        let start = usize::try_from(e.displacement).ok()?;
        Some(end.max(start.checked_add(e.datatype.size())?))
    });
    if pool::applies() {
        let layout = Layout { elements, extent };
        return pool::alloc(index.raw, obj, hints, layout).map(|(slot, block)| RawRegistration {
            raw: slot.raw,
            block,
            user_data: ptr::null(),
            slot: Some(slot),
            freeing: false,
            _init: PhantomData,
        });
    }
    let mut raw = ptr::null_mut();
    let hints = hints.map_or(sys::MPI_INFO_NULL, RawInfo::as_raw);
    check(obj.with_ptr(|p| {
        // SAFETY: MPI_T is initialised while `init` lives; the index is below the count; `p`
        // as in `cvar_handle_alloc`; a live info object or MPI_INFO_NULL; valid out-pointer.
        unsafe { sys::MPI_T_event_handle_alloc(index.raw, p, hints, &mut raw) }
    }))?;
    let block = Block::new(Layout { elements, extent }, false);
    let user_data = Arc::into_raw(block.clone());
    Ok(RawRegistration {
        raw,
        block,
        user_data,
        slot: None,
        freeing: false,
        _init: PhantomData,
    })
}

/// `MPI_T_event_register_callback` of `f` for contexts up to `safety` (raw). The closure is
/// kept until the free callback, since MPI may still call it after a replacement.
pub(crate) fn event_register_callback<F, L: Level>(
    reg: &RawRegistration<'_, L>,
    safety: sys::MPI_T_cb_safety,
    f: F,
) -> Result<()>
where
    F: Fn(EventRef<'_>) + Send + Sync + 'static,
{
    if let Some(slot) = reg.slot {
        return pool::register_callback(slot, &reg.block, safety, f);
    }
    let data = Box::into_raw(Box::new(LevelData {
        block: reg.user_data,
        f,
    }));
    reg.block
        .bury(Grave::Event(data.cast(), free_level_data::<F>));
    // SAFETY: a live registration; `data` stays valid until the free callback (graveyard)
    // and is what `event_trampoline::<F>` expects.
    check(unsafe {
        sys::MPI_T_event_register_callback(
            reg.raw,
            safety,
            sys::MPI_INFO_NULL,
            data.cast(),
            Some(event_trampoline::<F>),
        )
    })
}

/// `MPI_T_event_register_callback` with a NULL function: removes the callback of level
/// `safety` (raw).
pub(crate) fn event_remove_callback<L: Level>(
    reg: &RawRegistration<'_, L>,
    safety: sys::MPI_T_cb_safety,
) -> Result<()> {
    if let Some(slot) = reg.slot {
        return pool::remove_callback(slot, safety);
    }
    // The user_data MPI may still hand the dropped handler for this level.
    let header = Box::into_raw(Box::new(LevelData {
        block: reg.user_data,
        f: (),
    }));
    reg.block
        .bury(Grave::Event(header.cast(), free_level_data::<()>));
    // SAFETY: a live registration; a NULL function removes the level's callback; `header`
    // stays valid until the free callback.
    check(unsafe {
        sys::MPI_T_event_register_callback(reg.raw, safety, sys::MPI_INFO_NULL, header.cast(), None)
    })
}

/// `MPI_T_event_set_dropped_handler` to `f`, called with the count of dropped events, the
/// source index and the callback safety (raw).
pub(crate) fn event_set_dropped_handler<F, L: Level>(
    reg: &RawRegistration<'_, L>,
    f: F,
) -> Result<()>
where
    F: Fn(sys::MPI_Count, c_int, sys::MPI_T_cb_safety) + Send + Sync + 'static,
{
    let boxed: Box<DroppedFn> = Box::new(f);
    let p = Box::into_raw(Box::new(boxed));
    reg.block.bury(Grave::Dropped(p));
    reg.block.dropped.store(p, Ordering::Release);
    if reg.slot.is_some() {
        // The slot's catch-all callback reports the drops itself (see `pool`).
        return Ok(());
    }
    // SAFETY: a live registration; the trampoline finds the handler through the block.
    check(unsafe { sys::MPI_T_event_set_dropped_handler(reg.raw, Some(dropped_trampoline)) })
}

/// `MPI_T_event_handle_set_info`.
#[inline]
pub(crate) fn event_handle_set_info<L: Level>(
    reg: &RawRegistration<'_, L>,
    info: &RawInfo,
) -> Result<()> {
    // SAFETY: a live registration and a live info object.
    check(unsafe { sys::MPI_T_event_handle_set_info(reg.raw, info.0) })
}

/// `MPI_T_event_handle_get_info`: a new info object.
#[inline]
pub(crate) fn event_handle_get_info<L: Level>(reg: &RawRegistration<'_, L>) -> Result<RawInfo> {
    let mut raw = RawInfo(sys::MPI_INFO_NULL);
    // SAFETY: a live registration; valid out-pointer; MPI returns a new info object the
    // caller frees (`RawInfo` does).
    check(unsafe { sys::MPI_T_event_handle_get_info(reg.raw, &mut raw.0) })?;
    Ok(raw)
}

/// `MPI_T_event_callback_set_info` of level `safety` (raw).
#[inline]
pub(crate) fn event_callback_set_info<L: Level>(
    reg: &RawRegistration<'_, L>,
    safety: sys::MPI_T_cb_safety,
    info: &RawInfo,
) -> Result<()> {
    // SAFETY: a live registration and a live info object.
    check(unsafe { sys::MPI_T_event_callback_set_info(reg.raw, safety, info.0) })
}

/// `MPI_T_event_callback_get_info` of level `safety` (raw): a new info object.
#[inline]
pub(crate) fn event_callback_get_info<L: Level>(
    reg: &RawRegistration<'_, L>,
    safety: sys::MPI_T_cb_safety,
) -> Result<RawInfo> {
    let mut raw = RawInfo(sys::MPI_INFO_NULL);
    // SAFETY: as in `event_handle_get_info`.
    check(unsafe { sys::MPI_T_event_callback_get_info(reg.raw, safety, &mut raw.0) })?;
    Ok(raw)
}

impl<L: Level> RawRegistration<'_, L> {
    /// How many closure invocations panicked, and the messages that could be recorded.
    pub(crate) fn panics(&self) -> (usize, Vec<String>) {
        let n = self.block.panics.load(Ordering::Relaxed);
        let msgs = self
            .block
            .panic_messages
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default();
        (n, msgs)
    }

    fn start_free(&mut self) -> Result<()> {
        self.freeing = true;
        if let Some(slot) = self.slot {
            pool::retire(slot, self.block.clone());
            return Ok(());
        }
        // SAFETY: a live registration, freed once; `user_data` carries MPI's `Arc` count,
        // reclaimed by `free_trampoline`.
        let rc = unsafe {
            sys::MPI_T_event_handle_free(
                self.raw,
                self.user_data as *mut c_void,
                Some(free_trampoline),
            )
        };
        if rc != sys::MPI_SUCCESS {
            // MPI will not call the free callback: the handle is not valid, so no
            // invocation can follow either; reclaim MPI's count here.
            // SAFETY: from `Arc::into_raw`, not handed over.
            drop(unsafe { Arc::from_raw(self.user_data) });
        }
        check(rc)
    }
}

impl<L: Level> Drop for RawRegistration<'_, L> {
    fn drop(&mut self) {
        if !self.freeing {
            let _ = self.start_free();
        }
    }
}

/// `MPI_T_event_handle_free`: started here; wait for MPI's free callback with the result.
pub(crate) fn event_handle_free<L: Level>(mut reg: RawRegistration<'_, L>) -> Result<FreeWait> {
    let r = reg.start_free();
    r.map(|()| FreeWait(reg.block.clone()))
}

/// A started `MPI_T_event_handle_free`: the block, to wait for MPI's free callback.
#[derive(Debug)]
pub(crate) struct FreeWait(Arc<Block>);

impl FreeWait {
    /// Whether MPI has called the free callback (no further invocation can happen).
    pub(crate) fn is_done(&self) -> bool {
        if self.0.pooled {
            pool::sweep();
        }
        *self.0.freed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits up to `timeout` for the free callback; `true` if it has run.
    pub(crate) fn wait(&self, timeout: Duration) -> bool {
        if self.0.pooled {
            // No free callback comes: poll the pool's sweep until the invocations in
            // flight have ended.
            let end = std::time::Instant::now() + timeout;
            let mut pause = Duration::from_micros(20);
            loop {
                if self.is_done() {
                    return true;
                }
                if std::time::Instant::now() >= end {
                    return false;
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(5));
            }
        }
        let g = self.0.freed.lock().unwrap_or_else(|p| p.into_inner());
        let (g, _) = self
            .0
            .freed_cv
            .wait_timeout_while(g, timeout, |freed| !*freed)
            .unwrap_or_else(|p| p.into_inner());
        *g
    }
}
