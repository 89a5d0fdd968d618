//! Events proven on a real MPI (MPI-4.1 §16.3.8): the receive-queue events of MPICH built with
//! `--enable-mpit-events` (`mpich-ev`), and the same scenario, unchanged, against the test
//! provider of `examples/event-provider` (LD_PRELOADed ahead of MPICH), which raises events of
//! the same names from its receive wrappers.
//!
//! Two ranks under `$MPIEXEC -n 2`. In each round rank 1 sends messages with distinct tags
//! before rank 0 posts the receives (a barrier orders them, a probe for the last tag makes sure
//! they have all arrived), so every message goes through rank 0's unexpected queue:
//! `unexp_message_enqueued` when it arrives, `unexp_message_dequeued` when the receive matches
//! it (the provider raises both at the receive). Rank 0 watches through closures (per safety level, with dropped
//! handlers and a shared log in call order) and through event streams, and checks:
//! - exactly one enqueued and one dequeued event per message, from rank 1 (element 0), the
//!   dequeued data refused with the typed quirk error where `mpit_safe::quirks` names it
//!   (reading it crashes inside MPICH: see `quirk_dequeued_data.rs`);
//! - what element 1 is (MPICH: the communicator's context id, constant over distinct tags; the
//!   provider: the tag);
//! - the receive-queue performance variables (`unexpected_recvq_length`,
//!   `unexpected_recvq_match_attempts`) where the MPI has them, against the message count;
//! - every callback, dropped report and its order against `mpit_core::event_model` (the
//!   standard's selection rule and dropped-event rule), replayed event by event: registrations
//!   with closures at all four levels, at the upper two only, and at `MPI_T_CB_REQUIRE_NONE`
//!   only (below what MPI raises: every event dropped, the count reported before the
//!   registration's next delivered event once it has a sufficient closure);
//! - the free callbacks (every closure released: `Arc` counts back to 1) and nothing delivered
//!   after a registration is freed;
//! - timestamps in order on an ordered source.
//!
//! Where the MPI has no such event types (Debian's MPICH, the MPICH wheel, Intel MPI) the real
//! variant says so and passes, unless the library says it was configured with
//! `--enable-mpit-events`: then it fails. Where the header has no event API (Open MPI) there is
//! nothing to run.

#[cfg(mpit_events)]
mod with_events {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    // rsmpi in the native build; mpit_safe::mpi stands in for it in the ABI build.
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;
    use mpit_core::event_model::{EventModel, Outcome};
    #[cfg(mpit_abi)]
    use mpit_safe::mpi;
    use mpit_safe::{
        CbSafety, Dropped, DynPvarHandle, Error, EventInstance, EventRecord, EventStream, Mpit,
        NoObject, PvarClass, Registration, Session, SourceOrder, quirks,
    };

    use crate::provider::Provider;
    use mpit_test_support::mpi::{
        library_configured_with_events, library_configured_with_recvq_pvars,
    };
    use mpit_test_support::process::{self, test_path};

    const CHILD: &str = "MPIT_EVENTS_REAL_CHILD";
    /// Messages of the three rounds: on `MPI_COMM_WORLD`, on a duplicate, and on
    /// `MPI_COMM_WORLD` again after every registration is freed.
    const ROUNDS: [(usize, i32); 3] = [(16, 1000), (8, 2000), (4, 3000)];
    const PASSED: &str = "real-event scenario passed";
    const NO_EVENTS: &str = "no unexp_message_enqueued/unexp_message_dequeued event types";

