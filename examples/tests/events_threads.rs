//! Event registrations freed while another thread raises their events, on a real
//! event-raising MPI (mpich-ev), two ranks under `$MPIEXEC -n 2` at `MPI_THREAD_MULTIPLE`: the
//! quirk guard `mpich-event-registration-race`
//! (`mpit_safe::quirks::MPICH_EVENT_REGISTRATION_RACE`) shown both ways.
//!
//! - `c_reproducer_frees_under_the_callback`: `examples/quirks/event_free_in_flight.c` holds a
//!   callback running on the receiving thread while the main thread calls
//!   `MPI_T_event_handle_free`; MPICH calls the free callback during that invocation (MPI-4.1
//!   §16.3.8.4 allows it only once no invocation can follow). It must do so exactly where the
//!   guard applies.
//! - `safe_free_waits_for_the_callback_in_flight`: the same through mpit-safe: `free()`
//!   returns, but the [`Freeing`](mpit_safe::Freeing) is not done while the closure runs, and
//!   is done (the closure released) once it has returned.
//! - `churn_against_a_receiving_thread`: registrations allocated, called and freed on the main
//!   thread, as fast as it goes, while a second thread receives 20,000 messages that raise
//!   `unexp_message_enqueued` (without the guard MPICH 4.0.2 crashed in 3 of 6 such runs):
//!   every free completes, every closure is released, events reach the registrations alive,
//!   and the RSS stays flat (MPICH's registrations are reused, not leaked).
//!
//! Where the MPI raises no such event each says so and passes, unless the library says it was
//! configured with `--enable-mpit-events`; where the header has no event API there is nothing
//! to run.

#[cfg(mpit_events)]
mod threads {
    use std::path::Path;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    // rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
    use mpi::Threading;
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;
    #[cfg(mpit_abi)]
    use mpit_safe::mpi;
    use mpit_safe::{CbSafety, Mpit, NoObject, quirks};

    use mpit_test_support::cc;
    use mpit_test_support::mpi::no_event_type;
    use mpit_test_support::process::{self, test_path};

    const CHILD: &str = "MPIT_EVENTS_THREADS_CHILD";
    const NO_EVENTS: &str = "no unexp_message_enqueued event type";
    const MESSAGES: i32 = 20_000;
    /// Messages per batch of the churn, with tags 0..BATCH.
    const BATCH: i32 = 25;

    /// Says so and returns `true` where the MPI raises no such event (and may not).
    fn nothing_to_show(out: &str) -> bool {
        no_event_type(
            out,
            NO_EVENTS,
            "unexp_message_enqueued",
            "this MPI raises no MPI_T events: nothing to race",
        )
    }

