//! MPI-4 events (MPI-4.1 §16.3.8): every event type registered with a counting closure per
//! callback safety level, its instances counted per region; for a trace
//! ([`Config::trace_events`](super::Config::trace_events)) each instance also kept, with its
//! source, timestamp and data, in a bounded queue ([`TraceEvents`]) that the trace drains, and
//! each dropped-event report with it.

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU64, AtomicUsize};

use crossbeam::queue::ArrayQueue;
use mpit_safe::level::Level;
use mpit_safe::raw;
use mpit_safe::{Bind, CbSafety, Error, EventInstance, NoObject, Registration, Result, Value};

use super::Profiler;

/// Counts of event instances per (region node, event type), shared with the callbacks.
pub(super) struct EventCounts {
    current: AtomicUsize,
    pub(super) types: usize,
    pub(super) counts: Box<[AtomicU64]>,
    pub(super) overflow: AtomicU64,
}

/// Region nodes whose events are counted; events in later nodes go to `overflow`.
pub(super) const EVENT_NODES: usize = 4096;

impl EventCounts {
    #[inline(always)]
    pub(super) fn set_current(&self, node: u32) {
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

pub(super) type Registrations<'m, L> = Vec<Registration<'m, L>>;

/// The most elements of an event instance a trace keeps (MPICH's have two or three).
pub const TRACED_ELEMENTS: usize = 8;

/// What a trace learns of one event instance, or of one report of dropped instances.
#[derive(Clone, Copy, Debug)]
pub enum TracedKind {
    /// An instance with its first `n` elements read (the rest beyond
    /// [`TRACED_ELEMENTS`] left out).
    Data {
        /// Elements read.
        n: u8,
        /// Their values.
        values: [Value; TRACED_ELEMENTS],
    },
    /// An instance whose data could not be read here (a quirk guard refused, or the read
    /// failed): its time only.
    Unreadable,
    /// `count` instances the MPI reports dropped (MPI-4.1 §16.3.8.5).
    Dropped(u64),
}

/// One entry of the trace's queue.
#[derive(Clone, Copy, Debug)]
pub struct TracedEvent {
    /// The event type (its index in [`TraceEvents::types`]).
    pub event: u32,
    /// The source that raised it (`None`: MPI did not say).
    pub source: Option<u32>,
    /// Its timestamp in its source's ticks (`None`: MPI did not say; a dropped report has
    /// none).
    pub timestamp: Option<u64>,
    /// What it holds.
    pub kind: TracedKind,
}

/// The event instances kept for a trace: a bounded queue that the callbacks fill without a
/// lock or an allocation (valid at `MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE`) and the trace drains,
/// with the types' names and what could not be queued.
pub struct TraceEvents {
    /// The queue.
    pub queue: ArrayQueue<TracedEvent>,
    /// Each registered event type: its name and its elements' datatypes.
    pub types: Vec<(String, Vec<mpit_safe::Datatype>)>,
    /// Instances the full queue could not take.
    pub lost: AtomicU64,
}

impl TraceEvents {
    fn push(&self, e: TracedEvent) {
        if self.queue.push(e).is_err() {
            self.lost.fetch_add(1, Relaxed);
        }
    }

    fn instance(&self, event: usize, i: &EventInstance<'_>) {
        let kind = match i.data_readable() {
            Ok(()) => {
                let mut values = [Value::Int(0); TRACED_ELEMENTS];
                let n = i.elements().len().min(TRACED_ELEMENTS);
                let mut ok = true;
                for (k, v) in values.iter_mut().enumerate().take(n) {
                    match i.read_value(k) {
                        Ok(x) => *v = x,
                        Err(_) => ok = false,
                    }
                }
                if ok {
                    TracedKind::Data { n: n as u8, values }
                } else {
                    TracedKind::Unreadable
                }
            }
            Err(_) => TracedKind::Unreadable,
        };
        self.push(TracedEvent {
            event: event as u32,
            source: i.source().ok().map(|s| s as u32),
            timestamp: i.timestamp().ok(),
            kind,
        });
    }
}

impl<'s, L: Level> Profiler<'s, L> {
    pub(super) fn register_events(&mut self, trace_capacity: usize) -> Result<()> {
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
        let trace = (trace_capacity > 0).then(|| {
            Arc::new(TraceEvents {
                queue: ArrayQueue::new(trace_capacity),
                types: types
                    .iter()
                    .map(|i| {
                        let e = i.elements.iter().map(|e| e.datatype).collect();
                        (i.name.to_string(), e)
                    })
                    .collect(),
                lost: AtomicU64::new(0),
            })
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
                b = match &trace {
                    Some(q) => {
                        let q = Arc::clone(q);
                        b.on_event(level, move |i| {
                            c.count(t);
                            q.instance(t, i);
                        })
                    }
                    None => b.on_event(level, move |_| c.count(t)),
                };
            }
            if let Some(q) = &trace {
                let q = Arc::clone(q);
                b = b.on_dropped(move |d| {
                    q.push(TracedEvent {
                        event: t as u32,
                        source: Some(d.source as u32),
                        timestamp: None,
                        kind: TracedKind::Dropped(d.count),
                    })
                });
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
        self.trace_events = trace;
        Ok(())
    }
}
