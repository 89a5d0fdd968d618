//! A profiling engine over one performance experiment session (MPI-4.1 §16.3.7), after
//! Caliper's MPIT service (spec 003): every performance variable sampled around program
//! regions and MPI calls, its change attributed to where it happened, each variable summarised
//! by the derived metric of its class (`mpit_core`'s trackers).
//!
//! - **Handles as variables and objects appear** (spec 003 §0.2): [`Profiler::new`] allocates
//!   a handle for every variable bound to no object and starts the non-continuous ones;
//!   [`Profiler::refresh`] picks up variables added since (MPICH registers them in `MPI_Init`);
//!   [`Profiler::object_created`] allocates handles for the variables bound to a new
//!   communicator, window, file, ... and [`Profiler::object_freed`] frees them before the
//!   object goes.
//! - **Regions** are nested and named, entered and left with a guard ([`Profiler::region`]) or
//!   by name ([`Profiler::begin`] / [`Profiler::end`], for the C API of a preload library).
//! - **MPI calls** are counted and timed per region with [`Profiler::call_enter`] /
//!   [`Profiler::call_exit`]; each function is a child node of the region it was called in.
//! - **Sampling** ([`Mode`]): in [`Mode::Region`] every handle is read at region boundaries
//!   only, in [`Mode::Call`] also at every call's entry and exit. The change seen at a sample
//!   is attributed to the node that was innermost since the previous sample (exclusive
//!   metrics; a region's inclusive figure is the sum over its subtree). A whole call handed
//!   over ([`Profiler::try_sampled_call`]) reads its samples at once and attributes them where
//!   the program waits anyway (before a receive, after a send); each variable's samples are
//!   attributed in the order they were read.
//! - **Derived metrics** per class (spec 003 §0.3-0.5, [`DerivedMetric`]): deltas for counters,
//!   aggregates and timers ([`DeltaTracker`]: a drop is a reset), change count and amount for
//!   watermarks ([`WatermarkTracker`](mpit_core::WatermarkTracker)), count/min/max/sum of the
//!   samples for levels, sizes and percentages, the last value for states and generic
//!   variables. A variable of several elements contributes the sum of its elements; its
//!   per-element totals over the run are in [`Report::elements`] (one row of a communication
//!   matrix for per-peer variables).
//! - **Events** (with [`Config::events`], where the MPI has the event API): every event type
//!   is registered and its instances are counted per region.
//!
//! The hot path (a call's entry and exit, a region's begin and end) takes no lock and, once a
//! region or a (region, function) pair has been seen, allocates nothing: the state is in a
//! `RefCell` and region mode's counts of the innermost region's calls in `Cell`s beside it
//! (the profiler is `!Sync`; use one per thread), times come from the CPU's time stamp
//! counter where it is invariant (`constant_tsc` and `nonstop_tsc`), else from the monotonic
//! clock (vDSO, no system call).
//!
//! ```
//! use mpit_safe::Mpit;
//! use mpit_safe::profile::{Config, Profiler};
//! # #[cfg(mpit_abi)] use mpit_safe::mpi;
//! let universe = mpi::initialize().unwrap();
//! let mpit = Mpit::init()?;
//! let session = mpit.session()?;
//! let prof = Profiler::new(&session, Config::default())?;
//! {
//!     let _solve = prof.region("solve");
//!     // ... MPI traffic ...
//! }
//! let report = prof.finish()?;
//! assert_eq!(report.nodes[1].name, "solve");
//! assert_eq!(report.nodes[1].calls, 1);
//! # Ok::<(), mpit_safe::Error>(())
//! ```

#![forbid(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use mpit_core::{
    Bind, Datatype, DeltaTracker, DerivedMetric, Error, MetricValue, PvarClass, PvarInfo, Result,
    Scalar, Verbosity,
};

use crate::level::{Level, Single};
use crate::raw::{self, PvarHandle, WordPvarHandle};
use crate::{NoObject, RawObject, Registration, Session};

/// When performance variables are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// At region boundaries (and at start and finish); MPI calls are only counted and timed.
    #[default]
    Region,
    /// Also at the entry and exit of every MPI call (Caliper's mode): per-function metrics.
    Call,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Region => "region",
            Mode::Call => "call",
        })
    }
}

impl FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Mode> {
        match s {
            "region" => Ok(Mode::Region),
            "call" => Ok(Mode::Call),
            _ => Err(Error::invalid_value(format!(
                "profiling mode {s:?}: expected \"region\" or \"call\""
            ))),
        }
    }
}

/// A predicate on variable names (e.g. a regular expression's match).
pub type NameFilter = Box<dyn Fn(&str) -> bool>;

/// Which performance variables are profiled; by default all of them.
#[derive(Default)]
pub struct Filter {
    /// Keep a variable if this returns true for its name (e.g. a regular expression's match).
    pub name: Option<NameFilter>,
    /// Keep only these classes.
    pub classes: Option<Vec<PvarClass>>,
    /// Keep only variables at this verbosity or below (more basic, wider audience).
    pub max_verbosity: Option<Verbosity>,
}

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filter")
            .field("name", &self.name.as_ref().map(|_| "<fn>"))
            .field("classes", &self.classes)
            .field("max_verbosity", &self.max_verbosity)
            .finish()
    }
}

impl Filter {
    /// Why the filter drops `info`, if it does.
    fn rejects(&self, info: &PvarInfo) -> Option<&'static str> {
        if let Some(f) = &self.name
            && !f(&info.name.to_string_lossy())
        {
            return Some("filtered out by name");
        }
        if let Some(c) = &self.classes
            && !c.contains(&info.class)
        {
            return Some("filtered out by class");
        }
        if let Some(v) = self.max_verbosity
            && info.verbosity > v
        {
            return Some("filtered out by verbosity");
        }
        None
    }
}

/// How to profile.
#[derive(Debug)]
pub struct Config {
    /// When variables are read.
    pub mode: Mode,
    /// Which variables.
    pub filter: Filter,
    /// Names of the MPI functions a caller reports calls of; a call is identified by its
    /// index here ([`Profiler::call_enter`]).
    pub functions: Vec<&'static str>,
    /// Name of the root region, open from [`Profiler::new`] to [`Profiler::finish`].
    pub root: String,
    /// Register for every event type and count its instances per region (MPI-4 events; no
    /// effect where the MPI lacks the event API).
    pub events: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            mode: Mode::Region,
            filter: Filter::default(),
            functions: Vec::new(),
            root: "main".into(),
            events: false,
        }
    }
}

/// One profiled performance variable.
#[derive(Clone, Debug)]
pub struct Column {
    /// What `MPI_T_pvar_get_info` said.
    pub info: PvarInfo,
    /// The derived metric of its class.
    pub metric: DerivedMetric,
    /// Handles allocated for it over the run (one per bound object).
    pub handles: usize,
    /// Whether it had to be started (not continuous) and was.
    pub started: bool,
}

/// A node of the call tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// A program region.
    Region,
    /// An MPI function called in the parent region.
    Function,
}

/// What one variable did while a node was innermost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    /// Counter, aggregate, timer: the sum of the deltas.
    Delta {
        /// Sum of the deltas.
        sum: f64,
    },
    /// High or low watermark: how often and how much it moved, and its last value.
    Watermark {
        /// Number of samples at which it moved.
        changes: u64,
        /// Cumulative amount it moved.
        amount: f64,
        /// The last value read.
        last: Option<f64>,
    },
    /// Level, size, percentage: statistics of the samples.
    Samples {
        /// Number of samples.
        count: u64,
        /// Smallest sample (`+inf` without samples).
        min: f64,
        /// Largest sample (`-inf` without samples).
        max: f64,
        /// Sum of the samples (the mean is `sum / count`).
        sum: f64,
    },
    /// State, generic: the last value read.
    Raw {
        /// The last value read.
        last: Option<f64>,
    },
}

/// A node of the profile's call tree with its exclusive metrics.
#[derive(Clone, Debug)]
pub struct NodeReport {
    /// The parent node's index in [`Report::nodes`] (`None` for the root).
    pub parent: Option<usize>,
    /// Region or function name.
    pub name: String,
    /// Region or MPI function.
    pub kind: NodeKind,
    /// Times entered (regions) or called (functions).
    pub calls: u64,
    /// Inclusive time in nanoseconds: measured, or estimated from `timed_calls` of the calls
    /// where fewer were timed (short MPI calls in [`Mode::Region`]).
    pub time_ns: u64,
    /// Calls whose time was measured: all for regions and for calls made while the
    /// function's recent calls averaged [`LONG_CALL_NS`] or more; for shorter calls the first
    /// [`TIME_FIRST`] and then one in [`TIME_ONE_IN`] at random (two clock reads would
    /// otherwise cost a 0-byte message 10%), in both modes (the C wrapper that is call mode's
    /// floor reads the same pvars but no clock).
    pub timed_calls: u64,
    /// Per [`Report::columns`] entry: what the variable did while this node was innermost.
    pub metrics: Vec<Metric>,
    /// Per [`Report::event_types`] entry: instances raised while this region was innermost.
    pub events: Vec<u64>,
}

/// The elements of one handle of several elements, over the whole run.
#[derive(Clone, Debug)]
pub struct Elements {
    /// The variable's index in [`Report::columns`].
    pub column: usize,
    /// The label of the object the handle was bound to ([`Profiler::object_created`]).
    pub object: String,
    /// Per element: the delta over the run for counters, aggregates and timers, the last value
    /// otherwise.
    pub values: Vec<f64>,
}

/// A variable that was not profiled, and why.
#[derive(Clone, Debug)]
pub struct Skipped {
    /// Its index.
    pub index: usize,
    /// Its name, if `MPI_T_pvar_get_info` gave one.
    pub name: Option<String>,
    /// Why (a hole, the filter, a refused allocation or start).
    pub reason: String,
}

/// What a profiler measured in one process.
#[derive(Clone, Debug)]
pub struct Report {
    /// The root region's name.
    pub root: String,
    /// The sampling mode.
    pub mode: Mode,
    /// The clock: `"tsc"` or `"monotonic"`.
    pub clock: &'static str,
    /// From [`Profiler::new`] to [`Profiler::finish`], in nanoseconds.
    pub duration_ns: u64,
    /// The profiled variables.
    pub columns: Vec<Column>,
    /// The call tree: `nodes[0]` is the root, a parent comes before its children.
    pub nodes: Vec<NodeReport>,
    /// Per-element totals of handles with several elements.
    pub elements: Vec<Elements>,
    /// Variables not profiled.
    pub skipped: Vec<Skipped>,
    /// Event types counted, in [`NodeReport::events`] order.
    pub event_types: Vec<String>,
    /// Things the reader should know (mismatched region ends, failed reads, ...).
    pub notes: Vec<String>,
}

/// The start of a call, from [`Profiler::call_enter`] to [`Profiler::call_exit`]: one word,
/// returned in a register (the start time of a timed call stays in the profiler).
#[derive(Clone, Copy, Debug, Default)]
#[must_use = "pass it to call_exit"]
pub struct CallStart(u64);

impl CallStart {
    const TIMED: u64 = 1 << 32;
    const SAMPLED: u64 = 1 << 33;
    const EXIT: u64 = 1 << 34;
    /// Bits 35.. : the depth of the timing stack before this call (timed calls).
    const DEPTH_SHIFT: u32 = 35;

    fn new(slot: usize, timed: bool, sampled: bool, exit: bool, depth: usize) -> CallStart {
        CallStart(
            (slot as u32) as u64
                | if timed { Self::TIMED } else { 0 }
                | if sampled { Self::SAMPLED } else { 0 }
                | if exit { Self::EXIT } else { 0 }
                | ((depth as u64) << Self::DEPTH_SHIFT),
        )
    }

    /// A call counted at entry, with nothing to do at its exit.
    #[inline(always)]
    fn counted() -> CallStart {
        CallStart(0)
    }

    fn slot(self) -> usize {
        self.0 as u32 as usize
    }

    fn timed(self) -> bool {
        self.0 & Self::TIMED != 0
    }

    fn sampled(self) -> bool {
        self.0 & Self::SAMPLED != 0
    }

    fn depth(self) -> usize {
        (self.0 >> Self::DEPTH_SHIFT) as usize
    }

    /// Whether [`Profiler::call_exit`] has anything to do for this call: `false` for most
    /// short calls in [`Mode::Region`] (counted at entry, not chosen for timing) and for calls
    /// not counted. A caller may skip `call_exit` then (the preload library does).
    #[inline(always)]
    pub fn needs_exit(&self) -> bool {
        self.0 & Self::EXIT != 0
    }
}

/// What [`Profiler::try_fast`] did with a call's entry.
#[derive(Clone, Copy, Debug)]
#[must_use = "a timed call needs Profiler::timed_exit, a full one Profiler::call_enter"]
pub enum FastCall {
    /// Counted; nothing to do at its exit.
    Counted,
    /// Counted and chosen for timing: time the call with [`Profiler::timed_enter`] and
    /// [`Profiler::timed_exit`].
    Timed,
    /// Nothing done: the call needs [`Profiler::call_enter`] and [`Profiler::call_exit`].
    Full,
}

/// A call [`Profiler::timed_enter`] started: its function's slot and its start time.
#[derive(Clone, Copy, Debug)]
pub struct TimedCall {
    slot: usize,
    t0: u64,
}

/// Ends its region when dropped ([`Profiler::region`]).
#[must_use = "the region ends when the guard is dropped"]
pub struct RegionGuard<'p> {
    prof: &'p dyn EndTo,
    depth: usize,
}

impl fmt::Debug for RegionGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegionGuard")
            .field("depth", &self.depth)
            .finish()
    }
}

impl Drop for RegionGuard<'_> {
    fn drop(&mut self) {
        if self.depth > 0 {
            self.prof.end_to_depth(self.depth);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Clock.

struct Clock {
    kind: ClockKind,
    /// [`LONG_CALL_NS`] in ticks.
    long_call: u64,
}

enum ClockKind {
    #[cfg(target_arch = "x86_64")]
    Tsc {
        t0: u64,
        i0: Instant,
    },
    Monotonic(Instant),
}

impl Clock {
    fn new() -> Clock {
        #[cfg(target_arch = "x86_64")]
        if invariant_tsc() {
            // A rough rate for the long-call threshold (the report calibrates over the run).
            let (i0, t0) = (Instant::now(), raw::tsc());
            while i0.elapsed().as_micros() < 200 {}
            let per_ns =
                raw::tsc().saturating_sub(t0) as f64 / i0.elapsed().as_nanos().max(1) as f64;
            return Clock {
                kind: ClockKind::Tsc {
                    t0: raw::tsc(),
                    i0: Instant::now(),
                },
                long_call: (LONG_CALL_NS * per_ns.max(0.1)) as u64,
            };
        }
        Clock {
            kind: ClockKind::Monotonic(Instant::now()),
            long_call: LONG_CALL_NS as u64,
        }
    }

    /// Whether the clock is the TSC (a read is one instruction, no call).
    #[inline(always)]
    fn is_tsc(&self) -> bool {
        match &self.kind {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Tsc { .. } => true,
            ClockKind::Monotonic(_) => false,
        }
    }

    fn now(&self) -> u64 {
        match &self.kind {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Tsc { .. } => raw::tsc(),
            ClockKind::Monotonic(i0) => i0.elapsed().as_nanos() as u64,
        }
    }

    fn name(&self) -> &'static str {
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Tsc { .. } => "tsc",
            ClockKind::Monotonic(_) => "monotonic",
        }
    }

    /// Nanoseconds per tick (calibrated over the run for the TSC) and the run's duration.
    fn calibrate(&self) -> (f64, u64) {
        match &self.kind {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Tsc { t0, i0 } => {
                let ns = i0.elapsed().as_nanos() as u64;
                let ticks = raw::tsc().saturating_sub(*t0);
                (
                    if ticks == 0 {
                        1.0
                    } else {
                        ns as f64 / ticks as f64
                    },
                    ns,
                )
            }
            ClockKind::Monotonic(i0) => (1.0, i0.elapsed().as_nanos() as u64),
        }
    }
}

/// Whether the CPU says its TSC ticks at a constant rate through frequency and sleep states.
#[cfg(target_arch = "x86_64")]
fn invariant_tsc() -> bool {
    std::fs::read_to_string("/proc/cpuinfo")
        .map(|s| {
            let flags = s.lines().find(|l| l.starts_with("flags")).unwrap_or("");
            let has = |f: &str| flags.split_whitespace().any(|w| w == f);
            has("constant_tsc") && has("nonstop_tsc")
        })
        .unwrap_or(false)
}

// ---------------------------------------------------------------------------------------------
// State.

const NONE: u32 = u32::MAX;

/// A function's calls are all timed while they average [`LONG_CALL_NS`] or more (of late);
/// shorter ones are timed one in `TIME_ONE_IN` at random after the first [`TIME_FIRST`], and
/// their total is estimated from those (unbiased; counts stay exact). Two clock reads cost
/// about 25 ns here (`rdtsc` in a VM), 10% of a 0-byte message between two ranks; at one in
/// 16 the timed calls were half of region mode's cost per call (hpcc on Open MPI 4.1 makes 34
/// million `MPI_Testany` calls a rank, one per 200 ns).
pub const TIME_ONE_IN: u32 = 64;
/// Calls of a (region, function) pair that are always timed (a function called a few dozen
/// times is then measured, not estimated).
pub const TIME_FIRST: u64 = 16;
/// Timed calls in progress at once (calls made from callbacks inside calls nest).
const TIMING_DEPTH: usize = 64;
/// The average duration in nanoseconds from which every call of a function is timed (two
/// clock reads are then < 0.5%): an exponential average of its timed calls, the newest
/// weighing 1/8, so that one slow call (a process descheduled for 10 ms) times the next few
/// dozen calls, not the next thousands.
pub const LONG_CALL_NS: f64 = 5_000.0;

