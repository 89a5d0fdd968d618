//! The fence's pool of event registrations for an MPI that must never free them
//! ([`quirks::MPICH_EVENT_REGISTRATION_RACE`]). MPICH walks a registration list without a
//! lock while another thread may free an entry (calling the free callback at once), and
//! stores a callback's function before its `user_data`. So each MPICH registration here
//! gets a [`Slot`] that is never freed: MPICH's `user_data` for level `i` is always
//! `&slot.levels[i]` and its function always [`slot_trampoline`], so any mix of old and new
//! values MPICH's walker may read is a valid pair. The trampoline counts itself in flight
//! before it loads the level's closure; a retired slot's closures are released only after
//! the count was seen at zero once they were unhooked (Dekker's order: `SeqCst` on both
//! sides). The last level MPICH searches (`MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE`) always has
//! the trampoline: an event that no level of the owner takes lands there and is counted
//! dropped in the slot (per source), so MPICH's own drop count stays zero and a reused
//! registration carries nothing over. The counts are reported to the owner's dropped handler
//! as MPICH reports its own (and as MPI-4.1 §16.3.8.5 has it): before the next event the
//! registration delivers to one of its closures, never while none is safe enough. So a
//! pooled registration behaves as a direct one and as the same registration in C. Retired
//! slots wait in the pool for the next registration of the same event type and object.

use std::sync::atomic::{AtomicBool, AtomicU64};

use mpit_core::Bind;

use super::*;

/// The callback levels in order, as the header spells them: 0..3 in MPICH's `mpi.h`,
/// 0x00/0x03/0x0F/0x3F in the MPI-5 ABI's (MPICH's ABI library has the same race).
const SAFETY: [sys::MPI_T_cb_safety; 4] = [
    sys::MPI_T_CB_REQUIRE_NONE as sys::MPI_T_cb_safety,
    sys::MPI_T_CB_REQUIRE_MPI_RESTRICTED as sys::MPI_T_cb_safety,
    sys::MPI_T_CB_REQUIRE_THREAD_SAFE as sys::MPI_T_cb_safety,
    sys::MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE as sys::MPI_T_cb_safety,
];
/// How many levels there are.
const LEVELS: usize = SAFETY.len();
/// The level searched last: the catch-all.
const CATCH_ALL: usize = LEVELS - 1;
/// Sources whose dropped events a slot counts until its next delivered event (MPICH has a
/// handful).
const DROP_SOURCES: usize = 8;

/// One MPICH registration, for the rest of the process.
pub(super) struct Slot {
    /// MPICH's registration.
    pub(super) raw: sys::MPI_T_event_registration,
    /// Event type index and bound object.
    key: (c_int, (Bind, u64)),
    levels: [SlotLevel; LEVELS],
    /// Levels below the catch-all whose callback MPICH has (changed by the owner only).
    in_mpich: [AtomicBool; LEVELS],
    /// Trampoline invocations running.
    in_flight: AtomicUsize,
    /// Events dropped since the last report, by source (sources from [`DROP_SOURCES`] on
    /// are reported at once, one by one).
    dropped: [AtomicU64; DROP_SOURCES],
    /// The owning registration's block (null while retired).
    owner: AtomicPtr<Block>,
}

/// The `user_data` MPICH holds for one level.
struct SlotLevel {
    slot: *const Slot,
    /// A `SlotData<F>` (null: no closure at this level).
    current: AtomicPtr<c_void>,
}

// SAFETY: `raw` is MPICH's registration, only passed to MPI_T calls (serialised by
// MPICH's MPI_T lock); `slot` points to the slot itself, fixed at creation; everything
// else is atomic.
unsafe impl Send for Slot {}
// SAFETY: as above.
unsafe impl Sync for Slot {}

/// A closure of one level, type-erased behind the function that calls it.
#[repr(C)]
struct SlotData<F> {
    call: unsafe fn(*const c_void, sys::MPI_T_event_instance, sys::MPI_T_cb_safety),
    block: *const Block,
    f: F,
}

