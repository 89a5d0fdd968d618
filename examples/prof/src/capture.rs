//! The trace's capture (`mpit-prof --trace`): what the wrappers record into the rank's
//! [`Otf2Sink`], each thread on its own location (one lock for the tracer, taken per block
//! of records and never across an MPI call). Every wrapped call is an `Enter`/`Leave`
//! of its region ([`traced`], from `glue::call`); the functions whose records need their
//! arguments come here first from their generated wrappers (build.rs's `TRACED` table): the
//! sends and receives as OTF2's MPI records (peer, communicator, tag, bytes), the
//! non-blocking ones matched to their completions in the Wait/Test family through a table of
//! pending requests, and the collectives as `MpiCollectiveBegin`/`End` with their root and the
//! bytes this rank's buffer arguments describe.
//!
//! Sizes and statuses are read only after the `PMPI_` call succeeded (a bad argument then
//! fails the program's call, as it would untraced, and never a call of ours). A status the
//! caller ignores is replaced by one of ours for the call. Not recorded as messages (their
//! calls are still `Enter`/`Leave`): persistent requests, intercommunicators' peers,
//! `MPI_PROC_NULL`. A collective's side that is `MPI_IN_PLACE` is described by its other
//! side; `MPI_Alltoallw`, `MPI_Reduce_scatter` and the non-blocking, persistent and
//! neighbourhood collectives are regions only.
//!
//! Times are the time stamp counter's ticks where it is invariant, else `CLOCK_MONOTONIC`
//! nanoseconds ([`TraceClock`]; one clock for the processes of a node either way); the
//! offsets to rank 0 are measured at the start and the end for the others.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write as _;
use std::mem::MaybeUninit;
use std::os::raw::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

#[cfg(mpit_abi)]
use crate::abi as mpi_sys;
use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Message, MPI_Request, MPI_Status};

use std::sync::Arc;

use mpit_safe::Value;

use crate::glue::{self, SUCCESS};
use crate::trace::Occurrence;
use crate::trace::{
    Collective, CollectiveOp, CommRef, LocationRef, Message, MetricMember, MetricMode, MetricRef,
    MetricValue, Otf2Sink, Paradigm, RegionRef, RegionRole, Sink, ValueType, Written,
};
use crate::wrappers::FUNCTIONS;
use lock::OwnerLock;

mod lock;
use crate::{TraceEvents, TracedEvent, TracedKind};

/// A tracer is installed (on the engine's thread).
static TRACING: AtomicBool = AtomicBool::new(false);

/// Whether calls are traced: the wrappers' one test (a load) before their trace branch.
#[inline(always)]
pub(crate) fn tracing() -> bool {
    TRACING.load(Relaxed)
}

/// The tracer, shared by the threads that call MPI: each block of records takes the lock
/// (never across an MPI call), so one thread at a time writes, each onto its own location.
/// The owner of the lock is the thread that started the trace (its location is `Master
/// thread`). A static, not a thread-local: a thread-local of a shared library costs a call
/// per access (`__tls_get_addr`).
struct TracerCell {
    lock: OwnerLock,
    tracer: RefCell<Option<Tracer>>,
}

// SAFETY: `tracer` is touched only inside `lock` (`locked`, through which `with`, `start`
// and `finish` go): one thread at a time, ordered by the lock's Acquire and Release.
unsafe impl Sync for TracerCell {}

static TRACER: TracerCell = TracerCell {
    lock: OwnerLock::new(),
    tracer: RefCell::new(None),
};
/// Call mode: the variables are read at every call too (the wrappers' test, without the
/// tracer).
static CALL_MODE: AtomicBool = AtomicBool::new(false);

/// `f` on the tracer, under its lock, as the calling thread `me` (the lock released however
/// `f` ends); `None` when `me` holds it already, or before the trace has an owner.
#[inline(always)]
fn locked<R>(me: usize, f: impl FnOnce(&mut Option<Tracer>) -> R) -> Option<R> {
    TRACER.lock.with(me, || {
        let mut t = TRACER.tracer.try_borrow_mut().ok()?;
        Some(f(&mut t))
    })?
}

/// Whether the calling thread's calls are recorded now: another thread's always, the
/// engine's thread's while the engine may be entered (not the tool's own calls).
#[inline(always)]
fn recorded_here() -> bool {
    glue::open_here() || glue::thread_id() != TRACER.lock.owner()
}

/// One thread's place in the trace while another writes.
struct Thread {
    id: usize,
    loc: LocationRef,
    last: u64,
    end: Option<u64>,
}

/// A non-blocking call waiting for its completion.
enum Pending {
    Send(u64),
    Recv { id: u64, comm: Option<CommRef> },
}

struct Tracer {
    sink: Otf2Sink,
    /// The thread whose records are written now, its location, and (below) its `last` and
    /// `end`; the other threads' in `parked`.
    thread: usize,
    loc: LocationRef,
    parked: Vec<Thread>,
    /// Threads other than the engine's that have called MPI.
    threads_seen: u32,
    /// Each wrapped function's region, defined at its first call.
    regions: Vec<Option<RegionRef>>,
    /// Each function's calls entered, until one reaches [`HOT_AFTER`] and its region takes
    /// the sink's hot reference (empty from then on).
    entries: Vec<u32>,
    /// The communicators seen, with their definition (`None`: an intercommunicator).
    comms: Vec<(MPI_Comm, Option<CommRef>)>,
    pending: HashMap<Key, Pending>,
    /// Messages matched by `MPI_Mprobe`/`MPI_Improbe`, with their communicator, until
    /// `MPI_Mrecv`/`MPI_Imrecv` receives them.
    matched: HashMap<Key, Option<CommRef>>,
    next_request: u64,
    comm_labels: u32,
    /// The trace's clock, for the MPI_T sources' times and the resolution at the end.
    clock: TraceClock,
    /// The MPI_T event instances the engine keeps for the trace, and each source's clock.
    events: Option<Arc<TraceEvents>>,
    sources: Vec<SourceClock>,
    /// Metric classes of the event types: `(type, what)` (0 data, 1 no data, 2 dropped).
    classes: HashMap<(u32, u8), MetricRef>,
    /// The time of the last record written (event times are kept at or after it).
    last: u64,
    /// Event times moved into `[last, now]` (a source clock off the trace's).
    clamped: u64,
    /// The time of the current call's end records, for its `Leave` (none: take the time).
    end: Option<u64>,
    /// The variables' metric class: their names, in the order read, and its reference.
    pvar_class: Option<(Vec<String>, MetricRef)>,
    /// The variables' last read and its values as a record takes them, reused from read to
    /// read (call mode reads at both ends of every call: no allocation there).
    readings: Vec<crate::Current>,
    values: Vec<MetricValue>,
    /// `readings` were read for the next record and not yet written.
    fresh: bool,
}

/// A source's timestamps on `CLOCK_MONOTONIC`: one pair of readings at the start (the
/// source's between two of `CLOCK_MONOTONIC`, the narrowest of 8 brackets) and the source's
/// rate ([`Mapping`] takes the result onto the trace's clock).
#[derive(Clone, Copy)]
struct SourceClock {
    ticks_per_second: u64,
    ticks0: u64,
    t0: u64,
}

impl SourceClock {
    fn convert(&self, ticks: u64) -> Option<u64> {
        if self.ticks_per_second == 0 {
            return None;
        }
        let d = i128::from(ticks) - i128::from(self.ticks0);
        let ns = d * 1_000_000_000 / i128::from(self.ticks_per_second);
        u64::try_from(i128::from(self.t0) + ns).ok()
    }
}

/// What OTF2 type a datatype's values take.
fn value_type(v: Value) -> ValueType {
    match v {
        Value::Double(_) | Value::Float(_) => ValueType::Double,
        Value::Int(_)
        | Value::Short(_)
        | Value::Long(_)
        | Value::LongLong(_)
        | Value::SignedChar(_)
        | Value::Int8(_)
        | Value::Int16(_)
        | Value::Int32(_)
        | Value::Int64(_)
        | Value::Count(_)
        | Value::Aint(_)
        | Value::Offset(_) => ValueType::Int,
        _ => ValueType::Uint,
    }
}

/// A value as its metric member holds it (the type [`value_type`] gives).
fn metric_value(v: Value) -> MetricValue {
    match value_type(v) {
        ValueType::Double => MetricValue::Double(v.to_f64_lossy().unwrap_or(f64::NAN)),
        ValueType::Int => MetricValue::Int(v.as_i64().unwrap_or(i64::MIN)),
        ValueType::Uint => MetricValue::Uint(match v {
            Value::Char(b) | Value::Byte(b) | Value::UnsignedChar(b) => u64::from(b),
            Value::CBool(b) => u64::from(b),
            Value::WChar(c) => c as u64,
            _ => v.as_u64().unwrap_or(u64::MAX),
        }),
    }
}

/// A request's or a matched message's handle as a key (MPICH's are `int`s, Open MPI's and
/// the ABI's pointers).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key(u64);

fn key<H: Copy>(r: H) -> Key {
    // A handle's bits: an int or a pointer, at most 64 bits either way.
    let mut bits = [0u8; 8];
    let n = std::mem::size_of::<H>().min(8);
    // SAFETY: `r` is a plain value of `n` <= 8 bytes; its bytes are copied, not interpreted.
    let raw = unsafe { std::slice::from_raw_parts((&r as *const H).cast::<u8>(), n) };
    bits[..n].copy_from_slice(raw);
    Key(u64::from_ne_bytes(bits))
}

