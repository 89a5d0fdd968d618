//! Event sources and event types through the safe API (MPI-4.1 §16.3.8), after `MPI_Init`
//! (MPICH registers them there). Where the header has no event API (Open MPI 4.1/5.0) the API
//! is absent and this test says so; MPICH without `--enable-mpit-events` and Intel MPI declare
//! it but have no sources or event types (the test checks counts, listings and refusals and
//! says so); on MPICH with `--enable-mpit-events` (mpich-ev) both must exist and every query
//! about them must work without crashing (its event types' `enumtype` is never used).

mod common;

#[cfg(mpit_events)]
#[test]
fn event_queries_follow_the_standard() {
    use mpit_safe::{Error, ErrorClass};
    let t = common::turn_after_init();
    let mpit = &t.mpit;
    let (ne, ns) = (mpit.event_count().unwrap(), mpit.source_count().unwrap());
    if common::material().events {
        assert!(
            ne > 0 && ns > 0,
            "{ne} event types, {ns} sources after MPI_Init"
        );
    } else if ne == 0 && ns == 0 {
        eprintln!(
            "{}: no event types or sources after MPI_Init: only counts and refusals checked",
            mpit_safe::implementation()
        );
    }
    let events = mpit.events().unwrap();
    let sources = mpit.sources().unwrap();
    assert_eq!(events.count, ne);
    assert_eq!(sources.count, ns);
    assert!(
        events.holes.is_empty(),
        "event type holes: {:?}",
        events.holes
    );
    assert!(
        sources.holes.is_empty(),
        "source holes: {:?}",
        sources.holes
    );
    for e in &events.entries {
        assert!(!e.name.is_empty() && !e.elements.is_empty(), "{e:?}");
        assert!(e.elements.first().is_some_and(|el| el.displacement == 0));
        mpit.event_hints(e.index).unwrap();
        // §16.3.8.3: displacements ascend from zero; name -> index round trip.
        assert!(
            e.elements
                .windows(2)
                .all(|w| w[0].displacement < w[1].displacement)
        );
        let name = e.name.to_str().unwrap();
        assert_eq!(mpit.event_index(name).unwrap(), Some(e.index));
    }
    for s in &sources.entries {
        assert!(!s.name.is_empty(), "source {} has no name", s.index);
        mpit.source_hints(s.index).unwrap();
        match mpit.source_timestamp(s.index) {
            Ok(_)
            | Err(Error::Mpi {
                class: ErrorClass::NotSupported,
                ..
            }) => {}
            Err(e) => panic!("{}: timestamp: {e}", s.name),
        }
    }
    // Out of range: a typed error, never a call into the implementation with a bad index.
    assert!(matches!(
        mpit.event_info(ne),
        Err(Error::Mpi {
            class: ErrorClass::InvalidIndex,
            ..
        })
    ));
    assert!(matches!(
        mpit.source_info(ns),
        Err(Error::Mpi {
            class: ErrorClass::InvalidIndex,
            ..
        })
    ));
    assert!(matches!(
        mpit.source_timestamp(ns),
        Err(Error::Mpi {
            class: ErrorClass::InvalidIndex,
            ..
        })
    ));
    assert_eq!(mpit.event_index("mpit_rs_no_such_event").unwrap(), None);
    // Registration for an event type that does not exist: refused before MPI is called.
    let r = mpit.register_event(ne, &mpit_safe::NoObject);
    assert!(
        matches!(
            r,
            Err(Error::Mpi {
                class: ErrorClass::InvalidIndex,
                ..
            })
        ),
        "{r:?}"
    );
    // Categories report their events where the API exists.
    for c in mpit.categories().unwrap().entries {
        assert_eq!(c.num_events, Some(c.events.len()));
        assert!(c.events.iter().all(|&i| i < ne));
    }
    eprintln!(
        "{}: {ne} event types ({}), {ns} sources ({}) after MPI_Init",
        mpit_safe::implementation(),
        events
            .entries
            .iter()
            .map(|e| e.name.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        sources
            .entries
            .iter()
            .map(|s| s.name.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
}

#[cfg(not(mpit_events))]
#[test]
fn event_queries_follow_the_standard() {
    // The rest of MPI_T works as usual.
    let t = common::turn();
    assert!(t.mpit.cvar_count().is_ok());
    eprintln!(
        "{} {}: no MPI-4 event API in this header; the event queries are not compiled",
        mpit_safe::sys::IMPLEMENTATION,
        mpit_safe::sys::IMPLEMENTATION_VERSION
    );
}
