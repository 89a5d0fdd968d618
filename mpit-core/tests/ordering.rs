//! Properties of the ordered and named constants: verbosity (MPI-4.1
//! §16.3.1), binding (§16.3.2), scope (§16.3.6), callback safety and source
//! ordering (§16.3.8), error classes (§16.3.10).

use mpit_core::{
    Audience, Bind, CbSafety, Datatype, Detail, ErrorClass, PvarClass, Scope, SourceOrder,
    Verbosity,
};
use proptest::prelude::*;
use proptest::sample::select;

fn verbosity() -> impl Strategy<Value = Verbosity> {
    select(&Verbosity::ALL_LEVELS[..])
}

fn cb_safety() -> impl Strategy<Value = CbSafety> {
    select(CbSafety::ALL)
}

proptest! {
    /// §16.3.1: the constants are monotonic in the order listed, which sorts
    /// by audience (user, tuner, mpidev) and then by detail (basic, detail,
    /// all): Verbosity's order is the lexicographic order of the pair.
    #[test]
    fn verbosity_order_is_audience_then_detail(a in verbosity(), b in verbosity()) {
        prop_assert_eq!(a.cmp(&b), (a.audience(), a.detail()).cmp(&(b.audience(), b.detail())));
        prop_assert_eq!(a.cmp(&b), a.position().cmp(&b.position()));
    }

    /// §16.3.1: the order is total and antisymmetric (a level is equal only
    /// to itself).
    #[test]
    fn verbosity_order_is_total(a in verbosity(), b in verbosity()) {
        prop_assert!(a <= b || b <= a);
        prop_assert_eq!(a <= b && b <= a, a == b);
    }

    /// §16.3.1: the order is transitive.
    #[test]
    fn verbosity_order_is_transitive(a in verbosity(), b in verbosity(), c in verbosity()) {
        if a <= b && b <= c {
            prop_assert!(a <= c);
        }
    }

    /// §16.3.1: each of the nine levels has one position in the standard's
    /// list, and the position identifies it.
    #[test]
    fn verbosity_position_round_trips(v in verbosity()) {
        prop_assert_eq!(Verbosity::from_position(v.position()), Some(v));
        prop_assert_eq!(Verbosity::ALL_LEVELS[v.position()], v);
        prop_assert_eq!(Verbosity::new(v.audience(), v.detail()), v);
    }

    /// §16.3.1: the name (USER_BASIC ...) and the C name
    /// (MPI_T_VERBOSITY_USER_BASIC ...) both parse back to the level.
    #[test]
    fn verbosity_display_from_str_round_trip(v in verbosity()) {
        prop_assert_eq!(v.to_string().parse::<Verbosity>().unwrap(), v);
        prop_assert_eq!(v.c_name().parse::<Verbosity>().unwrap(), v);
        prop_assert_eq!(v.to_string().to_lowercase().parse::<Verbosity>().unwrap(), v);
    }

    /// Any string that is not a level name is a typed error, not a panic.
    #[test]
    fn verbosity_from_str_rejects_garbage(s in "\\PC*") {
        let known = Verbosity::ALL_LEVELS.iter().any(|v| {
            v.name().eq_ignore_ascii_case(s.trim()) || v.c_name().eq_ignore_ascii_case(s.trim())
        });
        prop_assert_eq!(s.parse::<Verbosity>().is_ok(), known);
    }

    /// §16.3.8.2: the safety levels form a hierarchy (a total order).
    #[test]
    fn cb_safety_order_is_total(a in cb_safety(), b in cb_safety()) {
        prop_assert!(a <= b || b <= a);
        prop_assert_eq!(a <= b && b <= a, a == b);
    }

    /// §16.3.8.4: a callback registered with maximum level L may be invoked
    /// in any context requiring at most L, and in no other.
    #[test]
    fn cb_safety_sufficient_iff_at_least_required(registered in cb_safety(), required in cb_safety()) {
        prop_assert_eq!(registered.sufficient_for(required), required <= registered);
    }

    /// §16.3.8.2: each level includes the restrictions of the levels below,
    /// so sufficiency is transitive.
    #[test]
    fn cb_safety_sufficient_is_transitive(a in cb_safety(), b in cb_safety(), c in cb_safety()) {
        if a.sufficient_for(b) && b.sufficient_for(c) {
            prop_assert!(a.sufficient_for(c));
        }
    }

    /// §16.3.8.2: assuming the highest restriction is always safe.
    #[test]
    fn cb_safety_strictest_suffices_for_everything(required in cb_safety()) {
        prop_assert!(CbSafety::STRICTEST.sufficient_for(required));
        prop_assert!(required.sufficient_for(CbSafety::None));
    }

    /// §16.3.6: a collective scope is writable; a scope that requires equal
    /// values is collective; only CONSTANT has a value that cannot change.
    #[test]
    fn scope_invariants(s in select(Scope::ALL)) {
        if s.is_collective() {
            prop_assert!(s.is_writable());
        }
        if s.requires_equal_values() {
            prop_assert!(s.is_collective());
        }
        if s.is_writable() {
            prop_assert!(s.value_may_change());
        }
        prop_assert_eq!(s.value_may_change(), s != Scope::Constant);
    }

    /// §16.3.2: only NO_OBJECT needs no object, and every other binding names
    /// its C object type.
    #[test]
    fn bind_object_iff_not_no_object(b in select(Bind::ALL)) {
        prop_assert_eq!(b.is_object(), b != Bind::NoObject);
        prop_assert_eq!(b.object_type().is_some(), b.is_object());
    }
}

