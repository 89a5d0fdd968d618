//! Listing and refresh (MPI-4.1 §16.3.6, §16.3.7, §16.3.9): a `Catalog` of every control
//! variable, performance variable and category before `MPI_Init`, brought up to date after it
//! (implementations register more variables there: indices only grow), and the holes: indices
//! below a count whose query failed (Open MPI has hundreds).
//!
//! Run: `cargo run -p mpit-api-examples --example catalog`.
#[cfg(mpit_abi)]
use mpit_safe::mpi; // rsmpi's names over the ABI library in the ABI build
use mpit_safe::{Catalog, Error, Listing, Mpit};

fn summary<T>(what: &str, l: &Listing<T>) -> String {
    format!(
        "{} {what} ({} listed, {} holes)",
        l.count,
        l.entries.len(),
        l.holes.len()
    )
}

fn print(when: &str, c: &Catalog) {
    println!(
        "{when}: {}, {}, {}",
        summary("cvars", &c.cvars),
        summary("pvars", &c.pvars),
        summary("categories", &c.categories)
    );
}

fn main() -> Result<(), Error> {
    // MPI_T may be initialised before MPI: the token comes first and outlives nothing of MPI.
    let mpit = Mpit::init()?;
    let mut catalog = mpit.catalog()?;
    print("before MPI_Init", &catalog);

    let universe = mpi::initialize().expect("MPI_Init failed");
    let refresh = mpit.refresh(&mut catalog)?; // queries only the indices past the old counts
    print("after MPI_Init", &catalog);
    println!(
        "new: cvars {:?}, pvars {:?}, categories {}",
        refresh.new_cvars,
        refresh.new_pvars,
        if refresh.categories_changed {
            "listed again"
        } else {
            "unchanged"
        }
    );
    let new = |i: &usize| refresh.new_cvars.contains(i);
    if let Some(v) = catalog.cvars.entries.iter().find(|v| new(&v.index)) {
        println!("first new cvar: {} ({}, {})", v.name, v.datatype, v.scope);
    }
    // The old entries are kept as they were; a new listing shows what MPI_Init made holes.
    let now = mpit.cvars()?;
    println!("listed again: {}", summary("cvars", &now));
    for (index, error) in now.holes.iter().take(3) {
        println!("hole: cvar {index}: {error}");
    }
    // Before MPI_Finalize: Open MPI 4.1 crashes in MPI_T_finalize after it (open-mpi/ompi#11485).
    mpit.finalize()?;
    drop(universe);
    Ok(())
}