struct Node {
    parent: u32,
    name: Box<str>,
    kind: NodeKind,
    calls: u64,
    ticks: u64,
    /// Calls whose time was measured (all of them for regions).
    timed: u64,
    /// Functions: calls timed because every call was (the first [`TIME_FIRST`], those made
    /// while the function's calls were long), and their ticks, part of `timed` and `ticks`.
    sure: u64,
    sure_ticks: u64,
    /// The metrics' accumulators, each column's at its `State::layout` offset.
    acc: Vec<f64>,
    /// Region children, searched by name.
    regions: Vec<u32>,
    /// Regions: where this region's block of [`FnStat`]s (one per function) starts in
    /// `State::fn_stats` ([`NO_BASE`] until the first call in it).
    fn_base: usize,
    /// The [`State::same_gen`] of the last sample [`State::settle`] attributed here in full
    /// (0: none): while it is current, this node holds the states of `State::same_words`.
    same_gen: u64,
    /// Regions: the functions whose calls here have been counted in [`Hot`] (each once), so
    /// that entering the region opens their slots without a look at every function.
    open: Vec<u32>,
}

impl Node {
    /// The ticks of all calls, estimated where not all were timed: the calls timed because
    /// every call was (the first [`TIME_FIRST`]: often slower, lazy binding, connection
    /// setup; those made while the function's calls were long) as measured, the others from
    /// the random sample of them that was timed. Each part weighted by its own sampling rate:
    /// a phase of long calls, all timed, does not stand for the short calls sampled after it.
    fn estimated_ticks(&self) -> f64 {
        let (ticks, sure) = (self.ticks as f64, self.sure_ticks as f64);
        if self.calls <= self.timed {
            ticks
        } else if self.timed > self.sure {
            sure + (ticks - sure) * (self.calls - self.sure) as f64
                / (self.timed - self.sure) as f64
        } else {
            ticks * self.calls as f64 / self.timed.max(1) as f64
        }
    }
}

/// `Node::fn_base` of a region without calls yet: far enough from any index that adding a
/// function index never reaches the table.
const NO_BASE: usize = usize::MAX >> 1;

/// Functions whose calls region mode can count in a [`HotSlot`] (the first so many of
/// [`Config::functions`]; an MPI library's wrappers number 346-596 here): the slots sit in the
/// engine itself, so that the counted path reaches a slot in one load from the engine's
/// address. A function past them takes the full entry.
const HOT_SLOTS: usize = 1024;

/// Region mode's counts of the innermost region's calls, outside the state's `RefCell`: the
/// counted path reads this and one [`HotSlot`] and writes the slot, three cache lines with
/// the wrapper's own, where a count in the state's [`FnStat`] touched six (floor_trio on
/// mpich-ev, 1 KiB round trips: +23-34 ns against +5-16 for a count in a static array of
/// one line, the null wrapper +11-15). A slot's calls are added to its pair's `FnStat` when
/// it closes: when the region is left or entered ([`Profiler::hot_leave`]), when the
/// pair's calls turn long, at the end.
#[repr(C, align(64))]
struct Hot {
    /// Whether the fast path is open; shut in call mode, while a region is entered or left,
    /// at the end.
    open: Cell<bool>,
    /// The random intervals' state (xorshift).
    rng: Cell<u32>,
    /// One per function of [`Config::functions`] (up to [`HOT_SLOTS`]), the innermost
    /// region's. Inline, not boxed: the flag and a slot are then two loads at fixed offsets
    /// from the engine's address, made side by side, where a box put a third load (its
    /// pointer) between the engine's address and the slot.
    slots: [HotSlot; HOT_SLOTS],
}

/// One function's calls in the innermost region ([`Hot`]).
#[derive(Default)]
struct HotSlot {
    /// Calls counted here since the slot opened.
    calls: Cell<u64>,
    /// The count at which a call is chosen for timing; 0: closed (every call takes the full
    /// entry: the pair's first [`TIME_FIRST`] calls, long calls, call mode).
    next: Cell<u64>,
}

impl Hot {
    fn new(open: bool) -> Hot {
        Hot {
            open: Cell::new(open),
            rng: Cell::new(0x2545_f491),
            slots: std::array::from_fn(|_| HotSlot::default()),
        }
    }

    /// The slot of `function`, if the fast path is open.
    #[inline(always)]
    fn slot(&self, function: usize) -> Option<&HotSlot> {
        if self.open.get() {
            self.slots.get(function)
        } else {
            None
        }
    }

    /// 1..=2·[`TIME_ONE_IN`]−1, as [`State::interval`].
    fn interval(&self) -> u64 {
        let mut x = self.rng.get();
        let i = draw_interval(&mut x);
        self.rng.set(x);
        u64::from(i)
    }
}

impl HotSlot {
    /// Opens the slot for a pair, its next timed call where the pair's last close left it
    /// (or drawn, at the first opening).
    fn open(&self, fs: &FnStat, hot: &Hot) {
        self.calls.set(0);
        self.next.set(match fs.gap {
            0 => hot.interval(),
            g => u64::from(g),
        });
    }

    /// Closes the slot: its calls added to the pair's, the calls left to its next timed one
    /// kept.
    fn close(&self, fs: &mut FnStat) {
        let (calls, next) = (self.calls.replace(0), self.next.replace(0));
        fs.calls += calls;
        fs.gap = u32::try_from(next.saturating_sub(calls)).unwrap_or(u32::MAX);
    }
}

/// Whether region mode counts a pair's calls in its [`HotSlot`]: after its first
/// [`TIME_FIRST`], while its calls are short.
fn counts_fast(fs: &FnStat) -> bool {
    fs.calls >= TIME_FIRST && !fs.always_timed
}

/// Uniform in 1..=2·[`TIME_ONE_IN`]−1 from the xorshift32 state `x` (advanced).
#[inline]
fn draw_interval(x: &mut u32) -> u32 {
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    1 + *x % (2 * TIME_ONE_IN - 1)
}

/// Calls of one function in one region, kept apart from the nodes so that a call finds them
/// with one addition (`State::cur_base` + function index) and touches one cache line (region
/// mode's counted calls are in [`Hot`] until its slot closes).
#[derive(Clone, Copy)]
struct FnStat {
    calls: u64,
    ticks: u64,
    timed: u64,
    /// Timed calls that were timed because every call was (the first [`TIME_FIRST`], those
    /// made while `always_timed`), and their ticks: part of `timed` and `ticks`.
    sure: u64,
    sure_ticks: u64,
    /// The function's node (`NONE` until its first call).
    node: u32,
    /// The timed calls' recent average in ticks (exponential, weight 1/8 to the newest).
    recent: u32,
    /// Calls long enough of late that measuring each costs nothing worth saving.
    always_timed: bool,
    /// Call mode: the samples waiting for their attribution are attributed after the call,
    /// not before it ([`settles_after`]).
    settle_after: bool,
    /// In its region's [`Node::open`] list.
    listed: bool,
    /// Calls left until the next timed one when its [`HotSlot`] last closed (0: none yet).
    gap: u32,
}

impl FnStat {
    const NEW: FnStat = FnStat {
        calls: 0,
        ticks: 0,
        timed: 0,
        sure: 0,
        sure_ticks: 0,
        node: NONE,
        recent: 0,
        always_timed: false,
        settle_after: false,
        listed: false,
        gap: 0,
    };

    /// One timed call of `dt` ticks; `long`: [`LONG_CALL_NS`] in ticks.
    #[inline(always)]
    fn add_timed(&mut self, dt: u64, long: u64) {
        if self.timed < TIME_FIRST || self.always_timed {
            self.sure += 1;
            self.sure_ticks += dt;
        }
        self.ticks += dt;
        // Decided on the recent calls: one slow call (lazy binding, connection setup, the
        // process descheduled for milliseconds) times a short function's next few dozen
        // calls, not its next thousands (as an average since the start did: 10 ms keeps a
        // 1 µs function above 5 µs for 2,000 calls). The first call starts the average.
        let dt = u32::try_from(dt).unwrap_or(u32::MAX);
        self.recent = if self.timed == 0 {
            dt
        } else {
            self.recent - self.recent / 8 + dt / 8
        };
        self.timed += 1;
        self.always_timed = u64::from(self.recent) > long;
    }
}

/// How a handle's elements are read: the Rust type of the variable's datatype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
enum Lane {
    I32,
    U32,
    I64,
    U64,
    F64,
    U8,
    I16,
}

impl Lane {
    /// Bytes of one element.
    #[inline(always)]
    fn size(self) -> usize {
        match self {
            Lane::U8 => 1,
            Lane::I16 => 2,
            Lane::I32 | Lane::U32 => 4,
            Lane::I64 | Lane::U64 | Lane::F64 => 8,
        }
    }

    fn of(dt: Datatype) -> Option<Lane> {
        [
            (i32::accepts(dt), Lane::I32),
            (u32::accepts(dt), Lane::U32),
            (i64::accepts(dt), Lane::I64),
            (u64::accepts(dt), Lane::U64),
            (f64::accepts(dt), Lane::F64),
            (u8::accepts(dt), Lane::U8),
            (i16::accepts(dt), Lane::I16),
        ]
        .into_iter()
        .find_map(|(ok, l)| ok.then_some(l))
    }
}

/// Scratch buffers, one per lane, as long as the longest handle.
#[derive(Default)]
struct Scratch {
    i32: Vec<i32>,
    u32: Vec<u32>,
    i64: Vec<i64>,
    u64: Vec<u64>,
    f64: Vec<f64>,
    u8: Vec<u8>,
    i16: Vec<i16>,
}

impl Scratch {
    fn grow(&mut self, n: usize) {
        fn g<T: Default + Clone>(v: &mut Vec<T>, n: usize) {
            if v.len() < n {
                v.resize(n, T::default());
            }
        }
        g(&mut self.i32, n);
        g(&mut self.u32, n);
        g(&mut self.i64, n);
        g(&mut self.u64, n);
        g(&mut self.f64, n);
        g(&mut self.u8, n);
        g(&mut self.i16, n);
    }
}

/// How a sample updates a variable's metric: its derived metric, with a watermark's
/// direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
enum Kind {
    /// Counters, timers, aggregates: [`Metric::Delta`].
    Delta,
    /// High watermarks: [`Metric::Watermark`], moving up.
    Up,
    /// Low watermarks: [`Metric::Watermark`], moving down.
    Down,
    /// Levels, sizes, percentages: [`Metric::Samples`].
    Samples,
    /// States, generic: [`Metric::Raw`].
    Raw,
}

impl Kind {
    /// The accumulators of a metric of this kind in a node's `acc`, in order:
    /// - delta: sum;
    /// - watermark: changes, amount, whether a value was seen, the last value;
    /// - samples: count, min, max, sum;
    /// - raw: whether a value was seen, the last value.
    fn zero(self) -> &'static [f64] {
        match self {
            Kind::Delta => &[0.0],
            Kind::Up | Kind::Down => &[0.0; 4],
            Kind::Samples => &[0.0, f64::INFINITY, f64::NEG_INFINITY, 0.0],
            Kind::Raw => &[0.0; 2],
        }
    }

    /// The metric from the accumulators `a` (of [`Kind::zero`]'s length).
    fn metric(self, a: &[f64]) -> Metric {
        let at = |i: usize| a.get(i).copied().unwrap_or(0.0);
        let seen = |i: usize| (at(i) != 0.0).then(|| at(i + 1));
        match self {
            Kind::Delta => Metric::Delta { sum: at(0) },
            Kind::Up | Kind::Down => Metric::Watermark {
                changes: at(0) as u64,
                amount: at(1),
                last: seen(2),
            },
            Kind::Samples => Metric::Samples {
                count: at(0) as u64,
                min: at(1),
                max: at(2),
                sum: at(3),
            },
            Kind::Raw => Metric::Raw { last: seen(0) },
        }
    }

    fn of(class: PvarClass) -> Kind {
        match class.derived_metric() {
            DerivedMetric::Delta => Kind::Delta,
            DerivedMetric::WatermarkChange if class == PvarClass::LowWatermark => Kind::Down,
            DerivedMetric::WatermarkChange => Kind::Up,
            DerivedMetric::Sampled => Kind::Samples,
            DerivedMetric::Raw => Kind::Raw,
        }
    }
}

/// How the sampling loop turns the 8 bytes it reads a one-element handle into (zeroed first;
/// MPI writes the variable's bytes at the start) into an `f64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Decode {
    Unsigned,
    Signed,
    Float,
    /// Unsigned of 64 bits: the 8 bytes as they are, no shift.
    Word,
}

impl Decode {
    /// The decoding of `lane`, and the shift that moves a value of its width from the buffer's
    /// start to the top of 64 bits (and back).
    fn of(lane: Lane) -> (Decode, u8) {
        match lane {
            Lane::U8 => (Decode::Unsigned, 56),
            Lane::U32 => (Decode::Unsigned, 32),
            Lane::U64 => (Decode::Word, 0),
            Lane::I16 => (Decode::Signed, 48),
            Lane::I32 => (Decode::Signed, 32),
            Lane::I64 => (Decode::Signed, 0),
            Lane::F64 => (Decode::Float, 0),
        }
    }

    /// The value of the 8 bytes `buf` (as read, native order) for a variable whose width
    /// leaves `shift` bits of 64 unused. One read type for every variable keeps the sampling
    /// one loop, with no dispatch on the datatype around the read.
    #[inline(always)]
    fn value(self, buf: [u8; 8], shift: u8) -> f64 {
        let top = to_top(buf, shift);
        let shift = u32::from(shift);
        match self {
            // As a signed integer where it fits (all but 64-bit values of 2⁶³ or more): one
            // instruction where a `u64` takes six.
            Decode::Unsigned | Decode::Word => match i64::try_from(top >> shift) {
                Ok(x) => x as f64,
                Err(_) => huge(top >> shift),
            },
            Decode::Signed => ((top as i64) >> shift) as f64,
            Decode::Float => f64::from_bits(u64::from_ne_bytes(buf)),
        }
    }
}

/// A handle as the sampling loop sees it: the handle and what a sample of it needs, 72 bytes,
/// walked contiguously (the handle's other state is in its [`Slot`], at the same index). `H`:
/// a [`WordPvarHandle`] for the variables of at most 8 bytes ([`State::words`]: one element,
/// or several integers in one word, [`Case::lanes`]), read with no size check, or any handle
/// ([`State::probes`]).
struct Probe<H> {
    handle: H,
    /// The previous value of a counter, timer, aggregate or watermark: deltas and moves are
    /// measured from it. NaN before a watermark's first value.
    last: f64,
    /// The previous value of a one-element unsigned counter, timer or aggregate, whose
    /// deltas are taken in integers (`last` unused); of any other counter, timer or aggregate,
    /// the bits of its previous read (of its sum, for several elements): a read of the same
    /// bits is skipped, it would add nothing. Of a state or generic variable of several
    /// elements, the bits of its last sum (a read of the same bytes is not summed again).
    /// Of several elements in one word ([`Case::lanes`]): their bytes.
    prev: u64,
    /// Index of the variable's column.
    column: u32,
    /// Offset of the column's accumulators in each node's `acc`.
    at: u32,
    /// Elements; those of more than one are read through the scratch buffers, out of line.
    count: u32,
    /// Reads that failed.
    failures: u32,
    lane: Lane,
    kind: Kind,
    /// The sampling loop's case of a one-element probe: its decoding ([`Decode::of`]) and
    /// kind.
    case: Case,
    /// Bits of 64 the variable's width leaves unused ([`Decode::of`]).
    shift: u8,
}

/// A probe of a variable of at most 8 bytes ([`State::words`]).
type WordProbe<'s, L> = Probe<WordPvarHandle<'s, L>>;
/// A probe of any other variable ([`State::probes`]).
type AnyProbe<'s, L> = Probe<MultiHandle<'s, L>>;

/// The handle of a probe of several elements, with the buffers of its reads.
struct MultiHandle<'s, L: Level> {
    handle: PvarHandle<'s, L>,
    /// Of a counter, timer, aggregate, state, size or generic variable of [`SMALL_BYTES`] at
    /// most: the bytes of its previous read, compared before the elements are summed (most
    /// reads equal the one before), and its read buffer. `None` for the rest. Here, not in
    /// the [`Slot`]: the sampling loop then walks one list, not two (a second iterator kept
    /// on the stack cost ~8 instructions a probe and sample).
    seen: Option<Box<SeenBytes>>,
}

/// A handle as [`read_sum`] reads it: a bare one, or the one inside a [`Probe`].
trait Held {
    /// `MPI_T_pvar_read` into `buf` (checked against the variable's bytes).
    fn read<T: Scalar>(&self, buf: &mut [T]) -> Result<()>;
}

impl<L: Level> Held for PvarHandle<'_, L> {
    #[inline(always)]
    fn read<T: Scalar>(&self, buf: &mut [T]) -> Result<()> {
        PvarHandle::read(self, buf)
    }
}

impl<L: Level> Held for MultiHandle<'_, L> {
    #[inline(always)]
    fn read<T: Scalar>(&self, buf: &mut [T]) -> Result<()> {
        self.handle.read(buf)
    }
}

impl<L: Level> Held for WordPvarHandle<'_, L> {
    #[inline(always)]
    fn read<T: Scalar>(&self, buf: &mut [T]) -> Result<()> {
        WordPvarHandle::read(self, buf)
    }
}

/// The bytes of a probe's previous read ([`MultiHandle::seen`]), and the buffer it is read into.
struct SeenBytes {
    bytes: [u8; SMALL_BYTES],
    /// What the reads write into, one per block of [`State::reads`] (a read made now uses
    /// the first; a sample waiting for its attribution, its block's): MPI writes the
    /// variable's bytes, fewer than these or as many, so the rest stay zero, as zeroed once
    /// here; nothing to clear before a read.
    fresh: [[u8; SMALL_BYTES]; PENDING],
    /// Whether the read into each of `fresh` of a sample waiting for its attribution
    /// succeeded (a failure is counted when it happens, the probe left out of that sample).
    fresh_ok: [bool; PENDING],
    /// Whether `bytes` holds a read yet.
    valid: bool,
}