/// The C names of every family are unique, carry the family's prefix, and
/// round-trip through Display/FromStr.
#[test]
fn names_round_trip_for_every_family() {
    fn check<T>(all: &[T], prefix: &str)
    where
        T: Copy + PartialEq + core::fmt::Debug + core::fmt::Display + core::str::FromStr,
        T::Err: core::fmt::Debug,
    {
        for (i, &v) in all.iter().enumerate() {
            let shown = v.to_string();
            assert_eq!(shown.parse::<T>().unwrap(), v);
            assert_eq!(format!("{prefix}{shown}").parse::<T>().unwrap(), v);
            for &w in &all[..i] {
                assert_ne!(w.to_string(), shown);
            }
        }
    }
    check(Bind::ALL, "MPI_T_BIND_");
    check(Scope::ALL, "MPI_T_SCOPE_");
    check(PvarClass::ALL, "MPI_T_PVAR_CLASS_");
    check(CbSafety::ALL, "MPI_T_CB_REQUIRE_");
    check(SourceOrder::ALL, "MPI_T_SOURCE_");
    check(ErrorClass::ALL, "MPI_T_ERR_");
    check(Datatype::ALL, "");
    check(&Verbosity::ALL_LEVELS, "MPI_T_VERBOSITY_");
    assert!("MPI_T_BIND_NOPE".parse::<Bind>().is_err());
}

/// §16.3.1 lists exactly nine levels: three audiences times three details,
/// in that order.
#[test]
fn nine_levels_in_the_standards_order() {
    let expected: Vec<Verbosity> = Audience::ALL
        .iter()
        .flat_map(|&a| Detail::ALL.iter().map(move |&d| Verbosity::new(a, d)))
        .collect();
    assert_eq!(Verbosity::ALL_LEVELS.to_vec(), expected);
    assert!(Verbosity::ALL_LEVELS.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(Verbosity::USER_BASIC.c_name(), "MPI_T_VERBOSITY_USER_BASIC");
    assert_eq!(Verbosity::MPIDEV_ALL.to_string(), "MPIDEV_ALL");
}

/// §16.3.2 of MPI-4.1 has twelve bindings, including MPI_T_BIND_MPI_SESSION.
#[test]
fn bindings_of_mpi_4_1() {
    assert_eq!(Bind::ALL.len(), 12);
    assert_eq!(Bind::Session.c_name(), "MPI_T_BIND_MPI_SESSION");
    assert_eq!(Scope::ALL.len(), 7);
    assert_eq!(CbSafety::ALL.len(), 4);
    assert!(CbSafety::ALL.windows(2).all(|w| w[0] < w[1]));
}
