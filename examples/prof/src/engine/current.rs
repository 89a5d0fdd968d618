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
    /// Reads the current value of every one-element handle of at most 8 bytes into `out`, in
    /// a stable order while the set of handles does not change; returns `false` when the
    /// engine is in use (a callback re-entering) and nothing was read (`out` then empty).
    /// `out`'s entries are updated in place: a read of the same handles as the last one into
    /// the same `out` allocates nothing (call mode reads at every call's two ends).
    pub fn read_current(&self, out: &mut Vec<Current>) -> bool {
        let Ok(st) = self.state.try_borrow() else {
            out.clear();
            return false;
        };
        let mut n = 0;
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
            // Borrowed where the name is UTF-8, as MPI's names are (Display's text).
            let name = column.info.name.to_string_lossy();
            let (name, label) = (&*name, &*slot.label);
            let current = Current {
                name: String::new(),
                class: column.info.class,
                accumulated: matches!(p.kind, Kind::Delta),
                value,
            };
            match out.get_mut(n) {
                Some(c) if named(&c.name, name, label) => {
                    (c.class, c.accumulated, c.value) =
                        (current.class, current.accumulated, current.value);
                }
                _ => {
                    let name = if label.is_empty() {
                        name.to_string()
                    } else {
                        format!("{name} @ {label}")
                    };
                    let c = Current { name, ..current };
                    if n < out.len() {
                        out[n] = c;
                    } else {
                        out.push(c);
                    }
                }
            }
            n += 1;
        }
        out.truncate(n);
        true
    }
}

/// Whether `s` is `name`, or `name @ label` for a variable bound to an object.
fn named(s: &str, name: &str, label: &str) -> bool {
    if label.is_empty() {
        return s == name;
    }
    s.strip_prefix(name)
        .and_then(|r| r.strip_prefix(" @ "))
        .is_some_and(|r| r == label)
}

#[cfg(test)]
mod tests {
    use super::named;

    #[test]
    fn names_compare_without_being_built() {
        assert!(named("a", "a", ""));
        assert!(!named("a @ x", "a", ""));
        assert!(named("a @ x", "a", "x"));
        assert!(!named("a @ y", "a", "x"));
        assert!(!named("a", "a", "x"));
        assert!(!named("ab @ x", "a", "x"));
    }
}