    /// Where the events come from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Origin {
        /// The MPI library itself.
        Real,
        /// The test provider, preloaded ahead of MPICH.
        Provider,
    }

    /// What a closure read of an event's data.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Data {
        /// Elements 0 and 1 (two `MPI_INT`s in both MPICH and the provider).
        Ints(i32, i32),
        /// `read`, `read_value` and `copy_into` all refused with `KnownCrash` of this quirk.
        Refused(&'static str),
        /// Anything else (an error, or refusals that disagree).
        Other(String),
    }

    /// One entry of rank 0's log, in the order MPI called the closures.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Seen {
        Event {
            reg: usize,
            /// The level the closure was registered for.
            level: CbSafety,
            /// The requirement of the invocation (`cb_safety`).
            safety: CbSafety,
            source: Option<usize>,
            timestamp: Option<u64>,
            data: Data,
        },
        Dropped {
            reg: usize,
            report: Dropped,
        },
    }

    type Log = Arc<Mutex<Vec<Seen>>>;

    fn data_of(e: &EventInstance<'_>) -> Data {
        match e.data_readable() {
            Ok(()) => match (e.read::<i32>(0), e.read::<i32>(1)) {
                (Ok(a), Ok(b)) => Data::Ints(a, b),
                (a, b) => Data::Other(format!("{a:?} {b:?}")),
            },
            Err(Error::KnownCrash(q)) => {
                let mut buf = vec![0u8; e.extent()];
                let refusals = [
                    e.read::<i32>(0).err(),
                    e.read_value(0).err(),
                    e.copy_into(&mut buf).err(),
                ];
                if refusals
                    .iter()
                    .all(|r| matches!(r, Some(Error::KnownCrash(p)) if p.id == q.id))
                {
                    Data::Refused(q.id)
                } else {
                    Data::Other(format!("{refusals:?}"))
                }
            }
            Err(e) => Data::Other(e.to_string()),
        }
    }

    /// A closure for level `level` of registration `reg` that logs each event; it holds `live`
    /// until MPI's free callback releases it.
    fn logger(
        log: &Log,
        reg: usize,
        level: CbSafety,
        live: &Arc<()>,
    ) -> impl Fn(&EventInstance<'_>) + Send + Sync + use<> {
        let (log, live) = (log.clone(), live.clone());
        move |e| {
            let _keep = &live;
            let entry = Seen::Event {
                reg,
                level,
                safety: e.safety(),
                source: e.source().ok(),
                timestamp: e.timestamp().ok(),
                data: data_of(e),
            };
            log.lock().unwrap().push(entry);
        }
    }

    fn drop_logger(
        log: &Log,
        reg: usize,
        live: &Arc<()>,
    ) -> impl Fn(Dropped) + Send + Sync + use<> {
        let (log, live) = (log.clone(), live.clone());
        move |report| {
            let _keep = &live;
            log.lock().unwrap().push(Seen::Dropped { reg, report });
        }
    }

    /// The registrations of rank 0, in allocation order (the order MPI delivers in), with what
    /// the model needs: event type, closure levels, dropped handler.
    struct Spec {
        what: &'static str,
        dequeued: bool,
        levels: &'static [CbSafety],
        dropped_handler: bool,
        /// Logged in the shared log (streams are checked by their records instead).
        logged: bool,
    }

    use CbSafety::{AsyncSignalSafe as Ass, MpiRestricted as Mpi, None as NoneL, ThreadSafe as Ts};

    /// Registration 0 and 1 see every event raised in contexts up to `THREAD_SAFE`: the
    /// replay of the log starts a raise at each of their entries.
    const SPECS: [Spec; 7] = [
        Spec {
            what: "enqueued closure",
            dequeued: false,
            levels: &[Ts],
            dropped_handler: true,
            logged: true,
        },
        Spec {
            what: "dequeued closure",
            dequeued: true,
            levels: &[Ts],
            dropped_handler: true,
            logged: true,
        },
        Spec {
            what: "enqueued stream",
            dequeued: false,
            levels: &[Ts],
            dropped_handler: false,
            logged: false,
        },
        Spec {
            what: "dequeued stream",
            dequeued: true,
            levels: &[Ass],
            dropped_handler: false,
            logged: false,
        },
        Spec {
            what: "closures at all four levels",
            dequeued: false,
            levels: &[NoneL, Mpi, Ts, Ass],
            dropped_handler: false,
            logged: true,
        },
        Spec {
            what: "closures at THREAD_SAFE and ASYNC_SIGNAL_SAFE",
            dequeued: false,
            levels: &[Ts, Ass],
            dropped_handler: false,
            logged: true,
        },
        Spec {
            what: "a closure at NONE only, and a dropped handler",
            dequeued: false,
            levels: &[NoneL],
            dropped_handler: true,
            logged: true,
        },
    ];
    const DROPS: usize = 6;

    /// The receive-queue performance variables, where the MPI has them.
    struct QueuePvars<'s> {
        length: DynPvarHandle<'s>,
        attempts: DynPvarHandle<'s>,
    }

    impl QueuePvars<'_> {
        fn read(&self) -> (u64, u64) {
            let one = |h: &DynPvarHandle<'_>| {
                h.read_values().unwrap()[0]
                    .as_u64()
                    .expect("an unsigned pvar")
            };
            (one(&self.length), one(&self.attempts))
        }
    }

    fn queue_pvars<'s>(mpit: &Mpit, session: &'s Session<'_>) -> Option<QueuePvars<'s>> {
        let length = mpit
            .pvar_index("unexpected_recvq_length", PvarClass::Level)
            .unwrap()?;
        let attempts = mpit
            .pvar_index("unexpected_recvq_match_attempts", PvarClass::Counter)
            .unwrap()?;
        let handle = |i| {
            let h = session.dyn_handle(i, &NoObject).unwrap();
            if !h.info().continuous {
                h.start().unwrap();
            }
            h
        };
        Some(QueuePvars {
            length: handle(length),
            attempts: handle(attempts),
        })
    }

    /// What rank 0 saw of one round.
    struct Round {
        /// Log entries of the round.
        log: Vec<Seen>,
        /// (length, match attempts) before the sends, after the ordering barrier, after the
        /// receives.
        pvars: Option<[(u64, u64); 3]>,
    }

    /// Rank 0 drives progress until rank 1's message with tag `last` is in its queue, and with
    /// it (same sender, same communicator: FIFO) every earlier one. The barrier alone orders
    /// the sends before the receives but does not bring the messages in: after a few calls
    /// MPICH's shared-memory barrier stops polling the message queues (measured on mpich-ev:
    /// from the fifth barrier on a communicator, messages sent before it are still unread
    /// when it returns, and meet posted receives instead of the unexpected queue).
    fn arrived(comm: &SimpleCommunicator, last: i32) {
        while comm
            .process_at_rank(1)
            .immediate_probe_with_tag(last)
            .is_none()
        {}
    }

    /// One round: rank 1 sends `n` messages with tags `tag0..` on `comm`, a barrier orders them
    /// before rank 0's receives (in tag order), a probe for the last makes sure all have
    /// arrived. Rank 1 then waits for a token from rank 0, so that nothing else of rank 1
    /// reaches rank 0's queue until the round is over.
    fn round(
        comm: &SimpleCommunicator,
        sync: &SimpleCommunicator,
        (n, tag0): (usize, i32),
        log: &Log,
        pvars: Option<&QueuePvars<'_>>,
    ) -> Round {
        let rank = comm.rank();
        sync.barrier();
        if rank == 1 {
            for i in 0..n as i32 {
                comm.process_at_rank(0).send_with_tag(&i, tag0 + i);
            }
            sync.barrier();
            let (_token, _) = sync.process_at_rank(0).receive::<i32>();
            return Round {
                log: Vec::new(),
                pvars: None,
            };
        }
        let mark = log.lock().unwrap().len();
        let before = pvars.map(QueuePvars::read);
        sync.barrier();
        arrived(comm, tag0 + n as i32 - 1);
        let arrived = pvars.map(QueuePvars::read);
        for i in 0..n as i32 {
            let mut v = -1i32;
            let status = comm
                .process_at_rank(1)
                .receive_into_with_tag(&mut v, tag0 + i);
            assert_eq!((v, status.tag()), (i, tag0 + i));
        }
        let after = pvars.map(QueuePvars::read);
        let entries = log.lock().unwrap()[mark..].to_vec();
        sync.process_at_rank(1).send(&0i32);
        Round {
            log: entries,
            pvars: before.map(|b| [b, arrived.unwrap(), after.unwrap()]),
        }
    }

    fn outcome(s: &Seen) -> Outcome {
        match *s {
            Seen::Event { reg, level, .. } => Outcome::Delivered {
                registration: reg,
                level,
            },
            Seen::Dropped { reg, report } => Outcome::DroppedReport {
                registration: reg,
                source: report.source,
                count: report.count,
            },
        }
    }

    /// Replays `log` through the model: each entry of registration 0 or 1 starts a raise of
    /// its event type in the context the closure was told; the entries that follow must be the
    /// model's observable outcomes of that raise, in order. Returns the raises replayed.
    fn replay(model: &mut EventModel, log: &[Seen], ev: [usize; 2]) -> usize {
        let mut i = 0;
        let mut raises = 0;
        while i < log.len() {
            let Seen::Event {
                reg: reg @ (0 | 1),
                safety,
                source: Some(source),
                ..
            } = log[i]
            else {
                panic!(
                    "log entry {i} does not start a raise (no event of registration 0 or 1 \
                     before it): {:?}",
                    &log[i..]
                );
            };
            let expected: Vec<Outcome> = model
                .raise(ev[reg], source, safety, None)
                .into_iter()
                .filter(|o| match *o {
                    Outcome::Delivered { registration, .. } => SPECS[registration].logged,
                    Outcome::DroppedReport { .. } => true,
                    Outcome::Dropped { .. } => false,
                })
                .collect();
            let got: Vec<Outcome> = log[i..(i + expected.len()).min(log.len())]
                .iter()
                .map(outcome)
                .collect();
            assert_eq!(
                got,
                expected,
                "raise {raises} ({} in a {safety:?} context): MPI's callbacks differ from the \
                 standard's rules (mpit_core::event_model)",
                if reg == 0 { "enqueued" } else { "dequeued" }
            );
            for s in &log[i..i + expected.len()] {
                match s {
                    Seen::Event { safety: s, .. } => {
                        assert_eq!(*s, safety, "one raise, one context")
                    }
                    Seen::Dropped { report, .. } => {
                        assert_eq!(
                            report.safety, safety,
                            "the report's cb_safety is its context"
                        )
                    }
                }
            }
            i += expected.len();
            raises += 1;
        }
        raises
    }

    /// Replays what the log holds beyond `replayed` (every event, also those between rounds),
    /// before the model's state changes; returns the raises replayed.
    fn catch_up(model: &mut EventModel, log: &Log, replayed: &mut usize, ev: [usize; 2]) -> usize {
        let log = log.lock().unwrap().clone();
        let raises = replay(model, &log[*replayed..], ev);
        *replayed = log.len();
        raises
    }

    fn events_of(log: &[Seen], reg: usize) -> Vec<(Option<usize>, Option<u64>, Data)> {
        log.iter()
            .filter_map(|s| match s {
                Seen::Event {
                    reg: r,
                    source,
                    timestamp,
                    data,
                    ..
                } if *r == reg => Some((*source, *timestamp, data.clone())),
                _ => None,
            })
            .collect()
    }

    /// What the dequeued event's data reads as: refused where the quirk applies, else elements
    /// like the enqueued event's.
    fn dequeued_data_ok(d: &Data) -> bool {
        if quirks::applies(&quirks::MPICH_DEQUEUED_EVENT_DATA) {
            *d == Data::Refused(quirks::MPICH_DEQUEUED_EVENT_DATA.id)
        } else {
            matches!(d, Data::Ints(1, _))
        }
    }

    fn check_stream(stream: &EventStream, n: usize, source: usize, dequeued: bool) {
        let records: Vec<EventRecord> = stream.drain().collect();
        assert_eq!(records.len(), n, "one stream record per message");
        assert_eq!(stream.drops(), 0);
        for r in &records {
            assert_eq!(r.source, source);
            if dequeued && quirks::applies(&quirks::MPICH_DEQUEUED_EVENT_DATA) {
                assert!(r.data.is_empty(), "refused data is stored empty: {r:?}");
            } else {
                assert_eq!(
                    r.value(stream.elements(), 0).unwrap().as_i64(),
                    Some(1),
                    "the sender's rank"
                );
            }
        }
        assert!(records.windows(2).all(|w| w[0].timestamp <= w[1].timestamp));
    }

    /// Rank 0's checks of one round of `n` messages with tags from `tag0`; returns the value of
    /// element 1 of the enqueued events.
    fn check_round(
        origin: Origin,
        round: &Round,
        (n, tag0): (usize, i32),
        ordered: bool,
    ) -> Vec<i32> {
        let enq = events_of(&round.log, 0);
        let deq = events_of(&round.log, 1);
        assert_eq!(enq.len(), n, "one unexp_message_enqueued per message");
        assert_eq!(deq.len(), n, "one unexp_message_dequeued per message");
        let second: Vec<i32> = enq
            .iter()
            .map(|(_, _, d)| match d {
                Data::Ints(1, b) => *b,
                other => panic!("enqueued event not from rank 1: {other:?}"),
            })
            .collect();
        for (_, _, d) in &deq {
            assert!(dequeued_data_ok(d), "dequeued data: {d:?}");
        }
        // Queued first, matched after (MPICH); the provider observes each message at its
        // receive: enqueued then dequeued, message by message.
        let kinds: Vec<usize> = round
            .log
            .iter()
            .filter_map(|s| match s {
                Seen::Event {
                    reg: r @ (0 | 1), ..
                } => Some(*r),
                _ => None,
            })
            .collect();
        let want: Vec<usize> = match origin {
            Origin::Real => [vec![0; n], vec![1; n]].concat(),
            Origin::Provider => (0..2 * n).map(|i| i % 2).collect(),
        };
        assert_eq!(kinds, want, "order of enqueued (0) and dequeued (1) events");
        // Element 1: MPICH's request field after the source (the context id), the same for
        // every tag of one communicator; the provider's tag.
        match origin {
            Origin::Real => assert!(
                second.iter().all(|&b| b == second[0]),
                "element 1 varies within one communicator: {second:?}"
            ),
            Origin::Provider => {
                assert_eq!(second, (tag0..tag0 + n as i32).collect::<Vec<_>>())
            }
        }
        if ordered {
            let ts: Vec<u64> = round
                .log
                .iter()
                .filter_map(|s| match s {
                    Seen::Event {
                        reg: 0 | 1,
                        timestamp,
                        ..
                    } => Some(timestamp.expect("a timestamp")),
                    _ => None,
                })
                .collect();
            assert!(
                ts.windows(2).all(|w| w[0] <= w[1]),
                "timestamps of an ordered source out of order: {ts:?}"
            );
        }
        if let Some([b, a, f]) = round.pvars {
            assert_eq!(a.0 - b.0, n as u64, "unexpected_recvq_length after arrival");
            assert_eq!(f.0, b.0, "unexpected_recvq_length after the receives");
            assert_eq!(
                f.1 - a.1,
                n as u64,
                "unexpected_recvq_match_attempts: one search pass per receive in arrival order"
            );
        }
        second
    }

    fn observe(origin: Origin, mpit: &Mpit, world: &SimpleCommunicator, ev: [usize; 2]) {
        let sync = world.duplicate();
        let other = world.duplicate();
        let rank = world.rank();
        let session = mpit.session().unwrap();
        let pvars = queue_pvars(mpit, &session);
        if rank == 1 {
            for (comm, r) in [(world, ROUNDS[0]), (&other, ROUNDS[1]), (world, ROUNDS[2])] {
                round(comm, &sync, r, &Arc::default(), None);
            }
            println!("rank 1: sent {:?} messages", ROUNDS.map(|r| r.0));
            return;
        }
        if let Some(p) = &pvars {
            println!(
                "rank 0: receive-queue pvars unexpected_recvq_length (level, continuous {}) and \
                 unexpected_recvq_match_attempts (counter, continuous {})",
                p.length.info().continuous,
                p.attempts.info().continuous
            );
        } else {
            assert!(
                !library_configured_with_recvq_pvars(),
                "this MPI says it was configured with the receive-queue pvars, but has none"
            );
            println!(
                "rank 0: no unexpected_recvq_* pvars in this MPI: the pvar checks are skipped"
            );
        }
        let log: Log = Arc::default();
        let lives: Vec<Arc<()>> = SPECS.iter().map(|_| Arc::new(())).collect();
        let mut model = EventModel::default();
        let mut streams = Vec::new();
        let mut regs: Vec<Option<Registration<'_>>> = Vec::new();
        for (id, spec) in SPECS.iter().enumerate() {
            let event = ev[usize::from(spec.dequeued)];
            let m = model.alloc(event, None);
            assert_eq!(m, id);
            let reg = if spec.logged {
                let mut b = mpit.event_registration(event, &NoObject);
                for &l in spec.levels {
                    b = b.on_event(l, logger(&log, id, l, &lives[id]));
                }
                if spec.dropped_handler {
                    b = b.on_dropped(drop_logger(&log, id, &lives[id]));
                }
                b.register().unwrap()
            } else {
                let r = mpit.register_event(event, &NoObject).unwrap();
                streams.push(r.stream(spec.levels[0], 1024).unwrap());
                r
            };
            for &l in spec.levels {
                model.register(id, l, true).unwrap();
            }
            model.set_dropped_handler(id, spec.dropped_handler).unwrap();
            regs.push(Some(reg));
        }

        // Round 1, on MPI_COMM_WORLD.
        let r1 = round(world, &sync, ROUNDS[0], &log, pvars.as_ref());
        let Some(Seen::Event {
            safety: context,
            source: Some(source),
            ..
        }) = r1.log.first().cloned()
        else {
            panic!(
                "no event reached rank 0 in round 1 ({} messages through its unexpected queue): \
                 {:?}",
                ROUNDS[0].0, r1.log
            );
        };
        let src = mpit.source_info(source).unwrap();
        let ordered = src.ordering == SourceOrder::Ordered;
        let mut replayed = 0;
        let raises = catch_up(&mut model, &log, &mut replayed, ev);
        let ctx1 = check_round(origin, &r1, ROUNDS[0], ordered);
        check_stream(&streams[0], ROUNDS[0].0, source, false);
        check_stream(&streams[1], ROUNDS[0].0, source, true);
        let dropped = ROUNDS[0].0 as u64;
        assert_eq!(model.pending_drops(DROPS, source), dropped);
        println!(
            "rank 0: round 1 ({} messages, tags {}..): {} unexp_message_enqueued from rank 1, \
             element 1 = {:#x} for every tag, then {} unexp_message_dequeued ({}); {raises} \
             raises in a {context:?} context from source {source} \"{}\" ({:?}, {} ticks/s)",
            ROUNDS[0].0,
            ROUNDS[0].1,
            ROUNDS[0].0,
            ctx1[0],
            ROUNDS[0].0,
            match events_of(&r1.log, 1).first().map(|e| e.2.clone()) {
                Some(Data::Refused(q)) => format!("data refused: KnownCrash({q})"),
                other => format!("data {other:?}"),
            },
            src.name,
            src.ordering,
            src.ticks_per_second,
        );
        print_pvars(1, &r1);
        for (id, spec) in SPECS.iter().enumerate().filter(|(_, s)| s.logged) {
            let mut levels: Vec<CbSafety> = r1
                .log
                .iter()
                .filter_map(|s| match s {
                    Seen::Event { reg, level, .. } if *reg == id => Some(*level),
                    _ => None,
                })
                .collect();
            levels.dedup();
            println!(
                "rank 0: registration {id} ({}): {}",
                spec.what,
                if levels.is_empty() {
                    "no closure called (every event dropped)".to_owned()
                } else {
                    format!("called at {levels:?}")
                }
            );
        }
        println!(
            "rank 0: registration \"{}\": {dropped} events dropped so far (closure below the \
             context), none reported yet",
            SPECS[DROPS].what
        );

        // A sufficient closure on the dropping registration; one registration freed.
        regs[DROPS]
            .as_ref()
            .unwrap()
            .on_event(Ts, logger(&log, DROPS, Ts, &lives[DROPS]))
            .unwrap();
        model.register(DROPS, Ts, true).unwrap();
        free(&mut regs, &lives, &mut model, 4);

        // Round 2, on a duplicate of MPI_COMM_WORLD.
        let r2 = round(&other, &sync, ROUNDS[1], &log, pvars.as_ref());
        let raises2 = catch_up(&mut model, &log, &mut replayed, ev);
        let ctx2 = check_round(origin, &r2, ROUNDS[1], ordered);
        check_stream(&streams[0], ROUNDS[1].0, source, false);
        check_stream(&streams[1], ROUNDS[1].0, source, true);
        let report = r2
            .log
            .iter()
            .find_map(|s| match s {
                Seen::Dropped { reg: DROPS, report } => Some(*report),
                _ => None,
            })
            .expect("the dropped report");
        assert_eq!(report.count, dropped);
        if origin == Origin::Real {
            assert_ne!(
                ctx2[0], ctx1[0],
                "element 1 is the same on two communicators: not a context id"
            );
        }
        println!(
            "rank 0: round 2 ({} messages on a duplicate communicator): element 1 = {:#x}; \
             {raises2} raises; the dropped handler reported count {} (source {}, {:?}) before \
             the registration's first delivered event; a freed registration saw nothing",
            ROUNDS[1].0, ctx2[0], report.count, report.source, report.safety
        );
        print_pvars(2, &r2);

        // Every registration freed: the free callbacks release every closure, and the third
        // round reaches none.
        catch_up(&mut model, &log, &mut replayed, ev);
        for id in 0..SPECS.len() {
            free(&mut regs, &lives, &mut model, id);
        }
        let r3 = round(world, &sync, ROUNDS[2], &log, pvars.as_ref());
        assert!(r3.log.is_empty(), "events after the free: {:?}", r3.log);
        assert_eq!(catch_up(&mut model, &log, &mut replayed, ev), 0);
        for s in &streams {
            assert_eq!(s.drain().count(), 0, "a stream filled after its free");
        }
        if let Some([b, a, f]) = r3.pvars {
            assert_eq!(
                (a.0 - b.0, f.0, f.1 - a.1),
                (ROUNDS[2].0 as u64, b.0, ROUNDS[2].0 as u64)
            );
        }
        println!(
            "rank 0: round 3 ({} messages) after every registration was freed: no callback, \
             no stream record; every closure released by its free callback",
            ROUNDS[2].0
        );
        println!("rank 0: {PASSED} ({origin:?})");
    }

    fn print_pvars(n: usize, r: &Round) {
        if let Some([b, a, f]) = r.pvars {
            println!(
                "rank 0: round {n} pvars: unexpected_recvq_length {} -> {} -> {}, \
                 unexpected_recvq_match_attempts +{} over the receives",
                b.0,
                a.0,
                f.0,
                f.1 - a.1
            );
        }
    }

    /// Frees registration `id` (if still live), waits for its free callback and checks that
    /// every closure it owned is gone.
    fn free(
        regs: &mut [Option<Registration<'_>>],
        lives: &[Arc<()>],
        model: &mut EventModel,
        id: usize,
    ) {
        let Some(reg) = regs[id].take() else { return };
        assert_eq!(reg.panics().0, 0, "{:?}", reg.panics().1);
        let freeing = reg.free().unwrap();
        assert!(
            freeing.wait(Duration::from_secs(10)),
            "the free callback of \"{}\" did not run",
            SPECS[id].what
        );
        drop(freeing);
        model.free(id).unwrap();
        assert_eq!(model.free_callbacks(id), 1);
        assert_eq!(
            Arc::strong_count(&lives[id]),
            1,
            "a closure of \"{}\" outlived its free callback",
            SPECS[id].what
        );
    }

    fn child(origin: Origin) {
        let mpit = Mpit::init().unwrap();
        if origin == Origin::Provider {
            // MPICH reports a registration's drops before that registration's next event
            // (mpit_core::event_model too): the provider's per-registration scope.
            Provider::load(&provider()).drops_per_registration();
        }
        let universe = mpi::initialize().unwrap();
        let world = universe.world();
        // The event types are registered by MPI_Init: look them up after it.
        let ev = [
            mpit.event_index("unexp_message_enqueued").unwrap(),
            mpit.event_index("unexp_message_dequeued").unwrap(),
        ];
        let [Some(enq), Some(deq)] = ev else {
            if world.rank() == 0 {
                println!(
                    "rank 0: {NO_EVENTS} after MPI_Init in {} ({} event types, {} sources)",
                    mpit_safe::implementation(),
                    mpit.event_count().unwrap(),
                    mpit.source_count().unwrap()
                );
            }
            return;
        };
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            observe(origin, &mpit, &world, [enq, deq])
        }));
        if run.is_err() {
            world.abort(3);
        }
        world.barrier();
        drop(mpit);
    }

    fn provider() -> String {
        crate::provider::path()
    }

    /// Runs test `name` of this binary on 2 ranks in `origin` mode; returns the output.
    fn launch(name: &str, origin: Origin) -> (bool, String) {
        let mut cmd = process::mpiexec();
        cmd.args(["-n", "2", "env"]);
        if origin == Origin::Provider {
            cmd.arg(format!("LD_PRELOAD={}", provider()));
        }
        cmd.arg(format!("{CHILD}={origin:?}"))
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &test_path(module_path!(), name),
                "--nocapture",
                "--test-threads=1",
            ]);
        let out = process::run(cmd, Duration::from_secs(300));
        let text = process::show(&out);
        (out.status.success(), text)
    }

    fn as_child(origin: Origin) -> bool {
        match std::env::var(CHILD).as_deref() {
            Ok(mode) if mode == format!("{origin:?}") => {
                child(origin);
                true
            }
            Ok(_) => true,
            Err(_) => false,
        }
    }

    #[test]
    fn events_of_the_real_mpi() {
        if as_child(Origin::Real) {
            return;
        }
        let (ok, out) = launch("events_of_the_real_mpi", Origin::Real);
        assert!(ok, "the 2-rank run failed");
        if out.contains(NO_EVENTS) {
            assert!(
                !library_configured_with_events(),
                "this MPI says it was configured with --enable-mpit-events, but has no \
                 receive-queue events after MPI_Init"
            );
            println!(
                "{}: this MPI raises no MPI_T events: nothing to prove on it (the provider \
                 variant runs the same scenario)",
                mpit_safe::implementation()
            );
            return;
        }
        assert!(
            out.contains(&format!("{PASSED} (Real)")),
            "rank 0 did not pass"
        );
        assert!(out.contains("rank 1: sent"), "rank 1 did not finish");
    }

    #[test]
    fn the_same_events_from_the_provider() {
        if as_child(Origin::Provider) {
            return;
        }
        let (ok, out) = launch("the_same_events_from_the_provider", Origin::Provider);
        assert!(ok, "the 2-rank run failed");
        assert!(
            out.contains(&format!("{PASSED} (Provider)")),
            "rank 0 did not pass"
        );
        assert!(out.contains("rank 1: sent"), "rank 1 did not finish");
    }
}

#[cfg(not(mpit_events))]
#[test]
fn no_event_api() {
    println!(
        "{}: no MPI-4 event API in this header: no events to prove (and no provider)",
        mpit_safe::implementation()
    );
}