/// Retired slots: `idle` ones reusable, `retiring` ones waiting for their invocations
/// in flight to end before their block is released.
struct Pool {
    idle: Vec<&'static Slot>,
    retiring: Vec<(&'static Slot, Arc<Block>)>,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    idle: Vec::new(),
    retiring: Vec::new(),
});

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether registrations go through the pool: the quirk applies and MPI provides
/// `MPI_THREAD_MULTIPLE` (below it no other thread raises events during an MPI_T call).
pub(super) fn applies() -> bool {
    quirks::applies(&quirks::MPICH_EVENT_REGISTRATION_RACE)
        && matches!(
            (super::super::initialized(), super::super::finalized()),
            (Ok(true), Ok(false))
        )
        && super::super::query_thread().is_ok_and(|l| l == mpit_sys::MPI_THREAD_MULTIPLE)
}

/// The slot level of a raw callback safety.
fn level(safety: sys::MPI_T_cb_safety) -> Result<usize> {
    SAFETY.iter().position(|&s| s == safety).ok_or(Error::Mpi {
        class: ErrorClass::InvalidIndex,
        code: sys::MPI_T_ERR_INVALID_INDEX,
    })
}

fn user_data(slot: &Slot, i: usize) -> *mut c_void {
    ptr::from_ref(&slot.levels[i]).cast_mut().cast()
}

/// A registration of event type `index` for `obj`: a retired slot of the same type and
/// object, or a new MPICH registration with the catch-all hooked.
pub(super) fn alloc(
    index: c_int,
    obj: RawObject,
    hints: Option<&RawInfo>,
    layout: Layout,
) -> Result<(&'static Slot, Arc<Block>)> {
    let key = (index, obj.identity());
    let reused = {
        let mut p = pool();
        sweep_locked(&mut p);
        let i = p.idle.iter().position(|s| s.key == key);
        i.map(|i| p.idle.swap_remove(i))
    };
    let slot = match reused {
        Some(slot) => {
            if let Some(h) = hints {
                // SAFETY: a live MPICH registration (never freed) and a live info.
                let rc = unsafe { sys::MPI_T_event_handle_set_info(slot.raw, h.as_raw()) };
                if let Err(e) = check(rc) {
                    pool().idle.push(slot);
                    return Err(e);
                }
            }
            slot
        }
        None => new_slot(index, obj, key, hints)?,
    };
    let block = Block::new(layout, true);
    // A new owner starts with no drops of the last one's.
    for d in &slot.dropped {
        d.store(0, Ordering::SeqCst);
    }
    slot.owner
        .store(Arc::as_ptr(&block).cast_mut(), Ordering::SeqCst);
    Ok((slot, block))
}

fn new_slot(
    index: c_int,
    obj: RawObject,
    key: (c_int, (Bind, u64)),
    hints: Option<&RawInfo>,
) -> Result<&'static Slot> {
    let mut raw = ptr::null_mut();
    let hints = hints.map_or(sys::MPI_INFO_NULL, RawInfo::as_raw);
    // SAFETY: as in `event_handle_alloc` (the caller holds the `TInit`).
    check(obj.with_ptr(|p| unsafe { sys::MPI_T_event_handle_alloc(index, p, hints, &mut raw) }))?;
    let level = || SlotLevel {
        slot: ptr::null(),
        current: AtomicPtr::new(ptr::null_mut()),
    };
    let p = Box::into_raw(Box::new(Slot {
        raw,
        key,
        levels: [level(), level(), level(), level()],
        in_mpich: Default::default(),
        in_flight: AtomicUsize::new(0),
        dropped: Default::default(),
        owner: AtomicPtr::new(ptr::null_mut()),
    }));
    // SAFETY: `p` is the box just leaked, not yet shared: its back pointers are set
    // before any reference to it escapes; it is never freed.
    let slot: &'static Slot = unsafe {
        for l in &mut (*p).levels {
            l.slot = p;
        }
        &*p
    };
    // SAFETY: a live registration; `user_data` is the slot's catch-all level, valid for
    // the rest of the process, as `slot_trampoline` expects.
    let rc = unsafe {
        sys::MPI_T_event_register_callback(
            raw,
            sys::MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE as sys::MPI_T_cb_safety,
            sys::MPI_INFO_NULL,
            user_data(slot, CATCH_ALL),
            Some(slot_trampoline),
        )
    };
    // Without the catch-all the slot still works (MPICH counts drops itself), but a
    // reuse could then carry drops over: keep it out of the pool's reuse.
    check(rc)?;
    slot.in_mpich[CATCH_ALL].store(true, Ordering::Relaxed);
    Ok(slot)
}