/// The trace's clock is the time stamp counter ([`TraceClock`]); set before the trace starts.
static TSC_CLOCK: AtomicBool = AtomicBool::new(false);

/// The time now on the trace's clock: the time stamp counter's ticks, or `CLOCK_MONOTONIC`
/// nanoseconds ([`TraceClock`] says which).
#[inline(always)]
pub(crate) fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if TSC_CLOCK.load(Relaxed) {
        return mpit_safe::raw::tsc();
    }
    monotonic()
}

/// `CLOCK_MONOTONIC` in nanoseconds.
fn monotonic() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000) + ts.tv_nsec as u64
}

/// `MPIT_PROF_TRACE_CLOCK`: `tsc` or `monotonic` (default: `tsc` where the CPU says its time
/// stamp counter is invariant, else `monotonic`).
pub(crate) const TRACE_CLOCK: &str = "MPIT_PROF_TRACE_CLOCK";

/// The trace's clock. Where the CPU's time stamp counter is invariant (`constant_tsc` and
/// `nonstop_tsc`), its ticks: a read is one instruction, 8 ns here against 18 ns for
/// `clock_gettime`, and a traced call reads the clock twice. Its rate, the trace's timer
/// resolution, is measured against `CLOCK_MONOTONIC` over the whole run (OTF2 writes it with
/// the global definitions at the end). Elsewhere, `CLOCK_MONOTONIC` nanoseconds.
///
/// Times known on `CLOCK_MONOTONIC` (the MPI_T sources' readings) come onto the trace's clock
/// through a fresh pair of readings of both clocks: `tsc_now - (mono_now - t) * rate`, where
/// the rate's error (the readings' jitter over the time since the start) is multiplied by
/// `mono_now - t`, itself shorter than that time, so the error stays within one reading's
/// jitter however long the run.
#[derive(Clone, Copy, Debug)]
struct TraceClock {
    tsc: bool,
    /// A pair of readings at the start: `CLOCK_MONOTONIC` ns, the trace's clock.
    mono0: u64,
    ticks0: u64,
    /// Ticks per nanosecond over a short calibration at the start, until the run is longer.
    rate0: f64,
}

/// `CLOCK_MONOTONIC` times onto the trace's clock ([`TraceClock::mapping`]).
#[derive(Clone, Copy, Debug)]
enum Mapping {
    Identity,
    Tsc { mono: u64, ticks: u64, rate: f64 },
}

impl Mapping {
    /// `t` (`CLOCK_MONOTONIC` ns) on the trace's clock; `None` before the counter's zero.
    fn ticks(&self, t: u64) -> Option<u64> {
        match *self {
            Mapping::Identity => Some(t),
            Mapping::Tsc { mono, ticks, rate } => {
                let at = ticks as f64 - (mono as f64 - t as f64) * rate;
                (at >= 0.0).then_some(at as u64)
            }
        }
    }
}

/// The run's length before its own rate replaces the start's calibration.
const CALIBRATED_NS: u64 = 1_000_000;

impl TraceClock {
    /// Chooses the clock (`MPIT_PROF_TRACE_CLOCK`, else the CPU's word) and takes the start's
    /// readings; `Err` for a value that is neither `tsc` nor `monotonic`, or `tsc` where the
    /// counter is not invariant.
    fn start() -> Result<TraceClock, String> {
        let invariant = crate::engine::invariant_tsc();
        let tsc = match std::env::var(TRACE_CLOCK).ok().as_deref().map(str::trim) {
            None | Some("") => invariant,
            Some("monotonic") => false,
            Some("tsc") if invariant => true,
            Some("tsc") => {
                return Err(format!(
                    "{TRACE_CLOCK}=tsc: this CPU's time stamp counter is not invariant \
                     (no constant_tsc and nonstop_tsc in /proc/cpuinfo)"
                ));
            }
            Some(other) => {
                return Err(format!(
                    "{TRACE_CLOCK}={other}: expected `tsc` or `monotonic`"
                ));
            }
        };
        TSC_CLOCK.store(tsc, Relaxed);
        let (mono0, ticks0) = Self::pair();
        let mut clock = TraceClock {
            tsc,
            mono0,
            ticks0,
            rate0: 1.0,
        };
        if tsc {
            while monotonic() < mono0 + CALIBRATED_NS {}
            clock.rate0 = clock.rate(Self::pair());
        }
        Ok(clock)
    }

    /// A reading of `CLOCK_MONOTONIC` and one of the trace's clock at its middle: the
    /// narrowest bracket of 4.
    fn pair() -> (u64, u64) {
        let mut best = (monotonic(), now(), u64::MAX);
        for _ in 0..4 {
            let before = monotonic();
            let ticks = now();
            let after = monotonic();
            if after - before < best.2 {
                best = (before / 2 + after / 2, ticks, after - before);
            }
        }
        (best.0, best.1)
    }

    /// Ticks per nanosecond from the start to the readings `(mono, ticks)`.
    fn rate(&self, (mono, ticks): (u64, u64)) -> f64 {
        if !self.tsc {
            return 1.0;
        }
        let ns = mono.saturating_sub(self.mono0);
        if ns < CALIBRATED_NS {
            return self.rate0;
        }
        ticks.saturating_sub(self.ticks0) as f64 / ns as f64
    }

    /// The map of `CLOCK_MONOTONIC` times onto the trace's clock now: one fresh pair of
    /// readings (none on `CLOCK_MONOTONIC` itself).
    fn mapping(&self) -> Mapping {
        if !self.tsc {
            return Mapping::Identity;
        }
        // One bracket, not `pair`'s narrowest of 4: this runs at every drain of events, and
        // its width (two vDSO reads, some 20 ns) is within the MPI_T times' own precision.
        let before = monotonic();
        let ticks = now();
        let mono = before / 2 + monotonic() / 2;
        Mapping::Tsc {
            mono,
            ticks,
            rate: self.rate((mono, ticks)),
        }
    }

    /// The trace's timer resolution: ticks per second over the run.
    fn ticks_per_second(&self) -> u64 {
        (self.rate(Self::pair()) * 1e9).round() as u64
    }

    fn name(&self) -> &'static str {
        if self.tsc { "tsc" } else { "monotonic" }
    }
}

/// Calls of one function before its region takes the trace's hot reference: a one-pass
/// writer cannot know the most frequent region, and the first to be entered this often is
/// most often in the program's main loop (the ping-pong's `MPI_Send` on rank 0, `MPI_Recv`
/// on rank 1).
const HOT_AFTER: u32 = 16;

/// What a function's region is, by its name.
fn role_of(name: &str) -> RegionRole {
    const P2P: &[&str] = &[
        "MPI_Send",
        "MPI_Bsend",
        "MPI_Ssend",
        "MPI_Rsend",
        "MPI_Isend",
        "MPI_Ibsend",
        "MPI_Issend",
        "MPI_Irsend",
        "MPI_Recv",
        "MPI_Irecv",
        "MPI_Sendrecv",
        "MPI_Sendrecv_replace",
        "MPI_Wait",
        "MPI_Waitall",
        "MPI_Waitany",
        "MPI_Waitsome",
        "MPI_Test",
        "MPI_Testall",
        "MPI_Testany",
        "MPI_Testsome",
        "MPI_Probe",
        "MPI_Iprobe",
        "MPI_Mprobe",
        "MPI_Improbe",
        "MPI_Mrecv",
        "MPI_Imrecv",
    ];
    const COLLECTIVE: &[&str] = &[
        "Bcast",
        "Gather",
        "Gatherv",
        "Scatter",
        "Scatterv",
        "Allgather",
        "Allgatherv",
        "Alltoall",
        "Alltoallv",
        "Alltoallw",
        "Allreduce",
        "Reduce",
        "Reduce_scatter",
        "Reduce_scatter_block",
        "Scan",
        "Exscan",
    ];
    let base = name.strip_prefix("MPI_").unwrap_or(name);
    let collective = |n: &str| COLLECTIVE.iter().any(|c| c.eq_ignore_ascii_case(n));
    if name == "MPI_Barrier" || name == "MPI_Ibarrier" {
        RegionRole::Barrier
    } else if P2P.contains(&name) {
        RegionRole::PointToPoint
    } else if collective(base) || base.strip_prefix('I').is_some_and(collective) {
        RegionRole::Collective
    } else {
        RegionRole::Function
    }
}

/// The size of `n` elements of `t` in bytes (0 if MPI says nothing: after a successful call
/// the datatype is valid).
fn bytes(n: c_int, t: MPI_Datatype) -> u64 {
    let mut size: c_int = 0;
    // SAFETY: `t` was accepted by the call that just succeeded; `size` is a local.
    if unsafe { mpi_sys::PMPI_Type_size(t, &mut size) } != SUCCESS {
        return 0;
    }
    (n.max(0) as u64) * (size.max(0) as u64)
}

