//! Derived metrics of performance variables, after Caliper's MPIT service
//! (§0.3, §0.5), on top of the class rules of MPI-4.1 §16.3.7.
//!
//! - Counters, aggregates and timers: [`DeltaTracker`], the difference from
//!   the previous read.
//! - High and low watermarks: [`WatermarkTracker`], how often and how much the
//!   watermark moved.
//! - Levels and percentages: [`SampleStats`], count, min, max and mean.
//! - Everything else: the raw value.
//!
//! [`Tracker::for_class`] picks the right one for a [`PvarClass`].

use core::fmt;

use super::{DerivedMetric, PvarClass};
use crate::datatype::Value;
use crate::error::{Error, Result};

mod sealed {
    #[allow(unreachable_pub)] // sealed-trait idiom: public, but unnameable outside
    pub trait Sealed {}
    impl Sealed for u64 {}
    impl Sealed for f64 {}
}

/// A number a tracker works on: `u64` (unsigned datatypes) or `f64`
/// (`MPI_DOUBLE`). Sealed.
pub trait MetricValue:
    Copy + PartialOrd + Default + fmt::Debug + Send + Sync + 'static + sealed::Sealed
{
    /// Zero.
    const ZERO: Self;
    /// `self - other`, for `self >= other`.
    fn minus(self, other: Self) -> Self;
    /// `self + other`, saturating for integers.
    fn plus(self, other: Self) -> Self;
    /// Whether the value can be tracked: finite and non-negative (all `u64`;
    /// `f64` not NaN, not infinite, sign bit clear: -0.0 is not).
    fn is_trackable(self) -> bool;
    /// As a [`Number`].
    fn to_number(self) -> Number;
}

impl MetricValue for u64 {
    const ZERO: u64 = 0;
    fn minus(self, other: u64) -> u64 {
        self.saturating_sub(other)
    }
    fn plus(self, other: u64) -> u64 {
        self.saturating_add(other)
    }
    fn is_trackable(self) -> bool {
        true
    }
    fn to_number(self) -> Number {
        Number::Unsigned(self)
    }
}

impl MetricValue for f64 {
    const ZERO: f64 = 0.0;
    #[inline]
    fn minus(self, other: f64) -> f64 {
        // `self >= other`, both finite: the difference is finite and not negative (a clamp
        // would be two more instructions on a profiler's per-read path).
        self - other
    }
    fn plus(self, other: f64) -> f64 {
        self + other
    }
    #[inline]
    fn is_trackable(self) -> bool {
        // One integer comparison: the sign bit clear and the exponent not all ones (NaN and
        // infinities have it). Comparisons of the float are folded by LLVM into a class test
        // several times longer, on the profiler's per-read path. -0.0 is not trackable.
        self.to_bits() < f64::INFINITY.to_bits()
    }
    fn to_number(self) -> Number {
        Number::Float(self)
    }
}

/// A derived number: unsigned or floating point, after the variable's
/// datatype.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// From an unsigned datatype.
    Unsigned(u64),
    /// From `MPI_DOUBLE`.
    Float(f64),
}

impl Number {
    /// The number as `f64` (rounding integers above 2^53).
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Unsigned(u) => u as f64,
            Number::Float(f) => f,
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Unsigned(u) => fmt::Display::fmt(u, f),
            Number::Float(x) => fmt::Display::fmt(x, f),
        }
    }
}

/// Deltas of a monotonically increasing variable: counter, aggregate or
/// timer (MPI-4.1 §16.3.7; Caliper's MPIT service, "Querying and storing PVARs" stores "the difference between the
/// current value and the last value").
///
/// Choices, documented because the standard leaves them to the tool:
///
/// - The first observation yields its difference from the class's starting
///   value, 0 (or from the baseline given to
///   [`DeltaTracker::starting_at`]): a handle starts at 0, so everything
///   counted since the allocation is attributed to the first interval.
/// - A value lower than the previous one means the variable was reset
///   (`MPI_T_pvar_reset`, `MPI_T_pvar_readreset`, or a reset through another
///   handle), so it restarted at 0: the delta is the new value itself and
///   [`DeltaTracker::resets`] counts it. A delta is therefore never negative.
/// - Values that cannot be tracked (NaN, infinite or negative doubles, which
///   the standard forbids for these classes) are ignored: delta 0, state
///   unchanged.
///
/// ```
/// use mpit_core::DeltaTracker;
///
/// let mut t = DeltaTracker::<u64>::new();
/// assert_eq!(t.observe(5), 5); // first read: since the start at 0
/// assert_eq!(t.observe(9), 4);
/// assert_eq!(t.observe(2), 2); // reset in between
/// assert_eq!(t.resets(), 1);
/// assert_eq!(t.total(), 11);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DeltaTracker<T> {
    /// The previous value observed, the baseline before the first (no `Option`: `observe`
    /// is on a profiler's per-read path and a tag costs instructions there).
    last: T,
    total: T,
    resets: u64,
    observations: u64,
}

