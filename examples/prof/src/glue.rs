//! The state between the wrappers and the engine: the [`Profiler`], owned by the thread that
//! called `MPI_Init`, the re-entrancy guard, the object registry, and the counters
//! the wrappers keep outside the engine.
//!
//! Hot path ([`fast`], inlined into each wrapper): one comparison of a gate word with the
//! thread pointer (owner, re-entrancy and region mode at once; no thread-local, no call), a
//! load of the engine's address, the engine's panic-free fast entry
//! ([`Profiler::try_fast`]); a call only counted then goes to `PMPI_` as a tail call. A call
//! chosen for timing goes through [`timed`]; every other one through [`call`] (in call mode
//! first the engine's whole-call [`Profiler::try_sampled_call`]; then its
//! [`Profiler::try_call_enter`], the full entry and the exit out of line, under
//! [`catch_unwind`]: a panic disables the profiler and never reaches the C caller). No
//! allocation, no lock.

use std::cell::{Cell, RefCell};
use std::ffi::CStr;
use std::io::Write as _;
use std::os::raw::c_int;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};

// mpi-sys in the native build; the ABI build's own declarations (src/abi.rs) otherwise.
#[cfg(mpit_abi)]
use crate::abi as mpi_sys;
use mpi_sys::{MPI_Comm, MPI_Errhandler, MPI_File, MPI_Group, MPI_Op, MPI_Win};
use mpit_safe::RawObject;

pub(crate) use crate::FastCall;
use crate::{CallStart, Mode, Profiler, TimedCall};

/// `MPI_SUCCESS` of the installed `mpi.h`.
pub(crate) const SUCCESS: c_int = mpit_sys::MPI_SUCCESS;

/// The engine, where it lives.
pub(crate) type Engine = Profiler<'static>;

/// The engine and the tool's re-entrancy flag, reachable only from the thread that called
/// `MPI_Init` (the owner): a static, not a thread-local, because a thread-local of a shared
/// library costs two calls per access (`__tls_get_addr`), and every wrapped call makes one.
struct Owned {
    /// The owner's thread id (see `me`) while an engine is installed, else 0.
    owner: AtomicUsize,
    /// The owner's id while the wrappers may enter the engine (installed, not busy), else 0:
    /// the hot path's one test for both.
    gate: AtomicUsize,
    /// `gate` in region mode, 0 in call mode: the wrappers' first test, so that call mode
    /// (whose calls all take the full entry) goes there after one comparison.
    fast_gate: AtomicUsize,
    /// `gate` in call mode, 0 in region mode: [`call`]'s first test, for the whole call in
    /// one function of the engine ([`Profiler::try_sampled_call`]).
    sampled_gate: AtomicUsize,
    /// Set while the tool itself runs (object hooks, regions, the end): every wrapper
    /// entered meanwhile passes straight through to PMPI.
    busy: Cell<bool>,
    /// The engine, leaked (like the MPI_T session it borrows): a plain load on the hot path,
    /// no borrow count to keep (two read-modify-writes of one word per call, 2 ns measured).
    /// `MPI_Finalize` takes it out and stops it ([`Profiler::stop`]); it stays in memory.
    prof: Cell<Option<&'static Engine>>,
}

// SAFETY: `busy` and `prof` (not `Sync`) are reached only through `Owned::mine` and
// `Owned::open`, which return them to the owner thread alone: one thread at a time ever touches
// them. The owner is set by `install` on the owner thread after it wrote `prof` (and cleared by
// `take` on the same thread before it empties `prof`); `gate`, `fast_gate` and `sampled_gate`
// hold 0 or the owner's id, set only by the owner; another thread never sees its own id in them.
unsafe impl Sync for Owned {}

static OWNED: Owned = Owned {
    owner: AtomicUsize::new(0),
    gate: AtomicUsize::new(0),
    fast_gate: AtomicUsize::new(0),
    sampled_gate: AtomicUsize::new(0),
    busy: Cell::new(false),
    prof: Cell::new(None),
};

