//! mpit-safe's event API (registrations with closures, dropped handler, free, streams) against
//! the test provider of `examples/event-provider`, LD_PRELOADed ahead of MPICH. The test binary
//! re-runs itself with the provider preloaded (and, for the traffic test, under
//! `$MPIEXEC -n 2`); where the header has no event API (Open MPI) it says so and passes.

#[cfg(mpit_events)]
mod with_events {
    // rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
    #[cfg(mpit_abi)]
    use mpit_safe::mpi;

    use std::process::Command;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use mpit_safe::{CbSafety, Dropped, Mpit, NoObject};
    use mpit_test_support::process::{self, test_path};

    use crate::provider::{Provider, TestEvent};

    const CHILD: &str = "MPIT_EVENTS_SAFE_CHILD";
    static PROVIDER: std::sync::LazyLock<String> = std::sync::LazyLock::new(crate::provider::path);

    /// The shared provider handle, raising `provider_test` events numbered `seq` at a level.
    struct Events(Provider);

    impl Events {
        fn load() -> Events {
            let p = Provider::load(PROVIDER.as_str());
            // Per-registration drop reports: what mpit-core's event model says.
            assert_eq!(p.drops_per_registration(), 0);
            Events(p)
        }

        fn raise(&self, event: usize, context: CbSafety, seq: u64) -> i32 {
            self.0.raise(event, 0, context, &TestEvent::new(seq))
        }
    }