impl<T: MetricValue> Default for DeltaTracker<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: MetricValue> DeltaTracker<T> {
    /// A tracker whose first delta is measured from 0, the starting value of
    /// counters, aggregates and timers.
    pub fn new() -> Self {
        Self::starting_at(T::ZERO)
    }

    /// A tracker whose first delta is measured from `baseline` (e.g. a value
    /// read before the interval of interest).
    pub fn starting_at(baseline: T) -> Self {
        DeltaTracker {
            last: baseline,
            total: T::ZERO,
            resets: 0,
            observations: 0,
        }
    }

    /// Records a read and returns the delta since the previous one.
    #[inline]
    pub fn observe(&mut self, value: T) -> T {
        if !value.is_trackable() {
            return T::ZERO;
        }
        let delta = if value >= self.last {
            value.minus(self.last)
        } else {
            // Reset since the previous read: restarted at 0.
            self.resets += 1;
            value
        };
        self.last = value;
        self.total = self.total.plus(delta);
        self.observations += 1;
        delta
    }

    /// The last value observed.
    pub fn last(&self) -> Option<T> {
        (self.observations > 0).then_some(self.last)
    }

    /// Sum of all deltas returned.
    pub fn total(&self) -> T {
        self.total
    }

    /// Number of resets detected.
    pub fn resets(&self) -> u64 {
        self.resets
    }

    /// Number of values observed (ignored ones excluded).
    pub fn observations(&self) -> u64 {
        self.observations
    }
}

/// Which watermark a [`WatermarkTracker`] follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Watermark {
    /// `MPI_T_PVAR_CLASS_HIGHWATERMARK`: moves up.
    High,
    /// `MPI_T_PVAR_CLASS_LOWWATERMARK`: moves down.
    Low,
}

/// Change metrics of a high or low watermark (Caliper §0.3, §0.4): how many
/// reads saw the watermark move, and the cumulative amount it moved.
///
/// The first observation is the baseline (a watermark starts at the current
/// utilization, MPI-4.1 §16.3.7), so it is never a change. A move against the
/// watermark's direction can only come from a reset, which restarts it at the
/// current utilization: it becomes the new baseline and is counted in
/// [`WatermarkTracker::resets`], not as a change.
///
/// ```
/// use mpit_core::{Watermark, WatermarkTracker};
///
/// let mut t = WatermarkTracker::<u64>::new(Watermark::High);
/// assert_eq!(t.observe(10), None); // baseline
/// assert_eq!(t.observe(10), None);
/// assert_eq!(t.observe(15), Some(5));
/// assert_eq!(t.observe(3), None); // reset
/// assert_eq!(t.observe(4), Some(1));
/// assert_eq!((t.changes(), t.cumulative_change(), t.resets()), (2, 6, 1));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct WatermarkTracker<T> {
    direction: Watermark,
    last: Option<T>,
    changes: u64,
    cumulative: T,
    resets: u64,
    observations: u64,
}

impl<T: MetricValue> WatermarkTracker<T> {
    /// A tracker for a watermark of the given direction.
    pub fn new(direction: Watermark) -> Self {
        WatermarkTracker {
            direction,
            last: None,
            changes: 0,
            cumulative: T::ZERO,
            resets: 0,
            observations: 0,
        }
    }

    /// The direction followed.
    pub fn direction(&self) -> Watermark {
        self.direction
    }

