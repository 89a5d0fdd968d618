//! Properties of the owned info records: validation against the rules of
//! MPI-4.1 §16.3.5–§16.3.9, event data layout and source timestamps
//! (§16.3.8), and the error classes (§16.3.10).

use core::time::Duration;

use mpit_core::{
    Bind, CategoryInfo, CvarInfo, Datatype, EnumInfo, EnumItem, Error, ErrorClass, EventElement,
    EventTypeInfo, MpiString, PvarClass, PvarInfo, Scope, SourceInfo, SourceOrder, Value,
    Verbosity, Violation,
};
use proptest::prelude::*;
use proptest::sample::select;

fn s(x: &str) -> MpiString {
    MpiString::new(x).unwrap()
}

fn pvar(class: PvarClass, datatype: Datatype) -> PvarInfo {
    PvarInfo {
        index: 1,
        name: s("v"),
        verbosity: Verbosity::USER_BASIC,
        class,
        datatype,
        enumtype: None,
        description: MpiString::default(),
        bind: Bind::NoObject,
        readonly: false,
        continuous: false,
        atomic: false,
    }
}

fn source(ticks_per_second: u64, max_ticks: u64) -> SourceInfo {
    SourceInfo {
        index: 0,
        name: s("src"),
        description: MpiString::default(),
        ordering: SourceOrder::Unordered,
        ticks_per_second,
        max_ticks,
    }
}

/// Elements laid out back to back from 0, as §16.3.8.3 requires.
fn packed(types: &[Datatype]) -> Vec<EventElement> {
    let mut d = 0isize;
    types
        .iter()
        .map(|&datatype| {
            let e = EventElement {
                datatype,
                displacement: d,
            };
            d += datatype.size() as isize;
            e
        })
        .collect()
}

fn event(elements: Vec<EventElement>) -> EventTypeInfo {
    EventTypeInfo {
        index: 0,
        name: s("ev"),
        verbosity: Verbosity::MPIDEV_ALL,
        elements,
        enumtype: None,
        description: MpiString::default(),
        bind: Bind::NoObject,
    }
}

proptest! {
    /// §16.3.7: validation reports a class/datatype violation exactly when
    /// the class does not allow the datatype.
    #[test]
    fn pvar_validate_matches_class_rule(class in select(PvarClass::ALL), dt in select(Datatype::ALL)) {
        let v = pvar(class, dt).validate();
        let expected = if class.allows(dt) {
            vec![]
        } else {
            vec![Violation::DatatypeNotAllowedForClass { class, datatype: dt }]
        };
        prop_assert_eq!(v, expected);
    }

    /// §16.3.5: an enumeration describes MPI_INT values only.
    #[test]
    fn enumtype_requires_int(dt in select(Datatype::ALL)) {
        let mut c = CvarInfo {
            index: 0,
            name: s("c"),
            verbosity: Verbosity::USER_BASIC,
            datatype: dt,
            enumtype: Some(std::sync::Arc::new(EnumInfo { name: s("e"), items: vec![EnumItem { value: 0, name: s("a") }] })),
            description: MpiString::default(),
            bind: Bind::NoObject,
            scope: Scope::Readonly,
        };
        let v = c.validate();
        prop_assert_eq!(v.contains(&Violation::EnumtypeRequiresInt { datatype: dt }), dt != Datatype::Int);
        prop_assert_eq!(v.contains(&Violation::DatatypeNotAllowed { datatype: dt }), !dt.is_cvar_pvar_type());
        c.enumtype = None;
        let flagged = c.validate().contains(&Violation::EnumtypeRequiresInt { datatype: dt });
        prop_assert!(!flagged);
    }

    /// §16.3.8.3: a packed layout from displacement 0 is valid, its extent is
    /// the sum of the sizes, and decoding a copy buffer gives back each
    /// element's value.
    #[test]
    fn event_layout_and_decode(types in proptest::collection::vec(select(Datatype::ALL), 0..8), seed in any::<u8>()) {
        let ev = event(packed(&types));
        prop_assert!(ev.validate().is_empty());
        let extent: usize = types.iter().map(|d| d.size()).sum();
        prop_assert_eq!(ev.extent(), Some(extent));
        let mut buf = Vec::new();
        let mut expected = Vec::new();
        for (i, &dt) in types.iter().enumerate() {
            let byte = if dt == Datatype::CBool { (seed as usize + i) as u8 & 1 } else { seed.wrapping_add(i as u8) };
            let bytes = vec![byte; dt.size()];
            expected.push(Value::from_ne_bytes(dt, &bytes).unwrap());
            buf.extend(bytes);
        }
        // Compared as bytes: a byte pattern may decode to a NaN, which is not equal to itself.
        let bytes = |vs: &[Value]| vs.iter().map(Value::to_ne_bytes).collect::<Vec<_>>();
        prop_assert_eq!(bytes(&ev.decode(&buf).unwrap()), bytes(&expected));
        if extent > 0 {
            prop_assert_eq!(
                ev.decode(&buf[..extent - 1]),
                Err(Error::size_mismatch(extent, extent - 1))
            );
        }
    }

    /// §16.3.8.3: displacements ascend from zero without overlap; a layout
    /// that starts elsewhere or overlaps is reported.
    #[test]
    fn event_layout_violations(types in proptest::collection::vec(select(Datatype::ALL), 2..6), shift in 1isize..4) {
        let mut elements = packed(&types);
        elements[0].displacement = shift;
        let v = event(elements.clone()).validate();
        let flagged = v.contains(&Violation::FirstDisplacementNotZero { displacement: shift });
        prop_assert!(flagged);
        elements[0].displacement = 0;
        elements[1].displacement = 0;
        let overlap = event(elements).validate().contains(&Violation::ElementsOverlap { element: 1 });
        prop_assert!(overlap);
    }

    /// §16.3.8.1: timestamps beyond max_ticks have overflowed and have no
    /// duration; otherwise the conversion is exact to the nanosecond and
    /// never overflows.
    #[test]
    fn ticks_to_duration_is_exact(tps in 0u64..=u64::MAX, max in any::<u64>(), ticks in any::<u64>()) {
        let d = source(tps, max).ticks_to_duration(ticks);
        if ticks > max || tps == 0 {
            prop_assert_eq!(d, None);
        } else {
            let d = d.unwrap();
            let expected_nanos = u128::from(ticks) * 1_000_000_000 / u128::from(tps);
            prop_assert_eq!(d.as_nanos(), expected_nanos);
        }
    }

    /// §16.3.9: a category's declared member counts must match the members
    /// listed; a category never contains itself.
    #[test]
    fn category_counts(n in 0usize..5, declared in 0usize..5, index in 0usize..10) {
        let c = CategoryInfo {
            index,
            name: s("cat"),
            description: MpiString::default(),
            num_cvars: declared,
            num_pvars: 0,
            num_categories: 1,
            num_events: None,
            cvars: (0..n).collect(),
            pvars: vec![],
            categories: vec![3],
            events: vec![],
        };
        let v = c.validate();
        prop_assert_eq!(
            v.contains(&Violation::MemberCountMismatch { what: "cvars", declared, listed: n }),
            n != declared
        );
        prop_assert_eq!(v.contains(&Violation::CategoryContainsItself), index == 3);
    }

    /// §16.3.10: every error class maps to an error that keeps the raw code
    /// and maps back to the class.
    #[test]
    fn error_class_round_trip(class in select(ErrorClass::ALL), code in any::<i32>()) {
        let e = Error::from_class(class, code);
        prop_assert_eq!(e.class(), Some(class));
        prop_assert_eq!(e.raw_code(), Some(code));
        prop_assert!(e.to_string().contains(class.c_name()));
        prop_assert!(e.to_string().contains(&code.to_string()));
    }
}