/// The calling thread's id, as `Owned::owner` keeps it (never 0 for a live thread): its
/// thread pointer. On x86_64 Linux one load (`pthread_self` is a call into libc: 3 ns a
/// wrapped call measured, a third of the profiler's cost).
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[inline(always)]
fn me() -> usize {
    let tp: usize;
    // SAFETY: the x86_64 ELF TLS ABI (used by glibc and musl alike) points %fs at the thread
    // control block, whose first word holds the thread pointer itself; every thread of a
    // Linux process has one from its start. One read of it, no store, no stack, flags kept.
    unsafe {
        std::arch::asm!("mov {}, fs:0", out(reg) tp, options(nostack, readonly, preserves_flags));
    }
    tp
}

/// The calling thread's id, as `Owned::owner` keeps it (never 0 for a live thread).
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
#[inline(always)]
fn me() -> usize {
    nix::sys::pthread::pthread_self() as usize
}

/// The calling thread's id (its thread pointer: never 0 for a live thread), for the trace's
/// owner test.
#[inline(always)]
pub(crate) fn thread_id() -> usize {
    me()
}

impl Owned {
    /// The flag and the engine, if the calling thread owns them.
    #[inline(always)]
    fn mine(&self) -> Option<(&Cell<bool>, &Cell<Option<&'static Engine>>)> {
        (self.owner.load(Acquire) == me()).then_some((&self.busy, &self.prof))
    }

    /// The engine, if the calling thread owns it and the tool is not running (the hot path:
    /// one comparison).
    #[inline(always)]
    fn open(&self) -> Option<&'static Engine> {
        self.through(&self.gate)
    }

    /// The engine, if the calling thread owns it, the tool is not running, and the engine
    /// is in region mode (the wrappers' first test: one comparison).
    #[inline(always)]
    fn open_fast(&self) -> Option<&'static Engine> {
        self.through(&self.fast_gate)
    }

    /// The engine, if `gate` (`gate` or `fast_gate`) holds the calling thread's id.
    #[inline(always)]
    fn through(&self, gate: &AtomicUsize) -> Option<&'static Engine> {
        if gate.load(Relaxed) == me() {
            self.prof.get()
        } else {
            None
        }
    }

    /// Sets the re-entrancy flag (owner thread only: `busy` from `mine`) and the gates with
    /// it (closed for good once the tool is disabled); returns the flag's previous value.
    fn set_busy(&self, busy: &Cell<bool>, to: bool) -> bool {
        let open = if to || disabled() {
            0
        } else {
            self.owner.load(Relaxed)
        };
        let region = self.prof.get().is_some_and(|p| p.mode() == Mode::Region);
        // A traced call takes the full path (its records need the arguments and the times).
        let fast = region && !crate::capture::tracing();
        self.fast_gate.store(if fast { open } else { 0 }, Release);
        self.sampled_gate
            .store(if region { 0 } else { open }, Release);
        self.gate.store(open, Release);
        busy.replace(to)
    }
}

thread_local! {
    /// Live objects of the hooked kinds with their reference counts, and label numbering.
    static OBJECTS: RefCell<Objects> = RefCell::new(Objects::default());
}

/// An engine exists (on some thread).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// A panic inside the tool: from then on everything passes through.
static BROKEN: AtomicBool = AtomicBool::new(false);
/// MPI calls made by threads other than the engine's while it was active.
static FOREIGN_CALLS: AtomicU64 = AtomicU64::new(0);
/// Full call entries left before a panic asked for by `MPIT_PROF_TEST_PANIC` (0: none).
static PANIC_IN: AtomicU64 = AtomicU64::new(0);

/// Makes the `n`-th full call entry from now panic (`MPIT_PROF_TEST_PANIC`).
pub(crate) fn panic_at_entry(n: u64) {
    PANIC_IN.store(n, Relaxed);
}

