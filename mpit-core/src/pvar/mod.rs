//! Performance variables: classes and their rules (MPI-4.1 §16.3.7), and
//! Caliper's aggregatability and derived metrics ([`metrics`]).

pub mod metrics;

use crate::datatype::{Datatype, Value};
use crate::macros::c_enum;

pub use metrics::{
    DeltaTracker, MetricValue, Number, Numeric, Observation, SampleStats, Tracker, Watermark,
    WatermarkTracker,
};

c_enum! {
    /// The class of a performance variable (MPI-4.1 §16.3.7).
    ///
    /// The class fixes the datatypes the variable may have, its starting
    /// value (after handle allocation and after a reset) and whether it is
    /// monotonic. [`PvarClass::aggregatable`] and
    /// [`PvarClass::derived_metric`] add Caliper's view of how to aggregate
    /// samples of it.
    ///
    /// ```
    /// use mpit_core::{Datatype, DerivedMetric, Monotonicity, PvarClass, StartingValue};
    ///
    /// let c = PvarClass::Counter;
    /// assert!(c.allows(Datatype::UnsignedLongLong));
    /// assert!(!c.allows(Datatype::Double));
    /// assert_eq!(c.starting_value(), StartingValue::Zero);
    /// assert_eq!(c.monotonicity(), Monotonicity::NonDecreasing);
    /// assert!(!c.aggregatable());
    /// assert_eq!(c.derived_metric(), DerivedMetric::Delta);
    /// assert_eq!(PvarClass::Percentage.allowed_datatypes(), &[Datatype::Double]);
    /// ```
    pub enum PvarClass ("MPI_T_PVAR_CLASS_", "performance variable class") {
        /// A set of discrete states of the implementation or a component,
        /// represented by `MPI_INT` values of an enumeration. Starts at the
        /// current state.
        State = "MPI_T_PVAR_CLASS_STATE",
        /// The utilization level of a resource. Starts at the current level.
        Level = "MPI_T_PVAR_CLASS_LEVEL",
        /// The size of a resource. Starts at the current size.
        Size = "MPI_T_PVAR_CLASS_SIZE",
        /// The percentage utilization of a finite resource, as an
        /// `MPI_DOUBLE` between 0.0 (unused) and 1.0 (completely used).
        /// Starts at the current utilization.
        Percentage = "MPI_T_PVAR_CLASS_PERCENTAGE",
        /// The high watermark of a resource's utilization: monotonically
        /// non-decreasing since the start or the last reset, which sets it to
        /// the current utilization.
        HighWatermark = "MPI_T_PVAR_CLASS_HIGHWATERMARK",
        /// The low watermark of a resource's utilization: monotonically
        /// non-increasing since the start or the last reset, which sets it to
        /// the current utilization.
        LowWatermark = "MPI_T_PVAR_CLASS_LOWWATERMARK",
        /// The number of occurrences of an event: monotonically increasing,
        /// starts at 0.
        Counter = "MPI_T_PVAR_CLASS_COUNTER",
        /// The sum of arguments processed by an event (e.g. bytes):
        /// monotonically increasing, starts at 0.
        Aggregate = "MPI_T_PVAR_CLASS_AGGREGATE",
        /// The aggregated time spent in an event: monotonically increasing,
        /// starts at 0. As `MPI_DOUBLE`, in the units of `MPI_Wtime`.
        Timer = "MPI_T_PVAR_CLASS_TIMER",
        /// Anything else. Datatype and starting value are up to the
        /// implementation.
        Generic = "MPI_T_PVAR_CLASS_GENERIC",
    }
}

/// The value a performance variable takes when its handle is allocated and
/// when it is reset (MPI-4.1 §16.3.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StartingValue {
    /// Zero (counter, aggregate, timer).
    Zero,
    /// The current state, level, size or utilization of the resource.
    Current,
    /// Variable-specific and implementation-defined (generic).
    ImplementationDefined,
}

/// How a performance variable's value may move between its start or reset
/// and a read (MPI-4.1 §16.3.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Monotonicity {
    /// No constraint.
    None,
    /// Never decreases (counter, aggregate, timer, high watermark).
    NonDecreasing,
    /// Never increases (low watermark).
    NonIncreasing,
}

/// What a tool should record from samples of a variable (Caliper MPIT
/// service design, §0.3 and §0.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DerivedMetric {
    /// The difference from the previous read (counter, aggregate, timer):
    /// raw values are not aggregatable, their deltas are (SUM, MIN, MAX,
    /// AVG).
    Delta,
    /// The raw value as is (state, size, generic): not aggregatable.
    Raw,
    /// Alongside the raw value, the number of times the watermark moved and
    /// the cumulative amount it moved (high/low watermark): aggregatable by
    /// COUNT and SUM.
    WatermarkChange,
    /// The raw value, summarized by average, minimum and maximum over the
    /// samples (level, percentage).
    Sampled,
}