/// §16.3.5: enumeration item names are unique and non-empty; lookups go
/// both ways.
#[test]
fn enum_rules() {
    let e = EnumInfo {
        name: s("mode"),
        items: vec![
            EnumItem {
                value: 0,
                name: s("off"),
            },
            EnumItem {
                value: 5,
                name: s("on"),
            },
            EnumItem {
                value: 7,
                name: s("on"),
            },
            EnumItem {
                value: 9,
                name: MpiString::default(),
            },
        ],
    };
    assert_eq!(e.name_of(5).unwrap(), "on");
    assert_eq!(e.name_of(1), None);
    assert_eq!(e.value_of("off"), Some(0));
    assert_eq!(
        e.validate(),
        [
            Violation::DuplicateItemName { name: s("on") },
            Violation::EmptyItemName { item: 3 }
        ]
    );
    let unnamed = EnumInfo {
        name: MpiString::default(),
        items: vec![],
    };
    assert_eq!(unnamed.validate(), [Violation::EmptyName]);
    for v in e.validate() {
        assert!(!v.to_string().is_empty());
    }
}

/// A source timer at 1 GHz maps ticks to nanoseconds; `max_ticks` bounds it.
#[test]
fn source_durations() {
    let src = source(1_000_000_000, 10_000_000_000);
    assert_eq!(src.ticks_to_duration(0), Some(Duration::ZERO));
    assert_eq!(
        src.ticks_to_duration(10_000_000_000),
        Some(Duration::from_secs(10))
    );
    assert_eq!(src.ticks_to_duration(10_000_000_001), None);
    assert_eq!(
        source(3, u64::MAX).ticks_to_duration(1),
        Some(Duration::from_nanos(333_333_333))
    );
}

/// A negative displacement has no extent and cannot be decoded.
#[test]
fn negative_displacement() {
    let ev = event(vec![EventElement {
        datatype: Datatype::Int,
        displacement: -4,
    }]);
    assert_eq!(ev.extent(), None);
    assert!(matches!(ev.decode(&[0; 16]), Err(Error::InvalidValue(_))));
}

/// The records validate clean when they follow the standard.
#[test]
fn clean_records() {
    let p = pvar(PvarClass::State, Datatype::Int);
    assert!(p.validate().is_empty());
    assert_eq!(
        p.tracker().derived_metric(),
        PvarClass::State.derived_metric()
    );
    let mut unnamed = pvar(PvarClass::Counter, Datatype::Unsigned);
    unnamed.name = MpiString::default();
    assert_eq!(unnamed.validate(), [Violation::EmptyName]);
}
