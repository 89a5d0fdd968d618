//! Variables that appear after `MPI_Init` are found by a refresh (MPI-4.1 §16.3.6/7/9: counts
//! may grow, indices never change or vanish). One test: `MPI_Init` runs once per process.

use mpit_safe::Mpit;
// rsmpi in the native build; its names over the ABI library in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;

#[test]
fn refresh_after_mpi_init_keeps_old_entries_and_adds_new_ones() {
    let mpit = Mpit::init().unwrap();
    let before = mpit.catalog().unwrap();
    let mut catalog = before.clone();
    let universe = mpi::initialize().expect("MPI_Init");
    let r = mpit.refresh(&mut catalog).unwrap();
    // Old entries are untouched, in place.
    assert_eq!(
        &catalog.cvars.entries[..before.cvars.entries.len()],
        &before.cvars.entries[..]
    );
    assert_eq!(
        &catalog.pvars.entries[..before.pvars.entries.len()],
        &before.pvars.entries[..]
    );
    // The refreshed catalog equals a listing made from scratch, for the indices it knew.
    let fresh = mpit.cvars().unwrap();
    assert_eq!(fresh.count, catalog.cvars.count);
    for e in &catalog.cvars.entries[before.cvars.entries.len()..] {
        assert!(
            fresh.entries.contains(e),
            "{} not in a fresh listing",
            e.name
        );
    }
    assert_eq!(r.new_cvars, before.cvars.count..fresh.count);
    // The standard forbids deleting a variable or changing its information; report whether
    // this implementation does (a finding about the MPI, not a failure of the API).
    let (mut vanished, mut changed) = (0, 0);
    for old in &before.cvars.entries {
        match fresh.entries.iter().find(|e| e.index == old.index) {
            None => vanished += 1,
            Some(now) if now != old => changed += 1,
            Some(_) => {}
        }
    }
    if vanished + changed > 0 {
        eprintln!(
            "finding: after MPI_Init {vanished} cvars known before became holes and {changed} \
             changed their information (MPI-4.1 §16.3.6 forbids both)"
        );
    }
    eprintln!(
        "{} {}: after MPI_Init {} new cvars, {} new pvars, categories changed: {}",
        mpit_safe::sys::IMPLEMENTATION,
        mpit_safe::sys::IMPLEMENTATION_VERSION,
        r.new_cvars.len(),
        r.new_pvars.len(),
        r.categories_changed
    );
    // A second refresh with nothing new finds nothing.
    let again = mpit.refresh(&mut catalog).unwrap();
    assert!(again.new_cvars.is_empty() && again.new_pvars.is_empty());
    drop(mpit);
    drop(universe);
}