/// Source, tag and bytes of a completed receive's status.
///
/// # Safety
/// `st` points to a status MPI wrote for a successful receive.
unsafe fn received(st: *const MPI_Status) -> (c_int, c_int, u64) {
    // SAFETY: the caller's contract.
    let (source, tag) = unsafe { ((*st).MPI_SOURCE, (*st).MPI_TAG) };
    let mut n: c_int = 0;
    // SAFETY: as above; bytes counted as MPI_UINT8_T elements.
    let rc = unsafe { mpi_sys::PMPI_Get_count(st, mpi_sys::RSMPI_UINT8_T, &mut n) };
    (source, tag, if rc == SUCCESS { n.max(0) as u64 } else { 0 })
}

/// Whether a completed request's status says it was cancelled.
///
/// # Safety
/// `st` points to a status MPI wrote for a completed request.
unsafe fn cancelled(st: *const MPI_Status) -> bool {
    let mut flag: c_int = 0;
    // SAFETY: the caller's contract; `flag` a local.
    unsafe { mpi_sys::PMPI_Test_cancelled(st, &mut flag) == SUCCESS && flag != 0 }
}

fn proc_null() -> c_int {
    // SAFETY: a `const` object of mpi-sys's C shim (the ABI build's constant).
    unsafe { mpi_sys::RSMPI_PROC_NULL }
}

fn status_ignore() -> *mut MPI_Status {
    // SAFETY: as `proc_null`.
    unsafe { mpi_sys::RSMPI_STATUS_IGNORE }
}

fn statuses_ignore() -> *mut MPI_Status {
    // SAFETY: as `proc_null`.
    unsafe { mpi_sys::RSMPI_STATUSES_IGNORE }
}

impl Tracer {
    /// Makes `id` the thread whose records are written: its location, last time and end
    /// time swapped in (a thread's first call defines its location, `Thread N` in the order
    /// threads first called MPI; a thread id reused by a later thread continues its
    /// location).
    #[inline(always)]
    fn switch_to(&mut self, id: usize) {
        if self.thread != id {
            self.switch_thread(id);
        }
    }

    #[inline(never)]
    fn switch_thread(&mut self, id: usize) {
        let next = match self.parked.iter().position(|t| t.id == id) {
            Some(i) => self.parked.swap_remove(i),
            None => {
                let n = self.threads_seen + 1;
                self.threads_seen = n;
                Thread {
                    id,
                    loc: self.sink.location(&format!("Thread {n}")),
                    last: 0,
                    end: None,
                }
            }
        };
        self.parked.push(Thread {
            id: self.thread,
            loc: self.loc,
            last: self.last,
            end: self.end.take(),
        });
        (self.thread, self.loc, self.last, self.end) = (next.id, next.loc, next.last, next.end);
    }

    /// `function`'s region: inline once defined (every traced call asks twice).
    #[inline(always)]
    fn region(&mut self, function: usize) -> Option<RegionRef> {
        match self.regions.get(function)? {
            Some(r) => Some(*r),
            None => self.define_region(function),
        }
    }

    #[inline(never)]
    fn define_region(&mut self, function: usize) -> Option<RegionRef> {
        let name = FUNCTIONS.get(function)?;
        let r = self.sink.region(name, Paradigm::Mpi, role_of(name));
        *self.regions.get_mut(function)? = Some(r);
        Some(r)
    }

    /// [`Tracer::region`] at a call's `Enter`: the first function entered [`HOT_AFTER`] times
    /// takes the sink's hot reference ([`Sink::hot_region`]), for its later records.
    #[inline]
    fn region_entered(&mut self, function: usize) -> Option<RegionRef> {
        let r = self.region(function)?;
        let Some(n) = self.entries.get_mut(function) else {
            return Some(r);
        };
        *n += 1;
        if *n < HOT_AFTER {
            return Some(r);
        }
        self.entries = Vec::new();
        let hot = self.sink.hot_region(r)?;
        self.regions[function] = Some(hot);
        Some(hot)
    }

    /// `comm`'s definition: its members' world ranks (`None` for an intercommunicator).
    fn comm(&mut self, comm: MPI_Comm) -> Option<CommRef> {
        if let Some((_, c)) = self.comms.iter().find(|(h, _)| *h == comm) {
            return *c;
        }
        let def = self.define(comm);
        self.comms.push((comm, def));
        def
    }

    fn define(&mut self, comm: MPI_Comm) -> Option<CommRef> {
        let mut inter: c_int = 0;
        // SAFETY: `comm` was accepted by the call that just succeeded; `inter` a local.
        if unsafe { mpi_sys::PMPI_Comm_test_inter(comm, &mut inter) } != SUCCESS || inter != 0 {
            return None;
        }
        // SAFETY: constants of mpi-sys's C shim.
        let (world, this) = unsafe { (mpi_sys::RSMPI_COMM_WORLD, mpi_sys::RSMPI_COMM_SELF) };
        let mut size: c_int = 0;
        let mut group = MaybeUninit::uninit();
        let mut world_group = MaybeUninit::uninit();
        // SAFETY: valid communicators; out-parameters are locals; both groups freed below.
        let ranks = unsafe {
            if mpi_sys::PMPI_Comm_size(comm, &mut size) != SUCCESS
                || mpi_sys::PMPI_Comm_group(comm, group.as_mut_ptr()) != SUCCESS
            {
                return None;
            }
            let mut group = group.assume_init();
            let mut ranks = vec![0; size.max(0) as usize];
            let mut out = vec![0; ranks.len()];
            for (i, r) in ranks.iter_mut().enumerate() {
                *r = i as c_int;
            }
            let ok = mpi_sys::PMPI_Comm_group(world, world_group.as_mut_ptr()) == SUCCESS;
            let translated = ok
                && mpi_sys::PMPI_Group_translate_ranks(
                    group,
                    size,
                    ranks.as_ptr(),
                    world_group.assume_init(),
                    out.as_mut_ptr(),
                ) == SUCCESS;
            if ok {
                let mut wg = world_group.assume_init();
                mpi_sys::PMPI_Group_free(&mut wg);
            }
            mpi_sys::PMPI_Group_free(&mut group);
            if !translated {
                return None;
            }
            out
        };
        let name = if comm == world {
            "MPI_COMM_WORLD".to_owned()
        } else if comm == this {
            "MPI_COMM_SELF".to_owned()
        } else {
            self.comm_labels += 1;
            format!("comm#{}", self.comm_labels)
        };
        let members: Vec<u32> = ranks.iter().map(|&r| r.max(0) as u32).collect();
        Some(self.sink.comm(&name, &members))
    }

    /// The event instances waiting in the engine's queue, as `Metric` records: each at its
    /// MPI_T timestamp on the trace's clock (kept within `[last record, now]`), of the metric
    /// class of its type: members `<type>[i]` (one `<type>` of value 1 for a type without
    /// elements, or an instance whose data could not be read), `<type>.dropped` for the
    /// counts MPI reports dropped.
    #[inline(always)]
    fn drain(&mut self) {
        // Most calls find the queue empty: one test inline, no clock read then.
        if self.events.as_ref().is_some_and(|q| !q.queue.is_empty()) {
            self.drain_queue();
        }
    }

    #[inline(never)]
    fn drain_queue(&mut self) {
        let Some(q) = self
            .events
            .as_ref()
            .filter(|q| !q.queue.is_empty())
            .cloned()
        else {
            return;
        };
        let (now, mapping) = (now(), self.clock.mapping());
        while let Some(e) = q.queue.pop() {
            self.event(&q, e, now, mapping);
            // A Leave after these is later than the call's end records.
            self.end = None;
        }
    }

    fn event(&mut self, q: &TraceEvents, e: TracedEvent, now: u64, mapping: Mapping) {
        let Some((name, elements)) = q.types.get(e.event as usize) else {
            return;
        };
        let what = match e.kind {
            TracedKind::Data { .. } if !elements.is_empty() => 0,
            TracedKind::Data { .. } | TracedKind::Unreadable => 1,
            TracedKind::Dropped(_) => 2,
        };
        let class = match self.classes.get(&(e.event, what)) {
            Some(&c) => c,
            None => {
                let member = |name: String, description: String, v, mode| MetricMember {
                    name,
                    description,
                    unit: "#".into(),
                    value_type: v,
                    mode,
                };
                let members: Vec<MetricMember> = match what {
                    0 => elements
                        .iter()
                        .take(crate::TRACED_ELEMENTS)
                        .enumerate()
                        .map(|(i, d)| {
                            let zero = Value::from_ne_bytes(*d, &[0u8; 32][..d.size()]);
                            member(
                                format!("{name}[{i}]"),
                                format!("element {i} of the MPI_T event {name}"),
                                zero.map_or(ValueType::Uint, value_type),
                                MetricMode::AbsolutePoint,
                            )
                        })
                        .collect(),
                    1 => vec![member(
                        name.clone(),
                        format!("an instance of the MPI_T event {name}"),
                        ValueType::Uint,
                        MetricMode::AbsolutePoint,
                    )],
                    _ => vec![member(
                        format!("{name}.dropped"),
                        format!("instances of the MPI_T event {name} the MPI dropped"),
                        ValueType::Uint,
                        MetricMode::RelativeLast,
                    )],
                };
                let class_name = if what == 2 {
                    format!("{name}.dropped")
                } else {
                    name.clone()
                };
                let c = self.sink.metric(&class_name, Occurrence::Point, &members);
                self.classes.insert((e.event, what), c);
                c
            }
        };
        let at = e
            .timestamp
            .zip(e.source)
            .and_then(|(ts, s)| self.sources.get(s as usize)?.convert(ts))
            .and_then(|mono| mapping.ticks(mono))
            .unwrap_or(now);
        let t = at.clamp(self.last, now.max(self.last));

        if t != at {
            self.clamped += 1;
        }
        let mut values = [MetricValue::Uint(1); crate::TRACED_ELEMENTS];
        let n = match (what, e.kind) {
            (0, TracedKind::Data { n, values: v }) => {
                for (out, x) in values.iter_mut().zip(&v[..n as usize]) {
                    *out = metric_value(*x);
                }
                (n as usize).min(elements.len())
            }
            (2, TracedKind::Dropped(count)) => {
                values[0] = MetricValue::Uint(count);
                1
            }
            _ => 1,
        };
        self.sink.metric_event(self.loc, t, class, &values[..n]);
        self.last = t;
    }

