//! The visitors (`Mpit::visit_cvars`, `visit_pvars`, `visit_categories`) show exactly what the
//! owned listings hold, entry by entry, after `MPI_Init` (a record that does not decode, kept
//! with `to_owned`, is the listing's hole of that index); a `Break` stops them at once; a
//! variable's enumeration, resolved on demand, is the listing's, and one enumeration is
//! resolved once per visit.

use mpit_test_support::mpi::turn_after_init as turn;

use std::ops::ControlFlow;
use std::sync::Arc;

use mpit_safe::{CategoryInfo, CvarInfo, Listing, PvarInfo, Visited};

/// What a visit found: the count, and the holes as a listing has them.
struct Found {
    count: usize,
    holes: Vec<(usize, mpit_safe::Error)>,
}

/// The records a visit showed, kept with `to_owned` (`(index, Ok(record))`, or the error of a
/// record that does not decode), and what it found besides.
fn kept<T, B: std::fmt::Debug>(
    visit: impl FnOnce(
        &mut dyn FnMut(usize, mpit_safe::Result<T>),
    ) -> mpit_safe::Result<ControlFlow<B, Visited>>,
) -> (Vec<T>, Found) {
    let mut seen = Vec::new();
    let mut undecoded = Vec::new();
    let visited = match visit(&mut |i, r| match r {
        Ok(r) => seen.push(r),
        Err(e) => undecoded.push((i, e)),
    })
    .expect("visit")
    {
        ControlFlow::Continue(v) => v,
        ControlFlow::Break(b) => panic!("broke with {b:?} without being asked to"),
    };
    // The listing's holes: the failed queries and the records that did not decode.
    let mut holes: Vec<_> = visited.holes.into();
    holes.extend(undecoded);
    holes.sort_by_key(|(i, _)| *i);
    let count = visited.count;
    (seen, Found { count, holes })
}

/// The visit showed what the listing holds, in the same order, with the same count and holes.
fn same<T: PartialEq + std::fmt::Debug>(what: &str, seen: &[T], visited: &Found, l: &Listing<T>) {
    assert_eq!(visited.count, l.count, "{what}: count");
    assert_eq!(visited.holes, l.holes, "{what}: holes");
    assert_eq!(seen.len(), l.entries.len(), "{what}: entries");
    for (s, e) in seen.iter().zip(&l.entries) {
        assert_eq!(s, e, "{what}");
    }
    eprintln!(
        "{} {}: {what}: {} shown, {} holes",
        mpit_safe::sys::IMPLEMENTATION,
        mpit_safe::sys::IMPLEMENTATION_VERSION,
        seen.len(),
        visited.holes.len()
    );
}

/// MPI-4.1 §16.3.6, §16.3.7, §16.3.9: every record a visitor shows, kept, equals the listing's
/// entry of the same index, enumeration included.
#[test]
fn visitors_show_what_listings_hold() {
    let t = turn();
    let mpit = &t.mpit;
    let cvars = mpit.cvars().unwrap();
    assert!(!cvars.entries.is_empty());
    let (seen, visited) = kept::<CvarInfo, ()>(|keep| {
        mpit.visit_cvars(|v| {
            assert_eq!(v.has_enumtype(), v.enumtype().unwrap().is_some());
            keep(v.index(), v.to_owned());
            ControlFlow::Continue(())
        })
    });
    same("cvars", &seen, &visited, &cvars);

    let pvars = mpit.pvars().unwrap();
    let (seen, visited) = kept::<PvarInfo, ()>(|keep| {
        mpit.visit_pvars(|v| {
            keep(v.index(), v.to_owned());
            ControlFlow::Continue(())
        })
    });
    same("pvars", &seen, &visited, &pvars);

    let categories = mpit.categories().unwrap();
    assert!(!categories.entries.is_empty());
    let (seen, visited) = kept::<CategoryInfo, ()>(|keep| {
        mpit.visit_categories(|c| {
            assert_eq!(c.cvars().len(), c.num_cvars());
            keep(c.index(), Ok(c.to_owned()));
            ControlFlow::Continue(())
        })
    });
    same("categories", &seen, &visited, &categories);
}

/// The borrowed fields are the owned record's without keeping it: strings compare equal to
/// the listing's, typed fields decode to the same; a record the listing could not decode is
/// a hole there and fails to decode here.
#[test]
fn borrowed_fields_equal_owned_ones() {
    let t = turn();
    let mpit = &t.mpit;
    let cvars = mpit.cvars().unwrap();
    let mut entries = cvars.entries.iter().peekable();
    let r = mpit.visit_cvars(|v| {
        if entries.peek().is_none_or(|e| e.index != v.index()) {
            assert!(cvars.holes.iter().any(|(i, _)| *i == v.index()));
            assert!(v.to_owned().is_err(), "{v:?}");
            return ControlFlow::Continue(());
        }
        let e = entries.next().expect("more shown than listed");
        assert_eq!(v.index(), e.index);
        assert_eq!(v.name(), e.name);
        assert_eq!(e.description, v.description());
        assert_eq!(v.name().to_str().ok(), e.name.to_str().ok());
        assert_eq!(v.name().to_string(), e.name.to_string());
        assert_eq!(format!("{:?}", v.name()), format!("{:?}", e.name));
        assert_eq!(
            (
                v.verbosity().unwrap(),
                v.datatype().unwrap(),
                v.bind().unwrap(),
                v.scope().unwrap()
            ),
            (e.verbosity, e.datatype, e.bind, e.scope)
        );
        ControlFlow::<()>::Continue(())
    });
    assert!(matches!(r, Ok(ControlFlow::Continue(_))));
    assert!(entries.next().is_none());
}

