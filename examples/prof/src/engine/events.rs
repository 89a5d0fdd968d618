//! MPI-4 events (MPI-4.1 §16.3.8): every event type registered with a counting closure per
//! callback safety level, its instances counted per region.

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU64, AtomicUsize};

use mpit_safe::level::Level;
use mpit_safe::raw;
use mpit_safe::{Bind, CbSafety, Error, NoObject, Registration, Result};

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

impl<'s, L: Level> Profiler<'s, L> {
    pub(super) fn register_events(&mut self) -> Result<()> {
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
}