    /// The engine's variables read now into [`Tracer::readings`] (none when the engine is
    /// in use or gone).
    fn read_pvars(&mut self) {
        if !glue::with_engine(|p| p.read_current(&mut self.readings)).unwrap_or(false) {
            self.readings.clear();
        }
        self.fresh = true;
    }

    /// Call mode's read of the variables at a call's entry or exit (nothing in region mode).
    fn call_pvars(&mut self) {
        if CALL_MODE.load(Relaxed) {
            self.read_pvars();
        }
    }

    /// The variables' values just read ([`Tracer::read_pvars`]) as one `Metric` record at
    /// `t` of the class of their names (a new class when the set of handles changed);
    /// nothing where none were read for this record (a call in region mode).
    #[inline]
    fn pvars(&mut self, t: u64) {
        if std::mem::take(&mut self.fresh) && !self.readings.is_empty() {
            self.pvar_record(t);
        }
    }

    fn pvar_record(&mut self, t: u64) {
        let values = &self.readings;
        let same = self.pvar_class.as_ref().is_some_and(|(names, _)| {
            names.len() == values.len() && names.iter().zip(values).all(|(n, v)| *n == v.name)
        });
        if !same {
            // A name is unique with its class only: the class added where names repeat.
            let named = |v: &crate::Current| {
                if values.iter().filter(|w| w.name == v.name).count() > 1 {
                    format!("{} ({})", v.name, v.class)
                } else {
                    v.name.clone()
                }
            };
            let members: Vec<MetricMember> = values
                .iter()
                .map(|v| MetricMember {
                    name: named(v),
                    description: "an MPI_T performance variable".into(),
                    unit: String::new(),
                    value_type: ValueType::Double,
                    mode: if v.accumulated {
                        MetricMode::AccumulatedStart
                    } else {
                        MetricMode::AbsolutePoint
                    },
                })
                .collect();
            let class = self
                .sink
                .metric("MPI_T pvars", Occurrence::Sampled, &members);
            self.pvar_class = Some((values.iter().map(|v| v.name.clone()).collect(), class));
        }
        if let Some((_, class)) = &self.pvar_class {
            self.values.clear();
            self.values
                .extend(self.readings.iter().map(|v| MetricValue::Double(v.value)));
            let t = t.max(self.last);
            self.sink.metric_event(self.loc, t, *class, &self.values);
            self.last = t;
        }
    }

    /// The time of a record of a call's end: after the events raised during the call (so
    /// they come first), kept as the last record's time.
    fn stamp(&mut self) -> u64 {
        self.drain();
        let t = now();
        self.last = t;
        self.end = Some(t);
        t
    }

    fn message(&mut self, peer: c_int, comm: MPI_Comm, tag: c_int, bytes: u64) -> Option<Message> {
        if peer < 0 || peer == proc_null() {
            return None;
        }
        Some(Message {
            peer: peer as u32,
            comm: self.comm(comm)?,
            tag: tag.max(0) as u32,
            bytes,
        })
    }

    /// A request that completed with status `st`.
    ///
    /// # Safety
    /// `st` points to the status MPI wrote for it.
    unsafe fn completed(&mut self, k: Key, st: *const MPI_Status, t: u64) {
        let Some(p) = self.pending.remove(&k) else {
            return;
        };
        // SAFETY: the caller's contract.
        if unsafe { cancelled(st) } {
            let id = match p {
                Pending::Send(id) | Pending::Recv { id, .. } => id,
            };
            self.sink.mpi_request_cancelled(self.loc, t, id);
            return;
        }
        match p {
            Pending::Send(id) => self.sink.mpi_isend_complete(self.loc, t, id),
            Pending::Recv { id, comm } => {
                // SAFETY: the caller's contract.
                let (source, tag, n) = unsafe { received(st) };
                if let Some(comm) = comm
                    && source >= 0
                    && source != proc_null()
                {
                    let m = Message {
                        peer: source as u32,
                        comm,
                        tag: tag.max(0) as u32,
                        bytes: n,
                    };
                    self.sink.mpi_irecv(self.loc, t, m, id);
                }
            }
        }
    }
}

/// Runs `f` on the tracer as the calling thread (none: no tracer, or this thread is already
/// in it); a panic stops the trace for the rest of the run and is said once.
fn with<R>(f: impl FnOnce(&mut Tracer) -> R) -> Option<R> {
    let me = glue::thread_id();
    let r = catch_unwind(AssertUnwindSafe(|| {
        locked(me, |t| {
            let t = t.as_mut()?;
            t.switch_to(me);
            Some(f(t))
        })
        .flatten()
    }));
    r.unwrap_or_else(|_| {
        if TRACING.swap(false, Relaxed) {
            let _ = writeln!(
                std::io::stderr(),
                "mpit-prof: the trace stopped after an internal error (panic); the program \
                 continues"
            );
        }
        None
    })
}

/// Every wrapped call while tracing: `Enter`, the profiled call, `Leave`, on the calling
/// thread's location (the tool's own calls pass through untraced).
#[inline(never)]
pub(crate) fn traced<R>(function: usize, pmpi: impl FnMut() -> R) -> R {
    if !recorded_here() {
        return glue::profiled(function, pmpi);
    }
    enter(function);
    let r = glue::profiled(function, pmpi);
    leave(function);
    r
}

/// `Enter` of `function`'s region, after the events raised since the last record; its time.
fn enter(function: usize) -> u64 {
    with(|t| {
        t.call_pvars();
        t.end = None;
        t.drain();
        let t0 = now();
        if let Some(r) = t.region_entered(function) {
            t.sink.enter(t.loc, t0, r);
        }
        t.last = t0;
        t.pvars(t0);
        t0
    })
    .unwrap_or_else(now)
}

/// `Leave` of `function`'s region, after the events raised during the call.
fn leave(function: usize) {
    with(|t| t.leave(function));
}

impl Tracer {
    /// `Leave` of `function`'s region, after the events raised during the call.
    #[inline(always)]
    fn leave(&mut self, function: usize) {
        self.call_pvars();
        self.drain();
        // At the call's end records' time when nothing came between (one timestamp fewer in
        // the trace: OTF2 writes a time only where it changes).
        let t1 = self.end.take().unwrap_or_else(now);
        self.pvars(t1);
        if let Some(r) = self.region(function) {
            self.sink.leave(self.loc, t1, r);
        }
        self.last = t1;
    }
}

/// What a call never made would return (never seen: see `around`).
const NOT_MADE: c_int = -1;

/// A call with records of its own between its `Enter` and `Leave`: `after(tracer, rc, t0)`
/// runs once the call returned; it writes the records of the call's start (at `t0`) first,
/// then [`Tracer::drain`]s the events raised during the call, then the records of its end
/// (at [`now`]).
fn around(
    function: usize,
    pmpi: impl FnOnce() -> c_int,
    after: impl FnOnce(&mut Tracer, c_int, u64),
) -> c_int {
    // `profiled` makes the call exactly once (its `FnMut` is never called twice).
    let mut pmpi = Some(pmpi);
    let mut call = || pmpi.take().map_or(NOT_MADE, |f| f());
    if !recorded_here() {
        return glue::profiled(function, call);
    }
    let t0 = enter(function);
    let rc = glue::profiled(function, &mut call);
    // The call's own records and its `Leave` under one taking of the lock.
    with(|t| {
        after(t, rc, t0);
        t.leave(function);
    });
    rc
}

/// `MPI_Send`, `_Bsend`, `_Ssend`, `_Rsend`: `MpiSend` at the call's start.
///
/// # Safety
/// The contract of the function `function` stands for; `pmpi` makes that call.
pub(crate) unsafe fn send(
    function: usize,
    count: c_int,
    t: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    around(function, pmpi, |tr, rc, t0| {
        if rc == SUCCESS
            && let Some(m) = tr.message(dest, comm, tag, bytes(count, t))
        {
            tr.sink.mpi_send(tr.loc, t0, m);
        }
    })
}

/// `MPI_Isend` and its modes: `MpiIsend`, the request remembered for its completion.
///
/// # Safety
/// As [`send`]; `request` is the call's out-parameter.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn isend(
    function: usize,
    count: c_int,
    t: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    around(function, pmpi, |tr, rc, t0| {
        if rc != SUCCESS || request.is_null() {
            return;
        }
        if let Some(m) = tr.message(dest, comm, tag, bytes(count, t)) {
            let id = tr.next_request;
            tr.next_request += 1;
            // SAFETY: the call succeeded, so it wrote the new request there.
            tr.pending
                .insert(key(unsafe { *request }), Pending::Send(id));
            tr.sink.mpi_isend(tr.loc, t0, m, id);
        }
    })
}

