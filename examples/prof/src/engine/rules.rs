//! The attribution rules: a sample's value added to a node's accumulators by the derived metric
//! of its variable's class (deltas, watermark moves, sample statistics, the last value), as
//! `mpit_core`'s trackers take them (Caliper's MPIT service, "PVAR classes" to "Querying and storing PVARs").

#![forbid(unsafe_code)]

use mpit_safe::MetricValue;

use super::probe::Kind;

/// A state's or generic variable's value `v` stored in its accumulators at `at` of a node's
/// `acc`: seen, and the last value.
#[inline(always)]
pub(super) fn store_state(acc: &mut [f64], at: usize, v: f64) {
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

/// Attributes value `v` of a variable of kind `kind` whose previous value was `last` to its
/// accumulators `a` (the sampling loop's rules, for the probes of several elements and the
/// tests). The rules are `mpit_core`'s trackers' ([`DeltaTracker`](mpit_safe::DeltaTracker),
/// [`WatermarkTracker`](mpit_safe::WatermarkTracker)), kept on one `last` value; a test checks
/// them against the trackers.
pub(super) fn observe(last: &mut f64, kind: Kind, a: &mut [f64], v: f64) {
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
pub(super) fn observe_out_of_line(last: &mut f64, kind: Kind, a: &mut [f64], v: f64) {
    observe(last, kind, a, v)
}

/// A counter's, timer's or aggregate's read: the delta since `prev` added to `sum`.
#[inline(always)]
pub(super) fn add_delta(prev: &mut f64, sum: &mut f64, v: f64) {
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
pub(super) fn add_sample([count, min, max, sum]: &mut [f64; 4], v: f64) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Metric;
    use crate::engine::words::add_delta_if_moved;
    use mpit_safe::{DeltaTracker, Watermark, WatermarkTracker};
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
