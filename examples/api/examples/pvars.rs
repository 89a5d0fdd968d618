//! Performance variables (MPI-4.1 §16.3.7): a session, a handle bound to an rsmpi
//! communicator, start, read, stop. Rank 1 sends K messages that rank 0 has not posted yet;
//! rank 0 watches its unexpected-message queue grow to K, receives them, and sees it empty.
//!
//! Run: `mpiexec -n 2 target/debug/examples/pvars` after
//! `cargo build -p mpit-api-examples --example pvars`; on Open MPI with `--mca pml ob1`
//! (`pml_ob1_unexpected_msgq_length`, one element per peer of the communicator); MPICH built
//! with `--enable-mpit-pvars` has the process-wide `unexpected_recvq_length`.
use mpi::traits::*;
#[cfg(mpit_abi)]
use mpit_safe::mpi; // rsmpi's names over the ABI library in the ABI build
use mpit_safe::{Bind, Error, Mpit, PvarClass};

const K: i32 = 5;
const QUEUES: &[(&str, PvarClass)] = &[
    ("pml_ob1_unexpected_msgq_length", PvarClass::Size), // Open MPI's ob1, bound to a comm
    ("unexpected_recvq_length", PvarClass::Level),       // MPICH, no object
];

fn main() -> Result<(), Error> {
    let universe = mpi::initialize().expect("MPI_Init failed");
    let world = universe.world();
    let sync = world.duplicate(); // barriers off MPI_COMM_WORLD's own queues
    let (rank, mpit) = (world.rank(), Mpit::init()?);
    let mut found = None;
    for &(name, class) in QUEUES {
        found = found.or(mpit.pvar_index(name, class)?);
    }
    let Some(index) = found else {
        if rank == 0 {
            println!(
                "no unexpected-queue pvar among this MPI's {} pvars",
                mpit.pvar_count()?
            );
        }
        return Ok(());
    };
    let info = mpit.pvar_info(index)?;
    let session = mpit.session()?;
    // Both queue lengths are MPI_UNSIGNED: a typed handle, checked once, here.
    let pvar = match info.bind {
        Bind::Comm => session.handle_for::<u32, _>(index, &world)?, // borrows `world`
        _ => session.handle::<u32>(index)?,
    };
    let mut counts = vec![0u32; pvar.count()];
    let from = counts.len().min(2) - 1; // rank 1's element (per peer), or the process's one
    let mut queue = || -> Result<u32, Error> {
        pvar.read_into(&mut counts)?;
        Ok(counts[from])
    };
    if !info.continuous {
        pvar.start()?; // continuous variables count from allocation and refuse start/stop
    }
    if rank == 1 {
        (0..K).for_each(|t| world.process_at_rank(0).send_with_tag(&t, t));
    }
    sync.barrier();
    if rank == 0 {
        // Progress until the last has arrived (reading a pvar makes none).
        while world
            .process_at_rank(1)
            .immediate_probe_with_tag(K - 1)
            .is_none()
        {}
        let before = queue()?;
        for t in 0..K {
            let (_message, _status) = world.process_at_rank(1).receive_with_tag::<i32>(t);
        }
        let after = queue()?;
        println!(
            "{} ({}, {}): {before} before the receives, {after} after",
            info.name, info.class, info.bind
        );
    }
    if !info.continuous {
        pvar.stop()?;
    }
    sync.barrier();
    Ok(())
}