/// `MPI_Recv`: `MpiRecv` from the status (ours if the caller ignores it).
///
/// # Safety
/// As [`send`]; `pmpi` takes the status to pass.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn recv(
    function: usize,
    _count: c_int,
    _t: MPI_Datatype,
    source: c_int,
    _tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    let mut own = MaybeUninit::uninit();
    let st = self::status(status, &mut own);
    around(
        function,
        move || pmpi(st),
        |tr, rc, _| {
            if rc != SUCCESS || source == proc_null() {
                return;
            }
            // SAFETY: the receive succeeded and wrote `st`.
            let (from, tag, n) = unsafe { received(st) };
            if let Some(m) = tr.message(from, comm, tag, n) {
                let t = tr.stamp();
                tr.sink.mpi_recv(tr.loc, t, m);
            }
        },
    )
}

/// `MPI_Irecv`: `MpiIrecvRequest`, the request remembered for its completion.
///
/// # Safety
/// As [`send`]; `request` is the call's out-parameter.
pub(crate) unsafe fn irecv(
    function: usize,
    comm: MPI_Comm,
    request: *mut MPI_Request,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    around(function, pmpi, |tr, rc, t0| {
        if rc != SUCCESS || request.is_null() {
            return;
        }
        let id = tr.next_request;
        tr.next_request += 1;
        let comm = tr.comm(comm);
        // SAFETY: the call succeeded, so it wrote the new request there.
        tr.pending
            .insert(key(unsafe { *request }), Pending::Recv { id, comm });
        tr.sink.mpi_irecv_request(tr.loc, t0, id);
    })
}

/// `MPI_Mprobe`: the matched message's communicator remembered for its `MPI_Mrecv`.
///
/// # Safety
/// As [`send`]; `message` is the call's out-parameter.
pub(crate) unsafe fn mprobe(
    function: usize,
    comm: MPI_Comm,
    message: *mut MPI_Message,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: the caller's contract (a null flag: always matched).
    unsafe { improbe(function, comm, std::ptr::null_mut(), message, pmpi) }
}

/// `MPI_Improbe` (and [`mprobe`], with a null `flag`).
///
/// # Safety
/// As [`send`]; a non-null `flag` and `message` are the call's out-parameters.
pub(crate) unsafe fn improbe(
    function: usize,
    comm: MPI_Comm,
    flag: *mut c_int,
    message: *mut MPI_Message,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    around(function, pmpi, |tr, rc, _| {
        // SAFETY: `flag` as the caller says; the call succeeded and wrote `message`.
        if unsafe { done(rc, flag) } && !message.is_null() {
            let c = tr.comm(comm);
            // SAFETY: as above.
            tr.matched.insert(key(unsafe { *message }), c);
        }
    })
}

/// `MPI_Mrecv`: `MpiRecv` from the status, on the communicator its probe matched in.
///
/// # Safety
/// As [`recv`]; `message` is the call's message.
pub(crate) unsafe fn mrecv(
    function: usize,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    // SAFETY: the caller's message, read before the call changes it.
    let k = (!message.is_null()).then(|| key(unsafe { *message }));
    let mut own = MaybeUninit::uninit();
    let st = self::status(status, &mut own);
    around(
        function,
        move || pmpi(st),
        |tr, rc, _| {
            let comm = k.and_then(|k| tr.matched.remove(&k)).flatten();
            if rc != SUCCESS {
                return;
            }
            // SAFETY: the receive succeeded and wrote `st` (MPI_MESSAGE_NO_PROC: source
            // MPI_PROC_NULL, left out below).
            let (from, tag, n) = unsafe { received(st) };
            if let Some(comm) = comm
                && from >= 0
                && from != proc_null()
            {
                let m = Message {
                    peer: from as u32,
                    comm,
                    tag: tag.max(0) as u32,
                    bytes: n,
                };
                let t = tr.stamp();
                tr.sink.mpi_recv(tr.loc, t, m);
            }
        },
    )
}

/// `MPI_Imrecv`: `MpiIrecvRequest`, the request completed as an `MPI_Irecv`'s on the
/// communicator its probe matched in.
///
/// # Safety
/// As [`send`]; `message` is the call's message, `request` its out-parameter.
pub(crate) unsafe fn imrecv(
    function: usize,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: the caller's message, read before the call changes it.
    let k = (!message.is_null()).then(|| key(unsafe { *message }));
    around(function, pmpi, |tr, rc, t0| {
        let comm = k.and_then(|k| tr.matched.remove(&k)).flatten();
        if rc != SUCCESS || request.is_null() {
            return;
        }
        let id = tr.next_request;
        tr.next_request += 1;
        // SAFETY: the call succeeded, so it wrote the new request there.
        tr.pending
            .insert(key(unsafe { *request }), Pending::Recv { id, comm });
        tr.sink.mpi_irecv_request(tr.loc, t0, id);
    })
}

/// `MPI_Sendrecv` and `_replace`: `MpiSend` at the start, `MpiRecv` at the end.
///
/// # Safety
/// As [`recv`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sendrecv(
    function: usize,
    count: c_int,
    t: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    _recv_type: MPI_Datatype,
    comm: MPI_Comm,
    status: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    let mut own = MaybeUninit::uninit();
    let st = self::status(status, &mut own);
    around(
        function,
        move || pmpi(st),
        |tr, rc, t0| {
            if rc != SUCCESS {
                return;
            }
            if let Some(m) = tr.message(dest, comm, tag, bytes(count, t)) {
                tr.sink.mpi_send(tr.loc, t0, m);
            }
            // SAFETY: the call succeeded and wrote `st` (a receive from MPI_PROC_NULL gives
            // MPI_PROC_NULL as its source, which `message` leaves out).
            let (from, rtag, n) = unsafe { received(st) };
            if let Some(m) = tr.message(from, comm, rtag, n) {
                let t = tr.stamp();
                tr.sink.mpi_recv(tr.loc, t, m);
            }
        },
    )
}

/// The keys of `n` requests before a completion call changes them.
///
/// # Safety
/// `reqs` points to `n` requests (or is null with `n` 0).
unsafe fn keys(n: c_int, reqs: *const MPI_Request) -> Vec<Key> {
    if reqs.is_null() || n <= 0 {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(reqs, n as usize) }
        .iter()
        .map(|&r| key(r))
        .collect()
}

/// `n` statuses for a call whose caller ignores them.
fn own_statuses(n: c_int) -> Vec<MaybeUninit<MPI_Status>> {
    (0..n.max(0)).map(|_| MaybeUninit::uninit()).collect()
}

/// The status a completion call of one request writes: the caller's, or `own`.
fn status(given: *mut MPI_Status, own: &mut MaybeUninit<MPI_Status>) -> *mut MPI_Status {
    if given == status_ignore() {
        own.as_mut_ptr()
    } else {
        given
    }
}

/// The statuses a completion call of `n` requests writes: the caller's, or ours.
fn statuses(
    n: c_int,
    given: *mut MPI_Status,
    own: &mut Vec<MaybeUninit<MPI_Status>>,
) -> *mut MPI_Status {
    if given == statuses_ignore() {
        *own = own_statuses(n);
        own.as_mut_ptr().cast()
    } else {
        given
    }
}

/// Whether a completion call that returned `rc` completed: `flag` is the Test family's
/// out-parameter (null for the Wait family, which always completes).
///
/// # Safety
/// A non-null `flag` is the call's out-parameter.
unsafe fn done(rc: c_int, flag: *const c_int) -> bool {
    // SAFETY: the caller's contract; the call succeeded, so it wrote `flag`.
    rc == SUCCESS && (flag.is_null() || unsafe { *flag } != 0)
}

/// `MPI_Wait`.
///
/// # Safety
/// As [`recv`]; `request` is the call's request.
pub(crate) unsafe fn wait(
    function: usize,
    request: *mut MPI_Request,
    status: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { test(function, request, std::ptr::null_mut(), status, pmpi) }
}

/// `MPI_Test` (and [`wait`], with a null `flag`).
///
/// # Safety
/// As [`wait`]; a non-null `flag` is the call's out-parameter.
pub(crate) unsafe fn test(
    function: usize,
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    // SAFETY: the caller's request, read before the call.
    let k = unsafe { keys(1, request) };
    let mut own = MaybeUninit::uninit();
    let st = self::status(status, &mut own);
    around(
        function,
        move || pmpi(st),
        |tr, rc, _| {
            // SAFETY: `flag` as the caller says.
            if unsafe { done(rc, flag) }
                && let Some(&k) = k.first()
            {
                // SAFETY: the request completed: MPI wrote `st`.
                let t = tr.stamp();
                // SAFETY: as above.
                unsafe { tr.completed(k, st, t) };
            }
        },
    )
}

/// `MPI_Waitall`.
///
/// # Safety
/// As [`recv`]; `reqs` and `sts` are the call's `count` requests and statuses.
pub(crate) unsafe fn waitall(
    function: usize,
    count: c_int,
    reqs: *mut MPI_Request,
    sts: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { testall(function, count, reqs, std::ptr::null_mut(), sts, pmpi) }
}

