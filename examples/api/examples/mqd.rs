//! Message Queue Display (the MPI Forum's MQD interface, `msgq_interface.h`): each rank finds
//! its MPI implementation's debug DLL by the interface's search over its own process
//! (`mpimsgq_dll_locations`, then `MPIR_dll_name`), loads it (checked: interface version,
//! address width) and prints its version; then, as a debugger would, it sets itself up as the
//! DLL's image and process and lists its communicators and the receive it has posted. Open MPI
//! ships the DLL (`libompi_dbg_msgq.so`), whose queues are true under the ob1 PML; where an
//! MPI has none (Debian's MPICH), the search says where it looked.
//!
//! Run: `mpiexec -n 2 --mca pml ob1 target/debug/examples/mqd` after
//! `cargo build -p mpit-api-examples --example mqd`.
use std::error::Error;

use mpi::traits::*;
#[cfg(mpit_abi)]
use mpit_safe::mpi; // rsmpi's names over the ABI library in the ABI build
use mqd_types::live::{LiveImage, LiveProcess, TypeSources, find_dll, open_mpi_pml};
use mqd_types::{Image, OpClass, Queue};

const TAG: i32 = 42;

fn main() -> Result<(), Box<dyn Error>> {
    let universe = mpi::initialize().expect("MPI_Init failed"); // Open MPI fills the list here
    let world = universe.world();
    let rank = world.rank();
    let peer = if rank ^ 1 < world.size() {
        rank ^ 1
    } else {
        rank
    }; // pairs: 0-1, 2-3, ...
    let pid = i32::try_from(std::process::id())?;
    let dll = match find_dll(None, pid) {
        Ok(dll) => dll,
        Err(e) => {
            println!("rank {rank}: no message queue DLL: {e}");
            return Ok(());
        }
    };
    println!(
        "rank {rank}: {} version \"{}\", interface {}",
        dll.path().display(),
        dll.version(),
        dll.compatibility()
    );
    if let Some(pml) = open_mpi_pml(pid)?.filter(|p| !p.queues_shown_by_open_mpi_dll()) {
        println!("rank {rank}: PML {pml}: the DLL reads requests as ob1 lays them out; not shown");
        return Ok(());
    }
    let mut buf = -1i32;
    mpi::request::scope(|scope| -> Result<(), Box<dyn Error>> {
        // A receive that stays posted until the peer's send below.
        let posted = world.process_at_rank(peer).immediate_receive_into_with_tag(
            scope,
            &mut buf,
            TAG + rank,
        );
        let image = Image::new(&dll, Box::new(LiveImage::new(pid, TypeSources::default())?))?;
        let mut process = image.process(Box::new(LiveProcess::new(pid)?))?;
        for c in process.queues(&[OpClass::PendingReceives])? {
            let tags: Option<Vec<_>> = c
                .queue(OpClass::PendingReceives)
                .and_then(Queue::operations)
                .map(|ops| ops.iter().map(|o| o.desired_tag).collect());
            println!(
                "rank {rank}: {} size {}, posted receives with tags {tags:?}",
                c.communicator.name(),
                c.communicator.size
            );
        }
        world.barrier(); // both have looked before either receive completes
        world.process_at_rank(peer).send_with_tag(&rank, TAG + peer);
        posted.wait();
        Ok(())
    })?;
    Ok(())
}
