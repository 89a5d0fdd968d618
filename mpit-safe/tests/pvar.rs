//! Performance variables through the safe API on the installed MPI, after `MPI_Init` (MPICH
//! registers its pvars there). MPICH configured without `--enable-mpit-pvars` exports none,
//! which the tests say and accept; everywhere else (Open MPI, Intel MPI, mpich-ev) they must
//! find some.

use mpit_safe::{Bind, Error, ErrorClass, Monotonicity, NoObject, Value};
use mpit_test_support::mpi::{material, turn_after_init as turn};

fn as_f64(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// MPI-4.1 §16.3.7: for every unbound pvar, a handle reads `count` elements; start/stop of a
/// continuous variable and write/reset of a read-only one are refused with the standard's
/// classes; a monotone class does not decrease between two reads without a reset.
#[test]
fn unbound_pvars_follow_their_attributes() {
    let t = turn();
    let pvars = t.mpit.pvars().unwrap();
    if pvars.count == 0 {
        assert!(
            !material().pvars,
            "{}: no performance variables after MPI_Init where some are required",
            mpit_safe::implementation()
        );
        eprintln!(
            "{}: no performance variables after MPI_Init: nothing to check",
            mpit_safe::implementation()
        );
        return;
    }
    let session = t.mpit.session().unwrap();
    let mut checked = 0;
    for v in pvars.entries.iter().filter(|v| v.bind == Bind::NoObject) {
        let h = match session.dyn_handle(v.index, &NoObject) {
            Err(Error::KnownCrash(why)) => {
                eprintln!("{}: refused: {why}", v.name);
                continue;
            }
            h => h.unwrap(),
        };
        if v.continuous {
            assert!(matches!(
                h.start(),
                Err(Error::Mpi {
                    class: ErrorClass::PvarNoStartStop,
                    ..
                })
            ));
            assert!(matches!(
                h.stop(),
                Err(Error::Mpi {
                    class: ErrorClass::PvarNoStartStop,
                    ..
                })
            ));
        } else {
            h.start().unwrap();
        }
        let first = h.read_values().unwrap();
        assert_eq!(first.len(), h.count(), "{}", v.name);
        let second = h.read_values().unwrap();
        match v.class.monotonicity() {
            Monotonicity::NonDecreasing => {
                for (a, b) in first.iter().zip(&second) {
                    assert!(as_f64(b) >= as_f64(a), "{}: {a} -> {b}", v.name);
                }
            }
            Monotonicity::NonIncreasing => {
                for (a, b) in first.iter().zip(&second) {
                    assert!(as_f64(b) <= as_f64(a), "{}: {a} -> {b}", v.name);
                }
            }
            Monotonicity::None => {}
        }
        if v.readonly {
            assert!(matches!(
                h.reset(),
                Err(Error::Mpi {
                    class: ErrorClass::PvarNoWrite,
                    ..
                })
            ));
        }
        if !v.class.allows(v.datatype) {
            eprintln!(
                "finding: {} is {} but has datatype {}",
                v.name, v.class, v.datatype
            );
        }
        if !v.continuous {
            h.stop().unwrap();
        }
        checked += 1;
    }
    assert!(checked > 0, "no unbound pvar could be checked");
    eprintln!(
        "{}: checked {checked} unbound pvars of {} after MPI_Init",
        mpit_safe::implementation(),
        pvars.count
    );
}

/// MPI-4.1 §16.3.7: `MPI_T_PVAR_ALL_HANDLES` starts, stops and resets a session's handles,
/// ignoring continuous (start/stop) and read-only (reset) ones.
#[test]
fn all_handles_calls_succeed() {
    let t = turn();
    let pvars = t.mpit.pvars().unwrap();
    let session = t.mpit.session().unwrap();
    let handles: Vec<_> = pvars
        .entries
        .iter()
        .filter(|v| v.bind == Bind::NoObject)
        .filter_map(|v| match session.dyn_handle(v.index, &NoObject) {
            Err(Error::KnownCrash(_)) => None,
            h => Some(h.unwrap()),
        })
        .collect();
    match session.start_all() {
        // Only the ABI build's guard of MPICH's ABI library (a refusal anywhere else fails
        // below); all three calls are refused.
        Err(Error::KnownCrash(q)) if cfg!(mpit_abi) => {
            assert_eq!(q.id, "mpich-abi-pvar-all-handles");
            assert!(mpit_safe::quirks::applies(q), "{}", q.id);
            assert!(matches!(session.stop_all(), Err(Error::KnownCrash(_))));
            assert!(matches!(session.reset_all(), Err(Error::KnownCrash(_))));
            eprintln!("all-handles calls refused: {}", q.id);
            return;
        }
        r => r.unwrap(),
    }
    session.stop_all().unwrap();
    session.reset_all().unwrap();
    eprintln!("all-handles calls on {} handles", handles.len());
}