/// `MPI_UNSIGNED`, `MPI_UNSIGNED_LONG`, `MPI_UNSIGNED_LONG_LONG`.
const UNSIGNED: &[Datatype] = &[
    Datatype::Unsigned,
    Datatype::UnsignedLong,
    Datatype::UnsignedLongLong,
];

/// The unsigned types and `MPI_DOUBLE`.
const UNSIGNED_OR_DOUBLE: &[Datatype] = &[
    Datatype::Unsigned,
    Datatype::UnsignedLong,
    Datatype::UnsignedLongLong,
    Datatype::Double,
];

impl PvarClass {
    /// The datatypes a variable of this class may have (MPI-4.1 §16.3.7).
    ///
    /// State: `MPI_INT`. Level, size, high/low watermark, aggregate, timer:
    /// `MPI_UNSIGNED`, `MPI_UNSIGNED_LONG`, `MPI_UNSIGNED_LONG_LONG`,
    /// `MPI_DOUBLE`. Percentage: `MPI_DOUBLE`. Counter: the three unsigned
    /// types. Generic: any of the seven datatypes of the interface
    /// ([`Datatype::CVAR_PVAR_TYPES`]).
    pub const fn allowed_datatypes(self) -> &'static [Datatype] {
        match self {
            PvarClass::State => &[Datatype::Int],
            PvarClass::Percentage => &[Datatype::Double],
            PvarClass::Counter => UNSIGNED,
            PvarClass::Level
            | PvarClass::Size
            | PvarClass::HighWatermark
            | PvarClass::LowWatermark
            | PvarClass::Aggregate
            | PvarClass::Timer => UNSIGNED_OR_DOUBLE,
            PvarClass::Generic => &Datatype::CVAR_PVAR_TYPES,
        }
    }

    /// Whether a variable of this class may have datatype `dt`.
    pub fn allows(self, dt: Datatype) -> bool {
        self.allowed_datatypes().contains(&dt)
    }

    /// The value after handle allocation and after a reset.
    pub const fn starting_value(self) -> StartingValue {
        match self {
            PvarClass::Counter | PvarClass::Aggregate | PvarClass::Timer => StartingValue::Zero,
            PvarClass::Generic => StartingValue::ImplementationDefined,
            PvarClass::State
            | PvarClass::Level
            | PvarClass::Size
            | PvarClass::Percentage
            | PvarClass::HighWatermark
            | PvarClass::LowWatermark => StartingValue::Current,
        }
    }

    /// How the value may move between a start or reset and a read.
    pub const fn monotonicity(self) -> Monotonicity {
        match self {
            PvarClass::Counter
            | PvarClass::Aggregate
            | PvarClass::Timer
            | PvarClass::HighWatermark => Monotonicity::NonDecreasing,
            PvarClass::LowWatermark => Monotonicity::NonIncreasing,
            PvarClass::State
            | PvarClass::Level
            | PvarClass::Size
            | PvarClass::Percentage
            | PvarClass::Generic => Monotonicity::None,
        }
    }

    /// Whether raw values are meaningfully aggregated with SUM, MAX, MIN,
    /// AVG or COUNT (Caliper §0.3): only level and percentage. Counters,
    /// aggregates and timers are aggregatable only through their deltas,
    /// watermarks through their change metrics ([`PvarClass::derived_metric`]).
    pub const fn aggregatable(self) -> bool {
        matches!(self, PvarClass::Level | PvarClass::Percentage)
    }

    /// What a tool should record per sample (Caliper's MPIT service, "Querying and storing PVARs").
    pub const fn derived_metric(self) -> DerivedMetric {
        match self {
            PvarClass::Counter | PvarClass::Aggregate | PvarClass::Timer => DerivedMetric::Delta,
            PvarClass::HighWatermark | PvarClass::LowWatermark => DerivedMetric::WatermarkChange,
            PvarClass::Level | PvarClass::Percentage => DerivedMetric::Sampled,
            PvarClass::State | PvarClass::Size | PvarClass::Generic => DerivedMetric::Raw,
        }
    }

    /// Whether one value read from a variable of this class obeys the
    /// class's rules on its own: an allowed datatype, a percentage within
    /// [0.0, 1.0], a non-negative finite counter, aggregate or timer.
    /// (Monotonicity concerns sequences: see [`metrics`].)
    pub fn value_conforms(self, v: &Value) -> bool {
        if !self.allows(v.datatype()) {
            return false;
        }
        match (self, v) {
            (PvarClass::Percentage, Value::Double(x)) => (0.0..=1.0).contains(x),
            (PvarClass::Counter | PvarClass::Aggregate | PvarClass::Timer, Value::Double(x)) => {
                x.is_finite() && *x >= 0.0
            }
            _ => true,
        }
    }
}
