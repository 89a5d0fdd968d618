//! Event sources and event types through the safe API (MPI-4.1 §16.3.8), after `MPI_Init`
//! (MPICH registers them there). Where the header has no event API (Open MPI 4.1/5.0) the same
//! API compiles and every call must answer `Error::NotSupported(Feature::Events)`; MPICH without `--enable-mpit-events` and Intel MPI declare
//! it but have no sources or event types (the test checks counts, listings and refusals and
//! says so); on MPICH with `--enable-mpit-events` (mpich-ev) both must exist and every query
//! about them must work without crashing (its event types' `enumtype` is never used).

use mpit_test_support::mpi as common;

#[test]
fn event_queries_follow_the_standard() {
    use mpit_safe::{Error, ErrorClass};
    let t = common::turn_after_init();
    let mpit = &t.mpit;
    if !mpit_safe::features().events {
        assert!(
            !common::material().events,
            "this implementation must have events"
        );
        return every_event_call_is_not_supported(mpit);
    }
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

/// Without the event API in the header (MPI-4.0 §15.3.8 is new there): every entry point of
/// the safe event API exists and answers the typed `NotSupported`, with no raw code; categories
/// say that they cannot tell their events (`num_events: None`); the rest of MPI_T works.
fn every_event_call_is_not_supported(mpit: &mpit_safe::Mpit) {
    use mpit_safe::Error;
    use mpit_safe::error::Feature;
    use mpit_safe::{CbSafety, ErrorClass, NoObject};

    fn refused<T: std::fmt::Debug>(what: &str, r: mpit_safe::Result<T>) {
        match r {
            Err(e @ Error::NotSupported(Feature::Events)) => {
                assert!(e.is(ErrorClass::NotSupported), "{what}: {e:?}");
                assert_eq!(e.raw_code(), None, "{what}");
            }
            other => panic!("{what}: {other:?}, expected NotSupported(Events)"),
        }
    }
    let f = mpit_safe::features();
    assert!(!f.events && !f.supports(Feature::Events));
    refused("event_count", mpit.event_count());
    refused("source_count", mpit.source_count());
    refused("events", mpit.events().map(|l| l.count));
    refused("sources", mpit.sources().map(|l| l.count));
    refused("event_info", mpit.event_info(0));
    refused("event_hints", mpit.event_hints(0).map(|_| ()));
    refused("event_index", mpit.event_index("mpi_t_any_event"));
    refused("source_info", mpit.source_info(0));
    refused("source_hints", mpit.source_hints(0).map(|_| ()));
    refused("source_timestamp", mpit.source_timestamp(0));
    refused(
        "register_event",
        mpit.register_event(0, &NoObject).map(|_| ()),
    );
    refused(
        "event_registration",
        mpit.event_registration(0, &NoObject)
            .on_event(CbSafety::ThreadSafe, |_| {})
            .register()
            .map(|_| ()),
    );
    let cats = mpit.categories().unwrap();
    for c in &cats.entries {
        assert_eq!(c.num_events, None, "{}", c.name);
        assert!(c.events.is_empty(), "{}", c.name);
    }
    assert!(mpit.cvar_count().is_ok() && mpit.pvar_count().is_ok());
    eprintln!(
        "{}: no MPI-4 event API in this header; all 12 event entry points answered \
         NotSupported(Events), {} categories list no events",
        mpit_safe::implementation(),
        cats.entries.len()
    );
}
