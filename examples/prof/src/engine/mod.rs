//! The profiling engine: one performance experiment session (MPI-4.1 §16.3.7) sampled around
//! program regions and MPI calls, after the design of Caliper's MPIT service (S. Ramesh,
//! "Enabling introspection of MPI libraries through the MPI_T interface", Caliper's
//! documentation; cited below as Caliper §0.x): every performance variable's change attributed
//! to where it happened, each variable summarised by the derived metric of its class
//! (`mpit_core`'s trackers).
//!
//! - **Handles as variables and objects appear** (Caliper's MPIT service, "PVAR handle allocation", `handles.rs`):
//!   [`Profiler::new`] allocates a handle for every variable bound to no object and starts the
//!   non-continuous ones; [`Profiler::refresh`] picks up variables added since (MPICH registers
//!   them in `MPI_Init`); [`Profiler::object_created`] allocates handles for the variables bound
//!   to a new communicator, window, file, ... and [`Profiler::object_freed`] frees them before
//!   the object goes.
//! - **Regions** (`regions.rs`) are nested and named, entered and left with a guard
//!   ([`Profiler::region`]) or by name ([`Profiler::begin`] / [`Profiler::end`], for the C API
//!   of the preload library).
//! - **MPI calls** (`calls.rs`) are counted and timed per region with [`Profiler::call_enter`] /
//!   [`Profiler::call_exit`]; each function is a child node of the region it was called in.
//! - **Sampling** ([`Mode`]; `sampling.rs`, `probe.rs`, `words.rs`, `multi.rs`): in
//!   [`Mode::Region`] every handle is read at region boundaries only, in [`Mode::Call`] also at
//!   every call's entry and exit. The change seen at a sample is attributed to the node that
//!   was innermost since the previous sample (exclusive metrics; a region's inclusive figure is
//!   the sum over its subtree). A whole call handed over ([`Profiler::try_sampled_call`]) reads
//!   its samples at once and attributes them where the program waits anyway (before a receive,
//!   after a send); each variable's samples are attributed in the order they were read.
//! - **Derived metrics** per class (Caliper's MPIT service, "PVAR classes" to "Querying and storing PVARs", [`DerivedMetric`]; `rules.rs`): deltas for
//!   counters, aggregates and timers ([`DeltaTracker`]: a drop is a reset), change count and
//!   amount for watermarks ([`WatermarkTracker`](mpit_safe::WatermarkTracker)), count/min/max/sum
//!   of the samples for levels, sizes and percentages, the last value for states and generic
//!   variables. A variable of several elements contributes the sum of its elements; its
//!   per-element totals over the run are in [`Report::elements`] (one row of a communication
//!   matrix for per-peer variables).
//! - **Events** (with [`Config::events`], where the MPI has the event API; `events.rs`): every
//!   event type is registered and its instances are counted per region.
//! - **The end** ([`Profiler::finish`], [`Profiler::stop`]; `report.rs`): the [`Report`].
//!
//! The hot path (a call's entry and exit, a region's begin and end) takes no lock and, once a
//! region or a (region, function) pair has been seen, allocates nothing: the state is in a
//! `RefCell` and region mode's counts of the innermost region's calls in `Cell`s beside it
//! (the profiler is `!Sync`; use one per thread), times come from the CPU's time stamp
//! counter where it is invariant (`constant_tsc` and `nonstop_tsc`), else from the monotonic
//! clock (vDSO, no system call; `clock.rs`). Below the safe API the engine uses
//! `mpit_safe::raw` alone (handles read into its own buffers, the time stamp counter): no
//! `unsafe` here.

#![forbid(unsafe_code)]

mod calls;
mod clock;
mod config;
mod current;
mod events;
mod handles;
mod multi;
mod probe;
mod regions;
mod report;
mod rules;
mod sampling;
mod words;

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use mpit_safe::level::{Level, Single};
use mpit_safe::{Bind, RawObject, Result, Session};
#[cfg(doc)]
use mpit_safe::{DeltaTracker, DerivedMetric};

pub use self::calls::{CallStart, FastCall, LONG_CALL_NS, TIME_FIRST, TIME_ONE_IN, TimedCall};
pub use self::config::{Config, Filter, Mode, NameFilter};
pub use self::regions::RegionGuard;
pub use self::report::{Column, Elements, Metric, NodeKind, NodeReport, Report, Skipped};

use self::calls::{FnStat, Hot, TIMING_DEPTH};
use self::clock::Clock;
pub(crate) use self::clock::invariant_tsc;
pub use self::current::Current;
use self::events::{EventCounts, Registrations};
pub use self::events::{TRACED_ELEMENTS, TraceEvents, TracedEvent, TracedKind};
use self::handles::Bound;
use self::probe::{AnyProbe, Kind, Scratch, Slot, WordProbe};
use self::regions::{Frame, NO_BASE, Node};
#[cfg(debug_assertions)]
use self::sampling::REREAD_TEST;
use self::sampling::{CASES, PENDING};
// Named in the documentation.
#[cfg(doc)]
use self::{calls::HotSlot, sampling::Case, sampling::sample_body, sampling::sample_deferred};

/// No node (the root's parent, a function's node before its first call), no column.
const NONE: u32 = u32::MAX;

/// What the entry points change, behind the profiler's `RefCell`: the probes and their plan,
/// the call tree, the calls' counts and times, what the report will say.
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
    /// Failed reads of retired handles, grouped by variable and reason.
    failed: Vec<handles::FailedReads>,
    mismatches: u64,
}

/// The profiling engine: one session's handles on every (selected) performance variable,
/// regions, per-function calls and times. See the [crate documentation](crate).
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
    /// The event instances kept for a trace ([`Config::trace_events`]).
    trace_events: Option<Arc<TraceEvents>>,
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
        let clock = Clock::new(config.long_call_ns);
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
            failed: Vec::new(),
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
            trace_events: None,
            event_types: Vec::new(),
            registrations: Default::default(),
            reentered: AtomicU64::new(0),
        };
        p.refresh()?;
        if config.events {
            p.register_events(config.trace_events)?;
        }
        Ok(p)
    }

    /// The sampling mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The event instances kept for a trace, where [`Config::trace_events`] asked for them
    /// and the MPI has event types.
    pub fn trace_events(&self) -> Option<Arc<TraceEvents>> {
        self.trace_events.clone()
    }

    /// The function names calls are reported against.
    pub fn functions(&self) -> &[&'static str] {
        &self.functions
    }

    fn note(&self, s: String) {
        if let Ok(mut st) = self.state.try_borrow_mut() {
            st.notes.push(s);
        }
    }
}