    /// Runs this test binary's `test` as the child of a 2-rank job.
    fn job(test: &str, scenario: &str) -> (bool, String) {
        let mut cmd = process::mpiexec();
        cmd.args(["-n", "2", "env", &format!("{CHILD}={scenario}")])
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &test_path(module_path!(), test),
                "--nocapture",
                "--test-threads=1",
            ]);
        let out = process::run(cmd, Duration::from_secs(300));
        (out.status.success(), process::show(&out))
    }

    /// A child's start: MPI at `MPI_THREAD_MULTIPLE`, MPI_T, and the event type (`None`, said
    /// by rank 0, where there is none).
    fn init_child() -> Option<(mpi::environment::Universe, SimpleCommunicator, Mpit, usize)> {
        let (universe, provided) =
            mpi::initialize_with_threading(Threading::Multiple).expect("MPI_Init_thread");
        assert_eq!(provided, Threading::Multiple, "MPI_THREAD_MULTIPLE");
        let world = universe.world();
        let mpit = Mpit::init().unwrap();
        let Some(ev) = mpit.event_index("unexp_message_enqueued").unwrap() else {
            if world.rank() == 0 {
                println!("rank 0: {NO_EVENTS}");
            }
            return None;
        };
        Some((universe, world, mpit, ev))
    }

    #[test]
    fn c_reproducer_frees_under_the_callback() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("quirks/event_free_in_flight.c");
        let exe = cc::build_c(
            &src,
            &Path::new(env!("CARGO_TARGET_TMPDIR")).join("event_free_in_flight"),
        );
        let mut cmd = process::mpiexec();
        cmd.args(["-n", "2"]).arg(&exe);
        let out = process::run(cmd, Duration::from_secs(120));
        let text = process::show(&out);
        assert!(out.status.success(), "the reproducer failed");
        if nothing_to_show(&text) {
            return;
        }
        let during = text.contains("rank 0: free callback during an invocation: yes");
        assert!(
            during || text.contains("rank 0: free callback during an invocation: no"),
            "the reproducer did not report"
        );
        assert_eq!(
            during,
            quirks::applies(&quirks::MPICH_EVENT_REGISTRATION_RACE),
            "the guard must apply exactly where the free callback comes during an invocation \
             ({})",
            mpit_safe::implementation()
        );
        if during {
            println!(
                "{}: MPI_T_event_handle_free calls the free callback while a callback of the \
                 registration runs on another thread",
                mpit_safe::implementation()
            );
        }
    }

    #[test]
    fn safe_free_waits_for_the_callback_in_flight() {
        if let Ok(s) = std::env::var(CHILD) {
            if s == "in-flight" {
                child_in_flight();
            }
            return;
        }
        let (ok, text) = job("safe_free_waits_for_the_callback_in_flight", "in-flight");
        assert!(ok, "the 2-rank run failed");
        if nothing_to_show(&text) {
            return;
        }
        assert!(
            text.contains("rank 0: not freed while the closure ran; freed after it returned"),
            "rank 0 did not pass"
        );
    }

    fn child_in_flight() {
        let Some((_universe, world, mpit, ev)) = init_child() else {
            return;
        };
        world.barrier();
        if world.rank() == 1 {
            let to = world.process_at_rank(0);
            std::thread::sleep(Duration::from_millis(200)); // rank 0's receive of tag 0 is posted
            to.send_with_tag(&1i32, 1);
            to.send_with_tag(&0i32, 0);
            return;
        }
        let started = Arc::new(AtomicBool::new(false));
        let returned = Arc::new(AtomicBool::new(false));
        let go_on = Arc::new(AtomicBool::new(false));
        let reg = mpit.register_event(ev, &NoObject).unwrap();
        let (s, r, g) = (started.clone(), returned.clone(), go_on.clone());
        reg.on_event(CbSafety::AsyncSignalSafe, move |_| {
            if s.swap(true, Ordering::SeqCst) {
                return;
            }
            let end = Instant::now() + Duration::from_secs(5);
            while !g.load(Ordering::SeqCst) && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(1));
            }
            r.store(true, Ordering::SeqCst);
        })
        .unwrap();
        std::thread::scope(|scope| {
            let world = &world;
            scope.spawn(move || {
                let from = world.process_at_rank(1);
                let _ = from.receive_with_tag::<i32>(0);
                let _ = from.receive_with_tag::<i32>(1);
            });
            let end = Instant::now() + Duration::from_secs(10);
            while !started.load(Ordering::SeqCst) {
                assert!(Instant::now() < end, "no event within 10 s");
                std::thread::sleep(Duration::from_millis(1));
            }
            let freeing = reg.free().unwrap();
            let done_while_running = freeing.is_done();
            let ran_on = !returned.load(Ordering::SeqCst);
            go_on.store(true, Ordering::SeqCst);
            assert!(ran_on, "the closure returned before free() did");
            assert!(
                !done_while_running,
                "the free was done while the closure was still running"
            );
            assert!(freeing.wait(Duration::from_secs(10)), "never freed");
            assert!(returned.load(Ordering::SeqCst));
        });
        assert_eq!(
            Arc::strong_count(&started),
            1,
            "the closure was not released"
        );
        println!("rank 0: not freed while the closure ran; freed after it returned");
        drop(mpit);
    }

    #[test]
    fn churn_against_a_receiving_thread() {
        if let Ok(s) = std::env::var(CHILD) {
            if s == "churn" {
                child_churn();
            }
            return;
        }
        let (ok, text) = job("churn_against_a_receiving_thread", "churn");
        assert!(
            ok,
            "the 2-rank run failed (without the guard MPICH 4.0.2 crashes here)"
        );
        if nothing_to_show(&text) {
            return;
        }
        assert!(text.contains("rank 0: churn passed"), "rank 0 did not pass");
    }

    fn child_churn() {
        let Some((_universe, world, mpit, ev)) = init_child() else {
            return;
        };
        let run =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| churn(&mpit, &world, ev)));
        if run.is_err() {
            world.abort(3);
        }
        drop(mpit);
    }

    fn churn(mpit: &Mpit, world: &SimpleCommunicator, ev: usize) {
        world.barrier();
        if world.rank() == 1 {
            let to = world.process_at_rank(0);
            // A pause after each batch: the traffic lasts about a second, and the churn
            // (a few microseconds a cycle) overlaps it throughout.
            for i in 0..MESSAGES {
                to.send_with_tag(&i, i % BATCH);
                if i % BATCH == BATCH - 1 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            return;
        }
        let delivered = Arc::new(AtomicU64::new(0));
        let receiving = AtomicBool::new(true);
        let (mut cycles, mut warm, mut warm_at) = (0u64, 0u64, 0u64);
        std::thread::scope(|scope| {
            let (world, receiving) = (&world, &receiving);
            scope.spawn(move || {
                // Batches of BATCH tags: the probe for a batch's last tag pulls the batch into
                // the unexpected queue (an enqueued event each, raised on this thread).
                let from = world.process_at_rank(1);
                for first in (0..MESSAGES).step_by(BATCH as usize) {
                    from.probe_with_tag(BATCH - 1);
                    for i in first..first + BATCH {
                        let (v, _) = from.receive_with_tag::<i32>(i % BATCH);
                        assert_eq!(v, i, "messages in order");
                    }
                }
                receiving.store(false, Ordering::SeqCst);
            });
            while receiving.load(Ordering::SeqCst) {
                let reg = mpit.register_event(ev, &NoObject).unwrap();
                let count = delivered.clone();
                reg.on_event(CbSafety::AsyncSignalSafe, move |_| {
                    count.fetch_add(1, Ordering::Relaxed);
                })
                .unwrap();
                let freeing = reg.free().unwrap();
                assert!(
                    freeing.wait(Duration::from_secs(10)),
                    "cycle {cycles}: not freed within 10 s"
                );
                cycles += 1;
                if cycles == 10_000 {
                    (warm, warm_at) = (process::rss(), cycles);
                }
            }
        });
        let end = process::rss();
        let n = delivered.load(Ordering::Relaxed);
        println!(
            "rank 0: {cycles} registrations allocated, called and freed while a second thread \
             received {MESSAGES} messages; {n} events delivered to them; RSS {} KiB after \
             {warm_at} cycles, {} KiB at the end",
            warm / 1024,
            end / 1024
        );
        assert!(
            cycles > 10_000,
            "only {cycles} cycles: the churn did not overlap the traffic"
        );
        assert_eq!(
            Arc::strong_count(&delivered),
            1,
            "a closure was not released"
        );
        assert!(n > 0, "no event reached a registration");
        assert!(n <= MESSAGES as u64, "more events than messages");
        let grown = end.saturating_sub(warm);
        assert!(grown <= 2 << 20, "RSS grew by {grown} bytes");
        println!("rank 0: churn passed");
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