    fn single_process() {
        let mpit = Mpit::init().unwrap();
        let p = Events::load();
        let ev = mpit
            .event_index("provider_test")
            .unwrap()
            .expect("provider_test");
        let info = mpit.event_info(ev).unwrap();
        assert_eq!(info.elements.len(), 4);

        // Closures see every event with its data; typed reads are checked.
        let reg = mpit.register_event(ev, &NoObject).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let live = Arc::new(());
        {
            let (seen, live) = (seen.clone(), live.clone());
            reg.on_event(CbSafety::ThreadSafe, move |e| {
                let _keep = &live;
                let seq = e.read::<u64>(0).unwrap();
                let value = e.read::<f64>(1).unwrap();
                assert!(
                    e.read::<f64>(2).is_err(),
                    "MPI_INT read as f64 must be refused"
                );
                seen.lock()
                    .unwrap()
                    .push((seq, value, e.source().unwrap(), e.safety()));
            })
            .unwrap();
        }
        for i in 0..100 {
            assert_eq!(p.raise(ev, CbSafety::MpiRestricted, i), 0);
        }
        let got = seen.lock().unwrap().clone();
        assert_eq!(got.len(), 100);
        for (i, (seq, value, source, safety)) in got.iter().enumerate() {
            assert_eq!(*seq, i as u64);
            assert_eq!(*value, i as f64 * 0.5);
            assert_eq!(*source, 0);
            assert_eq!(*safety, CbSafety::MpiRestricted);
        }

        // Selection: nothing registered for ASYNC_SIGNAL_SAFE contexts: dropped, and reported
        // to the dropped handler before the next delivered event of the source.
        let reports = Arc::new(Mutex::new(Vec::<Dropped>::new()));
        let order = Arc::new(Mutex::new(Vec::new()));
        {
            let (reports, order) = (reports.clone(), order.clone());
            reg.on_dropped(move |d| {
                reports.lock().unwrap().push(d);
                order.lock().unwrap().push("dropped");
            })
            .unwrap();
        }
        for i in 0..5 {
            p.raise(ev, CbSafety::AsyncSignalSafe, 1000 + i);
        }
        {
            let order = order.clone();
            reg.on_event(CbSafety::ThreadSafe, move |_| {
                order.lock().unwrap().push("event")
            })
            .unwrap();
        }
        p.raise(ev, CbSafety::None, 2000);
        assert_eq!(
            reports.lock().unwrap().as_slice(),
            &[Dropped {
                count: 5,
                source: 0,
                safety: CbSafety::None
            }]
        );
        assert_eq!(order.lock().unwrap().as_slice(), &["dropped", "event"]);

        // A panic in a closure is caught at the boundary and reported; the process goes on.
        reg.on_event(CbSafety::ThreadSafe, |_| panic!("boom"))
            .unwrap();
        p.raise(ev, CbSafety::None, 1);
        let (n, msgs) = reg.panics();
        assert_eq!(n, 1);
        assert_eq!(msgs, vec!["boom".to_owned()]);

        // Hints (MPI-4.1 §16.3.8.4): set on the handle and on a callback level, read back.
        let mut info = mpit_safe::Info::new().unwrap();
        info.set("mpit_provider_label", "tool-a").unwrap();
        reg.set_info(&info).unwrap();
        let used = reg.info_used().unwrap();
        assert_eq!(
            used.get("mpit_provider_label").unwrap().as_deref(),
            Some("tool-a")
        );
        reg.set_callback_info(CbSafety::ThreadSafe, &info).unwrap();
        let used = reg.callback_info_used(CbSafety::ThreadSafe).unwrap();
        assert_eq!(
            used.get("mpit_provider_label").unwrap().as_deref(),
            Some("tool-a")
        );

        // Hints MPI attaches to event types and sources (the info out-argument of
        // MPI_T_event_get_info / MPI_T_source_get_info).
        let hints = mpit.event_hints(ev).unwrap();
        assert_eq!(
            hints.entries().unwrap(),
            vec![
                ("mpit_provider_event".to_owned(), "provider_test".to_owned()),
                (
                    "mpit_provider_bind".to_owned(),
                    "MPI_T_BIND_NO_OBJECT".to_owned()
                ),
            ]
        );
        let timestamps = |s: usize| {
            mpit.source_hints(s)
                .unwrap()
                .get("mpit_provider_timestamps")
                .unwrap()
        };
        assert_eq!(timestamps(0).as_deref(), Some("on_demand"));
        assert_eq!(timestamps(2).as_deref(), Some("not_supported"));
        assert!(mpit.event_hints(usize::MAX).is_err());

        // Freeing: the free callback runs, after which every closure is gone.
        assert!(Arc::strong_count(&live) > 1);
        let freeing = reg.free().unwrap();
        assert!(
            freeing.wait(Duration::from_secs(5)),
            "free callback did not run"
        );
        drop(freeing);
        assert_eq!(
            Arc::strong_count(&live),
            1,
            "a closure outlived the free callback"
        );

        // The builder: allocation hints, two levels given lowest first (installed highest
        // first), a dropped handler; each context reaches the lowest sufficient closure.
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s1, s2, s3) = (seen.clone(), seen.clone(), seen.clone());
        let mut alloc_hints = mpit_safe::Info::new().unwrap();
        alloc_hints.set("mpit_provider_label", "built").unwrap();
        let built = mpit
            .event_registration(ev, &NoObject)
            .info(&alloc_hints)
            .on_event(CbSafety::None, move |e| {
                s1.lock()
                    .unwrap()
                    .push(format!("none {}", e.read::<u64>(0).unwrap()))
            })
            .on_event(CbSafety::ThreadSafe, move |e| {
                s2.lock()
                    .unwrap()
                    .push(format!("thread {}", e.read::<u64>(0).unwrap()))
            })
            .on_dropped(move |d| s3.lock().unwrap().push(format!("dropped {}", d.count)))
            .register()
            .unwrap();
        assert_eq!(
            built
                .info_used()
                .unwrap()
                .get("mpit_provider_label")
                .unwrap()
                .as_deref(),
            Some("built")
        );
        for (ctx, seq) in [
            (CbSafety::None, 1),
            (CbSafety::MpiRestricted, 2),
            (CbSafety::AsyncSignalSafe, 3),
            (CbSafety::ThreadSafe, 4),
        ] {
            assert_eq!(p.raise(ev, ctx, seq), 0);
        }
        assert_eq!(
            *seen.lock().unwrap(),
            ["none 1", "thread 2", "dropped 1", "thread 4"]
        );
        assert!(built.free().unwrap().wait(Duration::from_secs(5)));

        // Streams: a bounded queue; a full queue counts drops.
        let reg = mpit.register_event(ev, &NoObject).unwrap();
        let stream = reg.stream(CbSafety::AsyncSignalSafe, 64).unwrap();
        for i in 0..100 {
            p.raise(ev, CbSafety::AsyncSignalSafe, i);
        }
        let records: Vec<_> = stream.drain().collect();
        assert_eq!(records.len(), 64);
        assert_eq!(stream.drops(), 36);
        for (i, r) in records.iter().enumerate() {
            assert_eq!(
                r.value(stream.elements(), 0).unwrap().as_u64(),
                Some(i as u64)
            );
        }
        let freeing = reg.free().unwrap();
        assert!(freeing.wait(Duration::from_secs(5)));