/// The rest of a handle's state, off the sampling loop's path.
struct Slot {
    /// The object it is bound to ((kind, bits); `None` for unbound) and its label.
    object: Option<(Bind, u64)>,
    label: Box<str>,
    /// Per-element values at allocation (handles of several elements).
    first: Vec<f64>,
}

/// A sum of a handle's elements as an `f64`.
trait Wide: Default {
    fn wide(self) -> f64;
}

impl Wide for i128 {
    /// As a signed 64-bit integer where it fits (one instruction; a 128-bit one is a call).
    #[inline(always)]
    fn wide(self) -> f64 {
        match i64::try_from(self) {
            Ok(x) => x as f64,
            Err(_) => wide_slow(self),
        }
    }
}

impl Wide for u128 {
    #[inline(always)]
    fn wide(self) -> f64 {
        // Sums of at most 2³² elements of 64 bits: below 2⁹⁶.
        (self as i128).wide()
    }
}

impl Wide for i64 {
    #[inline(always)]
    fn wide(self) -> f64 {
        self as f64
    }
}

impl Wide for u64 {
    #[inline(always)]
    fn wide(self) -> f64 {
        // Sums of the narrow lanes of `lane_sum`: far below 2⁶³.
        match i64::try_from(self) {
            Ok(x) => x as f64,
            Err(_) => self as f64,
        }
    }
}

impl Wide for f64 {
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
}

/// [`Wide::wide`] of a sum of 2⁶³ or more (never seen).
#[cold]
#[inline(never)]
fn wide_slow(x: i128) -> f64 {
    x as f64
}

/// `$m!(T, Acc)` for lane `$lane`: its Rust type (also the name of its scratch buffer) and the
/// type its elements are summed in (integers as integers, wide enough for any count of them).
macro_rules! per_lane {
    ($lane:expr, $m:ident) => {
        match $lane {
            Lane::I32 => $m!(i32, i128),
            Lane::U32 => $m!(u32, u128),
            Lane::I64 => $m!(i64, i128),
            Lane::U64 => $m!(u64, u128),
            Lane::F64 => $m!(f64, f64),
            Lane::U8 => $m!(u8, u128),
            Lane::I16 => $m!(i16, i128),
        }
    };
}

/// Reads a handle's elements through the scratch buffer of its lane: the sum, and the elements
/// into `out` when given. Out of line: the sampling loop then keeps no scratch buffer in
/// registers for the one-element handles, most of them.
#[inline(never)]
fn read_sum<H: Held>(
    h: &H,
    lane: Lane,
    n: usize,
    s: &mut Scratch,
    mut out: Option<&mut Vec<f64>>,
) -> Result<f64> {
    macro_rules! lane {
        ($buf:ident, $acc:ty) => {{
            // A buffer shorter than `n` (never: scratch grows with the handles) is refused
            // by the read, not sliced: the sampling loop never panics.
            let all = &mut s.$buf;
            let buf = if all.len() >= n {
                &mut all[..n]
            } else {
                &mut all[..]
            };
            h.read(buf)?;
            if let Some(o) = out.as_deref_mut() {
                o.extend(buf.iter().map(|&x| x as f64));
            }
            // Integers summed as integers (wide enough for any count of them), converted once.
            Ok(Wide::wide(
                buf.iter()
                    .fold(<$acc>::default(), |sum, &x| sum + <$acc>::from(x)),
            ))
        }};
    }
    per_lane!(lane, lane)
}

struct Frame {
    node: u32,
    t0: u64,
}

/// A variable bound to an object kind, waiting for objects of that kind.
struct Bound {
    index: usize,
    column: usize,
}

struct State<'s, L: Level> {
    /// Per region (a block of one per function, see `Node::fn_base`): the calls.
    fn_stats: Vec<FnStat>,
    /// The innermost region's block in `fn_stats`.
    cur_base: usize,
    /// Short calls until the next timed one.
    countdown: u32,
    /// The functions whose [`HotSlot`]s are open, the innermost region's.
    hot_open: Vec<u32>,
    in_call: u32,
    /// The handles of at most 8 bytes (one element, or several in one word: [`Case::lanes`]),
    /// in the sampling loop's order ([`State::replan`]), and the rest of each at the same
    /// index in `word_slots`.
    words: Vec<WordProbe<'s, L>>,
    word_slots: Vec<Slot>,
    /// The word each of `words` is read into, at the same index: all of a sample's reads
    /// first, one after the other as the C wrapper makes them, then their attribution
    /// ([`sample_body`]). Zeroed by [`State::replan`], each written only by its own
    /// variable's reads: the bytes after a narrower value stay zero.
    ///
    /// [`PENDING`] blocks of `words.len()`: block `k` holds the reads of the `k`-th sample
    /// waiting for its attribution ([`State::pending`]).
    reads: Vec<u64>,
    /// The nodes of the samples read but not yet attributed (call mode's whole calls,
    /// [`sample_deferred`]), oldest first, `npending` of them; [`State::settle`] attributes
    /// them. Every other use of the probes or of their order settles them first.
    pending: [u32; PENDING],
    npending: u8,
    /// The words of the last sample [`State::settle`] attributed in full, valid while
    /// `same_valid`, and their generation (a new one each time they change). Where every
    /// one-element probe is a delta's or a state's (`same_skips`), a sample of the same words
    /// changes nothing in a node that holds them (`Node::same_gen` current): the deltas are 0
    /// and the states already there, so it is not attributed (Open MPI 5.0.11's five queue
    /// lengths and sizes in call mode: the same at nearly every sample). Any other attribution
    /// of the words (a failed read, the immediate path) or a new plan invalidates them.
    same_words: Vec<u64>,
    same_gen: u64,
    same_valid: bool,
    same_skips: bool,
    /// Debug builds: every sample's one-element probes read again one by one, as after a
    /// failed read ([`REREAD_TEST`] set in the environment: a test of that path on a real
    /// MPI, whose reads do not fail), and how many samples took it.
    #[cfg(debug_assertions)]
    reread_test: bool,
    #[cfg(debug_assertions)]
    rereads: u64,
    /// Where the run of each [`Case`] starts in `words` (and the last one ends): `words` is in
    /// runs of one case, `runs[c]..runs[c + 1]` ([`State::replan`]). The sampling loop goes
    /// case by case in a fixed order, each run without a branch on the decoding or the kind.
    runs: [u32; CASES + 1],
    /// The cases with probes, a bit each: the sampling loop passes the others by a test.
    present: u32,
    /// Few one-element probes for their cases: the sampling loop takes them one by one,
    /// each to its case's code by a jump table, not run by run ([`State::replan`]).
    flat: bool,
    /// The other handles (several elements in more than 8 bytes), and the rest of each at the
    /// same index in `slots`.
    probes: Vec<AnyProbe<'s, L>>,
    nodes: Vec<Node>,
    stack: Vec<Frame>,
    /// The innermost region's node: `stack`'s last (0 when empty), kept beside it
    /// ([`State::restack`]) for call mode's entry, which samples into it.
    top: u32,
    /// [`Profiler::stop`] ran: nothing more is measured.
    stopped: bool,
    /// xorshift32 state: the random intervals between timed short calls.
    rng: u32,
    /// Start times of the timed calls in progress (nested calls: callbacks), innermost last;
    /// bounded by [`TIMING_DEPTH`] (deeper calls are not timed), so it never allocates.
    timing: Vec<u64>,
    slots: Vec<Slot>,
    columns: Vec<Column>,
    /// Column of each variable index already examined (`NONE`: skipped).
    by_index: Vec<u32>,
    bound: Vec<(Bind, Bound)>,
    objects: Vec<(RawObject, Box<str>)>,
    /// Per column: its kind and the offset of its accumulators in each node's `acc`.
    layout: Vec<(Kind, u32)>,
    /// A new node's `acc`.
    zero: Vec<f64>,
    scratch: Scratch,
    skipped: Vec<Skipped>,
    elements: Vec<Elements>,
    notes: Vec<String>,
    mismatches: u64,
}

/// Counts of event instances per (region node, event type), shared with the callbacks.
struct EventCounts {
    current: AtomicUsize,
    types: usize,
    counts: Box<[AtomicU64]>,
    overflow: AtomicU64,
}

/// Region nodes whose events are counted; events in later nodes go to `overflow`.
const EVENT_NODES: usize = 4096;

impl EventCounts {
    #[inline(always)]
    fn set_current(&self, node: u32) {
        self.current.store(node as usize, Relaxed);
    }

    fn count(&self, ty: usize) {
        let n = self.current.load(Relaxed);
        match self.counts.get(n * self.types + ty) {
            Some(c) if n < EVENT_NODES => c.fetch_add(1, Relaxed),
            _ => self.overflow.fetch_add(1, Relaxed),
        };
    }
}

type Registrations<'m, L> = Vec<Registration<'m, L>>;

/// The profiling engine: one session's handles on every (selected) performance variable,
/// regions, per-function calls and times. See the [module documentation](self).
pub struct Profiler<'s, L: Level = Single> {
    /// Region mode's counted calls ([`Hot`]).
    hot: Hot,
    mode: Mode,
    /// Function indices the fast entry takes: `functions.len()`.
    fast_functions: usize,
    state: RefCell<State<'s, L>>,
    session: &'s Session<'s, L>,
    filter: Filter,
    functions: Vec<&'static str>,
    clock: Clock,
    events: Option<Arc<EventCounts>>,
    event_types: Vec<String>,
    registrations: RefCell<Registrations<'s, L>>,
    /// Entry points that found the state in use (re-entrance from a callback): skipped.
    reentered: AtomicU64,
}

impl<L: Level> fmt::Debug for Profiler<'_, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Profiler")
            .field("mode", &self.mode)
            .field("clock", &self.clock.name())
            .finish_non_exhaustive()
    }
}

