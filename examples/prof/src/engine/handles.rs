//! Handles as variables and objects appear (Caliper's MPIT service, "PVAR handle allocation"): a probe per (variable, object)
//! allocated, started and read for its baseline, and freed with a last sample when its object
//! goes.

#![forbid(unsafe_code)]

use std::sync::atomic::Ordering::Relaxed;

use mpit_safe::level::Level;
use mpit_safe::raw::{self, PvarHandle, WordPvarHandle};
use mpit_safe::{Bind, DeltaTracker, DerivedMetric, MetricValue, PvarInfo, RawObject, Result};

use super::multi::SMALL_BYTES;
use super::probe::{Decode, Held, Kind, Lane, MultiHandle, Probe, SeenBytes, Slot, read_sum};
use super::report::{Column, Elements, Skipped};
use super::sampling::{Case, PENDING};
use super::words::{lanes_sum, unsigned};
use super::{NONE, Profiler, State};

/// A variable bound to an object kind, waiting for objects of that kind.
pub(super) struct Bound {
    index: usize,
    column: usize,
}

/// The name of a column's variable.
fn st_name(info: &PvarInfo) -> String {
    info.name.to_string()
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

impl<'s, L: Level> Profiler<'s, L> {
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
    /// Caliper's MPIT service, "PVAR handle allocation": handles for bound variables are allocated as objects appear.
    pub fn object_created(&self, obj: RawObject, label: &str) -> Result<usize> {
        let Ok(mut st) = self.state.try_borrow_mut() else {
            self.reentered.fetch_add(1, Relaxed);
            return Ok(0);
        };
        if st.stopped {
            return Ok(0);
        }
        // Variables may appear with the components objects bring (Caliper's MPIT service, "PVAR handle allocation": it looks
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
}

impl<'s, L: Level> State<'s, L> {
    /// Handles held: one-element and other.
    pub(super) fn handles(&self) -> usize {
        self.word_slots.len() + self.slots.len()
    }

    /// A handle leaves: its per-element totals are kept, failures noted, the handle freed.
    pub(super) fn retire<H: Held>(&mut self, probe: Probe<H>, slot: Slot) {
        let column = probe.column as usize;
        let Some(col) = self.columns.get(column) else {
            return;
        };
        if probe.failures > 0 {
            // The sampling loop keeps only that a read failed; one more read, off the hot
            // path, says why (or that the variable reads again now).
            let reason = match read_sum(
                &probe.handle,
                probe.lane,
                probe.count as usize,
                &mut self.scratch,
                None,
            ) {
                Err(e) => e.to_string(),
                Ok(_) => "it reads again at the end".to_owned(),
            };
            let name = col.info.name.to_string();
            match self
                .failed
                .iter_mut()
                .find(|f| f.variable == name && f.reason == reason)
            {
                Some(f) => {
                    f.reads += u64::from(probe.failures);
                    f.objects.push(slot.label.clone());
                }
                None => self.failed.push(FailedReads {
                    variable: name,
                    reason,
                    reads: u64::from(probe.failures),
                    objects: vec![slot.label.clone()],
                }),
            }
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

/// The failed reads of one variable for one reason, over the objects it was read on: one note
/// of the report ([`FailedReads::note`]), not one per object.
#[derive(Debug)]
pub(super) struct FailedReads {
    pub(super) variable: String,
    pub(super) reason: String,
    pub(super) reads: u64,
    /// The objects' labels (`comm#5`); empty for a variable bound to none.
    pub(super) objects: Vec<Box<str>>,
}

impl FailedReads {
    /// Objects named in a note; the rest are counted.
    const SHOWN: usize = 4;

    /// `coll_monitoring_messages_size: 76 read(s) failed on 38 objects (comm#5, comm#6, ...
    /// (34 more)): <reason>`.
    pub(super) fn note(&self) -> String {
        let labelled: Vec<&str> = self
            .objects
            .iter()
            .map(|o| &**o)
            .filter(|o| !o.is_empty())
            .collect();
        let on = match labelled.len() {
            0 => String::new(),
            1 => format!(" on {}", labelled[0]),
            n => {
                let shown = labelled[..n.min(Self::SHOWN)].join(", ");
                let more = if n > Self::SHOWN {
                    format!(", ... ({} more)", n - Self::SHOWN)
                } else {
                    String::new()
                };
                format!(" on {n} objects ({shown}{more})")
            }
        };
        format!(
            "{}: {} read(s) failed{on}: {}",
            self.variable, self.reads, self.reason
        )
    }
}

#[cfg(test)]
mod tests {
    use super::FailedReads;

    #[test]
    fn failed_reads_are_one_note_naming_a_few_objects() {
        let f = FailedReads {
            variable: "coll_monitoring_messages_size".into(),
            reason: "invalid handle (MPI_T_ERR_INVALID_HANDLE)".into(),
            reads: 12,
            objects: (5..11)
                .map(|i| format!("comm#{i}").into_boxed_str())
                .collect(),
        };
        assert_eq!(
            f.note(),
            "coll_monitoring_messages_size: 12 read(s) failed on 6 objects (comm#5, comm#6, \
             comm#7, comm#8, ... (2 more)): invalid handle (MPI_T_ERR_INVALID_HANDLE)"
        );
        let unbound = FailedReads {
            objects: vec!["".into()],
            ..f
        };
        assert_eq!(
            unbound.note(),
            "coll_monitoring_messages_size: 12 read(s) failed: invalid handle \
             (MPI_T_ERR_INVALID_HANDLE)"
        );
    }
}
