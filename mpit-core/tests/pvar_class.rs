//! Properties of the performance variable classes of MPI-4.1 §16.3.7 and of
//! Caliper's aggregatability (§0.3) and derived metrics (§0.5).

use mpit_core::{Datatype, DerivedMetric, Monotonicity, PvarClass, StartingValue, Value};
use proptest::prelude::*;
use proptest::sample::select;

fn class() -> impl Strategy<Value = PvarClass> {
    select(PvarClass::ALL)
}

fn datatype() -> impl Strategy<Value = Datatype> {
    select(Datatype::ALL)
}

proptest! {
    /// §16.3.5/§16.3.7: a performance variable only ever has one of the
    /// seven datatypes of the interface, whatever its class.
    #[test]
    fn every_allowed_datatype_is_a_cvar_pvar_type(c in class()) {
        prop_assert!(!c.allowed_datatypes().is_empty());
        for dt in c.allowed_datatypes() {
            prop_assert!(dt.is_cvar_pvar_type(), "{} allows {}", c, dt);
        }
    }

    /// `allows` agrees with `allowed_datatypes`.
    #[test]
    fn allows_matches_the_list(c in class(), dt in datatype()) {
        prop_assert_eq!(c.allows(dt), c.allowed_datatypes().contains(&dt));
    }

    /// §16.3.7: counters are MPI_UNSIGNED, MPI_UNSIGNED_LONG or
    /// MPI_UNSIGNED_LONG_LONG: unsigned integers only.
    #[test]
    fn counter_types_are_unsigned(dt in datatype()) {
        if PvarClass::Counter.allows(dt) {
            prop_assert!(dt.is_integer() && !dt.is_signed());
        }
    }

    /// §16.3.7: a percentage is an MPI_DOUBLE and nothing else.
    #[test]
    fn percentage_only_double(dt in datatype()) {
        prop_assert_eq!(PvarClass::Percentage.allows(dt), dt == Datatype::Double);
    }

    /// §16.3.7: a state is an MPI_INT (the values of an enumeration) and
    /// nothing else.
    #[test]
    fn state_only_int(dt in datatype()) {
        prop_assert_eq!(PvarClass::State.allows(dt), dt == Datatype::Int);
    }

    /// §16.3.7: level, size, watermarks, aggregate and timer use the three
    /// unsigned types or MPI_DOUBLE; no class but state and generic allows a
    /// signed integer.
    #[test]
    fn non_state_classes_never_signed_integers(c in class(), dt in datatype()) {
        if c != PvarClass::State && c != PvarClass::Generic && c.allows(dt) {
            prop_assert!(dt == Datatype::Double || (dt.is_integer() && !dt.is_signed()));
        }
    }

    /// §16.3.7: a class whose value increases monotonically from its start
    /// starts at 0 unless it is a watermark (which starts at the current
    /// utilization); monotone classes are exactly counter, aggregate, timer
    /// and the watermarks.
    #[test]
    fn starting_value_and_monotonicity_agree(c in class()) {
        match c.monotonicity() {
            Monotonicity::NonDecreasing => prop_assert!(matches!(
                c,
                PvarClass::Counter | PvarClass::Aggregate | PvarClass::Timer | PvarClass::HighWatermark
            )),
            Monotonicity::NonIncreasing => prop_assert_eq!(c, PvarClass::LowWatermark),
            Monotonicity::None => {}
        }
        prop_assert_eq!(
            c.starting_value() == StartingValue::Zero,
            matches!(c, PvarClass::Counter | PvarClass::Aggregate | PvarClass::Timer)
        );
        prop_assert_eq!(
            c.starting_value() == StartingValue::ImplementationDefined,
            c == PvarClass::Generic
        );
    }

    /// Caliper §0.3: raw values are aggregatable exactly for level and
    /// percentage, which are recorded as samples; classes counted by deltas
    /// or watermark changes are not aggregatable raw.
    #[test]
    fn aggregatable_iff_sampled(c in class()) {
        prop_assert_eq!(c.aggregatable(), c.derived_metric() == DerivedMetric::Sampled);
        if c.derived_metric() == DerivedMetric::Delta {
            prop_assert_eq!(c.starting_value(), StartingValue::Zero);
        }
        if c.derived_metric() == DerivedMetric::WatermarkChange {
            prop_assert!(c.monotonicity() != Monotonicity::None);
        }
    }

    /// §16.3.7: a percentage must lie in [0.0, 1.0].
    #[test]
    fn percentage_value_range(x in proptest::num::f64::ANY) {
        prop_assert_eq!(
            PvarClass::Percentage.value_conforms(&Value::Double(x)),
            (0.0..=1.0).contains(&x)
        );
    }

    /// §16.3.7: counters, aggregates and timers are non-negative.
    #[test]
    fn monotone_zero_based_values_non_negative(x in proptest::num::f64::ANY) {
        for c in [PvarClass::Aggregate, PvarClass::Timer] {
            prop_assert_eq!(c.value_conforms(&Value::Double(x)), x.is_finite() && x >= 0.0);
        }
        // Counters may not be double at all.
        prop_assert!(!PvarClass::Counter.value_conforms(&Value::Double(x)));
    }

    /// A value of a datatype the class does not allow never conforms.
    #[test]
    fn value_of_disallowed_type_never_conforms(c in class(), v in any::<i32>()) {
        prop_assert_eq!(c.value_conforms(&Value::Int(v)), c.allows(Datatype::Int));
    }
}

/// The table of MPI-4.1 §16.3.7, spelled out once.
#[test]
fn class_table() {
    use Datatype::*;
    let four = [Unsigned, UnsignedLong, UnsignedLongLong, Double];
    assert_eq!(PvarClass::State.allowed_datatypes(), &[Int]);
    assert_eq!(PvarClass::Level.allowed_datatypes(), &four);
    assert_eq!(PvarClass::Size.allowed_datatypes(), &four);
    assert_eq!(PvarClass::Percentage.allowed_datatypes(), &[Double]);
    assert_eq!(PvarClass::HighWatermark.allowed_datatypes(), &four);
    assert_eq!(PvarClass::LowWatermark.allowed_datatypes(), &four);
    assert_eq!(
        PvarClass::Counter.allowed_datatypes(),
        &[Unsigned, UnsignedLong, UnsignedLongLong]
    );
    assert_eq!(PvarClass::Aggregate.allowed_datatypes(), &four);
    assert_eq!(PvarClass::Timer.allowed_datatypes(), &four);
    assert_eq!(
        PvarClass::Generic.allowed_datatypes(),
        &Datatype::CVAR_PVAR_TYPES
    );
    assert_eq!(PvarClass::ALL.len(), 10);
    assert_eq!(
        PvarClass::HighWatermark.c_name(),
        "MPI_T_PVAR_CLASS_HIGHWATERMARK"
    );
}