impl<'s, L: Level> Profiler<'s, L> {
    /// A profiler on `session`: handles for every unbound variable (started if not
    /// continuous), the root region open, a first sample as the baseline.
    ///
    /// MPICH registers its variables in `MPI_Init`: created before it, call
    /// [`Profiler::refresh`] after it.
    pub fn new(session: &'s Session<'_, L>, config: Config) -> Result<Profiler<'s, L>> {
        // A session borrowed for 's from a token that lives at least as long.
        let session: &'s Session<'s, L> = session;
        let clock = Clock::new();
        let root = Node {
            parent: NONE,
            name: config.root.into_boxed_str(),
            kind: NodeKind::Region,
            calls: 1,
            ticks: 0,
            timed: 1,
            sure: 0,
            sure_ticks: 0,
            acc: Vec::new(),
            regions: Vec::new(),
            fn_base: NO_BASE,
            same_gen: 0,
            open: Vec::new(),
        };
        let mut state = State {
            nodes: vec![root],
            stack: Vec::with_capacity(64),
            top: 0,
            columns: Vec::new(),
            by_index: Vec::new(),
            bound: Vec::new(),
            objects: Vec::new(),
            words: Vec::new(),
            word_slots: Vec::new(),
            reads: Vec::new(),
            pending: [0; PENDING],
            npending: 0,
            same_words: Vec::new(),
            same_gen: 0,
            same_valid: false,
            same_skips: false,
            #[cfg(debug_assertions)]
            reread_test: std::env::var_os(REREAD_TEST).is_some(),
            #[cfg(debug_assertions)]
            rereads: 0,
            probes: Vec::new(),
            slots: Vec::new(),
            runs: [0; CASES + 1],
            present: 0,
            flat: false,
            layout: Vec::new(),
            zero: Vec::new(),
            scratch: Scratch::default(),
            skipped: Vec::new(),
            elements: Vec::new(),
            notes: Vec::new(),
            in_call: 0,
            mismatches: 0,
            fn_stats: Vec::new(),
            cur_base: NO_BASE,
            countdown: TIME_ONE_IN,
            hot_open: Vec::new(),
            timing: Vec::with_capacity(TIMING_DEPTH),
            rng: 0x9e37_79b9,
            stopped: false,
        };
        state.stack.push(Frame {
            node: 0,
            t0: clock.now(),
        });
        let mut p = Profiler {
            hot: Hot::new(config.mode == Mode::Region),
            session,
            mode: config.mode,
            filter: config.filter,
            fast_functions: config.functions.len(),
            functions: config.functions,
            clock,
            state: RefCell::new(state),
            events: None,
            event_types: Vec::new(),
            registrations: Default::default(),
            reentered: AtomicU64::new(0),
        };
        p.refresh()?;
        if config.events {
            p.register_events()?;
        }
        Ok(p)
    }

    /// The sampling mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The function names calls are reported against.
    pub fn functions(&self) -> &[&'static str] {
        &self.functions
    }

    /// Examines the variables added since the last look (`MPI_T_pvar_get_num` grew): handles
    /// for the unbound ones and for bound ones on the objects already known. Returns the
    /// number of handles allocated.
    ///
    /// MPI-4.1 §16.3.7: the number of variables may grow, indices never change.
    pub fn refresh(&self) -> Result<usize> {
        let Ok(mut st) = self.state.try_borrow_mut() else {
            self.reentered.fetch_add(1, Relaxed);
            return Ok(0);
        };
        if st.stopped {
            return Ok(0);
        }
        self.refresh_locked(&mut st)
    }

    fn refresh_locked(&self, st: &mut State<'s, L>) -> Result<usize> {
        // New probes change the blocks of `reads`.
        st.settle();
        let mpit = raw::token(self.session);
        let n = mpit.pvar_count()?;
        let before = st.handles();
        for index in st.by_index.len()..n {
            st.by_index.push(NONE);
            let info = match mpit.pvar_info(index) {
                Ok(info) => info,
                Err(e) => {
                    st.skipped.push(Skipped {
                        index,
                        name: None,
                        reason: format!("no information (a hole): {e}"),
                    });
                    continue;
                }
            };
            if let Some(why) = self.filter.rejects(&info) {
                st.skipped.push(Skipped {
                    index,
                    name: Some(info.name.to_string()),
                    reason: why.into(),
                });
                continue;
            }
            if Lane::of(info.datatype).is_none() {
                st.skipped.push(Skipped {
                    index,
                    name: Some(info.name.to_string()),
                    reason: format!("datatype {} is not numeric", info.datatype),
                });
                continue;
            }
            let column = st.columns.len();
            let bind = info.bind;
            let metric = info.class.derived_metric();
            st.columns.push(Column {
                info,
                metric,
                handles: 0,
                started: false,
            });
            let kind = Kind::of(st.columns[column].info.class);
            let at = u32::try_from(st.zero.len()).unwrap_or(u32::MAX);
            st.layout.push((kind, at));
            st.zero.extend_from_slice(kind.zero());
            for node in &mut st.nodes {
                node.acc.extend_from_slice(kind.zero());
            }
            st.by_index[index] = column as u32;
            if bind == Bind::NoObject {
                self.allocate(st, index, column, RawObject::NO_OBJECT, "");
            } else {
                st.bound.push((bind, Bound { index, column }));
                let objects: Vec<(RawObject, Box<str>)> = st
                    .objects
                    .iter()
                    .filter(|(o, _)| o.bind() == bind)
                    .cloned()
                    .collect();
                for (obj, label) in objects {
                    self.allocate(st, index, column, obj, &label);
                }
            }
        }
        // A column none of whose handles could be allocated stays in the report (a bound
        // variable may get objects later); unbound ones refused are listed as skipped.
        let added = st.handles() - before;
        if added > 0 {
            st.replan();
        }
        Ok(added)
    }

    /// Allocates (and starts) one handle; a refusal is recorded as skipped.
    fn allocate(
        &self,
        st: &mut State<'s, L>,
        index: usize,
        column: usize,
        obj: RawObject,
        label: &str,
    ) {
        let name = || Some(st_name(&st.columns[column].info));
        let (handle, count) = match PvarHandle::alloc(self.session, index, obj) {
            Ok(h) => h,
            Err(e) => {
                let reason = if label.is_empty() {
                    format!("handle refused: {e}")
                } else {
                    format!("handle for {label} refused: {e}")
                };
                let name = name();
                st.skipped.push(Skipped {
                    index,
                    name,
                    reason,
                });
                return;
            }
        };
        let info = st.columns[column].info.clone();
        if !info.continuous {
            if let Err(e) = handle.start() {
                let name = name();
                st.skipped.push(Skipped {
                    index,
                    name,
                    reason: format!("start refused: {e}"),
                });
                return;
            }
            st.columns[column].started = true;
        }
        st.columns[column].handles += 1;
        st.scratch.grow(count);
        let Some(lane) = Lane::of(info.datatype) else {
            return;
        };
        let mut first = Vec::new();
        // The baseline: what the handle holds at allocation is not the program's doing.
        let base = read_sum(
            &handle,
            lane,
            count,
            &mut st.scratch,
            (count > 1).then_some(&mut first),
        );
        let kind = Kind::of(info.class);
        // Without a baseline a counter counts from 0 and a watermark starts at its first value.
        let none = if kind == Kind::Delta { 0.0 } else { f64::NAN };
        let (last, failures) = match base {
            Ok(b) if b.is_trackable() => (b, 0),
            Ok(_) => (none, 0),
            Err(_) => (none, 1),
        };
        let (decode, shift) = Decode::of(lane);
        let bytes = count.saturating_mul(lane.size());
        // Several elements in one word ([`Case::lanes`]).
        let lanes = count > 1 && bytes <= size_of::<u64>();
        let (case, shift) = if lanes {
            (Case::lanes(kind), (64 - 8 * bytes) as u8)
        } else {
            (Case::of(decode, kind), shift)
        };
        // The exact baseline of a one-element unsigned counter, for its integer deltas; of
        // any other counter, the bits of `last` (a read of them adds nothing). Of several
        // elements in one word: their bytes, and `last` their sum but for a watermark (a
        // failed read: none, summing to 0).
        let mut word = [0u8; 8];
        let mut last = last;
        let prev = match decode {
            _ if lanes => {
                let w = match handle.read(&mut word) {
                    Ok(()) => unsigned(word, shift),
                    Err(_) => 0,
                };
                if !matches!(kind, Kind::Up | Kind::Down) {
                    last = lanes_sum(w, lane);
                }
                w
            }
            _ if kind != Kind::Delta => 0,
            Decode::Unsigned | Decode::Word if count == 1 => match handle.read(&mut word) {
                Ok(()) => unsigned(word, shift),
                Err(_) => 0,
            },
            _ => last.to_bits(),
        };
        let at = st.layout.get(column).map_or(u32::MAX, |l| l.1);
        // Handles are allocated by the thousand at most: `count` fits (else it reads as
        // several elements through `read_sum`, which refuses a short buffer).
        let elements = u32::try_from(count).unwrap_or(u32::MAX);
        // The probe of `handle`, of either type.
        macro_rules! probe {
            ($handle:expr) => {
                Probe {
                    handle: $handle,
                    last,
                    prev,
                    column: column as u32,
                    at,
                    count: elements,
                    failures,
                    lane,
                    kind,
                    case,
                    shift,
                }
            };
        }
        let slot = Slot {
            object: (obj.bind() != Bind::NoObject).then(|| raw::object_identity(&obj)),
            label: label.into(),
            first,
        };
        let seen = |bytes: usize| {
            (bytes <= SMALL_BYTES && matches!(kind, Kind::Delta | Kind::Raw)).then(|| {
                Box::new(SeenBytes {
                    bytes: [0; SMALL_BYTES],
                    fresh: [[0; SMALL_BYTES]; PENDING],
                    fresh_ok: [false; PENDING],
                    valid: false,
                })
            })
        };
        let word = if count == 1 || lanes {
            WordPvarHandle::new(handle)
        } else {
            Err(handle)
        };
        match word {
            Ok(word) => {
                st.words.push(probe!(word));
                st.word_slots.push(slot);
            }
            Err(handle) => {
                let seen = seen(bytes);
                st.probes.push(probe!(MultiHandle { handle, seen }));
                st.slots.push(slot);
            }
        }
    }

    /// Allocates handles for every variable bound to `obj`'s kind (call after the object is
    /// created; `label` names it in the report, e.g. `"MPI_COMM_WORLD"`). Returns how many.
    /// Looks for new variables first, as [`Profiler::refresh`] does.
    ///
    /// Spec 003 §0.2: handles for bound variables are allocated as objects appear.
    pub fn object_created(&self, obj: RawObject, label: &str) -> Result<usize> {
        let Ok(mut st) = self.state.try_borrow_mut() else {
            self.reentered.fetch_add(1, Relaxed);
            return Ok(0);
        };
        if st.stopped {
            return Ok(0);
        }
        // Variables may appear with the components objects bring (spec 003 §0.2: Caliper looks
        // again in the wrappers of object constructors); those found now get handles on every
        // known object, this one included once it is known.
        if let Err(e) = self.refresh_locked(&mut st) {
            st.notes
                .push(format!("looking for new variables failed: {e}"));
        }
        let before = st.handles();
        st.objects.push((obj, label.into()));
        let wanted: Vec<(usize, usize)> = st
            .bound
            .iter()
            .filter(|(b, _)| *b == obj.bind())
            .map(|(_, b)| (b.index, b.column))
            .collect();
        for (index, column) in wanted {
            self.allocate(&mut st, index, column, obj, label);
        }
        let added = st.handles() - before;
        if added > 0 {
            st.replan();
        }
        Ok(added)
    }

    /// Frees the handles bound to `obj` (call before the object is freed), after a last
    /// sample of them attributed to the innermost node.
    pub fn object_freed(&self, obj: RawObject) {
        let Ok(mut st) = self.state.try_borrow_mut() else {
            self.reentered.fetch_add(1, Relaxed);
            return;
        };
        // Probes leave: the samples waiting for them first.
        st.settle();
        let id = raw::object_identity(&obj);
        st.objects.retain(|(o, _)| raw::object_identity(o) != id);
        let bound_to = |s: &Slot| s.object == Some(id);
        if !st.word_slots.iter().chain(&st.slots).any(bound_to) {
            return;
        }
        let node = st.innermost();
        self.sample_into(&mut st, node);
        let st = &mut *st;
        for (probe, slot) in take_where(&mut st.words, &mut st.word_slots, bound_to) {
            st.retire(probe, slot);
        }
        for (probe, slot) in take_where(&mut st.probes, &mut st.slots, bound_to) {
            st.retire(probe, slot);
        }
        st.replan();
    }

    /// Enters region `name` inside the innermost one; it ends when the guard is dropped
    /// (together with any region entered inside it and not ended).
    pub fn region(&self, name: &str) -> RegionGuard<'_> {
        let depth = self.begin_depth(name);
        RegionGuard { prof: self, depth }
    }

    /// Enters region `name` inside the innermost one (for C APIs; end it with [`Profiler::end`]).
    pub fn begin(&self, name: &str) {
        self.begin_depth(name);
    }

    /// Enters a region; returns the stack depth to end back to (0: not entered).
    fn begin_depth(&self, name: &str) -> usize {
        let Ok(mut st) = self.state.try_borrow_mut() else {
            self.reentered.fetch_add(1, Relaxed);
            return 0;
        };
        if st.stopped {
            return 0;
        }
        let t = self.clock.now();
        let top = st.innermost();
        if st.in_call == 0 || self.mode == Mode::Region {
            self.sample_into(&mut st, top);
        }
        let node = st.region_child(top, name);
        st.nodes[node as usize].calls += 1;
        st.nodes[node as usize].timed += 1;
        st.stack.push(Frame { node, t0: t });
        st.restack();
        self.hot_leave(&mut st);
        st.cur_base = st.nodes[node as usize].fn_base;
        self.hot_enter(&mut st);
        if let Some(ev) = &self.events {
            ev.set_current(node);
        }
        st.stack.len() - 1
    }

    /// Ends region `name`: the innermost region if it has that name, else the nearest
    /// enclosing one of that name together with the regions inside it (counted as a
    /// mismatch). A name that is not open is an error ([`Error::InvalidValue`]) and changes
    /// nothing; the root region ends only in [`Profiler::finish`].
    pub fn end(&self, name: &str) -> Result<()> {
        let Ok(mut st) = self.state.try_borrow_mut() else {
            self.reentered.fetch_add(1, Relaxed);
            return Ok(());
        };
        let found = st
            .stack
            .iter()
            .enumerate()
            .skip(1)
            .rev()
            .find(|(_, f)| &*st.nodes[f.node as usize].name == name)
            .map(|(i, _)| i);
        match found {
            Some(depth) => {
                if depth + 1 != st.stack.len() {
                    st.mismatches += 1;
                }
                self.end_to(&mut st, depth);
                Ok(())
            }
            None => {
                st.mismatches += 1;
                Err(Error::invalid_value(format!(
                    "region {name:?} is not open (open: {})",
                    st.open_names()
                )))
            }
        }
    }

    /// Pops frames until the stack is `depth` long, with a sample attributed to each.
    fn end_to(&self, st: &mut State<'s, L>, depth: usize) {
        let depth = depth.max(1);
        while st.stack.len() > depth {
            let top = st.innermost();
            self.sample_into(st, top);
            let t = self.clock.now();
            if let Some(f) = st.stack.pop() {
                let n = &mut st.nodes[f.node as usize];
                n.ticks += t.saturating_sub(f.t0);
            }
            st.restack();
        }
        self.hot_leave(st);
        st.cur_base = st.nodes[st.innermost() as usize].fn_base;
        self.hot_enter(st);
        if let Some(ev) = &self.events {
            ev.set_current(st.innermost());
        }
    }

    /// The entry of MPI function `function` (an index into [`Config::functions`]): counted
    /// under the innermost region; in [`Mode::Call`] a sample attributed to that region.
    ///
    /// The hot path (region mode, a function called [`TIME_FIRST`] times in this region
    /// already, not chosen for timing): one count in the innermost region's slot of the
    /// function, a `Cell` outside the state (no borrow), and one comparison with the count at
    /// which the slot's next call is timed. One call in
    /// [`TIME_ONE_IN`] on average (after each pair's first [`TIME_FIRST`]) reads the clock; see
    /// [`NodeReport::timed_calls`].
    #[inline(always)]
    pub fn call_enter(&self, function: usize) -> CallStart {
        match self.try_call_enter(function) {
            Some(start) => start,
            None => self.call_enter_general(function),
        }
    }

    /// The hot path of [`Profiler::call_enter`] alone: `Some` if the call was counted there
    /// (region mode, a function called [`TIME_FIRST`] times in the innermost region already:
    /// also when chosen for timing, the start then timed), `None` (and nothing done) if it
    /// needs [`Profiler::call_enter`].
    ///
    /// Never panics and never allocates: a caller that must not unwind (the preload library's
    /// C entry points) can call it outside `catch_unwind` and guard only the full entry.
    #[inline(always)]
    pub fn try_call_enter(&self, function: usize) -> Option<CallStart> {
        if let Some(h) = self.hot.slot(function) {
            let c = h.calls.get() + 1;
            if c < h.next.get() {
                h.calls.set(c);
                return Some(CallStart::counted());
            }
            return self.hot_chosen(h, c, function);
        }
        if function >= self.fast_functions {
            return None;
        }
        let mut st = self.state.try_borrow_mut().ok()?;
        let st = &mut *st;
        // `cur_base` is at most NO_BASE (usize::MAX / 2) and `function` is small: no overflow.
        let slot = st.cur_base + function;
        let fs = st.fn_stats.get_mut(slot)?;
        if fs.calls < TIME_FIRST || fs.always_timed || st.countdown <= 1 {
            return None;
        }
        // Call mode without handles has nothing to read: it counts like region mode.
        if self.mode == Mode::Call && !(st.words.is_empty() && st.probes.is_empty()) {
            return self.call_mode_enter(st, slot);
        }
        fs.calls += 1;
        st.countdown -= 1;
        Some(CallStart::counted())
    }

    /// The region-mode part of [`Profiler::try_call_enter`], for a caller that keeps nothing
    /// across the call unless it must:
    /// - [`FastCall::Counted`]: the call was counted and has nothing to do at its exit (region
    ///   mode, a function called [`TIME_FIRST`] times in the innermost region already, not
    ///   chosen for timing);
    /// - [`FastCall::Timed`]: counted and chosen for timing (time it with
    ///   [`Profiler::timed_enter`], which also draws the next call to time, and
    ///   [`Profiler::timed_exit`]);
    /// - [`FastCall::Full`]: nothing done; the call needs [`Profiler::call_enter`].
    ///
    /// The preload library's wrappers tail-call `PMPI_` on `Counted`, keeping no argument
    /// across it, and on `Timed` tail-call a function of their own that times the call through
    /// two small functions shared by every wrapper: the general path (one call in
    /// [`TIME_ONE_IN`], cold each time) cost a 1 KiB round trip on Intel MPI 2% in cache
    /// misses. Never panics and never allocates.
    #[inline(always)]
    pub fn try_fast(&self, function: usize) -> FastCall {
        // Shut in call mode: its calls all take the full entry (one without handles too:
        // nothing to read there, nothing to save).
        let Some(h) = self.hot.slot(function) else {
            return FastCall::Full;
        };
        let c = h.calls.get() + 1;
        if c < h.next.get() {
            h.calls.set(c);
            return FastCall::Counted;
        }
        // Closed (next 0), or chosen for timing: [`Profiler::timed_enter`] draws the next.
        if h.next.get() == 0 || !self.clock.is_tsc() {
            return FastCall::Full;
        }
        h.calls.set(c);
        FastCall::Timed
    }

    /// [`Profiler::try_call_enter`]'s slot `h` of `function` at its `c`-th call: closed
    /// (`None`: the full entry), or chosen for timing (counted, the timed start).
    #[inline(never)]
    fn hot_chosen(&self, h: &HotSlot, c: u64, function: usize) -> Option<CallStart> {
        if h.next.get() == 0 {
            return None;
        }
        h.next.set(c + self.hot.interval());
        h.calls.set(c);
        let Ok(mut st) = self.state.try_borrow_mut() else {
            return Some(self.reentry());
        };
        let st = &mut *st;
        // Counted already: timed under any slot (one past the table times nothing).
        let slot = st.cur_base.saturating_add(function);
        Some(self.enter_timed(st, slot, function, false))
    }

    /// Closes every open [`HotSlot`] (their calls added to their pairs' [`FnStat`]s, the calls
    /// left to the next timed one kept) and shuts the fast path: before the innermost region
    /// changes, and at the end.
    fn hot_leave(&self, st: &mut State<'s, L>) {
        self.hot.open.set(false);
        let State {
            hot_open,
            fn_stats,
            cur_base,
            ..
        } = st;
        for f in hot_open.drain(..) {
            if let (Some(h), Some(fs)) = (
                self.hot.slots.get(f as usize),
                fn_stats.get_mut(cur_base.saturating_add(f as usize)),
            ) {
                h.close(fs);
            }
        }
    }

    /// Opens the slots of the innermost region's functions that count there (after
    /// [`Profiler::hot_leave`] and the change of region) and the fast path (region mode).
    fn hot_enter(&self, st: &mut State<'s, L>) {
        if self.mode != Mode::Region || st.stopped {
            return;
        }
        let top = st.innermost();
        let State {
            hot_open,
            fn_stats,
            cur_base,
            nodes,
            ..
        } = st;
        if let Some(node) = nodes.get(top as usize) {
            for &f in &node.open {
                let Some(fs) = fn_stats.get(cur_base.saturating_add(f as usize)) else {
                    continue;
                };
                if let Some(h) = self.hot.slots.get(f as usize)
                    && counts_fast(fs)
                {
                    h.open(fs, &self.hot);
                    hot_open.push(f);
                }
            }
        }
        self.hot.open.set(true);
    }

    /// Opens or closes the [`HotSlot`] of `slot` as its pair now needs (after a call through
    /// the full entry and after a timed call): open in region mode, in the innermost region,
    /// after the pair's first [`TIME_FIRST`] calls, while its calls are short.
    fn hot_sync(&self, st: &mut State<'s, L>, slot: usize) {
        let Some(function) = slot.checked_sub(st.cur_base) else {
            return;
        };
        let Some(h) = self.hot.slots.get(function) else {
            return;
        };
        let top = st.innermost();
        let State {
            hot_open,
            fn_stats,
            nodes,
            stopped,
            ..
        } = st;
        let Some(fs) = fn_stats.get_mut(slot) else {
            return;
        };
        let want = self.mode == Mode::Region && !*stopped && counts_fast(fs);
        let open = h.next.get() != 0;
        if want && !open {
            h.open(fs, &self.hot);
            hot_open.push(function as u32);
            if !fs.listed
                && let Some(n) = nodes.get_mut(top as usize)
            {
                fs.listed = true;
                n.open.push(function as u32);
            }
        } else if !want && open {
            h.close(fs);
            hot_open.retain(|&f| f as usize != function);
        }
    }

    /// The start of a call of `function` that [`Profiler::try_fast`] chose for timing (made
    /// just before it), and the pair's next call to time drawn (until then `try_fast` chooses
    /// each): `None` if the state is in use (a callback's re-entry).
    /// Never panics and never allocates.
    #[inline]
    pub fn timed_enter(&self, function: usize) -> Option<TimedCall> {
        // An open slot only (a closed one stays closed: its calls would be lost).
        if let Some(h) = self.hot.slot(function)
            && h.next.get() != 0
        {
            h.next.set(h.calls.get() + self.hot.interval());
        }
        let Ok(st) = self.state.try_borrow() else {
            self.reentered.fetch_add(1, Relaxed);
            return None;
        };
        let slot = st.cur_base.checked_add(function)?;
        Some(TimedCall {
            slot,
            t0: self.clock.now(),
        })
    }

    /// The exit of a call [`Profiler::timed_enter`] started: its duration added to its
    /// function's time. Never panics and never allocates.
    #[inline]
    pub fn timed_exit(&self, call: TimedCall) {
        let t = self.clock.now();
        let Ok(mut st) = self.state.try_borrow_mut() else {
            self.reentered.fetch_add(1, Relaxed);
            return;
        };
        if let Some(fs) = st.fn_stats.get_mut(call.slot) {
            fs.add_timed(t.saturating_sub(call.t0), self.clock.long_call);
            self.hot_sync(&mut st, call.slot);
        }
    }

    /// A whole call of `function` in [`Mode::Call`], its common case in one function: the
    /// call counted, a sample at entry attributed to the innermost region, `call` made (the
    /// state free meanwhile, so that a callback may re-enter), a sample at exit attributed to
    /// the function. Returns `true` if `call` was made (exactly once), `false` (nothing done,
    /// `call` not made) if the call needs [`Profiler::call_enter`] and
    /// [`Profiler::call_exit`]: region mode, no handles, a call chosen for timing, the first
    /// calls of a function in a region, a call from a callback inside a call.
    ///
    /// The same work as `call_enter` and `call_exit` around the call, for a caller that can
    /// hand the call over (the preload library's wrappers): one prologue, one owner test and
    /// no lookup of the function at the exit (callgrind, Open MPI 4.1.4, 5 handles:
    /// ~50 instructions a call less). Never panics and never allocates.
    ///
    /// Its samples are read at once and attributed later (but for the variables of several
    /// elements that do not compare their bytes): before the call of a function that waits
    /// for its peers (a receive, a wait, a collective: the work overlaps the wait), after a
    /// send's (the work overlaps the message's way); so between two calls there are the
    /// reads alone. mpich-ev's 1 KiB ping-pong, paired in one run each: 225 ns a round trip
    /// less for the one-element variables, then 63 less for the others. Every other entry
    /// settles the samples waiting before it samples.
    ///
    /// ```no_run
    /// # use mpit_safe::profile::{Config, Mode, Profiler};
    /// # fn send() -> i32 { 0 }
    /// # fn demo(p: &Profiler<'_>) {
    /// let mut rc = None;
    /// if !p.try_sampled_call(0, &mut || rc = Some(send())) {
    ///     let start = p.call_enter(0);
    ///     rc = Some(send());
    ///     p.call_exit(start);
    /// }
    /// # }
    /// ```
    #[inline(never)]
    pub fn try_sampled_call(&self, function: usize, call: &mut dyn FnMut()) -> bool {
        if self.mode != Mode::Call || function >= self.fast_functions {
            return false;
        }
        let (node, after) = {
            let Ok(mut st) = self.state.try_borrow_mut() else {
                return false;
            };
            let st = &mut *st;
            if st.in_call != 0 || st.words.is_empty() && st.probes.is_empty() {
                return false;
            }
            // As in `try_call_enter`: no overflow.
            let Some(fs) = st.fn_stats.get_mut(st.cur_base + function) else {
                return false;
            };
            if fs.calls < TIME_FIRST || fs.always_timed || st.countdown <= 1 {
                return false;
            }
            fs.calls += 1;
            let (node, after) = (fs.node, fs.settle_after);
            st.countdown -= 1;
            st.in_call = 1;
            let top = st.innermost();
            sample_deferred(st, top);
            if !after {
                st.settle_whole_call();
            }
            (node, after)
        };
        call();
        match self.state.try_borrow_mut() {
            Ok(mut st) => {
                st.in_call = 0;
                if after {
                    st.settle_whole_call();
                }
                // A stopped state has no handles left: nothing read.
                sample_deferred(&mut st, node);
            }
            // Only if `call` left the state borrowed: not a path of the wrappers.
            Err(_) => {
                self.reentered.fetch_add(1, Relaxed);
            }
        }
        true
    }

    /// [`Profiler::try_call_enter`] in [`Mode::Call`], out of line (the sampling loop stays
    /// out of the callers): a counted call not chosen for timing, with a sample at entry.
    /// Outermost calls only: a call from a callback inside a call goes the general way, and
    /// so does its exit.
    #[inline(never)]
    fn call_mode_enter(&self, st: &mut State<'s, L>, slot: usize) -> Option<CallStart> {
        if st.in_call != 0 {
            return None;
        }
        let fs = st.fn_stats.get_mut(slot)?;
        fs.calls += 1;
        st.countdown -= 1;
        st.in_call = 1;
        let top = st.innermost();
        // Inlined here and in the exit's hot path: one prologue a sample, not two.
        sample_body(st, top);
        Some(CallStart::new(slot, false, true, true, 0))
    }

    /// The exit's hot path: `true` if it did all of [`Profiler::call_exit`]'s work (a call
    /// not chosen for timing: in [`Mode::Call`] the sample attributed to the function),
    /// `false` (and nothing done) if it needs `call_exit`.
    ///
    /// Never panics and never allocates, like [`Profiler::try_call_enter`]. Inlined into its
    /// caller (the preload library's one exit function): a call and a prologue less a call.
    #[inline(always)]
    pub fn try_call_exit(&self, start: CallStart) -> bool {
        if !start.needs_exit() {
            return true;
        }
        if start.timed() {
            return false;
        }
        let Ok(mut st) = self.state.try_borrow_mut() else {
            return false;
        };
        let st = &mut *st;
        let Some(node) = st.fn_stats.get(start.slot()).map(|fs| fs.node) else {
            return false;
        };
        if self.mode == Mode::Call {
            st.in_call = st.in_call.saturating_sub(1);
        }
        if start.sampled() {
            sample_body(st, node);
        }
        true
    }

    /// Every entry [`Profiler::try_call_enter`] does not take.
    #[inline(never)]
    fn call_enter_general(&self, function: usize) -> CallStart {
        let Ok(mut st) = self.state.try_borrow_mut() else {
            return self.reentry();
        };
        self.enter_general(&mut st, function)
    }

    /// Entry points that found the state in use (re-entrance from a callback).
    #[cold]
    #[inline(never)]
    fn reentry(&self) -> CallStart {
        self.reentered.fetch_add(1, Relaxed);
        CallStart::counted()
    }

    /// The entry of a call chosen for timing (counted already), `sampled` if its entry took a
    /// sample: the start time goes on the timing stack.
    #[inline(never)]
    fn enter_timed(
        &self,
        st: &mut State<'s, L>,
        slot: usize,
        function: usize,
        sampled: bool,
    ) -> CallStart {
        if st.fn_stats.get(slot).is_some_and(|fs| fs.node == NONE) {
            self.first_call(st, slot, function);
        }
        let depth = st.timing.len();
        let timed = depth < TIMING_DEPTH;
        let exit = timed || self.mode == Mode::Call;
        let start = CallStart::new(slot, timed, sampled, exit, depth);
        if timed {
            st.timing.push(self.clock.now());
        }
        start
    }

    /// Every other entry: call mode (a sample at entry), the first call in a region, an index
    /// outside [`Config::functions`].
    #[inline(never)]
    fn enter_general(&self, st: &mut State<'s, L>, function: usize) -> CallStart {
        if function >= self.functions.len() || st.stopped {
            return CallStart::counted();
        }
        let slot = match st.fn_stats.get(st.cur_base + function) {
            Some(_) => st.cur_base + function,
            None => self.first_call_in_region(st, function),
        };
        let sampled = self.mode == Mode::Call && st.in_call == 0;
        if self.mode == Mode::Call {
            if sampled {
                let top = st.innermost();
                self.sample_into(st, top);
            }
            st.in_call += 1;
        }
        let Some(fs) = st.fn_stats.get_mut(slot) else {
            return CallStart::counted();
        };
        fs.calls += 1;
        let timed = fs.always_timed || fs.calls <= TIME_FIRST || {
            st.countdown -= 1;
            st.countdown == 0 && {
                st.countdown = st.interval();
                true
            }
        };
        if self.mode == Mode::Region {
            self.hot_sync(st, slot);
        }
        if timed {
            return self.enter_timed(st, slot, function, sampled);
        }
        if st.fn_stats.get(slot).is_some_and(|fs| fs.node == NONE) {
            self.first_call(st, slot, function);
        }
        CallStart::new(slot, false, sampled, self.mode == Mode::Call, 0)
    }

    /// The first call of any function in the innermost region: its block of per-function
    /// counts. Returns the slot of `function`.
    #[cold]
    #[inline(never)]
    fn first_call_in_region(&self, st: &mut State<'s, L>, function: usize) -> usize {
        let top = st.innermost() as usize;
        let base = st.fn_stats.len();
        st.fn_stats.resize(base + self.functions.len(), FnStat::NEW);
        if let Some(n) = st.nodes.get_mut(top) {
            n.fn_base = base;
        }
        st.cur_base = base;
        base + function
    }

    /// The first call of `function` in the innermost region: its node.
    #[cold]
    #[inline(never)]
    fn first_call(&self, st: &mut State<'s, L>, slot: usize, function: usize) {
        let name = self.functions.get(function).copied().unwrap_or("?");
        let top = st.innermost();
        let node = st.new_node(top, name, NodeKind::Function);
        if let Some(fs) = st.fn_stats.get_mut(slot) {
            fs.node = node;
            fs.settle_after = settles_after(name);
        }
    }

    /// The exit of the call `start` began: timed (if it was chosen) under the region it was
    /// entered in; in [`Mode::Call`] a sample attributed to the function. Nothing to do (and
    /// nothing done) unless [`CallStart::needs_exit`].
    #[inline(always)]
    pub fn call_exit(&self, start: CallStart) {
        if !self.try_call_exit(start) {
            self.exit_slow(start);
        }
    }

    #[inline(never)]
    fn exit_slow(&self, start: CallStart) {
        let t = if start.timed() { self.clock.now() } else { 0 };
        let Ok(mut st) = self.state.try_borrow_mut() else {
            self.reentered.fetch_add(1, Relaxed);
            return;
        };
        let st = &mut *st;
        if self.mode == Mode::Call {
            st.in_call = st.in_call.saturating_sub(1);
        }
        let t0 = if start.timed() {
            // Entries of calls whose exits never came (a panic, a callback that left) are
            // dropped with this one.
            let t0 = st.timing.get(start.depth()).copied();
            st.timing.truncate(start.depth());
            t0
        } else {
            None
        };
        let long = self.clock.long_call;
        let Some(fs) = st.fn_stats.get_mut(start.slot()) else {
            return;
        };
        let node = fs.node;
        if let Some(t0) = t0 {
            fs.add_timed(t.saturating_sub(t0), long);
            self.hot_sync(st, start.slot());
        }
        if start.sampled() {
            self.sample_into(st, node);
        }
    }

    /// Reads every handle and attributes the change since the previous sample to `node`.
    #[inline(always)]
    fn sample_into(&self, st: &mut State<'s, L>, node: u32) {
        if st.handles() > 0 {
            sample(st, node)
        }
    }

    /// Ends every open region and the root with a last sample, reads the per-element totals,
    /// frees every handle and registration, and returns what was measured.
    pub fn finish(self) -> Result<Report> {
        self.stop()
    }

    /// [`Profiler::finish`] through a shared reference: the report, after which the profiler
    /// measures nothing (every entry point returns at once, [`Profiler::call_exit`] included)
    /// and a second `stop` is an error. For a profiler that lives in a `static` or is shared
    /// by reference with code that may still call it (the preload library's wrappers).
    ///
    /// An error ([`Error::InvalidValue`]) if the profiler is in use (called from one of its
    /// own callbacks) or already stopped.
    pub fn stop(&self) -> Result<Report> {
        let Ok(mut guard) = self.state.try_borrow_mut() else {
            return Err(Error::invalid_value("the profiler is in use"));
        };
        let st = &mut *guard;
        if st.stopped {
            return Err(Error::invalid_value("the profiler is stopped already"));
        }
        st.stopped = true;
        self.hot_leave(st);
        st.settle();
        let clock = &self.clock;
        // The last sample of each open region, innermost first, then its time.
        while let Some(top) = st.stack.last().map(|f| f.node) {
            sample(st, top);
            let t = clock.now();
            if let Some(f) = st.stack.pop() {
                st.nodes[f.node as usize].ticks += t.saturating_sub(f.t0);
            }
            st.restack();
        }
        st.cur_base = NO_BASE;
        if let Ok(mut r) = self.registrations.try_borrow_mut() {
            r.clear();
        }
        for fs in std::mem::take(&mut st.fn_stats) {
            if let Some(n) = st.nodes.get_mut(fs.node as usize) {
                n.calls = fs.calls;
                n.ticks = fs.ticks;
                n.timed = fs.timed;
                (n.sure, n.sure_ticks) = (fs.sure, fs.sure_ticks);
            }
        }
        let (ns_per_tick, duration_ns) = clock.calibrate();
        (st.runs, st.present, st.flat) = ([0; CASES + 1], 0, false);
        st.reads.clear();
        let words = std::mem::take(&mut st.words);
        for (probe, slot) in words.into_iter().zip(std::mem::take(&mut st.word_slots)) {
            st.retire(probe, slot);
        }
        let probes = std::mem::take(&mut st.probes);
        for (probe, slot) in probes.into_iter().zip(std::mem::take(&mut st.slots)) {
            st.retire(probe, slot);
        }
        let mut notes = std::mem::take(&mut st.notes);
        #[cfg(debug_assertions)]
        if st.rereads > 0 {
            notes.push(format!(
                "{} samples read again one by one ({REREAD_TEST})",
                st.rereads
            ));
        }
        if st.mismatches > 0 {
            notes.push(format!(
                "{} region end(s) did not match the innermost region",
                st.mismatches
            ));
        }
        let reentered = self.reentered.load(Relaxed);
        if reentered > 0 {
            notes.push(format!(
                "{reentered} entries into the profiler while it was busy (re-entrance) were not recorded"
            ));
        }
        let ev_counts = self.events.as_deref();
        if let Some(ev) = ev_counts {
            let o = ev.overflow.load(Relaxed);
            if o > 0 {
                notes.push(format!(
                    "{o} events in regions beyond the first {EVENT_NODES} were not attributed"
                ));
            }
        }
        let event_types = self.event_types.clone();
        let nodes = st
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| NodeReport {
                parent: (n.parent != NONE).then_some(n.parent as usize),
                name: n.name.to_string(),
                kind: n.kind,
                calls: n.calls,
                // Estimated from the timed calls where not every call was timed.
                time_ns: (n.estimated_ticks() * ns_per_tick).round() as u64,
                timed_calls: n.timed,
                metrics: st
                    .layout
                    .iter()
                    .map(|&(kind, at)| kind.metric(n.acc.get(at as usize..).unwrap_or(&[])))
                    .collect(),
                events: match ev_counts {
                    Some(ev) if i < EVENT_NODES && n.kind == NodeKind::Region => (0..ev.types)
                        .map(|t| ev.counts[i * ev.types + t].load(Relaxed))
                        .collect(),
                    _ => vec![0; event_types.len()],
                },
            })
            .collect();
        Ok(Report {
            root: st.nodes[0].name.to_string(),
            mode: self.mode,
            clock: clock.name(),
            duration_ns,
            columns: std::mem::take(&mut st.columns),
            nodes,
            elements: std::mem::take(&mut st.elements),
            skipped: std::mem::take(&mut st.skipped),
            event_types,
            notes,
        })
    }

    fn register_events(&mut self) -> Result<()> {
        use mpit_core::CbSafety;
        let mpit = raw::token(self.session);
        let types = match mpit.events() {
            Ok(l) => l.entries,
            Err(Error::NotSupported(_)) => {
                self.note("events: this MPI's header has no event API (MPI-4.0 §16.3.8)".into());
                return Ok(());
            }
            Err(e) => {
                self.note(format!("event types not listed: {e}"));
                return Ok(());
            }
        };
        let counts = Arc::new(EventCounts {
            current: AtomicUsize::new(0),
            types: types.len(),
            counts: (0..types.len() * EVENT_NODES)
                .map(|_| AtomicU64::new(0))
                .collect(),
            overflow: AtomicU64::new(0),
        });
        for (t, info) in types.iter().enumerate() {
            if info.bind != Bind::NoObject {
                self.note(format!(
                    "event type {} is bound to {}: not registered",
                    info.name, info.bind
                ));
                continue;
            }
            let mut b = mpit.event_registration(info.index, &NoObject);
            for level in [
                CbSafety::AsyncSignalSafe,
                CbSafety::MpiRestricted,
                CbSafety::ThreadSafe,
                CbSafety::None,
            ] {
                let c = Arc::clone(&counts);
                b = b.on_event(level, move |_| c.count(t));
            }
            match b.register() {
                Ok(r) => self.registrations.get_mut().push(r),
                Err(e) => self.note(format!(
                    "event type {}: registration refused: {e}",
                    info.name
                )),
            }
            self.event_types.push(info.name.to_string());
        }
        self.events = Some(counts);
        Ok(())
    }

    fn note(&self, s: String) {
        if let Ok(mut st) = self.state.try_borrow_mut() {
            st.notes.push(s);
        }
    }
}