/// `MPI_Testall` (and [`waitall`], with a null `flag`).
///
/// # Safety
/// As [`waitall`]; a non-null `flag` is the call's out-parameter.
pub(crate) unsafe fn testall(
    function: usize,
    count: c_int,
    reqs: *mut MPI_Request,
    flag: *mut c_int,
    sts: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    // SAFETY: the caller's requests, read before the call.
    let ks = unsafe { keys(count, reqs) };
    let mut own = Vec::new();
    let st = statuses(count, sts, &mut own);
    around(
        function,
        move || pmpi(st),
        |tr, rc, _| {
            // SAFETY: `flag` as the caller says.
            if !unsafe { done(rc, flag) } {
                return;
            }
            let t = tr.stamp();
            for (i, &k) in ks.iter().enumerate() {
                // SAFETY: all completed: `count` statuses written at `st`.
                unsafe { tr.completed(k, st.add(i), t) };
            }
        },
    )
}

/// `MPI_Waitany`.
///
/// # Safety
/// As [`waitall`]; `index` is the call's out-parameter.
pub(crate) unsafe fn waitany(
    function: usize,
    count: c_int,
    reqs: *mut MPI_Request,
    index: *mut c_int,
    status: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        testany(
            function,
            count,
            reqs,
            index,
            std::ptr::null_mut(),
            status,
            pmpi,
        )
    }
}

/// `MPI_Testany` (and [`waitany`], with a null `flag`).
///
/// # Safety
/// As [`waitany`]; a non-null `flag` is the call's out-parameter.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn testany(
    function: usize,
    count: c_int,
    reqs: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    // SAFETY: the caller's requests, read before the call.
    let ks = unsafe { keys(count, reqs) };
    let mut own = MaybeUninit::uninit();
    let st = self::status(status, &mut own);
    around(
        function,
        move || pmpi(st),
        |tr, rc, _| {
            // SAFETY: `flag` as the caller says.
            if !unsafe { done(rc, flag) } || index.is_null() {
                return;
            }
            // SAFETY: the call completed and wrote `index` (MPI_UNDEFINED: none active).
            let i = unsafe { *index };
            if let Some(&k) = usize::try_from(i).ok().and_then(|i| ks.get(i)) {
                // SAFETY: the completed request's status is at `st`.
                let t = tr.stamp();
                // SAFETY: as above.
                unsafe { tr.completed(k, st, t) };
            }
        },
    )
}

/// `MPI_Waitsome` and `MPI_Testsome`.
///
/// # Safety
/// As [`waitall`]; `outcount` and `indices` are the call's out-parameters.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn waitsome(
    function: usize,
    incount: c_int,
    reqs: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    sts: *mut MPI_Status,
    pmpi: impl FnOnce(*mut MPI_Status) -> c_int,
) -> c_int {
    // SAFETY: as in `waitall`.
    let ks = unsafe { keys(incount, reqs) };
    let mut own = Vec::new();
    let st = statuses(incount, sts, &mut own);
    around(
        function,
        move || pmpi(st),
        |tr, rc, _| {
            if rc != SUCCESS || outcount.is_null() || indices.is_null() {
                return;
            }
            // SAFETY: the call succeeded and wrote `outcount` (MPI_UNDEFINED: none active).
            let n = unsafe { *outcount }.clamp(0, incount.max(0));
            let t = tr.stamp();
            for j in 0..n as usize {
                // SAFETY: `n` indices and statuses written.
                let i = unsafe { *indices.add(j) };
                if let Some(&k) = usize::try_from(i).ok().and_then(|i| ks.get(i)) {
                    // SAFETY: as above.
                    unsafe { tr.completed(k, st.add(j), t) };
                }
            }
        },
    )
}

/// `MPI_Request_free`: a pending request forgotten (its handle may come back).
///
/// # Safety
/// As [`send`]; `request` is the call's request.
pub(crate) unsafe fn request_free(
    function: usize,
    request: *mut MPI_Request,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    // SAFETY: the caller's request, read before the call.
    let k = unsafe { keys(1, request) };
    around(function, pmpi, |tr, rc, _| {
        if rc == SUCCESS
            && let Some(k) = k.first()
        {
            tr.pending.remove(k);
        }
    })
}

/// A collective: `MpiCollectiveBegin` at the start, `MpiCollectiveEnd` with the bytes this
/// rank's buffer arguments describe.
fn collective(
    function: usize,
    op: CollectiveOp,
    comm: MPI_Comm,
    root: Option<c_int>,
    sizes: impl FnOnce(bool, u64) -> (u64, u64),
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    around(function, pmpi, |tr, rc, t0| {
        if rc != SUCCESS {
            return;
        }
        let Some(c) = tr.comm(comm) else { return };
        let (mut rank, mut size) = (0, 1);
        // SAFETY: `comm` was accepted by the call; locals.
        unsafe {
            mpi_sys::PMPI_Comm_rank(comm, &mut rank);
            mpi_sys::PMPI_Comm_size(comm, &mut size);
        }
        let (sent, received) = sizes(root == Some(rank), size.max(1) as u64);
        tr.sink.collective_begin(tr.loc, t0);
        let t1 = tr.stamp();
        tr.sink.collective_end(
            tr.loc,
            t1,
            Collective {
                op,
                comm: c,
                root: root.map(|r| r.max(0) as u32),
                sent,
                received,
            },
        );
    })
}

/// `MPI_Barrier`.
///
/// # Safety
/// As [`send`].
pub(crate) unsafe fn barrier(
    function: usize,
    comm: MPI_Comm,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    collective(
        function,
        CollectiveOp::Barrier,
        comm,
        None,
        |_, _| (0, 0),
        pmpi,
    )
}

/// `MPI_Bcast`: the root sends the buffer, the others receive it.
///
/// # Safety
/// As [`send`].
pub(crate) unsafe fn bcast(
    function: usize,
    count: c_int,
    t: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    let sizes = move |me: bool, _| {
        let b = bytes(count, t);
        if me { (b, 0) } else { (0, b) }
    };
    collective(function, CollectiveOp::Bcast, comm, Some(root), sizes, pmpi)
}

/// `MPI_Reduce`: every rank sends its buffer, the root receives one.
///
/// # Safety
/// As [`send`].
pub(crate) unsafe fn reduce(
    function: usize,
    count: c_int,
    t: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    let sizes = move |me: bool, _| {
        let b = bytes(count, t);
        (b, if me { b } else { 0 })
    };
    collective(
        function,
        CollectiveOp::Reduce,
        comm,
        Some(root),
        sizes,
        pmpi,
    )
}

/// `MPI_Allreduce`, `MPI_Scan`, `MPI_Exscan` (`op`): a buffer sent and one received.
///
/// # Safety
/// As [`send`].
pub(crate) unsafe fn all_to_all(
    function: usize,
    op: CollectiveOp,
    count: c_int,
    t: MPI_Datatype,
    comm: MPI_Comm,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    let sizes = move |_, _| {
        let b = bytes(count, t);
        (b, b)
    };
    collective(function, op, comm, None, sizes, pmpi)
}

/// `MPI_Reduce_scatter_block`: `size` blocks sent, one received.
///
/// # Safety
/// As [`send`].
pub(crate) unsafe fn reduce_scatter_block(
    function: usize,
    count: c_int,
    t: MPI_Datatype,
    comm: MPI_Comm,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    let sizes = move |_, size: u64| {
        let b = bytes(count, t);
        (b * size, b)
    };
    collective(
        function,
        CollectiveOp::ReduceScatterBlock,
        comm,
        None,
        sizes,
        pmpi,
    )
}

/// Whether a collective's buffer argument is `MPI_IN_PLACE` (MPICH's `(void *) -1`, Open
/// MPI's `(void *) 1`: this build's header's, or the ABI's).
fn in_place(buf: *const c_void) -> bool {
    #[cfg(not(mpit_abi))]
    let in_place = mpit_sys::consts::MPI_IN_PLACE_ADDRESS;
    #[cfg(mpit_abi)]
    let in_place = mpi_sys::MPI_IN_PLACE as usize;
    buf as usize == in_place
}

/// The sum of `counts[..n]` elements of `t` in bytes.
///
/// # Safety
/// `counts` points to `n` readable `int`s (an argument the call that just succeeded read).
unsafe fn bytes_of_counts(counts: *const c_int, n: u64, t: MPI_Datatype) -> u64 {
    if counts.is_null() {
        return 0;
    }
    // SAFETY: the caller's contract.
    let counts = unsafe { std::slice::from_raw_parts(counts, n as usize) };
    counts.iter().map(|&c| bytes(c, t)).sum()
}

/// The bytes of this rank's entry of `counts` (of `t`): the block of a side in place.
///
/// # Safety
/// `counts` is null or has `comm`'s size (an argument the call that just succeeded read).
unsafe fn own_block(counts: *const c_int, comm: MPI_Comm, t: MPI_Datatype) -> u64 {
    if counts.is_null() {
        return 0;
    }
    let mut rank: c_int = 0;
    // SAFETY: `comm` was accepted by the call; a local.
    unsafe { mpi_sys::PMPI_Comm_rank(comm, &mut rank) };
    // SAFETY: 0 <= `rank` < the size, within `counts`.
    bytes(unsafe { *counts.add(rank.max(0) as usize) }, t)
}

