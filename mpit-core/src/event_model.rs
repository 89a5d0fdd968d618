//! An executable model of event delivery (MPI-4.1 §16.3.8.4–§16.3.8.5), the oracle that
//! property tests hold an implementation (or the test provider) to.
//!
//! The rules it encodes, in the standard's words where it has them:
//! - "the implementation will select from all registered callbacks the callback with the lowest
//!   safety level valid in the context in which the callback is invoked"; if "the required
//!   callback safety level exceeds the highest level for which a callback function is
//!   registered", the event instance is dropped;
//! - registering a callback for a level overwrites the previous one; a NULL function removes it;
//! - the dropped handler's count covers invocations "not executed since the registration of the
//!   dropped-callback handler or the last invocation of a registered dropped-callback handler";
//!   with no handler, "no data loss is recorded"; this model (and the project's provider) report
//!   a source's pending drops to the handler before the next event of that source is delivered;
//! - after `MPI_T_event_handle_free`, no event is delivered and the free callback runs once;
//! - a registration bound to an object only sees events of that object.
//!
//! ```
//! use mpit_core::CbSafety;
//! use mpit_core::event_model::{EventModel, Outcome};
//!
//! let mut m = EventModel::default();
//! let r = m.alloc(0, None);
//! m.register(r, CbSafety::MpiRestricted, true).unwrap();
//! m.set_dropped_handler(r, true).unwrap();
//! // A signal-handler context needs ASYNC_SIGNAL_SAFE: nothing sufficient, dropped.
//! assert_eq!(m.raise(0, 0, CbSafety::AsyncSignalSafe, None), vec![Outcome::Dropped { registration: r }]);
//! // The next event of source 0 is delivered after the drop is reported.
//! assert_eq!(
//!     m.raise(0, 0, CbSafety::None, None),
//!     vec![
//!         Outcome::DroppedReport { registration: r, source: 0, count: 1 },
//!         Outcome::Delivered { registration: r, level: CbSafety::MpiRestricted },
//!     ]
//! );
//! ```

use std::collections::BTreeMap;

use crate::event::CbSafety;

/// A registration's identity in the model.
pub type RegId = usize;

/// What raising an event does for one registration, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The dropped handler is called with the drops pending for `source`.
    DroppedReport {
        /// The registration.
        registration: RegId,
        /// The source whose events were dropped.
        source: usize,
        /// How many.
        count: u64,
    },
    /// The callback registered at `level` is invoked.
    Delivered {
        /// The registration.
        registration: RegId,
        /// The level of the callback chosen.
        level: CbSafety,
    },
    /// No registered callback was sufficient: the instance is dropped.
    Dropped {
        /// The registration.
        registration: RegId,
    },
}

/// Misuse the model refuses, as MPI does with `MPI_T_ERR_INVALID_HANDLE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelError {
    /// The registration was never allocated or has been freed.
    InvalidHandle,
}

#[derive(Debug, Clone, Default)]
struct Reg {
    event: usize,
    object: Option<u64>,
    levels: [bool; 4],
    handler: bool,
    pending: BTreeMap<usize, u64>,
    freed: bool,
    free_callbacks: u32,
}

/// The model: registrations and their state.
#[derive(Debug, Clone, Default)]
pub struct EventModel {
    regs: Vec<Reg>,
}

fn slot(l: CbSafety) -> usize {
    CbSafety::ALL.iter().position(|&x| x == l).unwrap_or(3)
}

impl EventModel {
    /// `MPI_T_event_handle_alloc` for event type `event`, bound to `object` (`None`: no object).
    pub fn alloc(&mut self, event: usize, object: Option<u64>) -> RegId {
        self.regs.push(Reg {
            event,
            object,
            ..Reg::default()
        });
        self.regs.len() - 1
    }

    fn live(&mut self, r: RegId) -> Result<&mut Reg, ModelError> {
        match self.regs.get_mut(r) {
            Some(reg) if !reg.freed => Ok(reg),
            _ => Err(ModelError::InvalidHandle),
        }
    }

    /// `MPI_T_event_register_callback` at `level`; `present == false` is a NULL function.
    pub fn register(&mut self, r: RegId, level: CbSafety, present: bool) -> Result<(), ModelError> {
        self.live(r)?.levels[slot(level)] = present;
        Ok(())
    }