/// Installs `f` at the level of `safety`.
pub(super) fn register_callback<F>(
    slot: &'static Slot,
    block: &Arc<Block>,
    safety: sys::MPI_T_cb_safety,
    f: F,
) -> Result<()>
where
    F: Fn(EventRef<'_>) + Send + Sync + 'static,
{
    let i = level(safety)?;
    let data = Box::into_raw(Box::new(SlotData {
        call: call_slot_data::<F>,
        block: Arc::as_ptr(block),
        f,
    }));
    block.bury(Grave::Event(data.cast(), free_slot_data::<F>));
    slot.levels[i].current.store(data.cast(), Ordering::SeqCst);
    if !slot.in_mpich[i].load(Ordering::Relaxed) {
        // SAFETY: a live registration; `user_data` and function as in `new_slot`.
        check(unsafe {
            sys::MPI_T_event_register_callback(
                slot.raw,
                safety,
                sys::MPI_INFO_NULL,
                user_data(slot, i),
                Some(slot_trampoline),
            )
        })?;
        slot.in_mpich[i].store(true, Ordering::Relaxed);
    }
    Ok(())
}

/// Removes the closure of the level of `safety` (the catch-all stays hooked in MPICH).
pub(super) fn remove_callback(slot: &'static Slot, safety: sys::MPI_T_cb_safety) -> Result<()> {
    let i = level(safety)?;
    slot.levels[i]
        .current
        .store(ptr::null_mut(), Ordering::SeqCst);
    if i != CATCH_ALL {
        unhook(slot, i)?;
    }
    Ok(())
}

/// Takes MPICH's callback of level `i` away (a NULL function, the same `user_data`).
fn unhook(slot: &Slot, i: usize) -> Result<()> {
    if slot.in_mpich[i].load(Ordering::Relaxed) {
        // SAFETY: a live registration; a NULL function removes the level's callback.
        check(unsafe {
            sys::MPI_T_event_register_callback(
                slot.raw,
                SAFETY[i],
                sys::MPI_INFO_NULL,
                user_data(slot, i),
                None,
            )
        })?;
        slot.in_mpich[i].store(false, Ordering::Relaxed);
    }
    Ok(())
}

/// Retires `slot`: callbacks unhooked and cleared, the owner gone; `block` is released
/// (and marked freed) by a later sweep that sees no invocation in flight.
pub(super) fn retire(slot: &'static Slot, block: Arc<Block>) {
    for i in 0..CATCH_ALL {
        // A level left hooked only calls the trampoline, which finds no closure.
        let _ = unhook(slot, i);
    }
    for l in &slot.levels {
        l.current.store(ptr::null_mut(), Ordering::SeqCst);
    }
    slot.owner.store(ptr::null_mut(), Ordering::SeqCst);
    let mut p = pool();
    p.retiring.push((slot, block));
    sweep_locked(&mut p);
}

/// Releases every retired block whose slot has no invocation in flight.
pub(crate) fn sweep() {
    sweep_locked(&mut pool());
}

fn sweep_locked(p: &mut Pool) {
    let mut i = 0;
    while i < p.retiring.len() {
        if p.retiring[i].0.in_flight.load(Ordering::SeqCst) == 0 {
            let (slot, block) = p.retiring.swap_remove(i);
            *block.freed.lock().unwrap_or_else(|e| e.into_inner()) = true;
            block.freed_cv.notify_all();
            drop(block);
            p.idle.push(slot);
        } else {
            i += 1;
        }
    }
}

/// After the last `MPI_T_finalize` of this crate MPICH may free its event types and,
/// with them, the lists the slots are on: the slots are forgotten (left allocated, as
/// an invocation may still be running in one), and blocks still in flight are leaked
/// rather than freed under it.
pub(crate) fn end_of_epoch() {
    let mut p = pool();
    sweep_locked(&mut p);
    p.idle.clear();
    for (_, block) in p.retiring.drain(..) {
        std::mem::forget(block);
    }
}

/// MPICH's callback for every level of every slot.
unsafe extern "C" fn slot_trampoline(
    instance: sys::MPI_T_event_instance,
    _registration: sys::MPI_T_event_registration,
    cb_safety: sys::MPI_T_cb_safety,
    user_data: *mut c_void,
) {
    // MPICH stores the function before the `user_data`: its walker may see ours with
    // the zero it had.
    if user_data.is_null() {
        return;
    }
    // SAFETY: a `SlotLevel` of a slot that is never freed, its back pointer fixed.
    let slot = unsafe { &*(*(user_data as *const SlotLevel)).slot };
    // SAFETY: as above.
    let level = unsafe { &*(user_data as *const SlotLevel) };
    slot.in_flight.fetch_add(1, Ordering::SeqCst);
    let data = level.current.load(Ordering::SeqCst);
    if data.is_null() {
        count_drop(slot, instance, cb_safety);
    } else {
        report_drops(slot, cb_safety);
        // SAFETY: `data` is a `SlotData<F>` whose `call` reads it as such; it and its
        // block stay alive while this invocation is counted in flight (`retire`).
        unsafe {
            let call = (*(data as *const SlotData<()>)).call;
            call(data, instance, cb_safety);
        }
    }
    slot.in_flight.fetch_sub(1, Ordering::SeqCst);
}

/// An event no level of the owner takes: counted dropped for the owner's next delivered
/// event (a source past [`DROP_SOURCES`]: reported at once).
fn count_drop(slot: &Slot, instance: sys::MPI_T_event_instance, cb_safety: sys::MPI_T_cb_safety) {
    let mut source: c_int = 0;
    // SAFETY: the instance is valid during this callback; valid out-pointer. On an
    // error the source stays 0.
    let _ = unsafe { sys::MPI_T_event_get_source(instance, &mut source) };
    match usize::try_from(source)
        .ok()
        .and_then(|s| slot.dropped.get(s))
    {
        Some(d) => {
            d.fetch_add(1, Ordering::SeqCst);
        }
        None => report(slot, 1, source, cb_safety),
    }
}

/// The drops counted since the last report, to the owner's dropped handler (before the event
/// about to be delivered).
fn report_drops(slot: &Slot, cb_safety: sys::MPI_T_cb_safety) {
    for (source, d) in slot.dropped.iter().enumerate() {
        if d.load(Ordering::Relaxed) != 0 {
            let n = d.swap(0, Ordering::SeqCst);
            if n != 0 {
                report(slot, n, source as c_int, cb_safety);
            }
        }
    }
}

/// `count` dropped events of `source` to the owner's dropped handler, if it has one.
fn report(slot: &Slot, count: u64, source: c_int, cb_safety: sys::MPI_T_cb_safety) {
    let block = slot.owner.load(Ordering::SeqCst);
    if block.is_null() {
        return;
    }
    // SAFETY: the owner's block stays alive while this invocation is counted in flight.
    let block = unsafe { &*block };
    let f = block.dropped.load(Ordering::Acquire);
    if f.is_null() {
        return;
    }
    // SAFETY: a box in the block's graveyard, freed only with the block.
    let f = unsafe { &**f };
    let count = sys::MPI_Count::try_from(count).unwrap_or(sys::MPI_Count::MAX);
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(count, source, cb_safety))) {
        block.record_panic(p);
    }
}

/// Calls the closure of a `SlotData<F>`.
///
/// # Safety
/// `p` must be a live `SlotData<F>` whose block is alive, and `instance` valid.
unsafe fn call_slot_data<F>(
    p: *const c_void,
    instance: sys::MPI_T_event_instance,
    safety: sys::MPI_T_cb_safety,
) where
    F: Fn(EventRef<'_>) + Send + Sync + 'static,
{
    // SAFETY: by the contract above.
    let d = unsafe { &*(p as *const SlotData<F>) };
    // SAFETY: by the contract above.
    let block = unsafe { &*d.block };
    call_closure(&d.f, block, instance, safety);
}

/// Frees a `SlotData<F>` box from the graveyard.
///
/// # Safety
/// `p` must come from `Box::into_raw(Box<SlotData<F>>)` and be freed once.
unsafe fn free_slot_data<F>(p: *mut c_void) {
    // SAFETY: by the contract above.
    drop(unsafe { Box::from_raw(p as *mut SlotData<F>) });
}