/// `MPI_Gather` (`op` Gather) and `MPI_Scatter` (`op` Scatter): the bytes each buffer
/// argument describes: a block sent and at the root `size` received (`MPI_Gather`), `size`
/// sent at the root and a block received (`MPI_Scatter`). The root's side that is
/// `MPI_IN_PLACE` is described by the other side (its own block stays where it is).
///
/// # Safety
/// As [`send`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn rooted(
    function: usize,
    op: CollectiveOp,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *const c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    let (send_in_place, recv_in_place) = (in_place(sendbuf), in_place(recvbuf));
    let sizes = move |me: bool, size: u64| {
        // Only the significant arguments are read: an ignored datatype may be anything, and
        // MPI_Type_size of a bad one calls the error handler.
        let s = || bytes(sendcount, sendtype);
        let r = || bytes(recvcount, recvtype);
        match (op, me) {
            (CollectiveOp::Gather, true) => (if send_in_place { r() } else { s() }, size * r()),
            (CollectiveOp::Gather, false) => (s(), 0),
            (_, true) => (size * s(), if recv_in_place { s() } else { r() }),
            (_, false) => (0, r()),
        }
    };
    collective(function, op, comm, Some(root), sizes, pmpi)
}

/// `MPI_Gatherv` and `MPI_Scatterv` (`op`): as [`rooted`], the root's side of many blocks the
/// sum of its `counts` (read at the root alone, where they are significant). `one_*` are the
/// side of one block (the send side of `MPI_Gatherv`, the receive side of `MPI_Scatterv`),
/// the side that may be `MPI_IN_PLACE` at the root (then the root's own count describes it).
///
/// # Safety
/// As [`send`]; `counts` is the call's array argument of the communicator's size.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn rooted_v(
    function: usize,
    op: CollectiveOp,
    one_buf: *const c_void,
    one_count: c_int,
    one_type: MPI_Datatype,
    counts: *const c_int,
    counts_type: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    let one_in_place = in_place(one_buf);
    let sizes = move |me: bool, size: u64| {
        let gather = op == CollectiveOp::Gatherv;
        if !me {
            let one = bytes(one_count, one_type);
            return if gather { (one, 0) } else { (0, one) };
        }
        // SAFETY: at the root `counts` has the communicator's size (the call read it).
        let all = unsafe { bytes_of_counts(counts, size, counts_type) };
        let one = if one_in_place {
            // SAFETY: as above.
            unsafe { own_block(counts, comm, counts_type) }
        } else {
            bytes(one_count, one_type)
        };
        if gather { (one, all) } else { (all, one) }
    };
    collective(function, op, comm, Some(root), sizes, pmpi)
}

/// `MPI_Allgather` (`op` Allgather: a block sent, `size` received) and `MPI_Alltoall`
/// (`op` Alltoall: `size` blocks each way). A send side that is `MPI_IN_PLACE` is described
/// by the receive side.
///
/// # Safety
/// As [`send`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn all_gather(
    function: usize,
    op: CollectiveOp,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    let send_in_place = in_place(sendbuf);
    let sizes = move |_, size: u64| {
        let r = bytes(recvcount, recvtype);
        let s = if send_in_place {
            r
        } else {
            bytes(sendcount, sendtype)
        };
        let blocks = if op == CollectiveOp::Alltoall {
            size
        } else {
            1
        };
        (blocks * s, size * r)
    };
    collective(function, op, comm, None, sizes, pmpi)
}

/// `MPI_Allgatherv`: a block sent, the sum of `recvcounts` received (`MPI_IN_PLACE`: the
/// rank's own block sent).
///
/// # Safety
/// As [`send`]; `recvcounts` is the call's array of the communicator's size.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allgatherv(
    function: usize,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvcounts: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    let send_in_place = in_place(sendbuf);
    let sizes = move |_, size: u64| {
        // SAFETY: the array of the communicator's size the call read.
        let all = unsafe { bytes_of_counts(recvcounts, size, recvtype) };
        let s = if send_in_place {
            // SAFETY: as above.
            unsafe { own_block(recvcounts, comm, recvtype) }
        } else {
            bytes(sendcount, sendtype)
        };
        (s, all)
    };
    collective(function, CollectiveOp::Allgatherv, comm, None, sizes, pmpi)
}

/// `MPI_Alltoallv`: the sums of `sendcounts` and `recvcounts` (`MPI_IN_PLACE`: the receive
/// side both ways).
///
/// # Safety
/// As [`send`]; the count arrays have the communicator's size.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn alltoallv(
    function: usize,
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sendtype: MPI_Datatype,
    recvcounts: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    pmpi: impl FnOnce() -> c_int,
) -> c_int {
    let send_in_place = in_place(sendbuf);
    let sizes = move |_, size: u64| {
        // SAFETY: the arrays of the communicator's size the call read (the send side's
        // ignored when in place).
        let r = unsafe { bytes_of_counts(recvcounts, size, recvtype) };
        let s = if send_in_place {
            r
        } else {
            // SAFETY: as above.
            unsafe { bytes_of_counts(sendcounts, size, sendtype) }
        };
        (s, r)
    };
    collective(function, CollectiveOp::Alltoallv, comm, None, sizes, pmpi)
}

/// A user region entered (`enter`) or left, by name (the C API's regions).
pub(crate) fn user_region(name: &str, enter: bool) {
    if !tracing() || !recorded_here() {
        return;
    }
    with(|tr| {
        tr.read_pvars();
        tr.drain();
        let t = now().max(tr.last);
        let r = tr.sink.region(name, Paradigm::User, RegionRole::Function);
        if enter {
            tr.sink.enter(tr.loc, t, r);
            tr.last = t;
            tr.pvars(t);
        } else {
            tr.pvars(t);
            tr.sink.leave(tr.loc, t, r);
            tr.last = t;
        }
    });
}

/// A communicator about to be freed: its handle may come back for another one.
pub(crate) fn comm_freed(comm: MPI_Comm) {
    with(|t| t.comms.retain(|(h, _)| *h != comm));
}

// --- start and end ----------------------------------------------------------------------------

