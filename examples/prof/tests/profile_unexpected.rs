//! A 2-rank test of the profiling engine on a performance variable bound to a communicator
//! (MPI-4.1 §16.3.7): Open MPI's `pml_ob1_unexpected_msgq_length`, bound to `MPI_COMM_WORLD`,
//! counts per peer the messages that arrived before a matching receive. In call mode (Caliper
//! §0.5: a state's, size's or generic variable's last value per node) the engine reads the two
//! 4-byte elements of 2 ranks as one word (several elements in 8 bytes): rank 0's region "pile",
//! where rank 1's K messages wait, must hold K (the sum over the peers), and the region "drain",
//! where they are received, 0. (`mpit-safe/tests/unexpected.rs` reads the same variable
//! through a handle alone.)
//!
//! The test re-runs its own binary under `$MPIEXEC -n 2 --mca pml ob1`.

// rsmpi in the native build; its names over the ABI library in the ABI build.
#[cfg(mpit_abi)]
use mpit_safe::mpi;

use mpi::traits::*;
use mpit_prof::{Config, Metric, Mode, Profiler};
use mpit_safe::{Bind, Mpit, RawObject, Value};

use mpit_test_support::mpi::comm_world;
use mpit_test_support::process::{self, test_path};

use crate::report::node;

const K: usize = 5;
const CHILD: &str = "MPIT_PROF_UNEXPECTED_CHILD";

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
    // The queue length read beside the profiler: rank 0 samples once the messages wait.
    let h = session.dyn_handle(var.index, world).unwrap();
    if !var.continuous {
        h.start().unwrap();
    }
    sync.barrier();
    profiled(world, sync, &session, || {
        as_u64(&h.read_values().unwrap()[1])
    });
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

/// The K unexpected messages under the profiling engine: rank 0 samples (one call in
/// "pile" once they wait, each receive in "drain") and checks the queue length's value in both
/// regions and the receives' node.
fn profiled(
    world: &mpi::topology::SimpleCommunicator,
    sync: &mpi::topology::SimpleCommunicator,
    session: &mpit_safe::Session<'_>,
    peer1: impl Fn() -> u64,
) {
    const NAME: &str = "pml_ob1_unexpected_msgq_length";
    let rank = world.rank();
    let config = Config {
        mode: Mode::Call,
        functions: vec!["MPI_Recv"],
        root: "test".into(),
        ..Config::default()
    };
    let p = Profiler::new(session, config).unwrap();
    // SAFETY: MPI_COMM_WORLD is live until MPI_Finalize, after this function.
    let obj = unsafe { RawObject::comm(comm_world()) };
    p.object_created(obj, "MPI_COMM_WORLD").unwrap();
    {
        let _pile = p.region("pile");
        if rank == 1 {
            for i in 0..K as i32 {
                world.process_at_rank(0).send_with_tag(&i, 7);
            }
        }
        sync.barrier();
        if rank == 0 {
            assert_eq!(wait_for(K as u64, &peer1), K as u64);
            // A sample while they wait: a call entered and left (nothing received).
            let c = p.call_enter(0);
            p.call_exit(c);
        }
    }
    {
        let _drain = p.region("drain");
        if rank == 0 {
            for _ in 0..K {
                let c = p.call_enter(0);
                let (_msg, _status) = world.process_at_rank(1).receive_with_tag::<i32>(7);
                p.call_exit(c);
            }
        }
    }
    p.object_freed(obj);
    let r = p.finish().unwrap();
    sync.barrier();
    if rank != 0 {
        return;
    }
    let column = r
        .columns
        .iter()
        .position(|c| c.info.name == NAME)
        .expect("the profiler has no column of pml_ob1_unexpected_msgq_length");
    let value = |path: &[&str]| -> f64 {
        let (_, n) = node(&r, path);
        match n.metrics[column] {
            Metric::Raw { last: Some(v) } => v,
            Metric::Samples { count, max, .. } if count > 0 => max,
            ref m => panic!("{path:?}: {m:?}"),
        }
    };
    let pile = value(&["test", "pile"]);
    let drain = value(&["test", "drain"]);
    let recv = value(&["test", "drain", "MPI_Recv"]);
    println!("profiled: pile {pile}, drain {drain}, drain/MPI_Recv {recv}");
    assert_eq!(
        pile, K as f64,
        "{NAME} in the region where {K} messages wait"
    );
    assert_eq!(drain, 0.0, "{NAME} in the region where they were received");
    assert_eq!(recv, 0.0, "{NAME} at the exit of the receives");
}

#[test]
fn unexpected_queue_length_in_the_profile() {
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
    let out = process::run_ranks(
        2,
        &["--mca", "pml", "ob1"],
        &test_path(module_path!(), "unexpected_queue_length_in_the_profile"),
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
        stdout.contains(&format!("profiled: pile {K}, drain 0, drain/MPI_Recv 0")),
        "rank 0 did not report the profiled values:\n{stdout}"
    );
}