    /// `MPI_T_event_set_dropped_handler`; setting one starts counting from zero.
    pub fn set_dropped_handler(&mut self, r: RegId, present: bool) -> Result<(), ModelError> {
        let reg = self.live(r)?;
        reg.handler = present;
        reg.pending.clear();
        Ok(())
    }

    /// `MPI_T_event_handle_free`: no event is delivered from now on; the free callback runs.
    pub fn free(&mut self, r: RegId) -> Result<(), ModelError> {
        let reg = self.live(r)?;
        reg.freed = true;
        reg.free_callbacks += 1;
        Ok(())
    }

    /// How many times the free callback of `r` ran (0 or 1).
    pub fn free_callbacks(&self, r: RegId) -> u32 {
        self.regs.get(r).map_or(0, |reg| reg.free_callbacks)
    }

    /// The lowest registered level sufficient for `context`, if any.
    pub fn selected_level(&self, r: RegId, context: CbSafety) -> Option<CbSafety> {
        let reg = self.regs.get(r)?;
        CbSafety::ALL
            .iter()
            .copied()
            .find(|&l| reg.levels[slot(l)] && l.sufficient_for(context))
    }

    /// Raises event type `event` from `source` in a context requiring `context`, for
    /// `object` (`None`: the event concerns no particular object). Returns, per live
    /// registration of that type (in allocation order), what happens.
    pub fn raise(
        &mut self,
        event: usize,
        source: usize,
        context: CbSafety,
        object: Option<u64>,
    ) -> Vec<Outcome> {
        let mut out = Vec::new();
        for r in 0..self.regs.len() {
            let reg = &self.regs[r];
            if reg.freed || reg.event != event || (reg.object.is_some() && reg.object != object) {
                continue;
            }
            match self.selected_level(r, context) {
                Some(level) => {
                    let reg = &mut self.regs[r];
                    if let Some(count) = reg.pending.remove(&source) {
                        out.push(Outcome::DroppedReport {
                            registration: r,
                            source,
                            count,
                        });
                    }
                    out.push(Outcome::Delivered {
                        registration: r,
                        level,
                    });
                }
                None => {
                    let reg = &mut self.regs[r];
                    if reg.handler {
                        let c = reg.pending.entry(source).or_insert(0);
                        *c = c.saturating_add(1);
                    }
                    out.push(Outcome::Dropped { registration: r });
                }
            }
        }
        out
    }

    /// Drops recorded for `r` and `source` that have not been reported yet.
    pub fn pending_drops(&self, r: RegId, source: usize) -> u64 {
        self.regs
            .get(r)
            .and_then(|reg| reg.pending.get(&source).copied())
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_sufficient_level_is_chosen() {
        let mut m = EventModel::default();
        let r = m.alloc(3, None);
        m.register(r, CbSafety::AsyncSignalSafe, true).unwrap();
        m.register(r, CbSafety::MpiRestricted, true).unwrap();
        assert_eq!(
            m.selected_level(r, CbSafety::None),
            Some(CbSafety::MpiRestricted)
        );
        assert_eq!(
            m.selected_level(r, CbSafety::ThreadSafe),
            Some(CbSafety::AsyncSignalSafe)
        );
        m.register(r, CbSafety::AsyncSignalSafe, false).unwrap();
        assert_eq!(m.selected_level(r, CbSafety::ThreadSafe), None);
    }

    #[test]
    fn freed_registrations_see_nothing_and_free_once() {
        let mut m = EventModel::default();
        let r = m.alloc(0, None);
        m.register(r, CbSafety::None, true).unwrap();
        m.free(r).unwrap();
        assert!(m.raise(0, 0, CbSafety::None, None).is_empty());
        assert_eq!(m.free(r), Err(ModelError::InvalidHandle));
        assert_eq!(m.free_callbacks(r), 1);
    }

    #[test]
    fn bound_registrations_see_their_object_only() {
        let mut m = EventModel::default();
        let r = m.alloc(0, Some(7));
        m.register(r, CbSafety::None, true).unwrap();
        assert!(m.raise(0, 0, CbSafety::None, Some(8)).is_empty());
        assert_eq!(m.raise(0, 0, CbSafety::None, Some(7)).len(), 1);
    }
}