/// The name of a column's variable.
fn st_name(info: &PvarInfo) -> String {
    info.name.to_string()
}

impl<'s, L: Level> State<'s, L> {
    /// The number of short calls until the next timed one: uniform in
    /// 1..=2·[`TIME_ONE_IN`]−1 (mean [`TIME_ONE_IN`]; random, so that no periodic pattern of
    /// the program's calls aliases with it), from xorshift32.
    #[inline]
    fn interval(&mut self) -> u32 {
        draw_interval(&mut self.rng)
    }

    #[inline(always)]
    fn innermost(&self) -> u32 {
        debug_assert_eq!(self.top, self.stack.last().map_or(0, |f| f.node));
        self.top
    }

    /// [`State::top`] after `stack` changed.
    fn restack(&mut self) {
        self.top = self.stack.last().map_or(0, |f| f.node);
    }

    fn open_names(&self) -> String {
        self.stack
            .iter()
            .map(|f| &*self.nodes[f.node as usize].name)
            .collect::<Vec<_>>()
            .join(" > ")
    }

    fn new_node(&mut self, parent: u32, name: &str, kind: NodeKind) -> u32 {
        self.nodes.push(Node {
            parent,
            name: name.into(),
            kind,
            calls: 0,
            ticks: 0,
            timed: 0,
            sure: 0,
            sure_ticks: 0,
            acc: self.zero.clone(),
            regions: Vec::new(),
            fn_base: NO_BASE,
            same_gen: 0,
            open: Vec::new(),
        });
        (self.nodes.len() - 1) as u32
    }

    #[inline]
    fn region_child(&mut self, parent: u32, name: &str) -> u32 {
        let p = &self.nodes[parent as usize];
        if let Some(&c) = p
            .regions
            .iter()
            .find(|&&c| &*self.nodes[c as usize].name == name)
        {
            return c;
        }
        let c = self.new_node(parent, name, NodeKind::Region);
        self.nodes[parent as usize].regions.push(c);
        c
    }