/// The panic [`panic_at_entry`] asked for, when its entry comes (one load otherwise, on the
/// full entry only).
#[inline(always)]
fn asked_panic() {
    if PANIC_IN.load(Relaxed) != 0 && PANIC_IN.fetch_sub(1, Relaxed) == 1 {
        panic!("the panic MPIT_PROF_TEST_PANIC asked for");
    }
}

/// Turns profiling off without a word (the caller has said why).
pub(crate) fn disable_quietly() {
    BROKEN.store(true, Relaxed);
    close_gates();
}

/// After the tool is disabled: the wrappers' gates closed (on the owner thread; elsewhere they
/// close at the owner's next [`set_busy`]), so that every call passes straight through and
/// the engine, perhaps left half-updated by a panic, is never entered again.
fn close_gates() {
    if let Some((busy, _)) = OWNED.mine() {
        OWNED.set_busy(busy, busy.get());
    }
}

/// Whether the tool is disabled (the wrappers then only pass calls through, and read nothing
/// of their arguments: in a program of another MPI they have another layout).
#[inline(always)]
pub(crate) fn disabled() -> bool {
    BROKEN.load(Relaxed)
}

/// Runs `f`; a panic is caught, reported once and disables the tool.
#[inline(always)]
fn guarded<R>(f: impl FnOnce() -> R) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(_) => {
            disable("an internal error (panic)");
            None
        }
    }
}

/// Disables profiling for the rest of the run (the program continues unprofiled).
pub(crate) fn disable(why: &str) {
    let first = !BROKEN.swap(true, Relaxed);
    close_gates();
    if first {
        let _ = writeln!(
            std::io::stderr(),
            "mpit-prof: profiling stopped after {why}; the program continues unprofiled"
        );
    }
}

/// A call of wrapped function `function` (its index in `FUNCTIONS`): `pmpi` (the `PMPI_`
/// call) between the engine's call entry and exit, on the engine's thread when the tool is
/// not running; straight through otherwise.
///
/// The entry's fast path is inlined into the wrapper; the exit is out of line and runs only
/// when the engine has something to do there (timed calls, call mode): most short calls in
/// region mode never leave the wrapper but for the `PMPI_` call.
///
/// In call mode the common case is one function of the engine, the call handed over as a
/// closure ([`Profiler::try_sampled_call`]): one prologue and one borrow per sample, where
/// the entry and the exit apart took two functions, two owner tests and a second lookup of
/// the function.
#[inline(always)]
pub(crate) fn call<R>(function: usize, pmpi: impl FnMut() -> R) -> R {
    if crate::capture::tracing() {
        return crate::capture::traced(function, pmpi);
    }
    profiled(function, pmpi)
}

/// Whether the calling thread may enter the engine now (its owner, the tool not running, not
/// disabled): where the trace records a call.
#[inline(always)]
pub(crate) fn open_here() -> bool {
    OWNED.open().is_some()
}

/// [`call`] past the trace: the engine's entry and exit around `pmpi`.
#[inline(always)]
pub(crate) fn profiled<R>(function: usize, mut pmpi: impl FnMut() -> R) -> R {
    if let Some(p) = OWNED.through(&OWNED.sampled_gate) {
        let mut out = None;
        let _ = p.try_sampled_call(function, &mut || out = Some(pmpi()));
        // `out` is set exactly when the call was made: never made twice.
        if let Some(r) = out {
            return r;
        }
    }
    let start = enter(function);
    let r = pmpi();
    if start.needs_exit() {
        exit(start);
    }
    r
}

/// The common cases of a wrapped call, inlined into its wrapper ([`Profiler::try_fast`]):
/// counted with nothing to do at the exit (the wrapper then tail-calls `PMPI_`, keeping no
/// argument: keeping them across a [`call`] cost more than the count), or counted
/// and chosen for timing (the wrapper tail-calls its own [`timed`] call); [`FastCall::Full`]
/// otherwise (the wrapper makes the [`call`], out of line).
#[inline(always)]
pub(crate) fn fast(function: usize) -> FastCall {
    match OWNED.open_fast() {
        Some(p) => p.try_fast(function),
        None => FastCall::Full,
    }
}

