//! What a profiler measured ([`Report`]): the call tree with each node's exclusive metrics,
//! per-element totals, what was skipped, and the end of a run ([`Profiler::finish`],
//! [`Profiler::stop`]).

#![forbid(unsafe_code)]

use std::sync::atomic::Ordering::Relaxed;

use mpit_safe::level::Level;
use mpit_safe::{DerivedMetric, Error, PvarInfo, Result};

use super::events::EVENT_NODES;
use super::regions::NO_BASE;
#[cfg(debug_assertions)]
use super::sampling::REREAD_TEST;
use super::sampling::{CASES, sample};
use super::{Mode, NONE, Profiler};
// Named in the documentation.
#[cfg(doc)]
use super::{Config, LONG_CALL_NS, TIME_FIRST, TIME_ONE_IN};

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

impl<'s, L: Level> Profiler<'s, L> {
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
        notes.extend(std::mem::take(&mut st.failed).iter().map(|f| f.note()));
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
}
