//! Events (MPI-4.1 §16.3.8): the event sources and event types, a registration with a
//! closure, and an `EventStream`. Rank 1 sends K messages before rank 0 posts the receives, so
//! each goes through rank 0's unexpected queue and raises `unexp_message_enqueued` (MPICH built
//! with `--enable-mpit-events`). Where the header has no event API (Open MPI 4.1, 5.0) every
//! event call answers `Error::NotSupported`, and this program says so.
//!
//! Run: `mpiexec -n 2 target/debug/examples/events` after
//! `cargo build -p mpit-api-examples --example events`.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mpi::traits::*;
use mpit_safe::error::Feature;
#[cfg(mpit_abi)]
use mpit_safe::mpi; // rsmpi's names over the ABI library in the ABI build
use mpit_safe::{CbSafety, Error, Mpit, NoObject};

const K: i32 = 4;

fn main() -> Result<(), Error> {
    let universe = mpi::initialize().expect("MPI_Init failed"); // MPICH registers events here
    let (world, mpit) = (universe.world(), Mpit::init()?);
    let (sync, rank) = (world.duplicate(), world.rank());
    let (sources, events) = match (mpit.sources(), mpit.events()) {
        (Ok(s), Ok(e)) => (s, e),
        (Err(Error::NotSupported(Feature::Events)), _) => {
            println!("rank {rank}: no event API in this MPI's header");
            return Ok(());
        }
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    if rank == 0 {
        for s in &sources.entries {
            println!("source {} {:?}", s.name, s.ordering);
        }
        for e in &events.entries {
            println!("event type {} ({} elements)", e.name, e.elements.len());
        }
    }
    let Some(ev) = mpit.event_index("unexp_message_enqueued")? else {
        println!("rank {rank}: no event type unexp_message_enqueued");
        return Ok(());
    };
    // A closure, owned by its registration until MPI's free callback; element 0 is the sender.
    let from_1 = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&from_1);
    let counted = mpit
        .event_registration(ev, &NoObject)
        .on_event(CbSafety::ThreadSafe, move |e| {
            if e.read::<i32>(0) == Ok(1) {
                seen.fetch_add(1, Ordering::Relaxed);
            }
        })
        .on_dropped(|d| eprintln!("{} events dropped at source {}", d.count, d.source))
        .register()?;
    // A stream: a bounded queue filled without locks or allocation, drained here.
    let streamed = mpit.register_event(ev, &NoObject)?;
    let stream = streamed.stream(CbSafety::AsyncSignalSafe, 1024)?;
    sync.barrier();
    if rank == 1 {
        (0..K).for_each(|t| world.process_at_rank(0).send_with_tag(&t, t));
    }
    sync.barrier();
    if rank == 0 {
        // Progress until the last has arrived (the barrier alone may not bring them in).
        let peer = world.process_at_rank(1);
        while peer.immediate_probe_with_tag(K - 1).is_none() {}
        for t in 0..K {
            let (_message, _status) = peer.receive_with_tag::<i32>(t);
        }
        let mut from = Vec::new(); // element 0 of each record: the sender
        for r in stream.drain() {
            from.push(r.value(stream.elements(), 0)?.to_string());
        }
        println!(
            "unexp_message_enqueued: closure {} from rank 1, stream {} from {from:?}",
            from_1.load(Ordering::Relaxed),
            from.len()
        );
    }
    sync.barrier();
    for reg in [counted, streamed] {
        reg.free()?.wait(Duration::from_secs(1)); // closures released by MPI's free callback
    }
    Ok(())
}