/// A call of `function` that [`fast`] chose for timing: `pmpi` between two small functions
/// shared by every wrapper (they stay in cache, where each wrapper's own general path would
/// not).
#[inline(always)]
pub(crate) fn timed<R>(function: usize, pmpi: impl FnOnce() -> R) -> R {
    let start = timed_enter(function);
    let r = pmpi();
    if let Some(start) = start {
        timed_exit(start);
    }
    r
}

/// The start of a timed call (`None`: the engine is not this thread's, or is in use).
#[inline(never)]
fn timed_enter(function: usize) -> Option<TimedCall> {
    OWNED.open()?.timed_enter(function)
}

/// The end of a timed call: its duration added to its function's.
#[inline(never)]
fn timed_exit(call: TimedCall) {
    if let Some(p) = OWNED.open() {
        p.timed_exit(call);
    }
}

/// The entry of wrapped function `function`, inlined into its wrapper: the owner test, the
/// re-entrancy flag and the engine's panic-free hot path; everything else out of line, under
/// `catch_unwind`.
#[inline(always)]
fn enter(function: usize) -> CallStart {
    match OWNED.open() {
        Some(p) => match p.try_call_enter(function) {
            Some(start) => start,
            None => enter_slow(p, function),
        },
        None => {
            passed_through();
            CallStart::default()
        }
    }
}

/// A call that did not enter the engine: counted if another thread made it while the engine
/// was active.
#[inline(never)]
fn passed_through() {
    if ACTIVE.load(Relaxed) && OWNED.owner.load(Relaxed) != me() {
        FOREIGN_CALLS.fetch_add(1, Relaxed);
    }
}

/// The engine's full call entry (first calls, timed calls, call mode), guarded.
#[inline(never)]
fn enter_slow(p: &Engine, function: usize) -> CallStart {
    catch_unwind(AssertUnwindSafe(|| {
        asked_panic();
        p.call_enter(function)
    }))
    .unwrap_or_else(|_| {
        disable("an internal error (panic)");
        CallStart::default()
    })
}

/// The exit of the call `start` began (when it needs one).
#[inline(never)]
fn exit(start: CallStart) {
    if let Some((_, prof)) = OWNED.mine()
        && let Some(p) = prof.get()
        && !p.try_call_exit(start)
        && catch_unwind(AssertUnwindSafe(|| p.call_exit(start))).is_err()
    {
        disable("an internal error (panic)");
    }
}

/// Sets the re-entrancy flag if the calling thread owns the engine; returns its previous
/// value. (Other threads, and every thread while no engine is installed, pass through the
/// wrappers anyway.)
pub(crate) fn set_busy(busy: bool) -> bool {
    OWNED.mine().is_some_and(|(b, _)| OWNED.set_busy(b, busy))
}

/// Runs `f` with the engine if the calling thread owns it, with the re-entrancy flag set (the
/// tool is running: MPI calls it makes pass through). `None`: not the engine's thread, or the
/// tool is already running, or it panicked.
pub(crate) fn with_engine<R>(f: impl FnOnce(&Engine) -> R) -> Option<R> {
    if BROKEN.load(Relaxed) {
        return None;
    }
    let (busy, prof) = OWNED.mine()?;
    if busy.get() {
        return None;
    }
    let p = prof.get()?;
    OWNED.set_busy(busy, true);
    let r = guarded(|| f(p));
    OWNED.set_busy(busy, false);
    r
}

/// Makes `engine` the engine, owned by the calling thread, for the rest of the process (it is
/// leaked). `false` (and the engine dropped) if another engine is installed.
pub(crate) fn install(engine: Engine) -> bool {
    // Ownership first: from here on no other thread reaches `busy` and `prof`.
    if OWNED
        .owner
        .compare_exchange(0, me(), Acquire, Relaxed)
        .is_err()
    {
        return false;
    }
    let Some((busy, prof)) = OWNED.mine() else {
        return false;
    };
    prof.set(Some(Box::leak(Box::new(engine))));
    OWNED.set_busy(busy, false);
    ACTIVE.store(true, Relaxed);
    true
}