    /// Records a read; returns the amount the watermark moved in its
    /// direction since the previous read, if it moved. Untrackable values
    /// (NaN, infinite or negative doubles) are ignored.
    pub fn observe(&mut self, value: T) -> Option<T> {
        if !value.is_trackable() {
            return None;
        }
        self.observations += 1;
        // The first observation is the baseline.
        let last = self.last.replace(value)?;
        let (ahead, behind) = match self.direction {
            Watermark::High => (value > last, value < last),
            Watermark::Low => (value < last, value > last),
        };
        if ahead {
            let amount = match self.direction {
                Watermark::High => value.minus(last),
                Watermark::Low => last.minus(value),
            };
            self.changes += 1;
            self.cumulative = self.cumulative.plus(amount);
            Some(amount)
        } else {
            if behind {
                self.resets += 1;
            }
            None
        }
    }

    /// The last value observed.
    pub fn last(&self) -> Option<T> {
        self.last
    }

    /// Number of reads at which the watermark had moved.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// Total amount the watermark moved (absolute).
    pub fn cumulative_change(&self) -> T {
        self.cumulative
    }

    /// Number of resets detected (moves against the direction).
    pub fn resets(&self) -> u64 {
        self.resets
    }

    /// Number of values observed (ignored ones excluded).
    pub fn observations(&self) -> u64 {
        self.observations
    }
}

/// Count, minimum, maximum and mean of samples of a level or percentage
/// (Caliper's MPIT service, "Querying and storing PVARs": "the average, maximum or minimum value"). The mean is
/// computed with Welford's update, so it does not overflow or lose
/// precision on long runs. NaN and infinite samples are ignored.
///
/// ```
/// use mpit_core::SampleStats;
///
/// let mut s = SampleStats::new();
/// for x in [0.25, 0.75, 0.5] {
///     s.observe(x);
/// }
/// assert_eq!(s.count(), 3);
/// assert_eq!((s.min(), s.max(), s.mean()), (Some(0.25), Some(0.75), Some(0.5)));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampleStats {
    count: u64,
    min: f64,
    max: f64,
    mean: f64,
    m2: f64,
}

impl SampleStats {
    /// No samples yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a sample (ignored if NaN or infinite).
    pub fn observe(&mut self, x: f64) {
        if !x.is_finite() {
            return;
        }
        self.count += 1;
        if self.count == 1 {
            self.min = x;
            self.max = x;
            self.mean = x;
            self.m2 = 0.0;
            return;
        }
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Smallest sample.
    pub fn min(&self) -> Option<f64> {
        (self.count > 0).then_some(self.min)
    }

    /// Largest sample.
    pub fn max(&self) -> Option<f64> {
        (self.count > 0).then_some(self.max)
    }

    /// Mean of the samples, clamped to `[min, max]` against rounding.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.mean.clamp(self.min, self.max))
    }

    /// Population variance of the samples.
    pub fn variance(&self) -> Option<f64> {
        (self.count > 0).then(|| (self.m2 / self.count as f64).max(0.0))
    }
}

/// A tracker whose number type is chosen by the first value observed.
#[derive(Clone, Debug, PartialEq)]
pub enum Numeric<U, F> {
    /// Nothing observed yet.
    Unset,
    /// Tracking an unsigned datatype.
    Unsigned(U),
    /// Tracking `MPI_DOUBLE`.
    Float(F),
}

/// What one observation produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Observation {
    /// The delta since the previous read (counter, aggregate, timer).
    Delta(Number),
    /// The raw watermark and, if it moved, by how much.
    Watermark {
        /// The value read.
        raw: Number,
        /// The amount moved since the previous read, if any.
        change: Option<Number>,
    },
    /// The sample added to the statistics (level, percentage).
    Sample(f64),
    /// The raw value (state, size, generic).
    Raw(Value),
}

/// The tracker for a variable's class: dispatches each read to the derived
/// metric of [`PvarClass::derived_metric`].
///
/// ```
/// use mpit_core::{Number, Observation, PvarClass, Tracker, Value};
///
/// let mut t = Tracker::for_class(PvarClass::Counter);
/// t.observe(Value::UnsignedLongLong(3)).unwrap();
/// let o = t.observe(Value::UnsignedLongLong(10)).unwrap();
/// assert_eq!(o, Observation::Delta(Number::Unsigned(7)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Tracker {
    /// Counter, aggregate, timer.
    Delta(Numeric<DeltaTracker<u64>, DeltaTracker<f64>>),
    /// High or low watermark.
    Watermark(
        Watermark,
        Numeric<WatermarkTracker<u64>, WatermarkTracker<f64>>,
    ),
    /// Level, percentage.
    Sampled(SampleStats),
    /// State, size, generic: the last raw value.
    Raw(Option<Value>),
}