    /// Orders the one-element probes (and their slots) in runs of one [`Case`] (the sampling
    /// loop's [`State::runs`]); after handles came or went.
    fn replan(&mut self) {
        self.settle();
        let words = std::mem::take(&mut self.words);
        let slots = std::mem::take(&mut self.word_slots);
        let mut pairs: Vec<(WordProbe<'s, L>, Slot)> = words.into_iter().zip(slots).collect();
        // Stable: within a run, the order of allocation.
        pairs.sort_by_key(|(p, _)| p.case);
        let cases: Vec<Case> = pairs.iter().map(|(p, _)| p.case).collect();
        (self.runs, self.present) = case_runs(&cases);
        self.flat = flat_is_cheaper(cases.len(), self.present.count_ones() as usize);
        (self.words, self.word_slots) = pairs.into_iter().unzip();
        self.reads = vec![0; PENDING * self.words.len()];
        self.same_words = vec![0; self.words.len()];
        self.same_valid = false;
        self.same_skips = !self.words.is_empty() && self.present & !SAME_SKIP_CASES == 0;
    }

    /// [`State::settle`] for [`Profiler::try_sampled_call`]: where every waiting sample is
    /// the words last attributed, each in a node that holds them (and no probe of several
    /// elements waits), nothing to do but forget them, without a call.
    #[inline(always)]
    fn settle_whole_call(&mut self) {
        let n = self.words.len();
        let mut same = self.same_skips && self.same_valid && self.probes.is_empty();
        let mut k = 0;
        while same && k < usize::from(self.npending) {
            same = match (self.pending.get(k), self.reads.get(k * n..(k + 1) * n)) {
                (Some(&node), Some(w)) => {
                    w == &self.same_words[..]
                        && self
                            .nodes
                            .get(node as usize)
                            .is_some_and(|nd| nd.same_gen == self.same_gen)
                }
                _ => false,
            };
            k += 1;
        }
        if same {
            self.npending = 0;
        } else {
            self.settle();
        }
    }

    /// Attributes the samples waiting in [`State::reads`] ([`sample_deferred`]), oldest
    /// first: each probe's samples in the order they were read, before anything else reads
    /// or reorders the probes.
    ///
    /// Out of line, also in [`Profiler::try_sampled_call`]: a copy inlined at each of its two
    /// places was slower (floor_trio on Open MPI 5.0.11, 4 runs: +8-10 ns a pair of calls
    /// without messages, +10-20 a 1 KiB round trip; paired on mpich-ev, no difference).
    #[inline(never)]
    fn settle(&mut self) {
        let n = self.words.len();
        let State {
            words,
            reads,
            runs,
            present,
            flat,
            nodes,
            probes,
            pending,
            npending,
            same_words,
            same_gen,
            same_valid,
            same_skips,
            ..
        } = self;
        for (k, &node) in pending.iter().enumerate().take(usize::from(*npending)) {
            let Some(nd) = nodes.get_mut(node as usize) else {
                continue;
            };
            // The blocks are `replan`'s for these probes: a mismatch, never seen, skips one.
            if let Some(w) = reads.get(k * n..(k + 1) * n) {
                // `memcmp`: fewer instructions than a loop of ours (callgrind, 5 words).
                let same = *same_skips && *same_valid && w == &same_words[..];
                if !same || nd.same_gen != *same_gen {
                    attribute_words(words, w, runs, *present, *flat, &mut nd.acc);
                    if *same_skips {
                        if !same && same_words.len() == w.len() {
                            same_words.copy_from_slice(w);
                            (*same_valid, *same_gen) = (true, *same_gen + 1);
                        }
                        nd.same_gen = *same_gen;
                    }
                }
            }
            if !probes.is_empty() {
                settle_multi(probes, k, &mut nd.acc);
            }
        }
        *npending = 0;
    }

    /// Handles held: one-element and other.
    fn handles(&self) -> usize {
        self.word_slots.len() + self.slots.len()
    }

    /// A handle leaves: its per-element totals are kept, failures noted, the handle freed.
    fn retire<H: Held>(&mut self, probe: Probe<H>, slot: Slot) {
        let column = probe.column as usize;
        let Some(col) = self.columns.get(column) else {
            return;
        };
        if probe.failures > 0 {
            self.notes.push(format!(
                "{}{}: {} read(s) failed",
                col.info.name,
                if slot.label.is_empty() {
                    String::new()
                } else {
                    format!(" on {}", slot.label)
                },
                probe.failures
            ));
        }
        let delta = col.metric == DerivedMetric::Delta;
        let count = probe.count as usize;
        if count > 1 {
            let mut values = Vec::with_capacity(count);
            if read_sum(
                &probe.handle,
                probe.lane,
                count,
                &mut self.scratch,
                Some(&mut values),
            )
            .is_ok()
            {
                if delta && slot.first.len() == values.len() {
                    for (v, f) in values.iter_mut().zip(&slot.first) {
                        // As DeltaTracker: a drop below the start is a reset.
                        *v = DeltaTracker::starting_at(*f).observe(*v);
                    }
                }
                self.elements.push(Elements {
                    column,
                    object: slot.label.to_string(),
                    values,
                });
            }
        }
        // Dropping the handle frees it (MPI_T_pvar_handle_free).
    }
}

/// Takes the probes whose slot `pick` chooses out of `probes` and `slots` (at the same
/// indices), the others left in place (in another order).
fn take_where<H>(
    probes: &mut Vec<Probe<H>>,
    slots: &mut Vec<Slot>,
    pick: impl Fn(&Slot) -> bool,
) -> Vec<(Probe<H>, Slot)> {
    let mut taken = Vec::new();
    let mut i = 0;
    while i < slots.len() {
        if pick(&slots[i]) {
            taken.push((probes.swap_remove(i), slots.swap_remove(i)));
        } else {
            i += 1;
        }
    }
    taken
}

/// Reads every handle and attributes the change since the previous sample to `node`.
#[inline(never)]
fn sample<L: Level>(st: &mut State<'_, L>, node: u32) {
    sample_body(st, node)
}

/// [`sample`], inlined into the two hot paths of call mode (the entry and the exit of a
/// call not chosen for timing).
///
/// The probes of at most 8 bytes are all read first, each into its word ([`State::reads`]),
/// then attributed case by case ([`attribute_words`], [`Case`], [`State::runs`]), each run a
/// loop with its decoding and its kind fixed: each word decoded by its probe's shift
/// ([`Decode::value`]); counters, timers and aggregates (most variables), levels and states
/// attributed inline (a compare, a subtraction and an addition for a counter), watermarks and
/// a counter's reset out of line. Nothing of ours between two reads: every `MPI_T_pvar_read`
/// of Open MPI takes a mutex, and a locked instruction waits for the stores before it.
#[inline(always)]
fn sample_body<L: Level>(st: &mut State<'_, L>, node: u32) {
    if st.npending != 0 {
        st.settle();
    }
    st.same_valid = false;
    #[cfg(debug_assertions)]
    let force = st.reread_test && !st.words.is_empty();
    #[cfg(debug_assertions)]
    if force {
        st.rereads += 1;
    }
    #[cfg(not(debug_assertions))]
    let force = false;
    let State {
        words: one,
        reads,
        probes: multi,
        runs,
        present,
        flat,
        scratch,
        nodes,
        ..
    } = st;
    let Some(n) = nodes.get_mut(node as usize) else {
        return;
    };
    let acc = &mut n.acc[..];
    let (runs, present) = (&*runs, *present);
    // The first block: nothing is pending.
    let reads = reads.get_mut(..one.len()).unwrap_or_default();
    // Every read first, each into its own word, nothing between two reads but the next
    // call's arguments: no store of ours for the lock inside the next read to wait for, no
    // branch on a value. Their success ANDed, checked once.
    let mut ok = reads.len() == one.len();
    for (p, w) in one.iter().zip(reads.iter_mut()) {
        ok &= p.handle.read_ok(w);
    }
    if !ok || force {
        // A read failed (or the words do not match the probes: never seen): again one by
        // one, each checked.
        reread_failed(one, reads, acc);
    } else {
        attribute_words(one, reads, runs, present, *flat, acc);
    }
    if !multi.is_empty() {
        sample_multi(multi, acc, scratch);
    }
}

/// Samples call mode's whole calls keep waiting for their attribution at most: the exit's of
/// one call and the entry's of the next ([`Profiler::try_sampled_call`]).
const PENDING: usize = 2;

/// Whether call mode attributes the samples waiting before it after the call of MPI function
/// `name` rather than before it ([`Profiler::try_sampled_call`]): the sends (`MPI_Send`,
/// `MPI_Isend`, `MPI_Ssend_init`, ..., not `MPI_Sendrecv`), whose peer waits for what they
/// start; after them the work overlaps the message's way to it. Every other call attributes
/// before it: a receive, a wait or a collective would wait for its peers anyway.
fn settles_after(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.contains("send") && !name.contains("recv")
}

/// [`sample_body`] with the attribution of the one-element probes left for later
/// ([`State::settle`]): their reads go into the next block of [`State::reads`] and the sample
/// waits there, so that the time between two MPI calls holds the reads alone
/// ([`Profiler::try_sampled_call`] settles where the program waits anyway). A failed read
/// (or a debug build's forced re-read) settles the samples before it and takes this one now
/// ([`reread_deferred`]). The probes of several elements are read after the others, into
/// their own buffers where they compare their bytes ([`read_multi_deferred`]), and sampled
/// now where they do not.
#[inline(always)]
fn sample_deferred<L: Level>(st: &mut State<'_, L>, node: u32) {
    // Debug builds: the failed read's path, forced (`REREAD_TEST`).
    #[cfg(debug_assertions)]
    if st.reread_test && !st.words.is_empty() {
        st.rereads += 1;
        return reread_deferred(st, node);
    }
    if usize::from(st.npending) >= PENDING {
        return sample_body(st, node);
    }
    let k = usize::from(st.npending);
    let n = st.words.len();
    let Some(block) = st.reads.get_mut(k * n..(k + 1) * n) else {
        // Never: `replan` sized the blocks for these probes.
        return sample_body(st, node);
    };
    let mut ok = true;
    for (p, w) in st.words.iter().zip(block.iter_mut()) {
        ok &= p.handle.read_ok(w);
    }
    if !ok {
        return reread_deferred(st, node);
    }
    st.pending[k] = node;
    st.npending += 1;
    if !st.probes.is_empty()
        && let Some(n) = st.nodes.get_mut(node as usize)
    {
        read_multi_deferred(&mut st.probes, k, &mut n.acc, &mut st.scratch);
    }
}

/// [`sample_deferred`]'s sample in which a read failed: the samples before it settled, then
/// this one as [`sample_body`] takes it after a failed read (every probe read again, each
/// checked, [`reread_failed`]), and its probes of several elements.
#[cold]
#[inline(never)]
fn reread_deferred<L: Level>(st: &mut State<'_, L>, node: u32) {
    st.settle();
    st.same_valid = false;
    let State {
        words,
        reads,
        probes,
        scratch,
        nodes,
        ..
    } = st;
    let Some(n) = nodes.get_mut(node as usize) else {
        return;
    };
    if let Some(block) = reads.get_mut(..words.len()) {
        reread_failed(words, block, &mut n.acc);
    }
    if !probes.is_empty() {
        sample_multi(probes, &mut n.acc, scratch);
    }
}

/// Every case: its kind, then each decoding with its `Case` ([`attribute_words`]).
macro_rules! cases {
    ($m:ident!($($a:tt)*)) => {
        $m! {
            ($($a)*)
            DELTA: [WordDelta: WORD, UnsignedDelta: UNSIGNED, SignedDelta: SIGNED, FloatDelta: FLOAT,
                LanesDelta: LANES],
            SAMPLES: [UnsignedSamples: UNSIGNED, SignedSamples: SIGNED, FloatSamples: FLOAT,
                LanesSamples: LANES],
            RAW: [UnsignedRaw: UNSIGNED, SignedRaw: SIGNED, FloatRaw: FLOAT, LanesRaw: LANES],
            OTHER: [UnsignedOther: UNSIGNED, SignedOther: SIGNED, FloatOther: FLOAT,
                LanesOther: LANES]
        }
    };
}

/// Probe by probe, each to its case's code: `$p` the probe, `$w` its word.
macro_rules! by_case {
    (($p:ident, $w:ident, $acc:ident) $($k:ident: [$($case:ident: $d:ident),*]),*) => {
        match $p.case {
            $($(Case::$case => sample_run::<$d, $k, L>(
                std::slice::from_mut($p), std::slice::from_ref($w), $acc),)*)*
        }
    };
}

/// Attributes the words `reads` of the probes `one` (all read) to `acc`: run by run, or one by
/// one where `flat`.
#[inline(always)]
fn attribute_words<L: Level>(
    one: &mut [WordProbe<'_, L>],
    reads: &[u64],
    runs: &[u32; CASES + 1],
    present: u32,
    flat: bool,
    acc: &mut [f64],
) {
    // Run by run: a case with probes, its run, its bounds checked (they are `replan`'s: a
    // mismatch, never seen, skips the run). A case without: one test, and a group of cases
    // without any, one test for the group.
    macro_rules! by_runs {
        (() $($k:ident: [$($case:ident: $d:ident),*]),*) => {
            $(if present & (0 $(| 1 << Case::$case as u32)*) != 0 {
                $({
                    let c = Case::$case as usize;
                    let r = runs[c] as usize..runs[c + 1] as usize;
                    if present & (1 << c) != 0
                        && let (Some(run), Some(w)) = (one.get_mut(r.clone()), reads.get(r))
                    {
                        sample_run::<$d, $k, L>(run, w, acc);
                    }
                })*
            })*
        };
    }
    if flat {
        for (p, w) in one.iter_mut().zip(reads) {
            cases!(by_case!(p, w, acc));
        }
    } else {
        cases!(by_runs!());
    }
}

/// The environment variable that makes a debug build's sampling loop read every sample's
/// one-element probes again one by one ([`reread_failed`]), as after a failed read: the test
/// of that path (`tests/profile_ranks.rs`).
#[cfg(debug_assertions)]
const REREAD_TEST: &str = "MPIT_SAFE_TEST_REREAD";

/// A sample in which a read failed: every probe read again, each checked; a failure counted
/// and its probe left out of the sample.
#[cold]
#[inline(never)]
fn reread_failed<L: Level>(one: &mut [WordProbe<'_, L>], reads: &mut [u64], acc: &mut [f64]) {
    for (p, w) in one.iter_mut().zip(reads.iter_mut()) {
        if !p.handle.read_ok(w) {
            read_failed(p);
            continue;
        }
        let w = &*w;
        cases!(by_case!(p, w, acc));
    }
}

/// The decodings and kinds of [`sample_run`], as constants.
const UNSIGNED: u8 = Decode::Unsigned as u8;
const SIGNED: u8 = Decode::Signed as u8;
const FLOAT: u8 = Decode::Float as u8;
const WORD: u8 = Decode::Word as u8;
/// Several elements in at most 8 bytes, read as one word and summed ([`Case::lanes`]).
const LANES: u8 = 4;
const DELTA: u8 = 0;
const RAW: u8 = 1;
const SAMPLES: u8 = 2;
const OTHER: u8 = 3;

/// How the sampling loop treats a one-element probe: its decoding and its kind as one of
/// the loop's fixed cases, in the loop's order ([`sample_body`]). A 64-bit unsigned
/// variable other than a counter is decoded as any unsigned one; watermarks go out of line.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Case {
    WordDelta,
    UnsignedDelta,
    SignedDelta,
    FloatDelta,
    UnsignedSamples,
    SignedSamples,
    FloatSamples,
    UnsignedRaw,
    SignedRaw,
    FloatRaw,
    UnsignedOther,
    SignedOther,
    FloatOther,
    LanesDelta,
    LanesSamples,
    LanesRaw,
    LanesOther,
}

/// Cases of [`Case`].
const CASES: usize = Case::LanesOther as usize + 1;

/// The cases whose sample of the same word as the one before changes nothing in a node that
/// already holds it: deltas (0) and states (the same value): [`State::same_skips`].
const SAME_SKIP_CASES: u32 = 1 << Case::WordDelta as u32
    | 1 << Case::UnsignedDelta as u32
    | 1 << Case::SignedDelta as u32
    | 1 << Case::FloatDelta as u32
    | 1 << Case::LanesDelta as u32
    | 1 << Case::UnsignedRaw as u32
    | 1 << Case::SignedRaw as u32
    | 1 << Case::FloatRaw as u32
    | 1 << Case::LanesRaw as u32;

/// Whether `probes` one-element probes in `cases` cases cost fewer instructions a sample one
/// by one ([`State::flat`]: ~8 a probe for the jump) than run by run (~16 for the cases'
/// tests and ~17 to set up each run present, ~3 a probe); measured with callgrind on
/// Intel MPI's 2 probes in 2 cases (~65 a sample run by run).
fn flat_is_cheaper(probes: usize, cases: usize) -> bool {
    5 * probes < 16 + 17 * cases
}

/// Of probes in the order of their cases (`cases`, sorted): where the run of each case starts
/// (and the last one ends), and the cases present, a bit each ([`State::runs`],
/// [`State::present`]).
fn case_runs(cases: &[Case]) -> ([u32; CASES + 1], u32) {
    let mut runs = [0; CASES + 1];
    for (c, start) in runs.iter_mut().enumerate() {
        // Where the first probe of case `c` or a later one is.
        *start = cases.partition_point(|&k| (k as usize) < c) as u32;
    }
    let present = cases.iter().fold(0, |m, &k| m | 1 << k as u32);
    (runs, present)
}

impl Case {
    fn of(decode: Decode, kind: Kind) -> Case {
        use Decode::{Float, Signed, Unsigned, Word};
        match (decode, kind) {
            (Word, Kind::Delta) => Case::WordDelta,
            (Unsigned, Kind::Delta) => Case::UnsignedDelta,
            (Signed, Kind::Delta) => Case::SignedDelta,
            (Float, Kind::Delta) => Case::FloatDelta,
            (Unsigned | Word, Kind::Samples) => Case::UnsignedSamples,
            (Signed, Kind::Samples) => Case::SignedSamples,
            (Float, Kind::Samples) => Case::FloatSamples,
            (Unsigned | Word, Kind::Raw) => Case::UnsignedRaw,
            (Signed, Kind::Raw) => Case::SignedRaw,
            (Float, Kind::Raw) => Case::FloatRaw,
            (Unsigned | Word, Kind::Up | Kind::Down) => Case::UnsignedOther,
            (Signed, Kind::Up | Kind::Down) => Case::SignedOther,
            (Float, Kind::Up | Kind::Down) => Case::FloatOther,
        }
    }

    /// The case of a variable of several integer elements in at most 8 bytes (a per-peer
    /// array on a communicator of two ranks): read as one word, like a one-element one, and
    /// summed where the word changed.
    fn lanes(kind: Kind) -> Case {
        match kind {
            Kind::Delta => Case::LanesDelta,
            Kind::Samples => Case::LanesSamples,
            Kind::Raw => Case::LanesRaw,
            Kind::Up | Kind::Down => Case::LanesOther,
        }
    }
}

/// Samples a run of probes of at most 8 bytes of decoding `D` and kind `K` (`OTHER`: a
/// watermark, each probe's own kind, out of line; [`LANES`]: several elements in the word), of
/// words `words` (each probe's read, at the same index).
#[inline(always)]
fn sample_run<const D: u8, const K: u8, L: Level>(
    run: &mut [WordProbe<'_, L>],
    words: &[u64],
    acc: &mut [f64],
) {
    for (p, &word) in run.iter_mut().zip(words) {
        let buf = word.to_ne_bytes();
        let at = p.at as usize;
        if D == LANES {
            sample_lanes::<K, _>(p, buf, acc);
            continue;
        }
        if (D == UNSIGNED || D == WORD) && K == DELTA {
            // A run of 64-bit variables has no shift to undo.
            let v = match D {
                WORD => word,
                _ => unsigned(buf, p.shift),
            };
            add_unsigned_delta_if_moved(&mut p.prev, v, || acc.get_mut(at));
            continue;
        }
        // A state goes to the node at every sample (call mode's samples alternate nodes);
        // `store_state` writes it only where the node holds another value.
        let v = decode_as::<D>(buf, p.shift);
        match K {
            DELTA => add_delta_if_moved(&mut p.prev, &mut p.last, v, || acc.get_mut(at)),
            RAW => store_state(acc, at, v),
            SAMPLES => {
                if let Some(a) = acc.get_mut(at..at + 4).and_then(|a| a.first_chunk_mut()) {
                    add_sample(a, v);
                }
            }
            _ => {
                if let Some(a) = acc.get_mut(at..) {
                    observe_out_of_line(&mut p.last, p.kind, a, v);
                }
            }
        }
    }
}

/// A sample of a probe of [`Case::lanes`], of kind `K`: its read `buf` (the elements, then
/// bytes of an earlier read, cleared here). `prev` holds the bytes of the read before and
/// `last` their sum (of a counter: the sum its deltas are measured from; of a watermark: its
/// own last value), so a read of the same bytes sums nothing: a counter's adds nothing, a
/// level's or state's sum is `last`.
#[inline(always)]
fn sample_lanes<const K: u8, H>(p: &mut Probe<H>, buf: [u8; 8], acc: &mut [f64]) {
    let w = unsigned(buf, p.shift);
    let at = p.at as usize;
    if K == OTHER {
        if let Some(a) = acc.get_mut(at..) {
            observe_out_of_line(&mut p.last, p.kind, a, lanes_sum(w, p.lane));
        }
        return;
    }
    if w != p.prev {
        p.prev = w;
        let v = lanes_sum(w, p.lane);
        if K == DELTA {
            if let Some(sum) = acc.get_mut(at) {
                add_delta(&mut p.last, sum, v);
            }
            return;
        }
        p.last = v;
    } else if K == DELTA {
        return;
    }
    let v = p.last;
    if K == RAW {
        store_state(acc, at, v);
    } else if let Some(a) = acc.get_mut(at..at + 4).and_then(|a| a.first_chunk_mut()) {
        add_sample(a, v);
    }
}

/// The sum of the elements of lane `lane` packed in `w` (native order, at most 8 bytes, the
/// bytes after them zero): integers summed as integers.
#[inline(always)]
fn lanes_sum(w: u64, lane: Lane) -> f64 {
    let b = w.to_ne_bytes();
    match lane {
        Lane::U8 => b.iter().map(|&x| u64::from(x)).sum::<u64>() as f64,
        Lane::I16 => b
            .as_chunks::<2>()
            .0
            .iter()
            .map(|&c| i64::from(i16::from_ne_bytes(c)))
            .sum::<i64>() as f64,
        Lane::I32 => b
            .as_chunks::<4>()
            .0
            .iter()
            .map(|&c| i64::from(i32::from_ne_bytes(c)))
            .sum::<i64>() as f64,
        Lane::U32 => b
            .as_chunks::<4>()
            .0
            .iter()
            .map(|&c| u64::from(u32::from_ne_bytes(c)))
            .sum::<u64>() as f64,
        // One element of 8 bytes: never of this case.
        Lane::I64 | Lane::U64 | Lane::F64 => Decode::of(lane).0.value(b, 0),
    }
}

/// A state's or generic variable's value `v` stored in its accumulators at `at` of a node's
/// `acc`: seen, and the last value.
#[inline(always)]
fn store_state(acc: &mut [f64], at: usize, v: f64) {
    // One comparison: `at + 2` cannot overflow (`at` is a u32).
    // Stored only if it differs from what the node holds: in call mode most samples find
    // the same value there, and a store is what the next read's lock inside MPI waits for
    // (a load is not; floor_trio without messages, Open MPI 5.0.11's five states: ~50 ns a
    // pair of calls less).
    if let Some([seen, last]) = acc.get_mut(at..at + 2)
        && (*seen != 1.0 || last.to_bits() != v.to_bits())
    {
        (*seen, *last) = (1.0, v);
    }
}

/// [`Decode::value`] of decoding `D`, known at compile time.
#[inline(always)]
fn decode_as<const D: u8>(buf: [u8; 8], shift: u8) -> f64 {
    match D {
        UNSIGNED | WORD => Decode::Unsigned.value(buf, shift),
        SIGNED => Decode::Signed.value(buf, shift),
        _ => Decode::Float.value(buf, shift),
    }
}

/// The unsigned value of width `64 - shift` bits in the 8 bytes `buf` ([`Decode::of`]).
#[inline(always)]
fn unsigned(buf: [u8; 8], shift: u8) -> u64 {
    // To bit 63 and back: the bytes after the value cleared.
    to_top(buf, shift) >> u32::from(shift)
}

/// The 8 bytes `buf` (as read, native order) as a `u64` with the most significant bit of the
/// variable's value (of width `64 - shift` bits, written at the start of `buf`) at bit 63.
#[inline(always)]
fn to_top(buf: [u8; 8], shift: u8) -> u64 {
    let raw = u64::from_ne_bytes(buf);
    if cfg!(target_endian = "little") {
        raw << u32::from(shift)
    } else {
        raw
    }
}

/// An unsigned counter's read `v`: the delta since `prev` added to `sum`, taken in integers
/// (a value below `prev` is a reset: counted from 0). The delta converts to `f64` as a signed
/// integer, one instruction where x86-64 takes seven for a `u64`.
#[inline(always)]
fn add_unsigned_delta(prev: &mut u64, sum: &mut f64, v: u64) {
    let d = if v >= *prev { v - *prev } else { v };
    *prev = v;
    *sum += match i64::try_from(d) {
        Ok(d) => d as f64,
        Err(_) => huge(d),
    };
}

/// [`add_unsigned_delta`] of a read that moved: a read equal to the previous one adds 0 and
/// leaves `prev` as it is, so all it costs is the compare (most variables do not move during
/// one MPI call). `sum` gives the accumulator, looked up only then.
#[inline(always)]
fn add_unsigned_delta_if_moved<'a>(
    prev: &mut u64,
    v: u64,
    sum: impl FnOnce() -> Option<&'a mut f64>,
) {
    if v != *prev
        && let Some(sum) = sum()
    {
        add_unsigned_delta(prev, sum, v);
    }
}

/// [`add_delta`] of a read whose bits differ from the previous read's, `prev_bits`: after
/// `add_delta` took a value, the same value again adds 0 (one it tracked: `last` is it) or is
/// ignored again (one it cannot track), so a read of the same bits is skipped. The first
/// `prev_bits` are those of `last`'s baseline, which the same rule covers.
#[inline(always)]
fn add_delta_if_moved<'a>(
    prev_bits: &mut u64,
    last: &mut f64,
    v: f64,
    sum: impl FnOnce() -> Option<&'a mut f64>,
) {
    let bits = v.to_bits();
    if bits != *prev_bits {
        *prev_bits = bits;
        if let Some(sum) = sum() {
            add_delta(last, sum, v);
        }
    }
}

/// A delta of 2⁶³ or more as an `f64` (never seen; out of line so that the common case keeps
/// its one-instruction conversion).
#[cold]
#[inline(never)]
fn huge(d: u64) -> f64 {
    d as f64
}

/// Samples the probes of several elements: their sums, read on the stack where they take at
/// most [`SMALL_BYTES`] (a communicator-bound variable with an element per rank of a small
/// communicator), else through the scratch buffers, out of line.
#[inline(always)]
fn sample_multi<L: Level>(ps: &mut [AnyProbe<'_, L>], acc: &mut [f64], scratch: &mut Scratch) {
    for p in ps {
        sample_one_multi(p, acc, scratch);
    }
}

/// The probes of several elements in a sample waiting for its attribution in block `k`
/// ([`sample_deferred`]): those with [`SeenBytes`] read into their `fresh[k]`, one after the
/// other (compared and attributed by [`State::settle`]), the others sampled now.
#[inline(always)]
fn read_multi_deferred<L: Level>(
    ps: &mut [AnyProbe<'_, L>],
    k: usize,
    acc: &mut [f64],
    scratch: &mut Scratch,
) {
    for p in ps {
        let MultiHandle { handle, seen } = &mut p.handle;
        let Some(seen) = seen.as_deref_mut() else {
            sample_one_multi(p, acc, scratch);
            continue;
        };
        let (Some(fresh), Some(ok)) = (seen.fresh.get_mut(k), seen.fresh_ok.get_mut(k)) else {
            continue;
        };
        *ok = handle.read(fresh).is_ok();
        if !*ok {
            read_failed(p);
        }
    }
}

/// [`State::settle`]'s part for the probes of several elements: those read into block `k`
/// ([`read_multi_deferred`]) compared with their read before and attributed to `acc`.
#[inline(always)]
fn settle_multi<L: Level>(ps: &mut [AnyProbe<'_, L>], k: usize, acc: &mut [f64]) {
    for p in ps {
        let lane = p.lane;
        let Some(seen) = p.handle.seen.as_deref_mut() else {
            continue;
        };
        if !seen.fresh_ok.get(k).is_some_and(|&ok| ok) {
            continue;
        }
        let read = seen_compare(seen, k, lane);
        attribute_multi(p, read, acc);
    }
}

/// One probe of several elements: read, then attributed to `acc`.
#[inline(always)]
fn sample_one_multi<L: Level>(p: &mut AnyProbe<'_, L>, acc: &mut [f64], scratch: &mut Scratch) {
    let n = p.count as usize;
    let MultiHandle { handle, seen } = &mut p.handle;
    let bytes = handle.bytes();
    let read = if let Some(seen) = seen.as_deref_mut() {
        seen_read(handle, p.lane, seen)
    } else if bytes <= SMALL_FEW {
        small_read::<SMALL_FEW, L>(handle, p.lane)
    } else if bytes <= SMALL_BYTES {
        small_read::<SMALL_BYTES, L>(handle, p.lane)
    } else {
        read_sum(handle, p.lane, n, scratch, None).map_or(Small::Failed, Small::Sum)
    };
    attribute_multi(p, read, acc);
}

/// A read of a probe of several elements attributed to `acc` (its sum, or the same bytes as
/// the read before, or a failure counted).
#[inline(always)]
fn attribute_multi<H>(p: &mut Probe<H>, read: Small, acc: &mut [f64]) {
    let v = match read {
        Small::Sum(v) => v,
        // The bytes of the read before: the same sum, whose bits `prev` holds (a counter's
        // last read, a state's last sum). Nothing to add to a counter; a state is stored
        // where the node does not hold it (`store_state`).
        Small::Same if p.kind == Kind::Delta => return,
        Small::Same if p.kind == Kind::Raw => {
            store_state(acc, p.at as usize, f64::from_bits(p.prev));
            return;
        }
        Small::Same => f64::from_bits(p.prev),
        // The error itself is not kept: only that the read failed.
        Small::Failed => {
            read_failed(p);
            return;
        }
    };
    match p.kind {
        Kind::Delta => {
            add_delta_if_moved(&mut p.prev, &mut p.last, v, || acc.get_mut(p.at as usize))
        }
        Kind::Raw => {
            p.prev = v.to_bits();
            store_state(acc, p.at as usize, v);
        }
        _ => {
            if let Some(a) = acc.get_mut(p.at as usize..) {
                observe_out_of_line(&mut p.last, p.kind, a, v);
            }
        }
    }
}

/// Bytes of the elements of a probe that [`sample_multi`] reads on the stack.
const SMALL_BYTES: usize = 64;
/// The smaller of the two stack buffers of [`sample_multi`] (a per-rank array of two ranks:
/// the whole buffer is summed, so its size is the work).
const SMALL_FEW: usize = 16;

/// What [`small_read`] gave.
enum Small {
    /// The read failed.
    Failed,
    /// The same bytes as the read before ([`Probe::seen`]): not summed.
    Same,
    /// The sum of the elements.
    Sum(f64),
}

/// The sum of the elements of lane `lane` (at most [`SMALL_BYTES`] bytes) of a handle, read
/// into the stack: what [`read_sum`] gives, without the scratch buffers or a call.
#[inline(always)]
fn small_read<const B: usize, L: Level>(h: &PvarHandle<'_, L>, lane: Lane) -> Small {
    let mut buf = [0u8; B];
    if h.read(&mut buf).is_err() {
        return Small::Failed;
    }
    Small::Sum(lane_sum(&buf, lane))
}

/// [`small_read`] of a probe with [`Slot::seen`]: read into `seen.fresh[0]`, [`Small::Same`] if
/// the bytes are those of the read before (most reads: compared whole, without a branch per
/// word), else the sum, the bytes kept.
#[inline(always)]
fn seen_read<L: Level>(h: &PvarHandle<'_, L>, lane: Lane, seen: &mut SeenBytes) -> Small {
    if h.read(&mut seen.fresh[0]).is_err() {
        return Small::Failed;
    }
    seen_compare(seen, 0, lane)
}

/// [`Small::Same`] if `seen.fresh[k]` holds the bytes of the read before, else their sum, the
/// bytes kept.
#[inline(always)]
fn seen_compare(seen: &mut SeenBytes, k: usize, lane: Lane) -> Small {
    let Some(fresh) = seen.fresh.get(k) else {
        return Small::Failed;
    };
    if seen.valid && same_bytes(&seen.bytes, fresh) {
        return Small::Same;
    }
    seen.bytes = *fresh;
    seen.valid = true;
    Small::Sum(lane_sum(&seen.bytes, lane))
}

/// Whether `a` and `b` hold the same bytes: word by word, inline (an array `==` calls `bcmp`,
/// about 25 instructions with the call where this takes about 12).
#[inline(always)]
fn same_bytes<const B: usize>(a: &[u8; B], b: &[u8; B]) -> bool {
    // No remainder left uncompared.
    const { assert!(B.is_multiple_of(8)) };
    let (a, _) = a.as_chunks::<8>();
    let (b, _) = b.as_chunks::<8>();
    // An indexed loop of a length known at compile time: unrolled inline (an iterator zip was
    // left as two calls in call mode's exit).
    let mut diff = 0u64;
    for i in 0..B / 8 {
        diff |= u64::from_ne_bytes(a[i]) ^ u64::from_ne_bytes(b[i]);
    }
    diff == 0
}

/// The sum of the elements of lane `lane` in `buf` (native order), as an `f64`: integers
/// summed as integers, converted once, as [`read_sum`] does. The whole buffer is summed, a
/// fixed count (no branch per element, vector code for the narrow lanes): it was zeroed
/// before the read, so past the elements MPI wrote it adds 0.
#[inline(always)]
fn lane_sum<const B: usize>(buf: &[u8; B], lane: Lane) -> f64 {
    macro_rules! sum {
        // `$acc` holds the sum of SMALL_BYTES / size_of::<$t>() of them (B is at most that)
        // whatever they are.
        ($t:ty, $acc:ty) => {{
            let mut sum = <$acc>::default();
            for c in buf.chunks_exact(std::mem::size_of::<$t>()) {
                sum += <$acc>::from(c.try_into().map(<$t>::from_ne_bytes).unwrap_or_default());
            }
            Wide::wide(sum)
        }};
    }
    match lane {
        Lane::I32 => sum!(i32, i64),
        Lane::U32 => sum!(u32, u64),
        Lane::I64 => sum!(i64, i128),
        Lane::U64 => sum!(u64, u128),
        Lane::F64 => sum!(f64, f64),
        Lane::U8 => sum!(u8, u64),
        Lane::I16 => sum!(i16, i64),
    }
}

#[cold]
#[inline(never)]
fn read_failed<H>(p: &mut Probe<H>) {
    p.failures = p.failures.saturating_add(1);
}

/// Attributes value `v` of a variable of kind `kind` whose previous value was `last` to its
/// accumulators `a` (the sampling loop's rules, for the probes of several elements and the
/// tests). The rules are `mpit_core`'s trackers' ([`DeltaTracker`],
/// [`WatermarkTracker`](mpit_core::WatermarkTracker)), kept on one `last` value; a test checks
/// them against the trackers.
fn observe(last: &mut f64, kind: Kind, a: &mut [f64], v: f64) {
    match kind {
        Kind::Delta => {
            if let Some(sum) = a.first_mut() {
                add_delta(last, sum, v)
            }
        }
        Kind::Up | Kind::Down => {
            if let Some(a) = a.first_chunk_mut() {
                add_watermark(last, kind, a, v)
            }
        }
        Kind::Samples => {
            if let Some(a) = a.first_chunk_mut() {
                add_sample(a, v)
            }
        }
        Kind::Raw => {
            if let Some([seen, last]) = a.first_chunk_mut() {
                (*seen, *last) = (1.0, v);
            }
        }
    }
}

/// [`observe`], out of line: watermarks and levels in the sampling loop.
#[inline(never)]
fn observe_out_of_line(last: &mut f64, kind: Kind, a: &mut [f64], v: f64) {
    observe(last, kind, a, v)
}

/// A counter's, timer's or aggregate's read: the delta since `prev` added to `sum`.
#[inline(always)]
fn add_delta(prev: &mut f64, sum: &mut f64, v: f64) {
    // Did not drop: `v >= prev` also rules out NaN, and `prev` is finite and non-negative, so
    // only +inf needs the second test.
    if v >= *prev && v < f64::INFINITY {
        *sum += v - *prev;
        *prev = v;
    } else if v.is_trackable() {
        add_delta_reset(prev, sum, v);
    }
    // Else a value that cannot be tracked (NaN, infinite, negative: MPICH 4.0.2's timers read
    // -1.8e9 until used) is ignored, inline: a run of them costs no call each.
}

/// [`add_delta`] of a value below the last one (a reset since: restarted at 0) or one that
/// cannot be tracked (ignored).
#[cold]
#[inline(never)]
fn add_delta_reset(prev: &mut f64, sum: &mut f64, v: f64) {
    if v.is_trackable() {
        *sum += if v >= *prev { v - *prev } else { v };
        *prev = v;
    }
}

/// A watermark's read: a move in its direction since `prev` is a change; the first value
/// (`prev` NaN) is the baseline, and a move against the direction a reset (the new baseline).
#[inline(always)]
fn add_watermark(prev: &mut f64, kind: Kind, [changes, amount, seen, last]: &mut [f64; 4], v: f64) {
    if v.is_trackable() {
        let moved = if kind == Kind::Down {
            *prev - v
        } else {
            v - *prev
        };
        if moved > 0.0 {
            *changes += 1.0;
            *amount += moved;
        }
        *prev = v;
    }
    // As `store_state`: no store where the node holds the value already.
    if *seen != 1.0 || last.to_bits() != v.to_bits() {
        (*seen, *last) = (1.0, v);
    }
}

/// A level's sample: count, minimum, maximum and sum.
#[inline(always)]
fn add_sample([count, min, max, sum]: &mut [f64; 4], v: f64) {
    // Comparisons, not f64::min/max (their NaN handling is a dozen instructions): a NaN read
    // leaves both as they are either way.
    *count += 1.0;
    if v < *min {
        *min = v;
    }
    if v > *max {
        *max = v;
    }
    // A zero (most levels: empty queues) leaves the sum as it is: no store (see
    // `store_state`). Adding -0.0 to a sum changes nothing either.
    if v != 0.0 {
        *sum += v;
    }
}

/// Ends regions back to a depth, for guards.
trait EndTo {
    fn end_to_depth(&self, depth: usize);
}

impl<L: Level> EndTo for Profiler<'_, L> {
    fn end_to_depth(&self, depth: usize) {
        match self.state.try_borrow_mut() {
            Ok(mut st) => self.end_to(&mut st, depth),
            Err(_) => {
                self.reentered.fetch_add(1, Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sampling loop walks the probes contiguously: a probe must not grow past the
    /// bytes the loop was measured with (what only some probes need goes in the [`Slot`]): 72
    /// for a one-element probe, 80 for another (its seen buffer's pointer: one list walked,
    /// not two, callgrind on mpich-ev's six 8-element counters −82 instructions a call).
    #[test]
    fn a_probe_stays_small() {
        assert!(
            std::mem::size_of::<AnyProbe<'static, crate::level::Multiple>>() <= 80,
            "{} bytes",
            std::mem::size_of::<AnyProbe<'static, crate::level::Multiple>>()
        );
        assert!(
            std::mem::size_of::<WordProbe<'static, crate::level::Multiple>>() <= 72,
            "{} bytes",
            std::mem::size_of::<WordProbe<'static, crate::level::Multiple>>()
        );
    }
    /// The sampling loop attributes `runs[c]..runs[c + 1]` as case `c` and skips the cases
    /// not in `present`: every probe must fall in the run of its own case, and a case must be
    /// present exactly when it has probes. Every (decoding, kind) has its case, and so has
    /// every kind of several elements in one word.
    #[test]
    fn case_runs_cover_each_case() {
        use proptest::prelude::*;
        let decodes = [
            Decode::Unsigned,
            Decode::Signed,
            Decode::Float,
            Decode::Word,
        ];
        let kinds = [Kind::Delta, Kind::Up, Kind::Down, Kind::Samples, Kind::Raw];
        let all: Vec<Case> = decodes
            .iter()
            .flat_map(|&d| kinds.iter().map(move |&k| Case::of(d, k)))
            .chain(kinds.iter().map(|&k| Case::lanes(k)))
            .collect();
        let n = all.len();
        proptest!(|(picks in proptest::collection::vec(0..n, 0..40))| {
            let mut cases: Vec<Case> = picks.iter().map(|&i| all[i]).collect();
            cases.sort();
            let (runs, present) = case_runs(&cases);
            prop_assert_eq!(runs[CASES] as usize, cases.len());
            for c in 0..CASES {
                let run = &cases[runs[c] as usize..runs[c + 1] as usize];
                prop_assert!(run.iter().all(|&k| k as usize == c));
                let has = cases.iter().any(|&k| k as usize == c);
                prop_assert_eq!(present & (1 << c) != 0, has);
                prop_assert_eq!(run.len(), cases.iter().filter(|&&k| k as usize == c).count());
            }
        });
    }

    /// A several-element read is skipped when `same_bytes` says its bytes are the previous
    /// read's: it must see a difference in any one byte of either buffer size, and none where
    /// there is none.
    #[test]
    fn same_bytes_sees_every_byte() {
        fn check<const B: usize>() {
            let a: [u8; B] = std::array::from_fn(|i| i as u8 ^ 0x5a);
            assert!(same_bytes(&a, &a.clone()));
            for i in 0..B {
                for bit in 0..8 {
                    let mut b = a;
                    b[i] ^= 1 << bit;
                    assert!(!same_bytes(&a, &b), "B={B}: byte {i} bit {bit} not seen");
                }
            }
        }
        check::<SMALL_FEW>();
        check::<SMALL_BYTES>();
    }

    use mpit_core::{Watermark, WatermarkTracker};
    use proptest::prelude::*;

    /// Reads as MPI may return them: counts that rise and drop (resets), and the values a
    /// double variable can hold that no tracker may count (NaN, infinities, negatives, -0.0).
    fn reads() -> impl Strategy<Value = Vec<f64>> {
        let read = prop_oneof![
            8 => (0u32..1000).prop_map(f64::from),
            2 => 0.0..1e9f64,
            1 => Just(f64::NAN),
            1 => Just(f64::INFINITY),
            1 => Just(f64::NEG_INFINITY),
            1 => Just(-0.0),
            1 => -1e6..0.0f64,
        ];
        proptest::collection::vec(read, 0..64)
    }

    proptest! {
        /// A small probe's elements read on the stack sum exactly: as integers for the integer
        /// lanes (converted to `f64` once, as `read_sum` does), in order for `double`; the
        /// zeroed bytes after the `n` elements MPI wrote add nothing.
        #[test]
        fn small_sums_are_exact(values in proptest::collection::vec(any::<i64>(), 0..=32)) {
            for lane in [
                Lane::I32, Lane::U32, Lane::I64, Lane::U64, Lane::F64, Lane::U8, Lane::I16,
            ] {
                small_sum_is_exact::<SMALL_FEW>(&values, lane)?;
                small_sum_is_exact::<SMALL_BYTES>(&values, lane)?;
            }
        }
    }

    /// [`small_sums_are_exact`] with a buffer of `B` bytes.
    fn small_sum_is_exact<const B: usize>(
        values: &[i64],
        lane: Lane,
    ) -> std::result::Result<(), TestCaseError> {
        let size = lane.size();
        let n = values.len().min(B / size);
        let mut buf = [0u8; B];
        let mut exact = 0i128;
        let mut float = 0.0f64;
        for (i, &v) in values.iter().take(n).enumerate() {
            let at = &mut buf[i * size..(i + 1) * size];
            // The element as the lane's type, written and added exactly.
            macro_rules! put {
                ($t:ty) => {{
                    at.copy_from_slice(&(v as $t).to_ne_bytes());
                    exact += i128::from(v as $t)
                }};
            }
            match lane {
                Lane::I32 => put!(i32),
                Lane::U32 => put!(u32),
                Lane::I64 => put!(i64),
                Lane::U64 => put!(u64),
                Lane::U8 => put!(u8),
                Lane::I16 => put!(i16),
                Lane::F64 => {
                    at.copy_from_slice(&(v as f64).to_ne_bytes());
                    float += v as f64
                }
            }
        }
        let want = if lane == Lane::F64 {
            float
        } else {
            exact as f64
        };
        prop_assert_eq!(
            lane_sum(&buf, lane),
            want,
            "{:?} of {} elements in {} bytes",
            lane,
            n,
            B
        );
        Ok(())
    }

    /// The 8 bytes the sampling loop reads for a variable whose value is `x`: MPI writes the
    /// variable's own bytes at the start of the buffer, zeroed before.
    fn written<const N: usize>(x: [u8; N]) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[..N].copy_from_slice(&x);
        b
    }

    proptest! {
        /// MPI-4.1 §16.3.7 (`MPI_T_pvar_read` writes the variable's datatype into the buffer):
        /// every lane's value decodes to itself, signed ones sign-extended, on this host's
        /// byte order.
        #[test]
        fn decoding_gives_the_value_of_every_lane(
            u8v in any::<u8>(), u32v in any::<u32>(), u64v in any::<u64>(),
            i16v in any::<i16>(), i32v in any::<i32>(), i64v in any::<i64>(),
            f64v in any::<f64>(),
        ) {
            let d = |lane| {
                let (how, shift) = Decode::of(lane);
                move |b: [u8; 8]| how.value(b, shift)
            };
            prop_assert_eq!(d(Lane::U8)(written(u8v.to_ne_bytes())), f64::from(u8v));
            prop_assert_eq!(d(Lane::U32)(written(u32v.to_ne_bytes())), f64::from(u32v));
            prop_assert_eq!(d(Lane::U64)(written(u64v.to_ne_bytes())), u64v as f64);
            prop_assert_eq!(d(Lane::I16)(written(i16v.to_ne_bytes())), f64::from(i16v));
            prop_assert_eq!(d(Lane::I32)(written(i32v.to_ne_bytes())), f64::from(i32v));
            prop_assert_eq!(d(Lane::I64)(written(i64v.to_ne_bytes())), i64v as f64);
            let f = d(Lane::F64)(written(f64v.to_ne_bytes()));
            prop_assert_eq!(f.to_bits(), f64v.to_bits());
        }

        /// MPI-4.1 §16.3.7: a counter, timer or aggregate only grows until it is reset (to 0);
        /// the sampling loop's sum of deltas is `DeltaTracker`'s total, for any baseline, also
        /// when it skips a read of the same bits as the previous one.
        #[test]
        fn deltas_follow_delta_tracker(base in 0u32..1000, vs in reads()) {
            let mut t = DeltaTracker::starting_at(f64::from(base));
            let (mut last, mut a) = (f64::from(base), Kind::Delta.zero().to_vec());
            // The sampling loop's way: a read of the previous read's bits skipped (each read
            // comes twice: the second is always skipped, and must lose nothing).
            let (mut bits, mut skip_last, mut skip_sum) = (f64::from(base).to_bits(), f64::from(base), 0.0);
            for v in vs.iter().flat_map(|&v| [v, v]) {
                t.observe(v);
                observe(&mut last, Kind::Delta, &mut a, v);
                add_delta_if_moved(&mut bits, &mut skip_last, v, || Some(&mut skip_sum));
            }
            prop_assert_eq!(Kind::Delta.metric(&a), Metric::Delta { sum: t.total() });
            prop_assert_eq!(skip_sum.to_bits(), t.total().to_bits());
        }

        /// The same rule for the one-element unsigned counters, whose deltas the sampling loop
        /// takes in integers: the same total as `DeltaTracker`'s over the values as `u64`
        /// (exactly while the total stays below 2⁵³), every lane's width decoded by `unsigned`.
        #[test]
        fn unsigned_deltas_follow_delta_tracker(
            base in 0u64..1 << 40,
            vs in proptest::collection::vec(
                prop_oneof![0u64..1 << 20, (1u64 << 40)..1 << 45, Just(0u64)],
                0..64,
            ),
        ) {
            let mut t = DeltaTracker::starting_at(base);
            let (mut prev, mut sum) = (base, 0.0);
            let (mut skip_prev, mut skip_sum) = (base, 0.0);
            for v in vs.iter().flat_map(|&v| [v, v]) {
                t.observe(v);
                let (_, shift) = Decode::of(Lane::U64);
                add_unsigned_delta(&mut prev, &mut sum, unsigned(written(v.to_ne_bytes()), shift));
                // The sampling loop's way: a read equal to the previous one skipped.
                add_unsigned_delta_if_moved(&mut skip_prev, v, || Some(&mut skip_sum));
            }
            prop_assert_eq!(sum, t.total() as f64);
            prop_assert_eq!(skip_sum, t.total() as f64);
            let (_, shift) = Decode::of(Lane::U32);
            prop_assert_eq!(unsigned(written((base as u32).to_ne_bytes()), shift), u64::from(base as u32));
            let (_, shift) = Decode::of(Lane::U8);
            prop_assert_eq!(unsigned(written([base as u8]), shift), u64::from(base as u8));
        }

        /// A variable of several integer elements in at most 8 bytes, read as one word
        /// ([`Case::lanes`]: a per-peer array on 2 ranks), gives the metric of its elements'
        /// sum as `observe` takes it (the several-element loop's rule, spec 003 §0.3-0.5), for
        /// every kind and lane, also when reads repeat (a read of the same bytes is summed from
        /// the one before) and with leftover bytes after the elements (cleared by the shift).
        #[test]
        fn lanes_follow_their_sum(
            lane in prop_oneof![Just(Lane::U8), Just(Lane::I16), Just(Lane::I32), Just(Lane::U32)],
            kind in prop_oneof![
                Just(Kind::Delta), Just(Kind::Up), Just(Kind::Down), Just(Kind::Samples),
                Just(Kind::Raw),
            ],
            count in 2usize..=8,
            base in any::<u64>(),
            reads in proptest::collection::vec((any::<u64>(), 0u8..3), 0..40),
        ) {
            let count = count.min(8 / lane.size()).max(2);
            let bytes = count * lane.size();
            let shift = (64 - 8 * bytes) as u8;
            // The elements' own bytes of a word, and their sum element by element.
            let mask = |w: u64| unsigned(w.to_ne_bytes(), shift);
            let sum = |w: u64| -> f64 {
                let b = w.to_ne_bytes();
                let e = |i: usize| -> i128 {
                    let c = &b[i * lane.size()..(i + 1) * lane.size()];
                    match lane {
                        Lane::U8 => i128::from(c[0]),
                        Lane::I16 => i128::from(i16::from_ne_bytes([c[0], c[1]])),
                        Lane::I32 => i128::from(i32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                        _ => i128::from(u32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
                    }
                };
                (0..count).map(e).sum::<i128>() as f64
            };
            let watermark = matches!(kind, Kind::Up | Kind::Down);
            let w0 = mask(base);
            // As `allocate` makes it.
            let first = if watermark { f64::NAN } else { sum(w0) };
            let mut p = Probe {
                handle: (), last: first, prev: w0, column: 0, at: 0, count: count as u32,
                failures: 0, lane, kind, case: Case::lanes(kind), shift,
            };
            let (mut acc, mut want) = (kind.zero().to_vec(), kind.zero().to_vec());
            let mut last = first;
            let mut prev = w0;
            for &(w, again) in &reads {
                // 0: a new read; 1: the read before again; 2: the same elements, other bytes
                // after them (a narrower read leaves the previous probe's bytes there).
                let w = match again { 0 => w, 1 => prev, _ => prev | (w << (8 * bytes % 64)) };
                prev = w;
                match kind {
                    Kind::Delta => sample_lanes::<DELTA, ()>(&mut p, w.to_ne_bytes(), &mut acc),
                    Kind::Samples => sample_lanes::<SAMPLES, ()>(&mut p, w.to_ne_bytes(), &mut acc),
                    Kind::Raw => sample_lanes::<RAW, ()>(&mut p, w.to_ne_bytes(), &mut acc),
                    _ => sample_lanes::<OTHER, ()>(&mut p, w.to_ne_bytes(), &mut acc),
                }
                observe(&mut last, kind, &mut want, sum(mask(w)));
            }
            let bits = |a: &[f64]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&acc), bits(&want), "{:?} {:?} × {}", kind, lane, count);
        }

        /// MPI-4.1 §16.3.7: a high (low) watermark only moves up (down) until it is reset; the
        /// changes and their amount are `WatermarkTracker`'s, the first value the baseline.
        #[test]
        fn watermarks_follow_watermark_tracker(low in any::<bool>(), vs in reads()) {
            let (kind, wm) = if low {
                (Kind::Down, Watermark::Low)
            } else {
                (Kind::Up, Watermark::High)
            };
            let mut t = WatermarkTracker::new(wm);
            let (mut last, mut a) = (f64::NAN, kind.zero().to_vec());
            for &v in &vs {
                t.observe(v);
                observe(&mut last, kind, &mut a, v);
            }
            let m = kind.metric(&a);
            let Metric::Watermark { changes, amount, last: seen } = m else {
                panic!("not a watermark metric: {m:?}");
            };
            prop_assert_eq!(changes, t.changes());
            prop_assert_eq!(amount, t.cumulative_change());
            prop_assert_eq!(seen.map(f64::to_bits), vs.last().map(|v| v.to_bits()));
        }
    }
}