/// Takes the engine away (at `MPI_Finalize`) if the calling thread owns it; from then on
/// every call passes through. The caller stops it ([`Profiler::stop`]).
pub(crate) fn take() -> Option<&'static Engine> {
    let (busy, prof) = OWNED.mine()?;
    OWNED.set_busy(busy, true);
    let taken = prof.take();
    OWNED.owner.store(0, Release);
    ACTIVE.store(false, Relaxed);
    taken.filter(|_| !BROKEN.load(Relaxed))
}

/// How many calls other threads made while the engine was active.
pub(crate) fn foreign_calls() -> u64 {
    FOREIGN_CALLS.load(Relaxed)
}

// --- objects ---------------------------------------------------------------------------------

/// Live objects of one kind with their reference counts: MPICH and Open MPI hand out the same
/// handle again for a group that is still referenced (`MPI_Comm_group` twice), which the
/// program frees as often as it got it; the engine's handles are freed with the last one.
struct Registry<T> {
    live: Vec<(T, u32)>,
    /// Objects of this kind created so far (for the labels `comm#1`, `comm#2`, ...).
    created: u32,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Registry {
            live: Vec::new(),
            created: 0,
        }
    }
}

#[derive(Default)]
struct Objects {
    comm: Registry<MPI_Comm>,
    win: Registry<MPI_Win>,
    file: Registry<MPI_File>,
    group: Registry<MPI_Group>,
    op: Registry<MPI_Op>,
    errhandler: Registry<MPI_Errhandler>,
}

/// One hooked kind: how to find its registry, its raw-object constructor and label prefix.
struct Kind<T: 'static> {
    registry: fn(&mut Objects) -> &mut Registry<T>,
    raw: fn(T) -> RawObject,
    prefix: &'static str,
}

/// Records a new object and gives the engine its handles (`label`: given, or `prefix#n`).
fn created<T: Copy + PartialEq>(kind: &Kind<T>, h: T, label: Option<&str>) {
    with_engine(|p| {
        let label = OBJECTS.with(|o| {
            let mut o = o.borrow_mut();
            let r = (kind.registry)(&mut o);
            if let Some(e) = r.live.iter_mut().find(|(x, _)| *x == h) {
                e.1 += 1;
                return None;
            }
            r.live.push((h, 1));
            r.created += 1;
            Some(match label {
                Some(l) => l.to_owned(),
                None => format!("{}#{}", kind.prefix, r.created),
            })
        });
        if let Some(label) = label {
            // A refusal is recorded by the engine (Report::skipped); nothing to do here.
            let _ = p.object_created((kind.raw)(h), &label);
        }
    });
}

/// Drops one reference to an object about to be freed; with the last one the engine frees
/// its handles (before the object goes).
fn freed<T: Copy + PartialEq>(kind: &Kind<T>, h: T) {
    with_engine(|p| {
        let last = OBJECTS.with(|o| {
            let mut o = o.borrow_mut();
            let r = (kind.registry)(&mut o);
            let i = r.live.iter().position(|(x, _)| *x == h)?;
            r.live[i].1 -= 1;
            (r.live[i].1 == 0).then(|| r.live.swap_remove(i))
        });
        if last.is_some() {
            p.object_freed((kind.raw)(h));
        }
    });
}

