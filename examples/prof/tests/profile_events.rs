//! The profiling engine on a real event-raising MPI (`mpich-ev`, 2 ranks): k unexpected
//! messages made inside region "phase2" show up there and nowhere else, both as counted events
//! (`unexp_message_enqueued`/`_dequeued`, registered by the profiler for every event type) and
//! in the receive-queue performance variables (`unexpected_recvq_length` sampled at the
//! receives' entries in call mode: its maximum is k in phase2, 0 elsewhere).
//!
//! Where the MPI has no such event types the test says so and passes, unless the library says
//! it was configured with `--enable-mpit-events` (then it fails); without the event API in the
//! header (Open MPI) there is nothing to run.

#[cfg(mpit_events)]
mod with_events {
    use std::time::Duration;

    // rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;
    use mpit_prof::{Config, Metric, Mode, Profiler, Report};
    use mpit_safe::Mpit;
    #[cfg(mpit_abi)]
    use mpit_safe::mpi;

    use mpit_test_support::mpi::{
        library_configured_with_events, library_configured_with_recvq_pvars,
    };
    use mpit_test_support::process::{self, test_path};

    const CHILD: &str = "MPIT_PROFILE_EVENTS_CHILD";
    const K: usize = 12;
    const NO_EVENTS: &str = "no unexp_message_enqueued event type";
    const PASSED: &str = "profile events passed";

    /// Rank 1 sends `n` messages with tags from `tag0` before rank 0 posts its receives (a
    /// barrier orders them, a probe for the last tag brings them all in: the same scheme as
    /// events_real.rs), or after (rank 0 posts first: expected messages).
    fn exchange(
        world: &SimpleCommunicator,
        prof: Option<&Profiler<'_>>,
        n: usize,
        tag0: i32,
        unexpected: bool,
    ) {
        let recv = 0usize; // function index of MPI_Recv in FUNCTIONS
        if world.rank() == 1 {
            if !unexpected {
                world.barrier();
            }
            for i in 0..n as i32 {
                world.process_at_rank(0).send_with_tag(&i, tag0 + i);
            }
            if unexpected {
                world.barrier();
            }
            world.barrier();
            return;
        }
        if unexpected {
            world.barrier();
            while world
                .process_at_rank(1)
                .immediate_probe_with_tag(tag0 + n as i32 - 1)
                .is_none()
            {}
            for i in 0..n as i32 {
                let c = prof.map(|p| p.call_enter(recv));
                let (v, _) = world.process_at_rank(1).receive_with_tag::<i32>(tag0 + i);
                if let (Some(p), Some(c)) = (prof, c) {
                    p.call_exit(c);
                }
                assert_eq!(v, i);
            }
        } else {
            let mut bufs = vec![0i32; n];
            mpi::request::scope(|s| {
                let reqs: Vec<_> = bufs
                    .iter_mut()
                    .enumerate()
                    .map(|(i, b)| {
                        world.process_at_rank(1).immediate_receive_into_with_tag(
                            s,
                            b,
                            tag0 + i as i32,
                        )
                    })
                    .collect();
                world.barrier();
                for r in reqs {
                    let c = prof.map(|p| p.call_enter(recv));
                    r.wait();
                    if let (Some(p), Some(c)) = (prof, c) {
                        p.call_exit(c);
                    }
                }
            });
        }
        world.barrier();
    }

    fn events(r: &Report, path: &str, ty: &str) -> u64 {
        let t = r.event_types.iter().position(|e| e == ty).unwrap();
        let n = r.nodes.iter().find(|n| n.name == path).unwrap();
        n.events[t]
    }