/// Starts the trace on the calling thread (the engine's) after `MPI_Init`: every rank of
/// `MPI_COMM_WORLD` calls it (the archive is opened collectively in `dir`). `Err` says why
/// there is no trace (the program runs on, profiled).
pub(crate) fn start(
    dir: &Path,
    host: &str,
    about_events: &str,
    events: Option<Arc<TraceEvents>>,
    call_mode: bool,
) -> Result<(), String> {
    mpit_otf2::available().map_err(|e| e.to_string())?;
    let clock = TraceClock::start()?;
    // SAFETY: a `static` of mpi-sys's C shim.
    let world = unsafe { mpi_sys::RSMPI_COMM_WORLD };
    let options = mpit_otf2::Options {
        memory_limit: buffer_limit(),
        clock: Some(now),
        ..mpit_otf2::Options::default()
    };
    let mut sink = Otf2Sink::create(dir, world, host, options).map_err(|e| e.to_string())?;
    sink.property("MPIT_PROF::MPI_T_EVENTS", about_events);
    sink.property("MPIT_PROF::CLOCK", clock.name());
    // Each source's clock against the trace's: a reading of both, and the source's rate.
    let sources = match (&events, mpit_safe::Mpit::init()) {
        (Some(_), Ok(m)) => m
            .sources()
            .map(|l| {
                l.entries
                    .iter()
                    .map(|i| {
                        // The source read between two readings of ours, 8 times: the
                        // narrowest bracket's middle is the moment of its reading.
                        let (mut ticks0, mut t0, mut width) = (0, monotonic(), u64::MAX);
                        for _ in 0..8 {
                            let before = monotonic();
                            let ticks = m.source_timestamp(i.index).unwrap_or(0);
                            let after = monotonic();
                            if after - before < width {
                                (ticks0, t0, width) =
                                    (ticks, before / 2 + after / 2, after - before);
                            }
                        }
                        SourceClock {
                            ticks_per_second: i.ticks_per_second,
                            ticks0,
                            t0,
                        }
                    })
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let loc = sink.location("Master thread");
    let (mut rank, mut size) = (0, 1);
    // SAFETY: MPI is initialised; locals.
    unsafe {
        mpi_sys::PMPI_Comm_rank(world, &mut rank);
        mpi_sys::PMPI_Comm_size(world, &mut size);
    }
    let offset = clock_offset(world, rank, size);
    sink.clock_offset(offset.0, offset.1, offset.2);
    let me = glue::thread_id();
    let tracer = Tracer {
        sink,
        thread: me,
        loc,
        parked: Vec::new(),
        threads_seen: 0,
        regions: vec![None; FUNCTIONS.len()],
        entries: vec![0; FUNCTIONS.len()],
        comms: Vec::new(),
        pending: HashMap::new(),
        matched: HashMap::new(),
        next_request: 0,
        comm_labels: 0,
        clock,
        events,
        sources,
        classes: HashMap::new(),
        last: 0,
        clamped: 0,
        pvar_class: None,
        readings: Vec::new(),
        values: Vec::new(),
        fresh: false,
        end: None,
    };
    TRACER.lock.set_owner(me);
    CALL_MODE.store(call_mode, Relaxed);
    match locked(me, |c| *c = Some(tracer)) {
        Some(()) => {}
        None => return Err("the trace's state is in use".into()),
    }
    TRACING.store(true, Relaxed);
    Ok(())
}

/// `MPIT_PROF_TRACE_BUFFER` (MiB; default 64): the most memory the trace's buffers hold.
pub(crate) const TRACE_BUFFER: &str = "MPIT_PROF_TRACE_BUFFER";

fn buffer_limit() -> u64 {
    std::env::var(TRACE_BUFFER)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&m| m >= 1)
        .map_or(64 << 20, |m| m << 20)
}

/// Ends the trace before `MPI_Finalize` (every rank that started one): the clock offset
/// again, the archive finished. What was written, on rank 0.
pub(crate) fn finish() -> Option<Result<Written, String>> {
    TRACING.store(false, Relaxed);
    let mut tracer = locked(glue::thread_id(), Option::take)??;
    tracer.drain();
    if let Some(q) = &tracer.events {
        // Instances the full queue could not take are records lost.
        tracer.sink.add_lost(q.lost.load(Relaxed));
    }
    if tracer.clamped > 0 {
        let n = tracer.clamped.to_string();
        tracer.sink.property("MPIT_PROF::EVENT_TIMES_MOVED", &n);
    }
    let mut sink = tracer.sink;
    sink.clock_resolution(tracer.clock.ticks_per_second());
    // SAFETY: a `static` of mpi-sys's C shim.
    let world = unsafe { mpi_sys::RSMPI_COMM_WORLD };
    let (mut rank, mut size) = (0, 1);
    // SAFETY: MPI is initialised; locals.
    unsafe {
        mpi_sys::PMPI_Comm_rank(world, &mut rank);
        mpi_sys::PMPI_Comm_size(world, &mut size);
    }
    let offset = clock_offset(world, rank, size);
    sink.clock_offset(offset.0, offset.1, offset.2);
    Some(sink.finish().map_err(|e| e.to_string()))
}

/// The offset OTF2 adds to this rank's time `mine` to put it on rank 0's clock, which read
/// `t0` before and `t1` after it: rank 0's time at the middle minus `mine`. OTF2's readers
/// correct a time `t` to `t + offset` (interpolated between a location's offsets:
/// `otf2_evt_reader_apply_clock_correction`, OTF2 3.0), as Score-P's synchronisation writes
/// it (`offset = master time - local time`).
fn offset_to_rank0(t0: u64, t1: u64, mine: u64) -> i64 {
    let middle = t0 / 2 + t1 / 2 + (t0 % 2 + t1 % 2) / 2;
    (i128::from(middle) - i128::from(mine)) as i64
}

/// What names the clock this rank reads: `[1, boot id...]` where the kernel's boot id
/// (`/proc/sys/kernel/random/boot_id`) says which kernel keeps `CLOCK_MONOTONIC`, and, on the
/// time stamp counter, only where the kernel keeps its own clock on it (its clocksource
/// `tsc`: it checked at boot that the CPUs' counters agree); `[0, ...]` where that is not
/// known (the offset is then measured).
fn clock_identity() -> [u8; 40] {
    let mut id = [0u8; 40];
    let tsc_trusted = !TSC_CLOCK.load(Relaxed)
        || std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .is_ok_and(|c| c.trim() == "tsc");
    if let Ok(boot) = std::fs::read_to_string("/proc/sys/kernel/random/boot_id") {
        let boot = boot.trim().as_bytes();
        if tsc_trusted && !boot.is_empty() && boot.len() < id.len() {
            id[0] = 1;
            id[1..=boot.len()].copy_from_slice(boot);
        }
    }
    id
}

/// This rank's clock against rank 0's, by ping-pong (rank 0 with each other rank in turn,
/// the round trip of 8 with the least delay kept): `(time, offset, half the round trip)`.
/// Collective over `comm`.
fn clock_offset(comm: MPI_Comm, rank: c_int, size: c_int) -> (u64, i64, f64) {
    const TAG: c_int = 0x636c; // "cl"
    const ROUNDS: usize = 8;
    // SAFETY: a `const` of mpi-sys's C shim.
    let u64t = unsafe { mpi_sys::RSMPI_UINT64_T };
    let mut best = (now(), 0i64, f64::MAX);
    let send = |v: &[u64; 2], to: c_int| {
        // SAFETY: two u64 sent from `v`; valid communicator.
        unsafe { mpi_sys::PMPI_Send(v.as_ptr().cast(), 2, u64t, to, TAG, comm) };
    };
    let recv = |from: c_int| -> [u64; 2] {
        let mut v = [0u64; 2];
        let mut st = MaybeUninit::<MPI_Status>::uninit();
        // SAFETY: two u64 received into `v`; the status written by MPI and not read.
        unsafe {
            mpi_sys::PMPI_Recv(
                v.as_mut_ptr().cast(),
                2,
                u64t,
                from,
                TAG,
                comm,
                st.as_mut_ptr(),
            )
        };
        v
    };
    // Ranks that read rank 0's very clock get offset 0: measuring it would only add the
    // ping-pong's noise (up to half a round trip, milliseconds on a loaded node).
    let id = clock_identity();
    let mut rank0 = id;
    let uint8 = {
        // SAFETY: a `const` of mpi-sys's C shim.
        unsafe { mpi_sys::RSMPI_UINT8_T }
    };
    // SAFETY: `rank0.len()` bytes on every rank, rank 0's sent; valid communicator.
    unsafe {
        mpi_sys::PMPI_Bcast(
            rank0.as_mut_ptr().cast(),
            rank0.len() as c_int,
            uint8,
            0,
            comm,
        )
    };
    let shared = u8::from(id[0] == 1 && id == rank0);
    let mut all = vec![0u8; if rank == 0 { size.max(0) as usize } else { 0 }];
    // SAFETY: one byte from each rank into `size` bytes at rank 0 (none needed elsewhere).
    unsafe {
        mpi_sys::PMPI_Gather(
            (&shared as *const u8).cast(),
            1,
            uint8,
            all.as_mut_ptr().cast(),
            1,
            uint8,
            0,
            comm,
        )
    };
    if rank != 0 && shared == 1 {
        return (now(), 0, 0.0);
    }
    if rank == 0 {
        for peer in (1..size).filter(|&p| all.get(p as usize) != Some(&1)) {
            for _ in 0..ROUNDS {
                let t0 = now();
                send(&[t0, 0], peer);
                let _ = recv(peer);
                let t1 = now();
                // The peer keeps the round with the least delay.
                send(&[t0, t1], peer);
            }
        }
        return (now(), 0, 0.0);
    }
    // The offsets every round allows: rank 0 read `t0` before this rank's `mine` and `t1`
    // after it, so the true offset lies in `[t0 - mine, t1 - mine]` however late a message.
    let (mut lowest, mut highest) = (i64::MIN, i64::MAX);
    for _ in 0..ROUNDS {
        let _ = recv(0);
        let mine = now();
        send(&[mine, mine], 0);
        let [t0, t1] = recv(0);
        let rtt = t1.saturating_sub(t0) as f64;
        if rtt < best.2 {
            best = (mine, offset_to_rank0(t0, t1, mine), rtt / 2.0);
        }
        lowest = lowest.max(offset_to_rank0(t0, t0, mine));
        highest = highest.min(offset_to_rank0(t1, t1, mine));
    }
    agreed_offset(best, lowest, highest)
}

/// The offset to write from the round with the least delay, `best`, and the range of offsets
/// that every round allows: 0 where that range holds it, as for a rank whose clock is rank
/// 0's (the time stamp counter of CPUs kept in step, on a kernel not clocked by it). The
/// round's middle is as good an estimate as any other point of the range, but a noisy one:
/// where the offsets at the start and at the end differ by noise, OTF2's interpolation
/// between them stretches the rank's times.
fn agreed_offset(best: (u64, i64, f64), lowest: i64, highest: i64) -> (u64, i64, f64) {
    if lowest <= 0 && 0 <= highest {
        (best.0, 0, best.2)
    } else {
        best
    }
}

#[cfg(test)]
mod tests {
    use super::{agreed_offset, offset_to_rank0};

    /// A rank whose clock is 4,000 ticks ahead of rank 0's, read at the middle of rank 0's
    /// round trip, gets the offset that brings its times back: `t + offset` is rank 0's time.
    #[test]
    fn the_offset_puts_a_time_on_rank_0s_clock() {
        let (t0, t1) = (1_000, 1_100);
        let mine = 1_050 + 4_000;
        let offset = offset_to_rank0(t0, t1, mine);
        assert_eq!(offset, -4_000);
        assert_eq!(mine as i64 + offset, 1_050);
        // Behind by 7, and odd ends of the round trip.
        assert_eq!(offset_to_rank0(11, 20, 8), 7);
        assert_eq!(offset_to_rank0(u64::MAX - 1, u64::MAX, u64::MAX), -1);
    }

    /// A clock that the rounds cannot tell from rank 0's gets 0; one outside their range
    /// keeps the best round's offset.
    #[test]
    fn clocks_that_agree_get_offset_0() {
        let best = (5_000, -37, 60.0);
        assert_eq!(agreed_offset(best, -80, 40), (5_000, 0, 60.0));
        assert_eq!(agreed_offset(best, 0, 0), (5_000, 0, 60.0));
        assert_eq!(agreed_offset(best, -80, -1), best);
        assert_eq!(
            agreed_offset((9, 4_000, 2.0), 3_990, 4_010),
            (9, 4_000, 2.0)
        );
    }
}
