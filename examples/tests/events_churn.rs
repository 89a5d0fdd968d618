//! Event registration churn with callbacks in flight, on a real event-raising MPI (mpich-ev):
//! two ranks under `$MPIEXEC -n 2`. Rank 1 sends 50,000 small messages in batches of 25; rank
//! 0 allocates a registration per batch, gives it a closure, probes for the batch's last tag
//! (MPICH's progress engine then raises `unexp_message_enqueued` for each message pulled into
//! the unexpected queue), receives the batch and frees the registration: 2,000 cycles.
//! Checked: every free callback comes (MPI-4.1 §16.3.8.4), every closure is released (the `Arc`
//! it holds is back to one owner), exactly one event per message reaches the registration
//! alive then, and the RSS stays flat after a warm-up. Where the MPI raises no such event it
//! says so and passes, unless the library says it was configured with `--enable-mpit-events`;
//! where the header has no event API there is nothing to run.
//!
//! One thread: the exact count needs every event raised while a registration is alive. With
//! the receives on a second thread (`MPI_THREAD_MULTIPLE`), see `events_threads.rs`.

#[cfg(mpit_events)]
mod churn {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    // rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
    use mpi::traits::*;
    #[cfg(mpit_abi)]
    use mpit_safe::mpi;
    use mpit_safe::{CbSafety, Mpit, NoObject};

    use mpit_test_support::mpi::no_event_type;
    use mpit_test_support::process::{self, test_path};

    const CHILD: &str = "MPIT_EVENTS_CHURN_CHILD";
    /// Messages per batch (one registration each), with tags 0..BATCH.
    const BATCH: i32 = 25;
    const MESSAGES: i32 = BATCH * CYCLES as i32;
    const CYCLES: usize = 2_000;
    /// Rank 0's tag telling rank 1 that the count is taken.
    const DONE: i32 = BATCH + 1;
    const NO_EVENTS: &str = "no unexp_message_enqueued event type";
    const PASSED: &str = "registration churn passed";

    fn child() {
        let universe = mpi::initialize().expect("MPI_Init");
        let world = universe.world();
        let mpit = Mpit::init().unwrap();
        let Some(ev) = mpit.event_index("unexp_message_enqueued").unwrap() else {
            if world.rank() == 0 {
                println!("rank 0: {NO_EVENTS} in {}", mpit_safe::implementation());
            }
            return;
        };
        // A failed check on one rank must end the job, not leave the other in the barrier.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ranks_part(&mpit, &world, ev)
        }));
        if run.is_err() {
            world.abort(3);
        }
        world.barrier();
        drop(mpit);
    }

    fn ranks_part(mpit: &Mpit, world: &mpi::topology::SimpleCommunicator, ev: usize) {
        if world.rank() == 1 {
            let to = world.process_at_rank(0);
            for i in 0..MESSAGES {
                to.send_with_tag(&i, i % BATCH);
            }
            println!("rank 1: sent {MESSAGES}");
            // Nothing more until rank 0 has counted: the final barrier's message, sent early,
            // would be one more unexpected message there (50,001 events in 1 of 10 runs).
            let _ = to.receive_with_tag::<i32>(DONE);
        } else {
            let from = world.process_at_rank(1);
            let delivered = Arc::new(AtomicU64::new(0));
            let mut warm = 0;
            // One registration per batch: allocated, called during the probe and the receives
            // (the probe for the batch's last tag pulls the batch, and any message of the next
            // that has arrived, into the unexpected queue: one enqueued event each), freed.
            // No MPI call happens outside a registration's life, so every event raised reaches
            // one.
            for (cycle, first) in (0..MESSAGES).step_by(BATCH as usize).enumerate() {
                let reg = mpit.register_event(ev, &NoObject).unwrap();
                let count = delivered.clone();
                // Async-signal-safe (an atomic add): sufficient for any context MPI raises in.
                reg.on_event(CbSafety::AsyncSignalSafe, move |_| {
                    count.fetch_add(1, Ordering::Relaxed);
                })
                .unwrap();
                from.probe_with_tag(BATCH - 1);
                for i in first..first + BATCH {
                    let (v, _) = from.receive_with_tag::<i32>(i % BATCH);
                    assert_eq!(v, i, "messages in order");
                }
                let freeing = reg.free().unwrap();
                assert!(
                    freeing.wait(Duration::from_secs(10)),
                    "cycle {cycle}: no free callback within 10 s"
                );
                if cycle + 1 == CYCLES / 10 {
                    warm = process::rss();
                }
            }
            from.send_with_tag(&0i32, DONE);
            let (cycles, received) = (CYCLES, MESSAGES);
            let end = process::rss();
            let grown = end.saturating_sub(warm);
            let n = delivered.load(Ordering::Relaxed);
            println!(
                "rank 0: {cycles} registrations allocated, called and freed while receiving \
                 {received} messages; {n} events delivered to them; RSS {} KiB after {} \
                 cycles, {} KiB at the end (+{} KiB)",
                warm / 1024,
                CYCLES / 10,
                end / 1024,
                grown / 1024
            );
            assert_eq!(
                Arc::strong_count(&delivered),
                1,
                "a closure was not released by its free callback"
            );
            assert_eq!(
                n, MESSAGES as u64,
                "one enqueued event per message, each delivered to the registration alive then"
            );
            assert!(grown <= 2 << 20, "RSS grew by {grown} bytes");
            println!("rank 0: {PASSED}");
        }
    }

    #[test]
    fn registration_churn_with_callbacks_in_flight() {
        if std::env::var_os(CHILD).is_some() {
            child();
            return;
        }
        let mut cmd = process::mpiexec();
        cmd.args(["-n", "2", "env", &format!("{CHILD}=1")])
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &test_path(
                    module_path!(),
                    "registration_churn_with_callbacks_in_flight",
                ),
                "--nocapture",
                "--test-threads=1",
            ]);
        let out = process::run(cmd, Duration::from_secs(300));
        let text = process::show(&out);
        assert!(out.status.success(), "the 2-rank run failed");
        if no_event_type(
            &text,
            NO_EVENTS,
            "unexp_message_enqueued",
            "this MPI raises no MPI_T events: nothing to churn",
        ) {
            return;
        }
        assert!(text.contains(PASSED), "rank 0 did not pass");
    }
}

/// Where the header has no event API there is nothing to run.
#[cfg(not(mpit_events))]
#[test]
fn no_event_api() {
    println!(
        "{}: no MPI-4 event API in mpi.h",
        mpit_safe::implementation()
    );
}