macro_rules! kinds {
    ($($kind:ident: $ty:ty, $ctor:ident, $null:expr, $created:ident, $freed:ident, $on_free:expr;)*) => {$(
        const $kind: Kind<$ty> = Kind {
            registry: |o| &mut o.$ctor,
            // SAFETY: the handle comes from a successful constructor (or is predefined) and
            // the engine's handles for it are freed by `freed` before the program's destructor
            // call reaches MPI, so it outlives every MPI_T handle allocated with it.
            raw: |h| unsafe { RawObject::$ctor(h) },
            prefix: stringify!($ctor),
        };

        #[doc = concat!("After a constructor of `", stringify!($ty), "` succeeded.")]
        #[allow(dead_code)] // not every header has every constructor
        pub(crate) fn $created(h: $ty) {
            let null: Option<$ty> = $null;
            if null != Some(h) {
                created(&$kind, h, None);
            }
        }

        #[doc = concat!("Before a destructor of `", stringify!($ty), "` runs.")]
        #[allow(dead_code)] // not every header has every destructor
        pub(crate) fn $freed(h: $ty) {
            $on_free(h);
            freed(&$kind, h);
        }
    )*};
}

kinds! {
    // A freed communicator's handle may come back: the trace forgets it first.
    COMM: MPI_Comm, comm, Some(nulls::comm()), created_comm, freed_comm, crate::capture::comm_freed;
    WIN: MPI_Win, win, Some(nulls::win()), created_win, freed_win, ignore;
    FILE: MPI_File, file, Some(nulls::file()), created_file, freed_file, ignore;
    GROUP: MPI_Group, group, Some(nulls::group()), created_group, freed_group, ignore;
    // Op and error handler constructors never return a null handle on success.
    OP: MPI_Op, op, None, created_op, freed_op, ignore;
    ERRHANDLER: MPI_Errhandler, errhandler, None, created_errhandler, freed_errhandler, ignore;
}

/// What a freed object of a kind the trace does not keep does to it: nothing.
fn ignore<T>(_: T) {}

/// The null handles of the installed MPI, as mpi-sys's C shim exports them.
mod nulls {
    // mpi-sys in the native build; the ABI build's own declarations otherwise.
    #[cfg(mpit_abi)]
    use crate::abi as mpi_sys;
    use mpi_sys::{MPI_Comm, MPI_File, MPI_Group, MPI_Win};

    pub(super) fn comm() -> MPI_Comm {
        // SAFETY: a `const` object of mpi-sys's C shim, initialised to MPI_COMM_NULL.
        unsafe { mpi_sys::RSMPI_COMM_NULL }
    }

    pub(super) fn win() -> MPI_Win {
        // SAFETY: a `const` object of mpi-sys's C shim, initialised to MPI_WIN_NULL.
        unsafe { mpi_sys::RSMPI_WIN_NULL }
    }

    pub(super) fn file() -> MPI_File {
        // SAFETY: a `const` object of mpi-sys's C shim, initialised to MPI_FILE_NULL.
        unsafe { mpi_sys::RSMPI_FILE_NULL }
    }

    pub(super) fn group() -> MPI_Group {
        // SAFETY: a `const` object of mpi-sys's C shim, initialised to MPI_GROUP_NULL.
        unsafe { mpi_sys::RSMPI_GROUP_NULL }
    }
}

/// Registers a predefined communicator under its name (`MPI_COMM_WORLD`, `MPI_COMM_SELF`).
pub(crate) fn predefined_comm(h: MPI_Comm, name: &str) {
    created(&COMM, h, Some(name));
}

// --- regions -----------------------------------------------------------------------------------

/// `mpit_prof_region_begin`'s and `_end`'s result when no engine runs on this thread.
pub(crate) const NOT_PROFILING: c_int = 1;
/// `mpit_prof_region_end`'s result for a name that is not open.
pub(crate) const NOT_OPEN: c_int = 2;

/// Enters region `name` (C API).
pub(crate) fn region_begin(name: &CStr) -> c_int {
    let name = name.to_string_lossy();
    crate::capture::user_region(&name, true);
    with_engine(|p| p.begin(&name)).map_or(NOT_PROFILING, |()| 0)
}

/// Leaves region `name` (C API).
pub(crate) fn region_end(name: &CStr) -> c_int {
    let name = name.to_string_lossy();
    crate::capture::user_region(&name, false);
    match with_engine(|p| p.end(&name)) {
        None => NOT_PROFILING,
        Some(Ok(())) => 0,
        Some(Err(_)) => NOT_OPEN,
    }
}
