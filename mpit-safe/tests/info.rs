//! Info objects: MPI-4 allows them at any time; MPI-3 only between MPI_Init and MPI_Finalize,
//! and Open MPI 4.1 (MPI-3.1) aborts the process otherwise, so there the safe API refuses with
//! a typed error and the caller keeps running (Open MPI 5.0.11, also MPI-3.1, accepts them).
//! One test: MPI_Init runs once per process.

// rsmpi in the native build; its names over the ABI library in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;
use mpit_safe::{Error, Info};

#[test]
fn info_objects_before_and_after_mpi_init() {
    // Refused exactly where the loaded library aborts on it.
    let mpi4 = !mpit_safe::quirks::applies(&mpit_safe::quirks::OPEN_MPI_INFO_OUTSIDE_INIT);
    match Info::new() {
        Ok(mut info) => {
            assert!(mpi4, "accepted where the quirk applies");
            info.set("k", "v").unwrap();
            assert_eq!(info.get("k").unwrap().as_deref(), Some("v"));
        }
        Err(Error::KnownCrash(why)) => {
            assert!(!mpi4);
            eprintln!("before MPI_Init: refused: {why}");
        }
        Err(e) => panic!("{e}"),
    }
    let universe = mpi::initialize().unwrap();
    let mut info = Info::new().unwrap();
    info.set("alpha", "1").unwrap();
    info.set("beta", "two words").unwrap();
    assert_eq!(info.get("missing").unwrap(), None);
    let mut entries = info.entries().unwrap();
    entries.sort();
    assert_eq!(
        entries,
        vec![
            ("alpha".to_owned(), "1".to_owned()),
            ("beta".to_owned(), "two words".to_owned())
        ]
    );
    assert!(info.set("a\0b", "x").is_err());
    drop(info);
    drop(universe);
}
