//! A 2-rank test of a performance variable bound to a communicator (MPI-4.1 §16.3.7): Open
//! MPI's `pml_ob1_unexpected_msgq_length`, bound to `MPI_COMM_WORLD` through an rsmpi
//! communicator, counts per peer the messages that arrived before a matching receive.
//!
//! The test re-runs its own binary under `$MPIEXEC -n 2 --mca pml ob1`; rank 1 sends K
//! messages that rank 0 has not posted, rank 0 reads K for peer 1, receives them, reads 0.

// rsmpi in the native build; its names over the ABI library in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;

use mpi::traits::*;
use mpit_safe::{Bind, Mpit, Value};
use mpit_test_support::process::{run_ranks, test_path};

const K: usize = 5;
const CHILD: &str = "MPIT_SAFE_UNEXPECTED_CHILD";

fn child() {
    let universe = mpi::initialize().expect("MPI_Init");
    let world = universe.world();
    // Synchronise on a duplicate: Open MPI 5 counts a barrier message on WORLD itself as
    // unexpected, which is true but not what this test measures.
    let sync = world.duplicate();
    // A failed assertion on one rank must not leave the other waiting in a barrier.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| measure(&world, &sync)));
    if run.is_err() {
        world.abort(3);
    }
}

fn measure(world: &mpi::topology::SimpleCommunicator, sync: &mpi::topology::SimpleCommunicator) {
    let rank = world.rank();
    let mpit = Mpit::init().unwrap();
    let var = mpit
        .pvars()
        .unwrap()
        .entries
        .into_iter()
        .find(|v| v.name == "pml_ob1_unexpected_msgq_length")
        .expect("pml_ob1_unexpected_msgq_length (is --mca pml ob1 set?)");
    assert_eq!(var.bind, Bind::Comm);
    let session = mpit.session().unwrap();
    let h = session.dyn_handle(var.index, world).unwrap();
    // One element per peer of the communicator.
    assert_eq!(h.count(), world.size() as usize);
    if !var.continuous {
        h.start().unwrap();
    }
    if rank == 1 {
        for i in 0..K as i32 {
            world.process_at_rank(0).send_with_tag(&i, 7);
        }
    }
    sync.barrier();
    if rank == 0 {
        let before = wait_for(K as u64, || as_u64(&h.read_values().unwrap()[1]));
        for _ in 0..K {
            let (_msg, _status) = world.process_at_rank(1).receive_with_tag::<i32>(7);
        }
        let after = as_u64(&h.read_values().unwrap()[1]);
        println!("unexpected from peer 1: {before} before the receives, {after} after");
        assert_eq!(before as usize, K);
        assert_eq!(after, 0);
    }
}

/// A `Value` of the queue length as a number.
fn as_u64(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// Waits (briefly) until `peer1` (the messages from rank 1 waiting on rank 0) reads `k`.
fn wait_for(k: u64, peer1: impl Fn() -> u64) -> u64 {
    let mut n = 0;
    // Eager messages may still be in flight after the barrier: poll briefly.
    for _ in 0..1000 {
        n = peer1();
        if n >= k {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    n
}

#[test]
fn unexpected_queue_length_per_peer() {
    if std::env::var_os(CHILD).is_some() {
        return child();
    }
    if mpit_safe::sys::IMPLEMENTATION != "Open MPI" {
        eprintln!(
            "{}: no pml_ob1 (an Open MPI component): nothing to run",
            mpit_safe::sys::IMPLEMENTATION
        );
        return;
    }
    let out = run_ranks(
        2,
        &["--mca", "pml", "ob1"],
        &test_path(module_path!(), "unexpected_queue_length_per_peer"),
        CHILD,
        std::time::Duration::from_secs(120),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the 2-rank run failed: {}",
        out.status
    );
    assert!(
        stdout.contains(&format!(
            "unexpected from peer 1: {K} before the receives, 0 after"
        )),
        "rank 0 did not report the expected counts"
    );
}