    fn child() {
        let universe = mpi::initialize().unwrap();
        let world = universe.world();
        let mpit = Mpit::init().unwrap();
        if mpit
            .event_index("unexp_message_enqueued")
            .unwrap()
            .is_none()
        {
            if world.rank() == 0 {
                println!("rank 0: {NO_EVENTS} in {}", mpit_safe::implementation());
            }
            return;
        }
        let session = mpit.session().unwrap();
        let prof = (world.rank() == 0).then(|| {
            Profiler::new(
                &session,
                Config {
                    mode: Mode::Call,
                    functions: vec!["MPI_Recv"],
                    events: true,
                    root: "rank0".into(),
                    ..Config::default()
                },
            )
            .unwrap()
        });
        for (name, unexpected, tag0) in [
            ("phase1", false, 100),
            ("phase2", true, 200),
            ("phase3", false, 300),
        ] {
            let _g = prof.as_ref().map(|p| p.region(name));
            exchange(&world, prof.as_ref(), K, tag0, unexpected);
        }
        let Some(prof) = prof else { return };
        let r = prof.finish().unwrap();
        for n in &r.nodes {
            println!(
                "rank 0: node {} calls {} events {:?}",
                n.name, n.calls, n.events
            );
        }
        println!(
            "rank 0: event types {:?}, notes {:?}",
            r.event_types, r.notes
        );
        assert_eq!(events(&r, "phase2", "unexp_message_enqueued"), K as u64);
        for other in ["rank0", "phase1", "phase3"] {
            assert_eq!(events(&r, other, "unexp_message_enqueued"), 0, "{other}");
        }
        // Dequeued where the receives matched them: in phase2 (its MPI_Recv calls are children
        // of phase2; events are counted per region).
        if r.event_types.iter().any(|t| t == "unexp_message_dequeued") {
            assert_eq!(events(&r, "phase2", "unexp_message_dequeued"), K as u64);
            assert_eq!(events(&r, "phase1", "unexp_message_dequeued"), 0);
        }
        // The receive queue's length, sampled at each receive's entry (call mode): k queued
        // messages at the first receive of phase2, none in the other phases.
        let col = r
            .columns
            .iter()
            .position(|c| c.info.name == "unexpected_recvq_length" && c.handles > 0);
        match col {
            Some(c) => {
                let max_in = |phase: &str| {
                    r.nodes
                        .iter()
                        .enumerate()
                        .filter(|(_, n)| n.name == "MPI_Recv")
                        .filter(|(_, n)| r.nodes[n.parent.unwrap()].name == phase)
                        .map(|(_, n)| match n.metrics[c] {
                            Metric::Samples { max, count, .. } if count > 0 => max,
                            _ => 0.0,
                        })
                        .fold(0.0, f64::max)
                };
                // Samples at entry and exit of each receive: the exit of the first sees k-1.
                assert_eq!(
                    max_in("phase2"),
                    K as f64 - 1.0,
                    "exit samples of phase2's receives"
                );
                assert_eq!(max_in("phase1"), 0.0);
                assert_eq!(max_in("phase3"), 0.0);
                let entry = match r.nodes.iter().find(|n| n.name == "phase2").unwrap().metrics[c] {
                    Metric::Samples { max, .. } => max,
                    _ => unreachable!(),
                };
                assert_eq!(
                    entry, K as f64,
                    "entry samples, attributed to phase2 itself"
                );
            }
            None => assert!(
                !library_configured_with_recvq_pvars(),
                "this MPI says it has the receive-queue pvars, the profiler has none"
            ),
        }
        println!("{PASSED}");
    }

    #[test]
    fn unexpected_messages_in_phase2_only() {
        if std::env::var(CHILD).is_ok() {
            child();
            return;
        }
        let mut cmd = process::mpiexec();
        cmd.args(["-n", "2", "env", &format!("{CHILD}=1")])
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &test_path(module_path!(), "unexpected_messages_in_phase2_only"),
                "--nocapture",
                "--test-threads=1",
            ]);
        let out = process::run(cmd, Duration::from_secs(300));
        let text = process::show(&out);
        assert!(out.status.success(), "the 2-rank run failed");
        if text.contains(NO_EVENTS) {
            assert!(
                !library_configured_with_events(),
                "this MPI says it was configured with --enable-mpit-events but has no events"
            );
            println!(
                "{}: no MPI_T events: nothing to profile",
                mpit_safe::implementation()
            );
            return;
        }
        assert!(text.contains(PASSED), "rank 0 did not pass");
    }
}