/// A read as a tracker number: unsigned integers as `u64`, floating point
/// as `f64`.
fn number_of(v: &Value) -> Result<Number> {
    if v.datatype().is_floating() {
        if let Some(f) = v.as_f64() {
            return Ok(Number::Float(f));
        }
    } else if let Some(u) = v.as_u64() {
        return Ok(Number::Unsigned(u));
    }
    Err(Error::invalid_value(format!(
        "{v} ({}) is not a non-negative number",
        v.datatype()
    )))
}

fn lane_mismatch(v: &Value) -> Error {
    Error::invalid_value(format!(
        "{v} ({}) mixes integer and floating-point reads of one variable",
        v.datatype()
    ))
}

impl Tracker {
    /// The tracker for the derived metric of `class`.
    pub fn for_class(class: PvarClass) -> Tracker {
        match class.derived_metric() {
            DerivedMetric::Delta => Tracker::Delta(Numeric::Unset),
            DerivedMetric::WatermarkChange => {
                let dir = if class == PvarClass::LowWatermark {
                    Watermark::Low
                } else {
                    Watermark::High
                };
                Tracker::Watermark(dir, Numeric::Unset)
            }
            DerivedMetric::Sampled => Tracker::Sampled(SampleStats::new()),
            DerivedMetric::Raw => Tracker::Raw(None),
        }
    }

    /// The derived metric this tracker computes.
    pub fn derived_metric(&self) -> DerivedMetric {
        match self {
            Tracker::Delta(_) => DerivedMetric::Delta,
            Tracker::Watermark(..) => DerivedMetric::WatermarkChange,
            Tracker::Sampled(_) => DerivedMetric::Sampled,
            Tracker::Raw(_) => DerivedMetric::Raw,
        }
    }

    /// Records one read.
    ///
    /// Errors ([`Error::InvalidValue`]): a delta or watermark read that is
    /// not a non-negative number, one that switches between integer and
    /// floating point, or a non-numeric sample.
    pub fn observe(&mut self, v: Value) -> Result<Observation> {
        match self {
            Tracker::Delta(lane) => {
                let delta = match (number_of(&v)?, &mut *lane) {
                    (Number::Unsigned(u), Numeric::Unset) => {
                        let mut t = DeltaTracker::new();
                        let d = t.observe(u);
                        *lane = Numeric::Unsigned(t);
                        Number::Unsigned(d)
                    }
                    (Number::Float(f), Numeric::Unset) => {
                        let mut t = DeltaTracker::new();
                        let d = t.observe(f);
                        *lane = Numeric::Float(t);
                        Number::Float(d)
                    }
                    (Number::Unsigned(u), Numeric::Unsigned(t)) => Number::Unsigned(t.observe(u)),
                    (Number::Float(f), Numeric::Float(t)) => Number::Float(t.observe(f)),
                    _ => return Err(lane_mismatch(&v)),
                };
                Ok(Observation::Delta(delta))
            }
            Tracker::Watermark(dir, lane) => {
                let raw = number_of(&v)?;
                let change = match (raw, &mut *lane) {
                    (Number::Unsigned(u), Numeric::Unset) => {
                        let mut t = WatermarkTracker::new(*dir);
                        let c = t.observe(u);
                        *lane = Numeric::Unsigned(t);
                        c.map(Number::Unsigned)
                    }
                    (Number::Float(f), Numeric::Unset) => {
                        let mut t = WatermarkTracker::new(*dir);
                        let c = t.observe(f);
                        *lane = Numeric::Float(t);
                        c.map(Number::Float)
                    }
                    (Number::Unsigned(u), Numeric::Unsigned(t)) => {
                        t.observe(u).map(Number::Unsigned)
                    }
                    (Number::Float(f), Numeric::Float(t)) => t.observe(f).map(Number::Float),
                    _ => return Err(lane_mismatch(&v)),
                };
                Ok(Observation::Watermark { raw, change })
            }
            Tracker::Sampled(stats) => {
                let x = v.to_f64_lossy().ok_or_else(|| {
                    Error::invalid_value(format!("{v} ({}) is not numeric", v.datatype()))
                })?;
                stats.observe(x);
                Ok(Observation::Sample(x))
            }
            Tracker::Raw(last) => {
                *last = Some(v);
                Ok(Observation::Raw(v))
            }
        }
    }
}