/// `Break` ends a visit: the visitor is not called again, and the value comes back. (Holes
/// are not shown: Open MPI has indices whose query fails after `MPI_Init`.)
#[test]
fn break_stops_the_visit() {
    let t = turn();
    let mpit = &t.mpit;
    let cvars = mpit.cvars().unwrap();
    assert!(cvars.entries.len() >= 3);
    let half = cvars.entries.len() / 2;
    let stop_at = cvars.entries[half].index;
    let mut calls = 0;
    let r = mpit.visit_cvars(|v| {
        calls += 1;
        if v.index() == stop_at {
            ControlFlow::Break(v.name().to_mpi_string())
        } else {
            ControlFlow::Continue(())
        }
    });
    let name = match r.unwrap() {
        ControlFlow::Break(name) => name,
        ControlFlow::Continue(_) => panic!("no break"),
    };
    assert_eq!(calls, half + 1);
    assert_eq!(name, mpit.cvar_info(stop_at).unwrap().name);

    let first = |indices: Vec<usize>| indices.first().copied();
    let categories = mpit.categories().unwrap();
    let first_category = first(categories.entries.iter().map(|c| c.index).collect());
    breaks_at_once(first_category, |f| mpit.visit_categories(|c| f(c.index())));
    let first_pvar = first(
        mpit.pvars()
            .unwrap()
            .entries
            .iter()
            .map(|p| p.index)
            .collect(),
    );
    breaks_at_once(first_pvar, |f| mpit.visit_pvars(|p| f(p.index())));
}

/// A visit through `visit` whose visitor (given the index shown) breaks at once: called once,
/// with the first index of the listing, which comes back; not called where nothing is listed.
fn breaks_at_once(
    first: Option<usize>,
    visit: impl FnOnce(
        &mut dyn FnMut(usize) -> ControlFlow<usize>,
    ) -> mpit_safe::Result<ControlFlow<usize, Visited>>,
) {
    let mut calls = 0;
    let r = visit(&mut |index| {
        calls += 1;
        ControlFlow::Break(index)
    });
    match first {
        Some(i) => assert!(matches!(r, Ok(ControlFlow::Break(b)) if b == i), "{r:?}"),
        None => assert!(matches!(r, Ok(ControlFlow::Continue(_))), "{r:?}"),
    }
    assert_eq!(calls, usize::from(first.is_some()));
}

/// MPI-4.1 §16.3.5: the enumeration a visit resolves on demand is the one the listing holds,
/// and variables that share a handle share one resolved enumeration (one `Arc`).
#[test]
fn enumerations_resolve_on_demand_once_per_visit() {
    let t = turn();
    let mpit = &t.mpit;
    let cvars = mpit.cvars().unwrap();
    let mut resolved = Vec::new();
    let visited = mpit.visit_cvars(|v| {
        if let Some(e) = v.enumtype().unwrap() {
            // Asked twice: the same enumeration, not resolved again.
            assert!(Arc::ptr_eq(&e, &v.enumtype().unwrap().unwrap()));
            resolved.push((v.index(), e));
        }
        ControlFlow::<()>::Continue(())
    });
    assert!(matches!(visited, Ok(ControlFlow::Continue(_))));
    let listed: Vec<_> = cvars
        .entries
        .iter()
        .filter_map(|v| v.enumtype.as_ref().map(|e| (v.index, e)))
        .collect();
    assert_eq!(resolved.len(), listed.len());
    for ((i, e), (j, l)) in resolved.iter().zip(&listed) {
        assert_eq!(i, j);
        assert_eq!(e, *l, "cvar {i}");
    }
    // The listing shares its enumerations as the visit does: one per handle.
    let distinct = |ptrs: &mut dyn Iterator<Item = *const mpit_safe::EnumInfo>| {
        let mut ptrs: Vec<_> = ptrs.collect();
        ptrs.sort();
        ptrs.dedup();
        ptrs.len()
    };
    let shared = distinct(&mut resolved.iter().map(|(_, e)| Arc::as_ptr(e)));
    assert_eq!(
        shared,
        distinct(&mut listed.iter().map(|(_, e)| Arc::as_ptr(e)))
    );
    eprintln!(
        "{} cvars with an enumeration, {shared} distinct resolved",
        resolved.len()
    );
}
