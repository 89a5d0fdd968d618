//! Reads a control variable, a performance variable bound to a communicator, and events.
use mpi::traits::*;
use mpit_safe::error::Feature;
// rsmpi, as mpit-safe re-exports it (in the MPI-5 ABI build, its stand-in).
use mpit_safe::mpi;
use mpit_safe::{Bind, CvarInfo, Error, Mpit, NoObject};

fn main() -> Result<(), Error> {
    // MPI_Init through rsmpi. MPICH registers its variables only now, so look after it.
    let universe = mpi::initialize().expect("MPI_Init failed");
    let world = universe.world();
    let me = world.rank();
    let mpit = Mpit::init()?; // MPI_T_init_thread; MPI_T_finalize when dropped

    // A control variable: the first integer one that needs no object, read as a Value.
    let cvars = mpit.cvars()?;
    let first_int = |v: &&CvarInfo| v.bind == Bind::NoObject && v.datatype.is_integer();
    if let Some(info) = cvars.entries.iter().find(first_int) {
        let cvar = mpit.dyn_cvar_handle(info.index, &NoObject)?;
        println!("rank {me}: cvar {} = {}", info.name, cvar.read_values()?[0]);
    }

    // A performance variable bound to a communicator (Open MPI's ob1 has some), read on
    // MPI_COMM_WORLD in a session of our own.
    let session = mpit.session()?;
    let pvars = mpit.pvars()?;
    match pvars.entries.iter().find(|v| v.bind == Bind::Comm) {
        Some(info) => {
            let pvar = session.dyn_handle(info.index, &world)?;
            if !info.continuous {
                pvar.start()?;
            }
            world.barrier();
            let values = pvar.read_values()?;
            println!(
                "rank {me}: pvar {} on MPI_COMM_WORLD = {values:?}",
                info.name
            );
        }
        None => println!("rank {me}: no pvar bound to a communicator in this MPI"),
    }

    // Events compile on every MPI; where mpi.h has no event API they answer NotSupported.
    match mpit.events() {
        Ok(events) => println!("rank {me}: {} event types", events.entries.len()),
        Err(Error::NotSupported(Feature::Events)) => {
            println!("rank {me}: no event API in this MPI")
        }
        Err(e) => return Err(e),
    }
    Ok(())
}
