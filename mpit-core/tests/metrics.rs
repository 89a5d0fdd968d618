//! Properties of the derived-metric trackers: deltas of counters, aggregates
//! and timers, watermark changes, level/percentage statistics (MPI-4.1
//! §16.3.7 for the class rules; Caliper §0.3 and §0.5 for the metrics).

use mpit_core::{
    DeltaTracker, DerivedMetric, Number, Observation, PvarClass, SampleStats, Tracker, Value,
    Watermark, WatermarkTracker,
};
use proptest::prelude::*;
use proptest::sample::select;

/// A non-decreasing sequence of counter values.
fn non_decreasing() -> impl Strategy<Value = Vec<u64>> {
    (0u64..1000, proptest::collection::vec(0u64..1000, 0..50)).prop_map(|(start, steps)| {
        let mut v = start;
        let mut out = vec![start];
        for s in steps {
            v += s;
            out.push(v);
        }
        out
    })
}

fn doubles() -> impl Strategy<Value = Vec<f64>> {
    proptest::collection::vec(
        prop_oneof![
            8 => 0.0f64..1e6,
            1 => Just(f64::NAN),
            1 => Just(f64::INFINITY),
            1 => -1e6f64..0.0,
        ],
        0..60,
    )
}

proptest! {
    /// §16.3.7: counters, aggregates and timers only increase between resets,
    /// so a delta is never negative, whatever is observed (resets included).
    #[test]
    fn delta_never_negative_f64(xs in doubles()) {
        let mut t = DeltaTracker::<f64>::new();
        for x in xs {
            let d = t.observe(x);
            prop_assert!(d >= 0.0 && d.is_finite(), "delta {} after {}", d, x);
        }
    }

    /// Over a non-decreasing sequence (no reset), the deltas sum to
    /// last - first + (first - start), i.e. to the last value since the
    /// starting value is 0 (§16.3.7), and no reset is detected.
    #[test]
    fn deltas_sum_to_last_minus_start(xs in non_decreasing()) {
        let mut t = DeltaTracker::<u64>::new();
        let sum: u64 = xs.iter().map(|&x| t.observe(x)).sum();
        prop_assert_eq!(sum, *xs.last().unwrap());
        prop_assert_eq!(t.total(), sum);
        prop_assert_eq!(t.resets(), 0);
        prop_assert_eq!(t.observations(), xs.len() as u64);

        let mut b = DeltaTracker::starting_at(xs[0]);
        let sum: u64 = xs.iter().map(|&x| b.observe(x)).sum();
        prop_assert_eq!(sum, xs.last().unwrap() - xs[0]);
    }

    /// A decrease can only be a reset (§16.3.7: the value restarts at 0), so
    /// the delta is the new value and each decrease counts one reset.
    #[test]
    fn decrease_is_a_reset(xs in proptest::collection::vec(any::<u64>(), 1..50)) {
        let mut t = DeltaTracker::<u64>::new();
        let mut prev = 0u64;
        let mut resets = 0;
        for &x in &xs {
            let d = t.observe(x);
            if x >= prev {
                prop_assert_eq!(d, x - prev);
            } else {
                resets += 1;
                prop_assert_eq!(d, x);
            }
            prev = x;
        }
        prop_assert_eq!(t.resets(), resets);
        prop_assert_eq!(t.last(), xs.last().copied());
    }

    /// Caliper §0.3: a watermark changes at most once per read after the
    /// first (the baseline), changes only in its direction, and the
    /// cumulative change is the sum of the changes.
    #[test]
    fn watermark_changes_bounded(xs in proptest::collection::vec(0u64..100, 0..60), high in any::<bool>()) {
        let dir = if high { Watermark::High } else { Watermark::Low };
        let mut t = WatermarkTracker::<u64>::new(dir);
        let mut sum = 0u64;
        let mut prev: Option<u64> = None;
        for &x in &xs {
            let c = t.observe(x);
            match (prev, c) {
                (None, c) => prop_assert_eq!(c, None),
                (Some(p), Some(a)) => {
                    prop_assert!(a > 0);
                    if high { prop_assert_eq!(x, p + a) } else { prop_assert_eq!(x + a, p) }
                    sum += a;
                }
                (Some(p), None) => {
                    let not_ahead = if high { x <= p } else { x >= p };
                    prop_assert!(not_ahead);
                }
            }
            prev = Some(x);
        }
        prop_assert!(t.changes() <= t.observations());
        prop_assert!(t.changes() + t.resets() <= t.observations().saturating_sub(1));
        prop_assert_eq!(t.cumulative_change(), sum);
        prop_assert_eq!(t.observations(), xs.len() as u64);
    }

    /// §16.3.7: a high watermark only grows between resets, so over a
    /// non-decreasing sequence the cumulative change is last - first.
    #[test]
    fn high_watermark_cumulative_is_total_rise(xs in non_decreasing()) {
        let mut t = WatermarkTracker::<u64>::new(Watermark::High);
        for &x in &xs {
            t.observe(x);
        }
        prop_assert_eq!(t.cumulative_change(), xs.last().unwrap() - xs[0]);
        prop_assert_eq!(t.resets(), 0);
    }

    /// min <= mean <= max for any samples; NaN and infinities are ignored.
    #[test]
    fn stats_mean_between_min_and_max(xs in doubles()) {
        let mut s = SampleStats::new();
        for &x in &xs {
            s.observe(x);
        }
        let finite: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
        prop_assert_eq!(s.count(), finite.len() as u64);
        match (s.min(), s.mean(), s.max()) {
            (Some(lo), Some(m), Some(hi)) => {
                prop_assert!(lo <= m && m <= hi);
                prop_assert_eq!(lo, finite.iter().copied().fold(f64::INFINITY, f64::min));
                prop_assert_eq!(hi, finite.iter().copied().fold(f64::NEG_INFINITY, f64::max));
                let naive = finite.iter().sum::<f64>() / finite.len() as f64;
                prop_assert!((m - naive).abs() <= 1e-6 * (1.0 + naive.abs()));
                prop_assert!(s.variance().unwrap() >= 0.0);
            }
            (None, None, None) => prop_assert!(finite.is_empty()),
            other => prop_assert!(false, "inconsistent stats {:?}", other),
        }
    }

    /// The tracker built from a class computes that class's derived metric,
    /// and never yields a negative delta for a monotone class.
    #[test]
    fn tracker_follows_class(class in select(PvarClass::ALL), xs in proptest::collection::vec(any::<u32>(), 1..30)) {
        let mut t = Tracker::for_class(class);
        prop_assert_eq!(t.derived_metric(), class.derived_metric());
        for &x in &xs {
            let v = Value::Unsigned(x);
            let o = t.observe(v).unwrap();
            match (class.derived_metric(), o) {
                (DerivedMetric::Delta, Observation::Delta(Number::Unsigned(_))) => {}
                (DerivedMetric::WatermarkChange, Observation::Watermark { raw, change }) => {
                    prop_assert_eq!(raw, Number::Unsigned(u64::from(x)));
                    if let Some(Number::Unsigned(c)) = change {
                        prop_assert!(c > 0);
                    }
                }
                (DerivedMetric::Sampled, Observation::Sample(s)) => prop_assert_eq!(s, f64::from(x)),
                (DerivedMetric::Raw, Observation::Raw(r)) => prop_assert_eq!(r, v),
                (m, o) => prop_assert!(false, "{:?} produced {:?}", m, o),
            }
        }
    }
}

/// The tracker refuses reads it cannot interpret instead of guessing.
#[test]
fn tracker_rejects_uninterpretable_reads() {
    let mut t = Tracker::for_class(PvarClass::Counter);
    assert!(t.observe(Value::Int(-1)).is_err());
    t.observe(Value::UnsignedLong(3)).unwrap();
    // Switching from integer to floating point reads is refused.
    assert!(t.observe(Value::Double(4.0)).is_err());
    assert_eq!(
        t.observe(Value::UnsignedLong(10)).unwrap(),
        Observation::Delta(Number::Unsigned(7))
    );

    let mut w = Tracker::for_class(PvarClass::LowWatermark);
    w.observe(Value::Double(5.0)).unwrap();
    assert_eq!(
        w.observe(Value::Double(3.5)).unwrap(),
        Observation::Watermark {
            raw: Number::Float(3.5),
            change: Some(Number::Float(1.5))
        }
    );
    let mut s = Tracker::for_class(PvarClass::Percentage);
    assert!(s.observe(Value::Char(b'x')).is_err());
    s.observe(Value::Double(0.5)).unwrap();
    match s {
        Tracker::Sampled(stats) => assert_eq!(stats.mean(), Some(0.5)),
        other => panic!("{other:?}"),
    }
}