        // Many threads raising at THREAD_SAFE into one closure.
        let reg = mpit.register_event(ev, &NoObject).unwrap();
        let count = Arc::new(AtomicU64::new(0));
        let sum = Arc::new(AtomicU64::new(0));
        {
            let (count, sum) = (count.clone(), sum.clone());
            reg.on_event(CbSafety::ThreadSafe, move |e| {
                count.fetch_add(1, Ordering::Relaxed);
                sum.fetch_add(e.read::<u64>(0).unwrap(), Ordering::Relaxed);
            })
            .unwrap();
        }
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let p = &p;
                s.spawn(move || {
                    for i in 0..10_000u64 {
                        assert_eq!(p.raise(ev, CbSafety::ThreadSafe, t * 10_000 + i), 0);
                    }
                });
            }
        });
        assert_eq!(count.load(Ordering::Relaxed), 40_000);
        assert_eq!(sum.load(Ordering::Relaxed), (0..40_000u64).sum::<u64>());
        drop(reg);
        drops_wait_for_a_safe_enough_closure(&mpit, &p, ev);
        println!("single-process event checks passed");
    }

    fn two_ranks() {
        use mpi::traits::*;
        let mpit = Mpit::init().unwrap();
        let universe = mpi::initialize().unwrap();
        let world = universe.world();
        let recv_ev = mpit.event_index("p2p_recv").unwrap().expect("p2p_recv");
        let reg = mpit.register_event(recv_ev, &NoObject).unwrap();
        let stream = reg.stream(CbSafety::AsyncSignalSafe, 1024).unwrap();
        let sync = world.duplicate();
        // A failed check on one rank must not leave the other in a barrier.
        let run =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| exchange(&world, &stream)));
        if run.is_err() {
            world.abort(3);
        }
        sync.barrier();
        let p = Provider::load(PROVIDER.as_str());
        p.drops_per_registration();
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            drops_under_traffic(&mpit, &p, recv_ev, &world, &sync)
        }));
        if run.is_err() {
            world.abort(4);
        }
        sync.barrier();
        drop(stream);
        drop(reg);
        drop(mpit);
    }

    /// What rank 0's registrations see of the receives of a real exchange.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Seen {
        Recv { tag: i64 },
        Dropped { count: u64, source: usize },
    }

    /// Dropped counts of real traffic: first no callback at a sufficient level (the provider
    /// raises the receives at THREAD_SAFE, the closure is registered at MPI_RESTRICTED only),
    /// then a full stream; every closure is freed once and none outlives its registration.
    fn drops_under_traffic(
        mpit: &Mpit,
        p: &Provider,
        recv_ev: usize,
        world: &mpi::topology::SimpleCommunicator,
        sync: &mpi::topology::SimpleCommunicator,
    ) {
        use mpi::traits::*;
        const LOST: i32 = 10;
        const BURST: i32 = 25;
        const CAPACITY: usize = 8;
        if world.rank() == 1 {
            sync.barrier();
            for t in 0..=LOST {
                world.process_at_rank(0).send_with_tag(&[0u8; 2], 200 + t);
            }
            sync.barrier();
            for t in 0..BURST {
                world.process_at_rank(0).send_with_tag(&[0u8; 2], 300 + t);
            }
            return;
        }
        let frees_before = p.free_callbacks();
        let live = Arc::new(());
        let log = Arc::new(Mutex::new(Vec::new()));
        let reg = mpit.register_event(recv_ev, &NoObject).unwrap();
        {
            let (log1, live1) = (log.clone(), live.clone());
            reg.on_event(CbSafety::MpiRestricted, move |e| {
                let _keep = &live1;
                let tag = e.read_value(1).unwrap().as_i64().unwrap();
                log1.lock().unwrap().push(Seen::Recv { tag });
            })
            .unwrap();
            let (log2, live2) = (log.clone(), live.clone());
            reg.on_dropped(move |d: Dropped| {
                let _keep = &live2;
                log2.lock().unwrap().push(Seen::Dropped {
                    count: d.count,
                    source: d.source,
                });
            })
            .unwrap();
        }
        let mut buf = [0u8; 2];
        assert_eq!(p.set_activity_safety(CbSafety::ThreadSafe), 0);
        sync.barrier();
        for t in 0..LOST {
            world
                .process_at_rank(1)
                .receive_into_with_tag(&mut buf[..], 200 + t);
        }
        assert!(log.lock().unwrap().is_empty(), "{:?}", log.lock().unwrap());
        assert_eq!(p.set_activity_safety(CbSafety::MpiRestricted), 0);
        world
            .process_at_rank(1)
            .receive_into_with_tag(&mut buf[..], 200 + LOST);
        let seen = log.lock().unwrap().clone();
        assert_eq!(
            seen,
            vec![
                Seen::Dropped {
                    count: LOST as u64,
                    source: 0
                },
                Seen::Recv {
                    tag: (200 + LOST) as i64
                }
            ],
            "the drops are reported before the next event of their source"
        );
        println!(
            "rank 0: {LOST} receives at THREAD_SAFE with a closure at MPI_RESTRICTED only: \
             {seen:?}"
        );

        // A stream that is full after CAPACITY events counts the rest as dropped.
        let full = mpit.register_event(recv_ev, &NoObject).unwrap();
        let stream = full.stream(CbSafety::AsyncSignalSafe, CAPACITY).unwrap();
        sync.barrier();
        for t in 0..BURST {
            world
                .process_at_rank(1)
                .receive_into_with_tag(&mut buf[..], 300 + t);
        }
        let el = stream.elements().to_vec();
        let tags: Vec<i64> = stream
            .drain()
            .map(|r| r.value(&el, 1).unwrap().as_i64().unwrap())
            .collect();
        assert_eq!(tags, (300..300 + CAPACITY as i64).collect::<Vec<_>>());
        assert_eq!(stream.drops(), (BURST as u64) - CAPACITY as u64);
        println!(
            "rank 0: a stream of capacity {CAPACITY} kept tags {}..={} of {BURST} receives and \
             counted {} dropped",
            tags[0],
            tags[CAPACITY - 1],
            stream.drops()
        );
        // The first registration saw the burst at MPI_RESTRICTED (no more drops).
        assert_eq!(log.lock().unwrap().len(), 2 + BURST as usize);

        for r in [reg, full] {
            assert!(r.free().unwrap().wait(Duration::from_secs(5)));
        }
        assert_eq!(
            p.free_callbacks() - frees_before,
            2,
            "one free callback each"
        );
        assert_eq!(
            Arc::strong_count(&live),
            1,
            "no closure outlives its registration"
        );
        println!("rank 0: 2 free callbacks, no live closure left");
    }

    fn exchange(world: &mpi::topology::SimpleCommunicator, stream: &mpit_safe::EventStream) {
        use mpi::traits::*;
        const K: i32 = 25;
        if world.rank() == 1 {
            for t in 0..K {
                world
                    .process_at_rank(0)
                    .send_with_tag(&[t as u8; 3], 100 + t);
            }
        } else {
            // A plain MPI_Recv (rsmpi's receive_vec uses a matched probe, which the provider
            // does not interpose).
            let mut buf = [0u8; 3];
            for t in 0..K {
                let _status = world
                    .process_at_rank(1)
                    .receive_into_with_tag(&mut buf[..], 100 + t);
            }
            let records: Vec<_> = stream.drain().collect();
            let el = stream.elements();
            // Only this communicator's receives from rank 1 (the duplicate's barrier is
            // collective, not point to point, in MPICH).
            let ours: Vec<_> = records
                .iter()
                .filter(|r| r.value(el, 1).unwrap().as_i64().unwrap() >= 100)
                .collect();
            assert_eq!(ours.len(), K as usize, "{records:?}");
            for (t, r) in ours.iter().enumerate() {
                assert_eq!(r.value(el, 0).unwrap().as_i64(), Some(1), "peer");
                assert_eq!(
                    r.value(el, 1).unwrap().as_i64(),
                    Some(100 + t as i64),
                    "tag"
                );
                assert_eq!(r.value(el, 2).unwrap().as_i64(), Some(3), "bytes");
            }
            let ts: Vec<_> = ours.iter().map(|r| r.timestamp).collect();
            assert!(ts.windows(2).all(|w| w[0] < w[1]), "per-source order");
            println!(
                "rank 0 saw {} receive events from rank 1, in order",
                ours.len()
            );
        }
    }

    /// A registration whose only closure is for `MPI_T_CB_REQUIRE_NONE` contexts, with a
    /// dropped handler, while 5 events are raised in `THREAD_SAFE` contexts: no closure runs
    /// and nothing is reported, as the same registration in C sees it on MPICH (MPI-4.1
    /// §16.3.8.5: MPI may report the drops when it next invokes a callback of the
    /// registration). Then a closure for every context: the next event is delivered after one
    /// report of the 5. The same whether the registration is pooled (`MPI_THREAD_MULTIPLE` on
    /// MPICH) or not. Returns what the handlers saw, in order (0: the delivered event).
    fn drops_wait_for_a_safe_enough_closure(mpit: &Mpit, p: &Events, ev: usize) -> Vec<u64> {
        let reg = mpit.register_event(ev, &NoObject).unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let o = order.clone();
        reg.on_event(CbSafety::None, move |_| o.lock().unwrap().push(0u64))
            .unwrap();
        let o = order.clone();
        reg.on_dropped(move |d| o.lock().unwrap().push(d.count))
            .unwrap();
        for i in 0..5 {
            assert_eq!(p.raise(ev, CbSafety::ThreadSafe, i), 0);
        }
        assert_eq!(
            *order.lock().unwrap(),
            Vec::<u64>::new(),
            "nothing before a safe closure"
        );
        let o = order.clone();
        reg.on_event(CbSafety::AsyncSignalSafe, move |_| {
            o.lock().unwrap().push(0u64)
        })
        .unwrap();
        assert_eq!(p.raise(ev, CbSafety::ThreadSafe, 5), 0);
        let seen = order.lock().unwrap().clone();
        assert_eq!(seen, vec![5, 0], "the 5 drops, then the event");
        reg.free().unwrap().wait(Duration::from_secs(5));
        seen
    }

    /// At `MPI_THREAD_MULTIPLE`, where mpit-safe pools registrations instead of freeing them
    /// (`quirks::MPICH_EVENT_REGISTRATION_RACE`: MPICH >= 4.0), against the provider, which
    /// follows the standard: what a tool sees is what the standard says, whichever way.
    fn thread_multiple() {
        let (_universe, provided) =
            mpi::initialize_with_threading(mpi::Threading::Multiple).expect("MPI_Init_thread");
        assert_eq!(provided, mpi::Threading::Multiple);
        let mpit = Mpit::init().unwrap();
        let p = Events::load();
        let ev = mpit
            .event_index("provider_test")
            .unwrap()
            .expect("provider_test");
        let pooled = mpit_safe::quirks::applies(&mpit_safe::quirks::MPICH_EVENT_REGISTRATION_RACE);
        let before = p.0.live_registrations();

        // Drops (§16.3.8.5): a callback for MPI_RESTRICTED contexts only; 5 events raised in
        // THREAD_SAFE contexts are dropped and reported before the next delivered event.
        let reg = mpit.register_event(ev, &NoObject).unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        {
            let order = order.clone();
            reg.on_event(CbSafety::MpiRestricted, move |_| {
                order.lock().unwrap().push(0u64)
            })
            .unwrap();
        }
        {
            let order = order.clone();
            reg.on_dropped(move |d| {
                assert_eq!(d.source, 0);
                order.lock().unwrap().push(d.count)
            })
            .unwrap();
        }
        for i in 0..5 {
            assert_eq!(p.raise(ev, CbSafety::ThreadSafe, i), 0);
        }
        assert_eq!(p.raise(ev, CbSafety::None, 5), 0);
        let order = order.lock().unwrap().clone();
        let (event_at, drops) = (
            order
                .iter()
                .position(|&c| c == 0)
                .expect("the delivered event"),
            order.iter().filter(|&&c| c > 0).sum::<u64>(),
        );
        assert_eq!(drops, 5, "dropped counts reported: {order:?}");
        assert_eq!(
            event_at,
            order.len() - 1,
            "drops reported before the event: {order:?}"
        );
        reg.free().unwrap().wait(Duration::from_secs(5));
        let waited = drops_wait_for_a_safe_enough_closure(&mpit, &p, ev);

        // Churn on one event type: every free completes, every closure is released, and the
        // registrations MPI holds stay bounded (pooled: one, reused; otherwise none).
        let live = Arc::new(());
        for i in 0..1_000u64 {
            let reg = mpit.register_event(ev, &NoObject).unwrap();
            let keep = live.clone();
            let seen = Arc::new(AtomicU64::new(0));
            let s = seen.clone();
            reg.on_event(CbSafety::AsyncSignalSafe, move |_| {
                let _keep = &keep;
                s.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
            assert_eq!(p.raise(ev, CbSafety::ThreadSafe, i), 0);
            assert_eq!(
                seen.load(Ordering::Relaxed),
                1,
                "cycle {i}: one event delivered"
            );
            assert!(
                reg.free().unwrap().wait(Duration::from_secs(5)),
                "cycle {i}: not freed"
            );
        }
        assert_eq!(Arc::strong_count(&live), 1, "a closure was not released");
        let held = p.0.live_registrations() - before;
        assert_eq!(held, i32::from(pooled), "registrations MPI still holds");
        println!(
            "MPI_THREAD_MULTIPLE on {}: registrations {}; 5 drops reported as {:?}; drops \
             without a safe closure reported as {waited:?}; 1,000 registrations churned, {held} \
             held by MPI after",
            mpit_safe::implementation(),
            if pooled {
                "pooled (never freed in MPI)"
            } else {
                "freed in MPI"
            },
            &order[..event_at],
        );
        drop(mpit);
    }

    /// In a child of mode `mode`: runs `child` (for its own test) and `None`. Otherwise
    /// re-runs test `test` as such a child (under `$MPIEXEC -n 2` if `mpiexec`) and returns
    /// its output.
    fn child_or_rerun(test: &str, mode: &str, child: fn(), mpiexec: bool) -> Option<String> {
        match std::env::var(CHILD) {
            Ok(m) => {
                if m == mode {
                    child();
                }
                None
            }
            Err(_) => Some(rerun(
                &["--exact", &test_path(module_path!(), test)],
                mode,
                mpiexec,
            )),
        }
    }

    fn rerun(args: &[&str], mode: &str, mpiexec: bool) -> String {
        let exe = std::env::current_exe().unwrap();
        let mut cmd = if mpiexec {
            let w = mpit_safe::launcher()
                .expect("no MPI launcher: set MPIEXEC (scripts/with-mpi does)");
            let mut c = Command::new(&w[0]);
            c.args(&w[1..])
                .args(["-n", "2", "-genv", "LD_PRELOAD", PROVIDER.as_str()])
                .arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        cmd.args(args).args(["--nocapture", "--test-threads=1"]);
        cmd.env(CHILD, mode).env("LD_PRELOAD", PROVIDER.as_str());
        let out = process::run(cmd, Duration::from_secs(120));
        let text = process::show(&out);
        assert!(out.status.success(), "child {mode} failed: {}", out.status);
        text
    }

    #[test]
    fn closures_drops_free_and_streams() {
        let Some(out) = child_or_rerun(
            "closures_drops_free_and_streams",
            "single",
            single_process,
            false,
        ) else {
            return;
        };
        assert!(out.contains("single-process event checks passed"));
    }

    #[test]
    fn thread_multiple_pooled_or_not() {
        let Some(out) = child_or_rerun(
            "thread_multiple_pooled_or_not",
            "multiple",
            thread_multiple,
            false,
        ) else {
            return;
        };
        assert!(
            out.contains("MPI_THREAD_MULTIPLE on "),
            "the child did not report"
        );
    }

    #[test]
    fn two_rank_traffic_through_closures() {
        let Some(out) = child_or_rerun(
            "two_rank_traffic_through_closures",
            "ranks",
            two_ranks,
            true,
        ) else {
            return;
        };
        assert!(out.contains("receive events from rank 1, in order"));
        assert!(out.contains("counted 17 dropped"));
        assert!(out.contains("no live closure left"));
    }
}

#[cfg(not(mpit_events))]
#[test]
fn no_event_api() {
    eprintln!(
        "{}: no MPI-4 event API in this header: nothing to run",
        mpit_safe::sys::IMPLEMENTATION
    );
}
