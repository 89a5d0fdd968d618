//! The current values of the profiled variables, read for a trace outside the sampling plan
//! ([`Profiler::read_current`]): each one-element handle of at most 8 bytes, decoded as the
//! sampling loop decodes it. Handles of several elements (per-peer matrices) are left out: a
//! curve per element would be a trace of its own.

#![forbid(unsafe_code)]

use mpit_safe::level::Level;

use super::Profiler;
use super::probe::{Decode, Kind};

/// One variable's value at a read.
#[derive(Clone, Debug, PartialEq)]
pub struct Current {
    /// The variable's name, with ` @ <object>` for a variable bound to an object.
    pub name: String,
    /// Its class (a name is unique only with its class, MPI-4.1 §16.3.7).
    pub class: mpit_safe::PvarClass,
    /// Whether the value is a total since the handle started (counters, timers, aggregates)
    /// rather than a level at that moment.
    pub accumulated: bool,
    /// The value.
    pub value: f64,
}

impl<L: Level> Profiler<'_, L> {
    /// Reads the current value of every one-element handle of at most 8 bytes into `out`
    /// (cleared first), in a stable order while the set of handles does not change; returns
    /// `false` when the engine is in use (a callback re-entering) and nothing was read.
    /// Nothing is attributed: the profile is not changed by it.
    pub fn read_current(&self, out: &mut Vec<Current>) -> bool {
        out.clear();
        let Ok(st) = self.state.try_borrow() else {
            return false;
        };
        for (p, slot) in st.words.iter().zip(&st.word_slots) {
            if p.count != 1 {
                continue;
            }
            let mut w = 0u64;
            if !p.handle.read_ok(&mut w) {
                continue;
            }
            let (decode, shift) = Decode::of(p.lane);
            let value = decode.value(w.to_ne_bytes(), shift);
            let Some(column) = st.columns.get(p.column as usize) else {
                continue;
            };
            let name = if slot.label.is_empty() {
                column.info.name.to_string()
            } else {
                format!("{} @ {}", column.info.name, slot.label)
            };
            out.push(Current {
                name,
                class: column.info.class,
                accumulated: matches!(p.kind, Kind::Delta),
                value,
            });
        }
        true
    }
}
